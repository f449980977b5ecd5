"""ReductionKernel without a GPU: axes, strategies, generated code, NVRTC for sm_80/sm_90."""

import re

import numpy as np
import pytest

from jitkern.errors import KernelArgumentError
from jitkern.kernels.reduction import ReductionKernel, normalize_axis

ARCHS = ["sm_80", "sm_90"]


@pytest.fixture(scope="module")
def l2norm():
    return ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")


def _strategy(source):
    return re.search(
        r"ReductionKernel '\w+': (\w+) strategy, group (\d+), vector (\d+)", source
    ).groups()


@pytest.mark.parametrize(
    "axis,ndim,expected",
    [
        (None, 3, (0, 1, 2)),
        (1, 3, (1,)),
        (-1, 3, (2,)),
        ((2, 0), 3, (0, 2)),
        ((), 2, ()),
        (np.int64(0), 1, (0,)),
    ],
)
def test_normalize_axis(axis, ndim, expected):
    assert normalize_axis(axis, ndim, "k") == expected


@pytest.mark.parametrize(
    "axis,exc,match",
    [
        (3, np.exceptions.AxisError, "out of bounds"),
        (-4, np.exceptions.AxisError, "out of bounds"),
        ((0, -3), ValueError, "duplicate"),
        (1.0, TypeError, "int"),
        ((True,), TypeError, "int"),
    ],
)
def test_normalize_axis_errors(axis, exc, match):
    with pytest.raises(exc, match=match):
        normalize_axis(axis, 3, "k")


@pytest.mark.parametrize(
    "shape,axis,expected",
    [
        ((1 << 20,), None, ("row", "0", "4")),  # full reduction: block, vectors
        ((64, 1024), 1, ("row", "32", "4")),  # contiguous rows: a warp per row
        ((64, 8192), 1, ("row", "0", "4")),  # long rows: a block per row
        ((1000, 4), 1, ("row", "1", "1")),  # tiny rows: a thread per row
        ((1024, 64), 0, ("col", "32", "1")),  # leading axis: coalesced columns
        ((8, 16, 32), (0, 1), ("col", "32", "1")),
        ((8, 16, 32), (0, 2), ("row", "32", "4")),  # vectors along the inner reduced axis
        ((8, 16, 30), (0, 2), ("row", "32", "1")),  # 30 is not whole vectors
    ],
)
def test_strategy_by_shape(l2norm, shape, axis, expected):
    ins = l2norm.inspect(np.zeros(shape, np.float32), axis=axis, arch="sm_90")
    assert _strategy(ins.source) == expected


def test_no_atomics_in_generated_code(l2norm):
    for shape, axis in [((1 << 20,), None), ((1024, 64), 0), ((64, 1024), 1)]:
        src = l2norm.inspect(np.zeros(shape, np.float32), axis=axis, arch="sm_90").source
        # (the environment's #include <cupy/atomics.cuh> is no call)
        assert re.search(r"\batomic\w*\s*\(", src) is None


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize(
    "dtype", ["int8", "int32", "uint64", "float16", "float32", "float64", "complex64", "complex128"]
)
def test_compiles_every_dtype_and_strategy(arch, dtype):
    k = ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "ksum")
    x = np.zeros((64, 48), dtype)
    for axis in (None, 0, 1):
        assert k.inspect(x, axis=axis, arch=arch).cubin


@pytest.mark.parametrize("arch", ARCHS)
def test_no_identity_and_several_outputs_compile(arch):
    kmax = ReductionKernel("T x", "T y", "x", "max(a, b)", "y = a", None, "kmax")
    two = ReductionKernel(
        "T x, T w",
        "T s, float64 d",
        "x * w",
        "a + b",
        "s = a; d = 2.0 * a",
        "0",
        "two_out",
        reduce_type="double",
    )
    x = np.zeros((40, 50), np.float32)
    for axis in (None, 0, 1):
        assert kmax.inspect(x, axis=axis, arch=arch).cubin
        assert two.inspect(x, x[0], axis=axis, arch=arch).cubin


