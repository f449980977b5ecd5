// cupy/cuComplex_bridge.h: the cuComplex.h names on CuPy's complex<float>/complex<double>.
//
// CuPy's translate_cucomplex=True replaces `#include <cuComplex.h>` with this header. It
// serves jitkern's cuComplex API (jitkern/cucomplex.cuh): cuFloatComplex, cuComplex and
// cuDoubleComplex are complex<float> / complex<double>, and make_cuFloatComplex,
// make_cuComplex, make_cuDoubleComplex, cuCrealf/cuCreal, cuCimagf/cuCimag, cuConjf/cuConj,
// cuCaddf/cuCadd, cuCsubf/cuCsub, cuCmulf/cuCmul, cuCdivf/cuCdiv, cuCabsf/cuCabs,
// cuCfmaf/cuCfma, cuComplexFloatToDouble and cuComplexDoubleToFloat compute as complex.cuh
// does. CuPy's bridge spells them as macros; here they are functions (so a later
// #include <cuComplex.h> is a no-op rather than a clash), taking their cuComplex.h types.

#ifndef JITKERN_CUPY_CUCOMPLEX_BRIDGE_H
#define JITKERN_CUPY_CUCOMPLEX_BRIDGE_H

#include <cupy/complex.cuh>
#include <jitkern/cucomplex.cuh>

#endif  // JITKERN_CUPY_CUCOMPLEX_BRIDGE_H
