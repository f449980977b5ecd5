"""CUDA C++ for a ReductionKernel call.

One translation unit holds the main kernel (``row`` or ``col`` strategy) and
``<name>_final``, which folds the per-split partial results when a reduction was
split over several blocks. Reduction order depends only on the shape and the
launch configuration, never on timing: no atomics, results identical run to run.

Main kernel parameters, in order: each input (pointer, raw pointer or scalar),
each output pointer, ``_partial``, ``_out_size``, ``_red_size``, ``_chunk``, then
the static structs: output-space shape, reduction-space shape, per non-raw input
its output-space and reduction-space byte strides, per output its byte strides,
then each raw input's dims.
"""

from __future__ import annotations

from . import prelude as _cuda

ROW_UNROLL = 4
# Split row reductions with vector loads: block y of the split takes every gridDim.y-th
# tile of blockDim x unroll vectors (interleaved) instead of one contiguous chunk. A full
# reduction then reads 102.3% (float32) / 101.7% (float64) of copy bandwidth against
# 94.8% / 93.2% with chunks, cupy.sum (CUB) 102.1% / 101.7% in the same process (H100,
# 2026-11-23, benchmarks/probe_reduction.py). Likely why: the blocks move through the
# array together, each step one contiguous stretch of memory, where with chunks about a
# thousand blocks each stream their own 1 MiB region. The assignment depends only on the
# grid, so results stay the same bits run to run.
ROW_INTERLEAVE = True

_TEMPLATES = r"""
template <typename T>
__device__ __forceinline__ T _jk_shfl_down(const T& x, int delta) {
  constexpr int W = (sizeof(T) + 3) / 4;
  unsigned w[W];
  memcpy(w, &x, sizeof(T));
  #pragma unroll
  for (int k = 0; k < W; ++k) w[k] = __shfl_down_sync(0xffffffffu, w[k], delta);
  T r;
  memcpy(&r, w, sizeof(T));
  return r;
}

// Fixed-order tree over a warp: lane 0 ends with the result.
__device__ __forceinline__ void _jk_warp_reduce(_jk_acc& s) {
  #pragma unroll
  for (int d = 16; d > 0; d >>= 1) s.merge(_jk_shfl_down(s, d));
}

// The same tree over the first m lanes only (the others hold nothing to add), so that no
// accumulator needs the identity outside the kernel, where the identity can name the
// kernel's parameters (as in CuPy).
__device__ __forceinline__ void _jk_warp_reduce_first(_jk_acc& s, int m) {
  const int lane = threadIdx.x & 31;
  #pragma unroll
  for (int d = 16; d > 0; d >>= 1) {
    const _jk_acc o = _jk_shfl_down(s, d);
    if (lane + d < m) s.merge(o);
  }
}

// Whole block (blockDim.x a multiple of 32): thread 0 ends with the result.
__device__ __forceinline__ void _jk_block_reduce(_jk_acc& s) {
  __shared__ alignas(_jk_acc) unsigned char _raw[32 * sizeof(_jk_acc)];
  _jk_acc* sm = reinterpret_cast<_jk_acc*>(_raw);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  _jk_warp_reduce(s);
  if (lane == 0) sm[warp] = s;
  __syncthreads();
  if (warp == 0) {
    const int warps = (int)(blockDim.x >> 5);
    s = sm[lane < warps ? lane : 0];
    _jk_warp_reduce_first(s, warps);
  }
}
"""


def _acc_struct(identity) -> str:
    if identity is not None:
        return (
            "struct _jk_acc {\n  _type_reduce v;\n"
            "  __device__ __forceinline__ void add(const _type_reduce& b) { v = _jk_reduce(v, b); }\n"
            "  __device__ __forceinline__ void merge(const _jk_acc& o) { v = _jk_reduce(v, o.v); }\n"
            "};\n"
        )
    # No identity: an accumulator remembers whether it holds a value yet.
    return (
        "struct _jk_acc {\n  _type_reduce v; int has;\n"
        "  __device__ __forceinline__ void init() { has = 0; }\n"
        "  __device__ __forceinline__ void add(const _type_reduce& b) {\n"
        "    v = has ? _type_reduce(_jk_reduce(v, b)) : b; has = 1; }\n"
        "  __device__ __forceinline__ void merge(const _jk_acc& o) {\n"
        "    if (o.has) { v = has ? _type_reduce(_jk_reduce(v, o.v)) : o.v; has = 1; } }\n"
        "};\n"
    )


