"""The simulator's speed (issues 10 and 19): JIT kernels run on one CPU core, no GPU needed.

Run: PYTHONPATH=. python benchmarks/bench_simulate.py [--quick | --fuse | --strings]
Runs issue 19's workloads twice in one process, on the vectorised path (each statement
for a batch of blocks at once, as NumPy array operations) and on the per-thread
scheduler (every thread a Python call), checks every result against NumPy, and prints a
markdown table (best of 5 runs after one that generates the code; the per-thread
scheduler one run). Goals (issue 19): the README's first kernel <= 0.2 s, the block
reduction <= 0.5 s, the grid-stride copy (two launches) <= 0.5 s, the transpose and the
histogram <= 0.05 s each. ``--quick`` skips the per-thread runs (they take a minute).

Then the string kernels at 10^7 elements (issue 26): ElementwiseKernels (a one-line float64
one, a complex128 one, a multi-statement one with a branch, a loop and C's integer division)
and ReductionKernels (a float64 L2 norm, an int32 row-wise max), each called with NumPy
arrays (``kernel.simulate``) and on a simulated device (``jitkern.simulated_device()``),
beside the same computation written in NumPy; goal: at most 1 s each. Every result is
checked against NumPy's float64.

Then the ``random`` row (issue 26): ``jitkern.random.randn(10**7)`` simulated, on a
simulated device and with host arrays (``JITKERN_SIMULATE=1``'s), beside NumPy's
``numpy.random.randn(10**7)``; goal: at most 2x NumPy's. Its first values are checked bit for
bit against the simulated Philox kernel's.

``--strings`` runs only those two tables (the string kernels and ``random``).

``--fuse`` times ``jitkern.fuse`` functions in the simulator instead (``fused.simulate``:
the plan's kernels on the vectorised path): the first call (tracing, translating and
generating the code) and the best of 5 calls after it, each result checked against NumPy.
"""

from __future__ import annotations

import platform
import sys
import time

import numpy as np

import jitkern
from jitkern import jit
from jitkern.sim import vector

FULL = 0xFFFFFFFF
TILE = 32
BINS = 256


@jit.rawkernel()
def squared_diff(x, y, z, n):  # the README's first kernel
    i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    if i < n:
        z[i] = (x[i] - y[i]) ** 2


@jitkern.rawkernel()
def elementwise_copy(x, y, size):  # docs/jit.md's first kernel
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


@jitkern.rawkernel()
def transpose(src, dst, n):
    tile = jit.shared_memory(np.float32, TILE * (TILE + 1))  # padded: no bank conflicts
    x = jit.blockIdx.x * TILE + jit.threadIdx.x
    y0 = jit.blockIdx.y * TILE
    for j in range(jit.threadIdx.y, TILE, jit.blockDim.y):
        if x < n and y0 + j < n:
            tile[j * (TILE + 1) + jit.threadIdx.x] = src[(y0 + j) * n + x]
    jit.syncthreads()
    x = jit.blockIdx.y * TILE + jit.threadIdx.x
    y0 = jit.blockIdx.x * TILE
    for j in range(jit.threadIdx.y, TILE, jit.blockDim.y):
        if x < n and y0 + j < n:
            dst[(y0 + j) * n + x] = tile[jit.threadIdx.x * (TILE + 1) + j]


@jitkern.rawkernel()
def histogram(data, bins, n):  # examples/jit_histogram.py's kernel
    local = jit.shared_memory(np.uint32, BINS)
    for b in range(jit.threadIdx.x, BINS, jit.blockDim.x):
        local[b] = 0
    jit.syncthreads()
    for i in range(jit.grid(1), n, jit.gridsize(1)):
        jit.atomic_add(local, data[i], 1)
    jit.syncthreads()
    for b in range(jit.threadIdx.x, BINS, jit.blockDim.x):
        if local[b] > 0:
            jit.atomic_add(bins, b, local[b])


