"""Run every benchmark in this folder, one process each, and collect their tables.

    PYTHONPATH=. python benchmarks/run_all.py [output.md]

Each bench_*.py prints markdown; this script concatenates them under a header
naming the GPU and the date, ready to paste into docs/performance.md.
"""

from __future__ import annotations

import glob
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def main() -> int:
    out_path = sys.argv[1] if len(sys.argv) > 1 else None
    sys.path.insert(0, HERE)
    from common import device_label, today

    parts = [f"# Benchmarks on {device_label()}, {today()}\n"]
    failed = 0
    for script in sorted(glob.glob(os.path.join(HERE, "bench_*.py"))):
        name = os.path.basename(script)
        t0 = time.time()
        proc = subprocess.run([sys.executable, script], capture_output=True, text=True,
                              env=dict(os.environ, PYTHONUNBUFFERED="1"))
        took = time.time() - t0
        print(f"{name}: exit {proc.returncode} in {took:.0f} s", flush=True)
        parts.append(f"\n<!-- {name} -->\n{proc.stdout}")
        if proc.returncode != 0:
            failed += 1
            parts.append(f"\n{name} FAILED:\n```\n{proc.stderr[-3000:]}\n```\n")
    text = "\n".join(parts)
    print(text)
    if out_path:
        with open(out_path, "w") as f:
            f.write(text)
    return 1 if failed else 0


if __name__ == "__main__":
    from needs import require_gpu  # (benchmarks/ is on sys.path: the script's folder)

    require_gpu(__file__)
    sys.exit(main())
