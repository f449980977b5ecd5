"""``jitkern.dot`` and ``jitkern.matmul`` for 1-D and 2-D arrays: a tiled JIT kernel.

Correct for every numeric dtype (float16 accumulates in float32, as
cuBLAS does; complex64/128 in their own type; integers in their type, wrapping as NumPy's
do), each output element a sum over ``k`` in increasing order. It is a reference for
checking kernels, not a BLAS: for speed use CuPy (cuBLAS) or PyTorch on the same memory,
zero-copy through ``__cuda_array_interface__`` (``cupy.asarray(x)``).
"""

from __future__ import annotations

import numpy

from .. import arrays
from ..runtime.simulated import host_arrays
from ..errors import JitkernNotImplementedError, JitkernTypeError, JitkernValueError
from .. import jit
from ..jit import rawkernel
from .routines import numpy_call

TILE = 16


def _make_kernel(acc_dtype):
    acc = numpy.dtype(acc_dtype).type

    @rawkernel()
    def matmul_tiled(a, b, c):
        """``c = a @ b`` for 2-D ``a`` (m, k) and ``b`` (k, n): 16x16 tiles through shared
        memory, accumulated in ``acc``."""
        ta = jit.shared_memory(acc, 256)
        tb = jit.shared_memory(acc, 256)
        tx = jit.threadIdx.x
        ty = jit.threadIdx.y
        row = jit.blockIdx.y * 16 + ty
        col = jit.blockIdx.x * 16 + tx
        m = a.shape[0]
        k = a.shape[1]
        n = b.shape[1]
        total = acc(0)
        for k0 in range(0, k, 16):
            ka = k0 + tx
            kb = k0 + ty
            ta[ty * 16 + tx] = acc(a[row, ka]) if row < m and ka < k else acc(0)
            tb[ty * 16 + tx] = acc(b[kb, col]) if kb < k and col < n else acc(0)
            jit.syncthreads()
            for kk in range(16):
                total += ta[ty * 16 + kk] * tb[kk * 16 + tx]
            jit.syncthreads()
        if row < m and col < n:
            c[row, col] = total

    return matmul_tiled


_KERNELS: dict = {}


def kernel_for(dtype):
    """The tiled kernel for operands of ``dtype`` (accumulating float16 in float32)."""
    dt = numpy.dtype(dtype)
    acc = numpy.dtype(numpy.float32) if dt == numpy.float16 else dt
    k = _KERNELS.get(acc)
    if k is None:
        k = _KERNELS[acc] = _make_kernel(acc)
    return k


def _check(a, b, name: str) -> None:
    if a.ndim == 0 or b.ndim == 0:
        if name == "matmul":
            raise JitkernValueError("matmul: an operand is a scalar (0-d); use * to scale")
    if a.ndim > 2 or b.ndim > 2:
        raise JitkernNotImplementedError(
            f"jitkern.{name} takes 1-D and 2-D arrays (got {a.ndim}-D and {b.ndim}-D); for "
            "batched products use CuPy or PyTorch on the same memory, zero-copy through "
            "__cuda_array_interface__ (cupy.asarray(x))"
        )


def _product(a, b, name: str, simulated: bool = False):
    """``a @ b`` by the tiled kernel: on the device, or (``simulated``) in the simulator on
    NumPy arrays."""
    _check(a, b, name)
    if a.ndim == 0 or b.ndim == 0:  # dot with a scalar is a multiplication
        return a * b
    dt = numpy.result_type(a.dtype, b.dtype)
    if dt.kind not in "iufc":
        raise JitkernTypeError(f"jitkern.{name}: dtype {dt} is not supported (numbers only); "
                               "convert with .astype(numpy.int32) first")
    a2 = a.reshape(1, a.shape[0]) if a.ndim == 1 else a
    b2 = b.reshape(b.shape[0], 1) if b.ndim == 1 else b
    if a2.shape[1] != b2.shape[0]:
        raise JitkernValueError(
            f"jitkern.{name}: shapes {a.shape} and {b.shape} not aligned: "
            f"{a2.shape[1]} (dim {a.ndim - 1}) != {b2.shape[0]} (dim 0)"
        )
    m, n = a2.shape[0], b2.shape[1]
    c = (numpy.empty if simulated else arrays.empty)((m, n), dt)
    if c.size:
        grid = (-(-n // TILE), -(-m // TILE))
        kernel = kernel_for(dt).simulate if simulated else kernel_for(dt)
        kernel(grid, (TILE, TILE), (a2.astype(dt, copy=False), b2.astype(dt, copy=False), c))
    shape = (*a.shape[:-1], *b.shape[1:])
    return c.reshape(shape)


def _host(a, b) -> bool:
    return host_arrays() or not (
        isinstance(a, arrays.ndarray) or isinstance(b, arrays.ndarray)
    )


def matmul(a, b):
    """``a @ b`` for 1-D and 2-D arrays (NumPy's rules), on the device; NumPy's for host
    arrays and while simulating."""
    if _host(a, b):
        return numpy_call("matmul", numpy.matmul, a, b)
    return _product(arrays.asarray(a), arrays.asarray(b), "matmul")


def dot(a, b, out=None):
    """``numpy.dot`` for scalars, 1-D and 2-D arrays, on the device; NumPy's for host arrays
    and while simulating."""
    if _host(a, b):
        return numpy_call("dot", numpy.dot, a, b, out=out)
    result = _product(arrays.asarray(a), arrays.asarray(b), "dot")
    if out is None:
        return result
    out[...] = result
    return out


def _matmul_simulated(a, b):
    """``matmul.simulate``: the tiled kernel in the simulator, on NumPy arrays."""
    return _product(numpy.asarray(a), numpy.asarray(b), "matmul", simulated=True)


def _dot_simulated(a, b):
    """``dot.simulate``: the tiled kernel in the simulator, on NumPy arrays."""
    return _product(numpy.asarray(a), numpy.asarray(b), "dot", simulated=True)


# As routines' ``.simulate`` (jitkern.sqrt.simulate): the kernel itself, not NumPy's product.
matmul.simulate = _matmul_simulated
dot.simulate = _dot_simulated


def vdot(a, b):
    """``numpy.vdot``: the dot product of the flattened arrays, conjugating ``a``."""
    if _host(a, b):
        return numpy_call("vdot", numpy.vdot, a, b)
    a, b = arrays.asarray(a).ravel(), arrays.asarray(b).ravel()
    if a.size != b.size:
        raise JitkernValueError(f"jitkern.vdot: the arrays have {a.size} and {b.size} "
                                "elements; vdot takes two of the same size")
    return dot(a.conj() if a.dtype.kind == "c" else a, b)


def inner(a, b):
    """``numpy.inner`` for 1-D and 2-D arrays (``a @ b.T``)."""
    if _host(a, b):
        return numpy_call("inner", numpy.inner, a, b)
    a, b = arrays.asarray(a), arrays.asarray(b)
    return _product(a, b.T if b.ndim == 2 else b, "inner")


__all__ = ["dot", "inner", "kernel_for", "matmul", "vdot"]
