"""The template every kernel kind fills: one ``Kernel`` base.

What a kernel object is, in one place:

- **the call.** A kernel object is a ``functools.partial`` whose function is its call
  (calling an instance whose class defines ``__call__`` in Python costs about 250 ns more
  on CPython than calling a partial, which CPython calls directly): the kind's general
  path (``_launch``) at first, then the launcher generated for the last argument
  signature (runtime/launcher.py), which falls back to the general path on any miss.
  ``k[grid, block](*args)`` (:meth:`Kernel.__getitem__`), ``bind()`` and the launch
  configuration's parser are the base's;
- **the one simulate switch.** :func:`simulating` is the only reader of
  ``settings.simulate`` in kernels/: every kernel object is in one registry, and when the
  switch changes each one's call becomes its simulator's (``_simulated``) or its GPU
  path again (:meth:`Kernel._follow_switch`); a generated launcher is installed (and so
  uninstalled) only here (:meth:`Kernel._install`);
- **builds.** :func:`build` is the one compile wrapper and compile-error policy;
  ``self._functions`` (runtime/functions.py) gives each device the Function built for its
  own arch, by a key the kind chooses; :meth:`Kernel._memoized` keeps what a build
  produced in the process-wide memo (runtime/memo.py) under everything that decides it,
  so a second kernel object of the same definition reuses it (``clear_memo()`` forgets).

What each kind supplies: ``_launch`` (how it specialises on its arguments and launches
on the GPU), ``_simulated`` (the same call in its simulator: one line; None for a kind
without one), ``_definition()`` (what decides its builds, for the memo) and
``_make_function(key, arch)`` (the source and launch of one build). docs/architecture.md
("Adding a kernel kind") walks through it.
"""

from __future__ import annotations

import functools
import pickle
import re
import sys
import threading
import types
import weakref

from .. import config
from ..config import settings
from ..errors import (CompileError, JitkernNotImplementedError, JitkernRuntimeError,
                      JitkernTypeError, LaunchError)
from ..runtime import debugcheck, driver, memo
from ..runtime import simulated as simdevice
from ..runtime.device import stream_handle
from ..runtime.functions import Functions
from ..runtime.limits import launch_keywords
from ..runtime.module import Function, load
from ..toolchain import cache, discovery, includes, nvrtc, target
from ..toolchain.inspection import inspect_binary
from ..toolchain.nvrtc import Binary
from ..toolchain.target import Arch
from ..compiler.strings.params import parse_signature
from . import made_again
from ._user_code import name_the_arguments


driver.at_start(discovery.warm_up)  # the toolchain's per-process facts, as the driver starts


def simulating() -> bool:
    """Whether kernel calls run in the CPU simulator (``JITKERN_SIMULATE=1``, or
    ``jitkern.config.settings.simulate``): the one place kernels/ reads the switch."""
    return settings.simulate


def resolve_arch(arch) -> Arch:
    """The one Arch a build is for: the user's ``arch=`` parsed (target.parse), or, for
    None, the current device's (:func:`device_arch`). 'sm_90', 90, (9, 0) and an sm_90
    device give the same Arch, so the same cache entry."""
    if arch is not None:
        return target.parse(arch)
    return device_arch(driver.current_device_id())


def device_arch(device_id: int) -> Arch:
    """What to build for device ``device_id`` (target.for_device: CUBIN where NVRTC can,
    never PTX newer than the driver); read once per device."""
    arch = _device_arches.get(device_id)
    if arch is None:
        arch = _device_arches[device_id] = target.for_device(
            driver.compute_capability(device_id), driver.driver_version())
    return arch


_device_arches: dict = {}
driver.resets(globals(), _device_arches=dict)  # asked again under driver.use(fake)


_BY_VALUE = threading.local()  # ids of the functions being pickled by value on this thread


