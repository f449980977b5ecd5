"""The one generator of launch code: per call signature, one plain Python function.

Every kernel kind launches through a function generated here from a description of its
slots (what each argument packs to: scalars by value, arrays by the pointer their row of
:mod:`.args` reads, allocated outputs, handles), the guards that say the arguments still
have the signature the function was made for, and one or more launch steps:

- :func:`make_packers`: ``pack(args)``/``pack_if_same(args)`` of a :class:`~.launch.Plan`
  (the general path of :meth:`~.module.Function.launch`);
- :func:`make_fast_launcher`: the whole launch of RawKernel and ``@rawkernel`` kernels
  (``run`` for ``k(grid, block, args)``, ``star`` for ``k[grid, block](*args)``);
- :func:`make_jit_runner`: a JIT kernel whose launch appends derived shape/stride
  parameters (or runs on several GPUs): its checks, then the Function's own path;
- :func:`make_bound_runner`: a bound launch, every value fixed (and
  :func:`make_slot_packer`, its ``set_arg``);
- :func:`make_runner`: ElementwiseKernel and ReductionKernel: arrays read through their
  library's cheapest attributes, outputs and scratch allocated inline, several steps.

They share the pieces written once below: the struct-code table, :class:`ParamBuffer`, the
stream statement and the launch statement. Each is compiled once per text and kept in the
disk cache (``codegen.define``); :func:`~.codegen.launch_source` shows the text. Plain and
fast on purpose (this is the launch hot path: a launch costs about 1.2x a bare
``cuLaunchKernel``); every miss goes back to the caller's general path.
"""

from __future__ import annotations

import ctypes
import struct
from typing import NamedTuple

import numpy

from ..errors import InternalError
from . import driver, memory
from ..arrays.layout import c_strides
from .args import ARRAYS, array_read, device_getter, device_template, fast_read, new_result
from .codegen import define
from .device import STREAMS_IN_USE, Stream, current_stream_handle, get_current_stream, stream_handle
from ..handles import HANDLE_CTYPES
from .recordbytes import STRUCT_CODES, record_read

# Texture/surface handles given for a scalar parameter: the record dtypes the string
# kernels give them (compiler.strings.params.HANDLE_DTYPES), packed as their uint64.
HANDLE_DTYPE_SET = frozenset(numpy.dtype([(ctype, "<u8")]) for ctype in HANDLE_CTYPES.values())

#: struct codes -> the C type's name (what error messages call a slot)
CODE_NAMES = {code: numpy.dtype(char).name for char, code in STRUCT_CODES.items()}

class ParamBuffer:
    """A parameter buffer and the ``void*[]`` of its parameters' addresses (what
    ``cuLaunchKernel`` takes as ``kernelParams``): the one buffer type of every launcher."""

    __slots__ = ("params_ptr", "pointers", "raw")

    def __init__(self, offsets, total: int):
        self.raw = ctypes.create_string_buffer(max(total, 8))
        base = ctypes.addressof(self.raw)
        self.pointers = (ctypes.c_void_p * max(len(offsets), 1))(*[base + o for o in offsets])
        self.params_ptr = ctypes.addressof(self.pointers)



# ---------------------------------------------------------------------------
# The one generator: a plan of entry points and slots, emitted as one text


class Entry(NamedTuple):
    """One function a plan defines: ``def name(params):``, its own first statements (how it
    gets its arguments as ``a0, a1, ...`` and the launch config) and what a miss does in it."""

    name: str
    params: str
    prelude: tuple
    miss: str


