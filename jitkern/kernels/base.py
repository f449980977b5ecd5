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
import sys
import types

from ..errors import JitkernRuntimeError, JitkernTypeError
from ..sim import launch_keywords


def _not_ready(*args, **kwargs):  # replaced by the subclass's __init__
    raise JitkernRuntimeError("the kernel object is not initialised")


class KernelPartial(functools.partial):
    """Compared and hashed by identity; not picklable (``_pickle_hint`` says what to do)."""

    _pickle_hint = "a kernel cannot be pickled"

    #: Allow ``cluster=`` launches of 9 to 16 blocks per cluster (CUDA's non-portable
    #: cluster sizes, which H100-class GPUs have); 8 is the portable limit otherwise.
    allow_nonportable_cluster_size = False

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
        runtime.launch.make_fast_launcher), made once per config and kept on the launcher, so
        ``k[grid, block](...)`` runs one generated function, as ``k(grid, block, args)`` does."""
        try:
            return self.func.star_configs[config]
        except (AttributeError, KeyError, TypeError):
            return self._subscript(config)

    def _subscript(self, config):
        if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
            raise JitkernTypeError(
                "launch as kernel[grid, block](*args) or "
                "kernel[grid, block, shared_mem, stream](*args)"
            )
        shared_mem = config[2] if len(config) > 2 else 0
        stream = config[3] if len(config) > 3 else None
        star = getattr(self.func, "star", None)
        if star is None:
            return functools.partial(launch_star, self, config[0], config[1], shared_mem, stream)
        partial = functools.partial(star, self, config[0], config[1], shared_mem, stream)
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
    return kernel.func(grid, block, args, shared_mem, stream)


def _launch_keywords(kernel, kwargs, shared_mem, stream):
    return launch_keywords(kernel.__name__, kwargs, shared_mem, stream)


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