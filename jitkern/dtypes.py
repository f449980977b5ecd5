"""The element types jitkern arrays hold, and how each is spelled elsewhere.

One table row per supported type: its NumPy dtype, its DLPack ``(code, bits)``
and its C++ spelling in kernels. ``bfloat16``, ``float8_e4m3fn`` and ``float8_e5m2``
join the table when ``ml_dtypes`` is installed (NumPy has them only through it).
"""

from __future__ import annotations

import dataclasses

import numpy

from .errors import JitkernTypeError

# DLPack type codes (dlpack.h, DLDataTypeCode; the float8 ones since DLPack 1.1).
DL_INT, DL_UINT, DL_FLOAT, DL_BFLOAT, DL_COMPLEX, DL_BOOL = 0, 1, 2, 4, 5, 6
DL_FLOAT8_E4M3FN, DL_FLOAT8_E5M2 = 10, 12


@dataclasses.dataclass(frozen=True)
class Row:
    """One element type and each way jitkern spells it.

    ``cxx`` is the C++ type in kernels (JIT, ElementwiseKernel/ReductionKernel, fuse,
    exports); ``storage`` is the type the array copy/fill kernels move (they declare their
    own ``jk_complex64``/``jk_complex128`` structs instead of including complex.cuh, so
    complex is the one row where the two differ).
    """

    name: str
    dlpack: int
    kind: str  # 'b' bool, 'i' signed, 'u' unsigned, 'f' float, 'c' complex
    itemsize: int
    cxx: str
    storage: str = ""
    ml: bool = False  # NumPy has it only through ml_dtypes

    def __post_init__(self):
        if not self.storage:
            object.__setattr__(self, "storage", self.cxx)


# fmt: off
ROWS: tuple[Row, ...] = (
    Row("bool",          DL_BOOL,          "b", 1,  "bool"),
    Row("int8",          DL_INT,           "i", 1,  "signed char"),
    Row("int16",         DL_INT,           "i", 2,  "short"),
    Row("int32",         DL_INT,           "i", 4,  "int"),
    Row("int64",         DL_INT,           "i", 8,  "long long"),
    Row("uint8",         DL_UINT,          "u", 1,  "unsigned char"),
    Row("uint16",        DL_UINT,          "u", 2,  "unsigned short"),
    Row("uint32",        DL_UINT,          "u", 4,  "unsigned int"),
    Row("uint64",        DL_UINT,          "u", 8,  "unsigned long long"),
    Row("float16",       DL_FLOAT,         "f", 2,  "__half"),
    Row("bfloat16",      DL_BFLOAT,        "f", 2,  "__nv_bfloat16", ml=True),
    Row("float8_e4m3fn", DL_FLOAT8_E4M3FN, "f", 1,  "__nv_fp8_e4m3", ml=True),
    Row("float8_e5m2",   DL_FLOAT8_E5M2,   "f", 1,  "__nv_fp8_e5m2", ml=True),
    Row("float32",       DL_FLOAT,         "f", 4,  "float"),
    Row("float64",       DL_FLOAT,         "f", 8,  "double"),
    Row("complex64",     DL_COMPLEX,       "c", 8,  "complex<float>", "jk_complex64"),
    Row("complex128",    DL_COMPLEX,       "c", 16, "complex<double>", "jk_complex128"),
)
# fmt: on
BY_NAME: dict[str, Row] = {row.name: row for row in ROWS}

#: A Python scalar argument's dtype (bool before int: ``bool`` is an ``int``).
PYTHON_SCALARS: dict[type, numpy.dtype] = {
    bool: numpy.dtype(numpy.bool_),
    int: numpy.dtype(numpy.int64),
    float: numpy.dtype(numpy.float64),
    complex: numpy.dtype(numpy.complex128),
}

#: Same-type copies and fills move bits: one unsigned C type per item size (16 bytes:
#: the copy kernels' own two-word struct).
BITS_CTYPES: dict[int, str] = {
    1: BY_NAME["uint8"].cxx,
    2: BY_NAME["uint16"].cxx,
    4: BY_NAME["uint32"].cxx,
    8: BY_NAME["uint64"].cxx,
    16: "jk_bytes16",
}


def _ml_dtype(name: str):
    """NumPy's dtype for ``name`` from ml_dtypes, or None where it is not installed."""
    try:
        import ml_dtypes  # optional dependency
    except ImportError:
        return None
    return numpy.dtype(getattr(ml_dtypes, name))


FLOAT8_NAMES = ("float8_e4m3fn", "float8_e5m2")
ML_DTYPES = {row.name: _ml_dtype(row.name) for row in ROWS if row.ml}
BFLOAT16 = ML_DTYPES["bfloat16"]
FLOAT8_E4M3FN = ML_DTYPES["float8_e4m3fn"]
FLOAT8_E5M2 = ML_DTYPES["float8_e5m2"]

# the NumPy types first, then those ml_dtypes brings (the order error messages list them in)
ROW_OF: dict[numpy.dtype, Row] = {numpy.dtype(r.name): r for r in ROWS if not r.ml}
ROW_OF.update({ML_DTYPES[r.name]: r for r in ROWS if r.ml and ML_DTYPES[r.name] is not None})
SUPPORTED: dict[numpy.dtype, tuple[int, str]] = {
    dt: (row.dlpack, row.storage) for dt, row in ROW_OF.items()}

SUPPORTED_NAMES = ", ".join(str(d) for d in SUPPORTED)

# dtype argument as given (numpy.float32, "f4", numpy.dtype(...), float) -> numpy.dtype
_cache: dict = {None: numpy.dtype(numpy.float64), **PYTHON_SCALARS}
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


def is_record(dt: numpy.dtype) -> bool:
    """A structured dtype of supported types (an array of structs: its elements are bytes
    to copies, structs to kernels; records, docs/jit.md)."""
    if dt.fields is None or not dt.names or not dt.isnative:
        return False
    return all(is_record(f.base) or f.base in SUPPORTED for f, *_ in dt.fields.values())


def check_supported(dt: numpy.dtype) -> numpy.dtype:
    if dt not in SUPPORTED and not is_record(dt):
        hint = ""
        if dt.name in ML_DTYPES or str(dt) in ML_DTYPES:
            hint = f" ({dt.name} needs the ml_dtypes package)"
        elif not dt.isnative:
            hint = " (non-native byte order; use dtype.newbyteorder('='))"
        raise JitkernTypeError(
            f"jitkern arrays do not support dtype {dt}{hint}; supported: {SUPPORTED_NAMES}"
        )
    return dt


def ctype(dt: numpy.dtype) -> str:
    """The C++ type the array copy/fill kernels use for ``dt`` (:attr:`Row.storage`)."""
    return ROW_OF[dt].storage


def cxx(dt: numpy.dtype) -> str:
    """The C++ type kernels use for ``dt`` (:attr:`Row.cxx`)."""
    return ROW_OF[dt].cxx


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
