"""ElementwiseKernel figures, side by side with a device-to-device copy in the same run.

    python benchmarks/bench_elementwise.py [--quick]

Prints a markdown table: effective bandwidth (bytes each kernel must move / median
time over CUDA events) and its share of the copy's bandwidth; CuPy's figures where
CuPy imports; launch overhead against a bare ``cuLaunchKernel`` with a pre-packed
parameter buffer.
"""

from __future__ import annotations

import ctypes
import sys

import numpy as np

import jitkern
from common import interleaved, time_gpu_ms
from jitkern.runtime import driver

REPS = 30


def time_gpu(fn, reps=REPS, warmup=3) -> float:
    """Median seconds of ``fn()`` on the current stream, timed with CUDA events."""
    return time_gpu_ms(fn, reps, warmup) / 1e3


def copy_seconds(nbytes: int) -> float:
    """Median time of a device-to-device copy of ``nbytes``."""
    src = jitkern.empty((nbytes,), np.uint8)
    dst = jitkern.empty((nbytes,), np.uint8)
    d = driver.drv()
    return time_gpu(lambda: d.cuMemcpyDtoDAsync(dst.data.ptr, src.data.ptr, nbytes, 0))


def cupy_or_none():
    try:
        import cupy

        cupy.cuda.runtime.getDeviceCount()
        return cupy
    except Exception:
        return None


def row(name, nbytes, seconds, copy_bw, note=""):
    bw = nbytes / seconds / 1e9
    return f"| {name} | {seconds * 1e6:9.1f} | {bw:8.1f} | {100 * bw / copy_bw:5.1f}% | {note} |"


SQ = ("float32 x, float32 y", "float32 z", "z = (x - y) * (x - y)", "squared_diff")


def bandwidth_rows(n: int, copy_bw: float, cp) -> list[str]:
    k = jitkern.ElementwiseKernel(*SQ)
    rng = np.random.default_rng(0)
    x = jitkern.asarray(rng.random(n, dtype=np.float32))
    y = jitkern.asarray(rng.random(n, dtype=np.float32))
    z = jitkern.empty((n,), np.float32)
    rows = [
        row(
            "squared_diff, 2^%d float32 contiguous" % int(np.log2(n)),
            12 * n,
            time_gpu(lambda: k(x, y, z)),
            copy_bw,
        )
    ]
    half = n // 2
    zh = jitkern.empty((half,), np.float32)
    rows.append(
        row(
            "squared_diff, x[::2], y[::2]",
            12 * half,
            time_gpu(lambda: k(x[::2], y[::2], zh)),
            copy_bw,
        )
    )
    side = int(np.sqrt(n))
    m = x.reshape(side, side)
    r = y[:side]
    zm = jitkern.empty((side, side), np.float32)
    rows.append(
        row(
            f"squared_diff, ({side},{side}) - row",
            8 * side * side,
            time_gpu(lambda: k(m, r, zm)),
            copy_bw,
        )
    )
    if cp is not None:
        ck = cp.ElementwiseKernel(*SQ)
        cx, cy = cp.asarray(x), cp.asarray(y)
        cz = cp.empty(n, cp.float32)
        rows.append(
            row(
                "CuPy squared_diff, contiguous",
                12 * n,
                time_gpu(lambda: ck(cx, cy, cz)),
                copy_bw,
                "CuPy",
            )
        )
        czh = cp.empty(half, cp.float32)
        rows.append(
            row(
                "CuPy squared_diff, x[::2], y[::2]",
                12 * half,
                time_gpu(lambda: ck(cx[::2], cy[::2], czh)),
                copy_bw,
                "CuPy",
            )
        )
        cm, cr, czm = cx.reshape(side, side), cy[:side], cp.empty((side, side), cp.float32)
        rows.append(
            row(
                f"CuPy squared_diff, ({side},{side}) - row",
                8 * side * side,
                time_gpu(lambda: ck(cm, cr, czm)),
                copy_bw,
                "CuPy",
            )
        )
    return rows


def launch_overhead_rows(calls: int, cp) -> list[str]:
    k = jitkern.ElementwiseKernel(*SQ)
    x = jitkern.asarray(np.ones(1024, np.float32))
    y = jitkern.asarray(np.ones(1024, np.float32))
    z = jitkern.empty((1024,), np.float32)
    k(x, y, z)
    launch = next(iter(k._runners.values())).launch
    handle = launch.fn.handle()
    # A bare cuLaunchKernel of the very same kernel with a pre-packed buffer.
    ptrs = (ctypes.c_uint64 * 3)(x.data.ptr, y.data.ptr, z.data.ptr)
    n = ctypes.c_int32(1024)
    params = (ctypes.c_void_p * 4)(
        *[ctypes.addressof(ptrs) + 8 * i for i in range(3)], ctypes.addressof(n)
    )
    params_ptr = ctypes.addressof(params)
    d = driver.drv()
    (gx, gy, gz), (bx, by, bz) = launch.grid, launch.block

    def bare():
        d.cuLaunchKernel(handle, gx, gy, gz, bx, by, bz, 0, 0, params_ptr, 0)

    cases = [("bare", bare), ("jitkern", lambda: k(x, y, z))]
    if cp is not None:
        ck = cp.ElementwiseKernel(*SQ)
        cx, cy, cz = (
            cp.ones(1024, cp.float32),
            cp.ones(1024, cp.float32),
            cp.empty(1024, cp.float32),
        )
        cases.append(("cupy", lambda: ck(cx, cy, cz)))
    results = interleaved(cases, calls)
    b = results["bare"][0]
    e, e_ratio = results["jitkern"]
    rows = [
        f"| bare cuLaunchKernel (pre-packed) | {b:.2f} us | 1.00x |",
        f"| jitkern ElementwiseKernel, output passed | {e:.2f} us | {e_ratio:.2f}x |",
    ]
    if cp is not None:
        c, c_ratio = results["cupy"]
        rows.append(f"| CuPy ElementwiseKernel, output passed | {c:.2f} us | {c_ratio:.2f}x |")
    return rows


def main(argv) -> None:
    quick = "--quick" in argv
    n = 1 << (24 if quick else 28)
    cp = cupy_or_none()
    copy_bw = 2 * 4 * n / copy_seconds(4 * n) / 1e9
    dev = jitkern.Device()
    print(f"device: {dev.name}; copy of {4 * n >> 20} MiB: {copy_bw:.1f} GB/s (read + write)\n")
    print("| case | time (us) | GB/s | of copy | |")
    print("|---|---:|---:|---:|---|")
    print(f"| device-to-device copy | | {copy_bw:8.1f} | 100.0% | |")
    for line in bandwidth_rows(n, copy_bw, cp):
        print(line)
    print("\n| launch overhead (host time per call) | us | vs bare |")
    print("|---|---:|---:|")
    for line in launch_overhead_rows(2000 if quick else 20000, cp):
        print(line)


if __name__ == "__main__":
    from needs import require_gpu  # (benchmarks/ is on sys.path: the script's folder)

    require_gpu(__file__)
    main(sys.argv[1:])
