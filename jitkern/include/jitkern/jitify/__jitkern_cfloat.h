// jitify=True: the <cfloat> macros for IEEE binary32/binary64, where libcu++ leaves
// them out under NVRTC (CCCL 3.0 does; newer CCCL defines them itself).
#ifndef JITKERN_JITIFY_CFLOAT_H
#define JITKERN_JITIFY_CFLOAT_H
#ifndef FLT_RADIX
#define FLT_RADIX 2
#endif
#ifndef FLT_EVAL_METHOD
#define FLT_EVAL_METHOD 0
#endif
#ifndef DECIMAL_DIG
#define DECIMAL_DIG 17
#endif
#ifndef FLT_MANT_DIG
#define FLT_MANT_DIG 24
#define FLT_DIG 6
#define FLT_DECIMAL_DIG 9
#define FLT_MIN_EXP (-125)
#define FLT_MIN_10_EXP (-37)
#define FLT_MAX_EXP 128
#define FLT_MAX_10_EXP 38
#define FLT_HAS_SUBNORM 1
#endif
#ifndef FLT_MAX
#define FLT_MAX 3.40282347e+38F
#define FLT_MIN 1.17549435e-38F
#define FLT_EPSILON 1.19209290e-07F
#define FLT_TRUE_MIN 1.40129846e-45F
#endif
#ifndef DBL_MANT_DIG
#define DBL_MANT_DIG 53
#define DBL_DIG 15
#define DBL_DECIMAL_DIG 17
#define DBL_MIN_EXP (-1021)
#define DBL_MIN_10_EXP (-307)
#define DBL_MAX_EXP 1024
#define DBL_MAX_10_EXP 308
#define DBL_HAS_SUBNORM 1
#endif
#ifndef DBL_MAX
#define DBL_MAX 1.7976931348623157e+308
#define DBL_MIN 2.2250738585072014e-308
#define DBL_EPSILON 2.2204460492503131e-16
#define DBL_TRUE_MIN 4.9406564584124654e-324
#endif
#endif
