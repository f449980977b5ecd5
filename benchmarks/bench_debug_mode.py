"""Debug mode's cost (issue 10): the bandwidth benchmark, JIT normal build vs debug build.

Run: PYTHONPATH=. python benchmarks/bench_debug_mode.py
A grid-stride copy and squared_diff over 2^26 float32, each built normally and with
``debug=True`` (every access bounds-checked, -lineinfo); device time per launch (each
rep queued behind a spin kernel, see common.time_gpu_ms), bandwidth counting bytes read
plus written, and the slowdown. Prints a markdown table.
"""

from __future__ import annotations

import numpy as np

import jitkern
from common import device_label, markdown_table, time_gpu_ms, today
from jitkern import jit
from jitkern.runtime import driver

N = 1 << 26


def grid_stride_copy(x, y, n):
    tid = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    ntid = jit.gridDim.x * jit.blockDim.x
    for i in range(tid, n, ntid):
        y[i] = x[i]


def squared_diff(x, y, z, n):
    tid = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    ntid = jit.gridDim.x * jit.blockDim.x
    for i in range(tid, n, ntid):
        d = x[i] - y[i]
        z[i] = d * d


def main() -> None:
    rng = np.random.default_rng(0)
    x = jitkern.asarray(rng.standard_normal(N, dtype=np.float32))
    y = jitkern.asarray(rng.standard_normal(N, dtype=np.float32))
    z = jitkern.empty(N, np.float32)
    n = np.int32(N)
    sms = driver.device_attribute(driver.current_device_id(), "multiprocessor_count")
    grid, block = sms * 8, 256
    cases = [
        ("grid-stride copy", grid_stride_copy, (x, z, n), 2),
        ("squared_diff", squared_diff, (x, y, z, n), 3),
    ]
    rows = []
    for name, func, args, arrays in cases:
        normal = jitkern.rawkernel()(func)
        debug = jitkern.rawkernel(debug=True)(func)
        ms = {}
        for label, k in (("normal", normal), ("debug", debug)):
            k[grid, block](*args)
            jitkern.Device().synchronize()  # (raises if a debug check failed)
            ms[label] = time_gpu_ms(lambda k=k: k[grid, block](*args), reps=30)
        expect = np.asarray(x.get())
        if name == "squared_diff":
            expect = (expect - y.get()) ** 2
        assert np.array_equal(z.get(), expect), "debug build gave wrong results"
        gbs = {k: arrays * 4 * N / (v * 1e-3) / 1e9 for k, v in ms.items()}
        rows.append(
            [
                name,
                ms["normal"] * 1e3,
                gbs["normal"],
                ms["debug"] * 1e3,
                gbs["debug"],
                f"{ms['debug'] / ms['normal']:.3f}x",
            ]
        )
    print(
        f"### Debug mode cost, {device_label()}, {today()}, 2^26 float32, grid {grid} x {block}\n"
    )
    print(
        markdown_table(
            ["kernel", "normal us", "normal GB/s", "debug us", "debug GB/s", "debug / normal"], rows
        )
    )


if __name__ == "__main__":
    from needs import require_gpu  # (benchmarks/ is on sys.path: the script's folder)

    require_gpu(__file__)
    main()
