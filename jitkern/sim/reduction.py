"""ReductionKernel on the CPU: one block per output element, as fuse's reductions. Each
thread maps and combines a strided part, a shared-memory tree combines the threads' values
with ``reduce_expr`` (``a``, ``b``), thread 0 runs ``post_map_expr``. The C is translated
as for the other string kernels (:mod:`.strings`), and the kernel runs as the simulator's own
(:mod:`.translated`)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy

from ..arrays import asarray
from ..compiler.strings.params import (
    convert_scalar,
    param_dtype,
    resolve_placeholders,
    scalar_dtype,
)
from ..runtime.module import cluster_refused
from .csubset import I64, ctor
from .ctranslate import HELPERS, Function, Translator, Var
from .strings import (
    MAX_BLOCKS,
    REDUCE_BLOCK,
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
from .translated import copy_back, define, flat, host_copies, kernel_in, simulate


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
        host, back = host_copies(args, k.name, [p.name for p in k.params])
        arrays = k._describe_args(host, host_ok=True)
        nin = k.nin
        a = SimpleNamespace()  # what the kernel's own shape rules fill in
        a.out_given = len(host) > nin
        in_types = [scalar_dtype(v) if arr is None else arr.dtype
                    for v, arr in zip(host[:nin], arrays[:nin])]
        a.bound = resolve_placeholders(k.in_params, k.out_params, in_types,
                                       [arr.dtype for arr in arrays[nin:]],
                                       [arr is None for arr in arrays[:nin]], k.name)
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
            grid = min(MAX_BLOCKS, a.out_size)
            simulate(kernel, grid, REDUCE_BLOCK, (*values, *flats, numpy.int64(a.out_size),
                                                  numpy.int64(a.red_size)))
        for o, f in zip(outs, flats):
            o[...] = f.reshape(o.shape)
        copy_back(back)
        if back and not a.out_given:
            outs = [asarray(o) for o in outs]
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
                 ("", "void __jk_post(void) {"), ("post_map_expr", k.post_map_expr + ";"),
                 ("", "}")]
        if identity:
            parts += [("", "void __jk_identity(void) { __jk_r ="), ("identity", identity),
                      ("", "; }")]
        unit = Unit(k.name, parts, bound)
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
                bodies[ext.decl.name] = [line[4:] for line in text.split("\n")[1:] if line]
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
        py = py_name(k.name, set(params) | set(bodies) | {"a", "b"})
        source += "\n\n" + _reduction_kernel(py, params, rt, bodies, bool(identity))
        namespace = define(source, f"ReductionKernel {k.name}")
        kernel = kernel_in(namespace, py)
        kernel.sim_source = source
        return kernel

    def source(self, *args, **kwargs) -> str:
        return last_source(self._kernel)


def _indent(lines, depth: int) -> list:
    return ["    " * depth + line for line in lines]


def _reduction_kernel(name: str, params, rt, bodies: dict, has_identity: bool) -> str:
    b = REDUCE_BLOCK

    def combine(x, y, into):
        return [f"_c_a = {x}", f"_c_b = {y}", *bodies["__jk_combine"], f"{into} = _c_r"]

    first = ["_c_acc = _c_m"]
    if has_identity:
        start = [*bodies["__jk_identity"], "_c_acc = _c_r"]
        fold = [*combine("_c_acc", "_c_m", "_c_acc")]
    else:
        start = []
        start = [f"_c_acc = {ctor(rt)}(0)"]
        fold = ["if _c_r0 == _c_t:", *_indent(first, 1), "else:",
                *_indent(combine("_c_acc", "_c_m", "_c_acc"), 1)]
    lines = [
        f"def {name}({', '.join(params)}):",
        f"    _c_partial = jit.shared_memory({ctor(rt)}, {b})",
        "    _c_t = numpy.int64(jit.threadIdx.x)",
        f"    _c_valid = min(_c_nred, numpy.int64({b}))",
        "    for _c_o in range(numpy.int64(jit.blockIdx.x), _c_nout, numpy.int64(jit.gridDim.x)):",
        *_indent(start, 2),
        f"        for _c_r0 in range(_c_t, _c_nred, numpy.int64({b})):",
        "            _c_j = _c_o * _c_nred + _c_r0",
        *_indent(bodies["__jk_map"], 3),
        *_indent(fold, 3),
        "        if _c_t < _c_valid or (_c_t == 0 and _c_nred == 0):",
        "            _c_partial[_c_t] = _c_acc",
        "        jit.syncthreads()",
        f"        _c_s = numpy.int64({b // 2})",
        "        while _c_s > 0:",
        "            if _c_t < _c_s and _c_t + _c_s < _c_valid:",
        *_indent(combine("_c_partial[_c_t]", "_c_partial[_c_t + _c_s]", "_c_partial[_c_t]"), 4),
        "            jit.syncthreads()",
        "            _c_s = _c_s // 2",
        "        if _c_t == 0:",
        "            _c_a = _c_partial[0]",
        *_indent(bodies["__jk_post"], 3),
        "        jit.syncthreads()",
    ]
    return "\n".join(lines) + "\n"


__all__ = ["ReductionSim"]
