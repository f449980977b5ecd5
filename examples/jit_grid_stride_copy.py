"""The spec's grid-stride copy with @rawkernel, launched in both styles.

Run: python examples/jit_grid_stride_copy.py [--simulate]
Needs a CUDA GPU; --simulate (or JITKERN_SIMULATE=1) runs the same program on jitkern's
simulated device instead (examples/README.md).
"""

import sys

import numpy as np

import jitkern
from gpu_or_simulated import main as example_main, simulated, where
from jitkern import jit


@jitkern.rawkernel()
def elementwise_copy(x, y, size):
    tid = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    ntid = jit.gridDim.x * jit.blockDim.x
    for i in range(tid, size, ntid):
        y[i] = x[i]


def main(argv=None) -> int:
    return example_main(run, sys.argv[1:] if argv is None else argv, "jit_grid_stride_copy.py")


def run():
    size = np.uint32(2**16 if simulated() else 2**22)
    x = jitkern.asarray(np.random.default_rng().standard_normal(size, dtype=np.float32))
    y = jitkern.empty(int(size), np.float32)
    elementwise_copy((128,), (1024,), (x, y, size))  # RawKernel style
    assert (x.get() == y.get()).all()
    y2 = jitkern.empty(int(size), np.float32)
    elementwise_copy[128, 1024](x, y2, size)  # Numba style
    assert (x.get() == y2.get()).all()
    print(f"copied {int(size)} float32 twice {where()}: OK")


if __name__ == "__main__":
    sys.exit(main())
