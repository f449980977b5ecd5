"""jitkern.fuse bandwidth, side by side with a device-to-device copy in the same run.

    python benchmarks/bench_fuse.py [--quick]

Effective bandwidth = bytes the fused kernel must move / median time over CUDA events,
as a share of the copy's (bytes read + written). CuPy's fuse where CuPy imports.
"""

from __future__ import annotations

import sys

import numpy as np
from bench_elementwise import copy_seconds, cupy_or_none, row, time_gpu
from common import device_label, today

import jitkern


@jitkern.fuse()
def magnitude(x, y):
    return np.sqrt(x * x + y * y) * 0.5


@jitkern.fuse()
def dot(x, y):
    return np.sum(x * y)


def main() -> None:
    n = 1 << (24 if "--quick" in sys.argv else 28)
    rng = np.random.default_rng(0)
    hx = rng.random(n, dtype=np.float32)
    hy = rng.random(n, dtype=np.float32)
    x, y = jitkern.asarray(hx), jitkern.asarray(hy)
    copy_bw = 2 * 4 * n / copy_seconds(4 * n) / 1e9
    print(f"jitkern.fuse, {n} float32 elements, {device_label()}, {today()}")
    print(f"device-to-device copy: {copy_bw:.1f} GB/s\n")
    print("| kernel | us | GB/s | of copy | note |\n|---|---:|---:|---:|---|")
    print(row("fuse sqrt(x*x + y*y) * 0.5", 3 * 4 * n, time_gpu(lambda: magnitude(x, y)), copy_bw))
    print(row("fuse sum(x * y)", 2 * 4 * n, time_gpu(lambda: dot(x, y)), copy_bw))
    got = float(jitkern.asnumpy(dot(x, y)))
    exact = float(np.dot(hx.astype(np.float64), hy.astype(np.float64)))
    print(
        f"\nsum(x * y): {got:.6g}, float64 reference {exact:.6g}, rel err "
        f"{abs(got - exact) / exact:.2e}"
    )
    cp = cupy_or_none()
    try:
        _cupy_rows(cp, hx, hy, n, copy_bw)
    except Exception as exc:  # noqa: BLE001 (CuPy's figures are a comparison only)
        print(f"CuPy fuse: not measured ({type(exc).__name__}: {exc})")


def _cupy_rows(cp, hx, hy, n, copy_bw) -> None:
    if cp is not None:

        def cupy_magnitude(x, y):  # a def: CuPy names its kernel after the function
            return cp.sqrt(x * x + y * y) * 0.5

        def cupy_dot(x, y):
            return cp.sum(x * y)

        cmag, cdot = cp.fuse()(cupy_magnitude), cp.fuse()(cupy_dot)
        cx, cy = cp.asarray(hx), cp.asarray(hy)
        print(
            row(
                "CuPy fuse sqrt(x*x + y*y) * 0.5",
                3 * 4 * n,
                time_gpu(lambda: cmag(cx, cy)),
                copy_bw,
            )
        )
        print(row("CuPy fuse sum(x * y)", 2 * 4 * n, time_gpu(lambda: cdot(cx, cy)), copy_bw))


if __name__ == "__main__":
    from needs import require_gpu  # (benchmarks/ is on sys.path: the script's folder)

    require_gpu(__file__)
    main()
