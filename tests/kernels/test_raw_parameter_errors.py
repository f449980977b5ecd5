"""A ``raw`` parameter used as a value (issue 18): the compile error names CuPy's CArray,
never jitkern's internal C++ type, and says how to use the parameter."""

import numpy as np
import pytest

import jitkern


@pytest.mark.parametrize("debug", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.int32])
def test_a_raw_parameter_used_as_a_value_is_named_as_a_carray(dtype, debug):
    k = jitkern.ElementwiseKernel("raw T x", "T y", "y = x", "raw_as_value", debug=debug)
    x = np.zeros(5, dtype)
    with pytest.raises(jitkern.CompileError) as info:
        k.inspect(x, x, arch="sm_90")
    message = str(info.value)
    ctype = {np.float64: "double", np.int32: "int"}[dtype]
    # CuPy's type: CArray<T, ndim, c_contiguous, use_32bit_indexing>
    assert f'"const CArray<{ctype}, 1, true, true>"' in message, message
    assert "_jk_" not in message.split("source:")[0], message
    assert "a `raw` parameter is the whole array" in message and "x[i]" in message
