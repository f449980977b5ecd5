"""Argument packing for kernel launches.

A :class:`Plan` is built once per (function, argument-type signature). It owns a
parameter buffer and the ``void*[]`` array that points into it, and a small
generated ``pack(args)`` function that writes every argument into the buffer
with one ``struct.pack_into`` call. A later launch with the same argument types
runs that function and ``cuLaunchKernel``: no string work, no allocation.

What an argument becomes:

==========================================  ===============================
Python ``int``                               ``long long`` (8 bytes)
Python ``float``                             ``double``
Python ``bool``                              ``bool`` (1 byte)
Python ``complex``                           ``complex<double>`` (16 bytes)
NumPy scalar (``numpy.float32(1)``, ...)     its own type and size
``numpy.void`` of a structured dtype         its raw bytes, aligned to the dtype
jitkern/CuPy/PyTorch/any CUDA array          device pointer (8 bytes)
a device allocation with ``.ptr``            device pointer (CuPy's MemoryPointer, ...)
texture/surface object (jitkern or CuPy)     ``cudaTextureObject_t``/``cudaSurfaceObject_t``
==========================================  ===============================

When the kernel's parameter sizes are known (``cuFuncGetParamInfo``), a
Python int or float given for a 4-byte parameter is converted to 32 bits
(range-checked) instead of being truncated silently, and any other size
mismatch is refused before anything is launched.
"""

from __future__ import annotations


import numpy

from .. import dtypes, records
from ..errors import JitkernTypeError, KernelArgumentError
from .args import (  # noqa: F401 - the reading table; register_array_type etc. re-exported
    _CAI_READ,
    _DLPACK_READ,
    _INSTANCE_CAI_READ,
    ArrayRead,
    _torch_cpu,
    array_read,
    device_getter,
    device_template,
    host_array_message,
    pointer_env,
    pointer_getter,
    register_array_type,
)
from . import signature
from .signature import slot_value
from .args import dtype_of
from ..handles import handle_ctype
from .recordbytes import VOID_EXPR, void_slot_env
from .launcher import CODE_NAMES, STRUCT_CODES, ParamBuffer, make_fast_launcher, make_packers  # noqa: F401

# ---------------------------------------------------------------------------
# One slot of the parameter buffer per argument.

class Slot:
    """How one argument is written: struct codes, its size/alignment, and a Python
    expression template yielding the values to pack (``{a}`` is the argument; other
    ``{name}`` fields are helpers from ``env``)."""

    __slots__ = ("codes", "size", "align", "expr", "env", "what", "pointer", "bind")

    def __init__(self, codes: str, size: int, align: int, expr: str, env: dict, what: str,
                 pointer: bool = False, bind: str | None = None):
        self.codes, self.size, self.align = codes, size, align
        self.expr, self.env, self.what = expr, env, what
        self.pointer = pointer  # a device pointer (checked against the parameter's kind)
        self.bind = bind  # ArrayRead.bind: evaluated after the type check, before ``expr``


def _scalar_slot(dtype: numpy.dtype, what: str) -> Slot:
    if dtype.kind == "c" and dtype.char in STRUCT_CODES:
        return Slot(STRUCT_CODES[dtype.char], dtype.itemsize, dtype.itemsize,
                    "{a}.real, {a}.imag", {}, what)
    if dtype.kind == "V":  # a numpy.void: read through a view while it comes back
        return Slot(f"{dtype.itemsize}s", dtype.itemsize, records.c_alignment(dtype),
                    VOID_EXPR, void_slot_env(dtype), what)
    code = STRUCT_CODES.get(dtype.char)
    if code is None:
        raise KernelArgumentError(f"{what}: NumPy type {dtype} cannot be passed to a kernel")
    return Slot(code, dtype.itemsize, dtype.itemsize, "{a}", {}, what)


_PY_SCALARS = dtypes.PYTHON_SCALARS


