"""``jitkern.fuse``: trace a Python function of array operations into one kernel.

CuPy's model: the first call with a new argument signature (each array's dtype and ndim,
each scalar's type; and each array's shape, for a function that reads ``x.shape`` or
``x.size``) calls the function with proxy arrays (:mod:`.trace`); Python runs
everything else (helpers, closures, loops and ``if`` over Python values), and the array
operations are recorded. The recorded graph becomes an :class:`ElementwiseKernel` or a
:class:`ReductionKernel` (:mod:`.emit`), with NumPy 2's types (``resolve_dtypes`` of
each ufunc, Python numbers weak). Later calls with that signature look the kernels up.

With only NumPy arrays and scalars the function runs through NumPy instead (a global bound to
a module named ``cupy`` is read as ``numpy`` for that call).
"""

from __future__ import annotations

import copy
import functools
import sys
import types as pytypes

import numpy

from ...arrays import asarray, describe
from ...errors import JitkernTypeError
from ..base import Kernel, function_from_bytes, main_function_bytes, memoized
from . import alias as _fuse_alias, dispatch as _fuse_dispatch
from . import ops as _fuse_ops, trace as _fuse_trace, views as _fuse_views
from .graph import ReadsWrittenMemory
from .trace import FuseAttributeError, FuseTraceError, Var
from ...lazy import lazy_import

# off a fused call's path on the GPU (tests/test_first_call.py): loaded when first used
export = lazy_import("jitkern.toolchain.export")  # only when exporting
_export_kinds = lazy_import("jitkern.kernels._export_kinds")  # only when exporting

#: Modules a fused function may be written against and that fuse reads as NumPy's
#: (``jitkern`` has NumPy's routine names itself: ``jitkern.sqrt``).
ARRAY_MODULES = ("cupy",)

REDUCTIONS = _fuse_ops.REDUCTIONS
UFUNCS = _fuse_ops.UFUNCS

#: Kept for code that caught the old name: what fuse cannot record.
FuseError = FuseTraceError

_PY_SCALAR_TYPES = (bool, int, float, complex)
_HOST_TYPES = (numpy.ndarray, numpy.generic, bool, int, float, complex, type(None))


def _is_array_module(value) -> bool:
    return isinstance(value, pytypes.ModuleType) and value.__name__ in ARRAY_MODULES


def _numpy_function(fn):
    """``fn`` with the ``cupy`` modules its globals name bound to NumPy's namespace
    (``dispatch.CUPY_AS_NUMPY``: with ``get_array_module``), ``fn`` when none; module-level
    helpers of the same module are rebound too, so ``cupy.exp`` in a helper reads as
    ``numpy.exp``."""
    env = getattr(fn, "__globals__", None)  # None: a ufunc or another callable object
    if env is None or not any(_is_array_module(v) for v in env.values()):
        return fn
    new_env = dict(env)
    for name, value in env.items():
        if _is_array_module(value):
            new_env[name] = _fuse_dispatch.CUPY_AS_NUMPY
        elif isinstance(value, pytypes.FunctionType) and value.__globals__ is env:
            new_env[name] = _clone(value, new_env)
    return _clone(fn, new_env)


def _clone(fn, env):
    clone = pytypes.FunctionType(fn.__code__, env, fn.__name__, fn.__defaults__, fn.__closure__)
    clone.__kwdefaults__ = fn.__kwdefaults__
    return clone


def _signature_key(a):
    """What decides the kernel: a scalar's type, an array's dtype and ndim."""
    cls = type(a)
    if cls in _PY_SCALAR_TYPES or a is None or isinstance(a, numpy.generic):
        return cls
    dtype, ndim = getattr(a, "dtype", None), getattr(a, "ndim", None)
    if isinstance(dtype, numpy.dtype) and isinstance(ndim, int):
        return (dtype, ndim)
    info = describe(a)
    return (cls, info.dtype, len(info.shape))


def _shapes(args) -> tuple:
    return tuple(None if _signature_key(a) is type(a) else _fuse_views.array_shape(a)
                 for a in args)


