"""Where a RawKernel's first call goes in a process whose disk cache is warm.

    PYTHONPATH=. python benchmarks/probe_first_call.py

Runs the first call once in a child to fill a temporary cache, then profiles the first
call of a second child (cProfile, top entries by cumulative time).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

from common import FOUR_ARG_SOURCE

CHILD = r"""
import cProfile, pstats, sys, time, io
import numpy as np
import jitkern
x = jitkern.asarray(np.ones(32, np.float32)); y = jitkern.empty_like(x); z = jitkern.empty_like(x)
jitkern.synchronize()
k = jitkern.RawKernel(sys.argv[1], "four_args")
prof = cProfile.Profile()
t0 = time.perf_counter()
prof.enable()
k((1,), (32,), (x, y, z, np.float32(2.0)))
jitkern.synchronize()
prof.disable()
t1 = time.perf_counter()
print(f"first call {1e3 * (t1 - t0):.2f} ms (profiled)")
if sys.argv[2] == "show":
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(45)
    print(out.getvalue())
"""


def main() -> None:
    with tempfile.TemporaryDirectory() as cache_dir:
        env = dict(os.environ, JITKERN_CACHE_DIR=cache_dir)
        env["PYTHONPATH"] = os.pathsep.join([os.getcwd(), env.get("PYTHONPATH", "")])
        for mode in ("fill", "quiet", "show"):
            proc = subprocess.run([sys.executable, "-c", CHILD, FOUR_ARG_SOURCE, mode], env=env,
                                  capture_output=True, text=True, check=True)
            print(f"## {mode}\n{proc.stdout}")


if __name__ == "__main__":
    from needs import require_gpu  # (benchmarks/ is on sys.path: the script's folder)

    require_gpu(__file__)
    main()