class CodePlan:
    """A generated launcher as data: entry points (``run``, ``star``, ``guarded``, ``entry``,
    ``pack``, ...) that share one body of slots, emitted in order. A slot is a kind, what
    it does in the launch, and its statements (relative to the body's indentation):

    ``read``
        unpack the arguments, read pointers (``p{k}``), layouts (``a{k}_i``), scalars;
    ``guard``
        conditions that send the call to its entry's miss (``{miss}`` in a statement);
    ``stream``
        the launch stream ``s`` (and ``so``, its Stream, where outputs are allocated);
    ``alloc``
        allocated outputs and scratch buffers (``m{k}``/``a{k}``, ``t{j}``/``q{j}``);
    ``pack``, ``launch``
        write the parameter buffer(s), call the driver, handle its error;
    ``return``
        the entry's result.

    A slot limited to some entries (``only``) is how two entries differ past their prelude
    (the call form reads its dims from a memo, the subscript form has them in its config).
    Every kernel kind fills a plan (the ``make_*`` functions below); :meth:`define` is the
    one emitter, through ``codegen.define`` (compiled once per text, kept on disk).
    """

    def __init__(self, filename: str, env: dict):
        self.filename, self.env = filename, env
        self.entries: list[Entry] = []
        self.slots: list[tuple] = []

    def entry(self, name: str, params: str, miss: str, prelude=()) -> None:
        self.entries.append(Entry(name, params, tuple(prelude), miss))

    def add(self, kind: str, lines, only=None) -> None:
        self.slots.append((kind, list(lines), only))

    def guard(self, conditions, miss: str = "{miss}", only=None) -> None:
        if conditions:
            self.add("guard", [f"if {' or '.join(conditions)}:", f"    {miss}"], only)

    def source(self) -> str:
        out = []
        for e in self.entries:
            body = list(e.prelude)
            for _kind, lines, only in self.slots:
                if only is None or e.name in only:
                    body += lines
            out.append(f"def {e.name}({e.params}):")
            out += ["    " + line.replace("{miss}", e.miss) for line in body or ["pass"]]
        return "\n".join(out) + "\n"

    def define(self, name: str):
        """Compile the plan's text and return its function ``name`` (the others are in
        ``self.env``)."""
        return define(self.source(), self.filename, self.env, name)


def _stream_line(current: str = "_current", of: str = "_stream_of") -> str:
    """The statement setting ``s``, the launch's stream handle: for ``stream=None`` the
    calling thread's current stream (0, the legacy stream, unless one was made current),
    else the given stream's handle."""
    return f"s = ({current}() if _streams[0] else 0) if stream is None else {of}(stream)"


def _launch_line(handle: str, dims: str, shared_mem: str, params: str, cooperative: bool) -> str:
    """``err, = cuLaunchKernel(...)`` (cuLaunchCooperativeKernel takes no ``extra``)."""
    extra = "" if cooperative else ", 0"
    # _last: runtime.driver.LAST_LAUNCH (a fault's error names the last kernel launched)
    return (f"_last[0] = {handle}; "
            f"err, = _launch({handle}, {dims}, {shared_mem}, s, {params}{extra})")


_NOT_GIVEN = object()  # the default of a subscript launcher's positional parameters


def _given(head: tuple, more: tuple) -> tuple:
    """The arguments a subscript launcher was given (its parameters not left at default)."""
    return tuple(v for v in head if v is not _NOT_GIVEN) + more


def _argument_slots(plan: CodePlan, slots, types) -> tuple[list, list, list]:
    """Put each packing slot's helpers in the plan's env: (pack expressions, type checks,
    array reads), over ``a0, a1, ...``. The reads (ArrayRead.bind) bind ``a{i}_i``; they
    run after the type checks."""
    exprs, checks, binds = [], [], []
    for i, slot in enumerate(slots):
        fields = {"a": f"a{i}"}
        for key, value in slot.env.items():
            fields[key] = f"_{key}_{i}"
            plan.env[fields[key]] = value
        exprs.append(slot.expr.format(**fields))
        if slot.bind is not None:
            binds.append(slot.bind.format(**fields))
        plan.env[f"_T{i}"] = types[i]
        checks.append(f"type(a{i}) is not _T{i}")
    return exprs, checks, binds


def _unpack(n: int, source: str = "args") -> str:
    return f"{''.join(f'a{i}, ' for i in range(n)) or '() '}= {source}"


# ---------------------------------------------------------------------------
# Packers and whole launches of RawKernel, the JIT and Function.fast


