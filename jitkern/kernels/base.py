"""The base of kernel objects: a ``functools.partial`` whose function is the launch.

Calling an instance whose class defines ``__call__`` in Python costs about 250 ns
more on CPython 3.12 than calling a partial, which CPython calls directly. So a
kernel object (RawKernel, @rawkernel) is a partial whose function is its whole
launch: the general path at first, then the launcher generated for the last
argument signature (backend.launch.make_fast_launcher), which falls back to the
general path on any miss. ``_set_call`` swaps that function.

``bind`` is shared by every kernel kind: the subclass says, in ``_bind_parts``, which
:class:`~.module.Function` and which full argument tuple a call with ``args`` would
launch, and :meth:`~.module.Function.bind` does the rest (one mechanism, the packed
parameter buffer of the launch plans).
"""

from __future__ import annotations

import functools
import pickle
import re
import sys
import threading
import types
import weakref

from ..config import settings
from ..errors import CompileError, JitkernRuntimeError, JitkernTypeError, LaunchError
from ..runtime import debugcheck, driver
from ..runtime.device import stream_handle
from ..runtime.functions import Functions, SourceFunctions  # noqa: F401 (the kinds import Functions here)
from ..runtime.module import load
from ..runtime.limits import launch_keywords
from ..toolchain import nvrtc, target
from ..toolchain.inspection import inspect_binary
from ..toolchain.nvrtc import Binary
from ..toolchain.target import Arch
from ._user_code import name_the_arguments


def resolve_arch(arch) -> Arch:
    """The one Arch a build is for: the user's ``arch=`` parsed (target.parse), or, for
    None, the current device's (:func:`device_arch`). 'sm_90', 90, (9, 0) and an sm_90
    device give the same Arch, so the same cache entry."""
    if arch is not None:
        return target.parse(arch)
    return device_arch(driver.current_device_id())


def device_arch(device_id: int) -> Arch:
    """What to build for device ``device_id`` (target.for_device: CUBIN where NVRTC can,
    never PTX newer than the driver)."""
    return target.for_device(driver.compute_capability(device_id), driver.driver_version())


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


class KernelPartial(functools.partial):
    """Compared and hashed by identity; not picklable (``_pickle_hint`` says what to do)."""

    _pickle_hint = "a kernel cannot be pickled"

    #: Allow ``cluster=`` launches of 9 to 16 blocks per cluster (CUDA's non-portable
    #: cluster sizes, which H100-class GPUs have); 8 is the portable limit otherwise.
    allow_nonportable_cluster_size = False
    #: ``kernel[grid, block](*args)`` passes shared_mem and stream to ``func`` by keyword
    _star_by_keyword = False

    def __new__(cls, *args, **kwargs):
        _tell_dask()
        return super().__new__(cls, _not_ready)

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
        function is that launcher's star form (``run.star``, see
        runtime.launcher.make_fast_launcher) bound to the config, dims normalised once, made
        once per config and kept on the launcher, so
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
        """A :class:`~jitkern.runtime.module.BoundLaunch`: this launch with ``args`` packed
        once. Calling it re-launches with the same arguments at about the cost of a bare
        ``cuLaunchKernel``; ``set_arg(i, value)`` or ``args[i] = value`` replaces one
        (checked against its type). ``stream=None`` follows the current stream at each
        call; the device is the current one now. See docs/graphs.md."""
        function, launch_args, cooperative, refresh = self._bind_parts(args)
        return function.bind(grid, block, launch_args, shared_mem, stream, cooperative,
                             user_count=len(args), refresh=refresh)

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

    def __reduce__(self):
        raise JitkernTypeError(self._pickle_hint)

    def __eq__(self, other):
        return self is other

    __hash__ = object.__hash__

    def __dask_tokenize__(self):
        # Identity, as __eq__ says: the token Dask names tasks by (see _tell_dask).
        return (type(self).__module__, type(self).__qualname__, id(self))


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
    not an internal ``_launch``. A method shared by every kernel of a class is copied for
    this kernel, so two kernels do not rename each other's."""
    if isinstance(func, types.MethodType) and isinstance(func.__func__, types.FunctionType):
        if getattr(func.__func__, "_jk_renamed", False):
            return func  # this kernel's copy already
        owner, attr = func.__self__, func.__func__.__name__
        func = types.MethodType(_renamed(func.__func__, qualname), owner)
        owner.__dict__[attr] = func  # kernel.<attr> is this kernel's copy from now on
        return func
    try:
        func.__qualname__ = qualname
        func.__name__ = qualname.rpartition(".")[2]
        func.__code__ = func.__code__.replace(co_name=func.__name__, co_qualname=qualname)
    except (AttributeError, TypeError, ValueError):
        pass  # a builtin or a partial: nothing to rename
    return func


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


class LaunchSyntax:
    """The kinds that take cupyx.jit's ``kernel[grid, block, shared_mem, stream](*args)``
    (JIT and exported kernels): the syntax itself is :class:`KernelPartial`'s
    (``__getitem__``, ``_launch_config``), which the simulator reads too."""


class CachedSources:
    """What ElementwiseKernel and ReductionKernel share about their generated sources:
    ``cached_codes``/``cached_code`` over ``self._sources`` (variant key -> source),
    ``inspect`` of an analysed call, and the repr."""

    _sources: dict
    _watches: dict  # debug builds: binary key -> debugcheck.Watch (one record per binary)

    def _compile(self, source: str, arch=None, symbol=None) -> Binary:
        """The one compile of a generated source: :func:`build`, and a compile error whose
        first line names the argument holding the mistake (``operation``, ``reduce_expr``)."""
        try:
            return build(source, options=self.options, program_name=f"{self.name}.cu", arch=arch)
        except CompileError as exc:
            error = name_the_arguments(exc, self)
            if error is exc:
                raise
            raise error from None

    def _new_functions(self) -> SourceFunctions:
        """The per-source cache of Functions: each device runs the source built for its own
        arch and loaded there (looked up when a call signature's launch is built)."""
        return SourceFunctions(self._compile, device_arch, self._function_made)

    def _function_made(self, fn) -> None:
        fn.owner = weakref.ref(self)  # names its graph nodes (which refuse updates)
        if self.debug:  # raw arguments are indexed by hand: site k is parameter k
            sites = [debugcheck.Site(None, None, p.name, "raw") for p in self.params]
            label = f"{type(self).__name__} {self.name!r}"
            self._watches[fn.binary.key] = debug_watch(label, sites, fn.binary)

    def _inspect_analysis(self, a, arch):
        self._remember(a)
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
