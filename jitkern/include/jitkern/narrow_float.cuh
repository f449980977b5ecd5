// jitkern/narrow_float.cuh: the 16-bit floats (__half, __nv_bfloat16 and CuPy's float16 and
// bfloat16 classes) in mixed expressions, and the functions CuPy gives them.
//
// cuda_fp16.h defines `__half op __half` and lets __half convert to and from float, double
// and the integers; so `h * 2.0f`, `h < 1`, `h + d` match both its operator and the
// built-in one and do not compile ("more than one operator matches"). CuPy's float16 class
// avoids that by converting to float only: `x * 2.0f` is float, `x * 2.0` double, `x * 2`
// float. The templates here give exactly those results to every 16-bit float mixed with a
// built-in arithmetic type or with another 16-bit type (the operation is done in float, or
// double with a double), and make `h op= v` compute `h op v` that way and round once to h's
// type, as CuPy's float16 does. `__half op __half` stays cuda_fp16.h's.
//
// Functions, for each 16-bit type H (template, so an exact match beats the float ones):
//   int isnan(H), isinf(H), isfinite(H), signbit(H), iszero(H)
//   H copysign(H, H), nextafter(H, H) (one step of H toward y; y where x == y, as C's and
//     NumPy's float32/64 and (from NumPy 2.5) float16 ones; nan where either is),
//   H min(H, H), max(H, H), fmin(H, H), fmax(H, H) (of a NaN and a number: the number),
//   H _floor_divide(H, H) (floor(x / y))
//
// Included by <cupy/float16.cuh> and <cupy/bfloat16.cuh>, which declare their types to it.

#ifndef JITKERN_NARROW_FLOAT_CUH
#define JITKERN_NARROW_FLOAT_CUH

#include <cupy/carray.cuh>  // cupy::type_traits
#include <jitkern/traits.cuh>

namespace jitkern {
namespace narrow {

using cupy::type_traits::enable_if;
template <typename A, typename B>
struct same : cupy::type_traits::is_same<A, B> {};

template <typename T>
struct arithmetic : ::jitkern::traits::is_arithmetic<T> {};

// One specialisation per 16-bit type (in float16.cuh, bfloat16.cuh), with
//   value = true; cuda (a CUDA type whose `op` with itself its header defines);
//   sign, exponent (bit masks), quiet_nan (a bit pattern);
//   bits(x), from_bits(u), to_float(x), from(float), from(double).
template <typename T>
struct traits {
    static const bool value = false;
    static const bool cuda = false;
};

template <typename T>
__device__ T&& make();  // an operand for decltype (never defined)

// A value as it takes part in arithmetic: a 16-bit float as float, anything else as it is.
template <typename T>
__device__ __forceinline__ typename enable_if<traits<T>::value, float>::type wide(const T& v) {
    return traits<T>::to_float(v);
}
template <typename T>
__device__ __forceinline__ typename enable_if<!traits<T>::value, const T&>::type wide(const T& v) {
    return v;
}

// The operand pairs these operators take: a 16-bit float with an arithmetic type or another
// 16-bit type, except a CUDA type with itself (its header's operators).
template <typename A, typename B>
struct mixed {
    static const bool value =
        ((traits<A>::value && (arithmetic<B>::value || traits<B>::value)) ||
         (arithmetic<A>::value && traits<B>::value)) &&
        !(same<A, B>::value && traits<A>::cuda);
};

// CuPy's float16 and bfloat16 share everything but their constructors: one CUDA value
// (Cuda: __half, __nv_bfloat16), to float implicitly, the bit-level members, and
// `+= -= *= /=` computed as `x op v` (the operators below) and rounded once, by Self's
// assignment. Self derives from value<Self, Cuda> and adds its constructors and operator=.
template <class Self, class Cuda>
class value {
protected:
    Cuda data_;
    typedef traits<Cuda> cuda_traits;

public:
    value() = default;
    __device__ explicit value(const Cuda& v) : data_(v) {}

    __device__ operator float() const { return cuda_traits::to_float(data_); }

    __device__ unsigned short to_bits() const { return cuda_traits::bits(data_); }
    __device__ static Self from_bits(unsigned short v) { return Self(cuda_traits::from_bits(v)); }

    __device__ int iszero() const { return (to_bits() & 0x7fffu) == 0; }
    __device__ int isnan() const { return (to_bits() & 0x7fffu) > cuda_traits::exponent; }
    __device__ int isinf() const { return (to_bits() & 0x7fffu) == cuda_traits::exponent; }
    __device__ int isfinite() const {
        return (to_bits() & cuda_traits::exponent) != cuda_traits::exponent;
    }
    __device__ int signbit() const { return (to_bits() & 0x8000u) != 0; }

    template <typename T>
    __device__ Self& operator+=(const T& rhs) { return self() = self() + rhs; }
    template <typename T>
    __device__ Self& operator-=(const T& rhs) { return self() = self() - rhs; }
    template <typename T>
    __device__ Self& operator*=(const T& rhs) { return self() = self() * rhs; }
    template <typename T>
    __device__ Self& operator/=(const T& rhs) { return self() = self() / rhs; }

private:
    __device__ Self& self() { return static_cast<Self&>(*this); }
};

// traits of a class made on value<Self, Cuda>: its CUDA type's, through the class.
template <class Self, class Cuda>
struct class_traits {
    static const bool value = true;
    static const bool cuda = false;
    static const unsigned sign = traits<Cuda>::sign, exponent = traits<Cuda>::exponent,
                          quiet_nan = traits<Cuda>::quiet_nan;
    __device__ static unsigned short bits(const Self& x) { return x.to_bits(); }
    __device__ static Self from_bits(unsigned u) { return Self::from_bits((unsigned short)u); }
    __device__ static float to_float(const Self& x) { return float(x); }
    __device__ static Self from(float v) { return Self(v); }
    __device__ static Self from(double v) { return Self(v); }
};

// An arithmetic type other than float: such a value makes a 16-bit class explicitly.
template <typename T>
struct other_number {
    static const bool value = arithmetic<T>::value && !same<T, float>::value;
};

}  // namespace narrow
}  // namespace jitkern

