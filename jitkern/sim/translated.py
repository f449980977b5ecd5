"""The simulator's own kernels: the JIT Python that the C subset writes for a string kernel
(:mod:`.ctranslate`), defined and run by the JIT's simulator (:mod:`.simulator`).

:func:`define` runs such a text; its ``@jit.rawkernel`` functions become
:class:`TranslatedKernel` objects, which the JIT's lowering reads as it reads any JIT
function (``py_func``, ``parsed()``, ``__jit_device__``, ``__jit_fingerprint__``) and which
only ever run in the simulator: the GPU runs the string kernel's own C++, compiled by its
kernel object. So the simulator needs nothing from ``kernels/`` (nor the ``jitkern.jit``
face) to run the C it translates. :func:`simulate` launches one and reports its errors at
the user's C line (:func:`at_c_line`); :func:`host_copies` reads a call's arguments.
"""

from __future__ import annotations

import itertools
import linecache
import math
import re

import numpy

from ..compiler import builtins as B
from ..compiler import frontend
from ..compiler.argtypes import host_type
from ..compiler.builtins.records import Namespace
from ..compiler.program import function_identity
from ..errors import JitkernError
from ..runtime import simulated as current
from .emit import run_text
from .simulator import Simulator

_COUNTER = itertools.count()


class TranslatedKernel:
    """A kernel (or device function) of generated Python that runs in the simulator only.
    Its arguments are the simulator's host values (NumPy arrays and scalars), typed by
    :func:`~jitkern.compiler.argtypes.host_type`."""

    allow_nonportable_cluster_size = False
    max_dynamic_shared_size_bytes = None  # a RawKernel's opt-in, set before each launch

    def __init__(self, func, mode: str, device: bool):
        self.py_func, self.mode, self.device = func, mode, device
        self.__name__ = func.__name__
        self._parsed = None
        self._simulator = None

    @property
    def __jit_device__(self):
        if not self.device:
            raise AttributeError("__jit_device__")
        return True

    def __jit_fingerprint__(self) -> str:
        digest = frontend.source_digest(self.py_func)
        return f"device:{function_identity(self.py_func)}:{digest}:{self.mode}"

    def parsed(self) -> frontend.ParsedFunction:
        if self._parsed is None:
            self._parsed = frontend.parse_function(self.py_func)
        return self._parsed

    @property
    def simulate(self) -> Simulator:
        if self._simulator is None:
            self._simulator = Simulator(self, _host_types)
        return self._simulator

    def __repr__(self) -> str:
        return f"<simulated {'device function' if self.device else 'kernel'} {self.__name__}>"


def _host_types(args) -> tuple:
    return tuple(host_type(a) for a in args)


def rawkernel(*, mode: str = "numpy", device: bool = False):
    """The decorator generated code writes (``@jit.rawkernel(device=True, mode="numpy")``)."""
    return lambda func: TranslatedKernel(func, mode, device)


#: ``jit`` in generated code: the JIT's builtins it names, and :func:`rawkernel`.
JIT = Namespace("jit", {
    "rawkernel": rawkernel, "ufunc": B.ufunc, "texture": B.texture,
    **B.ATOMICS, **B.SHUFFLES, **B.VOTES,
    **{name: getattr(B, name) for name in (
        "threadIdx", "blockIdx", "blockDim", "gridDim", "warpsize", "laneid", "grid",
        "gridsize", "syncthreads", "syncthreads_count", "syncthreads_and", "syncthreads_or",
        "syncwarp", "threadfence", "threadfence_block", "threadfence_system",
        "shared_memory", "local_memory", "ldg", "activemask", "popc", "clz", "ffs", "brev")},
})


def define(source: str, label: str) -> dict:
    """Run ``source`` (registered with linecache, so the JIT reads it as a file's); its
    namespace."""
    filename = f"<jitkern simulate {label} #{next(_COUNTER)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"numpy": numpy, "math": math, "jit": JIT}
    return run_text(source, filename, namespace)


def kernel_in(namespace: dict, py: str) -> TranslatedKernel:
    """The function ``py`` of a defined text, as a kernel."""
    return TranslatedKernel(namespace[py], "numpy", False)


def simulate(kernel, grid, block, args, shared_mem=0, racecheck=False, cluster=None) -> None:
    """Run a translated kernel; the simulator's errors name the user's C line."""
    try:
        kernel.simulate(grid, block, args, shared_mem, racecheck=racecheck, cluster=cluster)
    except JitkernError as exc:
        raise at_c_line(exc) from None


def at_c_line(exc):
    """``exc`` with each place in the generated Python (``<jitkern simulate ...>:29``)
    replaced by the C line its statement came from, and the JIT's spellings by C's."""
    message = str(exc)
    places = list(re.finditer(r"(<jitkern simulate [^>]*>):(\d+)", message))
    if not places:
        return exc

    def c_place(m):
        text = linecache.getline(m.group(1), int(m.group(2)))
        c = re.search(r"#\s*(.+ line \d+)\s*$", text)
        return c.group(1) if c else m.group(0)

    first = linecache.getline(places[0].group(1), int(places[0].group(2)))
    new = re.sub(r"(<jitkern simulate [^>]*>):(\d+)", c_place, message)
    new = new.replace("jit.syncthreads()", "__syncthreads()")
    new += f"\n    (the simulator's Python: {first.split('#')[0].strip()})"
    try:
        return type(exc)(new)
    except Exception:  # an error class with another constructor: keep the original
        return exc


# ---------------------------------------------------------------------------
# host arguments


def is_device_array(a) -> bool:
    return (not isinstance(a, numpy.ndarray) and hasattr(a, "get") and hasattr(a, "set")
            and hasattr(a, "__cuda_array_interface__"))


def host_copies(args, name: str, params=()) -> tuple[list, list]:
    """(arguments with device arrays replaced by host copies, [(device, copy)]); another
    library's GPU array (kernel ``name``'s argument, ``params`` naming them) is refused:
    the simulator cannot read it."""
    host, back = [], []
    for i, a in enumerate(args):
        gpu = not isinstance(a, numpy.ndarray) and hasattr(a, "__cuda_array_interface__")
        view = current.host_view(a) if gpu else None
        if view is not None:  # a simulated device's memory, written in place: no copy
            host.append(view)
            back.append((a, None))
        elif is_device_array(a):
            copy = a.get()
            host.append(copy)
            back.append((a, copy))
        elif gpu:
            named = f" ({params[i]})" if i < len(params) else ""
            raise current.not_modelled(a, f"{name}: argument {i}{named}")
        else:
            host.append(a)
    return host, back


def copy_back(back) -> None:
    for original, copy in back:
        if copy is not None:
            original.set(copy)


def flat(arr: numpy.ndarray) -> tuple[numpy.ndarray, bool]:
    """(the array's elements raveled in C order, whether that is a copy)."""
    if arr.flags.c_contiguous:
        return arr.reshape(-1), False
    return numpy.ascontiguousarray(arr).reshape(-1), True
