"""The spec's ElementwiseKernel examples: squared_diff, type-generic kernels, raw arguments.

    python examples/elementwise_squared_diff.py
"""

import numpy as np

import jitkern

squared_diff = jitkern.ElementwiseKernel(
    "float32 x, float32 y", "float32 z", "z = (x - y) * (x - y)", "squared_diff")
x = jitkern.arange(10, dtype=np.float32).reshape(2, 5)
y = jitkern.arange(5, dtype=np.float32)
print(squared_diff(x, y))          # broadcast a row against a matrix
print(squared_diff(x, 5))          # a scalar

generic = jitkern.ElementwiseKernel(
    "T x, T y", "T z", "T diff = x - y;\nz = diff * diff;", "squared_diff_generic")
print(generic(jitkern.arange(5, dtype=np.float64), 1.5))

add_reverse = jitkern.ElementwiseKernel(
    "T x, raw T y", "T z", "z = x + y[_ind.size() - i - 1]", "add_reverse")
print(add_reverse(jitkern.arange(5, dtype=np.int32), jitkern.arange(0, 50, 10, dtype=np.int32)))

# What was compiled, and what it costs (no GPU needed for inspect with arch=).
print(squared_diff.inspect(np.zeros(1 << 20, np.float32), np.zeros(1 << 20, np.float32),
                           arch="sm_90"))
