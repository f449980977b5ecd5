"""jitkern.fuse bandwidth, side by side with a device-to-device copy in the same run.

    python benchmarks/bench_fuse.py [--quick]
    python benchmarks/bench_fuse.py --cpu      # call overhead, driver stubbed, no GPU needed

Effective bandwidth = bytes the fused kernel must move / median time over CUDA events,
as a share of the copy's (bytes read + written). CuPy's fuse where CuPy imports.

``--cpu`` times jitkern's own host work per fused call with the CUDA driver stubbed
(bench_launch.py's stub: launches return at once; kernels still compile, for sm_90): a
function that only reads, one that writes an argument (each call checks that the arguments
share no memory it writes), the same with arguments whose byte spans meet but share no byte
(NumPy's exact test runs), and calls whose arguments share memory (memory order). Run it
with PYTHONPATH at another checkout to compare.
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


@jitkern.fuse()
def add_into(x, y):
    x += y


def cpu_overhead() -> None:
    """Host microseconds per fused call, driver stubbed (see the module doc)."""
    from bench_launch import install_cpu_driver
    from common import interleaved

    install_cpu_driver()
    x, y, z = (jitkern.empty(4096, np.float32) for _ in range(3))
    cases = [
        ("reads only: sqrt(x*x + y*y) * 0.5", lambda: magnitude(x, y)),
        ("writes x: x += y, nothing shared", lambda: add_into(x, y)),
        ("writes x: x += y, spans meet, no shared byte", lambda: add_into(x[::2], x[1::2])),
        ("x += y with y is x (memory order)", lambda: add_into(z, z)),
        ("x += y, y reversed x (memory order, a copy)", lambda: add_into(z[::-1], z)),
    ]
    views = {name: fn for name, fn in cases}  # views made in the loop: their cost counts too
    print(f"jitkern.fuse call overhead, driver stubbed, {today()}, jitkern from "
          f"{jitkern.__file__}")
    print("| call | us per call | of the first |\n|---|---:|---:|")
    for name, (us, ratio) in interleaved(list(views.items()), n=2000).items():
        print(f"| {name} | {us:.2f} | {ratio:.2f} |")


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
    if "--cpu" in sys.argv:
        cpu_overhead()
    else:
        from needs import require_gpu  # (benchmarks/ is on sys.path: the script's folder)

        require_gpu(__file__)
        main()
