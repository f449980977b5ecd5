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

import ctypes
import struct

import numpy

from ..arrays import dtypes
from ..errors import KernelArgumentError
from .codegen import define
from .handles import handle_ctype

# ---------------------------------------------------------------------------
# How to get a device pointer out of each array type (chosen once per type).


def _cai_pointer(a) -> int:
    return a.__cuda_array_interface__["data"][0]


def _instance_cai_pointer(a) -> int:
    # For a class whose instances get __cuda_array_interface__ set on themselves (not on
    # the class): the plan is per type, so another instance may lack it.
    try:
        cai = a.__cuda_array_interface__
    except AttributeError:
        raise KernelArgumentError(
            f"cannot pass a {type(a).__module__}.{type(a).__qualname__} without "
            "__cuda_array_interface__ to a kernel (another instance of its class had one)"
        ) from None
    return cai["data"][0]


_pointer_getters: dict[type, object] = {}
_device_getters: dict[type, object] = {}


def register_array_type(cls: type, pointer, device=None) -> None:
    """Teach launches how to read a device pointer (and device id) from ``cls``.

    ``pointer`` and ``device`` are functions of the array, or (faster) Python expression
    templates over ``{a}``, such as ``"{a}.data.ptr"``, which are inlined into the
    generated launchers.
    """
    _pointer_getters[cls] = pointer
    if device is not None:
        _device_getters[cls] = device


_template_functions: dict[str, object] = {}


def _as_function(getter):
    """A getter given as a template, as a function of the array (made once per template)."""
    if not isinstance(getter, str):
        return getter
    fn = _template_functions.get(getter)
    if fn is None:
        fn = _template_functions[getter] = eval(  # noqa: S307 - our own templates
            "lambda a: " + getter.format(a="a"))
    return fn


def _torch_cpu(t) -> int:
    if not t.is_cuda:
        raise KernelArgumentError(
            "a CPU torch.Tensor cannot be passed to a kernel: move it with .cuda() or "
            "convert it with jitkern.asarray(...)"
        )
    return t.data_ptr()


def host_array_message(kind: str) -> str:
    """What every kernel kind says of a host array given where a GPU array is expected:
    copy it to the GPU, or run the kernel in the simulator, which takes host arrays."""
    from ..config import settings

    message = (f"a {kind} lives in host memory and cannot be passed to a kernel; copy it to "
               "the GPU first with jitkern.asarray(x)")
    if settings.simulate:
        return message + ("; JITKERN_SIMULATE is on, but this call does not go through the "
                          "simulator (a launch made before it was turned on?): launch again")
    return message + (", or run the kernel on the CPU with NumPy arrays: "
                      "k.simulate[grid, block](*args) (ElementwiseKernel and ReductionKernel: "
                      "k.simulate(*args)) or JITKERN_SIMULATE=1; k.inspect(..., arch=...) "
                      "compiles without a GPU")


def _known_foreign(cls: type):
    # Pointer getters given as templates are inlined into the generated packer.
    module = cls.__module__ or ""
    if module.startswith("cupy") and hasattr(cls, "__cuda_array_interface__"):
        return "{a}.data.ptr", "{a}.data.device_id"
    if module.startswith("torch") and cls.__name__ in ("Tensor", "Parameter"):
        return "({a}.data_ptr() if {a}.is_cuda else {cpu}({a}))", "{a}.get_device()"
    return None


def _dlpack_pointer(a) -> int:
    from ..errors import KernelArgumentError as _E

    kind, _dev = a.__dlpack_device__()
    if kind not in (2, 3, 13):  # kDLCUDA, kDLCUDAHost, kDLCUDAManaged
        raise _E(f"a {type(a).__name__} in host memory cannot be passed to a kernel")
    from ..arrays.interop import describe  # noqa: PLC0415 - optional, arrays layer registers itself

    return describe(a).ptr


def _instance_cai(a) -> dict:
    # The dict of an instance-level __cuda_array_interface__ (see _instance_cai_pointer).
    try:
        return a.__cuda_array_interface__
    except AttributeError:
        raise KernelArgumentError(
            f"cannot pass a {type(a).__module__}.{type(a).__qualname__} without "
            "__cuda_array_interface__ to a kernel (another instance of its class had one)"
        ) from None


