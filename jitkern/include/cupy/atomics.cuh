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

namespace jitkern {
namespace atomics {

// *address = update(*address) as one atomic step: a compare-and-swap loop on its bits
// (Word: the unsigned type of T's size). Returns the value it replaced.
template <typename Word, typename T, typename Update>
__device__ T exchange(T* address, Update update) {
    Word* word = reinterpret_cast<Word*>(address);
    Word seen = *word, expected;
    do {
        expected = seen;
        T before, after;
        memcpy(&before, &expected, sizeof(T));
        after = update(before);
        Word bits;
        memcpy(&bits, &after, sizeof(T));
        seen = atomicCAS(word, expected, bits);
    } while (seen != expected);
    T replaced;
    memcpy(&replaced, &seen, sizeof(T));
    return replaced;
}

}  // namespace atomics
}  // namespace jitkern

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 600
__device__ inline double atomicAdd(double* address, double val) {
    return jitkern::atomics::exchange<unsigned long long>(
        address, [val](double old) { return old + val; });
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
    const unsigned int before = jitkern::atomics::exchange<unsigned int>(
        word, [val, shift](unsigned int w) {
            const T sum = T::from_bits(static_cast<unsigned short>(w >> shift)) + val;
            return (w & ~(0xffffu << shift)) | (static_cast<unsigned int>(sum.to_bits()) << shift);
        });
    return T::from_bits(static_cast<unsigned short>(before >> shift));
}

__device__ inline long long atomicAdd(long long* address, long long val) {
    return static_cast<long long>(atomicAdd(reinterpret_cast<unsigned long long*>(address),
                                            static_cast<unsigned long long>(val)));
}

__device__ inline float atomicMax(float* address, float val) {
    return jitkern::atomics::exchange<unsigned int>(address, [val](float v) { return fmaxf(val, v); });
}
__device__ inline float atomicMin(float* address, float val) {
    return jitkern::atomics::exchange<unsigned int>(address, [val](float v) { return fminf(val, v); });
}
__device__ inline double atomicMax(double* address, double val) {
    return jitkern::atomics::exchange<unsigned long long>(address,
                                                          [val](double v) { return fmax(val, v); });
}
__device__ inline double atomicMin(double* address, double val) {
    return jitkern::atomics::exchange<unsigned long long>(address,
                                                          [val](double v) { return fmin(val, v); });
}

template <typename T>
__device__ complex<T> atomicAdd(complex<T>* address, complex<T> val) {
    T* parts = reinterpret_cast<T*>(address);
    const T re = atomicAdd(parts, val.real());
    const T im = atomicAdd(parts + 1, val.imag());
    return complex<T>(re, im);
}

#endif  // JITKERN_CUPY_ATOMICS_CUH
