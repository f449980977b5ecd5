"""RawKernel and RawModule on the CPU: each ``__global__`` function of the source is a
kernel of generated Python (:mod:`.ctranslate`, :mod:`.translated`) with the same
parameters; pointer parameters take the arrays' flat memory (C-contiguous, viewed as the
pointee type), scalars are converted to the parameter's C type (``k.simulate``, and every
launch while ``JITKERN_SIMULATE=1``). A simulated device runs jitkern's own array kernels
from their C source here too (:func:`run_source`)."""

from __future__ import annotations

import dataclasses
import re
from typing import Callable

import numpy

from ..compiler.strings.params import ctype_of
from ..errors import FunctionNotFoundError, JitkernNotImplementedError, KernelArgumentError
from ..handles import handle_ctype, handle_value
from ..runtime import memo
from ..runtime.launch import check_simulated
from ..toolchain.includes import user_headers_digest
from .csubset import C64, C128, Pointer, Refused, excerpt, refuse
from .cstructs import CStruct, byte_views, struct_argument
from .ctemplates import parse
from .ctranslate import HELPERS, translate_unit
from ..runtime.limits import launch_keywords
from .strings import c_source, resolved_type
from .translated import copy_back, define, host_copies, is_device_array, kernel_in, simulate


class SimModule:
    """A RawModule's (or RawKernel's) source as JIT kernels, translated once; ``types``
    binds a template kernel's type parameters (an instantiation from name_expressions)."""

    def __init__(self, code: str, where: str, types: dict | None = None):
        types = types or {}
        ast, _, self.templates = parse(code, where, types)
        tr, sources = translate_unit(ast, where, types, templates=self.templates)
        self.functions = {n: f for n, f in tr.functions.items()}
        self.source = HELPERS + "\n\n" + "\n\n".join(sources.values())
        namespace = define(self.source, where)
        self.kernels = {n: kernel_in(namespace, f.py) for n, f in tr.functions.items() if f.kernel}


def module_of(source: RawSource) -> tuple[SimModule, str]:
    """(the translation of ``source``'s code, kept in ``source.made``; the C name of its
    kernel). A template kernel's name (``fx3<float>``) is translated with its type
    parameters bound."""
    name, made = source.name, source.made
    key = name if "<" in name else ""
    if key not in made:  # a kernel made again from the same source: the memo's translation
        try:
            made[key] = memo.translated(
                ("raw", source.code, source.options,
                 user_headers_digest(source.code, source.options), source.where, key),
                lambda: _translate_module(source, name, key))
        except Refused as exc:  # the user's line, shown with a caret
            raise Refused(excerpt(str(exc), source.code.split("\n"),
                                  anchor=getattr(exc, "anchor", None))) from None
    module, base = made[key]
    return module, base or name


def _translate_module(source: RawSource, name: str, key: str) -> tuple[SimModule, str]:
    if source.code is None:  # RawModule(path=...): a compiled binary, no C to run
        raise JitkernNotImplementedError(
            f"{source.where}: a module loaded from a compiled binary (RawModule(path=...)) "
            "has no CUDA C source, and the simulator runs kernels from their source: launch "
            "it on a GPU, or simulate a RawModule(code=...) of the source it was built from")
    code = c_source(source.code, source.options, source.where)
    if key:
        code, types, base = _instantiate(code, name, source.where)
        return SimModule(code, source.where, types), base
    return SimModule(code, source.where), ""


