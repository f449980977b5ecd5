"""Parameter strings of ElementwiseKernel/ReductionKernel, and type placeholders.

A parameter string is CuPy's: comma-separated ``[raw] TYPE NAME`` items, ``TYPE``
either a NumPy dtype name (``float32``) or a one-letter type placeholder (``T``).
This module parses such strings into :class:`Param` records and resolves the
placeholders of a call from the argument types (outputs first, then inputs).
It knows nothing about devices or code generation.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import warnings

import numpy

from ... import dtypes as _dtypes
from ... import records as _records
from ...records import c_alignment  # noqa: F401 - the one C alignment rule (prelude reads it here)
from ...records import CPP_KEYWORDS
from ...handles import HANDLE_CTYPES, handle_ctype
from ...errors import JitkernTypeError, ParamError  # noqa: F401 (callers import ParamError here)

# NumPy dtype -> the C++ spelling used in generated kernels (complex from
# <jitkern/complex.cuh>, half from <cuda_fp16.h>; bfloat16 and the float8 types
# where ml_dtypes gives NumPy a dtype for them).
CTYPES: dict[numpy.dtype, str] = {dt: row.cxx for dt, row in _dtypes.ROW_OF.items()}
DTYPE_BY_NAME: dict[str, numpy.dtype] = {dt.name: dt for dt in CTYPES}

# Texture/surface objects bind a placeholder to a type of their own: a one-field record
# dtype per handle type, so it is distinct from every array dtype (uint64 included) and
# its C spelling is the handle's (``typedef cudaTextureObject_t U;``).
HANDLE_DTYPES: dict[str, numpy.dtype] = {
    ctype: numpy.dtype([(ctype, "<u8")]) for ctype in HANDLE_CTYPES.values()}
CTYPES.update({dt: ctype for ctype, dt in HANDLE_DTYPES.items()})
# ElementwiseKernel and ReductionKernel spell float16 elements as CuPy does: its float16
# class (cupy/float16.cuh: x.isnan(), T::from_bits, arithmetic in float), not __half.
CUPY_CTYPES: dict[numpy.dtype, str] = {numpy.dtype(numpy.float16): "float16"}
_HANDLE_OF_DTYPE = {dt: ctype for ctype, dt in HANDLE_DTYPES.items()}

# The type a scalar argument brings to a placeholder bound by scalars only.
PYTHON_SCALAR_DTYPES = _dtypes.PYTHON_SCALARS

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_PLACEHOLDER = re.compile(r"[A-Za-z]\Z")
#: Names a kernel's parameters may not take, per kernel kind: CuPy's ElementwiseKernel refuses
#: ``i`` (its loop index; ``n`` is free: CuPy's loop bound is ``_ind.size()``); its
#: ReductionKernel declares no plain name. Names starting with ``_`` are refused for both
#: (CuPy's documentation reserves them; every name jitkern's generated code declares has one).
RESERVED_NAMES = {"ElementwiseKernel": frozenset({"i"}), "ReductionKernel": frozenset()}


@dataclasses.dataclass(frozen=True)
class Param:
    """One parsed parameter: ``[raw] TYPE NAME``."""

    name: str
    type_name: str  # dtype name or placeholder letter, as written
    raw: bool
    is_output: bool
    dtype: numpy.dtype | None  # None for a placeholder

    @property
    def placeholder(self) -> str | None:
        return None if self.dtype is not None else self.type_name

    @property
    def spelling(self) -> str:
        return ("raw " if self.raw else "") + f"{self.type_name} {self.name}"

    # CuPy's ParameterInfo names: the C type (a placeholder letter stays a letter) and
    # whether the kernel sees the parameter as const (inputs).
    @property
    def ctype(self) -> str:
        return self.type_name if self.dtype is None else ctype_of(self.dtype)

    @property
    def is_const(self) -> bool:
        return not self.is_output


def _fail(what: str, text: str, index: int, column: int, item: str, why: str):
    raise ParamError(
        f"{what} {text!r}: parameter {index + 1} ({item.strip()!r}, column {column + 1}): {why}"
    )


def _split_items(text: str):
    """Yield (index, column, item) for each comma-separated item of ``text``."""
    column = 0
    for index, item in enumerate(text.split(",")):
        yield index, column + len(item) - len(item.lstrip()), item
        column += len(item) + 1


def parse_params(text: str, *, is_output: bool, what: str | None = None,
                 reserved: frozenset = RESERVED_NAMES["ElementwiseKernel"]) -> tuple[Param, ...]:
    """Parse a CuPy parameter string into :class:`Param` records.

    Raises :class:`ParamError` (a ``ValueError``) naming the string, the parameter's
    position and what is wrong.
    """
    what = what or ("out_params" if is_output else "in_params")
    if not isinstance(text, str):
        raise JitkernTypeError(
            f"{what}: expected a str such as 'float32 x, T y', got {type(text).__name__}"
        )
    if not text.strip():
        return ()
    params = []
    for index, column, item in _split_items(text):
        params.append(_parse_item(what, text, index, column, item, is_output, reserved))
    check_unique(params, what, text)
    return tuple(params)


def _parse_item(what, text, index, column, item, is_output, reserved) -> Param:
    tokens = item.split()
    if not tokens:
        _fail(what, text, index, column, item, "empty parameter; expected '[raw] TYPE NAME'")
    raw = False
    if len(tokens) == 3 and tokens[0] == "raw":
        raw, tokens = True, tokens[1:]
    elif len(tokens) == 3:
        why = f"unknown keyword {tokens[0]!r}; only 'raw' may precede the type"
        _fail(what, text, index, column, item, why)
    if len(tokens) != 2:
        _fail(what, text, index, column, item, "expected '[raw] TYPE NAME'")
    type_name, name = tokens
    dtype = _parse_type(what, text, index, column, item, type_name)
    _check_name(what, text, index, column, item, name, reserved)
    return Param(name=name, type_name=type_name, raw=raw, is_output=is_output, dtype=dtype)


def _parse_type(what, text, index, column, item, type_name) -> numpy.dtype | None:
    if _PLACEHOLDER.match(type_name):
        return None
    dtype = DTYPE_BY_NAME.get(type_name)
    if dtype is None:
        hint = _dtype_hint(type_name)
        _fail(
            what,
            text,
            index,
            column,
            item,
            f"unknown type {type_name!r}{hint}; expected a NumPy dtype name "
            f"({', '.join(DTYPE_BY_NAME)}) or a one-letter type placeholder",
        )
    return dtype


def _check_name(what, text, index, column, item, name, reserved) -> None:
    if not _IDENTIFIER.match(name) or name in CPP_KEYWORDS:
        _fail(what, text, index, column, item, f"{name!r} is not a C identifier")
    if name in reserved:
        _fail(what, text, index, column, item,
              f"{name!r} is reserved: it is the element's index in the operation")
    if name.startswith("_"):
        _fail(what, text, index, column, item,
              f"{name!r} is reserved: names starting with '_' are the kernel's own (_ind, ...)")


def check_unique(params, what: str, text: str) -> None:
    seen = set()
    for index, p in enumerate(params):
        if p.name in seen:
            raise ParamError(
                f"{what} {text!r}: parameter {index + 1} ({p.spelling!r}): the name "
                f"{p.name!r} is used twice"
            )
        seen.add(p.name)


def parse_signature(kind: str, name: str, in_params, out_params, kwargs: dict, *,
                    need_input: bool) -> tuple[tuple[Param, ...], tuple[Param, ...]]:
    """The start every string kernel's constructor shares: refuse unknown keywords, parse
    both parameter lists and check them against each other."""
    if kwargs:
        raise JitkernTypeError(f"{kind}: unexpected keyword argument(s) {', '.join(sorted(kwargs))}")
    reserved = RESERVED_NAMES[kind]
    ins = parse_params(in_params, is_output=False, reserved=reserved)
    outs = parse_params(out_params, is_output=True, reserved=reserved)
    if not outs or (need_input and not ins):
        needs = "at least one input and one output" if need_input else "at least one output"
        raise ParamError(f"{kind} {name!r}: in_params {in_params!r}, out_params {out_params!r}: "
                         f"the kernel needs {needs}")
    check_kernel_params(ins, outs, in_params, out_params)
    return ins, outs


def check_kernel_params(in_params, out_params, in_text: str, out_text: str) -> None:
    """Refuse a name used both as input and output, or equal to a placeholder letter."""
    in_names = {p.name for p in in_params}
    for index, p in enumerate(out_params):
        if p.name in in_names:
            raise ParamError(
                f"out_params {out_text!r}: parameter {index + 1} ({p.spelling!r}): {p.name!r} is "
                f"already an input in {in_text!r}; give the output its own name (to update an "
                "array in place, pass the same array as both the input and the output)"
            )
    letters = {p.placeholder for p in (*in_params, *out_params) if p.placeholder}
    for p in (*in_params, *out_params):
        if p.name in letters:
            raise ParamError(
                f"parameter {p.spelling!r}: the name {p.name!r} is also a type "
                "placeholder of this kernel"
            )


def _dtype_hint(type_name: str) -> str:
    """' (did you mean 'float32'?)' for a NumPy spelling of a supported dtype ('f4'), else ''.

    NumPy's own deprecation warnings (e.g. for the alias 'a') are not the user's concern
    here: the name is refused either way.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            dtype = numpy.dtype(type_name)
        except Exception:  # numpy.dtype raises TypeError, ValueError or SyntaxError
            return ""
    return f" (did you mean {dtype.name!r}?)" if dtype in CTYPES else ""


