// cupy/math_constants.h: the CUDART_* constants of CUDA's <math_constants.h>, every one of
// them, for kernels compiled where no CUDA toolkit is installed (NVRTC from a wheel).
//
// CuPy's header of this name defines four of them (CUDART_INF, CUDART_NAN and their float
// forms); this one defines all that CUDA's does, with the same values (each float and
// double is the one nearest the quantity named in the comment; a _HI/_LO pair splits a
// quantity in two: _HI is the double nearest it, _LO the double nearest the rest). The
// values here are written as the shortest decimals that round to them.
//
// Every string kernel sees these names without an #include (jitkern/environment.h). The
// header uses CUDA's own include guard, so an #include <math_constants.h> after it (or
// before it) leaves one set of definitions and no redefinition warnings.

#ifndef __MATH_CONSTANTS_H__
#define __MATH_CONSTANTS_H__
#define CUPY_MATH_CONSTANTS_H

// ---- float ------------------------------------------------------------------
// special values, by their bit patterns

#define CUDART_INF_F             __int_as_float(0x7f800000)  // +infinity
#define CUDART_NAN_F             __int_as_float(0x7fffffff)  // a quiet NaN
#define CUDART_MIN_DENORM_F      __int_as_float(0x00000001)  // the smallest subnormal, 2^-149
#define CUDART_MAX_NORMAL_F      __int_as_float(0x7f7fffff)  // the largest finite float
#define CUDART_NEG_ZERO_F        __int_as_float(0x80000000)  // -0.0f
#define CUDART_ZERO_F            0.0F
#define CUDART_ONE_F             1.0F
#define CUDART_SQRT_HALF_F       0.70710677F                 // sqrt(1/2)
#define CUDART_SQRT_HALF_HI_F    0.70710677F                 // sqrt(1/2): the float nearest it ...
#define CUDART_SQRT_HALF_LO_F    1.21016175e-08F             // ... and the float nearest the rest
#define CUDART_SQRT_TWO_F        1.4142135F                  // sqrt(2)
#define CUDART_THIRD_F           0.33333334F                 // 1/3
#define CUDART_PIO4_F            0.7853982F                  // pi/4
#define CUDART_PIO2_F            1.5707964F                  // pi/2
#define CUDART_3PIO4_F           2.3561945F                  // 3 pi/4
#define CUDART_2_OVER_PI_F       0.63661975F                 // 2/pi
#define CUDART_SQRT_2_OVER_PI_F  0.7978846F                  // sqrt(2/pi)
#define CUDART_PI_F              3.1415927F                  // pi
#define CUDART_L2E_F             1.442695F                   // log2(e)
#define CUDART_L2T_F             3.321928F                   // log2(10)
#define CUDART_LG2_F             0.30103F                    // log10(2)
#define CUDART_LGE_F             0.4342945F                  // log10(e)
#define CUDART_LN2_F             0.6931472F                  // ln(2)
#define CUDART_LNT_F             2.3025851F                  // ln(10)
#define CUDART_LNPI_F            1.1447299F                  // ln(pi)
#define CUDART_TWO_TO_M126_F     1.1754944e-38F              // 2^-126, the smallest normal float
#define CUDART_TWO_TO_126_F      8.507059e+37F               // 2^126
#define CUDART_NORM_HUGE_F       3.4028235e+38F              // the largest finite float
#define CUDART_TWO_TO_23_F       8388608.0F                  // 2^23
#define CUDART_TWO_TO_24_F       16777216.0F                 // 2^24
#define CUDART_TWO_TO_31_F       2147483648.0F               // 2^31
#define CUDART_TWO_TO_32_F       4294967296.0F               // 2^32
#define CUDART_REMQUO_BITS_F     3U                          // quotient bits remquof returns
#define CUDART_REMQUO_MASK_F     7U                          // the low CUDART_REMQUO_BITS_F bits
#define CUDART_TRIG_PLOSS_F      105615.0F                   // past it, sinf/cosf reduce their argument the slow way

