"""CUDA C++ for an ElementwiseKernel call: one function per loop variant.

``generate(kernel, analysis)`` returns the whole translation unit. Kernel
parameters come in a fixed order the launcher relies on: one slot per kernel
parameter (pointer or scalar, in ``in_params + out_params`` order), the element
count ``_n``, then the static structs (collapsed shape and strides for the
strided variant, then the dims of each raw array).
"""

from __future__ import annotations

import re

from ...layout import c_strides
from . import mapping as _mapping
from . import prelude as _cuda

UNROLL = 1  # 16-byte vectors per thread and array in each pass of the vector loop

# Where the user's operation goes; see _place_operation.
_OP = "\x00operation\x00"
_NAMES_IND = re.compile(r"\b_ind\b")


def _operation_block(kernel, a, shape: str = "nullptr", vector: int = 1) -> str:
    """The block holding the operation; one that names ``_ind`` gets CuPy's per-element
    indexer (``_ind.get()``: the index of element ``i`` over the loop's ``shape``)."""
    if not _NAMES_IND.search(kernel.operation):
        return f"{{\n{_OP}\n;}}"
    ind = f"const _jk_ind_at<{a.index_type}, {a.ndim}, {vector}> _ind(_n, i, {shape}); (void)_ind;"
    return f"{{ {ind} {{\n{_OP}\n;}}}}"  # inner block: the operation may declare its own _ind


_tname = _cuda.type_name


def _signature(kernel, a) -> str:
    parts = []
    for k, p in enumerate(kernel.params):
        t = _tname(p, a.dtypes[k])
        if k in a.scalar_pos:
            parts.append(f"{t} {p.name}")
        elif p.raw:
            parts.append(f"{t}* _rp_{p.name}")
        else:
            parts.append(f"{'const ' if not p.is_output else ''}{t}* _p_{p.name}")
    parts.append(f"{a.index_type} _n")
    if a.variant in ("strided", "strided_vector"):
        nd = a.ndim
        parts.append(f"_jk_shape<{nd}> _shape")
        parts.extend(f"_jk_shape<{nd}> _s_{p.name}" for p in _mapped(kernel, a))
    for k in sorted(a.raw_dims):
        p = kernel.params[k]
        parts.append(f"_jk_dims<{len(a.raw_dims[k][0])}> _rd_{p.name}")
    return ",\n    ".join(parts)


def _mapped(kernel, a):
    """Non-raw array parameters, in order (the ones bound per element)."""
    return [p for k, p in enumerate(kernel.params) if not p.raw and k not in a.scalar_pos]


def _raw_views(kernel, a) -> str:
    lines = []
    for k in sorted(a.raw_dims):
        p = kernel.params[k]
        decl = _cuda.raw_view(kernel, k, _tname(p, a.dtypes[k]), a.raw_dims[k], a.raw_contig[k],
                              a.dtypes[k].itemsize, p.is_output, p.name)
        lines.append(f"  {decl}\n")
    return "".join(lines)


def _mapped_views(kernel, a) -> str:
    """CuPy's ``_raw_<name>`` of each non-raw array the code names that way (the loop is
    then linear or strided: mapping.py), over the loop's shape."""
    lines = []
    named = _mapping.raw_names(kernel)
    for j, p in enumerate(_mapped(kernel, a)):
        if p.name not in named:
            continue
        k = kernel.params.index(p)
        t, isz = _tname(p, a.dtypes[k]), a.dtypes[k].itemsize
        strides = a.strides_c[j]
        contig = tuple(strides) == c_strides(a.shape_c, isz) or a.size <= 1
        i32 = a.index_type == "int"
        if a.variant == "strided":
            shape, st = "_shape.v", f"_s_{p.name}.v"
        else:  # linear: one dimension of _n elements (or none)
            shape = "{_n}" if a.ndim else "(const long long*)0"
            st = f"{{{strides[0] if strides else isz}}}" if a.ndim else "(const long long*)0"
        lines.append("  " + _cuda.mapped_view(t, a.ndim, contig, i32, p.is_output, p.name,
                                              shape, st) + "\n")
    return "".join(lines)


def _constant(a, j) -> bool:
    st = a.strides_c[j]
    return bool(st) and all(s == 0 for s in st)


def _bind_direct(kernel, a, index: str) -> str:
    """Element references for the linear loops: ``x`` is ``_p_x[i]`` (or ``[0]``)."""
    lines = []
    for j, p in enumerate(_mapped(kernel, a)):
        t = _tname(p, a.dtypes[kernel.params.index(p)])
        at = "0" if _constant(a, j) else index
        const = "const " if not p.is_output else ""
        lines.append(f"{const}{t}& {p.name} = _p_{p.name}[{at}];")
    return " ".join(lines)


