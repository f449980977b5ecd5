"""``kernel.simulate``: run JIT kernels on the CPU with the GPU build's semantics.

``kernel.simulate[grid, block](*args)`` or ``kernel.simulate(grid, block, args,
shared_mem=0)`` runs any ``@jitkern.rawkernel`` without a GPU; ``JITKERN_SIMULATE=1``
(``jitkern.config.settings.simulate``) makes every JIT launch of a program do so.

The kernel goes through the JIT's own parsing and type inference; only the last
stage differs: :mod:`.emit` writes Python over NumPy scalars of the inferred types
instead of CUDA C++ (so int32 wraps, float32 stays float32, ``//`` floors as in the
GPU build), and :mod:`.scheduler` runs the threads, checking what the GPU cannot:
out-of-bounds indices, reads of unassigned locals, barrier divergence and
warp-collective misuse. The generated code carries the user's file and line
numbers, so tracebacks and ``breakpoint()`` show the kernel's own source.
:mod:`.vector` writes the same program a second time over arrays of threads and runs
each launch it can that way, many blocks at once (``kernel.simulate.last_path``).
"""

from __future__ import annotations

import functools

import numpy

from .. import dtypes, records
from ..runtime.launch import dim3
from ..runtime.limits import SHARED_DEFAULT, SHARED_OPTIN_MAX, check_launch, launch_keywords
from ..compiler.captured import CapturedGlobals, fingerprints_hold
from ..runtime import memo
from ..runtime.module import check_cluster
from ..errors import (
    JitError,
    JitkernIndexError,
    JitkernOverflowError,
    JitkernTypeError,
)
from ..errors import KernelArgumentError
from ..runtime import simulated as current
from . import emit, runtime, scheduler, textures, thrust, vector

__all__ = ["BoundSimulation", "Simulator", "simulated_source"]


class Simulated:
    """One signature's generated Python: the kernel function and its program."""

    def __init__(self, program, kernel_name: str):
        self.program = program
        self.namespace = runtime.names()
        self.namespace.update(thrust.names())
        self.namespace.update(textures.names())
        self.namespace.update(program.constants)
        for fn in program.functions.values():  # callees were finished first
            emit.compile_function(fn, self.namespace)
        top = program.functions[kernel_name]
        self.function = self.namespace[kernel_name]
        self.generator = top.generator
        self.source = "\n".join(fn.text for fn in program.functions.values())


