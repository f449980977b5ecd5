"""ElementwiseKernel on the CPU: a grid-stride loop over the broadcast size; each non-raw
parameter is its element (``x`` reads and writes ``x[i]`` of the broadcast, raveled
array), raw ones are flat arrays, ``i`` and ``_ind.size()`` are the loop's index and size,
``_ind.get()`` element i's index over the loop's shape (the GPU's, after reduce_dims). The
C is translated by :mod:`.ctranslate`; the kernel runs as the simulator's own
(:mod:`.translated`)."""

from __future__ import annotations

import re

import numpy

from ..compiler.strings.mapping import CUPY_BLOCK, cupy_dims, per_thread_reason
from ..compiler.strings.mapping import raw_names as raw_names_used
from ..compiler.strings.params import HANDLE_DTYPES, convert_scalar, param_dtype
from ..errors import KernelArgumentError
from ..handles import handle_ctype, handle_value
from ..runtime.module import cluster_refused
from .csubset import I32, I64, Pointer, cupy_element
from .ctranslate import HELPERS, Function, Translator, Var
from ..runtime.limits import block_size_of
from . import loops
from .strings import (
    StringSim,
    Unit,
    bound_of,
    last_source,
    param_var,
    placeholder_types,
    py_name,
    raw_values,
    translate,
)
from .translated import define, flat, kernel_in, simulate

#: Texture/surface placeholders' record dtypes, and the handle they are in a kernel.
_HANDLE_DTYPES = frozenset(HANDLE_DTYPES.values())
_HANDLE = numpy.dtype(numpy.uint64)


class ElementwiseSim(StringSim):
    """``elementwise_kernel.simulate(*args, size=None)``: the call on the CPU."""

    def __call__(self, *args, size=None, stream=None, block_size=None, cluster=None):
        k = self._kernel
        if cluster is not None:
            raise cluster_refused("ElementwiseKernel", k.name)
        host, back, arrays, a = self._arguments(args)
        nin = k.nin
        a.out_given = len(host) == k.nargs
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
                    check_raw_rank(k.name, p.name, v, index_shape, kernel)
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
            block = block_size_of(block_size, loops.BLOCK)[0]
            grid = loops.elementwise_grid(n, block)
            if per_thread_reason(k):  # CuPy's one element per thread (strings/mapping.py)
                grid, block = cupy_dims(n, block_size_of(block_size, CUPY_BLOCK)[0])
            simulate(kernel, grid, block, (*values, numpy.int64(n)))
            k.__dict__["_sim_path"] = kernel.simulate.last_path
        for v, f in writes:
            v[...] = f.reshape(v.shape)
        return k._result(self._returned(outs, back, a))

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
        bound = placeholder_types(bound_of(k.params, dtypes))
        parts = [("preamble", k.preamble), ("", "void __jk_kernel(void) {"),
                 ("loop_prep", k.loop_prep), ("", ";"), ("", "while (__jk_loop) {"),
                 ("operation", k.operation), ("", ";}"), ("after_loop", k.after_loop), ("", ";"),
                 ("", "}")]
        unit = Unit(k.name, parts, bound, k.options)
        names, params = {}, []
        used = set()
        raw_shapes, raw_names, arrays = {}, {}, {}
        for idx, p in enumerate(k.params):
            py = arrays[p.name] = py_name(p.name, used)
            names[p.name], more = param_var(p, py, dtypes[idx], idx in scalars, "i")
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
            prologue, each_pass = loops.index_lines(ndim)
        if raw_names_used(k):
            params.append("_c_lshape")
        params.append("_c_n")

        def entry(tr: Translator, ext):
            tr.names = names
            tr.loop_prologue, tr.raw_shapes = each_pass, raw_shapes
            fn = Function(k.name, py_name(k.name, set(params)), None, [], True)
            tr.entry_py["__jk_kernel"] = fn.py
            tr.loop_header = loops.ELEMENTWISE_LOOP
            return tr.function(ext, fn, extra_params=params, prologue=prologue)

        tr, sources = translate(unit, bound, {"__jk_kernel": entry})
        source = HELPERS + "\n\n" + "\n\n".join(sources.values())
        namespace = define(source, f"ElementwiseKernel {k.name}")
        kernel = kernel_in(namespace, tr.entry_py["__jk_kernel"])
        kernel.sim_source = source
        kernel.sim_indexed_by_ind = {raw_names[py] for py in tr.indexed_by_ind}
        return kernel

    def source(self, *args, size=None) -> str:
        """The Python of the JIT kernel a simulated call with these arguments runs."""
        return last_source(self._kernel)

    @property
    def last_path(self) -> str | None:
        """Which path ran the last simulated call's loop, as a JIT kernel's
        ``simulate.last_path``: ``"vector"``, ``"threads"``, or None before the first."""
        return self._kernel.__dict__.get("_sim_path")


def check_raw_rank(name: str, pname: str, v, index_shape: tuple, kernel) -> None:
    """``w[_ind.get()]`` needs a raw array of the loop's rank."""
    if pname in kernel.sim_indexed_by_ind and v.ndim != max(len(index_shape), 1):
        raise KernelArgumentError(
            f"{name}: {pname}[_ind.get()] needs {pname} to have the loop's "
            f"{len(index_shape)} dimension(s) (shape {index_shape}); it has shape {v.shape}")


_USES_IND_GET = re.compile(r"\b_ind\s*\.\s*(get|ndim)\b")


__all__ = ["ElementwiseSim"]
