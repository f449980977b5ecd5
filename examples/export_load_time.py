"""How long a fresh process takes to run one kernel launch: from an export, and from the
JIT with its disk cache warm.

    python examples/export_load_time.py [--simulate] [RUNS]

Needs a CUDA GPU and its driver (it times loading a binary onto one). --simulate (or
JITKERN_SIMULATE=1) times the same fresh processes on jitkern's simulated device, which
runs no compiled binary: the JIT way only (import, the kernel's simulated first launch
and the copy back, on fewer floats), and the export is said to need a GPU. Without
either it says what it needs in one line and exits with status 1 (examples/README.md).

Each run is a new Python process that imports jitkern, gets the kernel (``jitkern.load``
of an exported fatbin, or the ``@rawkernel`` function whose binary and index are in the
disk cache), launches it once on 1M floats and copies the result back. Printed: the
median over RUNS of the time inside the process (import to result) and of the whole
process (as the parent sees it).
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

KERNEL = textwrap.dedent("""
    from jitkern import jit

    @jit.rawkernel()
    def axpy(a, x, y, out):
        i = jit.grid(1)
        if i < out.size:
            out[i] = a * x[i] + y[i]
""")

CHILD = textwrap.dedent("""
    import time
    t0 = time.perf_counter()
    import os
    import sys
    import numpy as np
    import jitkern
    if sys.argv[1] == "load":
        k = jitkern.load(sys.argv[2]).axpy
    else:
        sys.path.insert(0, sys.argv[2])
        from timed_kernel import axpy as k
    n = int(os.environ["TIMED_FLOATS"])
    x = jitkern.arange(n, dtype=np.float32)
    out = jitkern.empty(n, np.float32)
    k((n + 255) // 256, 256, (np.float32(2), x, x, out))
    assert out.get()[5] == 15.0
    print(time.perf_counter() - t0)
""")


class ChildFailed(Exception):
    """A child process failed: its own message, not a CalledProcessError."""


def _child(argv, env, what: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, *argv], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        lines = (proc.stderr or proc.stdout).strip().splitlines()
        raise ChildFailed(f"{what} failed (exit status {proc.returncode}): "
                          + (lines[-1] if lines else "no message"))
    return proc


def run(args, env) -> tuple[float, float]:
    start = time.perf_counter()
    proc = _child(["-c", CHILD, *args], env, f"the timed process ({args[0]})")
    return float(proc.stdout.split()[-1]), time.perf_counter() - start


def main(runs: int = 7, simulate: bool = False) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "timed_kernel.py"), "w") as f:
            f.write(KERNEL)
        env = dict(os.environ, JITKERN_CACHE_DIR=os.path.join(tmp, "cache"))
        # The figure is about normal builds: a debug build cannot be exported; a simulated
        # device (said by --simulate, for the children too) loads no binary.
        env.pop("JITKERN_DEBUG", None)
        env["JITKERN_SIMULATE"] = "1" if simulate else "0"
        env["TIMED_FLOATS"] = str(1 << 12 if simulate else 1 << 20)
        results = {"jit (disk cache warm)": []}
        if simulate:
            print("load (exported fatbin)   needs a GPU: the simulated device runs no binary")
        else:
            export = (
                "import sys, numpy as np; sys.path.insert(0, sys.argv[1]); "
                "from timed_kernel import axpy; z = np.zeros(8, np.float32); "
                "axpy.export(sys.argv[1] + '/axpy', np.float32(1), z, z, z)"
            )
            _child(["-c", export, tmp], env, "exporting the kernel")
            results = {"load (exported fatbin)": [], **results}
        run(["jit", tmp], env)  # fills the JIT's disk cache and index
        manifest = os.path.join(tmp, "axpy.json")
        for _ in range(runs):
            for name, values in results.items():
                values.append(run(["load", manifest] if name.startswith("load") else
                                  ["jit", tmp], env))
        for name, values in results.items():
            inner = statistics.median(v[0] for v in values) * 1e3
            whole = statistics.median(v[1] for v in values) * 1e3
            print(
                f"{name:24s} in-process {inner:7.1f} ms   whole process {whole:7.1f} ms "
                f"(median of {runs}{', simulated' if simulate else ''})"
            )


def _parse(argv) -> tuple[int, bool]:
    parser = argparse.ArgumentParser(
        description="Time a fresh process's first launch: from an export, and from the JIT "
                    "with a warm disk cache. Needs a CUDA GPU (or --simulate).")
    parser.add_argument("runs", nargs="?", type=int, default=7,
                        help="processes per way of getting the kernel (default 7)")
    parser.add_argument("--simulate", action="store_true",
                        help="time them on jitkern's simulated device (the JIT way only)")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error(f"RUNS must be at least 1, got {args.runs}")
    return args.runs, args.simulate


if __name__ == "__main__":
    runs, simulate = _parse(sys.argv[1:])
    from gpu_or_simulated import NEEDS_GPU, device, simulated

    on = device(["--simulate"] if simulate else [], "export_load_time.py")
    if on is None:
        sys.exit(NEEDS_GPU)
    try:
        with on:
            main(runs, simulated())
    except ChildFailed as exc:
        sys.exit(f"export_load_time.py: {exc}")
