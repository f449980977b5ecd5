// cupy/float16.cuh: CuPy's float16 class, and CuPy's float16 behaviour for __half.
//
// float16 holds one __half (2 bytes, the layout of NumPy's float16) and converts to float
// implicitly and from float implicitly; from the other arithmetic types explicitly
// (float16(1), float16(0.1) rounds 0.1 once), and from __half implicitly (jitkern's
// string kernels spell float16 elements __half). It has no arithmetic of its own: it takes
// part in expressions as a float, so `x * y` and `x * 2.0f` are float, `x * 2.0` double.
// Assigning anything it can be made from works (`y = x * 2.0` rounds once); so do
// `+= -= *= /=` (computed as above, rounded once).
//
//   members   to_bits(), float16::from_bits(u), iszero(), isnan(), isinf(), isfinite(),
//             signbit(), float16::nan (the bits of a quiet NaN)
//   functions isnan, isinf, isfinite, signbit, iszero, copysign, nextafter, min, max,
//             fmin, fmax, _floor_divide (jitkern/narrow_float.cuh), for float16 and __half
//
// __half itself (cuda_fp16.h, included here) gets the same mixed-expression rules:
// `h * 2.0f` is float, `h < 1` compares as floats, `h += 0.1` rounds once, where
// cuda_fp16.h alone finds them ambiguous. `h * h` stays cuda_fp16.h's (__half).
//
// nextafter follows NumPy (CuPy's returns nan for an infinite x; NumPy's and this one step
// to the largest finite value).

#ifndef JITKERN_CUPY_FLOAT16_CUH
#define JITKERN_CUPY_FLOAT16_CUH

#include <cuda_fp16.h>
#include <cupy/carray.cuh>
#include <jitkern/narrow_float.cuh>

namespace jitkern {
namespace narrow {
template <>
struct traits<__half> {
    static const bool value = true;
    static const bool cuda = true;
    static const unsigned sign = 0x8000u, exponent = 0x7c00u, quiet_nan = 0x7e00u;
    __device__ static unsigned short bits(const __half& x) { return __half_as_ushort(x); }
    __device__ static __half from_bits(unsigned u) { return __ushort_as_half((unsigned short)u); }
    __device__ static float to_float(const __half& x) { return __half2float(x); }
    __device__ static __half from(float v) { return __float2half_rn(v); }
    __device__ static __half from(double v) { return __double2half(v); }
};
}  // namespace narrow
}  // namespace jitkern

class float16 : public jitkern::narrow::value<float16, __half> {
    typedef jitkern::narrow::value<float16, __half> base;

public:
    static const unsigned short nan = 0x7e00u;

    float16() = default;
    __device__ float16(float v) : base(__float2half_rn(v)) {}
    __device__ float16(const __half& v) : base(v) {}
    explicit __device__ float16(const __half_raw& v) : base(__half(v)) {}
    template <typename T, typename = typename jitkern::narrow::enable_if<
                              jitkern::narrow::other_number<T>::value>::type>
    explicit __device__ float16(T v) : base(__double2half(static_cast<double>(v))) {}
    template <typename T, typename = typename cupy::type_traits::enable_if<
                              cupy::type_traits::is_same<T, bfloat16>::value>::type,
              typename = void>
    explicit __device__ float16(T v) : base(__float2half_rn(float(v))) {}

    float16& operator=(const float16&) = default;
    template <typename T>
    __device__ float16& operator=(const T& rhs) {
        return *this = static_cast<float16>(rhs);
    }
};

namespace jitkern {
namespace narrow {
template <>
struct traits<float16> : class_traits<float16, __half> {};
}  // namespace narrow
}  // namespace jitkern

#endif  // JITKERN_CUPY_FLOAT16_CUH