def _instantiate(code: str, name: str, where: str):
    """(the source with ``name``'s template header blanked, its type parameters, the
    kernel's C name) for a name expression such as ``fx3<float>``."""
    m = re.fullmatch(r"\s*(\w+)\s*<(.*)>\s*", name)
    if m is None:
        raise refuse(f"the name expression {name!r}", where)
    base, args = m.group(1), [a.strip() for a in m.group(2).split(",")]
    header = re.compile(r"template\s*<([^<>]*)>(?=[^{;]*__global__[^{;(]*\b"
                        + re.escape(base) + r"\s*\()")
    found = header.search(code)
    if found is None:
        raise refuse(f"the name expression {name!r} (no template kernel {base})", where)
    params = [p.strip() for p in found.group(1).split(",")]
    types = {}
    for param, arg in zip(params, args):
        pm = re.fullmatch(r"(?:typename|class)\s+(\w+)", param)
        if pm is None:
            raise refuse(f"the template parameter {param!r} (only type parameters)", where)
        types[pm.group(1)] = resolved_type(arg, {})
    if len(params) != len(args):
        raise refuse(f"the name expression {name!r} ({len(params)} template parameters)",
                     where)
    blank = re.sub(r"[^\n]", " ", found.group(0))
    return code[: found.start()] + blank + code[found.end():], types, base


@dataclasses.dataclass(frozen=True)
class RawSource:
    """What the simulator runs of a raw kernel: its kernel ``name`` in ``code`` (``where``
    names the code in errors), the compile ``options`` (their -D/-U/-I/-include reach the
    preprocessor), ``params()``: the C parameters a launch is checked against (None: not
    checked; asked at a launch, since knowing them may take a compile), the dynamic shared
    memory opted in to, and ``made``: the dict that keeps the code's translations (one per
    template instantiation)."""

    code: str
    name: str
    where: str
    options: tuple
    params: Callable
    shared_opt_in: object
    made: dict


def source_of(kernel) -> RawSource:
    """A RawKernel's (or a RawModule kernel's) :class:`RawSource`: everything the simulator
    reads of the kernel object, read here."""
    module = kernel._module
    owner = module if module is not None else kernel
    where = "RawModule" if module is not None else f"RawKernel {kernel.name!r}"
    made = owner.__dict__.setdefault("_sim_modules", {})
    return RawSource(owner._source, kernel.name, where, owner.options, lambda: kernel._params,
                     getattr(kernel, "_shared_opt_in", None), made)


#: CUDA C source -> its translations, for :func:`run_source` (jitkern's own array kernels:
#: one source per dtype pair or item size, so few)
_SOURCES: dict = {}


def run_source(code: str, symbol: str, grid, block, args) -> None:
    """Run kernel ``symbol`` of CUDA C ``code`` (a simulated device's array kernels,
    sim/device.py), checked against its C parameters as a RawKernel's launch is."""
    made = _SOURCES.setdefault(code, {})  # jitkern's own kernels: not checked
    run_raw(RawSource(code, symbol, f"RawKernel {symbol!r}", (), _unchecked, None, made),
            grid, block, args)


def _unchecked():
    return None


def run_raw(source: RawSource, grid, block, args, shared_mem=0, racecheck=False,
            cluster=None) -> None:
    """Launch ``source``'s kernel in the simulator."""
    name, where = source.name, source.where
    module, cname = module_of(source)
    if cname not in module.kernels and module.templates.kernel_line(cname) is not None:
        refused = refuse(f"a template __global__ function ({cname}) launched without its "
                         "template arguments: instantiate it with name_expressions",
                         f"{where} line {module.templates.kernel_line(cname)}")
        raise Refused(excerpt(str(refused), source.code.split("\n"))) from None
    if cname not in module.kernels:
        listed = ", ".join(map(repr, sorted(module.kernels))) or "none"
        raise FunctionNotFoundError(
            f"{name}: the source has no __global__ function of this name (it has {listed}); "
            "the simulator runs extern \"C\" kernels by their C name"
        )
    if not isinstance(args, (tuple, list)):
        raise KernelArgumentError(f"{name}: args must be a tuple, got {type(args).__name__}")
    params = source.params()
    if params is not None:  # what a GPU launch checks once compiled (check_args=True)
        check_simulated(tuple(args), params, name)
    fn = module.functions[cname]
    host, back = host_copies(args, name, [p for p, _ in fn.params])
    values = raw_arguments(name, fn.params, host) + byte_views(fn.views, host)
    kernel = module.kernels[cname]
    kernel.max_dynamic_shared_size_bytes = source.shared_opt_in  # (its attribute's setter)
    simulate(kernel, grid, block, tuple(values), shared_mem, racecheck, cluster)
    copy_back(back)