def main_function_bytes(module: str | None, func) -> bytes | None:
    """``func`` pickled by value (its code and the globals it reads, through cloudpickle) for
    a kernel defined in a script: a process that never ran the script (a Dask scheduler or
    worker started on its own) cannot find ``__main__.name``. Bytes, so that any pickler
    carries them. None for a kernel of any other module (pickled by name: the other process
    imports it), where cloudpickle is not installed (by name: found where the process runs
    the script as ``__main__``, as multiprocessing's do), or for a kernel that reads itself
    (a recursive device function) while its bytes are being made."""
    if module != "__main__":
        return None
    try:
        import cloudpickle
    except ImportError:
        return None
    busy = _BY_VALUE.__dict__.setdefault("ids", set())
    if id(func) in busy:
        return None
    busy.add(id(func))
    try:
        return cloudpickle.dumps(func)
    finally:
        busy.discard(id(func))


def function_from_bytes(blob: bytes):
    """The function :func:`main_function_bytes` pickled."""
    return pickle.loads(blob)


def _not_ready(*args, **kwargs):  # replaced by the subclass's __init__
    raise JitkernRuntimeError("the kernel object is not initialised")


#: Every kernel object: its call follows the simulate switch (_follow_switch).
_KERNELS: weakref.WeakSet = weakref.WeakSet()


def _switch_changed(on: bool) -> None:
    for kernel in list(_KERNELS):
        kernel._follow_switch(on)


config.on_simulate.append(_switch_changed)


def _driver_swapped() -> None:
    for kernel in list(_KERNELS):
        kernel._drop_loaded()


driver.on_swap.append(_driver_swapped)  # driver.use: the next launch goes through the new one