def _dlpack_info(a):
    # describe() refuses host memory, like _dlpack_pointer. The arrays layer sits above
    # this one, so it is looked up at the first call, not imported per call.
    describe = _describe[0]
    if describe is None:
        from ..arrays.interop import describe

        _describe[0] = describe
    return describe(a)


_describe = [None]


class ArrayRead:
    """How a generated launcher reads a protocol-only array (``__cuda_array_interface__``
    or DLPack): ``bind``, an expression template that stores what is read once per call
    in the local ``{a}_i`` (the CAI dict, or DLPack's ArrayInfo: ``kind`` says which), and
    ``pointer``, the device pointer read from ``{a}_i``. Launchers evaluate ``bind`` right
    after the argument's type check, so guards over the layout (the JIT's) and the packing
    share one read: no second property call, no second capsule."""

    __slots__ = ("bind", "env", "kind", "pointer")

    def __init__(self, kind: str, bind: str, pointer: str, env: dict):
        self.kind, self.bind, self.pointer, self.env = kind, bind, pointer, env


_CAI_READ = ArrayRead("cai", "({a}_i := {a}.__cuda_array_interface__)", "{a}_i['data'][0]", {})
_INSTANCE_CAI_READ = ArrayRead("cai", "({a}_i := {icai}({a}))", "{a}_i['data'][0]",
                               {"icai": _instance_cai})
_DLPACK_READ = ArrayRead("info", "({a}_i := {info}({a}))", "{a}_i.ptr", {"info": _dlpack_info})


def array_read(cls: type, value=None) -> ArrayRead | None:
    """The :class:`ArrayRead` for arguments of type ``cls`` (``value``, a sample, decides for
    a class without either protocol whose instances carry their own CAI), or None for
    arrays read through a per-type pointer getter."""
    getter = pointer_getter(cls)
    if getter is _cai_pointer:
        return _CAI_READ
    if getter is _dlpack_pointer:
        return _DLPACK_READ
    if (getter is None and value is not None and not issubclass(cls, numpy.ndarray)
            and hasattr(value, "__cuda_array_interface__")):
        return _INSTANCE_CAI_READ
    return None


def pointer_getter(cls: type):
    """The function that reads a device pointer from an instance of ``cls``, or None."""
    getter = _pointer_getters.get(cls)
    if getter is not None:
        return getter
    known = _known_foreign(cls)
    if known is not None:
        _pointer_getters[cls], _device_getters[cls] = known
        return known[0]
    if issubclass(cls, numpy.ndarray):
        return None
    if hasattr(cls, "__cuda_array_interface__"):
        _pointer_getters[cls] = _cai_pointer
        return _cai_pointer
    if hasattr(cls, "__dlpack__") and hasattr(cls, "__dlpack_device__"):
        return _dlpack_pointer
    if _is_allocation(cls):
        _pointer_getters[cls], _device_getters[cls] = "{a}.ptr", "{a}.device_id"
        return "{a}.ptr"
    return None


def _is_allocation(cls: type) -> bool:
    """A device allocation object with an integer ``.ptr``: CuPy's ``MemoryPointer`` (what
    ``cupy.cuda.alloc()`` returns) and ``Memory``, jitkern's ``MemoryPointer``. Streams,
    events and texture objects also have ``.ptr`` but no ``device_id`` plus ``mem``/``size``."""
    return (hasattr(cls, "ptr") and hasattr(cls, "device_id")
            and (hasattr(cls, "mem") or hasattr(cls, "size")) and handle_ctype(cls) is None)


def device_getter(cls: type):
    """A function reading the device id of an instance of ``cls``, or None."""
    return _as_function(_device_getters.get(cls))


def device_template(cls: type) -> str | None:
    """The device getter of ``cls`` as an expression template over ``{a}``, or None."""
    getter = _device_getters.get(cls)
    if getter is None:
        return None
    return getter if isinstance(getter, str) else None


# ---------------------------------------------------------------------------
# One slot of the parameter buffer per argument.