def slot_for(cls: type, index: int, param_size: int | None, value=None) -> Slot:
    """The slot for an argument of type ``cls`` at position ``index`` (``value``, a sample
    argument, is looked at only when its class says nothing: an instance-level
    ``__cuda_array_interface__``)."""
    what = f"argument {index}"
    if cls in _PY_SCALARS:
        dtype = _PY_SCALARS[cls]
        if param_size == 4 and cls is int:
            return _checked_int32(index)
        if param_size == 4 and cls is float:
            return Slot("f", 4, 4, "{a}", {}, what)
        return _scalar_slot(dtype, what)
    if issubclass(cls, numpy.generic):
        return _scalar_slot(numpy.dtype(cls), what)
    if handle_ctype(cls) is not None:  # a texture/surface object: its handle, by value
        return Slot("Q", 8, 8, "{a}.ptr", {}, what)
    if records.is_record_class(cls):  # a frozen dataclass / NamedTuple: a struct by value
        return _record_slot(cls, what)
    read = array_read(cls, value)
    if read is not None:
        return Slot("Q", 8, 8, read.pointer, read.env, what, pointer=True, bind=read.bind)
    getter = pointer_getter(cls)
    if isinstance(getter, str):
        return Slot("Q", 8, 8, getter, pointer_env(cls), what, pointer=True)
    if getter is not None:
        return Slot("Q", 8, 8, "{ptr}({a})", {"ptr": getter}, what, pointer=True)
    if issubclass(cls, numpy.ndarray):
        raise KernelArgumentError(f"{what}: {host_array_message('numpy.ndarray')}")
    raise KernelArgumentError(
        f"{what}: cannot pass a {cls.__module__}.{cls.__qualname__} to a kernel; expected a GPU "
        "array (jitkern.ndarray, CuPy, PyTorch, any __cuda_array_interface__ or DLPack CUDA "
        "array), a device allocation with .ptr, a texture/surface object, a Python "
        "int/float/bool/complex or a NumPy scalar"
    )


# ---------------------------------------------------------------------------
# Structs by value (JIT kernels): a frozen dataclass or NamedTuple instance packs its fields
# at the offsets of its record dtype (records, the layout the kernel's C struct has),
# one attribute read per field in the launcher's single pack_into: no per-call conversion.


def _record_slot(cls: type, what: str) -> Slot:
    try:
        dtype = records.record_dtype(cls)
    except JitkernTypeError as exc:
        raise KernelArgumentError(f"{what}: {exc}") from None
    codes, exprs, pos = [], [], 0
    for path, offset, dt in records.leaves(dtype):
        code = STRUCT_CODES.get(dt.char)
        if code is None:
            raise KernelArgumentError(
                f"{what}: field {path!r} of {cls.__qualname__} is {dt}, which a launch cannot "
                "pack from Python; pass a numpy.void of the record dtype instead")
        if offset > pos:
            codes.append(f"{offset - pos}x")
        codes.append(code)
        exprs += ([f"{{a}}.{path}.real", f"{{a}}.{path}.imag"] if dt.kind == "c"
                  else [f"{{a}}.{path}"])
        pos = offset + dt.itemsize
    if dtype.itemsize > pos:
        codes.append(f"{dtype.itemsize - pos}x")
    return Slot("".join(codes), dtype.itemsize, records.c_alignment(dtype), ", ".join(exprs), {},
                f"{what} ({cls.__qualname__})")


def _checked_int32(index: int) -> Slot:
    def to_i32(v, _lo=-(2**31), _hi=2**31 - 1, _index=index):
        if not _lo <= v <= _hi:
            raise KernelArgumentError(
                f"argument {_index}: the kernel parameter is 4 bytes, and {v} does not fit in a "
                "32-bit int; pass numpy.int64 to a 64-bit parameter instead"
            )
        return v

    return Slot("i", 4, 4, "{i32}({a})", {"i32": to_i32}, f"argument {index}")


# ---------------------------------------------------------------------------


