"""The launch specs of ElementwiseKernel and ReductionKernel: arrays read through their
library's cheapest attributes (runtime/args.fast_read), outputs and scratch allocated
inline, several launch steps, the result returned.

:func:`make_runner` fills a :class:`~.launcher.LaunchSpec` per call layout and hands it to
the one generator (:func:`~.launcher.make_launcher`); kernel objects of one definition
share the :class:`~.launcher.Launcher` (the memo of builds keeps it with the decided
launch) and each binds its own general path (:func:`bind_runner`).
"""

from __future__ import annotations

import ctypes
import struct

import numpy

from ..layout import c_strides
from ..errors import InternalError
from ..handles import HANDLE_CTYPES
from . import driver, memory
from .args import ARRAYS, fast_read, new_result
from .device import STREAMS_IN_USE, Stream, current_stream_handle, get_current_stream, stream_handle
from .launcher import Launcher, LaunchSpec, ParamBuffer, _launch_line, _stream_line, make_launcher
from .recordbytes import STRUCT_CODES, record_read

# Texture/surface handles given for a scalar parameter: the record dtypes the string
# kernels give them (compiler.strings.params.HANDLE_DTYPES), packed as their uint64.
HANDLE_DTYPE_SET = frozenset(numpy.dtype([(ctype, "<u8")]) for ctype in HANDLE_CTYPES.values())


class Buffer(ParamBuffer):
    """A parameter buffer laid out from the kernel's offsets, its static tail written once."""

    __slots__ = ()

    def __init__(self, layout, static_values, first_static: int):
        super().__init__([o for o, _ in layout], max((o + s for o, s in layout), default=0))
        base = ctypes.addressof(self.raw)
        if len(layout) != first_static + len(static_values):
            raise InternalError(
                f"a kernel with {len(layout)} parameters launched with "
                f"{first_static + len(static_values)}: please report this"
            )
        for (offset, size), value in zip(layout[first_static:], static_values):
            data = _bytes_of(value)
            if len(data) != size:
                raise InternalError(
                    f"static parameter of {len(data)} bytes for a {size}-byte slot: please report this"
                )
            ctypes.memmove(base + offset, data, size)

    def dynamic_format(self, layout, codes) -> str:
        fmt, pos = ["<"], 0
        for (offset, _size), code in zip(layout, codes):
            if offset > pos:
                fmt.append(f"{offset - pos}x")
            fmt.append(code)
            pos = offset + struct.calcsize("<" + code)
        return "".join(fmt)


def _bytes_of(value) -> bytes:
    if isinstance(value, (numpy.void, numpy.generic)):
        return value.tobytes()
    raise InternalError(f"cannot pre-pack {type(value).__name__}: please report this")


def scalar_code(dtype: numpy.dtype) -> str:
    if dtype in HANDLE_DTYPE_SET:  # a texture/surface handle, converted to numpy.uint64
        return "Q"
    if dtype.fields is not None:  # a record (numpy.void): its bytes
        return f"{dtype.itemsize}s"
    return STRUCT_CODES[dtype.char]


MISS = object()  # what a guarded runner returns when the arguments are not its layout's


class Step:
    """One launch of a runner: ``fn`` with fixed dims, its dynamic parameters (Python
    expressions over the runner's names, with their struct codes) and its static tail."""

    __slots__ = ("block", "dynamic", "fn", "grid", "static")

    def __init__(self, fn, grid, block, dynamic, static):
        self.fn, self.grid, self.block = fn, grid, block
        self.dynamic, self.static = list(dynamic), tuple(static)


def _array_read(k: int, value, env: dict):
    """(type check, statements, miss conditions, pointer expression, device expression)
    for the array argument ``a{k}`` shaped like ``value``. The statements and conditions
    may assume the type check passed."""
    a = f"a{k}"
    read = fast_read(value)
    prefix = f"_c{k}_"
    env[prefix + "T"] = type(value)
    for name, const in read.consts.items():
        env[prefix + name] = const
    fields = {"a": a, "c": prefix}
    pre = [read.pre.format(**fields)] if read.pre else []
    misses = [m.format(**fields) for m in read.misses]
    return (
        f"type({a}) is not {prefix}T",
        pre,
        misses,
        read.pointer.format(**fields),
        read.device.format(**fields),
    )