_SCALAR_CODES = {
    "b": "b", "B": "B", "h": "h", "H": "H", "i": "i", "I": "I", "l": "q", "L": "Q",
    "q": "q", "Q": "Q", "e": "e", "f": "f", "d": "d", "?": "?",
}
_INT_RANGES = {"i": (-(2**31), 2**31 - 1), "I": (0, 2**32 - 1), "q": (-(2**63), 2**63 - 1),
               "Q": (0, 2**64 - 1)}


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
    if dtype.kind == "c":
        half = "f" if dtype.itemsize == 8 else "d"
        return Slot(half * 2, dtype.itemsize, dtype.itemsize, "{a}.real, {a}.imag", {}, what)
    if dtype.kind == "V":
        return Slot(f"{dtype.itemsize}s", dtype.itemsize, _c_alignment(dtype),
                    "{a}.tobytes()", {}, what)
    code = _SCALAR_CODES.get(dtype.char)
    if code is None:
        raise KernelArgumentError(f"{what}: NumPy type {dtype} cannot be passed to a kernel")
    return Slot(code, dtype.itemsize, dtype.itemsize, "{a}", {}, what)


def _c_alignment(dtype: numpy.dtype) -> int:
    """A structured dtype's alignment as a C struct (NumPy says 1 unless made with
    align=True; C aligns to the widest field, complex<T> to its size)."""
    dtype = dtype.base
    if dtype.fields is not None:
        return max([1, dtype.alignment] + [_c_alignment(dt) for dt, *_ in dtype.fields.values()])
    return dtype.itemsize if dtype.kind == "c" else max(dtype.alignment, 1)


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
    read = array_read(cls, value)
    if read is not None:
        return Slot("Q", 8, 8, read.pointer, read.env, what, pointer=True, bind=read.bind)
    getter = pointer_getter(cls)
    if isinstance(getter, str):
        return Slot("Q", 8, 8, getter, {"cpu": _torch_cpu}, what, pointer=True)
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
                 "dtypes", "types", "fmt", "launchers", "general_launches")

    def __init__(self, slots: list[Slot], types: tuple, dtypes=None):
        self.slots = slots
        self.dtypes = dtypes  # dtypes of structured scalars, when there are any
        self.nargs = len(slots)
        fmt, offsets, total = _layout(slots)
        self._buffer = ctypes.create_string_buffer(max(total, 8))
        base = ctypes.addressof(self._buffer)
        self._pointers = (ctypes.c_void_p * max(len(slots), 1))(*[base + o for o in offsets])
        self.params_ptr = ctypes.addressof(self._pointers)
        self.types, self.fmt = types, fmt
        self.launchers: dict = {}  # generated fast launchers, by what they were made for
        self.general_launches = 0  # launches of this plan that took the general path
        self.pack, self.pack_if_same = _make_packers(fmt, slots, types, self._buffer)


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


def _make_packers(fmt: str, slots: list[Slot], types: tuple, buffer):
    """Generate ``pack(args)`` and ``pack_if_same(args) -> bool`` for one signature.

    ``pack_if_same`` first checks each argument's type with ``is`` (cheaper than
    building a key), so a kernel launched again with the same argument types skips
    the plan lookup entirely. This is the launch hot path.
    """
    env, names, exprs, checks, binds = _packer_parts(fmt, slots, types, buffer)
    unpack = f"    {', '.join(names)}, = args\n" if names else ""
    reads = "".join(f"    {b}\n" for b in binds)
    body = f"    _pack_into(_buf, 0{''.join(', ' + e for e in exprs)})\n"
    guard = (f"    if len(args) != {len(slots)}:\n        return False\n{unpack}"
             + (f"    if {' or '.join(checks)}:\n        return False\n" if checks else ""))
    src = (f"def pack(args):\n{unpack}{reads}{body}"
           f"def pack_if_same(args):\n{guard}{reads}{body}    return True\n")
    define(src, "<jitkern launch plan>", env, "pack")
    return env["pack"], env["pack_if_same"]