class Kernel(functools.partial):
    """The base of every kernel kind (see the module doc). Compared and hashed by identity;
    not picklable unless the kind says how (``_pickle_hint`` says what to do)."""

    _pickle_hint = "a kernel cannot be pickled"
    #: the kind's name in its memo keys
    _kind = "kernel"

    #: Allow ``cluster=`` launches of 9 to 16 blocks per cluster (CUDA's non-portable
    #: cluster sizes, which H100-class GPUs have); 8 is the portable limit otherwise.
    allow_nonportable_cluster_size = False
    #: ``kernel[grid, block](*args)`` passes shared_mem and stream to ``func`` by keyword
    _star_by_keyword = False
    #: the call in the simulator, with the general call's signature (None: the kind has
    #: no simulator; its GPU call stays whatever the switch says)
    _simulated = None

    def __new__(cls, *args, **kwargs):
        _tell_dask()
        return super().__new__(cls, _not_ready)

    # -- the call and the switch ---------------------------------------------------

    def _start(self, binary_of=None, again=None) -> None:
        """The end of every kind's ``__init__``: the per-device, per-arch Functions of its
        builds (``binary_of(device_id)``, default the device's Arch), and its call, which
        follows the simulate switch from now on. ``again``: the constructor call's key
        (:meth:`_again`), under which the memo keeps what this call made."""
        self._binary_of = binary_of or device_arch
        if again is not None:
            self._made = _remember_made(again, self)
        self._functions = Functions()
        _KERNELS.add(self)
        self._follow_switch(settings.simulate)

    #: per-object caches a kind's ``__init__`` makes (dicts): a new object made by
    #: :meth:`_again` starts with its own, empty
    _fresh: tuple = ()
    #: set by each kind whose constructor calls the memo remembers (:meth:`_again`); not
    #: inherited: a user's subclass may set more in its own ``__init__``
    _made_again = False

    def _again(self, key, **own) -> bool:
        """Whether this object was made from the memo's record of the same constructor call,
        ``key`` (``("made", kind class, every argument)``, the flags' classes too: ``1`` is
        not ``True``; jitkern's version identity is added, as to every memo key). A record exists only for a call that checked out (an error is raised
        the long way, where and as it always is); copying it is the whole constructor: the
        checked and parsed definition, the Functions the record's first launched object
        loaded, and that object's generated launcher bound to this object's own general
        path, so the first call launches at once. ``own``: attributes of this object's
        (a RawModule's kernel: its module)."""
        try:
            made = memo.get(key + (cache.identity(),))
        except TypeError:  # an unhashable argument (a list of options): the long way
            return False
        if made is None:
            return False
        state = made.state.copy()
        for name in self._fresh:
            state[name] = {}
        state.update(own)
        state["_made"] = made
        state["_functions"] = made.functions.copy() if made.functions is not None else Functions()
        for name, value in made.inherit.items():
            state[name] = value.copy() if type(value) is dict else value
        run = made.run if not settings.simulate else None
        if run:
            run = made.rebound(self, state)
            self.__setstate__((run, (), None, state))
            for fn in made.owned:  # graph nodes: this object's launches too (graphnodes.of)
                fn.owners.add(self)
        else:
            self.__setstate__((_not_ready, (), None, state))
            self._follow_switch(settings.simulate)
        _KERNELS.add(self)
        return True

    def _follow_switch(self, on: bool) -> None:
        """The call the switch asks for: the simulator's while it is on (where the kind has
        one), else the general GPU path (a generated launcher is installed again by the
        next GPU call)."""
        if not on:
            self._set_call(self._launch)
        else:  # a kind with no simulator still launches on a GPU while the switch is on
            self._set_call(self._simulated or self._launch_unless_simulated_device)

    def _launch_unless_simulated_device(self, *args, **kwargs):
        if simdevice.active() is not None:
            name = getattr(self, "name", None) or getattr(self, "__name__", "")
            raise JitkernNotImplementedError(
                f"{type(self).__name__} {name!r}: jitkern's simulated device runs kernels from "
                "their source in the CPU simulator, and this kernel is a compiled binary "
                "(jitkern.load): launch it on a GPU, or simulate the kernel it was exported "
                "from")
        return self._launch(*args, **kwargs)

    def _install(self, run, inherit=None) -> None:
        """Make ``run``, a generated GPU launcher, the call (until the switch changes). The
        first one installed by an object of a remembered constructor call is what later
        objects of that call start with (:meth:`_again`), with ``inherit``, the per-object
        state that goes with it (the generated source a string kernel's call reports)."""
        if not settings.simulate:
            self._set_call(run)
            made = self.__dict__.get("_made")
            if made is not None and made.run is None:
                made.learn(self, self.func, inherit)

    def _set_call(self, func) -> None:
        """Make ``func`` what calling the kernel runs (it keeps the instance's __dict__)."""
        if self.func is not func:
            func = _name_as_call(func, self._call_name())
            self.__setstate__((func, (), None, self.__dict__))

    def _call_name(self) -> str:
        """The name Python's own call errors give (``RawKernel.__call__() missing ...``)."""
        return f"{type(self).__name__}.__call__"

    def __getitem__(self, config):
        """``kernel[grid, block](*args)`` or ``kernel[grid, block, shared_mem, stream](*args)``:
        a partial of the launch. Once the kernel's call is a generated launcher, the partial's
        function is that launcher's star form (``run.star``, see runtime/launcher.py) bound to
        the config, dims normalised once, made once per config and kept on the launcher, so
        ``k[grid, block](...)`` runs one generated function, as ``k(grid, block, args)`` does."""
        try:
            return self.func.star_configs[config]
        except (AttributeError, KeyError, TypeError):
            return self._subscript(config)

    def _subscript(self, config):
        grid, block, shared_mem, stream = self._launch_config(config)
        star = getattr(self.func, "star", None)
        if star is None:
            return functools.partial(launch_star, self, grid, block, shared_mem, stream)
        g = b = (None, None, None)
        if star.dims is not None:  # the launcher takes the dims normalised and checked
            dims = star.dims(grid, block)
            if dims is None:  # not valid: the general path raises the error at the call
                return functools.partial(launch_star, self, grid, block, shared_mem, stream)
            g, b = dims
        # A method bound to the config: called with the arguments prepended in place (a
        # partial copies them), straight into the generated launcher.
        partial = types.MethodType(star, (*g, *b, shared_mem, stream, self, grid, block))
        configs = self.func.star_configs
        if len(configs) < 64:
            try:
                configs[config] = partial
            except TypeError:  # a list in the config: not hashable, not kept
                pass
        return partial

    def bind(self, grid, block, *args, shared_mem: int = 0, stream=None):
        """A :class:`~jitkern.runtime.bound.BoundLaunch`: this launch with ``args`` packed
        once. Calling it re-launches with the same arguments at about the cost of a bare
        ``cuLaunchKernel``; ``set_arg(i, value)`` or ``args[i] = value`` replaces one
        (checked against its type). ``stream=None`` follows the current stream at each
        call; the device is the current one now. See docs/graphs.md. While simulate is on
        (``JITKERN_SIMULATE=1``) the bound launch runs in the simulator instead."""
        if simulating() and self._simulated is not None:
            return self._simulated_bind(grid, block, args, shared_mem, stream)
        function, launch_args, cooperative, refresh = self._bind_parts(args)
        return function.bind(grid, block, launch_args, shared_mem, stream, cooperative,
                             user_count=len(args), refresh=refresh)

    def _on_simulator(self, stream, args):
        """The kind's own call runs in the simulator inside this block (``_simulated``): on a
        simulated device a NumPy array among ``args`` is refused with the GPU's error, and
        a capture on ``stream`` records the kernel's work (runtime/simulated.py)."""
        return simdevice.kernel_call(stream, args, self._argument_what)

    def _argument_what(self, i: int) -> str:
        """Argument ``i`` as the kind's GPU errors name it: a string kernel's
        ``k: input 'x'``, else ``k: argument 1``."""
        params = getattr(self, "params", ())
        name = getattr(self, "name", None) or getattr(self, "__name__", type(self).__name__)
        if i < len(params):
            return f"{name}: {'output' if params[i].is_output else 'input'} {params[i].name!r}"
        return f"{name}: argument {i}"

    def _simulated_bind(self, grid, block, args, shared_mem, stream):
        return self.simulate.bind(grid, block, *args, shared_mem=shared_mem, stream=stream)

    def _launch_label(self) -> str:
        return "kernel"

    def _launch_config(self, config) -> tuple:
        """(grid, block, shared_mem, stream) of ``kernel[config]``: the one parser of a
        launch configuration, for the GPU launch and the simulator."""
        if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
            label = self._launch_label()
            raise JitkernTypeError(
                f"launch as {label}[grid, block](*args) or "
                f"{label}[grid, block, shared_mem, stream](*args)"
            )
        shared_mem = config[2] if len(config) > 2 else 0
        stream = config[3] if len(config) > 3 else None
        return config[0], config[1], shared_mem, stream

    def _bind_parts(self, args: tuple):  # overridden by the kernel kinds
        raise JitkernTypeError(f"{type(self).__name__} cannot be bound")

    # -- builds: per device and arch, through the memo ---------------------------------

    def _definition(self) -> tuple | None:
        """Everything that decides this kernel's builds besides the key and the arch (its
        source, name, options, ...): the kind's part of its memo keys (None: the kind keeps
        no Functions of its own there: fuse's kernels and autotune's candidates are kernel
        objects of their own kinds)."""
        return None

    def _make_function(self, key, arch: Arch, *extra):
        """Build the Function of ``key`` for ``arch`` (compile, load lazily): the kind's."""
        raise JitkernTypeError(f"{type(self).__name__} builds nothing")

    def _function(self, key=None, *extra) -> Function:
        """The Function of ``key`` on the current device: the one loaded there, else the one
        built for the device's arch (``_binary_of``: by :meth:`_function_for`, through the
        memo of builds), loaded there now. ``extra``: what the kind's build needs beyond the
        key (made only on a miss)."""
        fn = self._functions.current(key)
        if fn is None:
            device_id = driver.current_device_id()
            which = self._binary_of(device_id)
            fn = self._functions.built(key, which) or self._function_for(key, which, *extra)
            self._functions.add(key, which, device_id, fn)
        return fn

    def _function_for(self, key, arch, *extra):
        """``self._functions``'s builder: the memo's Function for (definition, key, arch),
        built by the kind on a miss; a Function made for another object of the same
        definition is shared, so is everything it has loaded and generated."""
        fn = self._memoized(("function", key, arch), self._source_of(key),
                            lambda: self._make_function(key, arch, *extra))
        fn.owners.add(self)  # its graph nodes belong to every kernel object that shares it
        return fn

    def _source_of(self, key) -> str:
        """The C++ a build of ``key`` compiles (what the user's headers are followed from)."""
        return getattr(self, "_source", None) or ""

    def _memoized(self, parts: tuple, source: str, build):
        """What ``build()`` makes for this kernel's definition and ``parts``, kept in the
        process-wide memo (runtime/memo.py) under every input that decides it: the kind,
        its definition, ``parts`` (the key, the arch), jitkern's version identity and the
        user's headers that ``source`` includes through the options' folders."""
        return memo.built(self._memo_key(parts, source), build)

    def _memo_key(self, parts: tuple, source: str) -> tuple:
        return (self._kind, self._definition(), parts,
                headers_digest(getattr(self, "options", ()), source), cache.identity())

    def clear_memo(self) -> None:
        """Forget this kernel's builds (its loaded Functions, generated launchers and the
        memo's entries for its definition): the next call builds again, from the compile
        cache (jitkern.clear_memo() does this for every kernel)."""
        if self._definition() is not None:  # its builds, and the simulator's translations
            definition = (self._kind, self._definition())
            kind = type(self)  # and its kind's records of constructor calls (_again)
            memo.forget(lambda key: key[:2] == definition or key[1:3] == definition
                        or key[:2] == ("made", kind))
        self._functions.clear()
        self._forget_builds()
        self._follow_switch(settings.simulate)

    def _forget_builds(self) -> None:
        """The kind's own per-object caches of builds, forgotten by :meth:`clear_memo`."""

    def _drop_loaded(self) -> None:
        """Forget what was loaded or generated through the driver in use until now (another
        one is swapped in by ``driver.use``, the test seam): the Functions, the kind's
        launchers, the installed call. The next call loads through the new driver."""
        self._functions.clear()
        self._forget_loaded()
        self._follow_switch(settings.simulate)

    def _forget_loaded(self) -> None:
        """The kind's per-object state bound to the driver (launchers holding its Functions):
        by default its caches of builds."""
        self._forget_builds()

    # -- identity ------------------------------------------------------------------------

    def __reduce__(self):
        raise JitkernTypeError(self._pickle_hint)

    def __eq__(self, other):
        return self is other

    __hash__ = object.__hash__

    def __dask_tokenize__(self):
        # Identity, as __eq__ says: the token Dask names tasks by (see _tell_dask).
        return (type(self).__module__, type(self).__qualname__, id(self))