# ---------------------------------------------------------------------------
# Placeholder resolution.


class TypeResolutionError(JitkernTypeError):
    """Arguments whose types do not fit the parameters."""


def resolve_placeholders(
    in_params, out_params, in_types, out_types, scalar_flags, kernel: str
) -> dict[str, numpy.dtype]:
    """Bind every placeholder to a dtype.

    ``in_types``/``out_types``: the dtype of each argument (``out_types`` empty when
    no outputs were passed); ``scalar_flags[k]`` is True when input ``k`` is a scalar.
    Outputs bind first, then array inputs; a placeholder bound by scalars only takes
    the first such scalar's type. Fixed-type array parameters must match exactly.
    """
    bound: dict[str, numpy.dtype] = {}
    for p, dt in zip(out_params, out_types):
        _bind(bound, p, dt, kernel)
    for p, dt, scalar in zip(in_params, in_types, scalar_flags):
        if not scalar:
            _bind(bound, p, dt, kernel)
    for p, dt, scalar in zip(in_params, in_types, scalar_flags):
        if scalar and p.placeholder and p.placeholder not in bound:
            bound[p.placeholder] = dt
    _check_handle_params(in_params, in_types, bound, kernel)
    for p in (*in_params, *out_params):
        if p.placeholder and p.placeholder not in bound:
            raise TypeResolutionError(
                f"{kernel}: cannot decide the type placeholder {p.placeholder!r} (of "
                f"{'output' if p.is_output else 'input'} {p.name!r}): no argument binds it; pass "
                "the output array(s) explicitly"
            )
    return bound


