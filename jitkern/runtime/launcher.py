"""The launch hot path of the string kernels: one generated function per call layout.

ElementwiseKernel and ReductionKernel decide everything about a call from its layout
(argument types, dtypes, shapes, strides) once; what is left per call is reading the
pointers, allocating outputs, packing and ``cuLaunchKernel``. That is generated here
as one plain Python function per layout, in the same way (and through the same
``backend.codegen.define``) as the launchers of RawKernel and the JIT in
``backend.launch``: each array is read through its library's cheapest attribute
(``interop.fast_read``; jitkern's own arrays through their slots), each parameter
buffer is laid out once from the kernel's offsets (``Function.param_layout``) with its
static tail (element counts, shape/stride structs) written once, and a call packs
only the dynamic slots with one ``struct.pack_into`` per launch.

Two functions are made per layout: ``run(args, stream)``, called once the caller has
matched the layout by its key, and ``guarded(args, stream)``, which checks the layout
itself (a few attribute reads per array) and returns :data:`MISS` when it differs, so
a repeated call skips building the key. Plain and fast on purpose; the kernels'
general paths cover the rest (misaligned pointers, launch errors).
"""

from __future__ import annotations

import ctypes
import struct

import numpy

from ..arrays import interop, ndarray
from ..arrays.core import pin_stream, stream_of
from ..arrays.layout import c_strides
from . import driver, memory
from .codegen import define
from .launch import STRUCT_CODES, ParamBuffer
from .device import STREAMS_IN_USE, Stream, current_stream_handle, get_current_stream, stream_handle
from ..errors import InternalError
from ..compiler.strings.params import HANDLE_DTYPES, convert_scalar

