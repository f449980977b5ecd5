"""The loops the simulator runs ElementwiseKernel and ReductionKernel in (and so fuse's
kernels, which are such kernels): one home for their generated Python around the
translated C pieces (:mod:`.elementwise`, :mod:`.reduction`), and for their launch shapes.

- Elementwise: a grid-stride loop over the ``_c_n`` elements, ``i`` the index (the
  translator writes loop_prep, this loop with the operation inside, then after_loop, in one
  function: they share their locals); :func:`index_lines` fill ``_ind.get()``.
- Reduction: one block per output element (a grid-stride loop over outputs): each thread
  maps and folds a strided share of the reduced elements, a shared-memory tree of
  :data:`REDUCE_BLOCK` lanes combines the threads' values with ``reduce_expr``
  (``syncthreads`` between levels), and thread 0 runs ``post_map_expr`` and stores.
- A reduction whose ``reduce_expr`` is a NumPy ufunc's fold (:mod:`.reduction` decides)
  runs in three steps instead: :func:`reduction_map` maps every element into an array
  (an elementwise loop, vectorised), NumPy's ``ufunc.reduce`` folds each output's row,
  :func:`reduction_post` runs ``post_map_expr`` for every output.
"""

from __future__ import annotations

import re

#: Elementwise launches: threads per block, and at most this many blocks.
BLOCK, MAX_BLOCKS = 128, 64
#: Threads per block of a reduction (the shared-memory tree's width).
REDUCE_BLOCK = 32

#: The elementwise loop's header: ``i`` over the elements, a grid's stride apart.
ELEMENTWISE_LOOP = ("for i in range(numpy.int64(jit.grid(1)), _c_n, "
                    "numpy.int64(jit.gridsize(1))):")
#: The same loop of a reduction's steps, ``{0}`` over ``range({1})``.
_STEP_LOOP = "for {0} in range(numpy.int64(jit.grid(1)), {1}, numpy.int64(jit.gridsize(1))):"


def elementwise_grid(n: int, block: int) -> int:
    """Blocks of an elementwise launch over ``n`` elements (each thread takes several)."""
    return min(MAX_BLOCKS, -(-n // block))


def reduction_grid(n_out: int) -> int:
    """Blocks of a reduction over ``n_out`` outputs (a block takes several)."""
    return min(MAX_BLOCKS, n_out)


def index_lines(ndim: int) -> tuple[list, list]:
    """(the lines declaring ``_ind.get()``'s array, the lines filling it with element i's
    index over the loop shape ``_c_shape``, last dimension fastest)."""
    declare = [f"_c_ind = jit.local_memory(numpy.int64, {max(ndim, 1)})"]
    fill = ["_c_r = i"]
    for d in range(ndim - 1, 0, -1):
        fill += [f"_c_ind[{d}] = _c_r % _c_shape[{d}]", f"_c_r = _c_r // _c_shape[{d}]"]
    return declare, fill + ["_c_ind[0] = _c_r"]


def _indent(lines, depth: int) -> list:
    return ["    " * depth + line for line in lines]


def reduction(name: str, params, acc_type: str, bodies: dict, has_identity: bool) -> str:
    """The reduction kernel ``name(params)``, its accumulator of ``acc_type`` (a NumPy
    constructor's spelling). ``bodies`` are the translated pieces (lines): ``map`` sets
    ``_c_m`` (element ``_c_j``), ``combine`` sets ``_c_r`` from ``_c_a`` and ``_c_b``,
    ``identity`` sets ``_c_r`` (without one, a thread's first element starts its fold),
    ``post`` stores output ``_c_o`` from ``_c_a``."""
    b = REDUCE_BLOCK

    def combine(x, y, into):
        return [f"_c_a = {x}", f"_c_b = {y}", *bodies["combine"], f"{into} = _c_r"]

    if has_identity:
        start = [*bodies["identity"], "_c_acc = _c_r"]
        fold = combine("_c_acc", "_c_m", "_c_acc")
    else:
        start = [f"_c_acc = {acc_type}(0)"]
        fold = ["if _c_r0 == _c_t:", "    _c_acc = _c_m", "else:",
                *_indent(combine("_c_acc", "_c_m", "_c_acc"), 1)]
    lines = [
        f"def {name}({', '.join(params)}):",
        f"    _c_partial = jit.shared_memory({acc_type}, {b})",
        "    _c_t = numpy.int64(jit.threadIdx.x)",
        f"    _c_valid = min(_c_nred, numpy.int64({b}))",
        "    for _c_o in range(numpy.int64(jit.blockIdx.x), _c_nout, numpy.int64(jit.gridDim.x)):",
        *_indent(start, 2),
        f"        for _c_r0 in range(_c_t, _c_nred, numpy.int64({b})):",
        "            _c_j = _c_o * _c_nred + _c_r0",
        *_indent(bodies["map"], 3),
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
        *_indent(bodies["post"], 3),
        "        jit.syncthreads()",
    ]
    return "\n".join(lines) + "\n"


def reduction_map(name: str, params, bodies: dict) -> str:
    """The kernel ``name(*params, _c_mapped)`` storing each element's mapped value: element
    ``_c_j`` of output ``_c_o``'s row (``_c_r0`` along it) into ``_c_mapped[_c_j]``."""
    index = []
    if any(re.search(r"\b_c_(o|r0)\b", line) for line in bodies["map"]):
        index = ["_c_o = _c_j // _c_nred", "_c_r0 = _c_j - _c_o * _c_nred"]
    return "\n".join([
        f"def {name}({', '.join(params)}, _c_mapped):",
        "    " + _STEP_LOOP.format("_c_j", "_c_nout * _c_nred"),
        *_indent([*index, *bodies["map"], "_c_mapped[_c_j] = _c_m"], 2),
    ]) + "\n"


def reduction_post(name: str, params, bodies: dict) -> str:
    """The kernel ``name(*params, _c_reduced)`` running ``post_map_expr`` for every output,
    ``a`` its folded value."""
    return "\n".join([
        f"def {name}({', '.join(params)}, _c_reduced):",
        "    " + _STEP_LOOP.format("_c_o", "_c_nout"),
        *_indent(["_c_a = _c_reduced[_c_o]", *bodies["post"]], 2),
    ]) + "\n"