def _kwargs_key(kwargs) -> tuple:
    try:
        key = tuple(sorted(kwargs.items()))
        hash(key)
    except TypeError:
        raise JitkernTypeError(
            "fuse: keyword arguments of a fused function must be hashable constants "
            f"(they are part of the kernel's signature), got {kwargs!r}"
        ) from None
    return key


class Fused(Kernel):
    """A fused function: call it like the original.

    ``kernel_for(*args)`` returns the kernel a call with such arguments runs (NumPy arrays
    stand for device arrays of their dtype), ``kernels_for`` all of them, ``graph_for`` the
    recorded operations, ``inspect(*args, arch=...)`` the source and CUBIN without a GPU.

    It is a kernel object like the others (kernels/base.py: a partial whose function is the
    call, compared by identity); the kernels it runs are ElementwiseKernel and
    ReductionKernel objects, built through the base's one ``build()`` and compile-error
    policy. What it traced is kept in the memo of builds (runtime/memo.py) per function
    (its code, closure values and defaults) and kernel name, so a function fused again
    (``jitkern.fuse(f)`` inside a loop) traces nothing that was traced before.
    """

    _kind = "fuse"

    def __init__(self, fn, kernel_name=None):
        if not callable(fn):
            raise JitkernTypeError(f"fuse expects a Python function, got {type(fn).__name__}")
        functools.update_wrapper(self, fn)
        self._fn = fn
        name = getattr(fn, "__name__", "function").strip("<>")
        self.kernel_name = kernel_name or f"fused_{name}"
        # CuPy's Fusion attribute ``name``: the given name or the function's (``func``, the
        # function, is the property below).
        self.name = kernel_name or getattr(fn, "__name__", "function")
        self._plans: dict = _shared_plans(fn, self.kernel_name)
        self._start()

    @property
    def func(self):
        """The fused Python function (CuPy's ``Fusion.func``)."""
        return self._fn

    def __getitem__(self, config):
        raise JitkernTypeError(
            f"{self.__name__} is a fused function: call it as {self.__name__}(*args) (it sizes "
            f"its own launches), not {self.__name__}[grid, block](*args)")

    def _call_name(self) -> str:  # Python's own errors for a wrong call name the function
        return getattr(self._fn, "__qualname__", self.name)

    def _launch(self, *args, **kwargs):
        if _traced(args, kwargs):
            return self._fn(*args, **kwargs)  # a fused function called from a traced one
        if all(isinstance(a, _HOST_TYPES) for a in args):
            return _numpy_function(self._fn)(*args, **kwargs)
        key = tuple([_signature_key(a) for a in args])
        if kwargs:
            key += (_kwargs_key(kwargs),)
        plan = self._plans.get(key)
        if plan is None or plan.shape_dependent:
            plan = self._plan(args, kwargs, key)
        guard = plan.guard  # None: it writes no argument, nothing can alias what it writes
        if guard is None:
            return plan.run(args)
        shared = guard(args)
        if not shared:
            return plan.run(args)
        return _fuse_alias.in_memory_order(
            plan, args, lambda: self._memory_order(args, kwargs, key), _run_on_device, shared)

    def _simulated(self, *args, **kwargs):
        if _traced(args, kwargs):
            return self._fn(*args, **kwargs)
        host = all(isinstance(a, _HOST_TYPES) for a in args)  # NumPy's own, as on a GPU
        with self._on_simulator(kwargs.get("stream"), () if host else args):
            return self.simulate(*args, **kwargs)  # JITKERN_SIMULATE=1: the kernels' work

    def _argument_what(self, i: int) -> str:
        return f"{self.kernel_name}: input 'in{i}'"  # its kernels' parameter, as on a GPU

    def _forget_builds(self) -> None:
        self._plans.clear()

    def _forget_loaded(self) -> None:
        pass  # its plans call kernel objects, which drop their own

    # -- what a call runs ----------------------------------------------------------
    def _plan(self, args, kwargs, key):
        """The plan for ``key``; a function that read ``x.shape`` has one per set of shapes."""
        return self._cached(key, args, lambda: self._new_plan(args, kwargs))

    def _memory_order(self, args, kwargs, key):
        """The plan in memory order for ``key``, traced the first time a call needs it (its
        arguments share memory that it writes: kernels/fuse/alias.py)."""
        return self._cached((key, "memory order"), args,
                            lambda: self._new_plan(args, kwargs, sequential=True))

    def _cached(self, key, args, make):
        plan = self._plans.get(key)
        if plan is not None and plan.shape_dependent:
            key = (key, _shapes(args))
            plan = self._plans.get(key)
        if plan is None:
            plan = make()
            if plan.shape_dependent:
                self._plans.setdefault(key, plan)
                key = (key, _shapes(args))
            self._plans[key] = plan
        return plan

    def _new_plan(self, args, kwargs, sequential=False):
        try:
            try:
                return _fuse_alias.plan_for(self._trace(args, kwargs, sequential),
                                            self.kernel_name)
            except ReadsWrittenMemory:  # reads what it wrote, where one kernel cannot
                return _fuse_alias.plan_for(self._trace(args, kwargs, sequential=True),
                                            self.kernel_name)
        except FuseTraceError as exc:
            raise exc.with_traceback(None) from None

    def _trace(self, args, kwargs, sequential=False):
        return _fuse_trace.trace(_numpy_function(self._fn), args, kwargs, _fuse_dispatch,
                                 sequential)

    def _key(self, args, kwargs):
        key = tuple(_signature_key(a) for a in args)
        return key + ((_kwargs_key(kwargs),) if kwargs else ())

    def _plan_for_call(self, args, kwargs):
        """The plan a call with ``args`` runs: in memory order where they share memory
        that the function writes (NumPy arrays stand for device arrays, sharing included)."""
        key = self._key(args, kwargs)
        plan = self._plan(args, kwargs, key)
        if plan.guard is not None and plan.guard(args):
            return plan if isinstance(plan, _fuse_alias.SequentialPlan) else \
                self._memory_order(args, kwargs, key)
        return plan

    def graph_for(self, *args, **kwargs):
        """The recorded operations for arguments like ``args`` (NumPy arrays allowed): a
        ``Graph``, or a ``SequentialGraph`` (memory order) where the arguments share memory
        the function writes."""
        return self._plan_for_call(args, kwargs).graph

    def kernels_for(self, *args, **kwargs) -> tuple:
        """Every kernel a call with such arguments runs, in order."""
        return self._plan_for_call(args, kwargs).kernels

    def kernel_for(self, *args, **kwargs):
        """The (first) ElementwiseKernel or ReductionKernel run for arguments like ``args``."""
        return self.kernels_for(*args, **kwargs)[0]

    def inspect(self, *args, arch=None, **kwargs):
        """Source, CUBIN and resource use of the (first) kernel for ``args``; NumPy arrays
        stand for device arrays, and with ``arch`` no GPU is needed."""
        return self._plan_for_call(args, kwargs).inspect(args, arch)

    @property
    def simulate(self) -> _Simulate:
        """``fused.simulate(*args)``: run the fused kernels on the CPU: the simulator runs
        their C++, the text the GPU compiles (docs/debugging.md);
        ``fused.simulate.source(*args)`` shows the Python it runs."""
        return _Simulate(self)

    def export(self, path, *args, arch=("sm_80", "sm_90"), format="fatbin"):
        """Write the kernel a call with arguments like ``args`` runs (NumPy arrays stand for
        device arrays), with a header and a manifest (docs/export.md); ``jitkern.load``
        calls it like this function. Fused functions that run one elementwise kernel over
        whole arguments only."""
        export.check_format(format)
        return export.write(path, _export_kinds.fused_spec(self, args), arch, format)

    def clear_cache(self) -> None:
        """Forget every traced signature (the next call traces again); CuPy's name for
        :meth:`clear_memo`."""
        self.clear_memo()

    # -- pickling: by reference to the decorated function ----------------------------
    def __reduce__(self):
        module_name = getattr(self, "__module__", None) or ""
        found = sys.modules.get(module_name)
        for part in getattr(self, "__qualname__", "").split("."):
            found = getattr(found, part, None)
        if found is self:
            blob = main_function_bytes(module_name, self._fn)  # a script's: by value
            if blob is None:
                return self.__qualname__  # a module-level name: pickled as a reference
            return (_rebuild_from_bytes, (blob, self.kernel_name))
        return (_rebuild, (self._fn, self.kernel_name))

    def __repr__(self) -> str:
        return f"<jitkern.fuse {self.__name__!r}>"

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)


