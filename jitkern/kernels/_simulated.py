"""String kernels on the CPU: RawKernel, RawModule, ElementwiseKernel and ReductionKernel
as JIT kernels run by the simulator (``k.simulate``, and every call while
``JITKERN_SIMULATE=1``).

The C is translated by :mod:`jitkern.sim.ctranslate` into the Python of
``@jitkern.rawkernel`` kernels, which ``kernel.simulate[grid, block]`` runs as it runs any JIT kernel (as fuse's
simulated path does, :mod:`._fuse_jit`):

- RawKernel/RawModule: each ``__global__`` function is a JIT kernel with the same
  parameters; pointer parameters take the arrays' flat memory (C-contiguous, viewed as
  the pointee type), scalars are converted to the parameter's C type.
- ElementwiseKernel: a grid-stride loop over the broadcast size; each non-raw parameter
  is its element (``x`` reads and writes ``x[i]`` of the broadcast, raveled array), raw
  ones are flat arrays, ``i`` and ``_ind.size()`` are the loop's index and size,
  ``_ind.get()`` element i's index over the loop's shape (the GPU's, after reduce_dims).
- ReductionKernel: one block per output element, as fuse's reductions: each thread maps
  and combines a strided part, a shared-memory tree combines the threads' values with
  ``reduce_expr`` (``a``, ``b``), thread 0 runs ``post_map_expr``.
"""

from __future__ import annotations

import itertools
import linecache
import math
import re
from types import SimpleNamespace

import numpy

from .. import jit
from ..arrays import asarray
from ..errors import FunctionNotFoundError, JitkernError, JitkernValueError, KernelArgumentError
from ..runtime import simdevice
from ..runtime.handles import handle_ctype, handle_value
from ..runtime.launch import check_simulated
from ..runtime.module import cluster_refused
from ..sim import block_size_of, launch_keywords
from ..sim.csubset import _BASE, C64, C128, I32, I64, TYPEDEFS, Pointer, Refused, cupy_element
from ..sim.cstructs import CStruct, byte_views, struct_argument
from ..sim.ctemplates import parse
from ..sim.csubset import refuse as _refuse
from ..sim.ctranslate import _RESERVED, HELPERS, Function, Translator, Var, translate_unit
from ..compiler.strings.mapping import CUPY_BLOCK, cupy_dims, per_thread_reason
from ..compiler.strings.mapping import raw_names as raw_names_used
from ..compiler.strings.params import (
    DTYPE_BY_NAME,
    HANDLE_DTYPES,
    convert_scalar,
    ctype_of,
    param_dtype,
    resolve_placeholders,
    scalar_dtype,
)

_COUNTER = itertools.count()
#: Elementwise launches: threads per block, and at most this many blocks.
BLOCK, MAX_BLOCKS = 128, 64
#: Texture/surface placeholders' record dtypes, and the handle they are in a kernel.
_HANDLE_DTYPES = frozenset(HANDLE_DTYPES.values())
_HANDLE = numpy.dtype(numpy.uint64)
#: Threads per block of a reduction (the shared-memory tree's width).
REDUCE_BLOCK = 32


def _globals() -> dict:
    return {"numpy": numpy, "math": math, "jit": jit}


def define(source: str, label: str) -> dict:
    """Run ``source`` (registered with linecache, so the JIT reads it as a file's)."""
    filename = f"<jitkern simulate {label} #{next(_COUNTER)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = _globals()
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - the source made here
    return namespace


def _kernel(namespace: dict, py: str):
    return namespace["jit"].rawkernel(mode="numpy")(namespace[py])


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


def _is_device_array(a) -> bool:
    return (not isinstance(a, numpy.ndarray) and hasattr(a, "get") and hasattr(a, "set")
            and hasattr(a, "__cuda_array_interface__"))


def host_copies(args, name: str, params=()) -> tuple[list, list]:
    """(arguments with device arrays replaced by host copies, [(device, copy)]); another
    library's GPU array (kernel ``name``'s argument, ``params`` naming them) is refused:
    the simulator cannot read it."""
    host, back = [], []
    for i, a in enumerate(args):
        gpu = not isinstance(a, numpy.ndarray) and hasattr(a, "__cuda_array_interface__")
        view = simdevice.host_view(a) if gpu else None
        if view is not None:  # a simulated device's memory, written in place: no copy
            host.append(view)
            back.append((a, None))
        elif _is_device_array(a):
            copy = a.get()
            host.append(copy)
            back.append((a, copy))
        elif gpu:
            named = f" ({params[i]})" if i < len(params) else ""
            raise simdevice.not_modelled(a, f"{name}: argument {i}{named}")
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