def workloads(rng):
    """(name, goal in s, kernel, run, check) per row of issue 19's table."""
    n1 = 1 << 20
    x1, y1 = rng.random(n1, np.float32), rng.random(n1, np.float32)
    z1 = np.full(n1, np.nan, np.float32)

    n2 = 10**6
    x2 = rng.standard_normal(n2).astype(np.float32)
    out2 = np.zeros(1, np.float32)

    n3 = 1 << 22
    x3 = rng.standard_normal(n3).astype(np.float32)
    y3 = np.full(n3, np.nan, np.float32)

    n4 = 256
    a4 = rng.random((n4, n4), np.float32)
    t4 = np.full((n4, n4), np.nan, np.float32)

    n5 = 10**5
    h5 = rng.integers(0, BINS, n5, dtype=np.uint8)
    bins5 = np.zeros(BINS, np.uint32)

    def reduce():
        out2[0] = 0
        block_sum.simulate[(n2 + 255) // 256, 256](x2, out2, n2)

    def hist():
        bins5[:] = 0
        histogram.simulate[8, 256](h5, bins5, n5)

    def copy_twice():
        elementwise_copy.simulate((128,), (1024,), (x3, y3, np.uint32(n3)))
        elementwise_copy.simulate[128, 1024](x3, y3, np.uint32(n3))

    return [
        ("README's first kernel, 2^20 float32, [4096, 256]", 0.2, squared_diff,
         lambda: squared_diff.simulate[(n1 + 255) // 256, 256](x1, y1, z1, np.int32(n1)),
         lambda: np.array_equal(z1, (x1 - y1) * (x1 - y1))),
        ("block reduction (shared + shuffles), 10^6 float32, 256 threads", 0.5, block_sum,
         reduce,
         lambda: abs(out2[0] - x2.astype(np.float64).sum()) <= 1e-4 * np.abs(x2).sum()),
        ("grid-stride copy, 2^22 float32, [128, 1024], two launches", 0.5, elementwise_copy,
         copy_twice, lambda: np.array_equal(y3, x3)),
        ("256x256 tiled transpose, [(8, 8), (32, 8)]", 0.05, transpose,
         lambda: transpose.simulate[(8, 8), (TILE, 8)](a4.reshape(-1), t4.reshape(-1), n4),
         lambda: np.array_equal(t4, a4.T)),
        ("histogram, 10^5 values, 256 shared bins, [8, 256]", 0.05, histogram, hist,
         lambda: np.array_equal(bins5, np.bincount(h5, minlength=BINS))),
    ]


@jitkern.fuse()
def fused_squared_diff(x, y):
    return (x - y) * (x - y)


@jitkern.fuse()
def fused_magnitude(x, y):
    return np.sqrt(x * x + y * y) * 0.5


@jitkern.fuse()
def fused_row_dot(x, y):
    return np.sum(x * y, axis=-1)


@jitkern.fuse()
def fused_centered(x):
    return x - x.mean(axis=1, keepdims=True)


def fuse_workloads(rng):
    """(name, fused function, arguments, NumPy's float64 reference, tolerance) per row."""
    n = 1 << 20
    x32, y32 = rng.random(n, np.float32), rng.random(n, np.float32)
    x64, y64 = x32.astype(np.float64), y32.astype(np.float64)
    m32, w32 = rng.random((1024, 1024), np.float32), rng.random((1024, 1024), np.float32)
    m64 = m32.astype(np.float64)
    return [
        ("elementwise (x - y)**2, 2^20 float32", fused_squared_diff, (x32, y32),
         (x32 - y32) * (x32 - y32), 0),
        ("elementwise sqrt(x*x + y*y) * 0.5, 2^20 float64", fused_magnitude, (x64, y64),
         np.sqrt(x64 * x64 + y64 * y64) * 0.5, 1e-15),
        ("reduction sum(x * y, axis=-1), 1024x1024 float32", fused_row_dot, (m32, w32),
         np.sum(m64 * w32, axis=-1), 1e-5),
        ("two stages x - x.mean(axis=1), 1024x1024 float64", fused_centered, (m64,),
         m64 - m64.mean(axis=1, keepdims=True), 1e-13),
    ]


def fuse_main() -> None:
    rng = np.random.default_rng()
    print(f"fused functions in the simulator, {platform.processor() or platform.machine()}, "
          f"one core, Python {platform.python_version()}, NumPy {np.__version__}")
    print()
    print("| workload | first call (s) | later calls (s) |")
    print("|---|---|---|")
    for name, fused, args, want, rtol in fuse_workloads(rng):
        t0 = time.perf_counter()
        got = fused.simulate(*args)
        first = time.perf_counter() - t0
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * np.abs(want).max())
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            fused.simulate(*args)
            times.append(time.perf_counter() - t0)
        print(f"| {name} | {first:.3f} | {min(times):.3f} |")


def timed(run, check, runs: int) -> float:
    run()  # generates the Python (not counted)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    if not check():
        raise SystemExit("a simulated result differs from NumPy's")
    return min(times)


def random_rows(runs: int = 5) -> list:
    """(name, seconds, NumPy's seconds) of ``randn(10**7)`` simulated, all threads and one."""
    from jitkern.compat import philox
    from jitkern.config import settings

    n = 10**7
    numpy_time = min(_once(lambda: np.random.randn(n)) for _ in range(runs))
    rows = []
    for name, threads in (("", philox.MAX_THREADS), (", one thread", 1)):
        saved, philox.MAX_THREADS = philox.MAX_THREADS, threads
        try:
            with jitkern.simulated_device():
                _check_random_stream()
                on_device = min(_once(lambda: jitkern.random.randn(n)) for _ in range(runs))
            saved_simulate, settings.simulate = settings.simulate, True
            try:
                host = min(_once(lambda: jitkern.random.randn(n)) for _ in range(runs))
            finally:
                settings.simulate = saved_simulate
        finally:
            philox.MAX_THREADS = saved
        rows.append((f"random: randn(10**7) float64, simulated device{name}", on_device,
                     numpy_time))
        rows.append((f"random: randn(10**7) float64, host arrays{name}", host, numpy_time))
    return rows


def _once(run) -> float:
    t0 = time.perf_counter()
    run()
    return time.perf_counter() - t0


def _check_random_stream() -> None:
    """The draw is the simulated Philox kernel's, bit for bit (its first 4099 values)."""
    from jitkern.compat import philox

    jitkern.random.seed(20261128)
    got = jitkern.random.randn(4099).get()
    want = np.full(4099, np.nan)
    nblocks = philox.blocks_for("normal", want.dtype, want.size)
    philox.KERNELS["normal"].simulate[philox.launch_shape(nblocks)](
        *philox.launch_args("normal", want, want.size, 20261128, 0, 0.0, 1.0))
    if got.tobytes() != want.tobytes():
        raise SystemExit("jitkern.random differs from the simulated Philox kernel")


MULTI = """
double t = x * y;
if (t > 0.25) { t = t - 1.0; } else { t = t * 2.0; }
for (int k = 0; k < 3; k++) { t = t * 0.5 + x; }
z = sqrt(fabs(t)) + (double)(n / d) + (double)(n % d);
"""


def _multi_numpy(x, y, n, d):
    t = x * y
    t = np.where(t > 0.25, t - 1.0, t * 2.0)
    for _ in range(3):
        t = t * 0.5 + x
    return np.sqrt(np.abs(t)) + np.trunc(n / d) + np.fmod(n, d)


def string_workloads(rng):
    """(name, kernel, arguments, call keywords, NumPy's computation, tolerance) per row."""
    n = 10**7
    x, y = rng.random(n), rng.random(n)
    a = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    ni = rng.integers(-1000, 1000, n, dtype=np.int32)
    di = (rng.integers(1, 30, n, dtype=np.int32)
          * rng.choice(np.array([-1, 1], np.int32), n))
    m = rng.integers(-(2**30), 2**30, (1000, n // 1000), dtype=np.int32)
    squared_diff_k = jitkern.ElementwiseKernel(
        "float64 x, float64 y", "float64 z", "z = (x - y) * (x - y)", "squared_diff")
    complex_k = jitkern.ElementwiseKernel(
        "complex128 a, float64 s", "complex128 c", "c = a * a * s + exp(a)", "complex_poly")
    multi_k = jitkern.ElementwiseKernel(
        "float64 x, float64 y, int32 n, int32 d", "float64 z", MULTI, "multi_statement")
    l2_k = jitkern.ReductionKernel(
        "T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")
    max_k = jitkern.ReductionKernel(
        "T x", "T y", "x", "max(a, b)", "y = a", "", "row_max")
    return [
        ("elementwise (x - y)**2, 10^7 float64", squared_diff_k, (x, y), {},
         lambda: (x - y) * (x - y), 0),
        ("elementwise complex a*a*s + exp(a), 10^7 complex128", complex_k, (a, 2.0), {},
         lambda: a * a * 2.0 + np.exp(a), 1e-13),
        ("elementwise multi-statement (if, for, C's / and %), 10^7 float64", multi_k,
         (x, y, ni, di), {}, lambda: _multi_numpy(x, y, ni, di), 1e-13),
        ("reduction sqrt(sum(x*x)), 10^7 float64", l2_k, (x,), {},
         lambda: np.sqrt(np.sum(x * x)), 1e-12),
        ("reduction max(x, axis=1), 1000x10^4 int32", max_k, (m,), {"axis": 1},
         lambda: m.max(axis=1), 0),
    ]


def string_rows(runs: int = 5) -> list:
    """(name, where, (seconds, CPU seconds), NumPy's (seconds, CPU seconds)) of each string
    kernel row, best of ``runs`` after a first call (which translates the C). The CPU
    seconds are the process's: on a machine other work shares, they show what the wall
    clock would on an idle one (the simulation runs on one thread)."""
    rng = np.random.default_rng()
    rows = []
    for name, kernel, args, kw, numpy_run, rtol in string_workloads(rng):
        want = numpy_run()
        numpy_time = _best(numpy_run, runs)
        _check(kernel.simulate(*args, **kw), want, rtol, name)
        host = _best(lambda: kernel.simulate(*args, **kw), runs)
        rows.append((name, "NumPy arrays (kernel.simulate)", host, numpy_time))
        with jitkern.simulated_device():
            on_device = [jitkern.asarray(v) if isinstance(v, np.ndarray) else v for v in args]
            _check(kernel(*on_device, **kw).get(), want, rtol, name)
            seconds = _best(lambda: kernel(*on_device, **kw), runs)
        rows.append((name, "simulated device", seconds, numpy_time))
    return rows


def _best(run, runs: int) -> tuple:
    """(the best wall-clock seconds, the best process CPU seconds) of ``runs`` calls."""
    walls, cpus = [], []
    for _ in range(runs):
        t0, c0 = time.perf_counter(), time.process_time()
        run()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return min(walls), min(cpus)


def _check(got, want, rtol: float, name: str) -> None:
    got = np.asarray(got)
    if rtol == 0:
        ok = np.array_equal(got, want)
    else:
        ok = np.allclose(got, want, rtol=rtol, atol=rtol * float(np.abs(want).max()))
    if not ok:
        raise SystemExit(f"{name}: the simulated result differs from NumPy's")


def strings_main() -> None:
    print(f"string kernels simulated, {platform.processor() or platform.machine()}, "
          f"Python {platform.python_version()}, NumPy {np.__version__}")
    print()
    print("| workload | arrays | goal (s) | simulated (s) | NumPy (s) | ratio "
          "| simulated, CPU (s) | NumPy, CPU (s) | ratio, CPU |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, where, (wall, cpu), (numpy_wall, numpy_cpu) in string_rows():
        print(f"| {name} | {where} | 1 | {wall:.3f} | {numpy_wall:.3f} | "
              f"{wall / numpy_wall:.1f}x | {cpu:.3f} | {numpy_cpu:.3f} | "
              f"{cpu / max(numpy_cpu, 1e-3):.1f}x |")
    print()
    random_main()


def random_main() -> None:
    print("| workload | goal | simulated (s) | NumPy's randn (s) | ratio |")
    print("|---|---|---|---|---|")
    for name, seconds, numpy_time in random_rows():
        print(f"| {name} | <= 2x NumPy's | {seconds:.3f} | {numpy_time:.3f} | "
              f"{seconds / numpy_time:.2f}x |")


def main(argv) -> None:
    if "--fuse" in argv:
        fuse_main()
        return
    if "--strings" in argv:
        strings_main()
        return
    quick = "--quick" in argv
    rng = np.random.default_rng()
    rows = []
    for name, goal, kernel, run, check in workloads(rng):
        vector.MODE = "vector"
        fast = timed(run, check, 5)
        path = kernel.simulate.last_path
        vector.MODE = "threads"
        slow = None if quick else timed(run, check, 1)
        vector.MODE = "auto"
        rows.append((name, goal, fast, path, slow))
    print(f"simulator, {platform.processor() or platform.machine()}, one core, "
          f"Python {platform.python_version()}, NumPy {np.__version__}")
    print()
    print("| workload | goal (s) | vectorised (s) | per-thread scheduler (s) | speed-up |")
    print("|---|---|---|---|---|")
    for name, goal, fast, path, slow in rows:
        assert path == "vector", name
        per_thread = "-" if slow is None else f"{slow:.2f}"
        ratio = "-" if slow is None else f"{slow / fast:.0f}x"
        print(f"| {name} | {goal} | {fast:.3f} | {per_thread} | {ratio} |")
    print()
    strings_main()


if __name__ == "__main__":
    main(sys.argv[1:])