KernelPartial = Kernel  # the name the kinds used before the template (autotune, fuse)


_device_count: list = []
driver.resets(globals(), _device_count=list)  # asked again under driver.use(fake)


def several_devices() -> bool:
    """Whether this machine has more than one GPU (asked once)."""
    if not _device_count:
        _device_count.append(driver.device_count())
    return _device_count[0] > 1


def memoized(key: tuple, build):
    """``build()``'s result, kept in the process-wide memo of builds (runtime/memo.py) under
    ``key`` (the caller's: everything that decides the result) and jitkern's version
    identity (the one the disk cache keys on). A kernel's own builds go through
    :meth:`Kernel._memoized`; a simulator stores its translations here too."""
    return memo.built(key + (cache.identity(),), build)


def headers_digest(options, source: str) -> str:
    """The digest of the user's headers a build reads (``-I`` folders and ``-include``
    files among its options): part of its memo keys, as of the disk cache's. Read again at
    each new build: an edited header gives a new entry."""
    return includes.user_headers_digest(source, options) if _reads_headers(options) else ""


def _reads_headers(options) -> bool:
    """Whether ``options`` name the user's own headers (``-I`` folders, ``-include``)."""
    names = _names_headers.get(options)
    if names is None:
        names = _names_headers[options] = any(opt.startswith(_INCLUDE_OPTIONS)
                                              for opt in options)
    return names


