"""The element types jitkern arrays hold, and how each is spelled elsewhere.

One table row per supported type: its NumPy dtype, its DLPack ``(code, bits)``
and its C++ spelling in kernels. ``bfloat16`` joins the table when ``ml_dtypes``
is installed.
"""

from __future__ import annotations

import numpy

from ..errors import JitkernTypeError

# DLPack type codes (dlpack.h, DLDataTypeCode).
DL_INT, DL_UINT, DL_FLOAT, DL_BFLOAT, DL_COMPLEX, DL_BOOL = 0, 1, 2, 4, 5, 6

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


def _bfloat16():
    try:
        import ml_dtypes
    except ImportError:
        return None
    return numpy.dtype(ml_dtypes.bfloat16)


BFLOAT16 = _bfloat16()

SUPPORTED: dict[numpy.dtype, tuple[int, str]] = {numpy.dtype(n): v for n, v in _TABLE.items()}
if BFLOAT16 is not None:
    SUPPORTED[BFLOAT16] = (DL_BFLOAT, "__nv_bfloat16")

SUPPORTED_NAMES = ", ".join(str(d) for d in SUPPORTED)

# dtype argument as given (numpy.float32, "f4", numpy.dtype(...), float) -> numpy.dtype
_cache: dict = {None: numpy.dtype(numpy.float64), float: numpy.dtype(numpy.float64),
                int: numpy.dtype(numpy.int64), bool: numpy.dtype(numpy.bool_),
                complex: numpy.dtype(numpy.complex128)}
for _dt in SUPPORTED:
    _cache[_dt] = _cache[_dt.type] = _cache[_dt.name] = _cache[_dt.str] = _dt


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
        if dt.name == "bfloat16" or str(dt) == "bfloat16":
            hint = " (bfloat16 needs the ml_dtypes package)"
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
    names = {DL_INT: "int", DL_UINT: "uint", DL_FLOAT: "float", DL_BFLOAT: "bfloat",
             DL_COMPLEX: "complex", DL_BOOL: "bool"}
    name = f"{names.get(code, f'code {code}')}{bits}" + (f"x{lanes}" if lanes != 1 else "")
    hint = " (install ml_dtypes for bfloat16)" if code == DL_BFLOAT and bits == 16 else ""
    raise JitkernTypeError(f"DLPack dtype {name} is not supported by jitkern{hint}")


def from_typestr(typestr: str) -> numpy.dtype:
    """The dtype for a ``__cuda_array_interface__`` typestr such as ``'<f4'``."""
    try:
        dt = numpy.dtype(typestr)
    except TypeError:
        raise JitkernTypeError(f"__cuda_array_interface__ typestr {typestr!r} is not understood") from None
    return check_supported(dt)
