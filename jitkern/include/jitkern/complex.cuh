// jitkern/complex.cuh: complex<float> and complex<double> for CUDA kernels.
//
// A light header written for NVRTC: it includes only jitkern/traits.cuh (no <cmath>, no
// <cuda/std/complex>, no cuda_fp16.h) and relies only on the math functions
// NVRTC declares by itself, so it adds a few milliseconds to a compile instead
// of the ~2 s that <cuda/std/complex> costs.
//
//   #include <jitkern/complex.cuh>
//   extern "C" __global__ void f(const complex<float>* x, complex<float>* y, float a) {
//       int i = blockDim.x * blockIdx.x + threadIdx.x;
//       y[i] = exp(a * x[i]) + conj(x[i]) / 2;
//   }
//
// complex<T> is declared in the global namespace and is also jitkern::complex.
// Its layout is two T (real, then imaginary) aligned to 2 * sizeof(T): the
// layout of NumPy's complex64/complex128 and of float2/double2.
//
// Numerics: abs uses hypot; division is Smith's algorithm (no overflow of
// |w|^2); log keeps full accuracy near |z| = 1 (exact products for |z|^2 - 1);
// sqrt is the stable half-angle form; tan/tanh avoid the cancellation in cos 2x + cosh 2y; the inverse functions
// use Kahan's formulas ("Branch cuts for complex elementary functions", 1987),
// which keep full relative accuracy near 0 and +-1 and put the branch cuts
// where C99 and NumPy put them (signed zeros pick the side).

#ifndef JITKERN_COMPLEX_CUH
#define JITKERN_COMPLEX_CUH

#include <jitkern/traits.cuh>

#define JITKERN_CX_FN __host__ __device__ __forceinline__
#define JITKERN_CX_BIG __host__ __device__ inline

namespace jitkern {
namespace cx_detail {

// ---- tiny traits (no <type_traits>): jitkern/traits.cuh ---------------------

using ::jitkern::traits::enable_if;
using ::jitkern::traits::is_arithmetic;

// The usual arithmetic conversions: complex<float> op double -> complex<double>,
// complex<float> op int -> complex<float>.
template <typename T, typename U>
struct promote {
    typedef decltype(T() + U()) type;
};

// Enables a template only for a real (arithmetic) scalar U; the result is R.
template <typename U, typename R>
struct if_scalar : enable_if<is_arithmetic<U>::value, R> {};

// float2 / double2 for the layout-compatible conversions (cuComplex.h code).
template <typename T>
struct vec2 {
    struct none {};
    typedef none type;
};
template <>
struct vec2<float> {
    typedef float2 type;
};
template <>
struct vec2<double> {
    typedef double2 type;
};

// ---- real math, one overload per precision ---------------------------------
// The f-suffixed functions are called explicitly so that float stays float.

#define JITKERN_CX_MATH1(name)                                          \
    JITKERN_CX_FN float name(float v) { return ::name##f(v); }         \
    JITKERN_CX_FN double name(double v) { return ::name(v); }
#define JITKERN_CX_MATH2(name)                                                   \
    JITKERN_CX_FN float name(float a, float b) { return ::name##f(a, b); }      \
    JITKERN_CX_FN double name(double a, double b) { return ::name(a, b); }
JITKERN_CX_MATH1(sqrt)
JITKERN_CX_MATH1(exp)
JITKERN_CX_MATH1(log)
JITKERN_CX_MATH1(log1p)
JITKERN_CX_MATH1(expm1)
JITKERN_CX_MATH1(rint)
JITKERN_CX_MATH1(sinh)
JITKERN_CX_MATH1(cosh)
JITKERN_CX_MATH1(asinh)
JITKERN_CX_MATH1(fabs)
JITKERN_CX_MATH1(trunc)
JITKERN_CX_MATH2(hypot)
JITKERN_CX_MATH2(atan2)
JITKERN_CX_MATH2(copysign)
#undef JITKERN_CX_MATH1
#undef JITKERN_CX_MATH2

JITKERN_CX_FN float fma(float a, float b, float c) { return ::fmaf(a, b, c); }
JITKERN_CX_FN double fma(double a, double b, double c) { return ::fma(a, b, c); }
JITKERN_CX_FN void sincos(float v, float* s, float* c) { ::sincosf(v, s, c); }
// A product the compiler may not fuse into a later add (error-free transformations
// need the rounded product itself).
#ifdef __CUDA_ARCH__
JITKERN_CX_FN float mul_rn(float a, float b) { return __fmul_rn(a, b); }
JITKERN_CX_FN double mul_rn(double a, double b) { return __dmul_rn(a, b); }
#else
JITKERN_CX_FN float mul_rn(float a, float b) { return a * b; }
JITKERN_CX_FN double mul_rn(double a, double b) { return a * b; }
#endif
JITKERN_CX_FN void sincos(double v, double* s, double* c) { ::sincos(v, s, c); }

template <typename T>
struct limits;
template <>
struct limits<float> {
    JITKERN_CX_FN static float inf() {
#ifdef __CUDA_ARCH__
        return __int_as_float(0x7f800000);
#else
        return __builtin_huge_valf();
#endif
    }
    JITKERN_CX_FN static float max() { return 3.402823466e+38f; }
    static constexpr float exp_max = 88.0f;  // exp(x) is finite below this
};
template <>
struct limits<double> {
    JITKERN_CX_FN static double inf() {
#ifdef __CUDA_ARCH__
        return __longlong_as_double(0x7ff0000000000000LL);
#else
        return __builtin_huge_val();
#endif
    }
    JITKERN_CX_FN static double max() { return 1.7976931348623157e+308; }
    static constexpr double exp_max = 709.0;
};

template <typename T>
JITKERN_CX_FN bool isnan(T v) { return v != v; }
template <typename T>
JITKERN_CX_FN bool isinf(T v) { return fabs(v) == limits<T>::inf(); }
template <typename T>
JITKERN_CX_FN bool isfinite(T v) { return fabs(v) <= limits<T>::max(); }
template <typename T>
JITKERN_CX_FN T quiet_nan() { return limits<T>::inf() - limits<T>::inf(); }

}  // namespace cx_detail
}  // namespace jitkern

// ---------------------------------------------------------------------------
// complex<T>

template <typename T>
struct alignas(2 * sizeof(T)) complex {
    typedef T value_type;