# ---------------------------------------------------------------------------
# RawKernel and RawModule


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
        self.kernels = {n: _kernel(namespace, f.py) for n, f in tr.functions.items() if f.kernel}


def module_of(owner, code: str, where: str, name: str = "") -> tuple[SimModule, str]:
    """(the translation of ``code``, kept on ``owner``, a RawKernel or RawModule; the C
    name of kernel ``name``). A template kernel's name (``fx3<float>``) is translated
    with its type parameters bound."""
    made = owner.__dict__.setdefault("_sim_modules", {})
    key = name if "<" in name else ""
    if key not in made:
        if key:
            code, types, base = _instantiate(code, name, where)
            made[key] = (SimModule(code, where, types), base)
        else:
            made[key] = (SimModule(code, where), "")
    module, base = made[key]
    return module, base or name


def _instantiate(code: str, name: str, where: str):
    """(the source with ``name``'s template header blanked, its type parameters, the
    kernel's C name) for a name expression such as ``fx3<float>``."""
    m = re.fullmatch(r"\s*(\w+)\s*<(.*)>\s*", name)
    if m is None:
        raise _refuse(f"the name expression {name!r}", where)
    base, args = m.group(1), [a.strip() for a in m.group(2).split(",")]
    header = re.compile(r"template\s*<([^<>]*)>(?=[^{;]*__global__[^{;(]*\b"
                        + re.escape(base) + r"\s*\()")
    found = header.search(code)
    if found is None:
        raise _refuse(f"the name expression {name!r} (no template kernel {base})", where)
    params = [p.strip() for p in found.group(1).split(",")]
    types = {}
    for param, arg in zip(params, args):
        pm = re.fullmatch(r"(?:typename|class)\s+(\w+)", param)
        if pm is None:
            raise _refuse(f"the template parameter {param!r} (only type parameters)", where)
        types[pm.group(1)] = _resolved_type(arg, {})
    if len(params) != len(args):
        raise _refuse(f"the name expression {name!r} ({len(params)} template parameters)",
                     where)
    blank = re.sub(r"[^\n]", " ", found.group(0))
    return code[: found.start()] + blank + code[found.end():], types, base


def run_raw(kernel, grid, block, args, shared_mem=0, racecheck=False, cluster=None) -> None:
    """Launch RawKernel ``kernel`` in the simulator."""
    name = kernel.name
    owner = kernel._module if kernel._module is not None else kernel
    where = "RawModule" if kernel._module is not None else f"RawKernel {name!r}"
    module, cname = module_of(owner, owner._source, where, name)
    if cname not in module.kernels and module.templates.kernel_line(cname) is not None:
        raise _refuse(f"a template __global__ function ({cname}) launched without its template "
                      "arguments: instantiate it with name_expressions",
                      f"{where} line {module.templates.kernel_line(cname)}")
    if cname not in module.kernels:
        listed = ", ".join(map(repr, sorted(module.kernels))) or "none"
        raise FunctionNotFoundError(
            f"{name}: the source has no __global__ function of this name (it has {listed}); "
            "the simulator runs extern \"C\" kernels by their C name"
        )
    if not isinstance(args, (tuple, list)):
        raise KernelArgumentError(f"{name}: args must be a tuple, got {type(args).__name__}")
    if kernel._params is not None:  # what a GPU launch checks once compiled (check_args=True)
        check_simulated(tuple(args), kernel._params, name)
    fn = module.functions[cname]
    host, back = host_copies(args, name, [p for p, _ in fn.params])
    values = raw_arguments(name, fn.params, host) + byte_views(fn.views, host)
    jk = module.kernels[cname]
    # the dynamic shared memory the RawKernel opted in to (its attribute's setter keeps it)
    jk.max_dynamic_shared_size_bytes = getattr(kernel, "_shared_opt_in", None)
    simulate(jk, grid, block, tuple(values), shared_mem, racecheck, cluster)
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
    if isinstance(a, numpy.ndarray) or _is_device_array(a):
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
        run_raw(self._kernel, grid, block, args, _shared_mem(shared_mem), racecheck, cluster)

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
        k = self._kernel
        owner = k._module if k._module is not None else k
        where = "RawModule" if k._module is not None else f"RawKernel {k.name!r}"
        return module_of(owner, owner._source, where, k.name)[0].source

    def bind(self, grid, block, *args, shared_mem=0, stream=None) -> BoundRaw:
        """``raw_kernel.bind(...)`` in the simulator: calling it runs the launch on the CPU
        (``stream`` is accepted and ignored), as ``bind`` does while simulate is on."""
        return BoundRaw(self._kernel, grid, block, args, shared_mem)

    def _translated(self):
        k = self._kernel
        owner = k._module if k._module is not None else k
        made = owner.__dict__.get("_sim_modules", {}).get(k.name if "<" in k.name else "")
        return None if made is None else made[0].kernels.get(made[1] or k.name)

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
        run_raw(self._kernel, self.grid, self.block, tuple(self.args), self.shared_mem)

    def set_arg(self, index: int, value) -> None:
        self.args[index] = value


