"""A raw kernel's launch checked against its C signature, once per argument signature.

:func:`~.launch.build_plan` asks here, on the miss path only (the first launch of each
argument signature), for each argument given to a parameter whose C type the source
says (``compiler/strings/c_params``: objects with ``name``, ``ctype``, ``pointer``,
``dtype``, ``any_pointee``, ``struct``, ``elem_size``):

- a scalar: the kind (bool, integer, float, complex) and width of a NumPy scalar must be
  the parameter's (signed and unsigned integers of one width are interchangeable; a NumPy
  integer of another width converts to an integer parameter, range-checked like an int); a
  Python ``int`` converts to any integer or floating parameter, range-checked on each call
  by an inline comparison (:class:`~jitkern.JitkernOverflowError` when it does not fit); a
  Python ``float`` converts to a floating parameter only;
- a pointer: the array's dtype must be the element type (``void*``, ``char*`` and
  ``unsigned char*`` take any array; a struct or vector element, an array of records laid
  out as the struct the source defines, field by field, else any array of its size);
- a struct by value: a size-1 structured NumPy array or a ``numpy.void`` is copied as its
  bytes, a frozen dataclass or ``typing.NamedTuple`` field by field into the struct's C
  layout; the size must be the parameter's (the CUBIN's), and where the source defines
  the struct, each field's offset and type.

The result is a slot description ``(codes, size, align, expr, env)`` for
:class:`~.launch.Slot`, and :func:`guards`, the conditions a generated launcher checks on
each call to stay on the signature that was checked (one ``dtype`` read per checked array).
"""

from __future__ import annotations

import struct as _struct

import numpy

from .. import records
from ..records import c_alignment
from ..errors import JitkernOverflowError, KernelArgumentError
from ..pyexpr import function_of
from .args import array_read, dtype_of, dtype_read, kind_of
from .recordbytes import STRUCT_CODES, VOID_EXPR, void_slot_env

_PY_KINDS = {bool: "b", int: "i", float: "f", complex: "c"}
_KIND_NAMES = {"b": "bool", "i": "integer", "u": "integer", "f": "floating-point",
               "c": "complex", "V": "record"}


def typed(param) -> bool:
    """Whether ``param`` says what its C type is (not just pointer or not)."""
    return param is not None and hasattr(param, "any_pointee")


def _param_dtype(param):
    try:
        return numpy.dtype(param.dtype) if param.dtype is not None else None
    except TypeError:  # bfloat16/float8 without ml_dtypes: not checked
        return None


def _fail(index: int, param, wanted: str, got: str, hint: str = "") -> KernelArgumentError:
    name = f" ({param.name})" if param is not None else ""
    return KernelArgumentError(f"argument {index}{name}: the kernel expects {wanted}, got "
                               f"{got}" + (f"; {hint}" if hint else ""))


def _describe(arg) -> str:
    cls = type(arg)
    if isinstance(arg, numpy.generic):
        return f"numpy.{cls.__name__}" + (f" of dtype {arg.dtype}" if cls is numpy.void else "")
    if cls in _PY_KINDS:
        return f"Python {cls.__name__} {arg!r}"
    if isinstance(arg, numpy.ndarray):
        return f"a numpy.ndarray of {arg.dtype}, shape {arg.shape}"
    return f"{cls.__module__}.{cls.__qualname__}"


def _describe_array(arg, have: numpy.dtype) -> str:
    """An array argument, its dtype named once (a NumPy array's description has it)."""
    return _describe(arg) if isinstance(arg, numpy.ndarray) else f"{_describe(arg)} of {have}"


# ---------------------------------------------------------------------------
# Scalars and structs by value


