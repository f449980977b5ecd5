"""The launch hot path of the string kernels: one generated function per call layout.

A layout's launch is fixed except for pointers and scalars, so its parameter
buffer is laid out once from the driver's parameter offsets (``cuFuncGetParamInfo``),
the static part (element count, shape/stride structs) written once, and each call
packs only the dynamic slots with one ``struct.pack_into`` before ``cuLaunchKernel``.
Plain and fast on purpose; the general path (``Function.launch``) covers the rest.
"""

from __future__ import annotations

import ctypes
import struct

import numpy

from ..arrays import empty, ndarray, pointer_of
from ..backend import driver
from ..backend.codegen import define
from ..backend.device import current_stream_handle, stream_handle
from ..errors import JitkernRuntimeError, JitkernTypeError
from .params import HANDLE_DTYPES, convert_scalar

HANDLE_DTYPE_SET = frozenset(HANDLE_DTYPES.values())

_CODES = {
    "?": "?",
    "b": "b",
    "B": "B",
    "h": "h",
    "H": "H",
    "i": "i",
    "I": "I",
    "l": "q",
    "L": "Q",
    "q": "q",
    "Q": "Q",
    "e": "e",
    "f": "f",
    "d": "d",
    "F": "ff",
    "D": "dd",
}


def param_layout(handle) -> list[tuple[int, int]]:
    """(offset, size) of each kernel parameter, from the driver."""
    d = driver.drv()
    out = []
    while True:
        err, offset, size = d.cuFuncGetParamInfo(handle, len(out))
        if err != 0:
            return out
        out.append((int(offset), int(size)))


