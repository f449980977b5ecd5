"""The spec's grid-stride copy with @rawkernel, launched in both styles.

Run: python examples/jit_grid_stride_copy.py   (needs a GPU; without one it prints the CUDA)
"""

import numpy as np

import jitkern
from jitkern import jit


@jitkern.rawkernel()
def elementwise_copy(x, y, size):
    tid = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    ntid = jit.gridDim.x * jit.blockDim.x
    for i in range(tid, size, ntid):
        y[i] = x[i]


def main():
    size = np.uint32(2**22)
    if not jitkern.is_available():
        host = np.zeros(4, np.float32)
        print(elementwise_copy.inspect(host, host, size, arch="sm_90").source)
        return
    x = jitkern.asarray(np.random.default_rng().standard_normal(size, dtype=np.float32))
    y = jitkern.empty(int(size), np.float32)
    elementwise_copy((128,), (1024,), (x, y, size))  # RawKernel style
    assert (x.get() == y.get()).all()
    y2 = jitkern.empty(int(size), np.float32)
    elementwise_copy[128, 1024](x, y2, size)  # Numba style
    assert (x.get() == y2.get()).all()
    print(f"copied {int(size)} float32 twice: OK")


if __name__ == "__main__":
    main()