HANDLE_DTYPE_SET = frozenset(HANDLE_DTYPES.values())

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
    if type(value) is ndarray:
        env[f"_D{k}"], env[f"_S{k}"], env[f"_ST{k}"] = value._dtype, value._shape, value._strides
        misses = [
            f"{a}._dtype is not _D{k}",
            f"({a}._shape is not _S{k} and {a}._shape != _S{k})",
            f"({a}._strides is not _ST{k} and {a}._strides != _ST{k})",
        ]
        return f"type({a}) is not _nd", [], misses, f"{a}._ptr", f"{a}._device_id"
    read = interop.fast_read(value)
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
    ``entry``: ``(keywords, general)``: also generate ``run.entry(*args, stream=None,
    **keywords)``, the kernel object's whole call for this layout (a kernel object that is
    a partial calls it directly): ``general(*args, stream=..., **keywords)`` on a miss or
    when a keyword is not None.
    """
    env = {
        "_nd": ndarray,
        "_conv": convert_scalar,
        "_launch": driver.drv().cuLaunchKernel,
        "_cur": current_stream_handle,
        "_sh": stream_handle,
        "_streams": STREAMS_IN_USE,
        "_null": Stream.null,
        "_cur_stream": get_current_stream,
        "_stream_of": stream_of,
        "_malloc": memory.malloc,
        "_MP": memory.MemoryPointer,
        "_new": object.__new__,
        "_pin": pin_stream,
        "_slow": slow,
        "_name": kernel_name,
        "_MISS": MISS,
        "_dev": device_id,
    }
    n_args = sum(1 for kind, _ in kinds if kind != "alloc")
    names = [f"a{k}" for k in range(n_args)]
    types, pre, misses, reads, allocs, devices = [], [], [], [], [], []
    for k, (kind, info) in enumerate(kinds):
        if kind == "array":
            t, p, m, ptr, dev = _array_read(k, first_args[k], env)
            types.append(t)
            pre += p
            misses += m
            reads.append(f"p{k} = {ptr}")
            devices.append(dev)
        elif kind == "alloc":
            shape, dtype = info
            size = int(numpy.prod(shape, dtype=numpy.int64)) if shape else 1
            strides = c_strides(shape, dtype.itemsize)
            env[f"_shape{k}"], env[f"_strides{k}"], env[f"_dt{k}"] = shape, strides, dtype
            allocs.append(_alloc_lines(f"m{k}", size * dtype.itemsize, env, device_id))
            # make(), inlined: an ndarray from trusted parts
            allocs.append(
                f"a{k} = _new(_nd); a{k}._shape = _shape{k}; a{k}._strides = _strides{k}; "
                f"a{k}._dtype = _dt{k}; a{k}._ptr = p{k} = m{k}.ptr; a{k}._mem = m{k}; "
                f"a{k}._base = None; a{k}._device_id = _dev; a{k}._stream = so; "
                f"a{k}._size = {size}"
            )
        else:
            # The scalar's type is part of the layout (it can bind a type placeholder).
            env[f"_g{k}"], env[f"_d{k}"] = type(first_args[k]), info
            types.append(f"type(a{k}) is not _g{k}")
            if type(first_args[k]) is numpy.void:  # records of every dtype share the type
                env[f"_rd{k}"] = first_args[k].dtype
                misses.append(f"a{k}.dtype != _rd{k}")
            if type(first_args[k]) is info.type:
                reads.append(f"s{k} = a{k}")
            else:
                reads.append(f"s{k} = _conv(a{k}, _d{k}, 'argument {k}', _name)")
    for j, nbytes in enumerate(temps):
        allocs.append(_alloc_lines(f"t{j}", int(nbytes), env, device_id))
        allocs.append(f"q{j} = t{j}.ptr")
    body = [f"    {line}" for line in reads]
    aligned = [k for k in aligned if kinds[k][0] == "array"]  # the pool aligns the rest
    if align_mask and aligned:
        body += [
            f"    if ({' | '.join(f'p{k}' for k in aligned)}) & {align_mask}:",
            "        return _slow(args, stream)",
        ]
    if multi_device:
        env["_ctx"], env["_ctx_get"] = (
            driver.primary_context(device_id),
            driver.drv().cuCtxGetCurrent,
        )
        checks = ["_ctx_get()[1] != _ctx"] + [f"{d} != _dev" for d in devices]
        body += [f"    if {' or '.join(checks)}:", "        return _slow(args, stream)"]
    if allocs:
        # Outputs and scratch buffers are ordered on the launch stream (scratch is freed
        # there after the launch); the outputs remember it, as jitkern.empty's do.
        body += [
            "    if stream is None:",
            "        so = _cur_stream() if _streams[0] else _null",
            "    else:",
            "        so = _stream_of(stream)",
            "    s = so.ptr",
        ]
        body += [f"    {line}" for line in allocs]
        if any(kind == "alloc" for kind, _ in kinds):
            body += [
                "    if s:",
                *(
                    f"        _pin(m{k}, so)"
                    for k, (kind, _) in enumerate(kinds)
                    if kind == "alloc"
                ),
            ]
    else:
        body.append("    s = (_cur() if _streams[0] else 0) if stream is None else _sh(stream)")
    for j, step in enumerate(steps):
        body += _step_lines(j, step, env, device_id)
    body.append(f"    return {result}")
    unpack = f"    {', '.join(names)}, = args" if names else "    pass"
    src = [
        "def run(args, stream):",
        f"    if len(args) != {n_args}:",
        "        return _slow(args, stream)",
        unpack,
        *(f"    {line}" for line in pre),
        *body,
        "def guarded(args, stream):",
        *_guard_lines(unpack, types, pre, misses, "return _MISS"),
        *body,
    ]
    if entry is not None:
        keywords, env["_general"] = entry
        given = ", ".join(f"{kw}={kw}" for kw in keywords)
        src += [
            f"def entry(*args, stream=None, {', '.join(f'{kw}=None' for kw in keywords)}):",
            f"    if {' or '.join(f'{kw} is not None' for kw in keywords)}:",
            f"        return _general(*args, stream=stream, {given})",
            *_guard_lines(unpack, types, pre, misses, "return _general(*args, stream=stream)"),
            *body,
        ]
    run = define("\n".join(src) + "\n", f"<jitkern launch {kernel_name}>", env, "run")
    run.guarded = env["guarded"]
    run.entry = env.get("entry")
    return run


def _guard_lines(unpack: str, types, pre, misses, miss: str) -> list:
    """The layout check of ``guarded``/``entry``: ``miss`` where the arguments differ."""
    lines = ["    try:", f"    {unpack}", "    except ValueError:", f"        {miss}"]
    # Types first: the statements and layout conditions read type-specific attributes.
    if types:
        lines += [f"    if {' or '.join(types)}:", f"        {miss}"]
    lines += [f"    {line}" for line in pre]
    if misses:
        lines += [f"    if {' or '.join(misses)}:", f"        {miss}"]
    return lines


def _alloc_lines(name: str, nbytes: int, env: dict, device_id: int) -> str:
    """Statements allocating ``nbytes`` as ``name`` on stream ``s``: on the legacy stream
    a block of the allocator's cache is taken straight from its free list (what
    ``memory.malloc`` would do, without the call), else ``memory.malloc``."""
    blocks, bucket = memory.free_list(device_id, 0, nbytes)
    env[f"_fl_{name}"] = blocks
    return (
        f"if not s and _fl_{name}:\n"
        f"        try:\n"
        f"            {name} = _MP(_fl_{name}.pop(), {nbytes}, _dev, 0, None, {bucket})\n"
        f"        except IndexError:\n"
        f"            {name} = _malloc({nbytes}, _dev, s)\n"
        f"    else:\n"
        f"        {name} = _malloc({nbytes}, _dev, s)"
    )


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
    lines = [f"    _pack{j}(_buf{j}, 0, {exprs})"]
    lines.append(
        f"    err, = _launch(_h{j}, {gx}, {gy}, {gz}, {bx}, {by}, {bz}, 0, s, _params{j}, 0)"
    )
    if j == 0:  # nothing ran yet: the general path diagnoses the error
        lines += ["    if err:", "        return _slow(args, stream)"]
    else:
        env["_check"] = driver.check
        lines += ["    if err:", f"        _check((err,), 'launching {step.fn.name}')"]
    return lines


def scalar_slot(k: int, dtype) -> tuple:
    """The dynamic slot (expression, struct code) of scalar argument ``k``."""
    code = scalar_code(dtype)
    if code.endswith("s"):
        return f"s{k}.tobytes()", code
    expr = f"s{k}.real, s{k}.imag" if len(code) == 2 else f"s{k}"
    return expr, code