class Buffer:
    """A parameter buffer with its ``void*[]``, the static tail written once."""

    def __init__(self, layout, static_values, first_static: int):
        total = max((o + s for o, s in layout), default=0)
        self.raw = ctypes.create_string_buffer(max(total, 8))
        base = ctypes.addressof(self.raw)
        self.pointers = (ctypes.c_void_p * max(len(layout), 1))(*[base + o for o, _ in layout])
        self.params_ptr = ctypes.addressof(self.pointers)
        for (offset, size), value in zip(layout[first_static:], static_values):
            data = _bytes_of(value)
            if len(data) != size:
                raise JitkernRuntimeError(
                    f"internal: static parameter of {len(data)} bytes for a {size}-byte slot"
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
    raise JitkernTypeError(f"internal: cannot pre-pack {type(value).__name__}")


def scalar_code(dtype: numpy.dtype) -> str:
    if dtype in HANDLE_DTYPE_SET:  # a texture/surface handle, converted to numpy.uint64
        return "Q"
    if dtype.fields is not None:  # a record (numpy.void): its bytes
        return f"{dtype.itemsize}s"
    return _CODES[dtype.char]


MISS = object()  # what a guarded runner returns when the arguments are not its layout's


def make_runner(
    *,
    kernel_name,
    fn,
    device_id,
    grid,
    block,
    kinds,
    static,
    result,
    slow,
    align_mask=0,
    aligned=(),
    first_args=None,
):
    """Generate ``run(args, stream)`` for one layout.

    ``kinds``: per kernel parameter, ``("array", None)``, ``("scalar", dtype)`` or
    ``("alloc", (shape, dtype))`` for an output the call allocates; ``static``: the
    values of the parameters after them (element count, structs); ``result``: the
    Python expression returned (over names ``o0``, ``o1``, ...); ``slow(args,
    stream)``: the general path, taken for a different argument count, a pointer
    not aligned to ``align_mask + 1`` (parameters ``aligned``), or a failed launch
    (which it then diagnoses).

    With ``first_args`` (all arrays jitkern's), ``run.guarded`` is also made: the same
    launch behind a check that each argument has the very dtype, shape and strides
    objects (or scalar type) of ``first_args``. It returns :data:`MISS` otherwise, so
    a repeated call skips building the layout key.
    """
    handle = fn.handle(device_id)
    layout = param_layout(handle)
    n_dyn = len(kinds)
    buf = Buffer(layout, static, n_dyn)
    codes, exprs, lines = [], [], []
    env = {
        "_nd": ndarray,
        "_ptr": pointer_of,
        "_conv": convert_scalar,
        "_empty": empty,
        "_launch": driver.drv().cuLaunchKernel,
        "_h": handle,
        "_params": buf.params_ptr,
        "_buf": buf.raw,
        "_cur": current_stream_handle,
        "_sh": stream_handle,
        "_slow": slow,
        "_name": kernel_name,
        "_fn": fn,
        "_keep": buf,
    }
    n_args = sum(1 for kind, _ in kinds if kind != "alloc")
    names = [f"a{k}" for k in range(n_args)]
    for k, (kind, info) in enumerate(kinds):
        if kind == "array":
            lines.append(f"    p{k} = a{k}._ptr if type(a{k}) is _nd else _ptr(a{k})")
            codes.append("Q")
            exprs.append(f"p{k}")
        elif kind == "alloc":
            shape, dtype = info
            env[f"_shape{k}"], env[f"_dt{k}"] = shape, dtype
            lines.append(f"    a{k} = _empty(_shape{k}, _dt{k}); p{k} = a{k}._ptr")
            codes.append("Q")
            exprs.append(f"p{k}")
        else:
            env[f"_t{k}"], env[f"_d{k}"] = info.type, info
            lines.append(
                f"    s{k} = a{k} if type(a{k}) is _t{k} else "
                f"_conv(a{k}, _d{k}, 'argument {k}', _name)"
            )
            code = scalar_code(info)
            codes.append(code)
            if code.endswith("s"):
                exprs.append(f"s{k}.tobytes()")
            else:
                exprs.append(f"s{k}.real, s{k}.imag" if len(code) == 2 else f"s{k}")
    env["_pack"] = struct.Struct(buf.dynamic_format(layout[:n_dyn], codes)).pack_into
    gx, gy, gz = grid
    bx, by, bz = block
    body = [
        *lines,
        *(
            [
                f"    if ({' | '.join(f'p{k}' for k in aligned)}) & {align_mask}:",
                "        return _slow(args, stream)",
            ]
            if align_mask and aligned
            else []
        ),
        "    s = _cur() if stream is None else _sh(stream)",
        f"    _pack(_buf, 0, {', '.join(exprs)})",
        f"    err, = _launch(_h, {gx}, {gy}, {gz}, {bx}, {by}, {bz}, 0, s, _params, 0)",
        "    if err:",
        "        return _slow(args, stream)",
        f"    return {result}",
    ]
    unpack = f"    {', '.join(names)}, = args" if names else "    pass"
    src = [
        "def run(args, stream):",
        f"    if len(args) != {n_args}:",
        "        return _slow(args, stream)",
        unpack,
        *body,
    ]
    guards = _guards(first_args, env) if first_args is not None else None
    if guards is not None:
        env["_MISS"] = MISS
        src += [
            "def guarded(args, stream):",
            f"    if len(args) != {n_args}:",
            "        return _MISS",
            unpack,
            *guards,
            *body,
        ]
    run = define("\n".join(src) + "\n", f"<jitkern launch {kernel_name}>", env, "run")
    run.guarded = env.get("guarded")
    return run


def _guards(first_args, env) -> list[str] | None:
    lines = []
    for k, value in enumerate(first_args):
        cls = type(value)
        if cls is ndarray:
            env[f"_gd{k}"], env[f"_gs{k}"], env[f"_gt{k}"] = (
                value._dtype,
                value._shape,
                value._strides,
            )
            lines.append(
                f"    if type(a{k}) is not _nd or a{k}._dtype is not _gd{k} or "
                f"a{k}._shape is not _gs{k} or a{k}._strides is not _gt{k}:"
            )
        elif cls is numpy.void:
            return None  # records of different dtypes share the type: no identity guard
        elif cls in (bool, int, float, complex) or isinstance(value, numpy.generic):
            env[f"_gc{k}"] = cls
            lines.append(f"    if type(a{k}) is not _gc{k}:")
        else:
            return None
        lines.append("        return _MISS")
    return lines