def make_packers(fmt: str, slots: list[Slot], types: tuple, buffer):
    """Generate ``pack(args)`` and ``pack_if_same(args) -> bool`` for one signature.

    ``pack_if_same`` first checks each argument's type with ``is`` (cheaper than
    building a key), so a kernel launched again with the same argument types skips
    the plan lookup entirely. This is the launch hot path.
    """
    plan = CodePlan("<jitkern launch plan>",
                    {"_pack_into": struct.Struct(fmt).pack_into, "_buf": buffer})
    exprs, checks, binds = _argument_slots(plan, slots, types)
    unpack = [f"{', '.join(f'a{i}' for i in range(len(slots)))}, = args"] if slots else []
    plan.entry("pack", "args", "", unpack)
    plan.entry("pack_if_same", "args", "return False",
               [f"if len(args) != {len(slots)}:", "    return False", *unpack])
    plan.guard(checks, only={"pack_if_same"})
    plan.add("read", binds)
    plan.add("pack", [f"_pack_into(_buf, 0{''.join(', ' + e for e in exprs)})"])
    plan.add("return", ["return True"], only={"pack_if_same"})
    pack = plan.define("pack")
    return pack, plan.env["pack_if_same"]


def make_fast_launcher(plan: "Plan", launch, handle, dims: dict, streams_in_use: list, fail,
                       *, fallback=None, positional: bool = False, guards=(), guard_env=None,
                       stream_of=None, current_stream=None, device=None, star=None,
                       block_dims=None, checked_dims=None):
    """Generate the whole launch for one signature as one function.

    ``dims`` and ``block_dims``: the memos of checked grids and blocks (a miss on either
    takes the general path, which checks the value against CUDA's limits).

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

    ``star`` (with ``fallback`` and ``positional``): also generate ``run.star(config,
    *args, **kwargs)``, the ``kernel[grid, block](*args)`` form of the same launch, which
    calls ``star`` with its own arguments when keywords are given (``run.star_configs``
    caches the bound methods kernels.base's ``__getitem__`` returns). ``config`` is ``(gx, gy,
    gz, bx, by, bz, shared_mem, stream, kernel, grid, block)``, the dims normalised and
    checked once by ``checked_dims(grid, block)`` (kept as ``run.star.dims``), so the
    subscript form looks up no dims per call; its arguments are positional parameters.

    ``device`` (machines with several GPUs): ``(device_id, context, get_current)``. The
    launcher then also checks that ``get_current()`` (cuCtxGetCurrent) returns
    ``context``, the context ``handle`` belongs to, and that every array argument is on
    ``device_id`` (an array type without a known device getter is a miss).
    """
    env = {"_pack_into": struct.Struct(plan.fmt).pack_into, "_buf": plan._buffer}
    code = CodePlan("<jitkern fast launch>", env)
    exprs, checks, binds = _argument_slots(code, plan.slots, plan.types)
    env.update(guard_env or {})
    env.update(_launch=launch, _h=handle, _params=plan.params_ptr, _dims=dims,
               _last=driver.LAST_LAUNCH,
               _bdims=dims if block_dims is None else block_dims,
               _streams=streams_in_use, _fail=fail, _slow=fallback,
               _stream_of=stream_of, _current=current_stream, _N=_NOT_GIVEN, _given=_given)
    n = len(plan.slots)
    names = ", ".join(f"a{i}" for i in range(n))
    given = f"({names},)" if n else "()"
    if fallback is None:
        code.entry("run", "grid, block, args, shared_mem, stream", "return False")
        done = "return True"
    else:
        if positional:
            tail = "shared_mem, stream"
            code.entry("run", "grid, block, args, shared_mem=0, stream=None, *, cluster=None",
                       f"return _slow(grid, block, args, {tail})")
        else:
            tail = "shared_mem=shared_mem, stream=stream"
            code.entry("run", "grid, block, args, *, shared_mem=0, stream=None, cluster=None",
                       f"return _slow(grid, block, args, {tail})")
        code.slots.append(("guard", [
            "if cluster is not None:  # thread-block clusters: the general path",
            f"    return _slow(grid, block, args, {tail}, cluster=cluster)"], {"run"}))
        done = "return None"
        if star is not None:
            # kernel[grid, block](*args): the same body, called by the partial __getitem__
            # returns (kernels.base), so the subscript form costs what the call form does.
            env["_star_slow"] = star
            params = "".join(f", a{i}=_N" for i in range(n))
            more = f"more or a{n - 1} is _N" if n else "more"
            code.entry("star", f"config{params}, /, *more, **kwargs",
                       f"return _slow(grid, block, {given}, {tail})", [
                           "gx, gy, gz, bx, by, bz, shared_mem, stream, kernel, grid, block "
                           "= config",
                           f"if kwargs or {more}:",
                           "    return _star_slow(kernel, grid, block, shared_mem, stream, "
                           f"*_given({given}, more), **kwargs)"])
    if stream_of is not None and current_stream is not None:
        code.add("stream", [_stream_line()])
    else:
        code.add("stream", ["if stream is not None or _streams[0]:", "    {miss}", "s = 0"])
    # Unpacking (of args, and of the memoised launch dims) raises on a mismatch,
    # which costs nothing when it does not happen; len() and indexing would cost
    # on every launch. The subscript form has its arguments and dims already.
    code.add("read", ["try:", f"    {_unpack(n)}", "    gx, gy, gz = _dims[grid]",
                      "    bx, by, bz = _bdims[block]",
                      "except (TypeError, ValueError, KeyError):", "    {miss}"],
             only={"run"})
    # The array reads come after the type checks (they may use type-specific attributes)
    # and before the guards (which may read the layout from ``a{i}_i``): each is a
    # condition that is never true, so the ``or`` chain evaluates it and goes on.
    conditions = ([*checks, *(f"{b} is None" for b in binds), *(f"not ({g})" for g in guards)]
                  if n else [])
    if device is not None:
        conditions += _device_conditions(env, device, plan.slots, plan.types)
    code.guard(conditions)
    # A value that does not pack (a dataclass field of another kind) is a miss: the
    # general path names it. The try costs nothing when nothing raises.
    env["_pack_error"] = struct.error
    code.add("pack", ["try:", f"    _pack_into(_buf, 0{''.join(', ' + e for e in exprs)})",
                      "except _pack_error:", "    {miss}"])
    code.add("launch", [
        _launch_line("_h", "gx, gy, gz, bx, by, bz", "shared_mem", "_params",
                     launch.__name__ != "cuLaunchKernel"),
        "if err:",
        "    _fail(err, (gx, gy, gz), (bx, by, bz), shared_mem, s)"])
    code.add("return", [done])
    run = code.define("run")
    if star is not None:
        run.star, run.star_configs = env["star"], {}
        run.star.dims = checked_dims  # what kernels.base normalises the config with
    return run