def _remember_made(key, kernel):
    """The memo's record of ``kernel``'s constructor call ``key`` (kernels/made_again.py);
    none where its builds read the user's headers: an edited header must build again,
    which the memo's key notices at each object's build."""
    if not vars(type(kernel)).get("_made_again") or _reads_headers(getattr(kernel, "options", ())):
        return None  # (a user's subclass may set more in its __init__: made the long way)
    return made_again.remember(key + (cache.identity(),), kernel)


_names_headers: dict = {}  # options -> whether they name the user's own headers


_INCLUDE_OPTIONS = ("-I", "--include-path", "-include", "--pre-include")


def launch_star(kernel, grid, block, config_shared_mem, config_stream, /, *args, **kwargs):
    """``kernel[grid, block, shared_mem, stream](*args)`` on the general path (a partial of
    this). As in cupyx.jit, ``shared_mem=`` and ``stream=`` may also be given as keywords."""
    shared_mem, stream = config_shared_mem, config_stream
    if kwargs:
        shared_mem, stream = _launch_keywords(kernel, kwargs, shared_mem, stream)
    if kernel._star_by_keyword:  # RawKernel's call takes them as keywords only (CuPy's)
        return kernel.func(grid, block, args, shared_mem=shared_mem, stream=stream)
    return kernel.func(grid, block, args, shared_mem, stream)


