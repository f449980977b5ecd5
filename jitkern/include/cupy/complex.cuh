// cupy/complex.cuh: CuPy's header name for complex numbers, served by jitkern's.
//
// Raw CUDA written for CuPy starts with `#include <cupy/complex.cuh>` and uses
// complex<float> / complex<double> (also spelled thrust::complex<T>, as in CuPy, where
// complex is Thrust's). This shim includes <jitkern/complex.cuh>, whose complex<T> has
// the same layout (two T, aligned to 2 * sizeof(T)) and the same functions (abs, arg,
// conj, exp, log, sqrt, pow, sin, ...): see docs/complex.md.
//
// thrust::complex is an alias of the global complex, and every function of complex numbers
// is a thrust:: name too (thrust::polar, thrust::conj, ...), as in CuPy, whose complex is
// Thrust's. A kernel that also includes Thrust's own <thrust/complex.h> gets two
// definitions of thrust::complex: include only one of them.

#ifndef JITKERN_CUPY_COMPLEX_CUH
#define JITKERN_CUPY_COMPLEX_CUH

#include <jitkern/complex.cuh>

#ifndef JITKERN_NO_THRUST_COMPLEX_ALIAS
namespace thrust {
JITKERN_CX_NAMES
}  // namespace thrust
#endif

#endif  // JITKERN_CUPY_COMPLEX_CUH
