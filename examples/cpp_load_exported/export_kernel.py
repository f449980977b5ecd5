"""Export a JIT kernel for the C++ example (load_exported.cpp).

    python export_kernel.py OUT_DIR

writes OUT_DIR/row_axpy.{fatbin,h,json,cu}. The kernel reads a 2-D strided array, so its
exported parameter list ends with the shape and byte strides the JIT appends, which the
C++ program fills in from the header's layout.
"""

import sys

import numpy as np

from jitkern import jit


@jit.rawkernel()
def row_axpy(x, m, alpha, out):
    """out[i] = alpha * x[i] + m[i, 1]"""
    i = jit.grid(1)
    if i < out.size:
        out[i] = alpha * x[i] + m[i, 1]


if __name__ == "__main__":
    folder = sys.argv[1] if len(sys.argv) > 1 else "."
    n = 16
    examples = (
        np.zeros(n, np.float32),
        np.zeros((n, 3), np.float32),
        np.float32(1),
        np.zeros(n, np.float32),
    )
    result = row_axpy.export(
        f"{folder}/row_axpy", *examples, arch=("sm_80", "sm_90"), format="fatbin"
    )
    print("\n".join(result.files))
