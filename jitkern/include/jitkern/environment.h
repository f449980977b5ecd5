// jitkern/environment.h: the names every string kernel (RawKernel, RawModule,
// ElementwiseKernel, ReductionKernel) sees without an #include. jitkern compiles each
// kernel with this header pre-included (NVRTC's --pre-include), so the kernel's own source,
// and the line numbers of its messages, are unchanged.
//
//   M_PI, M_E, M_SQRT2, ... (POSIX <math.h>)          jitkern/math_names.h
//   CUDART_PI, CUDART_INF, CUDART_NAN_F, ... (CUDA)   cupy/math_constants.h
//
// Only macros: nothing here declares a type or a function, so no kernel's own declarations
// can clash with it. ElementwiseKernel and ReductionKernel also include CuPy's default
// headers (complex, CArray, atomics), as CuPy does (docs/compat.md, "CuPy's C++
// environment"). options=('-DJITKERN_NO_DEFAULT_NAMES',) leaves these names out.

#ifndef JITKERN_ENVIRONMENT_H
#define JITKERN_ENVIRONMENT_H
#ifndef JITKERN_NO_DEFAULT_NAMES
#include <jitkern/math_names.h>
#include <cupy/math_constants.h>
#endif
#endif  // JITKERN_ENVIRONMENT_H