def make_runner(
    *,
    kernel_name: str,
    device_id: int,
    kinds,
    steps,
    result: str,
    slow,
    temps=(),
    align_mask: int = 0,
    aligned=(),
    first_args=None,
    multi_device: bool = False,
    entry=None,
    convert=None,
):
    """Generate ``run(args, stream)`` (and ``run.guarded``, ``run.entry``) for one call layout.

    ``kinds``: per kernel argument, ``("array", None)``, ``("scalar", dtype)`` or
    ``("alloc", (shape, dtype))`` for an output the call allocates (named ``a{k}`` too;
    ``p{k}`` is each array's pointer, ``s{k}`` each scalar). ``temps``: byte counts of
    scratch buffers allocated on the launch stream and freed after it (pointers ``q0``,
    ``q1``, ...). ``steps``: the launches (:class:`Step`), in order. ``result``: the
    Python expression returned. ``slow(args, stream)``: the general path, taken for a
    pointer in ``aligned`` not aligned to ``align_mask + 1`` or a failed launch (which
    it then diagnoses). ``first_args``: the arguments the layout was made for; they
    decide how each array is read (its library's cheapest attributes) and what
    ``guarded`` checks. With ``multi_device`` the launch also checks that the current
    context is ``device_id``'s and every array is on that device (else the slow path).
    ``convert(value, dtype, name, kernel)``: a scalar argument as the NumPy scalar of its
    parameter's dtype (compiler.strings.params.convert_scalar).
    ``entry``: keyword names (default None), or {name: default} (None, True or False):
    also generate ``run.entry(*args, stream=None, **keywords)``, the kernel object's whole
    call for this layout (a kernel object that is a partial calls it directly): the general
    path it is bound to (:func:`bind_runner`), ``general(*args, stream=..., **keywords)``,
    on a miss or when a keyword is not its default (by identity).
    Returns a :class:`Launcher`: kernel objects of one definition share it, each binding
    its own general path.
    """
    env = _runner_env(convert, slow, kernel_name, device_id)
    code = LaunchSpec(f"<jitkern launch {kernel_name}>", env, late=("_general",))
    n_args = sum(1 for kind, _ in kinds if kind != "alloc")
    unpack = f"{', '.join(f'a{k}' for k in range(n_args))}, = args" if n_args else "pass"
    args = _Arguments(kinds, first_args, env, device_id, multi_device)
    types, pre, misses, reads, allocs, devices = (args.types, args.pre, args.misses, args.reads,
                                                  args.allocs, args.devices)
    for j, nbytes in enumerate(temps):
        allocs += _alloc_lines(f"t{j}", int(nbytes), env, device_id)
        allocs.append(f"q{j} = t{j}.ptr")
    layout = _layout_check(unpack, types, pre, misses)
    code.entry("run", "args, stream", "return _slow(args, stream)",
               [f"if len(args) != {n_args}:", "    {miss}", unpack, *pre])
    code.entry("guarded", "args, stream", "return _MISS", layout)
    if entry is not None:
        defaults = entry if isinstance(entry, dict) else dict.fromkeys(entry)
        given = ", ".join(f"{kw}={kw}" for kw in defaults)
        params = ", ".join(f"{kw}={value!r}" for kw, value in defaults.items())
        code.entry("entry", f"*args, stream=None, {params}",
                   "return _general(*args, stream=stream)", [
                       f"if {' or '.join(f'{kw} is not {v!r}' for kw, v in defaults.items())}:",
                       f"    return _general(*args, stream=stream, {given})", *layout])
    code.add("read", reads)
    aligned = [k for k in aligned if kinds[k][0] == "array"]  # the pool aligns the rest
    if align_mask and aligned:
        code.guard([f"({' | '.join(f'p{k}' for k in aligned)}) & {align_mask}"],
                   "return _slow(args, stream)")
    if multi_device:
        env["_ctx"], env["_ctx_get"] = (
            driver.primary_context(device_id),
            driver.drv().cuCtxGetCurrent,
        )
        code.guard(["_ctx_get()[1] != _ctx"] + [f"{d} != _dev" for d in devices],
                   "return _slow(args, stream)")
    _stream_and_allocs(code, allocs, [k for k, (kind, _) in enumerate(kinds)
                                      if kind == "alloc" and k not in args.foreign])
    for j, step in enumerate(steps):
        code.add("launch", _step_lines(j, step, env, device_id))
    code.add("return", [f"return {result}"])
    return make_launcher(code)


def _runner_env(convert, slow, kernel_name: str, device_id: int) -> dict:
    """The constants every runner's text names."""
    return {
        "_nd": ARRAYS.ndarray,
        "_conv": convert,
        "_launch": driver.drv().cuLaunchKernel,
        "_last": driver.LAST_LAUNCH,
        "_cur": current_stream_handle,
        "_sh": stream_handle,
        "_streams": STREAMS_IN_USE,
        "_null": Stream.null,
        "_cur_stream": get_current_stream,
        "_stream_of": ARRAYS.stream_of,
        "_malloc": memory.malloc,
        "_new": object.__new__,
        "_pin": ARRAYS.pin_stream,
        "_slow": slow,
        "_name": kernel_name,
        "_MISS": MISS,
        "_dev": device_id,
    }


