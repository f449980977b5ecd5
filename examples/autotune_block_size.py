"""Autotuning: the best block size (and items per thread) depends on the problem size.

Run: python examples/autotune_block_size.py [--simulate]

The kernel applies a compute-heavy map to every element, ITEMS consecutive elements per
thread (a compile-time constant: the factory builds one kernel per value). With few
elements, large blocks leave most streaming multiprocessors idle (16 384 elements in blocks
of 1024 threads is 16 blocks on a GPU with 132 SMs), so small blocks win; with many, larger
blocks and several items per thread keep every SM full and amortise the index arithmetic.
``jitkern.autotune`` times every candidate once per size bucket (sizes rounded up to a power
of two), keeps the fastest in the disk cache under the GPU's name and compute capability,
and from then on launches it directly: run the example twice and the second run times
nothing (its report says "read from the disk cache").

--simulate (or JITKERN_SIMULATE=1) runs the same program on jitkern's simulated device, on
small arrays and fewer candidates (no GPU needed; examples/README.md). The simulator runs
Python per thread, so its timings, and therefore its choices, say nothing about a GPU: they
only show the mechanism (candidates tried, a failing one skipped with its reason, one
choice per size bucket, results checked against NumPy).
"""

import sys

import numpy as np

import jitkern
from gpu_or_simulated import main as example_main, simulated
from jitkern import Config, jit


def make_kernel(ITEMS):
    """One kernel per ITEMS: y[i] = the map applied `iters` times to x[i]."""

    @jitkern.rawkernel()
    def iterate_map(x, y, n, iters):
        base = (jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x) * ITEMS
        for k in range(ITEMS):
            i = base + k
            if i < n:
                v = x[i]
                for _ in range(iters):
                    v = v * v * np.float32(0.5) + np.float32(0.25)
                y[i] = v

    return iterate_map


def grid(cfg, x, y, n, iters):
    """Enough blocks of cfg.block threads, cfg.ITEMS elements each, to cover n."""
    per_block = cfg.block * cfg.ITEMS
    return (int(n) + per_block - 1) // per_block


# block 2048 exceeds every GPU's 1024 threads per block: the tuner skips it and says why.
CONFIGS = [Config(block=b, ITEMS=i) for b in (32, 64, 128, 256, 512, 1024) for i in (1, 4)]
CONFIGS.append(Config(block=2048, ITEMS=1))


def reference(x: np.ndarray, iters: int) -> np.ndarray:
    v = x.copy()
    for _ in range(iters):
        v = v * v * np.float32(0.5) + np.float32(0.25)
    return v


def run_once(tuned, n: int, iters: int, rng):
    x = rng.uniform(-1, 1, n).astype(np.float32)
    dx, y = jitkern.asarray(x), jitkern.full(n, np.nan, np.float32)
    tuned(dx, y, np.int32(n), np.int32(iters))
    np.testing.assert_allclose(y.get(), reference(x, iters), rtol=1e-5, atol=1e-6)
    return tuned.config_for(dx, y, np.int32(n), np.int32(iters))


def main(argv=None) -> int:
    return example_main(run, sys.argv[1:] if argv is None else argv, "autotune_block_size.py")


def run() -> None:
    if simulated():  # small sizes and fewer candidates: the simulator runs Python per thread
        sizes, iters = (96, 1500), 3
        configs = [c for c in CONFIGS if c.block <= 256 or c.block == 2048]
    else:
        sizes, iters = (1 << 14, 1 << 24), 64
        configs = CONFIGS
    tuned = jitkern.autotune(make_kernel, configs=configs, grid=grid)
    rng = np.random.default_rng()
    chosen = {n: run_once(tuned, n, iters, rng) for n in sizes}
    print(tuned.autotune_report())
    print()
    for n, cfg in chosen.items():
        print(f"n = {n:>10}: {cfg.describe()}")
    same = len(set(chosen.values())) == 1
    print("the two sizes chose", "the same configuration" if same else "different configurations")
    if simulated():
        print("(simulator: timings are CPU wall-clock of Python per thread, meaningless for a GPU)")


if __name__ == "__main__":
    sys.exit(main())
