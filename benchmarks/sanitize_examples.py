"""Run compute-sanitizer (memcheck and racecheck) over every example and a RawKernel launch.

    python benchmarks/sanitize_examples.py [--tools memcheck,racecheck] [--jobs 4]
                                           [--timeout 120] [--out report.txt]

Prints one line per (program, tool) with the error count that compute-sanitizer reports
(API errors such as CUDA_ERROR_INVALID_VALUE included), and exits non-zero if any run
reported an error, failed, or timed out. Needs a GPU and compute-sanitizer (PATH,
CUDA_HOME/bin or /usr/local/cuda/bin).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A small RawKernel launch, checked against NumPy: the path every user's program takes.
RAW_LAUNCH = r'''
import numpy as np
import jitkern

code = r"""
extern "C" __global__ void axpy(const float* x, float* y, float a, long long n) {
    long long i = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""
k = jitkern.RawKernel(code, "axpy")
n = 1000
rng = np.random.default_rng()
x, y = rng.standard_normal((2, n)).astype(np.float32)
dx, dy = jitkern.asarray(x), jitkern.asarray(y)
k(((n + 127) // 128,), (128,), (dx, dy, np.float32(2.0), n))
k(((n + 127) // 128,), (128,), (dx, dy, np.float32(2.0), n))  # the generated launcher
assert np.allclose(dy.get(), 4 * x + y, rtol=1e-6), "wrong result"
mod = jitkern.RawModule(code=code)
mod.get_function("axpy")((8,), (128,), (dx, dy, np.float32(0.0), n))
print("raw launch: OK")
'''

_SUMMARY = {
    "memcheck": re.compile(r"ERROR SUMMARY: (\d+) error"),
    "racecheck": re.compile(r"RACECHECK SUMMARY: \d+ hazards? displayed \((\d+) error"),
}
_ERROR_SUMMARY = re.compile(r"ERROR SUMMARY: (\d+) error")
_API_ERROR = re.compile(r"Program hit (CUDA_ERROR_\w+).*?API call to (\w+)")


def find_sanitizer() -> str | None:
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home:
            path = os.path.join(home, "bin", "compute-sanitizer")
            if os.path.isfile(path):
                return path
    return None


def programs(workdir: str) -> list[tuple[str, list[str]]]:
    """(name, argv) of every example and of the RawKernel launch."""
    out = []
    for path in sorted(glob.glob(os.path.join(ROOT, "examples", "*.py"))):
        argv = [sys.executable, path]
        if "mandelbrot" in path:
            argv.append(os.path.join(workdir, "mandelbrot.png"))
        out.append((os.path.relpath(path, ROOT), argv))
    raw = os.path.join(workdir, "raw_launch.py")
    with open(raw, "w") as f:
        f.write(RAW_LAUNCH)
    out.append(("RawKernel launch", [sys.executable, raw]))
    return out


def run_one(sanitizer: str, tool: str, name: str, argv: list[str], workdir: str,
            timeout: float) -> dict:
    cmd = [sanitizer, "--tool", tool, "--print-limit", "20", *argv]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    try:
        proc = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True,
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"name": name, "tool": tool, "errors": None, "status": f"timeout ({timeout:.0f} s)",
                "output": ""}
    output = proc.stdout + proc.stderr
    match = _SUMMARY[tool].search(output) or _ERROR_SUMMARY.search(output)
    errors = int(match.group(1)) if match else None
    status = "ok" if proc.returncode == 0 else f"exit {proc.returncode}"
    api = sorted(set(_API_ERROR.findall(output)))
    return {"name": name, "tool": tool, "errors": errors, "status": status, "api": api,
            "output": output}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tools", default="memcheck,racecheck")
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--out", default=None, help="write every run's full output here")
    args = parser.parse_args(argv)
    sanitizer = find_sanitizer()
    if sanitizer is None:
        print("compute-sanitizer not found (PATH, CUDA_HOME/bin, /usr/local/cuda/bin)")
        return 2
    tools = [t for t in args.tools.split(",") if t]
    with tempfile.TemporaryDirectory(prefix="jitkern-sanitize-") as workdir:
        jobs = [(tool, name, cmd) for name, cmd in programs(workdir) for tool in tools]
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(
                lambda job: run_one(sanitizer, job[0], job[1], job[2], workdir, args.timeout),
                jobs))
    failed = 0
    for r in results:
        count = "?" if r["errors"] is None else r["errors"]
        api = "; API errors: " + ", ".join(f"{e} from {f}" for e, f in r["api"]) if r.get("api") \
            else ""
        bad = r["errors"] != 0 or r["status"] != "ok" or bool(r.get("api"))
        failed += bad
        print(f"{'FAIL' if bad else 'ok  '} {r['tool']:9s} {r['name']:36s} errors: {count} "
              f"({r['status']}){api}")
    if args.out:
        with open(args.out, "w") as f:
            for r in results:
                f.write(f"==== {r['tool']} {r['name']} ({r['status']})\n{r['output']}\n")
    print(f"{len(results) - failed} of {len(results)} runs clean")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