def _linear_body(kernel, a) -> str:
    it = a.index_type
    return (
        f"  for ({it} i = ({it})blockIdx.x * blockDim.x + threadIdx.x; i < _n;"
        f" i += ({it})gridDim.x * blockDim.x) {{\n"
        f"    {_bind_direct(kernel, a, 'i')}\n"
        f"    {_operation_block(kernel, a)}\n"
        f"  }}\n"
    )


def _vector_body(kernel, a) -> str:
    it, v, u = a.index_type, a.vector, _unroll()
    mapped = _mapped(kernel, a)
    vec_params = [(j, p) for j, p in enumerate(mapped) if not _constant(a, j)]
    decls, loads, stores, binds = [], [], [], []
    for j, p in enumerate(mapped):
        t = _tname(p, a.dtypes[kernel.params.index(p)])
        const = "const " if not p.is_output else ""
        if _constant(a, j):
            binds.append(f"{const}{t}& {p.name} = _p_{p.name}[0];")
            continue
        vt = f"_jk_vec<{t}, {v}>"
        decls.append(f"    {vt} _v_{p.name}[{u}];\n")
        loads.append(
            f"        _v_{p.name}[_u] = reinterpret_cast<const {vt}*>(_p_{p.name})[_vi];\n"
        )
        binds.append(f"{const}{t}& {p.name} = _v_{p.name}[_u].v[_k];")
        if p.is_output:
            stores.append(f"        reinterpret_cast<{vt}*>(_p_{p.name})[_vi] = _v_{p.name}[_u];\n")
    del vec_params
    # Outputs are loaded too, so an operation that leaves some elements unwritten keeps
    # their old values; when every element is written, the compiler drops those loads.
    return (
        f"  const {it} _tid = ({it})blockIdx.x * blockDim.x + threadIdx.x;\n"
        f"  const {it} _nthreads = ({it})gridDim.x * blockDim.x;\n"
        f"  const {it} _nvec = _n / {v};\n"
        f"  for ({it} _vb = _tid; _vb < _nvec; _vb += _nthreads * {u}) {{\n"
        + "".join(decls)
        + f"    #pragma unroll\n"
        f"    for (int _u = 0; _u < {u}; ++_u) {{\n"
        f"      const {it} _vi = _vb + _u * _nthreads;\n"
        f"      if (_vi < _nvec) {{\n" + "".join(loads) + "      }\n    }\n"
        f"    #pragma unroll\n"
        f"    for (int _u = 0; _u < {u}; ++_u) {{\n"
        f"      const {it} _vi = _vb + _u * _nthreads;\n"
        f"      if (_vi < _nvec) {{\n"
        f"        #pragma unroll\n"
        f"        for (int _k = 0; _k < {v}; ++_k) {{\n"
        f"          const {it} i = _vi * {v} + _k; (void)i;\n"
        f"          {' '.join(binds)}\n"
        f"          {_operation_block(kernel, a)}\n"
        f"        }}\n" + "".join(stores) + "      }\n    }\n  }\n"
        f"  for ({it} i = _nvec * {v} + _tid; i < _n; i += _nthreads) {{\n"
        f"    {_bind_direct(kernel, a, 'i')}\n"
        f"    {_operation_block(kernel, a)}\n"
        f"  }}\n"
    )


def _unravel_offsets(it: str, nd: int, mapped, var: str) -> str:
    """Code setting ``_o_<name>``, the byte offset of flat index ``var`` in each array."""
    offs = ", ".join(f"_o_{p.name} = 0" for p in mapped)
    step = "".join(f" _o_{p.name} += _c * ({it})_s_{p.name}.v[_d];" for p in mapped)
    first = "".join(f" _o_{p.name} += _r * ({it})_s_{p.name}.v[0];" for p in mapped)
    return (
        f"    {it} _r = {var};\n"
        + (f"    {it} {offs};\n" if mapped else "")
        + f"    #pragma unroll\n"
        f"    for (int _d = {nd} - 1; _d > 0; --_d) {{\n"
        f"      const {it} _e = ({it})_shape.v[_d];\n"
        f"      const {it} _q = _r / _e;\n"
        f"      const {it} _c = _r - _q * _e;\n"
        f"      _r = _q;{step}\n"
        f"    }}\n"
        f"   {first}\n"
    )


