// cupy/type_dispatcher.cuh: CuPy's dtype ids and dtype_dispatcher.
//
//   CUPY_TYPE_INT8 ... CUPY_TYPE_BOOL      CuPy's numbering of its dtypes (below)
//   dtype_dispatcher(id, f, args...)      calls f.template operator()<T>(args...) with T the
//                                         C++ type of dtype `id`: int8 signed char, int16
//                                         short, int32 int, int64 long long, the unsigned
//                                         ones likewise, float16 __half, float32 float,
//                                         float64 double, complex64/128 complex<float/double>,
//                                         bool bool
//
// CuPy's header is host code (it includes <stdexcept> and <cstdint>, which NVRTC lacks);
// this one compiles with NVRTC too and dispatches in device code as well. An unknown id
// throws std::runtime_error in host code (as CuPy's) and stops the kernel with a trap in
// device code.

#ifndef JITKERN_CUPY_TYPE_DISPATCHER_CUH
#define JITKERN_CUPY_TYPE_DISPATCHER_CUH

#include <cuda_fp16.h>
#include <cupy/complex.cuh>
#if !defined(__CUDACC_RTC__)
#include <stdexcept>
#endif

#define CUPY_TYPE_INT8 0
#define CUPY_TYPE_UINT8 1
#define CUPY_TYPE_INT16 2
#define CUPY_TYPE_UINT16 3
#define CUPY_TYPE_INT32 4
#define CUPY_TYPE_UINT32 5
#define CUPY_TYPE_INT64 6
#define CUPY_TYPE_UINT64 7
#define CUPY_TYPE_FLOAT16 8
#define CUPY_TYPE_FLOAT32 9
#define CUPY_TYPE_FLOAT64 10
#define CUPY_TYPE_COMPLEX64 11
#define CUPY_TYPE_COMPLEX128 12
#define CUPY_TYPE_BOOL 13

__host__ __device__ inline void _jk_unknown_dtype_id(int) {
#if defined(__CUDA_ARCH__)
    __trap();
#elif !defined(__CUDACC_RTC__)
    throw std::runtime_error("Unsupported dtype ID");
#endif
}

template <class functor_t, typename... Ts>
__host__ __device__ void dtype_dispatcher(int dtype_id, functor_t f, Ts&&... args) {
#define JITKERN_DISPATCH(ID, T) \
    case ID:                    \
        return f.template operator()<T>(static_cast<Ts&&>(args)...);
    switch (dtype_id) {
        JITKERN_DISPATCH(CUPY_TYPE_INT8, signed char)
        JITKERN_DISPATCH(CUPY_TYPE_UINT8, unsigned char)
        JITKERN_DISPATCH(CUPY_TYPE_INT16, short)
        JITKERN_DISPATCH(CUPY_TYPE_UINT16, unsigned short)
        JITKERN_DISPATCH(CUPY_TYPE_INT32, int)
        JITKERN_DISPATCH(CUPY_TYPE_UINT32, unsigned int)
        JITKERN_DISPATCH(CUPY_TYPE_INT64, long long)
        JITKERN_DISPATCH(CUPY_TYPE_UINT64, unsigned long long)
        JITKERN_DISPATCH(CUPY_TYPE_FLOAT16, __half)
        JITKERN_DISPATCH(CUPY_TYPE_FLOAT32, float)
        JITKERN_DISPATCH(CUPY_TYPE_FLOAT64, double)
        JITKERN_DISPATCH(CUPY_TYPE_COMPLEX64, complex<float>)
        JITKERN_DISPATCH(CUPY_TYPE_COMPLEX128, complex<double>)
        JITKERN_DISPATCH(CUPY_TYPE_BOOL, bool)
        default:
            _jk_unknown_dtype_id(dtype_id);
    }
#undef JITKERN_DISPATCH
}

#endif  // JITKERN_CUPY_TYPE_DISPATCHER_CUH