def _device_conditions(env: dict, device, slots, types) -> list[str]:
    """Misses of a launcher on a machine with several GPUs: another current context, or
    an array argument on another device (or whose device cannot be read)."""
    device_id, context, get_current = device
    env.update(_ctx=context, _ctx_get=get_current)
    conditions = ["_ctx_get()[1] != _ctx"]
    for i, (slot, cls) in enumerate(zip(slots, types)):
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
        conditions.append(f"{template.format(a=f'a{i}')} != {int(device_id)}")
    return conditions


# ---------------------------------------------------------------------------
# The JIT's launcher for signatures with derived parameters (and for several GPUs)


def _launch_reads(classes: tuple, samples: tuple, env: dict) -> list[str]:
    """The args.ArrayRead binds of the arguments that have one (for ``make_jit_runner``,
    which packs through the Function and so has no Slot to take them from)."""
    binds = []
    for i, (cls, a) in enumerate(zip(classes, samples)):
        read = array_read(cls, a)
        if read is None:
            continue
        fields = {"a": f"a{i}"}
        for key, value in read.env.items():
            fields[key] = env_name = f"_{key}_r{i}"
            env[env_name] = value
        binds.append(f"{read.bind.format(**fields)} is not None")
    return binds


def make_jit_runner(classes: tuple, guards: list, guard_env: dict, function, extras,
                    cooperative: bool, general, samples: tuple = (), *, star):
    """Generate ``run(grid, block, args, shared_mem=0, stream=None)`` for one signature.

    It checks ``args`` against the signature (types, then ``guards``) and launches through
    the Function's own fast path; on a mismatch ``general``, the kernel's general launch,
    handles the call. ``function`` is the Function, or (on machines with several GPUs)
    a function returning the current device's. Used until the Function has a packing plan
    for this signature; then the kernel's call becomes the Function's whole-launch
    function with the same guards (see JitKernel._launch).
    """
    env = dict(guard_env, _F=function, _extras=extras, tuple=tuple, _general=general)
    code = CodePlan("<jitkern jit launch>", env)
    n = len(classes)
    terms = []
    for i, cls in enumerate(classes):
        env[f"T{i}"] = cls
        terms.append(f"type(a{i}) is T{i}")
    terms += _launch_reads(classes, samples, env)  # after the type checks, before the guards
    terms += guards
    miss = "return _general(grid, block, args, shm, stream, cluster=cluster)"
    code.entry("run", "grid, block, args, shm=0, stream=None, *, cluster=None", miss, [
        f"if cluster is not None or type(args) is not tuple or len(args) != {n}:",
        "    {miss}"])
    # kernel[grid, block](*args) (kernels.base.KernelPartial.__getitem__): the same body
    env["_star_slow"] = star  # kernels.base.launch_star: the general star form
    code.entry("star", "config, /, *args, **kwargs", miss, [
        "_gx, _gy, _gz, _bx, _by, _bz, shm, stream, kernel, grid, block = config",
        f"if kwargs or len(args) != {n}:",
        "    return _star_slow(kernel, grid, block, shm, stream, *args, **kwargs)",
        "cluster = None"])
    if n:
        code.add("read", [f"{', '.join(f'a{i}' for i in range(n))}, = args"])
    if terms:
        code.guard([f"not ({' and '.join(terms)})"])
    if extras is not None:
        code.add("read", ["args = args + _extras(args)"])
    fetch = "_F()" if callable(function) else "_F"  # several GPUs: each device's Function
    code.add("launch", [f"f = {fetch}", "fast = f.fast",
                        "if fast is None or not fast(grid, block, args, shm, stream):",
                        f"    f.launch(grid, block, args, shm, stream, {cooperative})"])
    run = code.define("run")
    run.star, run.star_configs = env["star"], {}
    run.star.dims = None  # the Function's launch checks the dims
    return run