def value_slot(arg, index: int, param, size: int | None, kernel: str = "the kernel"):
    """The slot ``(codes, size, align, expr, env)`` of ``arg`` passed by value to ``param``
    (checked), or None where the general rules apply (arrays, handles, unknown types)."""
    cls = type(arg)
    if param is not None and param.pointer:
        return None
    if cls is numpy.void or (cls is numpy.ndarray and arg.dtype.fields is not None
                             and arg.size == 1):
        return _record_slot(arg, index, param, size)
    if kind_of(cls) == "struct" and typed(param):
        return _fields_slot(arg, index, param, size)
    if not typed(param) or param.dtype is None:
        return None
    want = _param_dtype(param)
    if want is None:
        return None
    if cls in _PY_KINDS:
        return _python_scalar(arg, index, param, want, kernel)
    if isinstance(arg, numpy.generic):
        return _numpy_scalar(arg, index, param, want, kernel)
    return None


_PY_ACCEPTS = {"b": "biu", "i": "iufc", "f": "fc", "c": "c"}  # Python kind -> C kinds
_HINTS = {"i": "pass an int (int(x)): a float is not converted to an integer parameter",
          "u": "pass an int (int(x)): a float is not converted to an integer parameter",
          "f": "pass a float", "b": "pass True or False", "c": "pass a complex"}


def _python_scalar(arg, index: int, param, want: numpy.dtype, kernel: str):
    narrow = want.char not in STRUCT_CODES  # ml_dtypes' bfloat16 and float8 (kind 'V')
    kind, have = "f" if narrow else want.kind, _PY_KINDS[type(arg)]
    if kind not in _PY_ACCEPTS[have] or (narrow and have == "c"):
        raise _fail(index, param, f"{param.ctype} ({want})", _describe(arg), _HINTS.get(kind, ""))
    if narrow:  # struct has no code for them: NumPy rounds, as for any float parameter
        return (f"{want.itemsize}s", want.itemsize, want.itemsize, "{cv}({a})",
                {"cv": lambda value, _dt=want: numpy.array(value, _dt).tobytes()})
    if kind in "iu":
        expr, env = _range_checked(index, param, want, kernel)
    elif kind == "c":
        expr, env = "{a}.real, {a}.imag", {}
    else:
        expr, env = "{a}", {}
    return STRUCT_CODES[want.char], want.itemsize, want.itemsize, expr, env


def _range_checked(index: int, param, want: numpy.dtype, kernel: str):
    """An inline ``lo <= a <= hi`` check: cheaper than a call, and only a value out of
    range calls the function that raises."""
    info = numpy.iinfo(want)

    def out_of_range(value, _lo=int(info.min), _hi=int(info.max)):
        raise JitkernOverflowError(
            f"{kernel}: argument {index} ({param.name}): {value} does not fit the kernel's "
            f"{param.ctype} ({want}: {_lo} to {_hi})")

    return (f"({{a}} if {int(info.min)} <= {{a}} <= {int(info.max)} else {{ovf}}({{a}}))",
            {"ovf": out_of_range})


def _numpy_scalar(arg, index: int, param, want: numpy.dtype, kernel: str):
    have = arg.dtype
    if have.kind in "iu" and want.kind in "iu" and have.itemsize != want.itemsize:
        # CuPy packs a NumPy integer as its own bytes, so real library code passes an int64
        # (numpy.ravel_multi_index's) to an int parameter: converted, range-checked as a
        # Python int is (CuPy would read the low bytes, or past them for a narrower one)
        expr, env = _range_checked(index, param, want, kernel)
        return STRUCT_CODES[want.char], want.itemsize, want.itemsize, expr, env
    same_kind = have.kind == want.kind or {have.kind, want.kind} == {"i", "u"}
    if not same_kind or have.itemsize != want.itemsize:
        raise _fail(index, param, f"{param.ctype} ({want})", _describe(arg),
                    f"pass numpy.{want.name}(x)" + (" or a Python int" if want.kind in "iu"
                                                    else ""))
    return None  # NumPy's own slot for its type