def _launch_keywords(kernel, kwargs, shared_mem, stream):
    name = getattr(kernel, "__name__", None) or kernel.name
    return launch_keywords(name, kwargs, shared_mem, stream)


def _tell_dask() -> None:
    """Dask tokenizes a ``functools.partial`` by its function, and a kernel's function is a
    method of the kernel: that walk never ends. Where the program has imported Dask, point
    Dask's tokenizer at ``__dask_tokenize__`` for kernels (jitkern never imports Dask)."""
    tokenize = sys.modules.get("dask.tokenize")
    dispatch = getattr(tokenize, "normalize_token", None)
    if dispatch is not None and KernelPartial not in getattr(dispatch, "_lookup", {KernelPartial}):
        dispatch.register(KernelPartial)(KernelPartial.__dask_tokenize__)


def _name_as_call(func, qualname: str):
    """``func``, named so that Python's own errors for a wrong call (a missing or unknown
    argument) name the function called: ``RawKernel.__call__`` (or a JIT kernel's own name),
    not an internal ``_launch``. A method shared by every kernel of a class is bound to a
    copy named for this kernel's call (made once per name), so two kernels do not rename
    each other's."""
    if isinstance(func, types.MethodType) and isinstance(func.__func__, types.FunctionType):
        if getattr(func.__func__, "_jk_renamed", False):
            return func  # this kernel's copy already
        owner, attr = func.__self__, func.__func__.__name__
        renamed = _copies.get((func.__func__, qualname))
        if renamed is None:
            renamed = _copies[(func.__func__, qualname)] = _renamed(func.__func__, qualname)
        func = types.MethodType(renamed, owner)
        owner.__dict__[attr] = func  # kernel.<attr> is this kernel's copy from now on
        return func
    try:
        code = _codes.get((func.__code__, qualname))
        if code is None:  # a generated launcher: its code object renamed once per name
            code = _codes[(func.__code__, qualname)] = func.__code__.replace(
                co_name=qualname.rpartition(".")[2], co_qualname=qualname)
        func.__qualname__ = qualname
        func.__name__ = qualname.rpartition(".")[2]
        func.__code__ = code
    except (AttributeError, TypeError, ValueError):
        pass  # a builtin or a partial: nothing to rename
    return func


