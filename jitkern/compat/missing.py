"""The error for a name ``jitkern`` does not have: what to use instead.

jitkern is CuPy's user-kernel API and the small array namespace its examples use
(docs/compat.md), not all of CuPy: code that reaches for ``cp.fft``, ``cp.linalg.svd`` or
``cp.concatenate`` is told to get it from CuPy or NumPy, which work on jitkern's arrays
without a copy through ``__cuda_array_interface__``.
"""

from __future__ import annotations

from ..errors import JitkernAttributeError


def missing(name: str) -> JitkernAttributeError:
    """The AttributeError for ``jitkern.<name>``, saying where to get it."""
    message = f"module 'jitkern' has no attribute {name!r}"
    if name.startswith("__"):
        return JitkernAttributeError(message)
    return JitkernAttributeError(
        f"{message}: jitkern offers CuPy's kernel API (RawKernel, RawModule, ElementwiseKernel, "
        "ReductionKernel, fuse, jit) and the array routines its examples use (docs/compat.md), "
        f"not all of CuPy. For {name!r} use CuPy (cupy.{name}) or NumPy (numpy.{name} on "
        "jitkern.asnumpy(x)); CuPy and PyTorch work on jitkern arrays without a copy through "
        "__cuda_array_interface__ (cupy.asarray(x)), and jitkern.asarray(y) views their arrays"
    )


__all__ = ["missing"]