class _Simulate:
    """``fused.simulate``: the plan's kernels (ElementwiseKernel and ReductionKernel objects)
    run by their own ``.simulate``, which translates their C++ (the text the GPU compiles)
    into the simulator's kernels, on host copies of the arguments."""

    __slots__ = ("_fused",)

    def __init__(self, fused: Fused):
        self._fused = fused

    def _plan(self, host, kwargs):
        fused = self._fused
        return fused._plan(host, kwargs, fused._key(host, kwargs))

    def __call__(self, *args, **kwargs):
        """Run the fused function's kernels on the CPU. Writes into argument arrays are
        copied back; results are NumPy arrays, or jitkern arrays when an argument was one."""
        fused = self._fused
        host, write_back = _fuse_alias.host_arguments(args, fused.__name__)
        key = fused._key(host, kwargs)
        plan = self._plan(host, kwargs)
        result = _fuse_alias.execute(
            plan, host, lambda: fused._memory_order(host, kwargs, key), _run_simulated)
        for write in write_back:
            write()
        if not any(_on_device(a) for a in args):
            return result
        if isinstance(result, tuple):
            return tuple(asarray(r) if isinstance(r, numpy.ndarray) else r for r in result)
        return asarray(result) if isinstance(result, numpy.ndarray) else result

    def source(self, *args, **kwargs) -> str:
        """The simulator's Python of each kernel (one per stage, in the order they run) a
        call with arguments like ``args`` runs: the call is simulated once on copies of the
        arguments (the plan is the call's, sharing of memory between them included)."""
        host = tuple(a.get() if _on_device(a) else a for a in args)
        plan = self._fused._plan_for_call(host, kwargs)
        copies = copy.deepcopy(host)
        if isinstance(plan, _fuse_alias.SequentialPlan):
            plan.run(copies, _run_simulated)
        else:
            _run_simulated(plan, copies)
        return "\n\n".join(k.simulate.source() for k in plan.kernels)

    def __repr__(self) -> str:
        return f"<simulate of {self._fused!r}>"