# ---------------------------------------------------------------------------
# Bound launches


def make_bound_runner(function, state, plan, dims, shared_mem, stream, cooperative):
    """The generated call of a bound launch: every value a constant but the stream when
    it follows the current one."""
    d = driver.drv()
    launch = d.cuLaunchCooperativeKernel if cooperative else d.cuLaunchKernel
    (gx, gy, gz), (bx, by, bz) = dims

    def fail(err, s):
        function._launch_failed(err, state, plan, dims[0], dims[1], shared_mem, s, cooperative)

    env = {"_launch": launch, "_h": state.handle, "_params": plan.params_ptr, "_fail": fail,
           "_last": driver.LAST_LAUNCH,
           "_streams": STREAMS_IN_USE, "_current": current_stream_handle, "_plan": plan}
    code = CodePlan(f"<jitkern bound launch {function.name}>", env)
    # Keyword-only defaults make every name a fast local (the call passes none of them).
    code.entry("run", "*, _launch=_launch, _h=_h, _params=_params, _fail=_fail, "
               "_streams=_streams, _current=_current", "")
    if stream is None:
        code.add("stream", ["s = _current() if _streams[0] else 0"])
    else:
        code.add("stream", [f"s = {int(stream)}"])
    code.add("launch", [
        _launch_line("_h", f"{gx}, {gy}, {gz}, {bx}, {by}, {bz}", str(shared_mem), "_params",
                     cooperative),
        "if err:",
        "    _fail(err, s)"])
    return code.define("run")


def make_slot_packer(slot, buffer, offset: int):
    """``pack(a)``: write one argument, of the kind ``slot`` describes, at ``offset`` of
    ``buffer`` (a bound launch's ``set_arg``)."""
    env = {"_pack_into": struct.Struct("<" + slot.codes).pack_into, "_buf": buffer,
           "_off": offset}
    code = CodePlan("<jitkern bound argument>", env)
    fields = {"a": "a"}
    for key, helper in slot.env.items():
        fields[key] = f"_{key}"
        env[f"_{key}"] = helper
    code.entry("pack", "a", "")
    if slot.bind:
        code.add("read", [slot.bind.format(**fields)])  # args.ArrayRead
    code.add("pack", [f"_pack_into(_buf, _off, {slot.expr.format(**fields)})"])
    return code.define("pack")


