"""Which elements each thread of an ElementwiseKernel runs.

CuPy launches one thread per element: ``min(block_size, n)`` threads per block (128 by
default) and ``ceil(n / block)`` blocks (at most ``2**31 - 1``), the operation inside a
grid-stride loop (``CUPY_FOR``) that, at those sizes, runs once per thread. jitkern's vector
loops give a thread several elements (one 16-byte load per array), which no operation can
tell apart from CuPy's mapping unless it keeps state between elements or looks at the
threads themselves. :func:`per_thread_reason` says when an operation could; such a kernel
gets CuPy's mapping exactly (:func:`cupy_dims`), every other kernel the vector loops.
"""

from __future__ import annotations

import re

CUPY_BLOCK = 128  # CuPy's default block_size
MAX_GRID = (1 << 31) - 1  # CuPy's cap on the blocks of a linear launch

#: Names that make an operation (or a helper of its preamble) see the threads: their
#: geometry, their order in a warp or block, memory shared between them, inline PTX (which
#: can read %tid), a clock.
_THREADS = re.compile(
    r"\b(threadIdx|blockIdx|blockDim|gridDim|warpSize|__syncthreads\w*|__syncwarp|__shfl\w*"
    r"|__ballot\w*|__any_sync|__all_sync|__uni_sync|__activemask|__match\w*_sync"
    r"|__reduce_\w+_sync|__shared__|cooperative_groups|this_thread_block|this_grid"
    r"|tiled_partition|coalesced_threads|asm|clock|clock64|__globaltimer|__nanosleep)\b"
)
_STATIC = re.compile(r"\bstatic\b")
# a __device__/__managed__ declaration up to its first ( ; = [ or { : a variable when that
# is not '(' (a function's parameter list) nor an operator's name ('operator[](...)'), and a
# writable one unless declared const, constexpr or __constant__
_DEVICE_DECL = re.compile(r"\b__(?:device|managed)__\b([^(;=\[{]*)([(;=\[{])")
_READ_ONLY = re.compile(r"\b(const|constexpr|__constant__)\b|\boperator\s*$")
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_RAW_NAME = re.compile(r"\b_raw_(\w+)")
#: ``return`` ends a thread's loop over its elements: with one element per thread (CuPy's
#: launch) it ends that element only.
_RETURN = re.compile(r"\breturn\b")


def raw_names(kernel) -> frozenset:
    """The parameters whose CuPy name ``_raw_<name>`` (the whole array of a non-raw
    parameter, a CArray) the kernel's code uses."""
    code = _COMMENT.sub(" ", " ".join((kernel.operation, kernel.preamble, kernel.loop_prep,
                                       kernel.after_loop)))
    named = set(_RAW_NAME.findall(code))
    return frozenset(p.name for p in kernel.params if not p.raw and p.name in named)


def per_thread_reason(kernel) -> str | None:
    """Why ``kernel`` must run one element per thread as CuPy does (a few words for the
    generated source's comment), or None when the vector loops give the same results.

    An operation can tell the mappings apart only through state that outlives one element
    or through the threads themselves:

    * ``loop_prep`` (its variables live across a thread's elements) or ``after_loop`` (it
      runs once per thread, so the thread count shows);
    * the operation or the preamble names the threads' geometry or their collectives
      (``threadIdx``, ``blockDim``, ``__syncthreads``, ``__shfl_*``, ``__shared__``, inline
      ``asm``, ...);
    * the operation declares a ``static`` variable;
    * the operation says ``return`` (in CuPy it ends the thread's one element);
    * the code names ``_raw_<name>``, the whole of a non-raw array (the elements other
      threads write are visible through it);
    * the preamble declares a ``__device__``/``__managed__`` variable the operation may
      update between elements.
    """
    memo = kernel.__dict__.get("_jk_per_thread_reason", False)
    if memo is not False:
        return memo
    reason = _reason(kernel)
    kernel.__dict__["_jk_per_thread_reason"] = reason
    return reason


def _reason(kernel) -> str | None:
    operation = _COMMENT.sub(" ", kernel.operation)
    preamble = _COMMENT.sub(" ", kernel.preamble)
    for what, code in (("loop_prep", kernel.loop_prep), ("after_loop", kernel.after_loop)):
        if _COMMENT.sub(" ", code).strip(" \t\n;"):
            return f"it has {what}"
    for what, code in (("operation", operation), ("preamble", preamble)):
        found = _THREADS.search(code)
        if found:
            return f"its {what} names {found.group(1)}"
    if _STATIC.search(operation):
        return "its operation declares a static variable"
    if _RETURN.search(operation):
        return "its operation returns"
    named = raw_names(kernel)
    if named:
        return f"it reads _raw_{min(named)} (the whole array)"
    if any(m.group(2) != "(" and not _READ_ONLY.search(m.group(1))
           for m in _DEVICE_DECL.finditer(preamble)):
        return "its preamble declares a __device__ variable"
    return None


def cupy_dims(size: int, block: int) -> tuple[int, int]:
    """(blocks, threads per block) of CuPy's launch of ``size`` elements with ``block_size``
    ``block``: one thread per element."""
    block = min(block, max(size, 1))
    return max(1, min(-(-size // block), MAX_GRID)), block