def _packer_parts(fmt: str, slots: list[Slot], types: tuple, buffer):
    """(env, names, pack expressions, type checks, array reads) shared by the generated
    functions. The reads (ArrayRead.bind) bind ``a{i}_i``; run them after the checks."""
    env = {"_pack_into": struct.Struct(fmt).pack_into, "_buf": buffer}
    names = [f"a{i}" for i in range(len(slots))]
    exprs, checks, binds = [], [], []
    for i, slot in enumerate(slots):
        fields = {"a": names[i]}
        for key, value in slot.env.items():
            fields[key] = f"_{key}_{i}"
            env[fields[key]] = value
        exprs.append(slot.expr.format(**fields))
        if slot.bind is not None:
            binds.append(slot.bind.format(**fields))
        env[f"_T{i}"] = types[i]
        checks.append(f"type(a{i}) is not _T{i}")
    return env, names, exprs, checks, binds


def make_fast_launcher(plan: "Plan", launch, handle, dims: dict, streams_in_use: list, fail,
                       *, fallback=None, positional: bool = False, guards=(), guard_env=None,
                       stream_of=None, current_stream=None, device=None, block_dims=None):
    """Generate the whole launch for one signature as one function.

    By default: ``run(grid, block, args, shared_mem, stream) -> bool``, which returns
    False without doing anything when an assumption does not hold (other argument
    types, dims not seen before) so that the caller takes the general path. With
    ``fallback``: ``run(grid, block, args, *, shared_mem=0, stream=None)`` (or with
    ``shared_mem`` and ``stream`` positional when ``positional``), which calls
    ``fallback`` with the same arguments on a miss, so it can stand for a kernel's
    whole call (see kernels.raw and jit.kernel). ``guards`` are further Python
    conditions over ``a0, a1, ...`` (names they use come from ``guard_env``) that
    must all hold. ``fail(err, grid, block, shared_mem, stream)`` handles a driver
    error (it raises, or returns after recovering).

    ``stream_of`` (a stream argument -> handle) and ``current_stream`` (the calling
    thread's current stream handle) are needed when streams may be given; without
    them a given or current stream is a miss.

    ``dims`` and ``block_dims``: the memos of checked grids and blocks (a miss on either
    takes the general path, which checks the value against CUDA's limits).

    ``device`` (machines with several GPUs): ``(device_id, context, get_current)``. The
    launcher then also checks that ``get_current()`` (cuCtxGetCurrent) returns
    ``context``, the context ``handle`` belongs to, and that every array argument is on
    ``device_id`` (an array type without a known device getter is a miss).
    """
    env, names, exprs, checks, binds = _packer_parts(plan.fmt, plan.slots, plan.types,
                                                     plan._buffer)
    env.update(guard_env or {})
    env.update(_launch=launch, _h=handle, _params=plan.params_ptr, _dims=dims,
               _bdims=dims if block_dims is None else block_dims,
               _streams=streams_in_use, _fail=fail, _slow=fallback,
               _stream_of=stream_of, _current=current_stream)
    if fallback is None:
        header = "def run(grid, block, args, shared_mem, stream):"
        miss, done = "return False", "return True"
    elif positional:
        header = "def run(grid, block, args, shared_mem=0, stream=None, *, cluster=None):"
        miss = "return _slow(grid, block, args, shared_mem, stream)"
        header += ("\n    if cluster is not None:  # thread-block clusters: the general path"
                   "\n        return _slow(grid, block, args, shared_mem, stream, cluster=cluster)")
        done = "return None"
    else:
        header = "def run(grid, block, args, *, shared_mem=0, stream=None, cluster=None):"
        miss = "return _slow(grid, block, args, shared_mem=shared_mem, stream=stream)"
        header += ("\n    if cluster is not None:  # thread-block clusters: the general path"
                   "\n        return _slow(grid, block, args, shared_mem=shared_mem, "
                   "stream=stream, cluster=cluster)")
        done = "return None"
    n = len(names)
    if stream_of is not None and current_stream is not None:
        stream_lines = [
            "    if stream is None:",
            "        s = _current() if _streams[0] else 0",
            "    else:",
            "        s = _stream_of(stream)",
        ]
    else:
        stream_lines = ["    if stream is not None or _streams[0]:", f"        {miss}", "    s = 0"]
    # Unpacking (of args, and of the memoised launch dims) raises on a mismatch,
    # which costs nothing when it does not happen; len() and indexing would cost
    # on every launch.
    lines = [
        header,
        *stream_lines,
        "    try:",
        f"        {''.join(nm + ', ' for nm in names) or '() '}= args",
        "        gx, gy, gz = _dims[grid]",
        "        bx, by, bz = _bdims[block]",
        "    except (TypeError, ValueError, KeyError):",
        f"        {miss}",
    ]
    # The array reads come after the type checks (they may use type-specific attributes)
    # and before the guards (which may read the layout from ``a{i}_i``): each is a
    # condition that is never true, so the ``or`` chain evaluates it and goes on.
    conditions = ([*checks, *(f"{b} is None" for b in binds), *(f"not ({g})" for g in guards)]
                  if n else [])
    if device is not None:
        device_id, context, get_current = device
        env.update(_ctx=context, _ctx_get=get_current)
        conditions.append("_ctx_get()[1] != _ctx")
        for i, (slot, cls) in enumerate(zip(plan.slots, plan.types)):
            if not slot.pointer:
                continue  # a scalar or a handle
            template = device_template(cls)
            if template is None:
                getter = device_getter(cls)
                if getter is None:
                    conditions.append("True")  # cannot check this array's device
                    continue
                env[f"_dev_{i}"] = getter
                template = f"_dev_{i}({{a}})"
            conditions.append(f"{template.format(a=names[i])} != {int(device_id)}")
    if conditions:
        lines.append(f"    if {' or '.join(conditions)}:")
        lines.append(f"        {miss}")
    lines += [
        f"    _pack_into(_buf, 0{''.join(', ' + e for e in exprs)})",
        "    err, = _launch(_h, gx, gy, gz, bx, by, bz, shared_mem, s, _params"
        + (", 0)" if launch.__name__ == "cuLaunchKernel" else ")"),
        "    if err:",
        "        _fail(err, (gx, gy, gz), (bx, by, bz), shared_mem, s)",
        f"    {done}",
    ]
    return define("\n".join(lines) + "\n", "<jitkern fast launch>", env, "run")