def _shared_mem(value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, numpy.integer)) or value < 0:
        raise KernelArgumentError(f"shared_mem: expected a non-negative int, got {value!r}")
    return int(value)


# ---------------------------------------------------------------------------
# ElementwiseKernel


def _resolved_type(ctype: str, bound: dict):
    """A parameter-list C type (``float``, ``T``) as a dtype."""
    ctype = " ".join(ctype.split())
    if ctype in bound:
        return bound[ctype]
    if ctype in TYPEDEFS:
        return TYPEDEFS[ctype]
    key = tuple(sorted(ctype.replace("long long", "long long").split()))
    t = _BASE.get(key)
    if t is None:
        t = DTYPE_BY_NAME.get(ctype)
    if t is None:
        raise JitkernValueError(f"the type {ctype!r} is not one the simulator knows")
    return numpy.dtype(t)


def _placeholder_types(bound: dict) -> dict:
    return {k: cupy_element(numpy.dtype(v)) for k, v in bound.items()
            if len(k) and k.isidentifier()}


class _Unit:
    """Parse ``parts`` (``(label, text)``, joined with newlines) as one translation unit;
    errors name the part and its line."""

    def __init__(self, kernel_name: str, parts, types: dict):
        self.spans = []
        lines = []
        for label, text in parts:
            start = len(lines) + 1
            part_lines = text.split("\n")
            lines.extend(part_lines)
            self.spans.append((start, start + len(part_lines) - 1, label))
        self.text = "\n".join(lines)
        self.name = kernel_name
        try:
            self.ast, _, self.templates = parse(self.text, kernel_name, types)
        except Refused as exc:
            raise Refused(_locate(self, str(exc))) from None


def _locate(unit: _Unit, message: str) -> str:
    def sub(m):
        n = int(m.group(1))
        for start, end, label in unit.spans:
            if start <= n <= end and label:
                return f"{unit.name} {label} line {n - start + 1}"
        return f"{unit.name} line {n}"

    return re.sub(re.escape(unit.name) + r" line (\d+)", sub, message, count=1)


def _translate(unit: _Unit, types: dict, entry_functions: dict):
    """(the Python of the unit's device functions and of each entry, by name)."""
    try:
        tr, sources = translate_unit(unit.ast, unit.name, types, keep=(), special=entry_functions,
                                     locate=lambda n: _locate(unit, f"{unit.name} line {n}"),
                                     templates=unit.templates)
    except Refused as exc:
        raise Refused(_locate(unit, str(exc))) from None
    return tr, sources


class StringSim:
    """A string kernel's call on the CPU: its JIT kernels are made once per argument dtypes,
    scalar kinds and ``_ind.get()`` rank, and kept on the kernel object."""

    def __init__(self, kernel):
        self._kernel = kernel

    def build(self, dtypes, scalars, ndim=None):
        cache = self._kernel.__dict__.setdefault("_sim_kernels", {})
        key = (dtypes, scalars, ndim)
        made = cache.get(key)
        if made is None:
            made = cache[key] = self._make(dtypes, scalars, ndim)
        return made


