"""Autotuning: pick the fastest launch configuration of a kernel, once per GPU model.

``jitkern.autotune(kernel_or_factory, configs=[Config(...), ...], grid=...)`` wraps a kernel
(``@rawkernel``, ``RawKernel``, ``ElementwiseKernel``, ``ReductionKernel``) or a *factory*
(a Python function taking compile-time constants as keywords and returning one of those
kernels). The first call with a new argument signature and size bucket (the problem size
rounded up to a power of two) runs every candidate, times the ones that compile and launch,
keeps the fastest, and writes the choice to the disk cache under the GPU model (device
name and compute capability); every later call, in this process or another, looks the
choice up in one dict and launches it. See docs/autotune.md.

The kernels' own modules know nothing of this one: it drives them through their ordinary
calls, so a tuned launch is a dict lookup, the grid function and the kernel's own launch.
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import json
import statistics
import time
import types as types_module

import numpy

from ..errors import (
    JitkernAttributeError,
    JitkernError,
    JitkernIndexError,
    JitkernRuntimeError,
    JitkernTypeError,
    JitkernValueError,
    KernelArgumentError,
)
from ..runtime import device as _device
from ..toolchain import cache
from .base import Kernel, simulating
from .elementwise import ElementwiseKernel
from .jit import JitKernel
from .raw import RawKernel
from .reduction import ReductionKernel

# Bump when the entry's meaning changes (the payload's layout, the bucketing rule).
AUTOTUNE_VERSION = 1
SIMULATOR_MODEL = "simulator (CPU; timings are meaningless)"


class Config:
    """One candidate: ``Config(block=256, shared_mem=0, ITEMS=4)``.

    ``block`` is the block size (an int or a 1-3 tuple; for ``ElementwiseKernel`` an int,
    its ``block_size=``), ``shared_mem`` the dynamic shared memory in bytes (``@rawkernel``
    and ``RawKernel``), and every other keyword a compile-time constant handed to the
    factory (``factory(ITEMS=4)``). Read them as ``cfg.block``, ``cfg.shared_mem``,
    ``cfg.ITEMS`` or ``cfg["ITEMS"]``.
    """

    __slots__ = ("block", "shared_mem", "constants")

    def __init__(self, block=None, shared_mem: int = 0, **constants):
        object.__setattr__(self, "block", _check_block(block))
        object.__setattr__(self, "shared_mem", _check_count("shared_mem", shared_mem, 0))
        object.__setattr__(self, "constants", _check_constants(constants))

    def __getattr__(self, name):
        if name.startswith("__") or name in Config.__slots__:
            raise JitkernAttributeError(name)
        try:
            return self.constants[name]
        except KeyError:
            raise JitkernAttributeError(
                f"{self!r} has no constant {name!r}; it has {sorted(self.constants)}") from None

    def __getitem__(self, name):
        return self.__getattr__(name)

    def __setattr__(self, name, value):
        raise JitkernTypeError(f"a Config is immutable (setting {name!r})")

    def _items(self) -> tuple:
        return (("block", self.block), ("shared_mem", self.shared_mem),
                *sorted(self.constants.items()))

    def __eq__(self, other):
        return isinstance(other, Config) and self._items() == other._items()

    def __hash__(self):
        return hash(self._items())

    def __repr__(self):
        return f"Config({self.describe()})"

    def describe(self) -> str:
        """``block=256 ITEMS=4`` (shared_mem only when given)."""
        parts = [] if self.block is None else [f"block={self.block}"]
        if self.shared_mem:
            parts.append(f"shared_mem={self.shared_mem}")
        parts += [f"{k}={v!r}" for k, v in sorted(self.constants.items())]
        return " ".join(parts) or "defaults"


def _check_count(what: str, value, least: int) -> int:
    """``value`` as an int of at least ``least`` (NumPy integers too), or the error naming
    the field, what it takes and what it got."""
    if isinstance(value, bool) or not isinstance(value, (int, numpy.integer)):
        raise JitkernTypeError(
            f"Config({what}=...): expected an int >= {least}, got {type(value).__name__} "
            f"{value!r}")
    if value < least:
        raise JitkernValueError(f"Config({what}=...): expected an int >= {least}, got {value}")
    return int(value)


def _check_block(block):
    """None, a positive int, or a tuple of 1-3 positive ints (checked when the Config is
    made: a wrong block must not reach the user's grid function). Sizes over the device's
    limits are kept: such a candidate is skipped with the launch's reason."""
    if block is None:
        return None
    if isinstance(block, (tuple, list)):
        if not 1 <= len(block) <= 3:
            raise JitkernValueError(
                f"Config(block=...): expected an int or a tuple of 1 to 3 ints, got {block!r}")
        return tuple(_check_count("block", b, 1) for b in block)
    return _check_count("block", block, 1)


def _check_constants(constants: dict) -> dict:
    for name, value in constants.items():
        try:
            hash(value)
        except TypeError:
            raise JitkernTypeError(
                f"Config({name}=...): a compile-time constant must be hashable (an int, "
                f"float, str, tuple, dtype...), got {type(value).__name__} {value!r}") from None
    return dict(constants)


@dataclasses.dataclass
class Candidate:
    """One candidate's outcome for one key: its median time, or why it was skipped."""

    config: Config
    ms: float | None = None
    skipped: str | None = None


@dataclasses.dataclass
class Tuning:
    """The outcome for one (argument signature, size bucket, GPU model)."""

    signature: str
    bucket: int
    model: str
    candidates: list
    chosen: int
    source: str  # "timed" (here) or "disk cache" (an earlier process timed it)
    size: int | None = None

    @property
    def config(self) -> Config:
        return self.candidates[self.chosen].config


class Trial:
    """What a timer is handed: ``trial()`` launches the candidate once on the real
    arguments (restoring ``restore=`` arguments and zeroing ``reset_to_zero=`` ones first);
    ``trial.prepare()`` and ``trial.launch()`` are those two halves, so a timer can keep the
    restore outside the timed region. ``config``, ``size`` (the problem size), ``args``,
    ``stream``, ``warmup`` and ``repeat`` describe it. A timer returns milliseconds."""

    def __init__(self, tuner, config, launch, args, stream, size):
        self.config = config
        self.args = args
        self.stream = stream
        self.size = size
        self.warmup = tuner.warmup
        self.repeat = tuner.repeat
        self.simulated = tuner._simulating()
        self._tuner = tuner
        self._launch = launch

    def prepare(self) -> None:
        self._tuner._prepare(self.args)

    def launch(self) -> None:
        self._launch(self.args, self.stream)

    def __call__(self) -> None:
        self.prepare()
        self.launch()


def event_timer(trial: Trial) -> float:
    """The GPU timer: ``trial.warmup`` untimed launches, then ``trial.repeat`` launches each
    between two CUDA events recorded on the launch's stream; the median, in milliseconds."""
    for _ in range(trial.warmup):
        trial()
    pairs = []
    for _ in range(trial.repeat):
        trial.prepare()
        start = _device.Event().record(trial.stream)
        trial.launch()
        pairs.append((start, _device.Event().record(trial.stream)))
    return statistics.median(_device.get_elapsed_time(s, e) for s, e in pairs)


def wall_timer(trial: Trial) -> float:
    """The simulator's timer: one run's wall-clock time in milliseconds. The simulator runs
    Python per thread, so this says nothing about a GPU: it only exercises the mechanism."""
    trial.prepare()
    start = time.perf_counter()
    trial.launch()
    return (time.perf_counter() - start) * 1e3


def autotune(target=None, *, configs, grid=None, size=None, restore=(), reset_to_zero=(),
             warmup: int = 3, repeat: int = 25, timer=None, name: str | None = None):
    """Tune ``target`` over ``configs``; usable as a decorator (``@jitkern.autotune(...)``).

    ``target``: a kernel, or a factory ``f(**constants) -> kernel`` (one kernel is built per
    distinct set of constants). ``grid(config, *args)`` gives the grid of a ``@rawkernel``
    or ``RawKernel`` launch (those kernels are then called as ``tk(*args, stream=None)``);
    ``ElementwiseKernel``/``ReductionKernel`` size their own grid and take their usual
    keywords. ``size(*args)``: the problem size bucketed to a power of two (default: the
    largest ``.size`` among the arguments). ``restore``/``reset_to_zero``: argument
    positions (or parameter names of a ``@rawkernel``) the kernel writes in a way that is
    not idempotent; they are restored from a copy taken before tuning (or zeroed) before
    each candidate's runs and before the final run. ``timer(trial) -> ms``: the timing hook
    (default :func:`event_timer` on a GPU, :func:`wall_timer` in the simulator). ``name``
    joins the disk key (give one to tell apart two tuners of the same kernel).
    """

    def wrap(t):
        return AutotunedKernel(t, configs=configs, grid=grid, size=size, restore=restore,
                               reset_to_zero=reset_to_zero, warmup=warmup, repeat=repeat,
                               timer=timer, name=name)

    return wrap if target is None else wrap(target)


class AutotunedKernel(Kernel):
    """A kernel plus its candidates: call it like the kernel (see :func:`autotune`).

    A kernel object like the others (kernels/base.py): its call is the tuned call on the
    GPU, or, while simulate is on, the same call choosing among simulated candidates."""

    _kind = "autotune"

    def __init__(self, target, *, configs, grid, size, restore, reset_to_zero, warmup, repeat,
                 timer, name, _simulate=False):
        self.target = target
        self.configs = _check_configs(configs)
        self.factory = not isinstance(target, Kernel)
        if self.factory and not isinstance(target, types_module.FunctionType):
            raise JitkernTypeError(
                f"autotune: expected a kernel or a factory function returning one, got "
                f"{type(target).__name__}")
        self.__name__ = (name or getattr(target, "__name__", None)
                         or getattr(target, "name", "kernel"))
        self.name = name
        self.grid = grid
        self.size = size
        self.restore = _check_which(restore, "restore", self.__name__)
        self.reset_to_zero = _check_which(reset_to_zero, "reset_to_zero", self.__name__)
        self.warmup = int(warmup)
        self.repeat = int(repeat)
        if self.repeat < 1 or self.warmup < 0:
            raise JitkernValueError(
                f"autotune({self.__name__}): repeat must be >= 1 and warmup >= 0, got "
                f"repeat={repeat}, warmup={warmup}")
        self.timer = timer
        self._sim = _simulate
        self._kernels: dict = {}  # constants -> kernel
        self._launchers: dict = {}  # (Config, simulated) -> launch(args, stream, kwargs)
        self._choices: dict = {}  # _key(...) -> the chosen launch (its .config says which)
        self._sim_choices: dict = {}  # the same for calls that run in the simulator
        self.tunings: dict = {}  # (model, signature, bucket) -> Tuning
        self._saved: dict = {}
        self._zeroed: list = []
        self._identity = None
        self._twin = None
        if not self.factory:
            self._check_kernel(target, None)
            if isinstance(target, JitKernel):  # its parameters are known: check them now
                self._save_positions(len(self._param_names()))
        self.timings = 0  # how many candidates this object has timed (tests, the report)
        self._start()

    def __repr__(self):
        return f"<jitkern.autotune {self.__name__}: {len(self.configs)} configs>"

    @property
    def simulate(self) -> "AutotunedKernel":
        """The same tuner running its candidates in the CPU simulator (NumPy arrays)."""
        if self._twin is not None:
            return self._twin
        twin = self._twin = AutotunedKernel(
            self.target, configs=self.configs, grid=self.grid, size=self.size,
            restore=self.restore, reset_to_zero=self.reset_to_zero, warmup=self.warmup,
            repeat=self.repeat, timer=self.timer, name=self.name, _simulate=True)
        twin._kernels = self._kernels
        twin.__name__ = self.__name__
        return twin

    # -- the call ------------------------------------------------------------
    def _launch(self, *args, stream=None, **kwargs):
        """Launch the configuration chosen for these arguments (tuning them first if this
        signature and size bucket are new to this GPU model and the disk cache)."""
        key = self._key(args, kwargs)
        choices = self._sim_choices if self._sim else self._choices
        hit = choices.get(key)
        if hit is None:
            return self._tune(args, kwargs, stream, key, choices)
        return hit(args, stream, kwargs)

    def _simulated(self, *args, stream=None, **kwargs):
        twin = self if self._sim else self.simulate  # JITKERN_SIMULATE=1: the CPU's choices
        with self._on_simulator(stream, args):
            return twin._launch(*args, stream=stream, **kwargs)

    def _argument_what(self, i: int) -> str:
        names = self._param_names()
        return f"{self.__name__}: argument {i}" + (f" ({names[i]})" if i < len(names) else "")

    def _call_name(self) -> str:
        return self.__name__

    def _calls(self) -> "AutotunedKernel":
        """The tuner whose choices this one's calls make now: its simulated twin while the
        simulate switch is on (JITKERN_SIMULATE=1: ``_simulated`` launches through it)."""
        return self.simulate if simulating() and not self._sim else self

    def config_for(self, *args, **kwargs) -> Config | None:
        """The configuration chosen for calls like this one (None until one has run)."""
        tuner = self._calls()
        choices = tuner._sim_choices if tuner._simulating() else tuner._choices
        hit = choices.get(tuner._key(args, kwargs))
        return None if hit is None else hit.config

    def autotune_report(self) -> str:
        """Every tuned key: each candidate's median time or why it was skipped, the choice
        (``*``), and whether it was timed here or read from the disk cache."""
        lines = [f"autotune report for {self.__name__}"]
        tunings = self._calls().tunings
        if not tunings:
            lines.append("  nothing tuned yet (the first call with new arguments tunes)")
        for t in tunings.values():
            sized = "" if t.size is None else f" (size {t.size})"
            lines.append(f"  on {t.model}, arguments ({t.signature}), size bucket <= {t.bucket}"
                         f"{sized}: {t.source}; chose {t.config.describe()}")
            width = max(len(c.config.describe()) for c in t.candidates)
            for i, c in enumerate(t.candidates):
                mark = "*" if i == t.chosen else " "
                what = f"{c.ms:.4f} ms" if c.skipped is None else f"skipped: {c.skipped}"
                lines.append(f"    {mark} {c.config.describe():{width}s}  {what}")
        return "\n".join(lines)

    # -- keys ------------------------------------------------------------------
    def _key(self, args, kwargs):
        """The in-memory key: each argument's type (and dtype and ndim for arrays), the
        keywords, and the size bucket's exponent (the hot path: plain on purpose)."""
        sig = []
        n = 1
        for a in args:
            dt = getattr(a, "dtype", None)
            if dt is None:
                sig.append(type(a))
            else:
                sig.append((type(a), dt, a.ndim))
                if a.size > n:
                    n = a.size
        if self.size is not None:
            n = int(self.size(*args))
        if kwargs:
            sig.append(tuple(sorted((k, _kw_key(v)) for k, v in kwargs.items())))
        sig.append((n - 1).bit_length() if n > 1 else 0)
        return tuple(sig)

    def _model(self) -> str:
        if self._simulating():
            return SIMULATOR_MODEL
        dev = _device.Device()
        return f"{dev.name} (sm_{dev.compute_capability})"

    def _simulating(self) -> bool:
        return self._sim or simulating()

    def _disk_key(self, model: str, signature: str, bucket: int) -> str:
        configs = [repr(c) for c in self.configs]
        return cache.make_key("autotune", AUTOTUNE_VERSION, self._stable_identity(), configs,
                              model, signature, bucket)

    def _stable_identity(self) -> str:
        """What names this tuner across processes: the kernel's or factory's source text."""
        if self._identity is None:
            self._identity = _identity_of(self.target) + f"|name={self.name!r}"
        return self._identity

    # -- tuning ----------------------------------------------------------------
    def _tune(self, args, kwargs, stream, key, choices):
        if kwargs and self.grid is not None:
            raise KernelArgumentError(
                f"{self.__name__}: a tuned @rawkernel or RawKernel takes its arguments and "
                f"stream= only; got keywords {sorted(kwargs)}")
        self._save_positions(len(args))  # a wrong position is an error even on a disk hit
        signature = _stable_signature(args, kwargs)
        bucket = 1 << key[-1]
        model = self._model()
        size = self._problem_size(args)
        disk_key = self._disk_key(model, signature, bucket)
        tuning = self._load(disk_key, signature, bucket, model)
        if tuning is None:
            tuning = self._time_all(args, kwargs, stream, signature, bucket, model, size)
            self._store(disk_key, tuning)
        else:
            tuning.size = size
        self.tunings[(model, signature, bucket)] = tuning
        chosen = self._launcher(tuning.config)
        self._prepare(args)  # the chosen configuration runs last, on fresh inputs
        result = chosen(args, stream, kwargs)
        choices[key] = chosen
        self._saved, self._zeroed = {}, []
        return result

    def _problem_size(self, args) -> int:
        if self.size is not None:
            return int(self.size(*args))
        return max([int(a.size) for a in args if getattr(a, "dtype", None) is not None] or [1])

    def _time_all(self, args, kwargs, stream, signature, bucket, model, size) -> Tuning:
        self._save(args)
        timer = self.timer or (wall_timer if self._simulating() else event_timer)
        candidates = []
        for config in self.configs:
            candidate = Candidate(config)
            candidates.append(candidate)
            try:
                launch = self._launcher(config)
                run = _with_kwargs(launch, kwargs)
                self._prepare(args)
                run(args, stream)  # compiles, and fails here if it cannot launch
                if not self._simulating():
                    _device.synchronize()  # a failed launch is reported here, not later
            except JitkernError as exc:
                candidate.skipped = _reason(exc)
                continue
            candidate.ms = float(timer(Trial(self, config, run, args, stream, size)))
            self.timings += 1
        timed = [i for i, c in enumerate(candidates) if c.skipped is None]
        if not timed:
            reasons = "; ".join(f"{c.config.describe()}: {c.skipped}" for c in candidates)
            raise JitkernRuntimeError(
                f"autotune({self.__name__}): no configuration compiled and launched for "
                f"arguments ({signature}): {reasons}")
        best = min(timed, key=lambda i: candidates[i].ms)
        return Tuning(signature, bucket, model, candidates, best, "timed here", size)

    def _load(self, disk_key, signature, bucket, model) -> Tuning | None:
        entry = cache.disk_get(disk_key, kind="autotune")
        if entry is None:
            return None
        try:
            data = json.loads(entry[1].decode())
            candidates = []
            for config, row in zip(self.configs, data["candidates"], strict=True):
                if row["config"] != repr(config):
                    return None
                candidates.append(Candidate(config, row["ms"], row["skipped"]))
            chosen = int(data["chosen"])
            if candidates[chosen].skipped is not None:
                return None
        except (ValueError, KeyError, TypeError, IndexError):
            return None  # an entry this version cannot read: tune again and overwrite it
        return Tuning(signature, bucket, model, candidates, chosen,
                      "read from the disk cache (timed by an earlier process)")

    def _store(self, disk_key, tuning: Tuning) -> None:
        rows = [{"config": repr(c.config), "ms": c.ms, "skipped": c.skipped}
                for c in tuning.candidates]
        payload = json.dumps({"chosen": tuning.chosen, "candidates": rows}).encode()
        header = {"kernel": self.__name__, "model": tuning.model,
                  "signature": tuning.signature, "bucket": tuning.bucket}
        cache.disk_put(disk_key, header, payload, kind="autotune")

    # -- restoring what tuning overwrites -----------------------------------------
    def _positions(self, which, what: str, count: int) -> list:
        """``which`` as positions among ``count`` arguments (a name is a @rawkernel's
        parameter name; a negative position counts from the end, as Python's)."""
        names = self._param_names()
        out = []
        for w in which:
            if isinstance(w, str) and w in names:
                out.append(names.index(w))
            elif isinstance(w, str):
                raise JitkernValueError(
                    f"autotune({self.__name__}): {what}={w!r} names no argument; expected a "
                    f"position or one of {names}")
            elif -count <= w < count:
                out.append(w % count)
            else:
                raise JitkernIndexError(
                    f"autotune({self.__name__}): {what}={w} is out of range for the kernel's "
                    f"{count} argument(s) (positions 0 to {count - 1})")
        return out

    def _save_positions(self, count: int) -> tuple:
        return (self._positions(self.restore, "restore", count),
                self._positions(self.reset_to_zero, "reset_to_zero", count))

    def _param_names(self) -> list:
        """The parameter names of a ``@rawkernel`` target (or of the factory's first
        kernel), which ``restore=``/``reset_to_zero=`` may use instead of positions."""
        kernel = self._kernel(self.configs[0])
        if isinstance(kernel, JitKernel):
            return list(inspect.signature(kernel.py_func).parameters)
        return []

    def _save(self, args) -> None:
        restored, self._zeroed = self._save_positions(len(args))
        self._saved = {i: _copy(args[i]) for i in restored}

    def _prepare(self, args) -> None:
        if not (self._saved or self._zeroed):
            return
        gpu = not self._simulating()
        if gpu:
            _device.synchronize()  # earlier launches finish before their inputs change
        for i, saved in self._saved.items():
            args[i][...] = saved
        for i in self._zeroed:
            _zero(args[i])
        if gpu:
            _device.synchronize()

    # -- building candidates -----------------------------------------------------
    def _kernel(self, config: Config):
        if not self.factory:
            return self.target
        frozen = tuple(sorted(config.constants.items()))
        kernel = self._kernels.get(frozen)
        if kernel is None:
            kernel = self.target(**config.constants)
            self._check_kernel(kernel, config)
            self._kernels[frozen] = kernel
        return kernel

    def _check_kernel(self, kernel, config) -> None:
        made = f" (made by the factory for {config!r})" if config is not None else ""
        if not isinstance(kernel, (JitKernel, RawKernel, ElementwiseKernel, ReductionKernel)):
            raise JitkernTypeError(
                f"autotune({self.__name__}): expected a @rawkernel, RawKernel, "
                f"ElementwiseKernel or ReductionKernel{made}, got {type(kernel).__name__}")
        grid_kind = isinstance(kernel, (JitKernel, RawKernel))
        if grid_kind and self.grid is None:
            raise JitkernTypeError(
                f"autotune({self.__name__}): a {type(kernel).__name__} needs grid=, a function "
                "grid(config, *args) giving the launch's grid")
        if not grid_kind and self.grid is not None:
            raise JitkernTypeError(
                f"autotune({self.__name__}): a {type(kernel).__name__} sizes its own grid; "
                "leave grid= out")
        for c in self.configs:
            self._check_config(kernel, c)

    def _check_config(self, kernel, c: Config) -> None:
        kind = type(kernel).__name__
        if c.constants and not self.factory:
            raise JitkernValueError(
                f"autotune({self.__name__}): {c!r} has compile-time constants "
                f"{sorted(c.constants)}, which need a factory f(**constants) returning the "
                f"kernel, not a {kind}")
        if isinstance(kernel, (JitKernel, RawKernel)) and c.block is None:
            raise JitkernValueError(f"autotune({self.__name__}): {c!r} needs block= for a {kind}")
        if isinstance(kernel, ElementwiseKernel) and (c.shared_mem or
                                                      not isinstance(c.block, (int, type(None)))):
            raise JitkernValueError(
                f"autotune({self.__name__}): {c!r}: an ElementwiseKernel takes block= as an "
                "int (its block_size) and no shared_mem")
        if isinstance(kernel, ReductionKernel) and (c.block is not None or c.shared_mem):
            raise JitkernValueError(
                f"autotune({self.__name__}): {c!r}: a ReductionKernel sizes its own blocks; "
                "tune it through a factory's constants")

    def _launcher(self, config: Config):
        launch = self._launchers.get((config, self._sim))
        if launch is None:
            launch = _make_launch(self._kernel(config), config, self.grid, self._sim)
            self._launchers[(config, self._sim)] = launch
        return launch


def _make_launch(kernel, config: Config, grid, simulate: bool):
    """launch(args, stream, kwargs) for one configuration (the tuned call's hot path)."""
    block, shm = config.block, config.shared_mem
    target = kernel.simulate if simulate else kernel  # every kind has a simulator twin
    if isinstance(kernel, JitKernel):
        def launch(args, stream, kwargs=None):
            target(grid(config, *args), block, args, shm, stream)
    elif isinstance(kernel, RawKernel) and simulate:
        def launch(args, stream, kwargs=None):
            target(grid(config, *args), block, args, shm, stream)
    elif isinstance(kernel, RawKernel):
        def launch(args, stream, kwargs=None):
            target(grid(config, *args), block, args, shared_mem=shm, stream=stream)
    elif isinstance(kernel, ElementwiseKernel) and block is not None:
        def launch(args, stream, kwargs=None):
            return target(*args, stream=stream, block_size=block, **(kwargs or {}))
    else:
        def launch(args, stream, kwargs=None):
            return target(*args, stream=stream, **(kwargs or {}))
    launch.config = config
    return launch


def _with_kwargs(launch, kwargs):
    def run(args, stream):
        return launch(args, stream, kwargs)

    return run


def _check_which(which, what: str, name: str) -> tuple:
    """``restore=``/``reset_to_zero=``: a tuple or list of positions and parameter names."""
    if isinstance(which, (int, str)) and not isinstance(which, bool):
        which = (which,)
    if not isinstance(which, (tuple, list)) or not all(
            isinstance(w, (int, str)) and not isinstance(w, bool) for w in which):
        raise JitkernTypeError(
            f"autotune({name}): {what}= takes argument positions (ints) or parameter names "
            f"(strs), got {which!r}")
    return tuple(which)


def _check_configs(configs) -> tuple:
    configs = tuple(configs)
    if not configs:
        raise JitkernValueError("autotune: configs is empty; give at least one Config")
    for c in configs:
        if not isinstance(c, Config):
            raise JitkernTypeError(
                f"autotune: configs must be jitkern.Config objects, got {type(c).__name__}")
    if len(set(configs)) != len(configs):
        raise JitkernValueError(f"autotune: configs repeat one configuration: {list(configs)}")
    return configs


def _kw_key(value):
    try:
        hash(value)
    except TypeError:
        return (type(value), id(value))
    return value


def _stable_signature(args, kwargs) -> str:
    """The argument signature as text that means the same in every process."""
    parts = []
    for a in args:
        dt = getattr(a, "dtype", None)
        if dt is None:
            parts.append(type(a).__name__)
        elif isinstance(a, numpy.generic):
            parts.append(str(dt))
        else:
            parts.append(f"{type(a).__module__}.{type(a).__name__}[{dt}, ndim={a.ndim}]")
    parts += [f"{k}={v!r}" for k, v in sorted(kwargs.items())]
    return ", ".join(parts)


_SOURCE_ATTRIBUTES = ("code", "name", "options", "in_params", "out_params", "operation",
                      "preamble", "loop_prep", "after_loop", "map_expr", "reduce_expr",
                      "post_map_expr", "identity", "mode")


def _identity_of(target) -> str:
    func = getattr(target, "py_func", target)
    if isinstance(func, types_module.FunctionType):
        text = f"{func.__module__}.{func.__qualname__}:{_source_text(func)}"
    else:
        text = type(target).__qualname__
    fields = [f"{a}={getattr(target, a)!r}" for a in _SOURCE_ATTRIBUTES if hasattr(target, a)]
    return hashlib.sha256("|".join([text, *fields]).encode()).hexdigest()


def _source_text(func) -> str:
    try:
        return inspect.getsource(func)
    except (OSError, TypeError):  # no source file: the bytecode and constants stand in
        code = func.__code__
        return code.co_code.hex() + repr(code.co_consts)


def _reason(exc: JitkernError) -> str:
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {first}"


def _copy(a):
    clone = getattr(a, "clone", None) if not hasattr(a, "copy") else None
    return clone() if clone is not None else a.copy()


def _zero(a) -> None:
    fill = getattr(a, "fill", None) or getattr(a, "fill_", None)
    fill(0)


__all__ = ["AutotunedKernel", "Candidate", "Config", "Trial", "Tuning", "autotune",
           "event_timer", "wall_timer", "SIMULATOR_MODEL"]
