// cupy/bfloat16.cuh: CuPy's bfloat16 class, and CuPy's bfloat16 behaviour for
// __nv_bfloat16.
//
// bfloat16 holds one __nv_bfloat16 (2 bytes, the layout of ml_dtypes' bfloat16) and
// converts to float implicitly, from float and __nv_bfloat16 implicitly, and from the other
// arithmetic types and float16 explicitly. Like float16 (cupy/float16.cuh) it takes part in
// expressions as a float; assignment from anything it can be made from and `+= -= *= /=`
// round once.
//
//   members   to_bits(), bfloat16::from_bits(u), iszero(), isnan(), isinf(), isfinite()
//   functions isnan, isinf, isfinite, signbit, iszero, copysign, nextafter, min, max,
//             fmin, fmax, _floor_divide (jitkern/narrow_float.cuh), for bfloat16 and
//             __nv_bfloat16, whose mixed expressions follow the same rules
//
// nextafter follows NumPy (toward y; an infinite x steps to the largest finite value).

#ifndef JITKERN_CUPY_BFLOAT16_CUH
#define JITKERN_CUPY_BFLOAT16_CUH

#include <cuda_bf16.h>
#include <cupy/carray.cuh>
#include <jitkern/narrow_float.cuh>

namespace jitkern {
namespace narrow {
template <>
struct traits<__nv_bfloat16> {
    static const bool value = true;
    static const bool cuda = true;
    static const unsigned sign = 0x8000u, exponent = 0x7f80u, quiet_nan = 0x7fc0u;
    __device__ static unsigned short bits(const __nv_bfloat16& x) { return __bfloat16_as_ushort(x); }
    __device__ static __nv_bfloat16 from_bits(unsigned u) {
        return __ushort_as_bfloat16((unsigned short)u);
    }
    __device__ static float to_float(const __nv_bfloat16& x) { return __bfloat162float(x); }
    __device__ static __nv_bfloat16 from(float v) { return __float2bfloat16_rn(v); }
    __device__ static __nv_bfloat16 from(double v) { return __double2bfloat16(v); }
};
}  // namespace narrow
}  // namespace jitkern

class bfloat16 : public jitkern::narrow::value<bfloat16, __nv_bfloat16> {
    typedef jitkern::narrow::value<bfloat16, __nv_bfloat16> base;

public:
    bfloat16() = default;
    __device__ bfloat16(float v) : base(__float2bfloat16_rn(v)) {}
    __device__ bfloat16(const __nv_bfloat16& v) : base(v) {}
    template <typename T, typename = typename jitkern::narrow::enable_if<
                              jitkern::narrow::other_number<T>::value>::type>
    explicit __device__ bfloat16(T v) : base(__double2bfloat16(static_cast<double>(v))) {}
    template <typename T, typename = typename cupy::type_traits::enable_if<
                              cupy::type_traits::is_same<T, float16>::value>::type,
              typename = void>
    explicit __device__ bfloat16(T v) : base(__float2bfloat16_rn(float(v))) {}

    bfloat16& operator=(const bfloat16&) = default;
    template <typename T>
    __device__ bfloat16& operator=(const T& rhs) {
        return *this = static_cast<bfloat16>(rhs);
    }
};

namespace jitkern {
namespace narrow {
template <>
struct traits<bfloat16> : class_traits<bfloat16, __nv_bfloat16> {};
}  // namespace narrow
}  // namespace jitkern

#endif  // JITKERN_CUPY_BFLOAT16_CUH