def _record_slot(arg, index: int, param, size: int | None):
    """A structured NumPy scalar or size-1 array: its bytes, exactly the parameter's size."""
    dt = arg.dtype
    struct = getattr(param, "struct", None)
    want = size if size is not None else (struct.size if struct is not None else None)
    if struct is not None:
        problem = layout_mismatch(dt, struct)
        if problem is not None:
            raise _fail(index, param, f"struct {param.ctype} ({struct.size} bytes)",
                        f"{_describe(arg)} whose {problem}",
                        "build the dtype with the struct's fields in order "
                        "(numpy.dtype(..., align=True) pads as C does)")
    if want is not None and dt.itemsize != want:
        what = f"{param.ctype} ({want} bytes" if param is not None else f"{want} bytes (the CUBIN"
        raise _fail(index, param, what + ", from the CUBIN)" if param is not None else what + ")",
                    f"{_describe(arg)}, {dt.itemsize} bytes",
                    "a struct is copied by value with exactly the parameter's size")
    align = struct.align if struct is not None else c_alignment(dt)
    if type(arg) is numpy.void:  # a view of the record it is given again (recordbytes)
        return f"{dt.itemsize}s", dt.itemsize, align, VOID_EXPR, void_slot_env(dt)
    return f"{dt.itemsize}s", dt.itemsize, align, "{a}.tobytes()", {}  # ndarray: 0.04 us


def _c_leaves(struct, base: int = 0, prefix: str = ""):
    """(path, offset, dtype) of every scalar of a C struct (arrays element by element)."""
    for f in struct.fields:
        path = prefix + f.name
        if f.struct is not None:
            for i in range(f.count):
                item = f"{path}[{i}]." if f.count > 1 else path + "."
                yield from _c_leaves(f.struct, base + f.offset + i * f.struct.size, item)
            continue
        dt = numpy.dtype(f.dtype) if f.dtype is not None else None
        step = f.size // f.count
        for i in range(f.count):
            yield (f"{path}[{i}]" if f.count > 1 else path), base + f.offset + i * step, dt, \
                f.ctype


def _np_leaves(dt: numpy.dtype, base: int = 0, prefix: str = ""):
    """(path, offset, dtype) of every scalar of a NumPy structured dtype."""
    fields = sorted(dt.fields.items(), key=lambda item: item[1][1])
    for name, (fdt, offset, *_title) in fields:
        count = int(numpy.prod(fdt.shape)) if fdt.shape else 1
        item = fdt.base
        for i in range(count):
            path = f"{prefix}{name}[{i}]" if fdt.shape else prefix + name
            at = base + offset + i * item.itemsize
            if item.fields is not None:
                yield from _np_leaves(item, at, path + ".")
            else:
                yield path, at, item


def layout_mismatch(dt: numpy.dtype, struct) -> str | None:
    """Where NumPy dtype ``dt`` differs from C ``struct`` (naming the C field), or None."""
    if dt.fields is None:
        return None if dt.itemsize == struct.size else None
    c_leaves, np_leaves = list(_c_leaves(struct)), list(_np_leaves(dt))
    for k, (path, offset, cdt, ctype) in enumerate(c_leaves):
        if k >= len(np_leaves):
            return f"fields end before the struct's field {path} ({ctype} at offset {offset})"
        npath, noffset, ndt = np_leaves[k]
        if noffset != offset or (cdt is not None and (cdt.kind != ndt.kind and {cdt.kind, ndt.kind}
                                                      != {"i", "u"} or cdt.itemsize
                                                      != ndt.itemsize)):
            return (f"field {npath!r} ({ndt} at offset {noffset}) disagrees with the struct's "
                    f"field {path} ({ctype} at offset {offset})")
    if len(np_leaves) > len(c_leaves):
        npath, noffset, ndt = np_leaves[len(c_leaves)]
        return f"field {npath!r} ({ndt} at offset {noffset}) is not in the struct"
    return None