class Simulator:
    """``kernel.simulate``: launch like the kernel, run on the CPU."""

    def __init__(self, kernel, arg_types):
        self._kernel = kernel
        self._arg_types = arg_types  # (host arguments) -> their JIT types, naming a bad one
        self._builds: dict = {}  # argument types -> Simulated
        self._globals: dict = {}  # argument types -> the globals its Simulated read, here

    def __getitem__(self, config):
        # [grid, block, shared_mem, stream], read (and refused) as the GPU launch does
        grid, block, shared_mem, stream = self._kernel._launch_config(config)
        return functools.partial(_star, self, grid, block, shared_mem, stream)

    def __call__(self, grid, block, args, shared_mem=0, stream=None, racecheck=False, *,
                 cluster=None):
        """Run the kernel over ``grid`` x ``block`` threads on the CPU.

        ``args``: NumPy arrays (written in place), jitkern arrays (copied to the host
        and back), Python and NumPy scalars. ``stream`` is accepted and ignored.
        ``racecheck=True`` also reports two threads of a block touching one shared-memory
        element between two barriers, one of them writing (slower).
        ``cluster=(x, y, z)`` runs in thread-block clusters, checked as a GPU launch is:
        the blocks of a cluster run together (``cluster.sync()``, ``map_shared_rank``).
        """
        kernel = self._kernel
        if kernel.device:
            raise JitkernTypeError(f"{kernel.__name__} is a device function: call it from a kernel")
        if cluster is not None:
            check_cluster(kernel.__name__, grid, cluster, kernel.allow_nonportable_cluster_size)
        # every limit the GPU checks, before any argument is copied or any block is built
        shared_mem = check_launch(kernel.__name__, dim3(grid, "grid"), dim3(block, "block"),
                                  shared_mem, _shared_limit(kernel), grid, block)
        host, back = _host_arguments(args, kernel.__name__)
        simulated = self.build(host)
        run = functools.partial(_run, kernel, simulated, grid, block, host, int(shared_mem),
                                racecheck, cluster, back)
        if not current.record(stream, run):  # a capture on a simulated device replays it
            run()

    def bind(self, grid, block, *args, shared_mem: int = 0, stream=None) -> BoundSimulation:
        """``kernel.bind(...)`` while simulate is on: the launch with ``args`` fixed, run on
        the CPU at each call (``stream`` is accepted and ignored)."""
        if type(shared_mem) is not int or shared_mem < 0:
            raise KernelArgumentError(
                f"shared_mem: expected a non-negative int, got {shared_mem!r}"
            )
        return BoundSimulation(self, grid, block, args, shared_mem)

    def signature(self, args) -> tuple:
        """The simulator's argument types of ``args`` (what a simulated build is kept by)."""
        host, _ = _host_arguments(tuple(args))
        try:
            return self._arg_types(host)
        except JitError as exc:
            raise exc.with_traceback(None) from None

    def build(self, host_args) -> Simulated:
        kernel = self._kernel
        try:
            types = self._arg_types(host_args)
        except JitError as exc:
            raise exc.with_traceback(None) from None
        simulated = self._builds.get(types)
        if simulated is not None:
            captured = self._globals[types] = self._globals[types].current()
            if captured is None:  # a global changed
                simulated = None
        if simulated is None:  # a kernel made again from the same function: the memo's
            simulated = self._builds[types] = self._translation(types)
            self._globals[types] = CapturedGlobals(kernel.py_func, simulated.fingerprints)
        return simulated

    def _translation(self, types) -> Simulated:
        """A JIT kernel's translation for ``types``: the memo's (runtime/memo.py) while the
        globals this function reads hold the values it was made with, so a kernel made
        again from the same function translates nothing. A string kernel's translated
        kernels have no key of their own: they are kept with their kernel's translation."""
        kernel = self._kernel
        if not hasattr(kernel, "_memo_key"):
            return self._translate(types)
        return memo.translated(
            kernel._memo_key(("simulated", types), ""), lambda: self._translate(types),
            valid=lambda kept: fingerprints_hold(kernel.py_func, kept.fingerprints))

    def _translate(self, types) -> Simulated:
        kernel = self._kernel
        parsed = kernel.parsed()
        name = "jk_sim_" + parsed.name
        try:
            program = emit.generate(parsed, types, kernel.mode, name, kernel.py_func)
        except JitError as exc:
            raise exc.with_traceback(None) from None
        simulated = Simulated(program, name)
        simulated.emit_args = (parsed, types, kernel.mode, name, kernel.py_func)
        simulated.fingerprints = program.fingerprints
        return simulated

    @property
    def last_path(self) -> str | None:
        """Which path ran this kernel's last simulated launch: ``"vector"`` (each
        statement for a batch of blocks at once, as NumPy array operations) or
        ``"threads"`` (the per-thread scheduler); None before the first launch.
        :attr:`why_threads` says why a launch was not vectorised."""
        return self._kernel.__dict__.get("_simulate_path", (None, None))[0]

    @property
    def why_threads(self) -> str | None:
        """Why the last simulated launch ran on the per-thread scheduler (None if not)."""
        return self._kernel.__dict__.get("_simulate_path", (None, None))[1]

    def source(self, *args) -> str:
        """The generated Python for these arguments (what the simulator runs)."""
        host, _ = _host_arguments(args)
        return self.build(host).source


class BoundSimulation:
    """What ``kernel.bind(grid, block, *args)`` gives while simulate is on: calling it runs
    the launch in the simulator with the bound arguments. ``b.set_arg(i, value)`` (or
    ``b.args[i] = value``) replaces one, which must keep the bound argument's type (the
    same specialisation), as a GPU :class:`~jitkern.runtime.module.BoundLaunch` requires.
    It stays simulated when simulate is turned off later (bind again for a GPU launch)."""

    def __init__(self, simulator: Simulator, grid, block, args, shared_mem: int):
        self._simulator = simulator
        self.grid, self.block, self.shared_mem, self.stream = grid, block, shared_mem, None
        self._args = list(args)
        self._user_count = len(self._args)
        self._types = simulator.signature(self._args)

    def __call__(self) -> None:
        self._simulator(self.grid, self.block, tuple(self._args), self.shared_mem)

    @property
    def args(self) -> _BoundArgs:
        """The bound arguments: ``b.args[i]`` reads one, ``b.args[i] = v`` is ``set_arg``."""
        return _BoundArgs(self)

    def set_arg(self, index: int, value) -> None:
        """Replace argument ``index``; the next call runs with it."""
        n, name = self._user_count, self._simulator._kernel.__name__
        if type(index) is not int or not -n <= index < n:
            raise JitkernIndexError(
                f"set_arg: argument index {index!r} is out of range; {name} takes {n} argument(s)"
            )
        index %= n
        (new,) = self._simulator.signature((value,))
        if new != self._types[index]:
            raise KernelArgumentError(
                f"argument {index} of {name}: the bound launch is specialised for "
                f"{self._types[index]}, got {new}; bind again for other types"
            )
        self._args[index] = value


