"""ElementwiseKernel/ReductionKernel(debug=True) without a GPU: the raw arguments' views are
the checked type in a debug build only; debug builds compile for sm_90 with -lineinfo."""

import numpy as np

import jitkern

F32 = np.zeros(64, np.float32)


def test_elementwise_debug_source_checks_raw_arguments_only():
    args = (F32, np.int32(1), np.zeros((4, 5), np.float32), F32)
    spec = ("raw T src, int32 off, raw T table", "T dst", "dst = src[i + off] + table[0]", "ew")
    debug = jitkern.ElementwiseKernel(*spec, debug=True)
    normal = jitkern.ElementwiseKernel(*spec)
    d = debug.inspect(*args, arch="sm_90")
    n = normal.inspect(*args, arch="sm_90")
    assert "const _jk_dcarray<T, 1, true, true, 0> src(_rp_src, _rd_src);" in d.source
    assert "const _jk_dcarray<T, 2, true, true, 2> table(_rp_table, _rd_table);" in d.source
    assert "_jk_dcarray" not in n.source and "jk_debug" not in n.source
    # the normal build's raw views are CuPy's CArray<T, ndim, c_contiguous, 32-bit indexing>
    assert "const CArray<T, 2, true, true> table(_rp_table, _rd_table.shape, " in n.source
    assert "-lineinfo" in debug.options and "-lineinfo" not in normal.options
    assert d.cubin != n.cubin
    # the mapped (non-raw) parameters are bound as in the normal build
    assert d.source.count("_p_dst") == n.source.count("_p_dst")


def test_reduction_debug_source_checks_raw_arguments():
    spec = ("T x, raw T w", "T y", "x * w[_J]", "a + b", "y = a", "0", "rd")
    debug = jitkern.ReductionKernel(*spec, debug=True)
    normal = jitkern.ReductionKernel(*spec)
    x, w = np.zeros((6, 4), np.float32), np.zeros(6, np.float32)
    d = debug.inspect(x, w, axis=0, arch="sm_90")
    n = normal.inspect(x, w, axis=0, arch="sm_90")
    assert "const _jk_dcarray<T, 1, true, true, 1> w(_rp_w, _rd_w);" in d.source
    assert "_jk_dcarray" not in n.source
    assert d.cubin != n.cubin
