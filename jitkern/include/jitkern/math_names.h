// jitkern/math_names.h: the M_* constants of POSIX <math.h> (M_PI, M_E, M_SQRT2, ...), as
// doubles. NVRTC has no <math.h>, so kernels written for CuPy, which gives every elementwise
// and reduction kernel M_PI (its carray.cuh), would not compile; every string kernel sees
// these without an #include (jitkern/environment.h), and <cupy/carray.cuh> includes them.
//
// Each is defined only where the name is not yet a macro, and spelled with 21 significant
// digits (the spelling C libraries use for M_PI), so a kernel's own `#define M_PI ...` with
// those digits is a harmless repetition; other digits get NVRTC's "incompatible
// redefinition" warning in the compile log, and the kernel's value.

#ifndef JITKERN_MATH_NAMES_H
#define JITKERN_MATH_NAMES_H

#ifndef M_E
#define M_E         2.71828182845904523536   // e
#endif
#ifndef M_LOG2E
#define M_LOG2E     1.44269504088896340736   // log2(e)
#endif
#ifndef M_LOG10E
#define M_LOG10E    0.434294481903251827651  // log10(e)
#endif
#ifndef M_LN2
#define M_LN2       0.693147180559945309417  // ln(2)
#endif
#ifndef M_LN10
#define M_LN10      2.30258509299404568402   // ln(10)
#endif
#ifndef M_PI
#define M_PI        3.14159265358979323846   // pi
#endif
#ifndef M_PI_2
#define M_PI_2      1.57079632679489661923   // pi/2
#endif
#ifndef M_PI_4
#define M_PI_4      0.785398163397448309616  // pi/4
#endif
#ifndef M_1_PI
#define M_1_PI      0.318309886183790671538  // 1/pi
#endif
#ifndef M_2_PI
#define M_2_PI      0.636619772367581343076  // 2/pi
#endif
#ifndef M_2_SQRTPI
#define M_2_SQRTPI  1.1283791670955125739    // 2/sqrt(pi)
#endif
#ifndef M_SQRT2
#define M_SQRT2     1.4142135623730950488    // sqrt(2)
#endif
#ifndef M_SQRT1_2
#define M_SQRT1_2   0.707106781186547524401  // sqrt(1/2)
#endif

#endif  // JITKERN_MATH_NAMES_H