    // The storage: public, with the field names of float2/double2, so code written
    // against cuComplex.h (z.x, z.y) keeps working.
    T x;
    T y;

    // Trivial, like float2: `complex<float> z;` is uninitialised (so complex<T> may
    // live in __shared__ memory); `complex<float>()` and `complex<float>{}` are zero.
    complex() = default;
    JITKERN_CX_FN constexpr complex(const T& re, const T& im = T()) : x(re), y(im) {}
    template <typename U>
    JITKERN_CX_FN constexpr complex(const complex<U>& z) : x(T(z.x)), y(T(z.y)) {}
    JITKERN_CX_FN constexpr complex(const typename jitkern::cx_detail::vec2<T>::type& v)
        : x(v.x), y(v.y) {}
    JITKERN_CX_FN operator typename jitkern::cx_detail::vec2<T>::type() const {
        typename jitkern::cx_detail::vec2<T>::type v;
        v.x = x;
        v.y = y;
        return v;
    }

    JITKERN_CX_FN constexpr T real() const { return x; }
    JITKERN_CX_FN constexpr T imag() const { return y; }
    JITKERN_CX_FN void real(T v) { x = v; }
    JITKERN_CX_FN void imag(T v) { y = v; }

    template <typename U>
    JITKERN_CX_FN complex& operator+=(const complex<U>& z) {
        x += z.x;
        y += z.y;
        return *this;
    }
    template <typename U>
    JITKERN_CX_FN complex& operator-=(const complex<U>& z) {
        x -= z.x;
        y -= z.y;
        return *this;
    }
    template <typename U>
    JITKERN_CX_FN complex& operator*=(const complex<U>& z) {
        *this = *this * z;
        return *this;
    }
    template <typename U>
    JITKERN_CX_FN complex& operator/=(const complex<U>& z) {
        *this = *this / z;
        return *this;
    }
    template <typename U>
    JITKERN_CX_FN typename jitkern::cx_detail::if_scalar<U, complex&>::type operator+=(const U& s) {
        x += s;
        return *this;
    }
    template <typename U>
    JITKERN_CX_FN typename jitkern::cx_detail::if_scalar<U, complex&>::type operator-=(const U& s) {
        x -= s;
        return *this;
    }
    template <typename U>
    JITKERN_CX_FN typename jitkern::cx_detail::if_scalar<U, complex&>::type operator*=(const U& s) {
        x *= s;
        y *= s;
        return *this;
    }
    template <typename U>
    JITKERN_CX_FN typename jitkern::cx_detail::if_scalar<U, complex&>::type operator/=(const U& s) {
        x /= s;
        y /= s;
        return *this;
    }
};

namespace jitkern {
namespace cx_detail {

// Smith's algorithm: (a + ib) / (c + id) without forming c^2 + d^2.
template <typename T>
JITKERN_CX_FN complex<T> divide(T a, T b, T c, T d) {
    T ac = fabs(c), ad = fabs(d);
    if (ac >= ad) {
        if (ac == 0 && ad == 0) {  // x / 0: inf or nan per component, like NumPy
            return complex<T>(a / ac, b / ac);
        }
        T r = d / c;
        T den = c + d * r;
        return complex<T>((a + b * r) / den, (b - a * r) / den);
    }
    T r = c / d;
    T den = c * r + d;
    return complex<T>((a * r + b) / den, (b * r - a) / den);
}

template <typename A, typename B>
struct promote_cx {
    typedef complex<typename promote<A, B>::type> type;
};

}  // namespace cx_detail
}  // namespace jitkern

// ---- operators --------------------------------------------------------------
// Mixed precisions promote (complex<float> + complex<double> -> complex<double>);
// real scalars of any arithmetic type combine on either side.

#define JITKERN_CX_PROMOTED(T, U) typename jitkern::cx_detail::promote_cx<T, U>::type
#define JITKERN_CX_SCALAR_RESULT(T, U) \
    typename jitkern::cx_detail::if_scalar<U, JITKERN_CX_PROMOTED(T, U)>::type

template <typename T>
JITKERN_CX_FN complex<T> operator+(const complex<T>& z) { return z; }
template <typename T>
JITKERN_CX_FN complex<T> operator-(const complex<T>& z) { return complex<T>(-z.x, -z.y); }

template <typename T, typename U>
JITKERN_CX_FN JITKERN_CX_PROMOTED(T, U) operator+(const complex<T>& a, const complex<U>& b) {
    return JITKERN_CX_PROMOTED(T, U)(a.x + b.x, a.y + b.y);
}
template <typename T, typename U>
JITKERN_CX_FN JITKERN_CX_SCALAR_RESULT(T, U) operator+(const complex<T>& a, const U& s) {
    return JITKERN_CX_PROMOTED(T, U)(a.x + s, a.y);
}
template <typename T, typename U>
JITKERN_CX_FN JITKERN_CX_SCALAR_RESULT(T, U) operator+(const U& s, const complex<T>& a) {
    return JITKERN_CX_PROMOTED(T, U)(s + a.x, a.y);
}

template <typename T, typename U>
JITKERN_CX_FN JITKERN_CX_PROMOTED(T, U) operator-(const complex<T>& a, const complex<U>& b) {
    return JITKERN_CX_PROMOTED(T, U)(a.x - b.x, a.y - b.y);
}
template <typename T, typename U>
JITKERN_CX_FN JITKERN_CX_SCALAR_RESULT(T, U) operator-(const complex<T>& a, const U& s) {
    return JITKERN_CX_PROMOTED(T, U)(a.x - s, a.y);
}
// s - z keeps the sign of zero right: 1 - (2 + 0i) is -1 - 0i (a real has no
// imaginary part to subtract from), which Kahan's branch-cut formulas rely on.
template <typename T, typename U>
JITKERN_CX_FN JITKERN_CX_SCALAR_RESULT(T, U) operator-(const U& s, const complex<T>& a) {
    return JITKERN_CX_PROMOTED(T, U)(s - a.x, -a.y);
}

template <typename T, typename U>
JITKERN_CX_FN JITKERN_CX_PROMOTED(T, U) operator*(const complex<T>& a, const complex<U>& b) {
    return JITKERN_CX_PROMOTED(T, U)(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
template <typename T, typename U>
JITKERN_CX_FN JITKERN_CX_SCALAR_RESULT(T, U) operator*(const complex<T>& a, const U& s) {
    return JITKERN_CX_PROMOTED(T, U)(a.x * s, a.y * s);
}
template <typename T, typename U>
JITKERN_CX_FN JITKERN_CX_SCALAR_RESULT(T, U) operator*(const U& s, const complex<T>& a) {
    return JITKERN_CX_PROMOTED(T, U)(s * a.x, s * a.y);
}

template <typename T, typename U>
JITKERN_CX_FN JITKERN_CX_PROMOTED(T, U) operator/(const complex<T>& a, const complex<U>& b) {
    typedef typename jitkern::cx_detail::promote<T, U>::type R;
    return jitkern::cx_detail::divide<R>(a.x, a.y, b.x, b.y);
}
template <typename T, typename U>
JITKERN_CX_FN JITKERN_CX_SCALAR_RESULT(T, U) operator/(const complex<T>& a, const U& s) {
    return JITKERN_CX_PROMOTED(T, U)(a.x / s, a.y / s);
}
template <typename T, typename U>
JITKERN_CX_FN JITKERN_CX_SCALAR_RESULT(T, U) operator/(const U& s, const complex<T>& a) {
    typedef typename jitkern::cx_detail::promote<T, U>::type R;
    return jitkern::cx_detail::divide<R>(s, R(0), a.x, a.y);
}

template <typename T, typename U>
JITKERN_CX_FN bool operator==(const complex<T>& a, const complex<U>& b) {
    return a.x == b.x && a.y == b.y;
}
template <typename T, typename U>
JITKERN_CX_FN typename jitkern::cx_detail::if_scalar<U, bool>::type operator==(const complex<T>& a,
                                                                              const U& s) {
    return a.x == s && a.y == 0;
}
template <typename T, typename U>
JITKERN_CX_FN typename jitkern::cx_detail::if_scalar<U, bool>::type operator==(const U& s,
                                                                              const complex<T>& a) {
    return a.x == s && a.y == 0;
}
template <typename T, typename U>
JITKERN_CX_FN bool operator!=(const complex<T>& a, const complex<U>& b) { return !(a == b); }
template <typename T, typename U>
JITKERN_CX_FN typename jitkern::cx_detail::if_scalar<U, bool>::type operator!=(const complex<T>& a,
                                                                              const U& s) {
    return !(a == s);
}
template <typename T, typename U>
JITKERN_CX_FN typename jitkern::cx_detail::if_scalar<U, bool>::type operator!=(const U& s,
                                                                              const complex<T>& a) {
    return !(a == s);
}

// NumPy's order (CuPy's complex has it too): by the real parts, then the imaginary ones;
// a NaN part makes every comparison false. A real number compares as x + 0i.
#define JITKERN_CX_ORDER(OP, STRICT)                                                      \
    template <typename T, typename U>                                                   \
    JITKERN_CX_FN bool operator OP(const complex<T>& a, const complex<U>& b) {          \
        return a.x STRICT b.x || (a.x == b.x && a.y OP b.y);                            \
    }                                                                                   \
    template <typename T, typename U>                                                   \
    JITKERN_CX_FN typename jitkern::cx_detail::if_scalar<U, bool>::type operator OP(    \
        const complex<T>& a, const U& s) {                                              \
        return a.x STRICT s || (a.x == s && a.y OP T(0));                               \
    }                                                                                   \
    template <typename T, typename U>                                                   \
    JITKERN_CX_FN typename jitkern::cx_detail::if_scalar<U, bool>::type operator OP(    \
        const U& s, const complex<T>& a) {                                              \
        return s STRICT a.x || (s == a.x && T(0) OP a.y);                               \
    }
JITKERN_CX_ORDER(<, <)
JITKERN_CX_ORDER(<=, <)
JITKERN_CX_ORDER(>, >)
JITKERN_CX_ORDER(>=, >)
#undef JITKERN_CX_ORDER

// ---- parts, magnitude, classification ------------------------------------------

template <typename T>
JITKERN_CX_FN T real(const complex<T>& z) { return z.x; }
template <typename T>
JITKERN_CX_FN T imag(const complex<T>& z) { return z.y; }
template <typename T>
JITKERN_CX_FN T abs(const complex<T>& z) { return jitkern::cx_detail::hypot(z.x, z.y); }
template <typename T>
JITKERN_CX_FN T arg(const complex<T>& z) { return jitkern::cx_detail::atan2(z.y, z.x); }
template <typename T>
JITKERN_CX_FN T norm(const complex<T>& z) { return z.x * z.x + z.y * z.y; }
template <typename T>
JITKERN_CX_FN complex<T> conj(const complex<T>& z) { return complex<T>(z.x, -z.y); }

template <typename T>
JITKERN_CX_FN bool isnan(const complex<T>& z) {
    return jitkern::cx_detail::isnan(z.x) || jitkern::cx_detail::isnan(z.y);
}
template <typename T>
JITKERN_CX_FN bool isinf(const complex<T>& z) {
    return jitkern::cx_detail::isinf(z.x) || jitkern::cx_detail::isinf(z.y);
}
template <typename T>
JITKERN_CX_FN bool isfinite(const complex<T>& z) {
    return jitkern::cx_detail::isfinite(z.x) && jitkern::cx_detail::isfinite(z.y);
}

// Projection onto the Riemann sphere: every infinity maps to (+inf, +-0).
template <typename T>
JITKERN_CX_FN complex<T> proj(const complex<T>& z) {
    namespace d = jitkern::cx_detail;
    if (d::isinf(z.x) || d::isinf(z.y)) {
        return complex<T>(d::limits<T>::inf(), d::copysign(T(0), z.y));
    }
    return z;
}

template <typename T>
JITKERN_CX_FN complex<T> polar(const T& r, const T& theta = T()) {
    T s, c;
    jitkern::cx_detail::sincos(theta, &s, &c);
    return complex<T>(r * c, r * s);
}

// ---- exponential, logarithm, roots, powers --------------------------------------

template <typename T>
JITKERN_CX_BIG complex<T> exp(const complex<T>& z) {
    namespace d = jitkern::cx_detail;
    if (z.y == 0) {  // keeps a real result real (and the sign of its zero)
        return complex<T>(d::exp(z.x), z.y);
    }
    T s, c;
    d::sincos(z.y, &s, &c);
    if (z.x > d::limits<T>::exp_max) {  // exp(x) overflows, exp(x) * cos(y) may not
        T h = d::exp(z.x * T(0.5));
        return complex<T>((h * c) * h, (h * s) * h);
    }
    T e = d::exp(z.x);
    return complex<T>(e * c, e * s);
}

template <typename T>
JITKERN_CX_BIG complex<T> log(const complex<T>& z) {
    namespace d = jitkern::cx_detail;
    T ax = d::fabs(z.x), ay = d::fabs(z.y);
    T hi = ax > ay ? ax : ay;
    T lo = ax > ay ? ay : ax;
    T re;
    if (hi >= T(0.5) && hi <= T(2)) {
        // log|z| = log1p(|z|^2 - 1) / 2, with |z|^2 - 1 summed from exact products
        // (hi^2 - 1 is exact here): full relative accuracy on and near |z| = 1.
        T h2 = d::mul_rn(hi, hi), l2 = d::mul_rn(lo, lo);
        T err = d::fma(hi, hi, -h2) + d::fma(lo, lo, -l2);
        re = T(0.5) * d::log1p(((h2 - T(1)) + l2) + err);
    } else {
        re = d::log(d::hypot(z.x, z.y));
    }
    return complex<T>(re, d::atan2(z.y, z.x));
}

template <typename T>
JITKERN_CX_FN complex<T> log10(const complex<T>& z) {
    const T inv_ln10 = T(0.43429448190325182765112891891660508);
    complex<T> l = log(z);
    return complex<T>(l.x * inv_ln10, l.y * inv_ln10);
}

// CuPy's complex.cuh adds these five (its ufuncs use them).
template <typename T>
JITKERN_CX_FN complex<T> log2(const complex<T>& z) {
    const T inv_ln2 = T(1.44269504088896340735992468100189214);
    complex<T> l = log(z);
    return complex<T>(l.x * inv_ln2, l.y * inv_ln2);
}

// log(1 + z), keeping the accuracy of a small z: log|1 + z| = log1p(2x + x^2 + y^2) / 2.
template <typename T>
JITKERN_CX_BIG complex<T> log1p(const complex<T>& z) {
    namespace d = jitkern::cx_detail;
    const T im = d::atan2(z.y, T(1) + z.x);
    if (d::fabs(z.x) < T(0.5) && d::fabs(z.y) < T(0.5)) {
        return complex<T>(T(0.5) * d::log1p(z.x * (T(2) + z.x) + z.y * z.y), im);
    }
    return complex<T>(d::log(d::hypot(T(1) + z.x, z.y)), im);
}

// exp(z) - 1, keeping the accuracy of a small z: expm1(x) cos y + (cos y - 1), with
// cos y - 1 = -2 sin^2(y/2).
template <typename T>
JITKERN_CX_BIG complex<T> expm1(const complex<T>& z) {
    namespace d = jitkern::cx_detail;
    T s, c, sh, ch;
    d::sincos(z.y, &s, &c);
    d::sincos(z.y * T(0.5), &sh, &ch);
    return complex<T>(d::expm1(z.x) * c - T(2) * sh * sh, d::exp(z.x) * s);
}

template <typename T>
JITKERN_CX_FN complex<T> rint(const complex<T>& z) {
    return complex<T>(jitkern::cx_detail::rint(z.x), jitkern::cx_detail::rint(z.y));
}

// Of a NaN and a number, the number; otherwise ordered by the real part, then the imaginary.
template <typename T>
JITKERN_CX_FN complex<T> min(const complex<T>& a, const complex<T>& b) {
    if (isnan(a)) return b;
    if (isnan(b)) return a;
    const bool a_first = a.x < b.x || (a.x == b.x && a.y < b.y);
    return a_first ? a : b;
}
template <typename T>
JITKERN_CX_FN complex<T> max(const complex<T>& a, const complex<T>& b) {
    if (isnan(a)) return b;
    if (isnan(b)) return a;
    const bool a_first = a.x > b.x || (a.x == b.x && a.y >= b.y);
    return a_first ? a : b;
}

template <typename T>
JITKERN_CX_BIG complex<T> sqrt(const complex<T>& z) {
    namespace d = jitkern::cx_detail;
    T x = z.x, y = z.y;
    if (x == 0 && y == 0) {
        return complex<T>(T(0), y);
    }
    if (d::isinf(y)) {
        return complex<T>(d::limits<T>::inf(), y);
    }
    T scale = 1;
    if (d::fabs(x) > d::limits<T>::max() / 4 || d::fabs(y) > d::limits<T>::max() / 4) {
        x *= T(0.25);  // |x| + |z| must not overflow
        y *= T(0.25);
        scale = 2;
    }
    T t = d::sqrt((d::fabs(x) + d::hypot(x, y)) * T(0.5));
    if (x >= 0) {
        return complex<T>(scale * t, scale * (y / (2 * t)));
    }
    return complex<T>(scale * (d::fabs(y) / (2 * t)), scale * d::copysign(t, y));
}

namespace jitkern {
namespace cx_detail {

// z^n by repeated squaring, for integral real exponents (as NumPy does for |n| < 100).
template <typename T>
JITKERN_CX_BIG complex<T> ipow(complex<T> z, int n) {
    unsigned int m = n < 0 ? 0u - unsigned(n) : unsigned(n);
    complex<T> result(T(1), T(0));
    while (m) {
        if (m & 1u) {
            result = result * z;
        }
        m >>= 1;
        if (m) {
            z = z * z;
        }
    }
    return n < 0 ? T(1) / result : result;
}

template <typename T>
JITKERN_CX_BIG complex<T> pow_real(const complex<T>& z, T r) {
    if (trunc(r) == r && fabs(r) < T(100)) {
        return ipow(z, int(r));
    }
    if (z.x == 0 && z.y == 0 && r > 0) {
        return complex<T>(T(0), T(0));
    }
    complex<T> l = ::log(z);
    return ::exp(complex<T>(r * l.x, r * l.y));
}

template <typename T>
JITKERN_CX_BIG complex<T> pow_complex(const complex<T>& z, const complex<T>& w) {
    if (w.y == 0) {
        return pow_real(z, w.x);
    }
    if (z.x == 0 && z.y == 0 && w.x > 0) {  // |0^w| = 0^Re(w)
        return complex<T>(T(0), T(0));
    }
    return ::exp(w * ::log(z));
}

template <typename T>
JITKERN_CX_BIG complex<T> real_pow_complex(T s, const complex<T>& w) {
    if (s > 0) {  // s^w = exp(w log s) with a real logarithm
        T l = log(s);
        return ::exp(complex<T>(w.x * l, w.y * l));
    }
    return pow_complex(complex<T>(s, T(0)), w);
}

}  // namespace cx_detail
}  // namespace jitkern

template <typename T, typename U>
JITKERN_CX_FN JITKERN_CX_PROMOTED(T, U) pow(const complex<T>& z, const complex<U>& w) {
    typedef typename jitkern::cx_detail::promote<T, U>::type R;
    return jitkern::cx_detail::pow_complex<R>(z, w);
}
template <typename T, typename U>
JITKERN_CX_FN JITKERN_CX_SCALAR_RESULT(T, U) pow(const complex<T>& z, const U& r) {
    typedef typename jitkern::cx_detail::promote<T, U>::type R;
    return jitkern::cx_detail::pow_real<R>(z, R(r));
}
template <typename T, typename U>
JITKERN_CX_FN JITKERN_CX_SCALAR_RESULT(T, U) pow(const U& s, const complex<T>& w) {
    typedef typename jitkern::cx_detail::promote<T, U>::type R;
    return jitkern::cx_detail::real_pow_complex<R>(R(s), w);
}

// ---- hyperbolic and trigonometric ------------------------------------------------

template <typename T>
JITKERN_CX_BIG complex<T> sinh(const complex<T>& z) {
    namespace d = jitkern::cx_detail;
    T s, c;
    d::sincos(z.y, &s, &c);
    return complex<T>(d::sinh(z.x) * c, d::cosh(z.x) * s);
}

template <typename T>
JITKERN_CX_BIG complex<T> cosh(const complex<T>& z) {
    namespace d = jitkern::cx_detail;
    T s, c;
    d::sincos(z.y, &s, &c);
    return complex<T>(d::cosh(z.x) * c, d::sinh(z.x) * s);
}

// tanh(x + iy) = (sinh x cosh x + i sin y cos y) / (sinh^2 x + cos^2 y): the
// denominator is a sum of squares, so there is no cancellation near the poles.
template <typename T>
JITKERN_CX_BIG complex<T> tanh(const complex<T>& z) {
    namespace d = jitkern::cx_detail;
    T s, c;
    d::sincos(z.y, &s, &c);
    if (d::fabs(z.x) > T(20)) {  // sinh^2 x would overflow; tanh x is +-1 to working precision
        return complex<T>(d::copysign(T(1), z.x), T(4) * s * c * d::exp(T(-2) * d::fabs(z.x)));
    }
    T sh = d::sinh(z.x), ch = d::cosh(z.x);
    T den = sh * sh + c * c;
    return complex<T>(sh * ch / den, s * c / den);
}

// The circular functions through the hyperbolic ones: f(z) = -+i g(iz).
template <typename T>
JITKERN_CX_FN complex<T> sin(const complex<T>& z) {
    complex<T> h = sinh(complex<T>(-z.y, z.x));  // sin z = -i sinh(iz)
    return complex<T>(h.y, -h.x);
}
template <typename T>
JITKERN_CX_FN complex<T> cos(const complex<T>& z) {
    return cosh(complex<T>(-z.y, z.x));  // cos z = cosh(iz)
}
template <typename T>
JITKERN_CX_FN complex<T> tan(const complex<T>& z) {
    complex<T> h = tanh(complex<T>(-z.y, z.x));  // tan z = -i tanh(iz)
    return complex<T>(h.y, -h.x);
}

// ---- inverse functions (Kahan) -----------------------------------------------

template <typename T>
JITKERN_CX_BIG complex<T> asin(const complex<T>& z) {
    namespace d = jitkern::cx_detail;
    complex<T> a = ::sqrt(T(1) - z);  // sqrt(1 - z)
    complex<T> b = ::sqrt(T(1) + z);  // sqrt(1 + z)
    return complex<T>(d::atan2(z.x, a.x * b.x - a.y * b.y), d::asinh(a.x * b.y - a.y * b.x));
}

template <typename T>
JITKERN_CX_BIG complex<T> acos(const complex<T>& z) {
    namespace d = jitkern::cx_detail;
    complex<T> a = ::sqrt(T(1) - z);
    complex<T> b = ::sqrt(T(1) + z);
    return complex<T>(T(2) * d::atan2(a.x, b.x), d::asinh(b.x * a.y - b.y * a.x));
}

template <typename T>
JITKERN_CX_BIG complex<T> acosh(const complex<T>& z) {
    namespace d = jitkern::cx_detail;
    complex<T> a = ::sqrt(complex<T>(z.x - T(1), z.y));  // sqrt(z - 1)
    complex<T> b = ::sqrt(complex<T>(z.x + T(1), z.y));  // sqrt(z + 1)
    return complex<T>(d::asinh(a.x * b.x + a.y * b.y), T(2) * d::atan2(a.y, b.x));
}

template <typename T>
JITKERN_CX_BIG complex<T> atanh(const complex<T>& z) {
    namespace d = jitkern::cx_detail;
    const T half_pi = T(1.57079632679489661923132169163975144);
    T ax = d::fabs(z.x), ay = d::fabs(z.y);
    if (ax > T(1e10) || ay > T(1e10)) {  // atanh z = 1/z +- i pi/2 + O(1/z^3)
        T re = d::copysign(T(0), z.x);
        if (d::isfinite(ax) && d::isfinite(ay)) {
            T h = d::hypot(z.x, z.y);
            re = (z.x / h) / h;
        }
        return complex<T>(re, d::isnan(z.y) ? z.y : d::copysign(half_pi, z.y));
    }
    T dx = T(1) - ax;
    T re = d::log1p(T(4) * ax / (dx * dx + ay * ay)) * T(0.25);
    T im = d::atan2(T(2) * z.y, dx * (T(1) + ax) - ay * ay) * T(0.5);
    return complex<T>(d::copysign(re, z.x), im);
}

template <typename T>
JITKERN_CX_FN complex<T> asinh(const complex<T>& z) {
    complex<T> s = asin(complex<T>(-z.y, z.x));  // asinh z = -i asin(iz)
    return complex<T>(s.y, -s.x);
}
template <typename T>
JITKERN_CX_FN complex<T> atan(const complex<T>& z) {
    complex<T> h = atanh(complex<T>(-z.y, z.x));  // atan z = -i atanh(iz)
    return complex<T>(h.y, -h.x);
}

#undef JITKERN_CX_PROMOTED
#undef JITKERN_CX_SCALAR_RESULT

// Every name of complex numbers, for a namespace to take in: jitkern::complex and
// qualified calls such as jitkern::exp(z); cupy/complex.cuh's thrust:: names.
#define JITKERN_CX_NAMES \
    using ::complex; \
    using ::real; \
    using ::imag; \
    using ::abs; \
    using ::arg; \
    using ::norm; \
    using ::conj; \
    using ::proj; \
    using ::polar; \
    using ::exp; \
    using ::log; \
    using ::log10; \
    using ::log2; \
    using ::log1p; \
    using ::expm1; \
    using ::rint; \
    using ::min; \
    using ::max; \
    using ::sqrt; \
    using ::pow; \
    using ::sin; \
    using ::cos; \
    using ::tan; \
    using ::sinh; \
    using ::cosh; \
    using ::tanh; \
    using ::asin; \
    using ::acos; \
    using ::atan; \
    using ::asinh; \
    using ::acosh; \
    using ::atanh; \
    using ::isnan; \
    using ::isinf; \
    using ::isfinite;

namespace jitkern {
JITKERN_CX_NAMES
}  // namespace jitkern

#endif  // JITKERN_COMPLEX_CUH
