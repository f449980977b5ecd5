"""Allocation and copy figures for jitkern arrays, printed as markdown tables.

    python benchmarks/bench_alloc.py [--n 20000] [--mib 256]

Allocation: ``jitkern.empty(1 << 20, float32)`` dropped at once, in a loop
(host microseconds per iteration, ``time.perf_counter``), next to the bare
driver calls it is built on, ``memory.malloc`` from jitkern's cache and on a stream
jitkern did not create (the driver pool's path) and, where installed, CuPy and PyTorch
doing the same.
Copies: device bandwidth (bytes read + written per second, CUDA events) of the
contiguous, strided and converting copies, and host transfer rates.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from jitkern.arrays import asarray, empty
from jitkern.runtime import driver, memory
from jitkern.runtime.device import Event, synchronize


def per_call_us(fn, n: int, repeat: int = 5) -> float:
    """Best of ``repeat`` runs of ``n`` calls, in microseconds per call."""
    for _ in range(min(n, 1000)):
        fn()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t0) / n)
    return best * 1e6


def alloc_rows(n: int) -> list[tuple[str, float]]:
    nbytes = 4 << 20
    rows = [("jitkern.empty(1 << 20, float32), freed", per_call_us(lambda: empty(1 << 20, np.float32), n))]
    d = driver.drv()
    pool = memory._pool(0)
    alloc, free = d.cuMemAllocFromPoolAsync, d.cuMemFreeAsync

    def bare():
        _err, ptr = alloc(nbytes, pool, 0)
        free(ptr, 0)

    rows.append(("bare cuMemAllocFromPoolAsync + cuMemFreeAsync", per_call_us(bare, n)))
    rows.append(("jitkern.runtime.memory.malloc, freed (a block of jitkern's cache)",
                 per_call_us(lambda: memory.malloc(nbytes, 0, 0), n)))
    # A stream jitkern did not create: no cache, the driver pool's path.
    foreign = int(driver.check(d.cuStreamCreate(1), "cuStreamCreate"))
    rows.append(("jitkern.runtime.memory.malloc, freed, on a foreign stream (driver pool)",
                 per_call_us(lambda: memory.malloc(nbytes, 0, foreign), n)))
    d.cuStreamSynchronize(foreign)
    d.cuStreamDestroy(foreign)
    try:
        import cupy

        cupy.cuda.set_allocator(cupy.cuda.MemoryAsyncPool().malloc)
        rows.append(("cupy.empty(1 << 20, float32) (async pool), freed",
                     per_call_us(lambda: cupy.empty(1 << 20, cupy.float32), n)))
        cupy.cuda.set_allocator(cupy.cuda.MemoryPool().malloc)
        rows.append(("cupy.empty(1 << 20, float32) (default pool), freed",
                     per_call_us(lambda: cupy.empty(1 << 20, cupy.float32), n)))
    except ImportError:
        pass
    try:
        import torch

        rows.append(("torch.empty(1 << 20, float32, cuda), freed",
                     per_call_us(lambda: torch.empty(1 << 20, dtype=torch.float32, device="cuda"), n)))
    except ImportError:
        pass
    return rows


def device_ms(fn, repeat: int = 10) -> float:
    fn()
    synchronize()
    start, end = Event(), Event()
    start.record()
    for _ in range(repeat):
        fn()
    end.record()
    return start.elapsed_time(end) / repeat


def copy_rows(mib: int) -> list[tuple[str, float, float]]:
    n = (mib << 20) // 4
    side = int(n**0.5)
    a = empty(n, np.float32)
    a.fill(1.5)
    sq = a[: side * side].reshape(side, side)
    cases = [
        ("contiguous copy (cuMemcpy)", lambda: a.copy(), 2 * a.nbytes),
        ("strided copy a[::2] (kernel)", lambda: a[::2].copy(), 2 * a.nbytes // 2),
        ("reversed copy a[::-1] (kernel)", lambda: a[::-1].copy(), 2 * a.nbytes),
        ("transposed 2-D copy (kernel)", lambda: sq.T.copy(), 2 * sq.nbytes),
        ("astype float32 -> float16 (kernel)", lambda: a.astype(np.float16), a.nbytes * 3 // 2),
        ("fill 1.5 (cuMemsetD32)", lambda: a.fill(1.5), a.nbytes),
        ("fill of a[::2] (kernel)", lambda: a[::2].fill(2.0), a.nbytes // 2),
    ]
    rows = []
    for name, fn, moved in cases:
        ms = device_ms(fn)
        rows.append((name, ms, moved / ms / 1e6))
    host = np.ones(n, np.float32)
    for name, fn in (("host -> device (asarray, pageable)", lambda: asarray(host)),
                     ("device -> host (get, pageable)", lambda: a.get())):
        fn()
        t0 = time.perf_counter()
        fn()
        ms = (time.perf_counter() - t0) * 1e3
        rows.append((name, ms, host.nbytes / ms / 1e6))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20000, help="allocations per timing run")
    parser.add_argument("--mib", type=int, default=256, help="array size for the copy figures")
    args = parser.parse_args()
    device = driver.device_name(0)
    print(f"## Allocation on {device} ({args.n} iterations, best of 5)\n")
    print("| what | us per iteration |\n| --- | ---: |")
    for name, us in alloc_rows(args.n):
        print(f"| {name} | {us:.2f} |")
    print(f"\n## Copies on {device} ({args.mib} MiB of float32)\n")
    print("| what | ms | GB/s (read + written) |\n| --- | ---: | ---: |")
    for name, ms, gbs in copy_rows(args.mib):
        print(f"| {name} | {ms:.3f} | {gbs:.0f} |")


if __name__ == "__main__":
    from needs import require_gpu  # (benchmarks/ is on sys.path: the script's folder)

    require_gpu(__file__)
    main()