def _ctype(t) -> str:
    if isinstance(t, CStruct):
        return t.name
    if isinstance(t, Pointer):
        return _ctype(t.elem) + "*"
    if t in (C64, C128):
        return f"complex<{'float' if t == C64 else 'double'}>"
    return ctype_of(t)


def raw_arguments(name: str, params: list, args: list) -> list:
    """The arguments as the translated kernel takes them: flat arrays viewed as the
    pointee type, scalars of the parameters' types."""
    if len(args) != len(params):
        listed = ", ".join(f"{_ctype(t)} {p}" for p, t in params)
        raise KernelArgumentError(
            f"{name} takes {len(params)} argument(s) ({listed}), but {len(args)} were given")
    out = []
    for i, (a, (pname, t)) in enumerate(zip(args, params)):
        what = f"{name}: argument {i} ({pname})"
        if isinstance(t, Pointer):
            out.append(_pointer_argument(a, t, what))
        elif isinstance(t, CStruct):  # passed as its fields (sim.cstructs)
            out.extend(struct_argument(a, t, what))
        else:
            out.append(_scalar_argument(a, t, what))
    return out


def _pointer_argument(a, t: Pointer, what: str):
    if not isinstance(a, numpy.ndarray):
        raise KernelArgumentError(
            f"{what}: the kernel expects a pointer ({_ctype(t)}), got {type(a).__name__}; "
            "the simulator takes NumPy arrays (and jitkern arrays, copied)")
    if not a.flags.c_contiguous:
        raise KernelArgumentError(
            f"{what}: a non-contiguous array; the kernel reads the array's memory, which the "
            "simulator gives as its C-ordered elements: pass numpy.ascontiguousarray(x)")
    view = a.reshape(-1)
    if a.dtype != t.elem:
        try:
            view = view.view(t.elem)
        except ValueError:
            raise KernelArgumentError(
                f"{what}: a {a.dtype} array of {a.nbytes} bytes cannot be read as "
                f"{_ctype(t)}") from None
    return view


def _scalar_argument(a, t, what: str):
    if handle_ctype(type(a)) is not None:  # a texture/surface object: its 64-bit handle
        if t != numpy.uint64:
            raise KernelArgumentError(
                f"{what}: the kernel expects {_ctype(t)}, got a {type(a).__name__} (texture "
                "and surface objects go to cudaTextureObject_t/cudaSurfaceObject_t parameters)")
        return numpy.uint64(handle_value(a))
    if isinstance(a, numpy.ndarray) or is_device_array(a):
        raise KernelArgumentError(
            f"{what}: the kernel expects a scalar ({_ctype(t)}), got an array")
    if isinstance(a, (bool, int, float, complex)):
        if isinstance(a, float) and t.kind in "biu":
            raise KernelArgumentError(
                f"{what}: the kernel expects {_ctype(t)}, got the float {a!r}")
        if isinstance(a, complex) and t.kind != "c":
            raise KernelArgumentError(
                f"{what}: the kernel expects {_ctype(t)}, got the complex {a!r}")
        if t.kind in "iu" and not isinstance(a, bool):
            info = numpy.iinfo(t)
            if not info.min <= a <= info.max:
                raise KernelArgumentError(
                    f"{what}: {a} does not fit in {_ctype(t)} ({info.min}..{info.max})")
        return t.type(a)
    if isinstance(a, numpy.generic):
        if a.dtype == t:
            return a
        if a.dtype.itemsize == t.itemsize:  # the GPU reads the bytes as the parameter's type
            return numpy.array(a).view(t)[()]
        raise KernelArgumentError(
            f"{what}: the kernel parameter is {t.itemsize} bytes ({_ctype(t)}), but a "
            f"{a.dtype} packs to {a.dtype.itemsize} bytes; pass numpy.{t.name}(x)")
    raise KernelArgumentError(f"{what}: cannot pass a {type(a).__name__} to the simulator")


