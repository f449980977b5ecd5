"""Tiled matrix transpose through shared memory (coalesced reads and writes).

Run: python examples/jit_transpose.py
"""

import numpy as np

import jitkern
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


def main():
    rows, cols = 3000, 5000
    if not jitkern.is_available():
        m = np.zeros((rows, cols), np.float32)
        print(transpose.inspect(m, m.T.copy(), arch="sm_90").source)
        return
    h = np.random.default_rng().standard_normal((rows, cols), dtype=np.float32)
    dst = jitkern.empty((cols, rows), np.float32)
    grid = ((cols + TILE - 1) // TILE, (rows + TILE - 1) // TILE)
    transpose[grid, (TILE, ROWS)](jitkern.asarray(h), dst)
    assert (dst.get() == h.T).all()
    print(f"transposed a {rows}x{cols} matrix: OK")


if __name__ == "__main__":
    main()
