"""Autotuning (issue 20, part 4): each candidate's time at two problem sizes, the choice,
the cost of the first (tuning) call, and the per-call cost of a tuned call against launching
the chosen kernel directly.

Run: PYTHONPATH=. python benchmarks/bench_autotune.py
The kernel and candidates are examples/autotune_block_size.py's. Tuning uses a fresh cache
folder (deleted afterwards), so every candidate is timed here, with CUDA events on the
stream (3 warm-up launches, the median of 25).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

import numpy as np

import jitkern
from common import device_label, interleaved, markdown_table, today
from jitkern.config import settings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
from autotune_block_size import CONFIGS, grid, make_kernel  # noqa: E402

SIZES = (1 << 14, 1 << 24)
ITERS = 64


def tune(tuned, n: int):
    x = jitkern.asarray(np.random.default_rng().uniform(-1, 1, n).astype(np.float32))
    y = jitkern.empty(n, np.float32)
    args = (x, y, np.int32(n), np.int32(ITERS))
    t0 = time.perf_counter()
    tuned(*args)
    jitkern.synchronize()
    return args, time.perf_counter() - t0


def candidate_table(tuned, first_call_s: dict) -> str:
    rows = []
    for t in tuned.tunings.values():
        for i, c in enumerate(t.candidates):
            when = "skipped: " + c.skipped.split(":")[0] if c.skipped else c.ms * 1e3
            rows.append([f"<= {t.bucket}", c.config.describe(), when,
                         "**chosen**" if i == t.chosen else ""])
    table = markdown_table(["size bucket", "candidate", "median us (CUDA events)", ""], rows)
    firsts = ", ".join(f"n={n}: {s:.2f} s" for n, s in first_call_s.items())
    return f"{table}\n\nFirst call (compiles and times every candidate): {firsts}."


def overhead_table(tuned, args) -> str:
    cfg = tuned.config_for(*args)
    kernel = make_kernel(cfg.ITEMS)
    g = grid(cfg, *args)
    small = (args[0], args[1], args[2], np.int32(0))  # launch-bound: no work per element

    def direct():
        kernel(g, cfg.block, small)

    def tuned_call():
        tuned(*small)

    result = interleaved([("direct kernel(grid, block, args)", direct),
                          ("tuned(*args)", tuned_call)])
    rows = [[name, us, ratio] for name, (us, ratio) in result.items()]
    extra = result["tuned(*args)"][0] - result["direct kernel(grid, block, args)"][0]
    return (markdown_table(["call (n=%d, chosen %s)" % (args[2], cfg.describe()),
                            "host us per call", "ratio"], rows)
            + f"\n\nPer-call cost of the tuned call over the direct one: {extra:.2f} us "
            "(the key of the arguments and size bucket, one dict lookup, the grid function).")


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        saved = settings.cache_dir
        settings.cache_dir = folder
        try:
            tuned = jitkern.autotune(make_kernel, configs=CONFIGS, grid=grid)
            runs = {n: tune(tuned, n) for n in SIZES}
            print(f"## Autotuning on {device_label()}, {today()}\n")
            print(candidate_table(tuned, {n: s for n, (_a, s) in runs.items()}))
            print()
            print(overhead_table(tuned, runs[SIZES[0]][0]))
        finally:
            settings.cache_dir = saved


if __name__ == "__main__":
    from needs import require_gpu  # (benchmarks/ is on sys.path: the script's folder)

    require_gpu(__file__)
    main()