def _init_acc(kernel) -> str:
    """``_s`` set to the identity, in the kernel's body, where the identity may name the
    kernel's parameters (CuPy's ``first_nonzero`` starts from ``len``, an input)."""
    if kernel.identity:
        return f"  _jk_acc _s; _s.v = _type_reduce(({kernel.identity}));\n"
    return "  _jk_acc _s; _s.init();\n"


_tname = _cuda.type_name


def _unravel(it: str, var: str, nd: int, shape: str, targets) -> str:
    """Code adding, for each (offset variable, strides struct), ``var``'s byte offset."""
    if not targets:
        return ""
    if nd == 0:
        return "".join(f"    {it} {off} = 0;\n" for off, _ in targets)
    lines = [f"    {it} {off} = 0;\n" for off, _ in targets]
    lines.append(f"    {{ {it} _r = {var};\n")
    for d in range(nd - 1, 0, -1):
        lines.append(
            f"      {{ const {it} _e = ({it}){shape}.v[{d}]; const {it} _q = _r / _e;"
            f" const {it} _c = _r - _q * _e; _r = _q;"
        )
        lines.extend(f" {off} += _c * ({it}){st}.v[{d}];" for off, st in targets)
        lines.append(" }\n")
    lines.append("     ")
    lines.extend(f" {off} += _r * ({it}){st}.v[0];" for off, st in targets)
    lines.append(" }\n")
    return "".join(lines)


def _post_map(kernel, a, row: str) -> str:
    """Write the reduced ``_s`` of output ``row`` through post_map_expr."""
    it = a.index_type
    outs = kernel.out_params
    targets = [(f"_oo_{p.name}", f"_os_{p.name}") for p in outs]
    binds = []
    for j, p in enumerate(outs):
        t = _tname(p, a.dtypes[kernel.nin + j])
        binds.append(
            f"    {t}& {p.name} = *reinterpret_cast<{t}*>("
            f"reinterpret_cast<char*>(_p_{p.name}) + _oo_{p.name});\n"
        )
    return (
        f"  {{\n    const {it} _i = {row}; (void)_i;\n"
        + _unravel(it, "_i", a.out_nd, "_oshape", targets)
        + "".join(binds)
        + "    _type_reduce a = _s.v;\n"
        f"    {{\n{kernel.post_map_expr}\n;}}\n  }}\n"
    )


def _inputs(kernel, a):
    return [(k, p) for k, p in enumerate(kernel.in_params) if k not in a.scalar_pos and not p.raw]


def _bind_inputs(kernel, a, offsets: dict) -> str:
    out = []
    for k, p in _inputs(kernel, a):
        t = _tname(p, a.dtypes[k])
        out.append(
            f"const {t} {p.name} = *reinterpret_cast<const {t}*>("
            f"reinterpret_cast<const char*>(_p_{p.name}) + {offsets[p.name]});"
        )
    return " ".join(out)


def _map_add(kernel) -> str:
    """Fold map_expr of one element into ``_s``. As in CuPy, map_expr sees ``_i`` (the
    output element), ``_J`` (the element's index within the reduction, C order over the
    reduced axes) and ``_j`` (its flat index in the reduced-axes-first input space,
    ``_J * out_size + _i``: a raw input's flat index when the reduced axes lead)."""
    return ("{ const long long _j = (long long)_J * _out_size + _i; (void)_j; "
            f"_s.add(static_cast<_type_reduce>({kernel.map_expr})); }}")


def _main_signature(kernel, a) -> str:
    parts = []
    for k, p in enumerate(kernel.in_params):
        t = _tname(p, a.dtypes[k])
        if k in a.scalar_pos:
            parts.append(f"{t} {p.name}")
        elif p.raw:
            parts.append(f"{t}* _rp_{p.name}")
        else:
            parts.append(f"const {t}* _p_{p.name}")
    for j, p in enumerate(kernel.out_params):
        parts.append(f"{_tname(p, a.dtypes[kernel.nin + j])}* _p_{p.name}")
    it = a.index_type
    parts += [
        "_jk_acc* _partial",
        f"{it} _out_size",
        f"{it} _red_size",
        f"{it} _chunk",
        f"_jk_shape<{a.out_nd}> _oshape",
        f"_jk_shape<{a.red_nd}> _rshape",
    ]
    for _k, p in _inputs(kernel, a):
        parts += [f"_jk_shape<{a.out_nd}> _is_{p.name}", f"_jk_shape<{a.red_nd}> _rs_{p.name}"]
    parts += [f"_jk_shape<{a.out_nd}> _os_{p.name}" for p in kernel.out_params]
    for k in sorted(a.raw_dims):
        parts.append(f"_jk_dims<{len(a.raw_dims[k][0])}> _rd_{kernel.in_params[k].name}")
    return ",\n    ".join(parts)


