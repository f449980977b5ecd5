"""Probe of the full reduction's launch shape (issue 11): which block size, number of
resident waves and unroll reach ``cupy.sum``'s CUB figure in the same process.

    PYTHONPATH=. python benchmarks/probe_reduction.py [--quick]

Each configuration builds fresh ReductionKernels (block size and split count are read
when a call layout is first seen; the unroll is part of the generated source) and times
sum and l2norm over 2^28 float32 and 2^27 float64 behind a spin kernel (device time),
as bench_kernels.py does. Every result is checked against a float64 NumPy sum and for
identical bits on a second call. The last lines are a table sorted by the float32 sum.
"""

from __future__ import annotations

import sys

import numpy as np
from bench_kernels import L2, SUM, copy_gbs, device_ms
from common import device_label, markdown_table, today, try_import

import jitkern
from jitkern.compiler.strings import reduction as codegen
from jitkern.kernels import reduction

LAST_GRID = [0]


def configure(block: int, waves: float, unroll: int, inter: bool):
    reduction._ROW_BLOCK = block
    codegen.ROW_UNROLL = unroll
    codegen.ROW_INTERLEAVE = inter
    original = reduction._Launch.__dict__.get("_orig_resident")
    if original is None:
        original = reduction._Launch._resident_blocks
        reduction._Launch._orig_resident = original

    def resident(self, device_id, _o=original, _w=waves):
        LAST_GRID[0] = max(1, round(_o(self, device_id) * _w))
        return LAST_GRID[0]

    reduction._Launch._resident_blocks = resident


def main(argv) -> None:
    quick = "--quick" in argv
    reps = 7 if quick else 15
    n = 1 << (24 if quick else 28)
    rng = np.random.default_rng(7)
    copy = copy_gbs(4 * n, reps)
    cp = try_import("cupy")
    data = {}
    for dt in (np.float32, np.float64):
        count = n if dt == np.float32 else n // 2
        host = rng.standard_normal(count).astype(dt)
        data[dt] = (host, jitkern.asarray(host), cp.asarray(host) if cp else None)
    print(f"# Full-reduction probe, {device_label()}, {today()}; copy {copy:.0f} GB/s\n")
    rows = []
    if cp is not None:
        ref = [
            f"{100 * h.nbytes / (device_ms(lambda c=c: cp.sum(c), reps)[0] * 1e-3) / 1e9 / copy:.1f}%"
            for h, _x, c in data.values()
        ]
        rows.append(["cupy.sum (CUB)", ref[0], "", ref[1], "", "reference"])
    configs = [
        (256, 1, 4, False),
        (256, 2, 4, False),
        (256, 4, 4, False),
        (256, 8, 4, False),
        (256, 1, 8, False),
        (512, 1, 4, False),
        (512, 2, 4, False),
        (256, 1, 4, True),
        (256, 2, 4, True),
        (256, 4, 4, True),
        (256, 2, 8, True),
        (512, 1, 4, True),
        (1024, 1, 4, True),
    ]
    if quick:
        configs = configs[:3]
    odd = rng.standard_normal(1_000_003)
    for block, waves, unroll, inter in configs:
        configure(block, waves, unroll, inter)
        cells, notes = [], []
        for host, x, _c in data.values():
            ksum, l2 = jitkern.ReductionKernel(*SUM), jitkern.ReductionKernel(*L2)
            for k in (ksum, l2):
                dev, _single = device_ms(lambda k=k, x=x: k(x), reps)
                cells.append(f"{100 * host.nbytes / (dev * 1e-3) / 1e9 / copy:.1f}%")
            got = ksum(x).get()
            want = np.sum(host, dtype=np.float64)
            same = bool(got.tobytes() == ksum(x).get().tobytes())
            notes.append(
                f"rel {abs(float(got) - want) / abs(want):.0e}{'' if same else ' BITS DIFFER'}"
            )
            notes.append(f"grid {LAST_GRID[0]}")
            small = odd.astype(host.dtype)
            got = float(ksum(jitkern.asarray(small)).get())
            want = float(np.sum(small, dtype=np.float64))
            notes.append(f"odd size rel {abs(got - want) / abs(want):.0e}")
        name = f"block {block}, {waves} wave(s), unroll {unroll}" + (
            ", interleaved" if inter else ""
        )
        rows.append([name, *cells, "; ".join(notes)])
        print(" | ".join(rows[-1]), flush=True)
    print()
    print(
        markdown_table(
            ["config", "f32 sum", "f32 l2", "f64 sum", "f64 l2", "checks"],
            rows,
        )
    )


if __name__ == "__main__":
    from needs import require_gpu  # (benchmarks/ is on sys.path: the script's folder)

    require_gpu(__file__)
    sys.path.insert(0, "benchmarks")
    main(sys.argv[1:])