_copies: dict = {}  # (a kind's method, call name) -> its renamed copy
_codes: dict = {}  # (a generated function's code, call name) -> the renamed code


def _renamed(fn, qualname: str):
    name = qualname.rpartition(".")[2]
    code = fn.__code__.replace(co_name=name, co_qualname=qualname) \
        if hasattr(fn.__code__, "co_qualname") else fn.__code__.replace(co_name=name)
    copy = types.FunctionType(code, fn.__globals__, name, fn.__defaults__, fn.__closure__)
    copy.__kwdefaults__, copy.__qualname__ = fn.__kwdefaults__, qualname
    copy._jk_renamed = True
    return copy


# ---------------------------------------------------------------------------
# building: the one compile wrapper and its one compile-error policy

_MESSAGE_START = re.compile(r"^\S+\(\d+\): ")


def build(source: str, *, options, program_name: str, arch=None, backend: str = "nvrtc",
          name_expressions=(), log_stream=None, normalized: bool = True, explain=None,
          signatures: bool = False) -> Binary:
    """CUDA C++ -> Binary for every kernel kind (raw, JIT, elementwise, reduction), with one
    compile-error policy: each compiler message is shown once (generated code repeats an
    operation in several loops, each given one place by ``#line``, so NVRTC reports its
    errors per copy); a kind that maps the log back to its own source passes
    ``explain(exc) -> message`` (the JIT: the user's Python lines and what to change).

    ``arch``: an Arch (see :func:`resolve_arch`), any spelling target.parse reads, or None
    for the current device. ``signatures``: read the kernels' parameter types as compiled
    (raw kernels: toolchain/signatures.py).
    """
    if not isinstance(arch, Arch):
        arch = resolve_arch(arch)
    try:
        return nvrtc.compile_source(
            source, options=options, name_expressions=name_expressions, arch=arch,
            program_name=program_name, log_stream=log_stream, backend=backend,
            signatures=signatures, _normalized=normalized)
    except CompileError as exc:
        if explain is not None:
            raise CompileError(explain(exc), log=exc.log, source=exc.source, name=exc.name,
                               options=exc.options) from None
        log = unique_messages(exc.log or "")
        if log == exc.log:
            raise
        raise nvrtc.make_compile_error(source, log, program_name, tuple(options)) from None


def unique_messages(log: str) -> str:
    """``log`` with repeated messages (a ``file(N): ...`` line and its context) dropped."""
    records: list[list[str]] = []
    for line in log.splitlines():
        if _MESSAGE_START.match(line) or not records or not line.startswith(" "):
            records.append([line])
        else:
            records[-1].append(line)
    seen, out = set(), []
    for record in records:
        text = "\n".join(record)
        if _MESSAGE_START.match(record[0]):
            if text in seen:
                if out and out[-1] == "":
                    out.pop()  # the blank line that separated the repeat
                continue
            seen.add(text)
        out.append(text)
    return "\n".join(out)


# ---------------------------------------------------------------------------
# debug builds: one flag check and one record reader for every kind


def debug_flag(debug, kind: str, default_from_env: bool = False) -> bool:
    """``debug=``: True or False (None too, meaning JITKERN_DEBUG, where the kind allows it)."""
    if debug is None and default_from_env:
        return settings.debug  # JITKERN_DEBUG
    if not isinstance(debug, bool):
        allowed = "True, False or None" if default_from_env else "True or False"
        raise JitkernTypeError(f"{kind}(debug=...): expected {allowed}, got {debug!r}")
    return debug


def debug_options(debug: bool, options: tuple) -> tuple:
    """Debug builds add ``-lineinfo`` (profilers and compute-sanitizer see the source)."""
    return options + ("-lineinfo",) if debug and "-lineinfo" not in options else options