def _raw_views(kernel, a) -> str:
    lines = []
    for k in sorted(a.raw_dims):
        p = kernel.in_params[k]
        decl = _cuda.raw_view(kernel, k, _tname(p, a.dtypes[k]), a.raw_dims[k], a.raw_contig[k],
                              a.dtypes[k].itemsize, False, p.name)
        lines.append(f"  {decl}\n")
    return "".join(lines)


def _finish(kernel, a, row: str, group_leader: str) -> str:
    return (
        f"  if ({group_leader}) {{\n"
        f"    if (gridDim.y == 1) {{\n{_post_map(kernel, a, row)}    }} else {{\n"
        f"      _partial[{row} * gridDim.y + blockIdx.y] = _s;\n    }}\n  }}\n"
    )


def _row_kernel(kernel, a) -> str:
    it, g = a.index_type, a.group
    ins = _inputs(kernel, a)
    row_offsets = _unravel(
        it, "_row", a.out_nd, "_oshape", [(f"_ib_{p.name}", f"_is_{p.name}") for _k, p in ins]
    )
    if g == 1:
        head = (
            f"  const {it} _row = ({it})blockIdx.x * blockDim.x + threadIdx.x;\n"
            "  const int _lane = 0;\n  if (_row >= _out_size) return;\n"
        )
        step, reduce, leader = "1", "", "true"
    elif g == 32:
        head = (
            f"  const {it} _row = ({it})blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);\n"
            "  const int _lane = threadIdx.x & 31;\n  if (_row >= _out_size) return;\n"
        )
        step, reduce, leader = "32", "  _jk_warp_reduce(_s);\n", "_lane == 0"
    else:
        head = f"  const {it} _row = blockIdx.x;\n  const int _lane = threadIdx.x;\n"
        step, reduce, leader = "(int)blockDim.x", "  _jk_block_reduce(_s);\n", "_lane == 0"
    inter = ROW_INTERLEAVE and a.vector > 1
    if a.vector > 1:
        body = _row_loop_vector(kernel, a, step, inter)
    else:
        body = _row_loop_scalar(kernel, a, step)
    if inter:
        bounds = f"  const {it} _r0 = 0;\n  const {it} _r1 = _red_size; (void)_chunk;\n"
    else:
        bounds = (
            f"  const {it} _r0 = ({it})blockIdx.y * _chunk;\n"
            f"  const {it} _r1 = min(_r0 + _chunk, _red_size);\n"
        )
    return (
        f'extern "C" __global__ void {kernel.name}(\n    {_main_signature(kernel, a)}) {{\n'
        + head
        + _raw_views(kernel, a)
        + row_offsets
        + bounds
        + _init_acc(kernel)
        + body
        + reduce
        + _finish(kernel, a, "_row", leader)
        + "}\n"
    )


def _row_loop_scalar(kernel, a, step: str) -> str:
    it = a.index_type
    ins = _inputs(kernel, a)
    offs = _unravel(
        it, "_J", a.red_nd, "_rshape", [(f"_ir_{p.name}", f"_rs_{p.name}") for _k, p in ins]
    )
    binds = _bind_inputs(kernel, a, {p.name: f"_ib_{p.name} + _ir_{p.name}" for _k, p in ins})
    return (
        f"  #pragma unroll {ROW_UNROLL}\n"
        f"  for ({it} _J = _r0 + _lane; _J < _r1; _J += {step}) {{\n"
        + offs
        + f"    const {it} _i = _row; (void)_i;\n"
        f"    {binds}\n    {_map_add(kernel)}\n  }}\n"
    )