def _check_handle_params(in_params, in_types, bound: dict, kernel: str) -> None:
    """A texture/surface object needs a placeholder of its own (CuPy's rule: its type is
    decided by the object, so no other argument may share the letter)."""
    for p, dt in zip(in_params, in_types):
        ctype = _HANDLE_OF_DTYPE.get(dt)
        if ctype is None:
            continue
        if p.placeholder is None:
            raise TypeResolutionError(
                f"{kernel}: input {p.name!r} is declared {p.type_name}, but a {ctype} object was "
                f"passed; declare it with a type placeholder of its own, e.g. 'U {p.name}'")
        if bound[p.placeholder] != dt:
            raise TypeResolutionError(
                f"{kernel}: type placeholder {p.placeholder!r} of input {p.name!r} (a {ctype} "
                f"object) is also {bound[p.placeholder].name} from another argument; give the "
                "texture/surface its own placeholder letter")


def _bind(bound: dict, p: Param, dt: numpy.dtype, kernel: str) -> None:
    if p.dtype is not None:
        if dt != p.dtype:
            raise TypeResolutionError(
                f"{kernel}: {'output' if p.is_output else 'input'} {p.name!r} is declared "
                f"{p.dtype.name}, but the array passed is {dt.name}; convert it first "
                f"(x.astype(numpy.{p.dtype.name})): arrays are never cast silently"
            )
        return
    prev = bound.get(p.placeholder)
    if prev is None:
        bound[p.placeholder] = dt
    elif prev != dt:
        raise TypeResolutionError(
            f"{kernel}: type placeholder {p.placeholder!r} is {prev.name} from an earlier "
            f"argument, but {'output' if p.is_output else 'input'} {p.name!r} is {dt.name}"
        )


