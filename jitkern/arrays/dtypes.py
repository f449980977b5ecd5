"""The element types jitkern arrays hold, and how each is spelled elsewhere.

One table row per supported type: its NumPy dtype, its DLPack ``(code, bits)``
and its C++ spelling in kernels. ``bfloat16``, ``float8_e4m3fn`` and ``float8_e5m2``
join the table when ``ml_dtypes`` is installed (NumPy has them only through it).
"""

from __future__ import annotations

import numpy

from ..errors import JitkernTypeError

# DLPack type codes (dlpack.h, DLDataTypeCode; the float8 ones since DLPack 1.1).
DL_INT, DL_UINT, DL_FLOAT, DL_BFLOAT, DL_COMPLEX, DL_BOOL = 0, 1, 2, 4, 5, 6
DL_FLOAT8_E4M3FN, DL_FLOAT8_E5M2 = 10, 12

# name -> (DLPack code, C++ type in kernels)
_TABLE = {
    "bool": (DL_BOOL, "bool"),
    "int8": (DL_INT, "signed char"),
    "int16": (DL_INT, "short"),
    "int32": (DL_INT, "int"),
    "int64": (DL_INT, "long long"),
    "uint8": (DL_UINT, "unsigned char"),
    "uint16": (DL_UINT, "unsigned short"),
    "uint32": (DL_UINT, "unsigned int"),
    "uint64": (DL_UINT, "unsigned long long"),
    "float16": (DL_FLOAT, "__half"),
    "float32": (DL_FLOAT, "float"),
    "float64": (DL_FLOAT, "double"),
    "complex64": (DL_COMPLEX, "jk_complex64"),
    "complex128": (DL_COMPLEX, "jk_complex128"),
}


def _ml_dtype(name: str):
    """NumPy's dtype for ``name`` from ml_dtypes, or None where it is not installed."""
    try:
        import ml_dtypes
    except ImportError:
        return None
    return numpy.dtype(getattr(ml_dtypes, name))


# name -> (DLPack code, C++ type): the types NumPy has only through ml_dtypes
_ML_TABLE = {
    "bfloat16": (DL_BFLOAT, "__nv_bfloat16"),
    "float8_e4m3fn": (DL_FLOAT8_E4M3FN, "__nv_fp8_e4m3"),
    "float8_e5m2": (DL_FLOAT8_E5M2, "__nv_fp8_e5m2"),
}
ML_DTYPES = {name: _ml_dtype(name) for name in _ML_TABLE}
BFLOAT16 = ML_DTYPES["bfloat16"]
FLOAT8_E4M3FN = ML_DTYPES["float8_e4m3fn"]
FLOAT8_E5M2 = ML_DTYPES["float8_e5m2"]

SUPPORTED: dict[numpy.dtype, tuple[int, str]] = {numpy.dtype(n): v for n, v in _TABLE.items()}
for _name, _dt in ML_DTYPES.items():
    if _dt is not None:
        SUPPORTED[_dt] = _ML_TABLE[_name]

SUPPORTED_NAMES = ", ".join(str(d) for d in SUPPORTED)

# dtype argument as given (numpy.float32, "f4", numpy.dtype(...), float) -> numpy.dtype
_cache: dict = {
    None: numpy.dtype(numpy.float64),
    float: numpy.dtype(numpy.float64),
    int: numpy.dtype(numpy.int64),
    bool: numpy.dtype(numpy.bool_),
    complex: numpy.dtype(numpy.complex128),
}
for _dt in SUPPORTED:
    _cache[_dt] = _cache[_dt.type] = _cache[_dt.name] = _dt
    if _dt.kind != "V":  # ml_dtypes' types share void typestrs ('<V1' for both float8s)
        _cache[_dt.str] = _dt


def normalize(dtype) -> numpy.dtype:
    """The supported ``numpy.dtype`` for a dtype argument; TypeError if unsupported."""
    try:
        return _cache[dtype]
    except (KeyError, TypeError):
        pass
    try:
        dt = numpy.dtype(dtype)
    except TypeError as exc:
        raise JitkernTypeError(f"dtype: {dtype!r} is not a data type ({exc})") from None
    check_supported(dt)
    try:
        _cache[dtype] = dt
    except TypeError:  # unhashable spelling, e.g. a list for a structured dtype
        pass
    return dt


def check_supported(dt: numpy.dtype) -> numpy.dtype:
    if dt not in SUPPORTED:
        hint = ""
        if dt.name in _ML_TABLE or str(dt) in _ML_TABLE:
            hint = f" ({dt.name} needs the ml_dtypes package)"
        elif not dt.isnative:
            hint = " (non-native byte order; use dtype.newbyteorder('='))"
        raise JitkernTypeError(
            f"jitkern arrays do not support dtype {dt}{hint}; supported: {SUPPORTED_NAMES}"
        )
    return dt


def ctype(dt: numpy.dtype) -> str:
    """The C++ type kernels use for ``dt``."""
    return SUPPORTED[dt][1]


def to_dlpack(dt: numpy.dtype) -> tuple[int, int]:
    """``(DLPack type code, bits)`` for ``dt``."""
    return SUPPORTED[dt][0], dt.itemsize * 8


def from_dlpack(code: int, bits: int, lanes: int = 1) -> numpy.dtype:
    """The NumPy dtype for a DLPack ``DLDataType``; TypeError if jitkern has none."""
    if lanes == 1:
        for dt, (c, _ctype) in SUPPORTED.items():
            if c == code and dt.itemsize * 8 == bits:
                return dt
    names = {
        DL_INT: "int",
        DL_UINT: "uint",
        DL_FLOAT: "float",
        DL_BFLOAT: "bfloat",
        DL_COMPLEX: "complex",
        DL_BOOL: "bool",
        DL_FLOAT8_E4M3FN: "float8_e4m3fn",
        DL_FLOAT8_E5M2: "float8_e5m2",
    }
    name = (
        f"{names.get(code, f'code {code}')}"
        + ("" if code in (DL_FLOAT8_E4M3FN, DL_FLOAT8_E5M2) and bits == 8 else str(bits))
        + (f"x{lanes}" if lanes != 1 else "")
    )
    ml = {(DL_BFLOAT, 16), (DL_FLOAT8_E4M3FN, 8), (DL_FLOAT8_E5M2, 8)}
    hint = f" (install ml_dtypes for {name})" if (code, bits) in ml else ""
    raise JitkernTypeError(f"DLPack dtype {name} is not supported by jitkern{hint}")


def from_typestr(typestr: str) -> numpy.dtype:
    """The dtype for a ``__cuda_array_interface__`` typestr such as ``'<f4'``."""
    try:
        dt = numpy.dtype(typestr)
    except TypeError:
        raise JitkernTypeError(
            f"__cuda_array_interface__ typestr {typestr!r} is not understood"
        ) from None
    return check_supported(dt)