def _row_loop_vector(kernel, a, step: str, inter: bool = False) -> str:
    it, v, u = a.index_type, a.vector, ROW_UNROLL
    ins = _inputs(kernel, a)
    if a.red_nd > 1:
        # The reduced space counted in vectors (the launcher passes _rshape and _rs_*
        # that way): each vector's offset is unravelled once, and no tail is left.
        offs = _unravel(
            it, "_jv", a.red_nd, "_rshape", [(f"_ir_{p.name}", f"_rs_{p.name}") for _k, p in ins]
        )
        address = {p.name: f"_ib_{p.name} + _ir_{p.name}" for _k, p in ins}
    else:
        offs = ""
        address = {
            p.name: f"_ib_{p.name} + _jv * ({it})sizeof(_jk_vec<{_tname(p, a.dtypes[k])}, {v}>)"
            for k, p in ins
        }
    decls, loads, binds = [], [], []
    for k, p in ins:
        t = _tname(p, a.dtypes[k])
        vt = f"_jk_vec<{t}, {v}>"
        decls.append(f"    {vt} _v_{p.name}[{u}];\n")
        loads.append(
            f"        _v_{p.name}[_u] = *reinterpret_cast<const {vt}*>("
            f"reinterpret_cast<const char*>(_p_{p.name}) + {address[p.name]});\n"
        )
        binds.append(f"const {t} {p.name} = _v_{p.name}[_u].v[_k];")
    if inter:
        first = f"_v0 + ({it})blockIdx.y * {step} * {u} + _lane"
        stride = f"({it})gridDim.y * {step} * {u}"
    else:
        first, stride = "_v0 + _lane", f"{step} * {u}"
    tail = ""
    if a.red_nd == 1:
        tail = ("  if (blockIdx.y == 0)\n" if inter else "") + _row_tail(kernel, a, step)
    return (
        f"  const {it} _v0 = _r0 / {v}, _v1 = _r1 / {v};\n"
        f"  for ({it} _vb = {first}; _vb < _v1; _vb += {stride}) {{\n"
        + "".join(decls)
        + f"    #pragma unroll\n    for (int _u = 0; _u < {u}; ++_u) {{\n"
        f"      const {it} _jv = _vb + _u * {step};\n      if (_jv < _v1) {{\n"
        + offs
        + "".join(loads)
        + "      }\n    }\n"
        f"    #pragma unroll\n    for (int _u = 0; _u < {u}; ++_u) {{\n"
        f"      const {it} _jv = _vb + _u * {step};\n      if (_jv < _v1) {{\n"
        f"        #pragma unroll\n        for (int _k = 0; _k < {v}; ++_k) {{\n"
        f"          const {it} _J = _jv * {v} + _k; const {it} _i = _row; (void)_i;\n"
        f"          {' '.join(binds)}\n          {_map_add(kernel)}\n        }}\n      }}\n    }}\n  }}\n"
        + tail
    )


def _row_tail(kernel, a, step: str) -> str:
    """The elements after the last whole vector of a one-dimensional reduced space."""
    it, v = a.index_type, a.vector
    binds = _bind_inputs(
        kernel,
        a,
        {
            p.name: f"_ib_{p.name} + _J * ({it})sizeof({_tname(p, a.dtypes[k])})"
            for k, p in _inputs(kernel, a)
        },
    )
    return (
        f"  for ({it} _J = _v1 * {v} + _lane; _J < _r1; _J += {step}) {{\n"
        f"    const {it} _i = _row; (void)_i;\n    {binds}\n    {_map_add(kernel)}\n  }}\n"
    )


