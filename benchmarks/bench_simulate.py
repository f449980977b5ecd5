"""The simulator's speed (issue 10): JIT kernels run on one CPU core, no GPU needed.

Run: PYTHONPATH=. python benchmarks/bench_simulate.py
Targets: the spec's grid-stride copy over 2**16 float32 elements, and a 256-thread
shared-memory + shuffle block reduction over 2**16 elements, each under 2 s.
Prints a markdown table: the first run (generating the Python) and the median of the
next runs, with the results checked against NumPy.
"""

from __future__ import annotations

import platform
import statistics
import time

import numpy as np

import jitkern
from jitkern import jit

N = 2**16
FULL = 0xFFFFFFFF


@jitkern.rawkernel()
def elementwise_copy(x, y, size):
    tid = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    ntid = jit.gridDim.x * jit.blockDim.x
    for i in range(tid, size, ntid):
        y[i] = x[i]


@jitkern.rawkernel()
def block_sum(x, out, n):
    partial = jit.shared_memory(np.float32, 8)  # one slot per warp of 256 threads
    tid = jit.threadIdx.x
    i = jit.grid(1)
    v = x[i] if i < n else np.float32(0)
    for offset in (16, 8, 4, 2, 1):
        v += jit.shfl_down_sync(FULL, v, offset)
    if tid % 32 == 0:
        partial[tid // 32] = v
    jit.syncthreads()
    if tid < 32:
        v = partial[tid] if tid < 8 else np.float32(0)
        for offset in (4, 2, 1):
            v += jit.shfl_xor_sync(FULL, v, offset)
        if tid == 0:
            jit.atomic_add(out, 0, v)


def timed(fn, check, runs: int = 3):
    t0 = time.perf_counter()
    fn()
    first = time.perf_counter() - t0
    check()
    warm = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        warm.append(time.perf_counter() - t0)
    check()
    return first, statistics.median(warm)


def main() -> None:
    rng = np.random.default_rng()
    x = rng.standard_normal(N).astype(np.float32)
    y = np.full(N, np.nan, np.float32)
    size = np.uint32(N)
    out = np.zeros(1, np.float32)

    def copy():
        elementwise_copy.simulate((128,), (1024,), (x, y, size))

    def check_copy():
        assert np.array_equal(y, x)

    def reduce():
        out[0] = 0
        block_sum.simulate[N // 256, 256](x, out, N)

    def check_reduce():
        want = x.astype(np.float64).sum()
        assert abs(out[0] - want) <= 1e-4 * np.abs(x).sum(), (out[0], want)

    def reduce_racecheck():
        out[0] = 0
        block_sum.simulate(N // 256, 256, (x, out, N), racecheck=True)

    rows = [
        ("grid-stride copy, 2^16 float32, grid 128 x 1024", *timed(copy, check_copy)),
        ("block reduction (shared + shuffles), 2^16, 256 x 256", *timed(reduce, check_reduce)),
        ("same, racecheck=True", *timed(reduce_racecheck, check_reduce, runs=1)),
    ]
    print(
        f"simulator, {platform.processor() or platform.machine()}, one core, "
        f"Python {platform.python_version()}, NumPy {np.__version__}"
    )
    print()
    print("| kernel | first run (s) | warm run (s) |")
    print("|---|---|---|")
    for name, first, warm in rows:
        print(f"| {name} | {first:.2f} | {warm:.2f} |")


if __name__ == "__main__":
    main()
