"""The spec's grid-stride copy with @rawkernel, launched in both styles.

Run: python examples/jit_grid_stride_copy.py [--simulate]
Needs a CUDA GPU; --simulate runs the same kernel on the CPU (jitkern's simulator) instead.
"""

import sys

import numpy as np

import jitkern
from jitkern import jit


@jitkern.rawkernel()
def elementwise_copy(x, y, size):
    tid = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    ntid = jit.gridDim.x * jit.blockDim.x
    for i in range(tid, size, ntid):
        y[i] = x[i]


def main(argv=None):
    simulate = "--simulate" in (sys.argv[1:] if argv is None else argv)
    if not simulate and not jitkern.is_available():
        print("This example needs a CUDA GPU and none was found; "
              "run it with --simulate to run its kernel on the CPU.")
        return
    if simulate:
        jitkern.config.settings.simulate = True  # every JIT launch below runs on the CPU
    to_gpu = np.asarray if simulate else jitkern.asarray
    to_host = np.asarray if simulate else jitkern.asnumpy
    empty = np.empty if simulate else jitkern.empty
    size = np.uint32(2**16 if simulate else 2**22)
    x = to_gpu(np.random.default_rng().standard_normal(size, dtype=np.float32))
    y = empty(int(size), np.float32)
    elementwise_copy((128,), (1024,), (x, y, size))  # RawKernel style
    assert (to_host(x) == to_host(y)).all()
    y2 = empty(int(size), np.float32)
    elementwise_copy[128, 1024](x, y2, size)  # Numba style
    assert (to_host(x) == to_host(y2)).all()
    where = "in the simulator" if simulate else "on the GPU"
    print(f"copied {int(size)} float32 twice {where}: OK")


if __name__ == "__main__":
    main()