#define JITKERN_NARROW_BINARY(op)                                                          \
    template <typename A, typename B>                                                      \
    __device__ __forceinline__ typename jitkern::narrow::enable_if<                        \
        jitkern::narrow::mixed<A, B>::value,                                               \
        decltype(jitkern::narrow::wide(jitkern::narrow::make<A>())                         \
                     op jitkern::narrow::wide(jitkern::narrow::make<B>()))>::type          \
    operator op(const A& a, const B& b) {                                                  \
        return jitkern::narrow::wide(a) op jitkern::narrow::wide(b);                       \
    }
JITKERN_NARROW_BINARY(+)
JITKERN_NARROW_BINARY(-)
JITKERN_NARROW_BINARY(*)
JITKERN_NARROW_BINARY(/)
JITKERN_NARROW_BINARY(==)
JITKERN_NARROW_BINARY(!=)
JITKERN_NARROW_BINARY(<)
JITKERN_NARROW_BINARY(<=)
JITKERN_NARROW_BINARY(>)
JITKERN_NARROW_BINARY(>=)
#undef JITKERN_NARROW_BINARY

// h op= v on a CUDA 16-bit type: computed as `h op v` above, rounded once to h's type.
// (CuPy's classes have these as members.)
#define JITKERN_NARROW_COMPOUND(op)                                                          \
    template <typename A, typename B>                                                        \
    __device__ __forceinline__ typename jitkern::narrow::enable_if<                          \
        jitkern::narrow::traits<A>::cuda && jitkern::narrow::mixed<A, B>::value, A&>::type   \
    operator op##=(A& a, const B& b) {                                                       \
        a = jitkern::narrow::traits<A>::from(jitkern::narrow::wide(a) op                     \
                                             jitkern::narrow::wide(b));                      \
        return a;                                                                            \
    }
JITKERN_NARROW_COMPOUND(+)
JITKERN_NARROW_COMPOUND(-)
JITKERN_NARROW_COMPOUND(*)
JITKERN_NARROW_COMPOUND(/)
#undef JITKERN_NARROW_COMPOUND

#define JITKERN_NARROW_FN(R) \
    template <typename H>    \
    __device__ __forceinline__ typename jitkern::narrow::enable_if<jitkern::narrow::traits<H>::value, R>::type

JITKERN_NARROW_FN(int) iszero(H x) {
    typedef jitkern::narrow::traits<H> t;
    return (t::bits(x) & ~t::sign & 0xffffu) == 0;
}
JITKERN_NARROW_FN(int) isnan(H x) {
    typedef jitkern::narrow::traits<H> t;
    return (t::bits(x) & ~t::sign & 0xffffu) > t::exponent;
}
JITKERN_NARROW_FN(int) isinf(H x) {
    typedef jitkern::narrow::traits<H> t;
    return (t::bits(x) & ~t::sign & 0xffffu) == t::exponent;
}
JITKERN_NARROW_FN(int) isfinite(H x) {
    typedef jitkern::narrow::traits<H> t;
    return (t::bits(x) & t::exponent) != t::exponent;
}
JITKERN_NARROW_FN(int) signbit(H x) {
    typedef jitkern::narrow::traits<H> t;
    return (t::bits(x) & t::sign) != 0;
}
JITKERN_NARROW_FN(H) copysign(H x, H y) {
    typedef jitkern::narrow::traits<H> t;
    return t::from_bits((t::bits(x) & ~t::sign & 0xffffu) | (t::bits(y) & t::sign));
}
JITKERN_NARROW_FN(H) nextafter(H x, H y) {
    typedef jitkern::narrow::traits<H> t;
    const float fx = t::to_float(x), fy = t::to_float(y);
    if (isnan(x) || isnan(y)) return t::from_bits(t::quiet_nan);
    if (fx == fy) return y;  // C's rule: nextafter(0, -0) is -0
    if (iszero(x)) return t::from_bits((t::bits(y) & t::sign) | 1u);  // the smallest subnormal
    // away from zero when y lies beyond x, else toward it: one unit of the bit pattern
    const bool away = (fy > fx) == !signbit(x);
    return t::from_bits(away ? t::bits(x) + 1u : t::bits(x) - 1u);
}
JITKERN_NARROW_FN(H) fmin(H x, H y) {
    typedef jitkern::narrow::traits<H> t;
    return t::from(fminf(t::to_float(x), t::to_float(y)));
}
JITKERN_NARROW_FN(H) fmax(H x, H y) {
    typedef jitkern::narrow::traits<H> t;
    return t::from(fmaxf(t::to_float(x), t::to_float(y)));
}
JITKERN_NARROW_FN(H) min(H x, H y) { return fmin(x, y); }
JITKERN_NARROW_FN(H) max(H x, H y) { return fmax(x, y); }
JITKERN_NARROW_FN(H) _floor_divide(H x, H y) {
    typedef jitkern::narrow::traits<H> t;
    return t::from(floorf(t::to_float(x) / t::to_float(y)));
}
#undef JITKERN_NARROW_FN

#endif  // JITKERN_NARROW_FLOAT_CUH
