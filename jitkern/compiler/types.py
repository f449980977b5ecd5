"""The types of JIT values: frozen, hashable, interned, and spelled in C++.

Types know their C++ spelling and nothing about emission. Every constructor
goes through an interning table, so ``scalar('float32') is scalar('float32')``.
"""

from __future__ import annotations

import dataclasses

import numpy

from .. import dtypes as _dtypes
from ..errors import JitkernTypeError

_interned: dict = {}


def _intern(obj):
    return _interned.setdefault(obj, obj)


class Type:
    """Base of every JIT type. ``ctype`` is the C++ spelling."""

    ctype: str = "void"

    def __str__(self) -> str:
        return self.describe()

    def describe(self) -> str:
        return self.ctype


@dataclasses.dataclass(frozen=True)
class Scalar(Type):
    """A NumPy scalar type: ``name`` is the NumPy dtype name."""

    name: str

    @property
    def ctype(self) -> str:
        return _SCALAR_CTYPES[self.name]

    @property
    def kind(self) -> str:
        """'b' bool, 'i' signed, 'u' unsigned, 'f' float, 'c' complex."""
        return _SCALAR_KINDS[self.name]

    @property
    def itemsize(self) -> int:
        return _SCALAR_SIZES[self.name]

    @property
    def dtype(self):
        if self.name in ML_DTYPE_NAMES:
            return ml_dtype(self.name) or self.name
        return numpy.dtype(self.name)

    @property
    def is_integer(self) -> bool:
        return self.kind in "iu"

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_complex(self) -> bool:
        return self.kind == "c"

    @property
    def is_half(self) -> bool:
        """float16, bfloat16 and the float8 types: stored narrow, computed in float32."""
        return self.name in _NARROW_FLOATS

    @property
    def is_float8(self) -> bool:
        return self.name in FLOAT8_NAMES

    def describe(self) -> str:
        return self.name


@dataclasses.dataclass(frozen=True)
class Array(Type):
    """A kernel-argument array.

    ``contiguous`` 1-D arrays are a bare pointer in C++; every other array is a
    ``jk::Array<T, N, I>`` view with byte strides, where ``I`` is ``int`` when
    every byte offset fits in 31 bits (``index32``) and ``long long`` otherwise.
    """

    dtype: Scalar
    ndim: int
    contiguous: bool
    index32: bool

    @property
    def is_pointer_like(self) -> bool:
        return self.ndim == 1 and self.contiguous

    @property
    def index_ctype(self) -> str:
        return "int" if self.index32 else "long long"

    @property
    def ctype(self) -> str:
        if self.is_pointer_like or self.ndim == 0:  # a 0-d array is a pointer to its element
            return f"{self.dtype.ctype}*"
        return f"jk::Array<{self.dtype.ctype}, {self.ndim}, {self.index_ctype}>"

    def describe(self) -> str:
        layout = "C" if self.contiguous else "strided"
        return f"array({self.dtype.name}, {self.ndim}d, {layout})"


@dataclasses.dataclass(frozen=True)
class Pointer(Type):
    """A pointer (shared memory, ``&x[i]``); ``space`` is '' or 'shared'."""

    elem: Type
    space: str = ""

    @property
    def ctype(self) -> str:
        return f"{self.elem.ctype}*"

    def describe(self) -> str:
        where = f"{self.space} " if self.space else ""
        return f"{where}pointer to {self.elem.describe()}"


@dataclasses.dataclass(frozen=True)
class FancyIterator(Type):
    """A Thrust iterator over values it computes (``jit.thrust.make_counting_iterator``):
    ``kind`` is 'counting' (start, start + 1, ...) or 'constant' (one value); read-only."""

    kind: str
    elem: Scalar

    @property
    def ctype(self) -> str:
        return f"thrust::{self.kind}_iterator<{self.elem.ctype}>"

    def describe(self) -> str:
        return f"{self.kind} iterator of {self.elem.describe()}"


@dataclasses.dataclass(frozen=True)
class StridedIterator(Type):
    """An iterator over a 1-D view with any byte stride (``x[i].begin()`` of an N-d array):
    ``jk::Strided<T>`` (``<jitkern/strided.cuh>``), readable and writable."""

    elem: Scalar

    @property
    def ctype(self) -> str:
        return f"jk::Strided<{self.elem.ctype}>"

    def describe(self) -> str:
        return f"strided iterator of {self.elem.describe()}"


@dataclasses.dataclass(frozen=True)
class Tuple(Type):
    """A tuple of values: a ``jk::Tuple<...>`` in C++ (head/tail pairs)."""

    items: tuple

    @property
    def ctype(self) -> str:
        return "jk::Tuple<" + ", ".join(t.ctype for t in self.items) + ">"

    def describe(self) -> str:
        return "tuple(" + ", ".join(t.describe() for t in self.items) + ")"


@dataclasses.dataclass(frozen=True)
class Opaque(Type):
    """A C++ object the JIT only passes around and calls methods on.

    ``family`` selects the method table (e.g. 'thread_block', 'tile', 'grid');
    ``default_constructible`` decides whether a variable may be hoisted.
    """

    family: str
    cname: str
    default_constructible: bool = False
    params: tuple = ()  # e.g. the value type of a cub::WarpReduce<T>

    @property
    def ctype(self) -> str:
        return self.cname

    def describe(self) -> str:
        return self.family