def param_dtype(p: Param, bound: dict) -> numpy.dtype:
    return p.dtype if p.dtype is not None else bound[p.placeholder]


def ctype_of(dtype: numpy.dtype) -> str:
    """The C++ type of ``dtype``'s elements in a string kernel (CuPy's spelling)."""
    try:
        return CUPY_CTYPES.get(dtype) or CTYPES[dtype]
    except KeyError:
        pass
    if dtype.fields is not None:
        return record_ctype(dtype)
    raise TypeResolutionError(
        f"dtype {dtype} is not supported in kernels; supported: {', '.join(DTYPE_BY_NAME)} and "
        "structured dtypes of them"
    )


# ---------------------------------------------------------------------------
# Structured dtypes: a C struct per record dtype (fields by name, NumPy's offsets).


@dataclasses.dataclass(frozen=True)
class RecordField:
    name: str
    ctype: str  # the C type of one element
    count: int  # > 1 for a subarray field (``float v[3]``), else 1
    offset: int
    member: str = ""  # its name in the generated C++ (records.c_members: ``new`` -> ``new_``)


def record_fields(dtype: numpy.dtype) -> list[RecordField]:
    """The fields of a record dtype, checked to have C's layout (raises naming the field)."""
    fields = []
    members = _records.c_members(dtype.names)
    for name in dtype.names:
        field_dtype, offset = dtype.fields[name][:2]
        base = field_dtype.base
        if not _IDENTIFIER.match(name):
            raise TypeResolutionError(
                f"structured dtype {dtype}: field {name!r} is not a C identifier, so kernels "
                "cannot name it")
        align = c_alignment(base)
        if offset % align:
            raise TypeResolutionError(
                f"structured dtype {dtype}: field {name!r} is at offset {offset}, not "
                f"a multiple of its alignment {align} in C{_c_layout_advice(dtype)}")
        count = int(numpy.prod(field_dtype.shape, dtype=numpy.int64)) if field_dtype.shape else 1
        # the storage spelling (__half): JIT kernels share these structs
        fields.append(RecordField(name, CTYPES.get(base) or ctype_of(base), count, int(offset),
                                  members[name]))
    fields.sort(key=lambda f: f.offset)
    align = c_alignment(dtype)
    if dtype.itemsize % align:
        raise TypeResolutionError(
            f"structured dtype {dtype}: its size {dtype.itemsize} is not a multiple of its "
            f"alignment {align} in C{_c_layout_advice(dtype)}")
    return fields


def _c_layout_advice(dtype: numpy.dtype) -> str:
    """What gives ``dtype``'s fields C's layout: NumPy's ``align=True`` where that is C's,
    else the dtype with C's offsets (records.c_layout: a complex field, which NumPy aligns
    to its parts and C's complex<T> to its whole size)."""
    c = _records.c_layout(dtype)
    fields = [(name, dtype.fields[name][0]) for name in dtype.names]
    aligned = numpy.dtype(fields, align=True)
    if [aligned.fields[n][1] for n in dtype.names] == [c.fields[n][1] for n in dtype.names] \
            and aligned.itemsize == c.itemsize:
        return "; make the dtype with align=True (numpy.dtype([...], align=True))"
    return ("; NumPy's align=True aligns a complex field to its parts, C's complex<T> to its "
            f"whole size: give the fields C's offsets, numpy.dtype({c})")