class _Arguments:
    """A runner's statements per kernel argument: for each array its type check, layout
    reads and misses, pointer (``p{k}``) and device; for each output the call allocates, its
    allocation (in the library of the array arguments, else jitkern's); for each scalar its
    type check and value (``s{k}``), converted to its parameter's dtype where needed."""

    def __init__(self, kinds, first_args, env: dict, device_id: int, multi_device: bool):
        self.types, self.pre, self.misses, self.reads, self.allocs, self.devices = (
            [], [], [], [], [], [])
        self.foreign = set()  # outputs allocated by another library (not pinned here)
        # Results follow the inputs (CuPy's arrays for CuPy's...): decided once per signature.
        results = None
        if any(kind == "alloc" for kind, _ in kinds):
            results = new_result([first_args[k] for k, (kind, _) in enumerate(kinds)
                                  if kind == "array"])
        for k, (kind, info) in enumerate(kinds):
            if kind == "array":
                self._array(k, first_args[k], env)
            elif kind == "alloc":
                self._alloc(k, info, results, env, device_id, multi_device)
            else:
                self._scalar(k, first_args[k], info, env)

    def _array(self, k: int, value, env: dict) -> None:
        t, p, m, ptr, dev = _array_read(k, value, env)
        self.types.append(t)
        self.pre += p
        self.misses += m
        self.reads.append(f"p{k} = {ptr}")
        self.devices.append(dev)

    def _alloc(self, k: int, info, results, env: dict, device_id: int, multi_device) -> None:
        shape, dtype = info
        if results is not None:
            env[f"_shape{k}"] = shape
            line = _result_line(k, results, shape, dtype, env, multi_device)
            if line is not None:
                self.allocs.append(line)
                self.foreign.add(k)
                return
        self.allocs += _output_lines(k, *info, env, device_id)

    def _scalar(self, k: int, value, dtype, env: dict) -> None:
        # The scalar's type is part of the layout (it can bind a type placeholder).
        env[f"_g{k}"], env[f"_d{k}"] = type(value), dtype
        self.types.append(f"type(a{k}) is not _g{k}")
        if type(value) is numpy.void:  # records of every dtype share the type
            env[f"_rd{k}"] = value.dtype
            self.misses.append(f"a{k}.dtype != _rd{k}")
        if scalar_code(dtype).endswith("s"):  # a record: its bytes (scalar_slot)
            self.reads += record_read(k, value, env)
        elif type(value) is dtype.type:
            self.reads.append(f"s{k} = a{k}")
        else:
            self.reads.append(f"s{k} = _conv(a{k}, _d{k}, 'argument {k}', _name)")


def _stream_and_allocs(code: LaunchSpec, allocs: list, outputs: list) -> None:
    """The launch stream, and the outputs and scratch buffers allocated on it (scratch is
    freed there after the launch); jitkern's outputs remember it, as jitkern.empty's do."""
    if not allocs:
        code.add("stream", [_stream_line("_cur", "_sh")])
        return
    code.add("stream", [
        "if stream is None:",
        "    so = _cur_stream() if _streams[0] else _null",
        "else:",
        "    so = _stream_of(stream)",
        "s = so.ptr",
    ])
    code.add("alloc", allocs)
    if outputs:
        code.add("alloc", ["if s:", *(f"    _pin(m{k}, so)" for k in outputs)])


def bind_runner(launcher: Launcher, general=None):
    """The ``run`` of a :func:`make_runner` launcher, with ``run.guarded`` and ``run.entry``
    (None unless the launcher has one), ``general`` the kernel object's general path."""
    fns = launcher.bind(_general=general)
    run = fns["run"]
    run.guarded, run.entry = fns["guarded"], fns.get("entry")
    return run


def _layout_check(unpack: str, types, pre, misses) -> list:
    """The layout check of ``guarded``/``entry``: their miss where the arguments differ."""
    lines = ["try:", f"    {unpack}", "except ValueError:", "    {miss}"]
    # Types first: the statements and layout conditions read type-specific attributes.
    if types:
        lines += [f"if {' or '.join(types)}:", "    {miss}"]
    lines += pre
    if misses:
        lines += [f"if {' or '.join(misses)}:", "    {miss}"]
    return lines