# ---------------------------------------------------------------------------
# ElementwiseKernel and ReductionKernel


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
    ``entry``: ``(keywords, general)``: also generate ``run.entry(*args, stream=None,
    **keywords)``, the kernel object's whole call for this layout (a kernel object that is
    a partial calls it directly): ``general(*args, stream=..., **keywords)`` on a miss or
    when a keyword is not None.
    """
    env = {
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
        "_CB": memory.CachedBlock,
        "_new": object.__new__,
        "_pin": ARRAYS.pin_stream,
        "_slow": slow,
        "_name": kernel_name,
        "_MISS": MISS,
        "_dev": device_id,
    }
    code = CodePlan(f"<jitkern launch {kernel_name}>", env)
    n_args = sum(1 for kind, _ in kinds if kind != "alloc")
    unpack = f"{', '.join(f'a{k}' for k in range(n_args))}, = args" if n_args else "pass"
    types, pre, misses, reads, allocs, devices = [], [], [], [], [], []
    # Results follow the inputs (CuPy's arrays for CuPy's...): decided once per signature.
    results = None
    if any(kind == "alloc" for kind, _ in kinds):
        results = new_result([first_args[k] for k, (kind, _) in enumerate(kinds)
                                     if kind == "array"])
    foreign = set()  # outputs allocated by another library (not pinned to the stream here)
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
            if results is not None:
                env[f"_shape{k}"] = shape
                line = _result_line(k, results, shape, dtype, env, multi_device)
                if line is not None:
                    allocs.append(line)
                    foreign.add(k)
                    continue
            allocs += _output_lines(k, *info, env, device_id)
        else:
            # The scalar's type is part of the layout (it can bind a type placeholder).
            env[f"_g{k}"], env[f"_d{k}"] = type(first_args[k]), info
            types.append(f"type(a{k}) is not _g{k}")
            if type(first_args[k]) is numpy.void:  # records of every dtype share the type
                env[f"_rd{k}"] = first_args[k].dtype
                misses.append(f"a{k}.dtype != _rd{k}")
            if scalar_code(info).endswith("s"):  # a record: its bytes (scalar_slot)
                reads += record_read(k, first_args[k], env)
            elif type(first_args[k]) is info.type:
                reads.append(f"s{k} = a{k}")
            else:
                reads.append(f"s{k} = _conv(a{k}, _d{k}, 'argument {k}', _name)")
    for j, nbytes in enumerate(temps):
        allocs += _alloc_lines(f"t{j}", int(nbytes), env, device_id)
        allocs.append(f"q{j} = t{j}.ptr")
    layout = _layout_check(unpack, types, pre, misses)
    code.entry("run", "args, stream", "return _slow(args, stream)",
               [f"if len(args) != {n_args}:", "    {miss}", unpack, *pre])
    code.entry("guarded", "args, stream", "return _MISS", layout)
    if entry is not None:
        keywords, env["_general"] = entry
        given = ", ".join(f"{kw}={kw}" for kw in keywords)
        code.entry("entry", f"*args, stream=None, {', '.join(f'{kw}=None' for kw in keywords)}",
                   "return _general(*args, stream=stream)", [
                       f"if {' or '.join(f'{kw} is not None' for kw in keywords)}:",
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
    if allocs:
        # Outputs and scratch buffers are ordered on the launch stream (scratch is freed
        # there after the launch); the outputs remember it, as jitkern.empty's do.
        code.add("stream", [
            "if stream is None:",
            "    so = _cur_stream() if _streams[0] else _null",
            "else:",
            "    so = _stream_of(stream)",
            "s = so.ptr",
        ])
        code.add("alloc", allocs)
        outputs = [k for k, (kind, _) in enumerate(kinds) if kind == "alloc" and k not in foreign]
        if outputs:
            code.add("alloc", ["if s:", *(f"    _pin(m{k}, so)" for k in outputs)])
    else:
        code.add("stream", [_stream_line("_cur", "_sh")])
    for j, step in enumerate(steps):
        code.add("launch", _step_lines(j, step, env, device_id))
    code.add("return", [f"return {result}"])
    run = code.define("run")
    run.guarded = env["guarded"]
    run.entry = env.get("entry")
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
    ``memory.malloc`` would do, without the call; a ``memory.CachedBlock`` goes back to that
    list when collected), else ``memory.malloc``."""
    blocks, bucket = memory.free_list(device_id, 0, nbytes)
    env[f"_fl_{name}"], env[f"_pop_{name}"] = blocks, blocks.pop
    return [
        f"if not s and _fl_{name}:",
        "    try:",
        f"        {name} = _CB(_pop_{name}(), {nbytes}, _dev, _fl_{name}, {bucket})",
        "    except IndexError:",
        f"        {name} = _malloc({nbytes}, _dev, s)",
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
