// jitkern/cucomplex.cuh: the cuComplex.h API on jitkern's complex<float>/complex<double>.
//
// translate_cucomplex=True rewrites `#include <cuComplex.h>` to this header, so
// code written against cuComplex.h compiles unchanged and its cuFloatComplex /
// cuDoubleComplex parameters take complex64 / complex128 arrays. The types keep
// the .x/.y fields of float2/double2 and convert to and from them.

#ifndef JITKERN_CUCOMPLEX_CUH
#define JITKERN_CUCOMPLEX_CUH

// A later #include <cuComplex.h> (say, from another header) becomes a no-op
// instead of redefining every function for float2.
#ifndef CU_COMPLEX_H_
#define CU_COMPLEX_H_
#endif

#include <jitkern/complex.cuh>

typedef complex<float> cuFloatComplex;
typedef complex<double> cuDoubleComplex;
typedef cuFloatComplex cuComplex;

#define JITKERN_CUC_FN __host__ __device__ __forceinline__

JITKERN_CUC_FN float cuCrealf(cuFloatComplex z) { return z.x; }
JITKERN_CUC_FN float cuCimagf(cuFloatComplex z) { return z.y; }
JITKERN_CUC_FN cuFloatComplex make_cuFloatComplex(float re, float im) {
    return cuFloatComplex(re, im);
}
JITKERN_CUC_FN cuFloatComplex cuConjf(cuFloatComplex z) { return conj(z); }
JITKERN_CUC_FN cuFloatComplex cuCaddf(cuFloatComplex a, cuFloatComplex b) { return a + b; }
JITKERN_CUC_FN cuFloatComplex cuCsubf(cuFloatComplex a, cuFloatComplex b) { return a - b; }
JITKERN_CUC_FN cuFloatComplex cuCmulf(cuFloatComplex a, cuFloatComplex b) { return a * b; }
JITKERN_CUC_FN cuFloatComplex cuCdivf(cuFloatComplex a, cuFloatComplex b) { return a / b; }
JITKERN_CUC_FN float cuCabsf(cuFloatComplex z) { return abs(z); }

JITKERN_CUC_FN double cuCreal(cuDoubleComplex z) { return z.x; }
JITKERN_CUC_FN double cuCimag(cuDoubleComplex z) { return z.y; }
JITKERN_CUC_FN cuDoubleComplex make_cuDoubleComplex(double re, double im) {
    return cuDoubleComplex(re, im);
}
JITKERN_CUC_FN cuDoubleComplex cuConj(cuDoubleComplex z) { return conj(z); }
JITKERN_CUC_FN cuDoubleComplex cuCadd(cuDoubleComplex a, cuDoubleComplex b) { return a + b; }
JITKERN_CUC_FN cuDoubleComplex cuCsub(cuDoubleComplex a, cuDoubleComplex b) { return a - b; }
JITKERN_CUC_FN cuDoubleComplex cuCmul(cuDoubleComplex a, cuDoubleComplex b) { return a * b; }
JITKERN_CUC_FN cuDoubleComplex cuCdiv(cuDoubleComplex a, cuDoubleComplex b) { return a / b; }
JITKERN_CUC_FN double cuCabs(cuDoubleComplex z) { return abs(z); }

JITKERN_CUC_FN cuComplex make_cuComplex(float re, float im) { return cuComplex(re, im); }
JITKERN_CUC_FN cuDoubleComplex cuComplexFloatToDouble(cuFloatComplex z) {
    return cuDoubleComplex(z);
}
JITKERN_CUC_FN cuFloatComplex cuComplexDoubleToFloat(cuDoubleComplex z) {
    return cuFloatComplex(z);
}

// x * y + d, each part accumulated with fused multiply-adds.
JITKERN_CUC_FN cuComplex cuCfmaf(cuComplex x, cuComplex y, cuComplex d) {
    float re = ::fmaf(-x.y, y.y, ::fmaf(x.x, y.x, d.x));
    float im = ::fmaf(x.y, y.x, ::fmaf(x.x, y.y, d.y));
    return cuComplex(re, im);
}
JITKERN_CUC_FN cuDoubleComplex cuCfma(cuDoubleComplex x, cuDoubleComplex y, cuDoubleComplex d) {
    double re = ::fma(-x.y, y.y, ::fma(x.x, y.x, d.x));
    double im = ::fma(x.y, y.x, ::fma(x.x, y.y, d.y));
    return cuDoubleComplex(re, im);
}

#undef JITKERN_CUC_FN

#endif  // JITKERN_CUCOMPLEX_CUH