class ElementwiseSim(StringSim):
    """``elementwise_kernel.simulate(*args, size=None)``: the call on the CPU."""

    def __call__(self, *args, size=None, stream=None, block_size=None, cluster=None):
        k = self._kernel
        if cluster is not None:
            raise cluster_refused("ElementwiseKernel", k.name)
        host, back = host_copies(args, k.name, [p.name for p in k.params])
        arrays = k._describe_args(host, host_ok=True)
        nin = k.nin
        a = SimpleNamespace()  # what the kernel's own shape rules fill in
        a.out_given = len(host) == k.nargs
        in_types = [scalar_dtype(v) if arr is None else arr.dtype
                    for v, arr in zip(host[:nin], arrays[:nin])]
        a.bound = resolve_placeholders(k.in_params, k.out_params, in_types,
                                       [arr.dtype for arr in arrays[nin:]],
                                       [arr is None for arr in arrays[:nin]], k.name)
        # a texture/surface placeholder is the object's 64-bit handle in the kernel
        dtypes = tuple(_HANDLE if param_dtype(p, a.bound) in _HANDLE_DTYPES else
                       param_dtype(p, a.bound) for p in k.params)
        k._decide_shape(a, arrays, size)
        shape, n = a.shape, a.size
        outs = list(host[nin:]) if a.out_given else [
            numpy.empty(shape, dt) for dt in dtypes[nin:]]
        scalars = tuple(idx for idx in range(nin) if arrays[idx] is None)
        index_shape = self._index_shape(a, arrays, dtypes)
        kernel = self.build(dtypes, scalars, None if index_shape is None else len(index_shape))
        values, writes = [], []
        for idx, p in enumerate(k.params):
            v = host[idx] if idx < nin else outs[idx - nin]
            if arrays[idx] is None if idx < len(arrays) else False:
                values.append(numpy.uint64(handle_value(v)) if handle_ctype(type(v)) else
                              convert_scalar(v, dtypes[idx], p.name, k.name))
                continue
            if p.raw:
                f, copied = flat(v)
                values += raw_values(f, v)
                if index_shape is not None:
                    _check_raw_rank(k.name, p.name, v, index_shape, kernel)
            elif p.is_output:
                f, copied = flat(v)
                values.append(f)
            else:
                f = numpy.ascontiguousarray(numpy.broadcast_to(v, shape)).reshape(-1)
                if any(numpy.may_share_memory(f, o) for o in outs):
                    f = f.copy()  # an input that is also an output: each thread reads its
                copied = False    # own element before writing it, so a copy reads the same
                values.append(f)
            if copied:
                writes.append((v, f))
        if index_shape is not None:
            values.append(numpy.array(index_shape or (1,), numpy.int64))
        if raw_names_used(k):
            values.append(numpy.array(self._loop_shape(a, arrays, dtypes) or (1,), numpy.int64))
        if n:
            block = block_size_of(block_size, BLOCK)[0]
            grid = min(MAX_BLOCKS, -(-n // block))
            if per_thread_reason(k):  # CuPy's one element per thread (strings/mapping.py)
                grid, block = cupy_dims(n, block_size_of(block_size, CUPY_BLOCK)[0])
            simulate(kernel, grid, block, (*values, numpy.int64(n)))
        for v, f in writes:
            v[...] = f.reshape(v.shape)
        copy_back(back)
        if back and not a.out_given:
            outs = [asarray(o) for o in outs]
        return k._result(outs)

    def _loop_shape(self, a, arrays, dtypes) -> tuple:
        """The loop's shape as the GPU has it (collapsed unless reduce_dims=False)."""
        a.dtypes = dtypes
        self._kernel._decide_layout(a, arrays)
        return tuple(int(d) for d in a.shape_c)

    def _index_shape(self, a, arrays, dtypes):
        """The loop's shape as ``_ind.get()`` counts it (the GPU's: dimensions that every
        array walks contiguously merged, unless reduce_dims=False); None if the operation
        does not use it."""
        if not _USES_IND_GET.search(self._kernel.operation):
            return None
        a.dtypes = dtypes
        self._kernel._decide_layout(a, arrays)
        return tuple(int(d) for d in a.shape_c)

    def _make(self, dtypes, scalars, ndim=None):
        k = self._kernel
        bound = _placeholder_types(_bound_of(k.params, dtypes))
        parts = [("preamble", k.preamble), ("", "void __jk_kernel(void) {"),
                 ("loop_prep", k.loop_prep + ";"), ("", "while (__jk_loop) {"),
                 ("operation", k.operation + ";"), ("", "}"), ("after_loop", k.after_loop + ";"),
                 ("", "}")]
        unit = _Unit(k.name, parts, bound)
        names, params = {}, []
        used = set()
        raw_shapes, raw_names, arrays = {}, {}, {}
        for idx, p in enumerate(k.params):
            py = arrays[p.name] = _py_name(p.name, used)
            names[p.name], more = _param_var(p, py, dtypes[idx], idx in scalars, "i")
            params += more
            if p.raw and idx not in scalars and ndim is not None:
                raw_shapes[py] = (f"_c_{py}_shape", max(ndim, 1))
                raw_names[py] = p.name
        for idx, p in enumerate(k.params):  # CuPy's _raw_<name>: the whole (broadcast) array
            if p.name in raw_names_used(k) and idx not in scalars:
                names["_raw_" + p.name] = Var(arrays[p.name], Pointer(cupy_element(dtypes[idx])),
                                              size="_c_n", shape="_c_lshape")
        names["i"] = Var("i", I64, readonly=True)
        names["_ind"] = Var("_c_n", I64, readonly=True)
        prologue, each_pass = [], []
        if ndim is not None:
            params.append("_c_shape")
            names["__jk_ind_get"] = Var("_c_ind", Pointer(I64), readonly=True)
            names["__jk_ind_ndim"] = Var(f"numpy.int32({ndim})", I32, readonly=True)
            prologue, each_pass = _index_lines(ndim)
        if raw_names_used(k):
            params.append("_c_lshape")
        params.append("_c_n")

        def entry(tr: Translator, ext):
            tr.names = names
            tr.loop_prologue, tr.raw_shapes = each_pass, raw_shapes
            fn = Function(k.name, _py_name(k.name, set(params)), None, [], True)
            tr.entry_py["__jk_kernel"] = fn.py
            tr.loop_header = ("for i in range(numpy.int64(jit.grid(1)), _c_n, "
                              "numpy.int64(jit.gridsize(1))):")
            return tr.function(ext, fn, extra_params=params, prologue=prologue)

        tr, sources = _translate(unit, bound, {"__jk_kernel": entry})
        source = HELPERS + "\n\n" + "\n\n".join(sources.values())
        namespace = define(source, f"ElementwiseKernel {k.name}")
        kernel = _kernel(namespace, tr.entry_py["__jk_kernel"])
        kernel.sim_source = source
        kernel.sim_indexed_by_ind = {raw_names[py] for py in tr.indexed_by_ind}
        return kernel

    def source(self, *args, size=None) -> str:
        """The Python of the JIT kernel a simulated call with these arguments runs."""
        return _last_source(self._kernel)


def _check_raw_rank(name: str, pname: str, v, index_shape: tuple, kernel) -> None:
    """``w[_ind.get()]`` needs a raw array of the loop's rank."""
    if pname in kernel.sim_indexed_by_ind and v.ndim != max(len(index_shape), 1):
        raise KernelArgumentError(
            f"{name}: {pname}[_ind.get()] needs {pname} to have the loop's "
            f"{len(index_shape)} dimension(s) (shape {index_shape}); it has shape {v.shape}")


def raw_values(f: numpy.ndarray, v) -> list:
    """A raw array's kernel arguments: its flat elements, size, shape and (C-order, as the
    flat copy has them) byte strides: ``x.size()``, ``x.shape()``, ``x.strides()``."""
    shape = v.shape or (1,)
    strides = numpy.cumprod((1,) + shape[:0:-1])[::-1] * v.dtype.itemsize
    return [f, numpy.int64(v.size), numpy.array(shape, numpy.int64),
            numpy.array(strides, numpy.int64)]


_USES_IND_GET = re.compile(r"\b_ind\s*\.\s*(get|ndim)\b")


def _index_lines(ndim: int) -> tuple[list, list]:
    """(the lines declaring ``_ind.get()``'s array, the lines filling it with element i's
    index over the loop shape ``_c_shape``, last dimension fastest)."""
    declare = [f"_c_ind = jit.local_memory(numpy.int64, {max(ndim, 1)})"]
    fill = ["_c_r = i"]
    for d in range(ndim - 1, 0, -1):
        fill += [f"_c_ind[{d}] = _c_r % _c_shape[{d}]", f"_c_r = _c_r // _c_shape[{d}]"]
    return declare, fill + ["_c_ind[0] = _c_r"]


def _last_source(k) -> str:
    made = k.__dict__.get("_sim_kernels") or {}
    if not made:
        raise JitkernValueError(f"{k.name}: call kernel.simulate(...) first")
    return list(made.values())[-1].sim_source


def _bound_of(params, dtypes) -> dict:
    bound = {}
    for p, dt in zip(params, dtypes):
        if p.placeholder:
            bound[p.placeholder] = dt
    return bound


def _py_name(name: str, used: set) -> str:
    py = name if name not in _RESERVED and not name.startswith(("_c_", "_jk")) else name + "_c"
    while py in used:
        py += "_"
    used.add(py)
    return py


def _param_var(p, py: str, t, is_scalar: bool, index: str):
    """(the C name's translation, the kernel parameters it takes) of one string-kernel
    parameter: a scalar, a raw pointer with its size, or this thread's element."""
    t = cupy_element(t)
    if is_scalar:
        return Var(py, t), [py]
    if p.raw:  # its size, shape and strides: names no parameter can have (_c_ is reserved)
        more = [f"_c_{py}_size", f"_c_{py}_shape", f"_c_{py}_strides"]
        return Var(py, Pointer(t), size=more[0], shape=more[1], strides=more[2]), [py, *more]
    return Var(f"{py}[{index}]", t), [py]


# ---------------------------------------------------------------------------
# ReductionKernel


__all__ = ["ElementwiseSim", "RawSimulator", "run_raw"]