def _fields_slot(arg, index: int, param, size: int | None):
    """A frozen dataclass or NamedTuple: each field, read by its C name, packed at its C
    offset (one format, pad bytes included: no per-call loop over fields)."""
    struct = param.struct
    if struct is None:
        raise _fail(index, param, param.ctype, _describe(arg),
                    "a dataclass or NamedTuple maps onto a struct defined in the kernel's "
                    "source (or a CUDA vector type); pass a NumPy structured scalar instead")
    if size is not None and struct.size != size:
        raise _fail(index, param, f"{param.ctype} ({size} bytes, from the CUBIN)",
                    f"{_describe(arg)} laid out as the source's struct ({struct.size} bytes)")
    codes, exprs, pos = [], [], 0
    for path, offset, cdt, _ctype in _c_leaves(struct):
        if cdt is None or cdt.char not in STRUCT_CODES:
            raise _fail(index, param, param.ctype, _describe(arg),
                        f"field {path} has a type a dataclass cannot fill; pass a NumPy "
                        "structured scalar")
        if offset > pos:
            codes.append(f"{offset - pos}x")
        codes.append(STRUCT_CODES[cdt.char])
        exprs.append(_field_expr(records.attribute_path(type(arg), path), cdt))
        pos = offset + cdt.itemsize
    if struct.size > pos:
        codes.append(f"{struct.size - pos}x")
    _try_fields(arg, index, param, struct)
    return "".join(codes), struct.size, struct.align, ", ".join(exprs), {}


def pack_problem(slots, args, exc) -> Exception:
    """Why ``args`` do not pack into ``slots`` (a launch's ``struct.error`` ``exc``): the
    first argument whose own slot fails, a struct's field named (records.field_error, as
    ``struct.pack`` converts), a value out of range a JitkernOverflowError."""
    for i, (slot, arg) in enumerate(zip(slots, args)):
        if slot.pointer:
            continue
        try:
            _struct.pack("<" + slot.codes, *slot_value(slot, arg))
        except (_struct.error, TypeError, AttributeError, OverflowError) as own:
            field = records.field_error(arg, True) if records.is_record_class(type(arg)) else None
            if field is not None:
                return (JitkernOverflowError if isinstance(field, OverflowError)
                        else KernelArgumentError)(f"argument {i}: {field}")
            if isinstance(arg, int) and len(slot.codes) == 1:
                return JitkernOverflowError(
                    f"argument {i}: {arg} does not fit the parameter's "
                    f"{numpy.dtype(slot.codes)}")
            return KernelArgumentError(f"argument {i}: {arg!r} does not pack into its "
                                       f"parameter ({own})")
    return KernelArgumentError(f"an argument does not pack into its parameter ({exc})")


def slot_value(slot, arg) -> tuple:
    """What a launcher packs for ``arg`` in value slot ``slot`` (its expression evaluated
    once, outside a launcher: a range check raises as the launcher's would)."""
    names = {key: f"_{key}" for key in slot.env}
    read = function_of("a", f"({slot.expr.format(a='a', **names)},)",
                       {f"_{key}": value for key, value in slot.env.items()})
    return read(arg)


def _field_expr(path: str, cdt: numpy.dtype) -> str:
    expr = "{a}." + path
    return f"{expr}.real, {expr}.imag" if cdt.kind == "c" else expr


def _try_fields(arg, index: int, param, struct) -> None:
    """Read and pack each field of the sample once, so a missing field or a value of the
    wrong kind is named here rather than by ``struct.error`` in the launcher."""
    for path, _offset, cdt, ctype in _c_leaves(struct):
        try:
            value = function_of("a", "a." + records.attribute_path(type(arg), path))(arg)
        except (AttributeError, IndexError, TypeError):
            raise _fail(index, param, f"struct {param.ctype} with field {path} ({ctype})",
                        f"{_describe(arg)} without it") from None
        bad = isinstance(value, float) and cdt.kind in "iub"
        try:
            if cdt.kind == "c":
                _struct.pack("<" + STRUCT_CODES[cdt.char], value.real, value.imag)
            else:
                _struct.pack("<" + STRUCT_CODES[cdt.char], value)
        except (_struct.error, AttributeError, TypeError, OverflowError):
            bad = True
        if bad:
            raise _fail(index, param, f"field {path} of {param.ctype} to be {ctype} ({cdt})",
                        f"{value!r} ({type(value).__name__}) in {_describe(arg)}")


# ---------------------------------------------------------------------------
# Pointers


