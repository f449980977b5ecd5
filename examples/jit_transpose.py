"""Tiled matrix transpose through shared memory (coalesced reads and writes).

Run: python examples/jit_transpose.py [--simulate]
Needs a CUDA GPU; --simulate (or JITKERN_SIMULATE=1) runs the same program on jitkern's
simulated device instead (examples/README.md).
"""

import sys

import numpy as np

import jitkern
from gpu_or_simulated import main as example_main, simulated
from jitkern import jit

TILE = 32
ROWS = 8  # each thread moves TILE / ROWS elements


@jitkern.rawkernel()
def transpose(src, dst):
    tile = jit.shared_memory(np.float32, TILE * (TILE + 1))  # +1: no bank conflicts
    rows, cols = src.shape
    x = jit.blockIdx.x * TILE + jit.threadIdx.x
    y = jit.blockIdx.y * TILE + jit.threadIdx.y
    for k in range(0, TILE, ROWS):
        if x < cols and y + k < rows:
            tile[(jit.threadIdx.y + k) * (TILE + 1) + jit.threadIdx.x] = src[y + k, x]
    jit.syncthreads()
    x = jit.blockIdx.y * TILE + jit.threadIdx.x
    y = jit.blockIdx.x * TILE + jit.threadIdx.y
    for k in range(0, TILE, ROWS):
        if x < rows and y + k < cols:
            dst[y + k, x] = tile[jit.threadIdx.x * (TILE + 1) + jit.threadIdx.y + k]


def main(argv=None) -> int:
    return example_main(run, sys.argv[1:] if argv is None else argv, "jit_transpose.py")


def run():
    rows, cols = (100, 150) if simulated() else (3000, 5000)
    h = np.random.default_rng().standard_normal((rows, cols), dtype=np.float32)
    grid = ((cols + TILE - 1) // TILE, (rows + TILE - 1) // TILE)
    dst = jitkern.empty((cols, rows), np.float32)
    transpose[grid, (TILE, ROWS)](jitkern.asarray(h), dst)
    assert (dst.get() == h.T).all()
    print(f"transposed a {rows}x{cols} matrix: OK")


if __name__ == "__main__":
    sys.exit(main())
