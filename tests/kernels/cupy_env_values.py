"""The values every string kernel's M_* and CUDART_* names must have, computed here from their
definitions with Python's decimal module (50 digits), independently of jitkern's headers:
name -> (C type, exact value as a Decimal, or the IEEE bit pattern of a special value)."""

from decimal import Decimal, getcontext

import numpy as np

getcontext().prec = 50


def _pi() -> Decimal:
    """pi by Machin's formula, 16 atan(1/5) - 4 atan(1/239)."""

    def atan_inv(n: int) -> Decimal:
        x, total, k, sign = Decimal(1) / n, Decimal(0), 1, 1
        power = x
        while power > Decimal(10) ** -60:
            total += sign * power / k
            power *= x * x
            k += 2
            sign = -sign
        return total

    return 16 * atan_inv(5) - 4 * atan_inv(239)


PI, E = _pi(), Decimal(1).exp()
LN2, LN10 = Decimal(2).ln(), Decimal(10).ln()
SQRT2, SQRT_HALF = Decimal(2).sqrt(), Decimal("0.5").sqrt()


def nearest_f32(d: Decimal) -> np.float32:
    f = np.float32(float(d))
    nearby = [f, np.nextafter(f, np.float32(np.inf)), np.nextafter(f, np.float32(-np.inf))]
    return min(nearby, key=lambda c: abs(Decimal(float(c)) - d) if np.isfinite(c) else Decimal(1e300))


def _hi_lo_f32(d: Decimal):
    hi = nearest_f32(d)
    return hi, nearest_f32(d - Decimal(float(hi)))


def _lo_f64(d: Decimal) -> float:
    return float(d - Decimal(float(d)))


_F = "float"
_D = "double"