@dataclasses.dataclass(frozen=True)
class Struct(Type):
    """A C struct passed by value or held in an array: a frozen dataclass, a
    ``typing.NamedTuple`` or a NumPy record dtype (``compiler.structs`` makes them).

    ``name`` is what messages call it (the class's name, or ``record``); ``origin`` the
    class's ``module.qualname`` ('' for a plain dtype), so two classes with the same fields
    are two types; ``cname`` the generated C struct (one per layout, from the record dtype);
    ``fields`` ``((name, Type), ...)`` in declaration order; ``renamed`` the fields whose
    C++ member is spelled otherwise (a C++ keyword: ``new`` is ``new_``).
    """

    name: str
    origin: str
    cname: str
    fields: tuple
    dtype: object  # the aligned numpy record dtype: the layout
    itemsize: int
    renamed: tuple = ()  # ((field, C++ member), ...) of the fields spelled otherwise in C++

    @property
    def ctype(self) -> str:
        return self.cname

    def member(self, name: str) -> str:
        """Field ``name``'s spelling in C++."""
        for field, member in self.renamed:
            if field == name:
                return member
        return name

    def field(self, name: str):
        """The type of field ``name``, or None."""
        for field, t in self.fields:
            if field == name:
                return t
        return None

    def describe(self) -> str:
        return f"struct {self.name}"


@dataclasses.dataclass(frozen=True)
class Void(Type):
    @property
    def ctype(self) -> str:
        return "void"

    def describe(self) -> str:
        return "None"


# spelling, kind and size per scalar name: columns of the one dtype table
_SCALAR_CTYPES = {row.name: row.cxx for row in _dtypes.ROWS}
_SCALAR_KINDS = {row.name: row.kind for row in _dtypes.ROWS}
_SCALAR_SIZES = {row.name: row.itemsize for row in _dtypes.ROWS}

SCALAR_NAMES = tuple(_SCALAR_CTYPES)
FLOAT8_NAMES = _dtypes.FLOAT8_NAMES
_NARROW_FLOATS = ("float16", "bfloat16", *FLOAT8_NAMES)
#: Types NumPy has only through ml_dtypes.
ML_DTYPE_NAMES = ("bfloat16", *FLOAT8_NAMES)
#: The scalar types NumPy itself has (bfloat16 and the float8 types come from ml_dtypes).
NUMPY_SCALAR_NAMES = tuple(n for n in _SCALAR_CTYPES if n not in ML_DTYPE_NAMES)


def scalar(name: str) -> Scalar:
    if name not in _SCALAR_CTYPES:
        raise KeyError(name)
    return _intern(Scalar(name))


def array(dtype: Scalar, ndim: int, contiguous: bool, index32: bool) -> Array:
    if ndim == 1 and contiguous:
        index32 = False  # a bare pointer: the index keeps its own type
    return _intern(Array(dtype, ndim, contiguous, index32))


def pointer(elem: Type, space: str = "") -> Pointer:
    return _intern(Pointer(elem, space))


def fancy_iterator(kind: str, elem: Scalar) -> FancyIterator:
    if kind not in ("counting", "constant"):
        raise KeyError(kind)
    return _intern(FancyIterator(kind, elem))


def strided_iterator(elem: Scalar) -> StridedIterator:
    return _intern(StridedIterator(elem))


def struct(name: str, origin: str, cname: str, fields, dtype, itemsize: int,
           renamed=()) -> Struct:
    return _intern(Struct(name, origin, cname, tuple(fields), dtype, itemsize, tuple(renamed)))


def tuple_of(items) -> Tuple:
    return _intern(Tuple(tuple(items)))


def opaque(
    family: str, cname: str, default_constructible: bool = False, params: tuple = ()
) -> Opaque:
    return _intern(Opaque(family, cname, default_constructible, tuple(params)))


bool_ = scalar("bool")
int8 = scalar("int8")
int16 = scalar("int16")
int32 = scalar("int32")
int64 = scalar("int64")
uint8 = scalar("uint8")
uint16 = scalar("uint16")
uint32 = scalar("uint32")
uint64 = scalar("uint64")
float16 = scalar("float16")
bfloat16 = scalar("bfloat16")
float8_e4m3fn = scalar("float8_e4m3fn")
float8_e5m2 = scalar("float8_e5m2")
float32 = scalar("float32")
float64 = scalar("float64")
complex64 = scalar("complex64")
complex128 = scalar("complex128")
void = _intern(Void())

dim3 = opaque("dim3", "dim3", default_constructible=True)

#: A Python scalar argument's type, from the one table (``bool`` first: it is an ``int``).
PYTHON_SCALARS = {cls: scalar(dt.name) for cls, dt in _dtypes.PYTHON_SCALARS.items()}


def ml_dtype(name: str):
    """NumPy's dtype for bfloat16 or a float8 type from ml_dtypes, when installed."""
    return _dtypes.ML_DTYPES.get(name)


def bfloat16_dtype():
    """NumPy's bfloat16 dtype from ml_dtypes, when installed."""
    return ml_dtype("bfloat16")


def scalar_from_dtype(dtype) -> Scalar:
    """The Scalar of a NumPy dtype (or dtype-like: type, name, 'bfloat16', 'float8_e5m2')."""
    if isinstance(dtype, Scalar):
        return dtype
    if isinstance(dtype, str) and dtype in ML_DTYPE_NAMES:
        return scalar(dtype)
    dt = numpy.dtype(dtype)
    if dt.name in ML_DTYPE_NAMES:
        return scalar(dt.name)
    if dt.name not in _SCALAR_CTYPES:
        raise JitkernTypeError(f"dtype {dt} is not supported in JIT kernels")
    return scalar(dt.name)


def complex_part(t: Scalar) -> Scalar:
    """float32 for complex64, float64 for complex128, t itself otherwise."""
    return {"complex64": float32, "complex128": float64}.get(t.name, t)


def complex_of(t: Scalar) -> Scalar:
    """The complex type holding ``t``: complex64 for float32 and narrower floats."""
    if t.is_complex:
        return t
    if t.is_float and t.itemsize <= 4:
        return complex64
    return complex128