def _strided_vector_body(kernel, a) -> str:
    """Vectors along the innermost dimension; arrays constant along it read one element."""
    it, nd, v = a.index_type, a.ndim, a.vector
    mapped = _mapped(kernel, a)
    loads, stores, binds = [], [], []
    for j, p in enumerate(mapped):
        t = _tname(p, a.dtypes[kernel.params.index(p)])
        const = "const " if not p.is_output else ""
        addr = f"reinterpret_cast<{const}char*>(_p_{p.name}) + _o_{p.name}"
        if a.strides_c[j][-1] == 0:
            binds.append(f"{const}{t}& {p.name} = *reinterpret_cast<{const}{t}*>({addr});")
            continue
        vt = f"_jk_vec<{t}, {v}>"
        loads.append(f"    {vt} _v_{p.name} = *reinterpret_cast<const {vt}*>({addr});\n")
        binds.append(f"{const}{t}& {p.name} = _v_{p.name}.v[_k];")
        if p.is_output:
            stores.append(f"    *reinterpret_cast<{vt}*>({addr}) = _v_{p.name};\n")
    return (
        f"  const {it} _nv = _n / {v};\n"
        f"  for ({it} _vi = ({it})blockIdx.x * blockDim.x + threadIdx.x; _vi < _nv;"
        f" _vi += ({it})gridDim.x * blockDim.x) {{\n"
        + _unravel_offsets(it, nd, mapped, "_vi")
        + "".join(loads)
        + f"    #pragma unroll\n    for (int _k = 0; _k < {v}; ++_k) {{\n"
        f"      const {it} i = _vi * {v} + _k; (void)i;\n"
        f"      {' '.join(binds)}\n"
        f"      {_operation_block(kernel, a, '_shape.v', v)}\n"
        f"    }}\n" + "".join(stores) + "  }\n"
    )


def _strided_body(kernel, a) -> str:
    it, nd = a.index_type, a.ndim
    mapped = _mapped(kernel, a)
    binds = []
    for p in mapped:
        t = _tname(p, a.dtypes[kernel.params.index(p)])
        const = "const " if not p.is_output else ""
        binds.append(
            f"{const}{t}& {p.name} = *reinterpret_cast<{const}{t}*>("
            f"reinterpret_cast<{const}char*>(_p_{p.name}) + _o_{p.name});"
        )
    return (
        f"  for ({it} i = ({it})blockIdx.x * blockDim.x + threadIdx.x; i < _n;"
        f" i += ({it})gridDim.x * blockDim.x) {{\n"
        + _unravel_offsets(it, nd, mapped, "i")
        + f"    {' '.join(binds)}\n"
        f"    {_operation_block(kernel, a, '_shape.v')}\n"
        f"  }}\n"
    )


def _unroll() -> int:
    return UNROLL


_BODIES = {
    "linear": _linear_body,
    "vector": _vector_body,
    "strided": _strided_body,
    "strided_vector": _strided_vector_body,
}


def _place_operation(source: str, operation: str, program: str) -> str:
    """Put ``operation`` at each placeholder; copies after the first (the vector loop's
    tail) get ``#line`` directives giving them the first copy's line numbers, so the
    compiler reports an error in the operation once, at one place."""
    lines = source.split("\n")
    out: list[str] = []
    first = None
    for line in lines:
        if line != _OP:
            out.append(line)
            continue
        if first is None:
            first = len(out) + 1
            out.append(operation)
            continue
        out.append(f'#line {first} "{program}"')
        out.append(operation)
        out.append(f'#line {len(out) + 2} "{program}"')
    return "\n".join(out)


def generate(kernel, a) -> str:
    """The full CUDA C++ source of ``kernel`` for the call described by ``a``."""
    return _place_operation(_generate(kernel, a), kernel.operation, f"{kernel.name}.cu")


def _mapping_note(kernel) -> str:
    reason = _mapping.per_thread_reason(kernel)
    return f"; one element per thread, as in CuPy, since {reason}" if reason else ""


def _generate(kernel, a) -> str:
    code = kernel.preamble + kernel.operation + kernel.loop_prep + kernel.after_loop
    return (
        _cuda.includes_for(a.dtypes, code)
        + _cuda.PRELUDE
        + _cuda.debug_prelude(kernel)
        + _cuda.typedefs(a.bound)
        + (f"\n// preamble\n{kernel.preamble}\n" if kernel.preamble else "")
        + f"\n// jitkern ElementwiseKernel {kernel.name!r}: {a.variant} loop, "
        f"{a.ndim}-d after collapsing, {a.index_type} indices{_mapping_note(kernel)}\n"
        + f'extern "C" __global__ void {kernel.name}(\n    {_signature(kernel, a)}) {{\n'
        + f"  const _jk_indexer<{a.index_type}> _ind{{_n}}; (void)_ind;\n"
        + _raw_views(kernel, a)
        + _mapped_views(kernel, a)
        + (f"  {kernel.loop_prep}\n  ;\n" if kernel.loop_prep.strip() else "")
        + _BODIES[a.variant](kernel, a)
        + (f"  {kernel.after_loop}\n  ;\n" if kernel.after_loop.strip() else "")
        + "}\n"
    )