def check_pointer(arg, index: int, param) -> bool:
    """Check the element type of array ``arg`` given for pointer ``param``; whether the
    check depends on the array's dtype (the launcher then compares it on each call)."""
    if not typed(param) or not param.pointer or param.any_pointee:
        return False
    want = _param_dtype(param)
    if want is None and param.elem_size is None:
        return False
    have = dtype_of(arg)
    if have is None:
        return False  # a device allocation: untyped memory
    if want is not None and have != want:
        raise _fail(index, param, f"{param.ctype}, a pointer to {want}", _describe_array(arg, have),
                    f"pass an array of {want} (x.astype(numpy.{want.name})), or declare the "
                    "parameter void* to take any array")
    if want is None and have.fields is not None and param.struct is not None:
        _check_records(arg, index, param, have)
    elif want is None and have.itemsize != param.elem_size and not _fills(have, param.struct):
        raise _fail(index, param, f"{param.ctype}, a pointer to {param.elem_size}-byte "
                    "elements", f"{_describe_array(arg, have)} ({have.itemsize} bytes)",
                    "pass an array of a record dtype of that size, or of the struct's one "
                    "field type")
    return True


def _check_records(arg, index: int, param, have: numpy.dtype) -> None:
    """An array of records for a pointer to a struct the source defines: field by field,
    as a struct by value is (each field's offset and type, then the size)."""
    struct = param.struct
    problem = layout_mismatch(have, struct)
    if problem is None and have.itemsize != struct.size:
        problem = f"records are {have.itemsize} bytes, the struct's {struct.size}"
    if problem is not None:
        raise _fail(index, param, f"{param.ctype}, a pointer to struct {struct.name} "
                    f"({struct.size} bytes)", f"{_describe(arg)} whose {problem}",
                    "build the dtype with the struct's fields in order "
                    "(numpy.dtype(..., align=True) pads as C does)")


def check_replacement(value, index: int, params, kernel: str) -> None:
    """``BoundLaunch.set_arg``'s check of a new device array for C parameter ``index``: its
    element type, as the launch that bound it checked (host values: the packer says)."""
    if params is None or index >= len(params) or isinstance(value, (numpy.ndarray,
                                                                     numpy.generic)):
        return
    try:
        check_pointer(value, index, params[index])
    except KernelArgumentError as exc:
        raise KernelArgumentError(f"set_arg: {kernel}: {exc}") from None


def _is_cai(a) -> bool:
    read = array_read(type(a), a)
    return read is not None and read.kind == "cai"


def _fills(have: numpy.dtype, struct) -> bool:
    """Whether an array of ``have`` can hold ``struct``s: all of the struct's fields are
    ``have`` (a float64 array for ``double3*``, as CUDA code reads it)."""
    if struct is None:
        return False
    kinds = {dt for _path, _offset, dt, _ctype in _c_leaves(struct)}
    return kinds == {have}


def guards(args: tuple, keyed: tuple) -> tuple[list[str], dict]:
    """The conditions a generated launcher checks on each call (over ``a0, a1, ...``) so
    that the arguments at positions ``keyed`` keep the dtypes that were checked."""
    terms, env = [], {}
    for i in keyed:
        a = args[i]
        if type(a) is numpy.void:
            continue  # its slot's VoidBytes compares the dtype of each record it reads
        read = dtype_read(type(a), a)
        if read is None:
            env[f"_DT{i}"], env[f"_dt{i}"] = dtype_of(a), dtype_of
            terms.append(f"_dt{i}(a{i}) == _DT{i}")
        else:
            template, sample = read
            env[f"_DT{i}"] = sample
            value = template.format(a=f"a{i}")
            terms.append(f"({value} is _DT{i} or {value} == _DT{i})")
        if type(a) is numpy.ndarray:  # a struct by value: exactly one record
            terms.append(f"a{i}.size == 1")
        elif read is not None and _is_cai(a) and dtype_of(a).fields is not None:
            # records of one size: the descr says which
            env[f"_DS{i}"] = a.__cuda_array_interface__.get("descr")
            terms.append(f"a{i}_i.get('descr') == _DS{i}")
    return terms, env
