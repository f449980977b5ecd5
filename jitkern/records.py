"""Structs by value: a frozen dataclass or a ``typing.NamedTuple`` class as a NumPy record dtype.

A kernel argument that is an instance of such a class is passed as a C struct. Its layout is
the one of a NumPy structured dtype made with ``align=True`` from the class's field
annotations (each mapped through the one dtype table, :data:`.dtypes.ROWS`), so the JIT,
ElementwiseKernel (whose structs of record dtypes are generated from the same dtype) and
the launchers all agree on where every field sits. The dtype carries the class in its
metadata, so a ``numpy.void`` made from it still says which class it stands for.

This module is pure layout: no compiler, no runtime.
"""

from __future__ import annotations

import dataclasses
import typing
import warnings

import numpy

from .errors import JitkernOverflowError, JitkernTypeError
from .pyexpr import function_of
from . import dtypes

#: The metadata key naming the class a record dtype was made from.
CLASS_KEY = "jitkern_class"

_dtypes_of: dict = {}  # class -> its record dtype

#: C++'s keywords (C++20): no identifier the generated C++ declares may be one.
CPP_KEYWORDS = frozenset((
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break",
    "case", "catch", "char", "char16_t", "char32_t", "char8_t", "class", "compl", "concept",
    "const", "consteval", "constexpr", "constinit", "const_cast", "continue", "co_await",
    "co_return", "co_yield", "decltype", "default", "delete", "do", "double", "dynamic_cast",
    "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto",
    "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
    "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register",
    "reinterpret_cast", "requires", "return", "short", "signed", "sizeof", "static",
    "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local",
    "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using",
    "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
))  # fmt: skip


def is_record_class(cls: type) -> bool:
    """Whether instances of ``cls`` are passed to kernels as structs by value: a frozen
    dataclass or a ``typing.NamedTuple`` class (one with annotated fields)."""
    if cls in _dtypes_of:
        return True
    if hasattr(cls, "__cuda_array_interface__") or hasattr(cls, "__dlpack__"):
        return False  # a GPU array type that happens to be a dataclass: an array
    if dataclasses.is_dataclass(cls) and isinstance(cls, type):
        return True
    return issubclass(cls, tuple) and hasattr(cls, "_fields") and bool(
        getattr(cls, "__annotations__", None))


def c_members(names) -> dict:
    """Each field name's spelling as a member of the generated C++ struct: itself, or for a
    C++ keyword (``new``, ``int``, ``class``; fine as Python attributes) the name with an
    underscore added, and more while another field has that name (``new`` -> ``new_``)."""
    taken = set(names)
    out = {}
    for name in names:
        member = name
        if name in CPP_KEYWORDS:
            member = name + "_"
            while member in taken:
                member += "_"
            taken.add(member)
        out[name] = member
    return out


def attribute_path(cls: type, member_path: str) -> str:
    """The attribute path (``force.new``) of instances of struct class ``cls`` that a C++
    member path (``force.new_``, as :func:`c_members` spells it) names."""
    parts = []
    for segment in member_path.split("."):
        member, bracket, index = segment.partition("[")
        names = _field_names(cls) if cls is not None and is_record_class(cls) else []
        attr = {m: f for f, m in c_members(names).items()}.get(member, member)
        parts.append(attr + bracket + index)
        hint = typing.get_type_hints(cls).get(attr) if names else None
        cls = hint if isinstance(hint, type) else None
    return ".".join(parts)


def _field_names(cls: type) -> list:
    if dataclasses.is_dataclass(cls):
        return [f.name for f in dataclasses.fields(cls)]
    return list(getattr(cls, "_fields", ()))


def record_dtype(cls: type) -> numpy.dtype:
    """The aligned record dtype of a struct class (made once per class); a JitkernTypeError
    names the class and the field that cannot be a C struct member."""
    dt = _dtypes_of.get(cls)
    if dt is None:
        dt = _dtypes_of[cls] = _make_dtype(cls, ())
    return dt


def class_of(dtype: numpy.dtype):
    """The class a record dtype was made from (None for any other dtype)."""
    meta = dtype.metadata
    return meta.get(CLASS_KEY) if meta else None


def _make_dtype(cls: type, outer: tuple) -> numpy.dtype:
    name = cls.__qualname__
    if cls in outer:
        raise JitkernTypeError(f"struct {name} contains itself; a C struct cannot")
    if dataclasses.is_dataclass(cls):
        params = getattr(cls, "__dataclass_params__", None)
        if params is not None and not params.frozen:
            raise JitkernTypeError(
                f"dataclass {name} is passed to kernels by value, so it must be frozen: "
                "@dataclasses.dataclass(frozen=True)")
    names = _field_names(cls)
    try:
        hints = typing.get_type_hints(cls)
    except Exception as exc:  # a forward reference that does not resolve: say which class
        raise JitkernTypeError(f"struct {name}: its field annotations do not resolve ({exc})"
                               ) from None
    if not names:
        raise JitkernTypeError(f"struct {name} has no fields")
    fields = []
    for field in names:
        if field not in hints:
            raise JitkernTypeError(
                f"struct {name}: field {field!r} has no type annotation; annotate it "
                "(e.g. numpy.float32, float, int)")
        fields.append((field, _field_dtype(cls, field, hints[field], outer + (cls,))))
    return _c_layout(fields, cls)


