"""ReductionKernel on the CPU: its C pieces (map_expr, reduce_expr, post_map_expr, identity)
translated as for the other string kernels (:mod:`.strings`), each put in the reduction
loop of :mod:`.loops` (one block per output element, a shared-memory tree), which runs as
the simulator's own kernel (:mod:`.translated`)."""

from __future__ import annotations

import numpy

from ..compiler.strings.params import convert_scalar, param_dtype
from ..runtime.module import cluster_refused
from .csubset import I64, ctor
from .ctranslate import HELPERS, Function, Translator, Var
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
    resolved_type,
    translate,
)
from .translated import define, flat, kernel_in, simulate


class ReductionSim(StringSim):
    """``reduction_kernel.simulate(*args, out=None, axis=None, keepdims=False)``."""

    def __call__(self, *args, out=None, axis=None, keepdims=False, stream=None, cluster=None):
        k = self._kernel
        if cluster is not None:
            raise cluster_refused("ReductionKernel", k.name)
        if out is not None:
            args = args + (out if isinstance(out, tuple) else (out,))
        if type(axis) is list:
            axis = tuple(axis)
        host, back, arrays, a = self._arguments(args)
        nin = k.nin
        a.out_given = len(host) > nin
        dtypes = tuple(param_dtype(p, a.bound) for p in k.params)
        k._decide_shapes(a, arrays, axis, keepdims)
        kept = [d for d in range(len(a.in_shape)) if d not in a.axes]
        order = [*kept, *a.axes]
        outs = list(host[nin:]) if a.out_given else [
            numpy.empty(a.final_shape, dt) for dt in dtypes[nin:]]
        values, scalars = [], []
        for idx, p in enumerate(k.in_params):
            v = host[idx]
            if arrays[idx] is None:
                values.append(convert_scalar(v, dtypes[idx], p.name, k.name))
                scalars.append(idx)
            elif p.raw:
                f, _ = flat(v)
                values += raw_values(f, v)
            else:
                full = numpy.broadcast_to(v, a.in_shape).transpose(order)
                values.append(numpy.ascontiguousarray(full).reshape(-1))
        flats = [numpy.empty(a.out_size, dt) for dt in dtypes[nin:]]
        kernel = self.build(dtypes, tuple(scalars))
        if a.out_size:
            simulate(kernel, loops.reduction_grid(a.out_size), loops.REDUCE_BLOCK,
                     (*values, *flats, numpy.int64(a.out_size), numpy.int64(a.red_size)))
        for o, f in zip(outs, flats):
            o[...] = f.reshape(o.shape)
        outs = self._returned(outs, back, a)
        return outs[0] if len(outs) == 1 else tuple(outs)

    def _make(self, dtypes, scalars, ndim=None):
        k = self._kernel
        bound = placeholder_types(bound_of(k.params, dtypes))
        rt = resolved_type(k.reduce_type, bound)
        identity = k.identity.strip() if k.identity else ""
        parts = [("preamble", k.preamble),
                 ("", "void __jk_map(void) { __jk_m ="), ("map_expr", k.map_expr), ("", "; }"),
                 ("", "void __jk_combine(void) { __jk_r ="), ("reduce_expr", k.reduce_expr),
                 ("", "; }"),
                 ("", "void __jk_post(void) {"), ("post_map_expr", k.post_map_expr), ("", ";"),
                 ("", "}")]
        if identity:
            parts += [("", "void __jk_identity(void) { __jk_r ="), ("identity", identity),
                      ("", "; }")]
        unit = Unit(k.name, parts, bound, k.options)
        used = {"a", "b"}
        params, inputs, scalar_names, post_names = [], {}, {}, {}
        for idx, p in enumerate(k.in_params):
            py = py_name(p.name, used)
            var, more = param_var(p, py, dtypes[idx], idx in scalars, "_c_j")
            (scalar_names if idx in scalars else inputs)[p.name] = var
            params += more
        for j, p in enumerate(k.out_params):
            py = py_name(p.name, used)
            post_names[p.name] = Var(f"{py}[_c_o]", dtypes[k.nin + j])
            params.append(py)
        params += ["_c_nout", "_c_nred"]
        acc = {"__jk_m": Var("_c_m", rt), "__jk_r": Var("_c_r", rt)}
        ab = {"a": Var("_c_a", rt), "b": Var("_c_b", rt)}
        bodies = {}

        def body(names):
            def entry(tr: Translator, ext):
                tr.names = {**scalar_names, **names, **acc}
                fn = Function(ext.decl.name, ext.decl.name, None, [], True)
                text = tr.function(ext, fn, extra_params=params)
                bodies[ext.decl.name.removeprefix("__jk_")] = [
                    line[4:] for line in text.split("\n")[1:] if line]
                return ""
            return entry

        # CuPy's names: _J within the reduction, _j in the reduced-axes-first input space
        index = {"_J": Var("_c_r0", I64, readonly=True), "_i": Var("_c_o", I64, readonly=True),
                 "_j": Var("(_c_r0 * _c_nout + _c_o)", I64, readonly=True)}
        entries = {"__jk_map": body({**inputs, **index}), "__jk_combine": body(ab),
                   "__jk_post": body({"a": ab["a"], **post_names}),
                   "__jk_identity": body({})}
        tr, sources = translate(unit, bound, entries)
        source = HELPERS + "\n\n" + "\n\n".join(s for s in sources.values() if s)
        py = py_name(k.name, set(params) | {"a", "b"})
        source += "\n\n" + loops.reduction(py, params, ctor(rt), bodies, bool(identity))
        namespace = define(source, f"ReductionKernel {k.name}")
        kernel = kernel_in(namespace, py)
        kernel.sim_source = source
        return kernel

    def source(self, *args, **kwargs) -> str:
        return last_source(self._kernel)


__all__ = ["ReductionSim"]