def debug_watch(label: str, sites, binary) -> debugcheck.Watch:
    """The debug record (runtime/debugcheck.py) of ``binary``, found on each device where it
    is loaded; ``sites``: what each checked access is (a Python line, a raw parameter)."""
    def address_of(device_id: int):
        try:
            return load(binary, device_id).get_global(debugcheck.RECORD_NAME)
        except LaunchError:  # no checked access in the kernel: nothing recorded
            return None

    return debugcheck.Watch(label, list(sites), address_of)


def debug_launched(watch: debugcheck.Watch, stream) -> None:
    debugcheck.launched(watch, driver.current_device_id(), stream_handle(stream))


def string_signature(kind: str, name: str, in_params, out_params, kwargs: dict, *,
                     need_input: bool):
    """compiler.strings.params.parse_signature, kept in the memo of builds: a string kernel
    made again from the same parameter strings parses nothing (an error is never kept)."""
    if kwargs or not isinstance(in_params, str) or not isinstance(out_params, str):
        return parse_signature(kind, name, in_params, out_params, kwargs,
                               need_input=need_input)
    return memoized(("signature", kind, name, in_params, out_params, need_input),
                    lambda: parse_signature(kind, name, in_params, out_params, kwargs,
                                            need_input=need_input))


class CachedSources:
    """What ElementwiseKernel and ReductionKernel share about their generated sources:
    ``cached_codes``/``cached_code`` over ``self._sources`` (variant key -> source), their
    builds (a generated source per call layout, keyed by it in ``self._functions``, built
    for each device's arch), ``inspect`` of an analysed call, and the repr."""

    _sources: dict

    def _source_of(self, key) -> str:
        return key if isinstance(key, str) else key[0]

    def _compile(self, source: str, arch=None) -> Binary:
        """The one compile of a generated source: :func:`build`, and a compile error whose
        first line names the argument holding the mistake (``operation``, ``reduce_expr``)."""
        try:
            return build(source, options=self.options, program_name=f"{self.name}.cu", arch=arch)
        except CompileError as exc:
            error = name_the_arguments(exc, self)
            if error is exc:
                raise
            raise error from None

    def _make_function(self, key, arch):
        """The kernel of ``key`` (a generated source, or (source, symbol)) built for ``arch``."""
        source, symbol = (key, self.name) if isinstance(key, str) else key
        fn = Function(self._compile(source, arch), symbol, display_name=symbol)
        fn.owner = weakref.ref(self)  # names its graph nodes (which refuse updates)
        if self.debug:  # raw arguments are indexed by hand: site k is parameter k
            sites = [debugcheck.Site(None, None, p.name, "raw") for p in self.params]
            fn.watch = debug_watch(f"{type(self).__name__} {self.name!r}", sites, fn.binary)
        return fn

    def check_debug(self) -> None:
        """Synchronise the current device; raise KernelAssertionError if a raw argument
        was indexed out of bounds (any synchronisation does the same)."""
        watches = [fn.watch for fn in self._functions.loaded() if fn.watch is not None]
        if watches:
            debugcheck.check_watches(watches, [debugcheck.synchronize_current()])

    def _inspect_analysis(self, a, arch):
        self._remember(a)  # compiled as a launch would, with the mistake's argument named
        return inspect_binary(self._compile(a.source, arch), self.name)

    def __repr__(self) -> str:
        ins = ", ".join(p.spelling for p in self.in_params)
        outs = ", ".join(p.spelling for p in self.out_params)
        return f"<jitkern.{type(self).__name__} {self.name!r} ({ins}) -> ({outs})>"

    @property
    def cached_codes(self) -> dict:
        """Every generated source so far, keyed by the variant it was generated for."""
        return dict(self._sources)

    @property
    def cached_code(self) -> str:
        """The generated source, when exactly one variant has been compiled."""
        if len(self._sources) != 1:
            raise JitkernRuntimeError(
                f"{self.name}: {len(self._sources)} variants have been compiled; "
                "cached_code needs exactly one (see cached_codes)"
            )
        return next(iter(self._sources.values()))