// ---- double -----------------------------------------------------------------
#define CUDART_INF               __longlong_as_double(0x7ff0000000000000ULL) // +infinity
#define CUDART_NAN               __longlong_as_double(0xfff8000000000000ULL) // a quiet NaN (sign bit set)
#define CUDART_NEG_ZERO          __longlong_as_double(0x8000000000000000ULL) // -0.0
#define CUDART_MIN_DENORM        __longlong_as_double(0x0000000000000001ULL) // the smallest subnormal, 2^-1074
#define CUDART_ZERO              0.0                         // 0
#define CUDART_ONE               1.0                         // 1
#define CUDART_SQRT_TWO          1.4142135623730951          // sqrt(2)
#define CUDART_SQRT_HALF         0.7071067811865476          // sqrt(1/2)
#define CUDART_SQRT_HALF_HI      0.7071067811865476
#define CUDART_SQRT_HALF_LO      (-4.833646656726457e-17)
#define CUDART_THIRD             0.3333333333333333          // 1/3
#define CUDART_TWOTHIRD          0.6666666666666666          // 2/3
#define CUDART_PIO4              0.7853981633974483          // pi/4
#define CUDART_PIO4_HI           0.7853981633974483
#define CUDART_PIO4_LO           3.061616997868383e-17
#define CUDART_PIO2              1.5707963267948966          // pi/2
#define CUDART_PIO2_HI           1.5707963267948966
#define CUDART_PIO2_LO           6.123233995736766e-17
#define CUDART_3PIO4             2.356194490192345           // 3 pi/4
#define CUDART_2_OVER_PI         0.6366197723675814          // 2/pi
#define CUDART_PI                3.141592653589793           // pi
#define CUDART_PI_HI             3.141592653589793
#define CUDART_PI_LO             1.2246467991473532e-16
#define CUDART_SQRT_2PI          2.5066282746310007          // sqrt(2 pi)
#define CUDART_SQRT_2PI_HI       2.5066282746310007
#define CUDART_SQRT_2PI_LO       (-1.8328579980459167e-16)
#define CUDART_SQRT_PIO2         1.2533141373155003          // sqrt(pi/2)
#define CUDART_SQRT_PIO2_HI      1.2533141373155003
#define CUDART_SQRT_PIO2_LO      (-9.164289990229583e-17)
#define CUDART_SQRT_2OPI         0.7978845608028654          // sqrt(2/pi)
#define CUDART_L2E               1.4426950408889634          // log2(e)
#define CUDART_L2E_HI            1.4426950408889634
#define CUDART_L2E_LO            2.0355273740931033e-17
#define CUDART_L2T               3.321928094887362           // log2(10)
#define CUDART_LG2               0.3010299956639812          // log10(2)
#define CUDART_LG2_HI            0.3010299956639812
#define CUDART_LG2_LO            (-2.8037281277851704e-18)
#define CUDART_LGE               0.4342944819032518          // log10(e)
#define CUDART_LGE_HI            0.4342944819032518
#define CUDART_LGE_LO            1.098319650216765e-17
#define CUDART_LN2               0.6931471805599453          // ln(2)
#define CUDART_LN2_HI            0.6931471805599453
#define CUDART_LN2_LO            2.3190468138462996e-17
#define CUDART_LNT               2.302585092994046           // ln(10)
#define CUDART_LNT_HI            2.302585092994046
#define CUDART_LNT_LO            (-2.1707562233822494e-16)
#define CUDART_LNPI              1.1447298858494002          // ln(pi)
#define CUDART_LN2_X_1024        709.782712893384            // 1024 ln(2)
#define CUDART_LN2_X_1025        710.475860073944            // 1025 ln(2)
#define CUDART_LN2_X_1075        745.1332191019412           // 1075 ln(2)
#define CUDART_LG2_X_1024        308.25471555991675          // 1024 log10(2)
#define CUDART_LG2_X_1075        323.60724533877976          // 1075 log10(2)
#define CUDART_TWO_TO_23         8388608.0                   // 2^23
#define CUDART_TWO_TO_52         4503599627370496.0          // 2^52
#define CUDART_TWO_TO_53         9007199254740992.0          // 2^53
#define CUDART_TWO_TO_54         18014398509481984.0         // 2^54
#define CUDART_TWO_TO_M54        5.551115123125783e-17       // 2^-54
#define CUDART_TWO_TO_M1022      2.2250738585072014e-308     // 2^-1022, the smallest normal double
#define CUDART_TRIG_PLOSS        2147483648.0                // 2^31: past it, sin/cos reduce their argument the slow way
#define CUDART_DBL2INT_CVT       6755399441055744.0          // 1.5 * 2^52: adding it rounds a double to an integer

#endif  // __MATH_CONSTANTS_H__
