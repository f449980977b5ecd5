"""The one generator of launch code: per call signature, one plain Python function.

Every kernel kind launches through a function generated from a :class:`LaunchSpec`, the
spec it fills: its entries (``run``, ``star``, ``guarded``, ``entry``, ``pack``...), the
slots of their shared body (what each argument packs to: scalars by value, arrays by the
pointer their row of :mod:`.args` reads, allocated outputs, handles; the guards that say
the arguments still have the signature the function was made for; one or more launch
steps) and its result. :func:`make_launcher` is the one generator: the text, compiled once
per text and kept in the disk cache (``codegen.compiled``), bound per use
(:meth:`Launcher.bind`) to what differs between kernel objects (their general path, the
values their guards name). The kinds' specs:

- :func:`make_packers`: ``pack(args)``/``pack_if_same(args)`` of a :class:`~.launch.Plan`
  (the general path of :meth:`~.module.Function.launch`);
- :func:`make_fast_launcher`: the whole launch of RawKernel and ``@rawkernel`` kernels
  (``run`` for ``k(grid, block, args)``, ``star`` for ``k[grid, block](*args)``);
- :func:`make_jit_runner`: a JIT kernel whose launch appends derived shape/stride
  parameters (or runs on several GPUs): its checks, then the Function's own path;
- :func:`make_bound_runner`: a bound launch, every value fixed (and
  :func:`make_slot_packer`, its ``set_arg``);
- runtime/runner.py's ``make_runner``: ElementwiseKernel and ReductionKernel.

They share the pieces written once below: the struct-code table, :class:`ParamBuffer`, the
stream statement and the launch statement. :func:`~.codegen.launch_source` shows the text.
Plain and fast on purpose (this is the launch hot path: a launch costs about 1.2x a bare
``cuLaunchKernel``); every miss goes back to the caller's general path.
"""

from __future__ import annotations

import ctypes
import struct
from types import FunctionType
from typing import TYPE_CHECKING, NamedTuple

import numpy

from . import driver
from .args import array_read, device_getter, device_template
from .codegen import compiled, run
from .device import STREAMS_IN_USE, current_stream_handle
from .recordbytes import STRUCT_CODES

if TYPE_CHECKING:  # the packing plans these specs are made from (launch.py imports this)
    from .launch import Plan, Slot

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


class LaunchSpec:
    """A generated launcher as data, the spec every kernel kind fills: entry points (``run``,
    ``star``, ``guarded``, ``entry``, ``pack``, ...) that share one body of slots, emitted
    in order. A slot is a kind, what it does in the launch, and its statements (relative to
    the body's indentation):

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
    ``env`` holds the constants the text names; the names in ``late`` are bound by each
    use (:meth:`Launcher.bind`): what differs between kernel objects that share a launcher
    (their general path, their captured globals), so one compiled text serves them all.
    Every kernel kind fills a spec (the ``make_*`` functions below); :func:`make_launcher`
    is the one generator.
    """

    def __init__(self, filename: str, env: dict, late=()):
        self.filename, self.env = filename, env
        self.late = tuple(late)
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



class Launcher:
    """A spec's text, compiled once (codegen: in memory and on disk), and the constants it
    names; :meth:`bind` makes its functions for one use, with the spec's late names."""

    __slots__ = ("source", "code", "env", "filename", "names", "late", "_made")

    def __init__(self, spec: LaunchSpec):
        self.source = spec.source()
        self.filename, self.env = spec.filename, spec.env
        self.late = dict.fromkeys(spec.late)
        self.code = compiled(self.source, self.filename)
        self.names = [e.name for e in spec.entries]
        self._made = None  # each entry's (name, code, defaults, keyword defaults), once run

    def bind(self, **late) -> dict:
        """{entry name: function}: the text's functions over the constants and ``late`` (a
        name the spec calls late and is not given is None). The text runs once; later binds
        make their functions from the code objects it made (a fraction of a microsecond,
        where running the text costs several: kernel objects made per call bind once each)."""
        env = dict(self.env)
        env.update(self.late)
        env.update(late)
        made = self._made
        if made is None:
            run(self.code, env)
            made = self._made = [(name, env[name].__code__, env[name].__defaults__,
                                  env[name].__kwdefaults__) for name in self.names]
        out = {}
        for name, code, defaults, kwdefaults in made:
            fn = env[name] = FunctionType(code, env, name, defaults)
            fn.__kwdefaults__ = kwdefaults
            fn.launch_source = self.source
            out[name] = fn
        return out