class Plan:
    """Packing for one argument-type signature: buffer, pointer array, pack()."""

    __slots__ = ("pack", "pack_if_same", "params_ptr", "nargs", "_buffer", "_pointers", "slots",
                 "dtypes", "types", "fmt", "launchers", "bound", "general_launches", "guards",
                 "guard_env")

    def __init__(self, slots: list[Slot], types: tuple, dtypes=None, guards=((), None)):
        self.slots = slots
        # dtypes the plan is keyed on beyond the types (structured scalars, checked arrays)
        self.dtypes = dtypes
        # what a generated launcher checks on each call to keep those dtypes (signature.guards)
        self.guards, self.guard_env = guards
        self.nargs = len(slots)
        fmt, offsets, total = _layout(slots)
        buffer = ParamBuffer(offsets, total)
        self._buffer, self._pointers, self.params_ptr = buffer.raw, buffer.pointers, buffer.params_ptr
        self.types, self.fmt = types, fmt
        self.launchers: dict = {}  # generated launchers (runtime.launcher.Launcher), by form
        self.bound: dict = {}  # ... bound to a kernel object's general path: (run, its env)
        self.general_launches = 0  # launches of this plan that took the general path
        self.pack, self.pack_if_same = make_packers(fmt, slots, types, self._buffer)


def _layout(slots: list[Slot]) -> tuple[str, list[int], int]:
    fmt = ["<"]
    offsets = []
    pos = 0
    for slot in slots:
        pad = (-pos) % slot.align
        if pad:
            fmt.append(f"{pad}x")
            pos += pad
        offsets.append(pos)
        fmt.append(slot.codes)
        pos += slot.size
    return "".join(fmt), offsets, pos


_UNNAMED = "the kernel"  # build_plan's name when its caller gives none


def build_plan(args: tuple, param_sizes: list[int] | None, params=None, name: str = "the kernel"
               ) -> Plan:
    """Build the packing plan for ``args``.

    ``param_sizes`` (from the driver) and ``params`` (parsed from the source: objects
    with ``name``, ``ctype`` and ``pointer``, and what runtime.signature checks when
    they say more) are checked when given. Parsed parameters that disagree with the
    binary's count (a macro in the signature) are set aside: sizes only, then.
    """
    if params is not None and param_sizes is not None and len(params) != len(param_sizes):
        params = None
    _check_count(args, param_sizes, params, name)
    slots, keyed = [], []
    for i, arg in enumerate(args):
        try:
            slot = _checked_slot(arg, i, param_sizes, params, name)
            if _keyed(arg, slot, params[i] if params is not None else None, i):
                keyed.append(i)
        except KernelArgumentError as exc:
            raise KernelArgumentError(_named(str(exc), name, params, i)) from None
        slots.append(slot)
    if not keyed:
        voids = tuple(a.dtype for a in args if type(a) is numpy.void)
        return Plan(slots, tuple(map(type, args)), voids or None)
    return Plan(slots, tuple(map(type, args)), tuple(dtype_of(args[i]) for i in keyed),
                signature.guards(args, tuple(keyed)))


def _check_count(args: tuple, param_sizes, params, name: str) -> None:
    expected = len(param_sizes) if param_sizes is not None else (
        len(params) if params is not None else None)
    if expected is not None and len(args) != expected:
        listed = f" ({', '.join(p.ctype + ' ' + p.name for p in params)})" if params else ""
        raise KernelArgumentError(
            f"{name} takes {expected} argument(s){listed}, but {len(args)} were given"
        )


_HOST_POINTER = Slot("Q", 8, 8, "{a}", {}, "a NumPy array standing for a device array",
                     pointer=True)


def check_simulated(args: tuple, params, name: str) -> None:
    """The checks :func:`build_plan` runs on a launch against the C signature ``params``,
    for a launch in the simulator, where NumPy arrays stand for device arrays: the same
    count, kinds, pointer element types, scalar kinds and widths, struct layouts (and a
    Python int's range, which a GPU launch checks as it packs), with the same errors."""
    _check_count(args, None, params, name)
    for i, arg in enumerate(args):
        param = params[i]
        try:
            if type(arg) is numpy.ndarray and signature.value_slot(arg, i, param, None,
                                                                   name) is None:
                _check_kind(arg, _HOST_POINTER, param, i)
                signature.check_pointer(arg, i, param)
                continue
            slot = _checked_slot(arg, i, None, params, name)
        except KernelArgumentError as exc:
            raise KernelArgumentError(_named(str(exc), name, params, i)) from None
        if not slot.pointer:  # what the launcher's pack evaluates (an int's range check)
            slot_value(slot, arg)