def _traced(args, kwargs) -> bool:
    """Whether a fused function is called from a function being traced (its proxies)."""
    return any(isinstance(a, Var) for a in args) or any(isinstance(v, Var)
                                                        for v in kwargs.values())


def _shared_plans(fn, kernel_name) -> dict:
    """The traced plans of ``fn`` by signature, shared by every Fused of the same function:
    its code, the values its closure holds and its defaults (what tracing runs with), kept
    in the memo of builds; a private dict when those values cannot key it."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return {}
    try:
        cells = tuple(c.cell_contents for c in fn.__closure__ or ())
        key = ("fuse-plans", code, id(fn.__globals__), cells, fn.__defaults__,
               tuple(sorted((fn.__kwdefaults__ or {}).items())), kernel_name)
        hash(key)
    except (TypeError, ValueError):  # an unhashable or empty cell: not shared
        return {}
    return memoized(key, dict)


_on_device = _fuse_alias.on_device


def _run_on_device(plan, args):
    return plan.run(args)


def _run_simulated(plan, args):
    return plan.run_with(args, [k.simulate for k in plan.kernels], numpy.empty)


def _rebuild(fn, kernel_name):
    return Fused(fn, kernel_name)


def _rebuild_from_bytes(blob, kernel_name):
    return Fused(function_from_bytes(blob), kernel_name)


def fuse(*args, kernel_name=None):
    """Fuse a function of array operations into one kernel (CuPy's ``cupy.fuse``).

    ``@jitkern.fuse()``, ``@jitkern.fuse`` and ``@jitkern.fuse(kernel_name='k')`` all work.
    """
    if len(args) == 1 and callable(args[0]):
        return Fused(args[0], kernel_name)
    if args:
        raise JitkernTypeError("fuse: use @jitkern.fuse() or @jitkern.fuse(kernel_name='name')")
    return lambda fn: Fused(fn, kernel_name)


__all__ = [
    "REDUCTIONS", "UFUNCS", "FuseAttributeError", "FuseError", "FuseTraceError", "Fused", "fuse",
]  # fmt: skip
