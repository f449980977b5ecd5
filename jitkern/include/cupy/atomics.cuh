// cupy/atomics.cuh: the atomic functions CuPy adds to CUDA's.
//
//   T atomicAdd(T* p, T v)                 T = float16 or bfloat16 (the classes): a
//                                          compare-and-swap loop on the 32-bit word holding
//                                          *p; the sum is rounded once, as `*p + v` is
//   long long atomicAdd(long long* p, long long v)
//   double atomicAdd(double* p, double v)  before sm_60 (CUDA has it from sm_60 on)
//   float atomicMax(float*, float), double atomicMax(double*, double),
//   float atomicMin(float*, float), double atomicMin(double*, double)
//                                          compare-and-swap loops; NaN is ignored as by
//                                          fmax/fmin (a NaN stored is replaced, a NaN given
//                                          leaves *p)
//   complex<T> atomicAdd(complex<T>* p, complex<T> v)   (jitkern's) the real and the
//                                          imaginary part each added atomically (not as a
//                                          pair)
//
// Each returns the value *p held before. CuPy's atomicMax/atomicMin for double compare in
// float (fmaxf); these compare in double.

#ifndef JITKERN_CUPY_ATOMICS_CUH
#define JITKERN_CUPY_ATOMICS_CUH

#include <cupy/carray.cuh>

template <typename T>
struct complex;  // cupy/complex.cuh (needed only where a complex atomicAdd is called)

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 600
__device__ inline double atomicAdd(double* address, double val) {
    unsigned long long* word = reinterpret_cast<unsigned long long*>(address);
    unsigned long long seen = *word, expected;
    do {
        expected = seen;
        seen = atomicCAS(word, expected,
                         __double_as_longlong(__longlong_as_double(expected) + val));
    } while (seen != expected);
    return __longlong_as_double(seen);
}
#endif

// A template, so that float16 and bfloat16 need only be complete where it is used.
template <typename T, typename = typename cupy::type_traits::enable_if<
                          cupy::type_traits::is_same<T, float16>::value ||
                          cupy::type_traits::is_same<T, bfloat16>::value>::type>
__device__ T atomicAdd(T* address, T val) {
    // the aligned 32-bit word holding *address, and where in it the 16 bits sit
    const size_t at = reinterpret_cast<size_t>(address);
    unsigned int* word = reinterpret_cast<unsigned int*>(at & ~static_cast<size_t>(3));
    const unsigned int shift = (at & 2) ? 16u : 0u;
    unsigned int seen = *word, expected;
    unsigned short before;
    do {
        expected = seen;
        before = static_cast<unsigned short>(expected >> shift);
        const T sum = T::from_bits(before) + val;
        const unsigned int bits = static_cast<unsigned int>(sum.to_bits()) << shift;
        seen = atomicCAS(word, expected, (expected & ~(0xffffu << shift)) | bits);
    } while (seen != expected);
    return T::from_bits(before);
}

__device__ inline long long atomicAdd(long long* address, long long val) {
    return static_cast<long long>(atomicAdd(reinterpret_cast<unsigned long long*>(address),
                                            static_cast<unsigned long long>(val)));
}

__device__ inline float atomicMax(float* address, float val) {
    int* word = reinterpret_cast<int*>(address);
    int seen = *word, expected;
    do {
        expected = seen;
        seen = atomicCAS(word, expected, __float_as_int(fmaxf(val, __int_as_float(expected))));
    } while (seen != expected);
    return __int_as_float(seen);
}

__device__ inline float atomicMin(float* address, float val) {
    int* word = reinterpret_cast<int*>(address);
    int seen = *word, expected;
    do {
        expected = seen;
        seen = atomicCAS(word, expected, __float_as_int(fminf(val, __int_as_float(expected))));
    } while (seen != expected);
    return __int_as_float(seen);
}

__device__ inline double atomicMax(double* address, double val) {
    unsigned long long* word = reinterpret_cast<unsigned long long*>(address);
    unsigned long long seen = *word, expected;
    do {
        expected = seen;
        seen = atomicCAS(word, expected,
                         __double_as_longlong(fmax(val, __longlong_as_double(expected))));
    } while (seen != expected);
    return __longlong_as_double(seen);
}

__device__ inline double atomicMin(double* address, double val) {
    unsigned long long* word = reinterpret_cast<unsigned long long*>(address);
    unsigned long long seen = *word, expected;
    do {
        expected = seen;
        seen = atomicCAS(word, expected,
                         __double_as_longlong(fmin(val, __longlong_as_double(expected))));
    } while (seen != expected);
    return __longlong_as_double(seen);
}

template <typename T>
__device__ complex<T> atomicAdd(complex<T>* address, complex<T> val) {
    T* parts = reinterpret_cast<T*>(address);
    const T re = atomicAdd(parts, val.real());
    const T im = atomicAdd(parts + 1, val.imag());
    return complex<T>(re, im);
}

#endif  // JITKERN_CUPY_ATOMICS_CUH