def build_plan(args: tuple, param_sizes: list[int] | None, params=None, name: str = "the kernel"
               ) -> Plan:
    """Build the packing plan for ``args``.

    ``param_sizes`` (from the driver) and ``params`` (parsed from the source: objects
    with ``name``, ``ctype`` and ``pointer``) are checked when given.
    """
    expected = len(param_sizes) if param_sizes is not None else (
        len(params) if params is not None else None)
    if expected is not None and len(args) != expected:
        listed = f" ({', '.join(p.ctype + ' ' + p.name for p in params)})" if params else ""
        raise KernelArgumentError(
            f"{name} takes {expected} argument(s){listed}, but {len(args)} were given"
        )
    slots = []
    for i, arg in enumerate(args):
        try:
            slots.append(_checked_slot(arg, i, param_sizes, params))
        except KernelArgumentError as exc:
            raise KernelArgumentError(_named(str(exc), name, params, i)) from None
    voids = tuple(a.dtype for a in args if type(a) is numpy.void)
    return Plan(slots, tuple(map(type, args)), voids or None)


def _checked_slot(arg, i: int, param_sizes, params) -> Slot:
    size = param_sizes[i] if param_sizes is not None else None
    cls = type(arg)
    if cls is numpy.void:
        slot = _scalar_slot(arg.dtype, f"argument {i}")
    else:
        slot = slot_for(cls, i, size, arg)
    if size is not None and slot.size != size:
        raise KernelArgumentError(
            f"argument {i}: the kernel parameter is {size} bytes, but a "
            f"{_describe_arg(arg)} packs to {slot.size} bytes; pass a value of the "
            "parameter's exact type (e.g. numpy.float32(x) for a float parameter)"
        )
    if params is not None:
        _check_kind(arg, slot, params[i], i)
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


_UNNAMED = "the kernel"  # build_plan's name when its caller gives none


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
    """The plan key: the argument types (plus dtypes of structured scalars)."""
    key = tuple(map(type, args))
    if numpy.void in key:
        key = key + tuple(a.dtype for a in args if type(a) is numpy.void)
    return key


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