class _BoundArgs:
    """``b.args``: indexable view of a bound simulation's arguments."""

    __slots__ = ("_bound",)

    def __init__(self, bound: BoundSimulation):
        self._bound = bound

    def __len__(self) -> int:
        return len(self._bound._args)

    def __getitem__(self, index):
        return self._bound._args[index]

    def __setitem__(self, index, value) -> None:
        self._bound.set_arg(index, value)

    def __iter__(self):
        return iter(list(self._bound._args))

    def __repr__(self) -> str:
        return repr(self._bound._args)


def _shared_limit(kernel) -> int:
    """The dynamic shared memory a simulated launch may ask for: CUDA's 48 KiB default, or
    what the kernel opted in to (``max_dynamic_shared_size_bytes``), up to the largest
    opt-in of any GPU."""
    raised = getattr(kernel, "max_dynamic_shared_size_bytes", None)
    if type(raised) is int and raised > SHARED_DEFAULT:
        return min(raised, SHARED_OPTIN_MAX)
    return SHARED_DEFAULT


def simulated_source(kernel, *args) -> str:
    return kernel.simulate.source(*args)


def _star(sim, grid, block, shared_mem, stream, /, *args, **kwargs):
    """``kernel.simulate[grid, block](*args)``: takes the keywords a launch takes
    (``shared_mem=``, ``stream=``), with the same errors."""
    if kwargs:
        shared_mem, stream = launch_keywords(sim._kernel.__name__ + ".simulate", kwargs,
                                             shared_mem, stream)
    return sim(grid, block, args, shared_mem)


_PY_SCALARS = {cls: dt.type for cls, dt in dtypes.PYTHON_SCALARS.items()}


def _run(kernel, simulated, grid, block, host, shared_mem, racecheck, cluster, back) -> None:
    vector.run(kernel, simulated, grid, block, host, shared_mem, racecheck, cluster)
    for original, copy in back:
        original.set(copy)


def _host_arguments(args, name: str = ""):
    """(arguments as the simulator takes them, [(device array, host copy)] to copy back)."""
    if not isinstance(args, (tuple, list)):
        raise KernelArgumentError(f"args: expected a tuple of arguments, got {type(args).__name__}")
    host, back = [], []
    for i, a in enumerate(args):
        where = f"{name}: argument {i}" if name else f"argument {i}"
        cls = _PY_SCALARS.get(type(a))
        if cls is not None:
            if cls is numpy.int64 and not -(1 << 63) <= a < (1 << 63):
                raise JitkernOverflowError(f"{where}: {a} does not fit the parameter's int64")
            host.append(cls(a))
        elif isinstance(a, numpy.void):  # a struct by value: the kernel gets a copy
            host.append(a.copy())
        elif records.is_record_class(type(a)):  # a frozen dataclass / NamedTuple
            try:  # each field as the GPU launch packs it (struct.pack: no float in an int)
                problem = records.field_error(a, True)
            except JitkernTypeError as exc:  # a class that is no C struct
                raise KernelArgumentError(f"{where}: {exc}") from None
            if problem is not None:
                raise (JitkernOverflowError if isinstance(problem, OverflowError)
                       else KernelArgumentError)(f"{where}: {problem}")
            host.append(records.as_void(a))
        elif isinstance(a, (numpy.ndarray, numpy.generic)):
            host.append(a)
        elif (view := current.host_view(a)) is not None:
            host.append(view)  # on a simulated device: its memory, written in place
        elif hasattr(a, "get") and hasattr(a, "set") and hasattr(a, "__cuda_array_interface__"):
            copy = a.get()
            host.append(copy)
            back.append((a, copy))
        elif hasattr(a, "__cuda_array_interface__"):
            raise current.not_modelled(a, where)
        else:
            raise KernelArgumentError(
                f"{where}: the simulator takes NumPy arrays, jitkern arrays and scalars, "
                f"got {type(a).__name__}"
            )
    return tuple(host), back