class RawSimulator:
    """``raw_kernel.simulate``: ``[grid, block](*args, shared_mem=0, stream=None)`` or
    ``(grid, block, args, shared_mem=0, stream=None)``, run on the CPU."""

    def __init__(self, kernel):
        self._kernel = kernel

    def __call__(self, grid, block, args, shared_mem=0, stream=None, racecheck=False, *,
                 cluster=None):
        """``racecheck=True`` also reports shared-memory races (docs/debugging.md);
        ``cluster=`` is checked and run as a JIT kernel's simulated cluster launch."""
        run_raw(source_of(self._kernel), grid, block, args, _shared_mem(shared_mem), racecheck,
                cluster)

    def __getitem__(self, config):
        if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
            raise KernelArgumentError(
                "launch as kernel.simulate[grid, block](*args) or "
                "kernel.simulate[grid, block, shared_mem, stream](*args)")
        shared_mem = config[2] if len(config) > 2 else 0
        stream = config[3] if len(config) > 3 else None
        return _RawLaunch(self, config[0], config[1], shared_mem, stream)

    @property
    def source(self) -> str:
        """The Python of the JIT kernels the simulator runs for this kernel's source."""
        return module_of(source_of(self._kernel))[0].source

    def bind(self, grid, block, *args, shared_mem=0, stream=None) -> BoundRaw:
        """``raw_kernel.bind(...)`` in the simulator: calling it runs the launch on the CPU
        (``stream`` is accepted and ignored), as ``bind`` does while simulate is on."""
        return BoundRaw(self._kernel, grid, block, args, shared_mem)

    def _translated(self):
        source = source_of(self._kernel)
        made = source.made.get(source.name if "<" in source.name else "")
        return None if made is None else made[0].kernels.get(made[1] or source.name)

    @property
    def last_path(self) -> str | None:
        """Which path ran this kernel's last simulated launch, as a JIT kernel's
        ``simulate.last_path``: ``"vector"``, ``"threads"``, or None before the first."""
        translated = self._translated()
        return None if translated is None else translated.simulate.last_path

    @property
    def why_threads(self) -> str | None:
        """Why the last simulated launch ran on the per-thread scheduler (None if not)."""
        translated = self._translated()
        return None if translated is None else translated.simulate.why_threads


class _RawLaunch:
    def __init__(self, sim, grid, block, shared_mem, stream):
        self.sim, self.grid, self.block = sim, grid, block
        self.shared_mem, self.stream = shared_mem, stream

    def __call__(self, *args, **kwargs):
        shared_mem, stream = self.shared_mem, self.stream
        if kwargs:
            shared_mem, stream = launch_keywords(f"{self.sim._kernel.name}.simulate", kwargs,
                                                 shared_mem, stream)
        self.sim(self.grid, self.block, args, shared_mem, stream)


class BoundRaw:
    """``raw_kernel.bind(grid, block, *args)`` while simulate is on: calling it runs the
    launch in the simulator; ``set_arg(i, value)`` replaces an argument."""

    def __init__(self, kernel, grid, block, args, shared_mem=0):
        self._kernel, self.grid, self.block = kernel, grid, block
        self.shared_mem, self.stream = _shared_mem(shared_mem), None
        self.args = list(args)

    def __call__(self) -> None:
        run_raw(source_of(self._kernel), self.grid, self.block, tuple(self.args),
                self.shared_mem)

    def set_arg(self, index: int, value) -> None:
        self.args[index] = value


def _shared_mem(value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, numpy.integer)) or value < 0:
        raise KernelArgumentError(f"shared_mem: expected a non-negative int, got {value!r}")
    return int(value)


__all__ = ["BoundRaw", "RawSimulator", "run_source"]