def test_keepdims_and_out_shapes(l2norm):
    x = np.zeros((4, 5, 6), np.float32)
    l2norm.inspect(x, axis=1, keepdims=True, out=np.zeros((4, 1, 6), np.float32), arch="sm_90")
    with pytest.raises(ValueError, match=r"has shape \(4, 6\)"):
        l2norm.inspect(x, axis=1, keepdims=True, out=np.zeros((4, 6), np.float32), arch="sm_90")


def test_definition_errors():
    with pytest.raises(ValueError, match="shifted"):
        ReductionKernel("float32 x", "float32 out", "x * x", "a + b", "0", "sum_of_squares")
    with pytest.raises(ValueError, match="cannot be raw"):
        ReductionKernel("T x", "raw T y", "x", "a + b", "y = a", "0", "k")
    with pytest.raises(ValueError, match="reduced value"):
        ReductionKernel("T x", "T a", "x", "a + b", "a = a", "0", "k")
    with pytest.raises(ValueError, match="kernel name"):
        ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "no good")


def test_call_errors(l2norm):
    x = np.zeros((3, 4), np.float32)
    with pytest.raises(KernelArgumentError, match="got 3"):
        l2norm.inspect(x, x, x, arch="sm_90")
    kmax = ReductionKernel("T x", "T y", "x", "max(a, b)", "y = a", None, "kmax_e")
    with pytest.raises(ValueError, match="no identity"):
        kmax.inspect(np.zeros((0, 4), np.float32), axis=0, arch="sm_90")
    raw = ReductionKernel("T x, raw T w", "T y", "x * w[_J]", "a + b", "y = a", "0", "raw_w")
    with pytest.raises(ValueError, match="lead"):
        raw.inspect(x, np.zeros(4, np.float32), axis=1, arch="sm_90")
    assert raw.inspect(x, np.zeros(3, np.float32), axis=0, arch="sm_90").cubin


def test_cached_codes(l2norm):
    k = ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "ksum_cc")
    k.inspect(np.zeros(10, np.float32), arch="sm_90")
    assert "ksum_cc_final" in k.cached_code
    k.inspect(np.zeros((10, 10), np.float32), axis=0, arch="sm_90")
    assert len(k.cached_codes) == 2
    with pytest.raises(RuntimeError, match="2 variants have been compiled; cached_code needs exactly one"):
        k.cached_code


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_split_row_reductions_interleave_their_tiles(l2norm, arch, dtype):
    """A split row reduction with vector loads: block y takes every gridDim.y-th tile of
    blockDim x unroll vectors over the whole reduced range (a fixed assignment: the same
    bits run to run), and only block 0 adds the elements after the last whole vector."""
    x = np.zeros((1 << 20) + 3, dtype)  # a tail of three elements
    ins = l2norm.inspect(x, arch=arch)
    src = ins.source
    assert _strategy(src) == ("row", "0", str(16 // np.dtype(dtype).itemsize))
    assert "const int _r0 = 0;" in src and "const int _r1 = _red_size;" in src
    assert re.search(
        r"for \(int _vb = _v0 \+ \(int\)blockIdx\.y \* \(int\)blockDim\.x \* 4 \+ _lane; "
        r"_vb < _v1; _vb \+= \(int\)gridDim\.y \* \(int\)blockDim\.x \* 4\)",
        src,
    )
    assert re.search(r"if \(blockIdx\.y == 0\)\n  for \(int _J = _v1 \* \d \+ _lane", src)
    assert ins.registers <= 64 and ins.spill_stores == 0


def test_unvectorised_splits_keep_contiguous_chunks(l2norm):
    x = np.zeros(3 << 20, np.float32)[::3]  # a strided view: scalar loads
    src = l2norm.inspect(x, arch="sm_90").source
    assert _strategy(src)[2] == "1"
    assert "const int _r0 = (int)blockIdx.y * _chunk;" in src
    assert "gridDim.y * " not in src