def make_launcher(spec: LaunchSpec) -> Launcher:
    """The one generator of launch code: ``spec``'s text compiled (once per text), to be
    bound per use. Plain and fast on purpose: the launch hot path."""
    return Launcher(spec)


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


def _argument_slots(plan: LaunchSpec, slots, types) -> tuple[list, list, list]:
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
    plan = LaunchSpec("<jitkern launch plan>",
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
    fns = make_launcher(plan).bind()
    return fns["pack"], fns["pack_if_same"]


def make_fast_launcher(plan: "Plan", launch, handle, dims: dict, streams_in_use: list, fail,
                       *, fallback: bool = False, positional: bool = False, guards=(),
                       late=(), stream_of=None, current_stream=None, device=None, star=None,
                       block_dims=None) -> Launcher:
    """The whole launch for one signature as one generated function (a :class:`Launcher`:
    :func:`bind_fast_launcher` makes the function for one kernel object).

    ``dims`` and ``block_dims``: the memos of checked grids and blocks (a miss on either
    takes the general path, which checks the value against CUDA's limits).

    By default: ``run(grid, block, args, shared_mem, stream) -> bool``, which returns
    False without doing anything when an assumption does not hold (other argument
    types, dims not seen before) so that the caller takes the general path. With
    ``fallback``: ``run(grid, block, args, *, shared_mem=0, stream=None)`` (or with
    ``shared_mem`` and ``stream`` positional when ``positional``), which calls the
    fallback it is bound to (``_slow``) with the same arguments on a miss, so it can stand
    for a kernel's whole call (see kernels/raw.py and kernels/jit.py). ``guards`` are
    further Python conditions over ``a0, a1, ...`` that must all hold; the names they use
    (``late``) are bound with the fallback, per kernel object. ``fail(err, grid, block,
    shared_mem, stream)`` handles a driver error (it raises, or returns after recovering).

    ``stream_of`` (a stream argument -> handle) and ``current_stream`` (the calling
    thread's current stream handle) are needed when streams may be given; without
    them a given or current stream is a miss.

    ``star`` (with ``fallback`` and ``positional``): also generate ``run.star(config,
    *args, **kwargs)``, the ``kernel[grid, block](*args)`` form of the same launch, which
    calls ``star`` with its own arguments when keywords are given (``run.star_configs``
    caches the bound methods kernels.base's ``__getitem__`` returns). ``config`` is ``(gx, gy,
    gz, bx, by, bz, shared_mem, stream, kernel, grid, block)``, the dims normalised and
    checked once (by :func:`bind_fast_launcher`'s ``checked_dims``, kept as
    ``run.star.dims``), so the subscript form looks up no dims per call; its arguments are
    positional parameters.

    ``device`` (machines with several GPUs): ``(device_id, context, get_current)``. The
    launcher then also checks that ``get_current()`` (cuCtxGetCurrent) returns
    ``context``, the context ``handle`` belongs to, and that every array argument is on
    ``device_id`` (an array type without a known device getter is a miss).
    """
    env = {"_pack_into": struct.Struct(plan.fmt).pack_into, "_buf": plan._buffer}
    code = LaunchSpec("<jitkern fast launch>", env, late=("_slow", *late))
    exprs, checks, binds = _argument_slots(code, plan.slots, plan.types)
    env.update(_launch=launch, _h=handle, _params=plan.params_ptr, _dims=dims,
               _last=driver.LAST_LAUNCH,
               _bdims=dims if block_dims is None else block_dims,
               _streams=streams_in_use, _fail=fail,
               _stream_of=stream_of, _current=current_stream, _N=_NOT_GIVEN, _given=_given)
    n = len(plan.slots)
    done = _fast_entries(code, n, fallback, positional, star)
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
    code.guard(_fast_conditions(env, n, checks, binds, guards, device, plan))
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
    return make_launcher(code)


def _fast_conditions(env: dict, n: int, checks, binds, guards, device, plan) -> list[str]:
    """What sends a fast launcher's call to its miss. The array reads come after the type
    checks (they may use type-specific attributes) and before the guards (which may read
    the layout from ``a{i}_i``): each is a condition that is never true, so the ``or``
    chain evaluates it and goes on."""
    conditions = ([*checks, *(f"{b} is None" for b in binds), *(f"not ({g})" for g in guards)]
                  if n else [])
    if device is not None:
        conditions += _device_conditions(env, device, plan.slots, plan.types)
    return conditions


def _fast_entries(code: LaunchSpec, n: int, fallback: bool, positional: bool, star) -> str:
    """The entries of a fast launcher (``run``, and ``star`` for the subscript form) and
    what its body returns once launched."""
    if not fallback:
        code.entry("run", "grid, block, args, shared_mem, stream", "return False")
        return "return True"
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
    if star is not None:
        # kernel[grid, block](*args): the same body, called by the partial __getitem__
        # returns (kernels.base), so the subscript form costs what the call form does.
        code.env["_star_slow"] = star
        names = ", ".join(f"a{i}" for i in range(n))
        given = f"({names},)" if n else "()"
        params = "".join(f", a{i}=_N" for i in range(n))
        more = f"more or a{n - 1} is _N" if n else "more"
        code.entry("star", f"config{params}, /, *more, **kwargs",
                   f"return _slow(grid, block, {given}, {tail})", [
                       "gx, gy, gz, bx, by, bz, shared_mem, stream, kernel, grid, block "
                       "= config",
                       f"if kwargs or {more}:",
                       "    return _star_slow(kernel, grid, block, shared_mem, stream, "
                       f"*_given({given}, more), **kwargs)"])
    return "return None"


def bind_fast_launcher(launcher: Launcher, fallback=None, checked_dims=None, **late):
    """The run function of a :func:`make_fast_launcher` launcher for one kernel object:
    ``fallback`` its general path, ``late`` the values its guards name."""
    fns = launcher.bind(_slow=fallback, **late)
    run = fns["run"]
    star = fns.get("star")
    if star is not None:
        run.star, run.star_configs = star, {}
        star.dims = checked_dims  # what kernels.base normalises the config with
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
    late = dict(guard_env, _F=function, _extras=extras, _general=general)
    env = {"tuple": tuple}
    code = LaunchSpec("<jitkern jit launch>", env, late=late)
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
    fns = make_launcher(code).bind(**late)
    run = fns["run"]
    run.star, run.star_configs = fns["star"], {}
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
    code = LaunchSpec(f"<jitkern bound launch {function.name}>", env)
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
    return make_launcher(code).bind()["run"]


def make_slot_packer(slot, buffer, offset: int):
    """``pack(a)``: write one argument, of the kind ``slot`` describes, at ``offset`` of
    ``buffer`` (a bound launch's ``set_arg``)."""
    env = {"_pack_into": struct.Struct("<" + slot.codes).pack_into, "_buf": buffer,
           "_off": offset}
    code = LaunchSpec("<jitkern bound argument>", env)
    fields = {"a": "a"}
    for key, helper in slot.env.items():
        fields[key] = f"_{key}"
        env[f"_{key}"] = helper
    code.entry("pack", "a", "")
    if slot.bind:
        code.add("read", [slot.bind.format(**fields)])  # args.ArrayRead
    code.add("pack", [f"_pack_into(_buf, _off, {slot.expr.format(**fields)})"])
    return make_launcher(code).bind()["pack"]