def _result_line(k: int, results, shape, dtype, env: dict, multi_device: bool) -> str | None:
    """The statement allocating output ``a{k}`` (pointer ``p{k}``) through the library of the
    arguments (``results``, arrays.interop.NewResult), on stream ``so``; None where that
    library has no ``dtype`` (the output is then a jitkern array)."""
    lib_dtype = results.dtype(dtype)
    if lib_dtype is None:
        return None
    env[f"_ldt{k}"], env[f"_lnew{k}"] = lib_dtype, results.new
    for name, value in results.consts.items():
        env[f"_l{k}_{name}"] = value
    general = f"_lnew{k}(_shape{k}, _ldt{k}, so, _dev)"
    if multi_device:
        make = general
    else:  # the common case inlined: the library's own empty() on the legacy stream
        # {dims}: the shape's extents as literals, for a library that parses them faster
        dims = ", ".join(str(int(n)) for n in shape) if shape else "()"
        fast = results.fast.format(shape=f"_shape{k}", dims=dims, dtype=f"_ldt{k}",
                                   device="_dev", c=f"_l{k}_")
        make = f"{fast} if not s else {general}"
    return f"a{k} = {make}; p{k} = {results.pointer.format(a=f'a{k}')}"


def _output_lines(k: int, shape, dtype, env: dict, device_id: int) -> list:
    """Statements making output ``a{k}``: its memory ``m{k}`` (pointer ``p{k}``) allocated on
    stream ``s``, and the ndarray over it (make(), inlined: an ndarray from trusted parts)."""
    size = int(numpy.prod(shape, dtype=numpy.int64)) if shape else 1
    strides = c_strides(shape, dtype.itemsize)
    env[f"_shape{k}"], env[f"_strides{k}"], env[f"_dt{k}"] = shape, strides, dtype
    return [
        *_alloc_lines(f"m{k}", size * dtype.itemsize, env, device_id),
        f"a{k} = _new(_nd); a{k}._shape = _shape{k}; a{k}._strides = _strides{k}; "
        f"a{k}._dtype = _dt{k}; a{k}._ptr = p{k} = m{k}.ptr; a{k}._mem = m{k}; "
        f"a{k}._base = None; a{k}._device_id = _dev; a{k}._stream = so; "
        f"a{k}._size = {size}",
    ]


def _alloc_lines(name: str, nbytes: int, env: dict, device_id: int) -> list:
    """Statements allocating ``nbytes`` as ``name`` on stream ``s``: on the legacy stream
    a block of the allocator's cache is taken straight from its free list (what
    ``memory.malloc`` would do, without the call: a ``memory.CachedBlock`` of the list's
    class, made without an ``__init__`` call, goes back to that list when collected), else
    ``memory.malloc``. (The pointer is popped first: a block made without one could not
    be finalised.)"""
    cls = memory.block_class(device_id, nbytes)
    blocks = cls._blocks
    env[f"_fl_{name}"], env[f"_pop_{name}"], env[f"_B_{name}"] = blocks, blocks.pop, cls
    return [
        f"if not s and _fl_{name}:",
        "    try:",
        f"        {name}_p = _pop_{name}()",
        "    except IndexError:",
        f"        {name} = _malloc({nbytes}, _dev, s)",
        "    else:",
        f"        {name} = _new(_B_{name}); {name}.ptr = {name}_p",
        "else:",
        f"    {name} = _malloc({nbytes}, _dev, s)",
    ]


def _step_lines(j: int, step: Step, env: dict, device_id: int) -> list:
    handle = step.fn.handle(device_id)
    layout = step.fn.param_layout(device_id)  # from the CUBIN: no driver probing
    n_dyn = len(step.dynamic)
    buf = Buffer(layout, step.static, n_dyn)
    codes = [code for _expr, code in step.dynamic]
    env[f"_pack{j}"] = struct.Struct(buf.dynamic_format(layout[:n_dyn], codes)).pack_into
    env[f"_buf{j}"], env[f"_params{j}"], env[f"_h{j}"], env[f"_keep{j}"] = (
        buf.raw,
        buf.params_ptr,
        handle,
        buf,
    )
    exprs = ", ".join(expr for expr, _code in step.dynamic)
    (gx, gy, gz), (bx, by, bz) = step.grid, step.block
    lines = [f"_pack{j}(_buf{j}, 0, {exprs})"]
    lines.append(_launch_line(f"_h{j}", f"{gx}, {gy}, {gz}, {bx}, {by}, {bz}", "0",
                              f"_params{j}", False))
    if j == 0:  # nothing ran yet: the general path diagnoses the error
        lines += ["if err:", "    return _slow(args, stream)"]
    else:
        env["_check"] = driver.check
        lines += ["if err:", f"    _check((err,), 'launching {step.fn.name}')"]
    return lines


def scalar_slot(k: int, dtype) -> tuple:
    """The dynamic slot (expression, struct code) of scalar argument ``k`` (a record's
    ``s{k}`` is its bytes already: recordbytes.record_read)."""
    code = scalar_code(dtype)
    if code.endswith("s"):
        return f"s{k}", code
    expr = f"s{k}.real, s{k}.imag" if len(code) == 2 else f"s{k}"
    return expr, code
