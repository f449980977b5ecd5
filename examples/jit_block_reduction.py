"""Sum of a large array: warp shuffles, shared memory between warps, one atomic per block.

Run: python examples/jit_block_reduction.py [--simulate]
Needs a CUDA GPU; --simulate (or JITKERN_SIMULATE=1) runs the same program on jitkern's
simulated device instead (examples/README.md).
"""

import sys

import numpy as np

import jitkern
from gpu_or_simulated import main as example_main, simulated
from jitkern import jit

FULL_MASK = 0xFFFFFFFF


@jitkern.rawkernel()
def block_sum(x, out, n):
    partial = jit.shared_memory(np.float32, 32)  # one slot per warp
    tid = jit.threadIdx.x
    lane = tid % 32
    warp = tid // 32
    v = np.float32(0)
    for i in range(jit.grid(1), n, jit.gridsize(1)):  # grid-stride accumulation
        v += x[i]
    for offset in (16, 8, 4, 2, 1):  # reduce within the warp
        v += jit.shfl_down_sync(FULL_MASK, v, offset)
    if lane == 0:
        partial[warp] = v
    jit.syncthreads()
    if warp == 0:  # the first warp reduces the per-warp partial sums
        v = partial[lane] if lane < jit.blockDim.x // 32 else np.float32(0)
        for offset in (16, 8, 4, 2, 1):
            v += jit.shfl_xor_sync(FULL_MASK, v, offset)
        if lane == 0:
            jit.atomic_add(out, 0, v)


def main(argv=None) -> int:
    return example_main(run, sys.argv[1:] if argv is None else argv, "jit_block_reduction.py")


def run():
    n = 200_000 if simulated() else 10_000_000
    h = np.random.default_rng().random(n, dtype=np.float32)
    out = jitkern.zeros(1, np.float32)
    block_sum[8 if simulated() else 264, 1024](jitkern.asarray(h), out, n)
    got = float(out.get()[0])
    want = float(h.sum(dtype=np.float64))
    error = abs(got - want) / want
    print(f"sum = {got:.1f}, NumPy (float64) = {want:.1f}, relative error {error:.1e}")
    assert error < 1e-4


if __name__ == "__main__":
    sys.exit(main())