def c_alignment(dtype: numpy.dtype) -> int:
    """The alignment of ``dtype`` as a C type in kernels: complex<T> is aligned to its size
    (NumPy says the part's), a record to its widest field."""
    dtype = dtype.base
    if dtype.fields is not None:
        return max((c_alignment(dt) for dt, *_ in dtype.fields.values()), default=1)
    return dtype.itemsize if dtype.kind == "c" else dtype.alignment


def c_layout(dtype: numpy.dtype) -> numpy.dtype:
    """Record ``dtype`` with its fields (nested records too) where a C compiler puts them."""
    fields = []
    for name in dtype.names:
        field = dtype.fields[name][0]
        base = c_layout(field.base) if field.base.fields is not None else field.base
        fields.append((name, numpy.dtype((base, field.shape)) if field.shape else base))
    return _c_layout(fields, class_of(dtype))


def _c_layout(fields, cls) -> numpy.dtype:
    """The record dtype with each field where a C compiler puts it (NumPy's ``align=True``
    aligns complex fields to their parts only)."""
    names, formats, offsets, pos, align = [], [], [], 0, 1
    for name, dt in fields:
        a = c_alignment(dt)
        pos = -(-pos // a) * a
        names.append(name)
        formats.append(dt)
        offsets.append(pos)
        pos += dt.itemsize
        align = max(align, a)
    return numpy.dtype(
        {"names": names, "formats": formats, "offsets": offsets,
         "itemsize": -(-pos // align) * align, "aligned": True},
        metadata={CLASS_KEY: cls})


def _field_dtype(cls: type, field: str, annotation, outer: tuple) -> numpy.dtype:
    if isinstance(annotation, type) and is_record_class(annotation):
        return _make_dtype(annotation, outer)
    dt = dtypes.PYTHON_SCALARS.get(annotation)
    if dt is None:
        try:
            dt = numpy.dtype(annotation)
        except TypeError:
            dt = None
    if dt is None or dt not in dtypes.ROW_OF:
        raise JitkernTypeError(
            f"struct {cls.__qualname__}: field {field!r} is annotated {annotation!r}, which is "
            f"no kernel type; use bool, int, float, complex, a NumPy scalar type "
            f"({dtypes.SUPPORTED_NAMES}) or another frozen dataclass / NamedTuple")
    return dt


def leaves(dtype: numpy.dtype, prefix: str = "") -> list[tuple[str, int, numpy.dtype]]:
    """``(attribute path, byte offset, dtype)`` of each scalar field of a record dtype, nested
    records flattened (``pos.x``), in offset order: what a launcher packs, and where."""
    out = []
    for name in dtype.names:
        field_dtype, offset = dtype.fields[name][:2]
        if field_dtype.fields is not None:
            out += [(p, offset + o, d) for p, o, d in leaves(field_dtype, f"{prefix}{name}.")]
        else:
            out.append((f"{prefix}{name}", offset, field_dtype))
    out.sort(key=lambda leaf: leaf[1])
    return out


def as_void(value) -> numpy.void:
    """A struct instance as a ``numpy.void`` of its record dtype (the simulator's argument,
    ElementwiseKernel's record scalars)."""
    cls = type(value)
    convert = _converters.get(cls)
    if convert is None:
        convert = _converters[cls] = void_converter(cls)
    return convert(value)


_converters: dict = {}  # class -> its generated converter


def void_converter(cls: type):
    """``convert(value) -> numpy.void`` for instances of struct class ``cls``: one generated
    expression reading every field (nested tuples for nested records), so a call loops over
    no fields in Python. Values convert as NumPy converts them, except that a str, bytes or
    None is no number (NumPy would parse ``"1.5"``); a value that does not convert is a
    :func:`field_error` naming the field."""
    dt = record_dtype(cls)
    flat = "".join(f"v.{path}, " for path, _, _ in leaves(dt))
    expr = f"_convert(v, {_tuple_expr('v', dt)}, ({flat}), _dt)"
    return function_of("v", expr, {"_convert": _convert, "_dt": dt})


_NOT_NUMBERS = (str, bytes, type(None))


def _convert(value, nested: tuple, flat: tuple, dtype: numpy.dtype) -> numpy.void:
    for leaf in flat:
        if isinstance(leaf, _NOT_NUMBERS):
            raise field_error(value)
    try:
        return numpy.array(nested, dtype)[()]
    except (TypeError, ValueError, OverflowError):
        raise field_error(value) from None


def field_error(value, strict: bool = False):
    """The error for the first field of struct instance ``value`` whose value does not
    convert to the field's type (a JitkernTypeError: not a number of its kind;
    JitkernOverflowError: out of its range), naming the class, the field, its type and the
    value; None when every field converts. ``strict``: as ``struct.pack`` does (a launch's
    packer), where a float does not go into an integer field and an integer never wraps."""
    cls = type(value)
    for path, _, dt in leaves(record_dtype(cls)):
        leaf = value
        for part in path.split("."):
            leaf = getattr(leaf, part)
        problem = _leaf_problem(leaf, dt, strict)
        if problem is not None:
            kind, takes = problem
            return kind(f"struct {cls.__qualname__}: field {path!r} ({dt}) takes {takes}, got "
                        f"{leaf!r} ({type(leaf).__name__})")
    return None


def _leaf_problem(leaf, dt: numpy.dtype, strict: bool):
    """(error class, what the field takes) when ``leaf`` does not convert to ``dt``."""
    integral = isinstance(leaf, (int, numpy.integer, numpy.bool_))
    if dt.kind in "iu":
        info = numpy.iinfo(dt)
        if integral and not info.min <= int(leaf) <= info.max and (strict or type(leaf) is int):
            return JitkernOverflowError, f"integers from {info.min} to {info.max}"
        if strict and not integral:
            return JitkernTypeError, "an int"
    if isinstance(leaf, _NOT_NUMBERS):
        return JitkernTypeError, "a number"
    try:
        numpy.array(leaf, dt)
    except OverflowError:
        return JitkernOverflowError, f"values in {dt}'s range"
    except (TypeError, ValueError):
        return JitkernTypeError, "a number"
    return None


def _tuple_expr(value: str, dtype: numpy.dtype) -> str:
    items = []
    for name in dtype.names:  # identifiers: annotated fields of a class
        field_dtype = dtype.fields[name][0]
        item = f"{value}.{name}"
        items.append(_tuple_expr(item, field_dtype) if field_dtype.fields is not None else item)
    return "(" + "".join(f"{i}, " for i in items) + ")"


def dtype_from_cai(cai: dict) -> numpy.dtype:
    """The dtype a ``__cuda_array_interface__`` dict describes: its ``typestr``, or, for a
    void typestr (``'|V16'``, an array of records), the record its ``descr`` lists (fields
    in order, ``('', '|V<n>')`` entries for padding, as ``numpy.dtype.descr`` writes it)."""
    typestr = cai["typestr"]
    if typestr[1:2] != "V":
        return dtypes.from_typestr(typestr)
    return record_from_descr(typestr, cai.get("descr"))


def record_from_descr(typestr: str, descr) -> numpy.dtype:
    """The record dtype of a CAI ``descr`` for the void ``typestr``; a JitkernTypeError says
    what in it jitkern cannot lay out as the C struct it describes."""
    try:
        size = int(typestr[2:])
    except ValueError:
        raise JitkernTypeError(f"__cuda_array_interface__ typestr {typestr!r} is not understood"
                               ) from None
    if not isinstance(descr, (list, tuple)) or not descr or all(
            _is_padding(entry) for entry in descr):
        raise JitkernTypeError(
            f"__cuda_array_interface__ typestr {typestr!r} (records of {size} bytes) needs a "
            f"'descr' listing the record's fields; got {descr!r}")
    for entry in descr:
        if not (isinstance(entry, (list, tuple)) and len(entry) in (2, 3)):
            raise JitkernTypeError(f"__cuda_array_interface__ descr entry {entry!r} is not "
                                   "(name, typestr) or (name, typestr, shape)")
        if entry[0] == "" and not _is_padding(entry):
            raise JitkernTypeError(
                f"__cuda_array_interface__ descr entry {tuple(entry)!r}: an unnamed entry is "
                "padding and must be '|V<n>'; name the field")
    try:
        dt = numpy.lib.format.descr_to_dtype([tuple(e) for e in descr])
    except (TypeError, ValueError, KeyError) as exc:
        raise JitkernTypeError(f"__cuda_array_interface__ descr {descr!r} is not a record "
                               f"dtype jitkern can lay out ({exc})") from None
    if dt.itemsize != size:
        raise JitkernTypeError(
            f"__cuda_array_interface__ descr {descr!r} lays out records of {dt.itemsize} bytes, "
            f"but the typestr {typestr!r} says {size}")
    return dt


def _is_padding(entry) -> bool:
    return (isinstance(entry, (list, tuple)) and len(entry) == 2 and entry[0] == ""
            and isinstance(entry[1], str) and entry[1][1:2] == "V")


def record_to_json(dtype: numpy.dtype) -> list:
    """A record dtype as JSON (an export manifest): its ``descr``, padding entries included
    (the class the metadata names is recorded beside it, so NumPy's warning is moot)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return numpy.lib.format.dtype_to_descr(dtype)


def record_from_json(descr: list) -> numpy.dtype:
    """The record dtype :func:`record_to_json` wrote (JSON turned its tuples into lists)."""
    return numpy.lib.format.descr_to_dtype([_descr_entry(e) for e in descr])


def _descr_entry(entry) -> tuple:
    name, form, *shape = entry
    if isinstance(form, list):
        form = [_descr_entry(e) for e in form]
    return (name, form, *(tuple(s) for s in shape))