def record_ctype(dtype: numpy.dtype) -> str:
    """The generated struct's name for a record dtype (its layout checked)."""
    record_fields(dtype)
    digest = hashlib.sha256(repr((dtype.descr, dtype.itemsize)).encode()).hexdigest()[:12]
    return f"_jk_record_{digest}"


def scalar_dtype(value) -> numpy.dtype:
    """The type a scalar brings to a placeholder bound by scalars only."""
    dt = PYTHON_SCALAR_DTYPES.get(type(value))
    if dt is not None:
        return dt
    ctype = handle_ctype(type(value))
    if ctype is not None:
        return HANDLE_DTYPES[ctype]
    if type(value) is numpy.void:  # a structured scalar: its own record dtype
        return value.dtype
    if _records.is_record_class(type(value)):  # a frozen dataclass / NamedTuple
        return _records.record_dtype(type(value))
    return numpy.dtype(type(value))


def _struct_scalar(value, dtype: numpy.dtype, name: str, kernel: str) -> numpy.void:
    """A frozen dataclass / NamedTuple for a record parameter: the ``numpy.void`` of its
    class's record dtype (one generated converter per class), which must be ``dtype``."""
    have = _records.record_dtype(type(value))
    if have is not dtype and have != dtype:  # the bound dtype is usually the class's own
        raise TypeResolutionError(
            f"{kernel}: {type(value).__qualname__} for {name!r} is laid out as {have}, but the "
            f"parameter is bound to the record {dtype}")
    try:
        return _records.as_void(value)
    except (TypeError, OverflowError) as exc:  # records.field_error: names the field
        what = name if name.startswith("argument ") else f"argument {name!r}"
        raise TypeResolutionError(f"{kernel}: {what}: {exc}") from None


def convert_scalar(value, dtype: numpy.dtype, name: str, kernel: str):
    """``value`` as a NumPy scalar of ``dtype`` (NumPy's conversion; out-of-range ints refused).

    A texture/surface object becomes its handle (``numpy.uint64``)."""
    handle = _HANDLE_OF_DTYPE.get(dtype)
    if handle is not None or handle_ctype(type(value)) is not None:
        return _handle_scalar(value, dtype, handle, name, kernel)
    if dtype.fields is not None:
        if type(value) is numpy.void and value.dtype == dtype:
            return value
        if _records.is_record_class(type(value)):
            return _struct_scalar(value, dtype, name, kernel)
        raise TypeResolutionError(
            f"{kernel}: scalar {value!r} for {name!r} is not a {dtype} record; pass a numpy.void "
            "of that dtype (numpy.zeros((), dtype)[()])")
    if dtype.kind in "iu" and isinstance(value, (int, numpy.integer)):
        info = numpy.iinfo(dtype)
        if not info.min <= int(value) <= info.max:
            raise TypeResolutionError(
                f"{kernel}: scalar {value!r} for {name!r} does not fit in {dtype.name} "
                f"({info.min}..{info.max})"
            )
    try:
        return dtype.type(value)
    except OverflowError:
        raise TypeResolutionError(
            f"{kernel}: scalar {value!r} for {name!r} does not fit in {dtype.name}"
        ) from None
    except (TypeError, ValueError) as exc:
        raise TypeResolutionError(
            f"{kernel}: scalar {value!r} for {name!r} cannot be converted to {dtype.name} ({exc})"
        ) from None


def _handle_scalar(value, dtype, ctype, name: str, kernel: str):
    if ctype is None or handle_ctype(type(value)) != ctype:
        expected = f"a {ctype} object" if ctype else f"a {dtype.name} scalar"
        raise TypeResolutionError(
            f"{kernel}: argument {name!r} takes {expected}, got {type(value).__module__}."
            f"{type(value).__qualname__} (texture and surface objects need a type placeholder "
            "of their own, e.g. 'U texObj')")
    return numpy.uint64(value.ptr)