def _keyed(arg, slot: Slot, param, i: int) -> bool:
    """Whether the plan holds for ``arg``'s dtype only (a checked array, a record)."""
    if slot.pointer:
        return signature.check_pointer(arg, i, param)
    return type(arg) is numpy.void or type(arg) is numpy.ndarray


def _checked_slot(arg, i: int, param_sizes, params, name: str = _UNNAMED) -> Slot:
    size = param_sizes[i] if param_sizes is not None else None
    param = params[i] if params is not None else None
    by_value = signature.value_slot(arg, i, param, size, name)
    cls = type(arg)
    if by_value is not None:
        slot = Slot(*by_value, f"argument {i}")
    elif cls is numpy.void:
        slot = _scalar_slot(arg.dtype, f"argument {i}")
    else:
        slot = slot_for(cls, i, size, arg)
    if params is not None:
        _check_kind(arg, slot, params[i], i)
    if size is not None and slot.size != size:
        raise KernelArgumentError(
            f"argument {i}: the kernel parameter is {size} bytes, but a "
            f"{_describe_arg(arg)} packs to {slot.size} bytes; pass a value of the "
            "parameter's exact type (e.g. numpy.float32(x) for a float parameter)"
        )
    return slot


def _named(message: str, kernel: str, params, i: int) -> str:
    """``kernel: argument i (name): ...`` whatever part of that the message lacks (the
    kernel only when the caller named it)."""
    head = f"argument {i}"
    if params is not None and i < len(params) and message.startswith(head + ":"):
        message = f"{head} ({params[i].name}){message[len(head):]}"
    if kernel == _UNNAMED or message.startswith(kernel + ":"):
        return message
    return f"{kernel}: {message}"




def _check_kind(arg, slot: Slot, param, index: int) -> None:
    is_pointer = slot.pointer
    if param.pointer and not is_pointer and type(arg) is not int:
        raise KernelArgumentError(
            f"argument {index} ({param.name}): the kernel expects a pointer ({param.ctype}), "
            f"got {_describe_arg(arg)}; pass a GPU array"
        )
    if not param.pointer and is_pointer:
        raise KernelArgumentError(
            f"argument {index} ({param.name}): the kernel expects a scalar ({param.ctype}), "
            f"got a GPU array ({_describe_arg(arg)})"
        )


def _describe_arg(arg) -> str:
    cls = type(arg)
    if isinstance(arg, numpy.generic):
        return f"numpy.{cls.__name__}"
    if cls in _PY_SCALARS:
        return f"Python {cls.__name__}"
    return f"{cls.__module__}.{cls.__qualname__}"


def signature_of(args: tuple):
    """The plan key of a plan keyed beyond its types (Plan.dtypes): the argument types,
    then the dtype of each argument that has one (records, checked arrays)."""
    key = tuple(map(type, args))
    return key + tuple((a.dtype, a.size) if type(a) is numpy.ndarray else dtype_of(a)
                       for a in args if type(a) not in _PY_SCALARS)


# ---------------------------------------------------------------------------
# Grid and block.


def dim3(value, what: str) -> tuple[int, int, int]:
    """int or 1-3 tuple -> (x, y, z), each a positive int."""
    cls = type(value)
    if cls is int:
        dims = (value, 1, 1)
    elif cls is tuple or cls is list:
        n = len(value)
        if n == 1:
            dims = (value[0], 1, 1)
        elif n == 2:
            dims = (value[0], value[1], 1)
        elif n == 3:
            dims = tuple(value)
        else:
            raise KernelArgumentError(f"{what}: expected an int or a tuple of 1 to 3 ints, got {value!r}")
    elif isinstance(value, (int, numpy.integer)):
        dims = (int(value), 1, 1)
    else:
        raise KernelArgumentError(
            f"{what}: expected an int or a tuple of 1 to 3 ints, got {type(value).__name__}")
    for d in dims:
        if type(d) is not int:
            if isinstance(d, (int, numpy.integer)) and not isinstance(d, bool):
                dims = tuple(int(x) for x in dims)
                break
            raise KernelArgumentError(f"{what}: every dimension must be an int, got {value!r}")
    if dims[0] < 1 or dims[1] < 1 or dims[2] < 1:
        raise KernelArgumentError(f"{what}: every dimension must be at least 1, got {value!r}")
    return dims