def _col_kernel(kernel, a) -> str:
    it, by, u = a.index_type, a.block_y, ROW_UNROLL
    ins = _inputs(kernel, a)
    row_offsets = _unravel(
        it, "_row", a.out_nd, "_oshape", [(f"_ib_{p.name}", f"_is_{p.name}") for _k, p in ins]
    )
    offs = _unravel(
        it, "_J", a.red_nd, "_rshape", [(f"_ir_{p.name}", f"_rs_{p.name}") for _k, p in ins]
    )
    binds = _bind_inputs(kernel, a, {p.name: f"_ib_{p.name} + _ir_{p.name}" for _k, p in ins})
    return (
        f'extern "C" __global__ void {kernel.name}(\n    {_main_signature(kernel, a)}) {{\n'
        f"  const {it} _row = ({it})blockIdx.x * 32 + threadIdx.x;\n"
        "  const bool _active = _row < _out_size;\n"
        + _raw_views(kernel, a)
        + row_offsets
        + f"  const {it} _r0 = ({it})blockIdx.y * _chunk;\n"
        f"  const {it} _r1 = min(_r0 + _chunk, _red_size);\n"
        + _init_acc(kernel)
        + f"  if (_active) {{\n    #pragma unroll {u}\n"
        f"    for ({it} _J = _r0 + threadIdx.y; _J < _r1; _J += {by}) {{\n"
        + offs
        + f"      const {it} _i = _row; (void)_i;\n      {binds}\n      {_map_add(kernel)}\n    }}\n  }}\n"
        f"  __shared__ alignas(_jk_acc) unsigned char _raw[{by} * 33 * sizeof(_jk_acc)];\n"
        "  _jk_acc* _sm = reinterpret_cast<_jk_acc*>(_raw);\n"
        "  _sm[threadIdx.y * 33 + threadIdx.x] = _s;\n  __syncthreads();\n"
        f"  #pragma unroll\n  for (int _h = {by} / 2; _h > 0; _h >>= 1) {{\n"
        "    if ((int)threadIdx.y < _h) {\n"
        "      _s.merge(_sm[(threadIdx.y + _h) * 33 + threadIdx.x]);\n"
        "      _sm[threadIdx.y * 33 + threadIdx.x] = _s;\n    }\n    __syncthreads();\n  }\n"
        + _finish(kernel, a, "_row", "threadIdx.y == 0 && _active")
        + "}\n"
    )


def _final_kernel(kernel, a) -> str:
    it = a.index_type
    outs = ", ".join(
        f"{_tname(p, a.dtypes[kernel.nin + j])}* _p_{p.name}"
        for j, p in enumerate(kernel.out_params)
    )
    strides = "".join(f", _jk_shape<{a.out_nd}> _os_{p.name}" for p in kernel.out_params)
    # the scalar inputs, after the outputs: post_map_expr may name them, as in CuPy
    scalars = "".join(f", {_tname(kernel.in_params[k], a.dtypes[k])} {kernel.in_params[k].name}"
                      for k in sorted(a.scalar_pos))
    return (
        f'extern "C" __global__ void {kernel.name}_final(\n'
        f"    const _jk_acc* _partial, {outs}{scalars}, {it} _out_size, int _splits,"
        f" _jk_shape<{a.out_nd}> _oshape{strides}) {{\n"
        f"  const {it} _row = ({it})blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);\n"
        "  const int _lane = threadIdx.x & 31;\n  if (_row >= _out_size) return;\n"
        "  _jk_acc _s = _partial[_row * _splits + (_lane < _splits ? _lane : 0)];\n"
        "  for (int _k = _lane + 32; _k < _splits; _k += 32) _s.merge(_partial[_row * _splits + _k]);\n"
        "  _jk_warp_reduce_first(_s, _splits < 32 ? _splits : 32);\n"
        f"  if (_lane == 0) {{\n{_post_map(kernel, a, '_row')}  }}\n}}\n"
    )


def generate(kernel, a) -> str:
    """The full CUDA C++ source of ``kernel`` for the call described by ``a``."""
    code = kernel.preamble + kernel.map_expr + kernel.reduce_expr + kernel.post_map_expr
    main = _row_kernel(kernel, a) if a.strategy == "row" else _col_kernel(kernel, a)
    return (
        _cuda.includes_for(a.dtypes, code + a.reduce_type)
        + _cuda.PRELUDE
        + _cuda.debug_prelude(kernel)
        + _cuda.typedefs(a.bound)
        + (f"\n// preamble\n{kernel.preamble}\n" if kernel.preamble else "")
        + f"\ntypedef {a.reduce_type} _type_reduce;\n"
        "__device__ __forceinline__ _type_reduce _jk_reduce(const _type_reduce& a, "
        f"const _type_reduce& b) {{\n  return ({kernel.reduce_expr});\n}}\n"
        + _acc_struct(kernel.identity or None)  # CuPy spells "no identity" as ''
        + _TEMPLATES
        + f"\n// jitkern ReductionKernel {kernel.name!r}: {a.strategy} strategy, group {a.group}, "
        f"vector {a.vector}, {a.out_nd}-d output space, {a.red_nd}-d reduction space, "
        f"{a.index_type} indices\n" + main + "\n" + _final_kernel(kernel, a)
    )