#: name -> (C type, value): a float32 / float for the literal constants, a uint32/uint64
#: bit pattern (np.uint32 / np.uint64) for the special values, an int for the unsigned ones.
VALUES = {
    "M_E": (_D, float(E)),
    "M_LOG2E": (_D, float(1 / LN2)),
    "M_LOG10E": (_D, float(1 / LN10)),
    "M_LN2": (_D, float(LN2)),
    "M_LN10": (_D, float(LN10)),
    "M_PI": (_D, float(PI)),
    "M_PI_2": (_D, float(PI / 2)),
    "M_PI_4": (_D, float(PI / 4)),
    "M_1_PI": (_D, float(1 / PI)),
    "M_2_PI": (_D, float(2 / PI)),
    "M_2_SQRTPI": (_D, float(2 / PI.sqrt())),
    "M_SQRT2": (_D, float(SQRT2)),
    "M_SQRT1_2": (_D, float(SQRT_HALF)),
    # float
    "CUDART_INF_F": (_F, np.uint32(0x7F800000)),
    "CUDART_NAN_F": (_F, np.uint32(0x7FFFFFFF)),
    "CUDART_MIN_DENORM_F": (_F, np.uint32(0x00000001)),
    "CUDART_MAX_NORMAL_F": (_F, np.uint32(0x7F7FFFFF)),
    "CUDART_NEG_ZERO_F": (_F, np.uint32(0x80000000)),
    "CUDART_ZERO_F": (_F, np.float32(0)),
    "CUDART_ONE_F": (_F, np.float32(1)),
    "CUDART_SQRT_HALF_F": (_F, nearest_f32(SQRT_HALF)),
    "CUDART_SQRT_HALF_HI_F": (_F, _hi_lo_f32(SQRT_HALF)[0]),
    "CUDART_SQRT_HALF_LO_F": (_F, _hi_lo_f32(SQRT_HALF)[1]),
    "CUDART_SQRT_TWO_F": (_F, nearest_f32(SQRT2)),
    "CUDART_THIRD_F": (_F, nearest_f32(Decimal(1) / 3)),
    "CUDART_PIO4_F": (_F, nearest_f32(PI / 4)),
    "CUDART_PIO2_F": (_F, nearest_f32(PI / 2)),
    "CUDART_3PIO4_F": (_F, nearest_f32(3 * PI / 4)),
    "CUDART_2_OVER_PI_F": (_F, nearest_f32(2 / PI)),
    "CUDART_SQRT_2_OVER_PI_F": (_F, nearest_f32((2 / PI).sqrt())),
    "CUDART_PI_F": (_F, nearest_f32(PI)),
    "CUDART_L2E_F": (_F, nearest_f32(1 / LN2)),
    "CUDART_L2T_F": (_F, nearest_f32(LN10 / LN2)),
    "CUDART_LG2_F": (_F, nearest_f32(LN2 / LN10)),
    "CUDART_LGE_F": (_F, nearest_f32(1 / LN10)),
    "CUDART_LN2_F": (_F, nearest_f32(LN2)),
    "CUDART_LNT_F": (_F, nearest_f32(LN10)),
    "CUDART_LNPI_F": (_F, nearest_f32(PI.ln())),
    "CUDART_TWO_TO_M126_F": (_F, np.float32(2.0**-126)),
    "CUDART_TWO_TO_126_F": (_F, np.float32(2.0**126)),
    "CUDART_NORM_HUGE_F": (_F, np.finfo(np.float32).max),
    "CUDART_TWO_TO_23_F": (_F, np.float32(2.0**23)),
    "CUDART_TWO_TO_24_F": (_F, np.float32(2.0**24)),
    "CUDART_TWO_TO_31_F": (_F, np.float32(2.0**31)),
    "CUDART_TWO_TO_32_F": (_F, np.float32(2.0**32)),
    "CUDART_REMQUO_BITS_F": ("unsigned int", 3),
    "CUDART_REMQUO_MASK_F": ("unsigned int", 7),
    "CUDART_TRIG_PLOSS_F": (_F, np.float32(105615)),
    # double
    "CUDART_INF": (_D, np.uint64(0x7FF0000000000000)),
    "CUDART_NAN": (_D, np.uint64(0xFFF8000000000000)),
    "CUDART_NEG_ZERO": (_D, np.uint64(0x8000000000000000)),
    "CUDART_MIN_DENORM": (_D, np.uint64(1)),
    "CUDART_ZERO": (_D, 0.0),
    "CUDART_ONE": (_D, 1.0),
    "CUDART_SQRT_TWO": (_D, float(SQRT2)),
    "CUDART_SQRT_HALF": (_D, float(SQRT_HALF)),
    "CUDART_SQRT_HALF_HI": (_D, float(SQRT_HALF)),
    "CUDART_SQRT_HALF_LO": (_D, _lo_f64(SQRT_HALF)),
    "CUDART_THIRD": (_D, float(Decimal(1) / 3)),
    "CUDART_TWOTHIRD": (_D, float(Decimal(2) / 3)),
    "CUDART_PIO4": (_D, float(PI / 4)),
    "CUDART_PIO4_HI": (_D, float(PI / 4)),
    "CUDART_PIO4_LO": (_D, _lo_f64(PI / 4)),
    "CUDART_PIO2": (_D, float(PI / 2)),
    "CUDART_PIO2_HI": (_D, float(PI / 2)),
    "CUDART_PIO2_LO": (_D, _lo_f64(PI / 2)),
    "CUDART_3PIO4": (_D, float(3 * PI / 4)),
    "CUDART_2_OVER_PI": (_D, float(2 / PI)),
    "CUDART_PI": (_D, float(PI)),
    "CUDART_PI_HI": (_D, float(PI)),
    "CUDART_PI_LO": (_D, _lo_f64(PI)),
    "CUDART_SQRT_2PI": (_D, float((2 * PI).sqrt())),
    "CUDART_SQRT_2PI_HI": (_D, float((2 * PI).sqrt())),
    "CUDART_SQRT_2PI_LO": (_D, _lo_f64((2 * PI).sqrt())),
    "CUDART_SQRT_PIO2": (_D, float((PI / 2).sqrt())),
    "CUDART_SQRT_PIO2_HI": (_D, float((PI / 2).sqrt())),
    "CUDART_SQRT_PIO2_LO": (_D, _lo_f64((PI / 2).sqrt())),
    "CUDART_SQRT_2OPI": (_D, float((2 / PI).sqrt())),
    "CUDART_L2E": (_D, float(1 / LN2)),
    "CUDART_L2E_HI": (_D, float(1 / LN2)),
    "CUDART_L2E_LO": (_D, _lo_f64(1 / LN2)),
    "CUDART_L2T": (_D, float(LN10 / LN2)),
    "CUDART_LG2": (_D, float(LN2 / LN10)),
    "CUDART_LG2_HI": (_D, float(LN2 / LN10)),
    "CUDART_LG2_LO": (_D, _lo_f64(LN2 / LN10)),
    "CUDART_LGE": (_D, float(1 / LN10)),
    "CUDART_LGE_HI": (_D, float(1 / LN10)),
    "CUDART_LGE_LO": (_D, _lo_f64(1 / LN10)),
    "CUDART_LN2": (_D, float(LN2)),
    "CUDART_LN2_HI": (_D, float(LN2)),
    "CUDART_LN2_LO": (_D, _lo_f64(LN2)),
    "CUDART_LNT": (_D, float(LN10)),
    "CUDART_LNT_HI": (_D, float(LN10)),
    "CUDART_LNT_LO": (_D, _lo_f64(LN10)),
    "CUDART_LNPI": (_D, float(PI.ln())),
    "CUDART_LN2_X_1024": (_D, float(1024 * LN2)),
    "CUDART_LN2_X_1025": (_D, float(1025 * LN2)),
    "CUDART_LN2_X_1075": (_D, float(1075 * LN2)),
    "CUDART_LG2_X_1024": (_D, float(1024 * LN2 / LN10)),
    "CUDART_LG2_X_1075": (_D, float(1075 * LN2 / LN10)),
    "CUDART_TWO_TO_23": (_D, 2.0**23),
    "CUDART_TWO_TO_52": (_D, 2.0**52),
    "CUDART_TWO_TO_53": (_D, 2.0**53),
    "CUDART_TWO_TO_54": (_D, 2.0**54),
    "CUDART_TWO_TO_M54": (_D, 2.0**-54),
    "CUDART_TWO_TO_M1022": (_D, 2.0**-1022),
    "CUDART_TRIG_PLOSS": (_D, 2.0**31),
    "CUDART_DBL2INT_CVT": (_D, 1.5 * 2.0**52),
}


def as_float64(name: str) -> float:
    """The constant's value as a float64 (a bit pattern decoded; an unsigned as a number)."""
    _, v = VALUES[name]
    if isinstance(v, np.uint32):
        return float(np.array([v], np.uint32).view(np.float32)[0])
    if isinstance(v, np.uint64):
        return float(np.array([v], np.uint64).view(np.float64)[0])
    return float(v)


def is_literal(name: str) -> bool:
    """A constant a C++ constant expression can compare (not a bit-cast special value)."""
    return not isinstance(VALUES[name][1], (np.uint32, np.uint64))


def c_literal(name: str) -> str:
    ctype, v = VALUES[name]
    if ctype == "unsigned int":
        return f"{v}u"
    text = repr(float(v))
    return text + "f" if ctype == _F else text
