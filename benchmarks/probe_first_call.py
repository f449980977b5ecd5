"""Whole-process time to the first checked result, per kernel kind, with a warm cache.

    PYTHONPATH=. python3 benchmarks/probe_first_call.py           # GPU: jitkern, CuPy, cupyx.jit
    PYTHONPATH=. python3 benchmarks/probe_first_call.py --cpu     # no GPU: a driver stand-in
    PYTHONPATH=. python3 benchmarks/probe_first_call.py --kinds raw,jit --profile raw
    PYTHONPATH=. python3 benchmarks/probe_first_call.py --cpu --clock cpu --baseline ../old

Each kind (RawKernel, RawModule, ElementwiseKernel, ReductionKernel, @rawkernel, fuse) runs
one small program in fresh Python processes: import, copy random inputs to the device, build
the kernel, launch it once, synchronise and compare the result with NumPy's (float64
reference). The same program runs with CuPy (cupyx.jit for @rawkernel) where it is installed,
in the same rounds, alternating with jitkern. Per kind and library: 2 warm-up processes (the
first fills the cache folders, a temporary JITKERN_CACHE_DIR and CUPY_CACHE_DIR), then the
median of 5 measured processes of the time from the parent's spawn to the checked result,
and the median of each phase:

- ``interpreter``: spawn to the program's first line (Python's own start, ``site``);
- ``import``: ``import numpy`` and the library (``jitkern``; ``cupy``, ``cupyx.jit``);
- ``driver``: ``--cpu`` only, installing the stand-in (see below);
- ``first array``: the inputs copied to the device and the output allocated (on a GPU this
  is where the driver starts: ``cuInit``, the context);
- ``kernel``: constructing the kernel object (``RawKernel(...)``, ``@rawkernel``, ...);
- ``launch``: the first call (cache lookup, module load, launcher) until it returns;
- ``sync``: synchronising, copying the result back and checking it.

``modules`` is how many modules the process had loaded at the end (``sys.modules``): a
count no busy machine blurs.

The children write Python bytecode to a temporary folder (``PYTHONPYCACHEPREFIX``, with
``PYTHONDONTWRITEBYTECODE`` removed), so both libraries start from compiled bytecode, as an
installed package does; ``--source`` keeps the caller's setting (a checkout run without
bytecode compiles every module it imports in every process).

``--cpu`` runs jitkern alone on a stand-in for the CUDA driver: host memory for arrays
(jitkern's simulated device) whose modules load to fresh handles and whose launches are
recorded, not run; the check is that the launch was recorded. The stand-in imports
``cuda.bindings.driver`` (and calls nothing in it), as the real driver's start does. It
measures jitkern's own work on top of the driver, which is what a fresh process can save.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

KINDS = {  # name -> (label, CuPy's label)
    "raw": ("RawKernel", "cupy.RawKernel"),
    "module": ("RawModule", "cupy.RawModule"),
    "elementwise": ("ElementwiseKernel", "cupy.ElementwiseKernel"),
    "reduction": ("ReductionKernel", "cupy.ReductionKernel"),
    "jit": ("@rawkernel", "cupyx.jit.rawkernel"),
    "fuse": ("fuse", "cupy.fuse"),
}
PHASES = ("interpreter", "import", "driver", "first array", "kernel", "launch", "sync")

# The child: one program per kind, written to a file (the JIT reads its kernel's source).
CHILD = r'''
import time
_clock = lambda: (time.clock_gettime(time.CLOCK_MONOTONIC), time.process_time())
MARKS = [("interpreter", *_clock())]
import json, os, sys
LIB, KIND, CPU = os.environ["PROBE_LIB"], os.environ["PROBE_KIND"], os.environ["PROBE_CPU"] == "1"
PROFILE = os.environ.get("PROBE_PROFILE") == "1"
if PROFILE:
    import cProfile
    _prof = cProfile.Profile()
    _prof.enable()


def mark(name):
    MARKS.append((name, *_clock()))


import numpy as np
if LIB == "jitkern":
    import jitkern as xp
    if KIND == "jit":
        from jitkern import jit
else:
    import cupy as xp
    if KIND == "jit":
        from cupyx import jit
mark("import")

if CPU:
    import cuda.bindings.driver  # noqa: F401 - what the real driver's start imports
    from jitkern.runtime import driver
    from jitkern.runtime.fakedriver import FakeDriver
    from jitkern.sim.device import SimulatedDevice

    class StandIn(SimulatedDevice):
        """Host memory for arrays; modules load to fresh handles, launches are recorded."""
        cuModuleLoadData = FakeDriver.cuModuleLoadData
        cuModuleGetFunction = FakeDriver.cuModuleGetFunction
        cuLaunchKernel = FakeDriver.cuLaunchKernel
        cuLaunchCooperativeKernel = FakeDriver.cuLaunchCooperativeKernel

    STAND_IN = StandIn()
    driver.use(STAND_IN).__enter__()
    mark("driver")

N = 100_000
rng = np.random.default_rng()
hx, hy = rng.random(N, dtype=np.float32), rng.random(N, dtype=np.float32)
A = np.float32(rng.uniform(0.5, 2.0))
x, y = xp.asarray(hx), xp.asarray(hy)
z = xp.empty(N, np.float32)
mark("first array")

SRC = r"""
extern "C" __global__ void axpy(const float* x, const float* y, float* z, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) z[i] = a * x[i] + y[i];
}
"""
GRID, BLOCK = ((N + 255) // 256,), (256,)
if KIND == "raw":
    k = xp.RawKernel(SRC, "axpy")
    mark("kernel")
    k(GRID, BLOCK, (x, y, z, A, np.int32(N)))
elif KIND == "module":
    k = xp.RawModule(code=SRC).get_function("axpy")
    mark("kernel")
    k(GRID, BLOCK, (x, y, z, A, np.int32(N)))
elif KIND == "elementwise":
    k = xp.ElementwiseKernel("float32 x, float32 y, float32 a", "float32 z", "z = a * x + y",
                             "probe_axpy")
    mark("kernel")
    z = k(x, y, A)
elif KIND == "reduction":
    k = xp.ReductionKernel("float32 x, float32 y", "float32 z", "x * y", "a + b", "z = a", "0",
                           "probe_dot")
    mark("kernel")
    z = k(x, y)
elif KIND == "jit":
    @jit.rawkernel()
    def axpy(x, y, z, a, n):
        i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
        if i < n:
            z[i] = a * x[i] + y[i]
    mark("kernel")
    axpy(GRID, BLOCK, (x, y, z, A, np.int32(N)))
elif KIND == "fuse":
    @xp.fuse()
    def axpy(x, y, a):
        return a * x + y
    mark("kernel")
    z = axpy(x, y, A)
mark("launch")

xp.cuda.Device().synchronize() if LIB == "cupy" else xp.synchronize()
got = xp.asnumpy(z)
if CPU:  # nothing ran: the check is that the kernel was launched (a reduction: 1 or 2)
    if not 1 <= len(STAND_IN.launches) <= 2:
        sys.exit(f"expected a launch, the stand-in recorded {len(STAND_IN.launches)}")
elif KIND == "reduction":
    want = np.dot(hx.astype(np.float64), hy.astype(np.float64))
    np.testing.assert_allclose(float(got), want, rtol=1e-4)
else:
    want = np.float64(A) * hx + hy
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
mark("sync")
print("PROBE " + json.dumps({"marks": MARKS, "modules": len(sys.modules)}))
if PROFILE:
    import io, pstats
    _prof.disable()
    out = io.StringIO()
    pstats.Stats(_prof, stream=out).sort_stats("cumulative").print_stats(40)
    print(out.getvalue())
'''


def _child_env(opts, folder: str) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (os.getcwd(), env.get("PYTHONPATH")) if p)
    env["JITKERN_CACHE_DIR"] = os.path.join(folder, "jitkern")
    env["CUPY_CACHE_DIR"] = os.path.join(folder, "cupy")
    if not opts.source:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = os.path.join(folder, "bytecode")
    return env


def contenders(kind: str, opts, env: dict, folder: str) -> dict:
    """label -> (library the child imports, its environment), in the order they run."""
    out = {"jitkern": ("jitkern", env)}
    if opts.baseline:
        root = os.path.abspath(opts.baseline)
        path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
        out["jitkern (baseline)"] = ("jitkern", dict(
            env, PYTHONPATH=path, JITKERN_CACHE_DIR=os.path.join(folder, "baseline")))
    if not opts.cpu and importlib.util.find_spec("cupy") is not None:
        out[KINDS[kind][1]] = ("cupy", env)
    return out


def _clock() -> float:
    return time.clock_gettime(time.CLOCK_MONOTONIC)  # the children's clock (system-wide)


def run_child(script: str, env: dict, lib: str, kind: str, cpu: bool, extra=(),
              clock: str = "wall") -> dict:
    """One fresh process; {phase: ms} and 'total' (spawn to the checked result; with
    ``clock='cpu'``, the child's CPU time, from its start, instead)."""
    child_env = dict(env, PROBE_LIB=lib, PROBE_KIND=kind, PROBE_CPU="1" if cpu else "0")
    spawned = _clock()
    proc = subprocess.run([sys.executable, *extra, script], env=child_env, capture_output=True,
                          text=True)
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("PROBE ")), None)
    if proc.returncode != 0 or line is None:
        raise SystemExit(f"{lib} {kind}: the child failed (status {proc.returncode}):\n"
                         f"{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    result = json.loads(line[len("PROBE "):])
    marks = result["marks"]
    column, start = (1, spawned) if clock == "wall" else (2, 0.0)
    phases, last = {}, start
    for mark in marks:
        phases[mark[0]] = 1e3 * (mark[column] - last)
        last = mark[column]
    phases["total"] = 1e3 * (last - start)
    phases["modules"] = result["modules"]
    return {"phases": phases, "stdout": proc.stdout, "stderr": proc.stderr}


def measure(script, kind, opts, runners: dict) -> dict:
    """{label: [phases of each measured process]}; the contenders alternate in each round."""
    labels = list(runners)
    for _ in range(opts.warmups):  # the first fills the caches
        for label in labels:
            run_child(script, runners[label][1], runners[label][0], kind, opts.cpu)
    runs = {label: [] for label in labels}
    for r in range(opts.processes):
        for label in (labels if r % 2 == 0 else labels[::-1]):
            lib, env = runners[label]
            runs[label].append(run_child(script, env, lib, kind, opts.cpu,
                                         clock=opts.clock)["phases"])
    return runs


def _median(runs: list, phase: str):
    values = [r[phase] for r in runs if phase in r]
    return statistics.median(values) if values else None


def _fmt(value) -> str:
    return "" if value is None else f"{value:.1f}"


def report(kind: str, runs: dict) -> None:
    print(f"\n#### {KINDS[kind][0]}: whole process to the first checked result (ms, medians)\n")
    phases = [p for p in PHASES if any(p in r for rs in runs.values() for r in rs)]
    print("| library | total | min-max | " + " | ".join(phases) + " | modules |")
    print("|---|" + "---|" * (len(phases) + 3))
    for label, rs in runs.items():
        totals = [r["total"] for r in rs]
        cells = " | ".join(_fmt(_median(rs, p)) for p in phases)
        print(f"| {label} | {_fmt(statistics.median(totals))} | "
              f"{min(totals):.0f}-{max(totals):.0f} | {cells} | {rs[-1]['modules']} |")


def summary(results: dict) -> None:
    print("\n#### Summary: whole process to the first checked result (ms, medians)\n")
    others = list(dict.fromkeys(label for runs in results.values() for label in runs
                                if label != "jitkern"))
    against_cupy = any(not o.startswith("jitkern") for o in others)
    header = ["kind", "jitkern"] + [c for o in others for c in (o, "jitkern / it")]
    header += ["target"] if against_cupy else []
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for kind, runs in results.items():
        mine = statistics.median(r["total"] for r in runs["jitkern"])
        cells = [KINDS[kind][0], f"{mine:.1f}"]
        for other in others:
            theirs = runs.get(other)
            if theirs:
                value = statistics.median(r["total"] for r in theirs)
                cells += [f"{value:.1f}", f"{mine / value:.2f}"]
            else:
                cells += ["", ""]
        cells += ["<= 1 against CuPy"] if against_cupy else []
        print("| " + " | ".join(cells) + " |")
    if not against_cupy:
        print("\n(no CuPy figures: --cpu, or CuPy is not installed)")


def profile(script, env, kind, opts) -> None:
    """One more jitkern process of ``kind``: cProfile of the program and its slowest imports."""
    out = run_child(script, dict(env, PROBE_PROFILE="1"), "jitkern", kind, opts.cpu,
                    extra=("-X", "importtime"))
    print(f"\n#### Profile of one jitkern process ({KINDS[kind][0]})\n")
    print(out["stdout"].split("\n", 1)[1] if "\n" in out["stdout"] else "")
    rows = []
    for line in out["stderr"].splitlines():
        parts = line.split("|")
        if line.startswith("import time:") and parts[0][12:].strip().isdigit():
            rows.append((int(parts[0][12:]), int(parts[1]), parts[2].strip()))
    print("slowest imports (self us, cumulative us, module):")
    for self_us, cumulative, name in sorted(rows, reverse=True)[:25]:
        print(f"  {self_us:8d} {cumulative:8d}  {name}")


def _gpu_label() -> str:
    """The device, and CuPy's version where it is installed."""
    from importlib.metadata import packages_distributions, version

    from common import device_label, today

    label = f"{device_label()}, {today()}"
    dist = packages_distributions().get("cupy")
    return label + (f", CuPy {version(dist[0])}" if dist else ", no CuPy")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cpu", action="store_true",
                        help="jitkern alone, on a driver stand-in (no GPU needed)")
    parser.add_argument("--kinds", default=",".join(KINDS),
                        help=f"comma-separated, of {', '.join(KINDS)}")
    parser.add_argument("--processes", type=int, default=5)
    parser.add_argument("--warmups", type=int, default=2, help="the first fills the caches")
    parser.add_argument("--profile", metavar="KIND", help="also profile one process of KIND")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="wall: spawn to result (default); cpu: the child's CPU time, "
                        "steadier on a busy machine")
    parser.add_argument("--baseline", metavar="DIR",
                        help="also time the jitkern of another checkout, in the same rounds")
    parser.add_argument("--source", action="store_true",
                        help="keep the caller's bytecode setting (see the module doc)")
    opts = parser.parse_args()
    kinds = [k for k in opts.kinds.split(",") if k]
    unknown = [k for k in kinds + [opts.profile or "raw"] if k not in KINDS]
    if unknown:
        parser.error(f"unknown kind(s) {unknown}: choose from {', '.join(KINDS)}")
    if opts.warmups < 1:
        parser.error("--warmups: at least 1 (the first fills the caches)")
    if not opts.cpu:
        from needs import require_gpu  # (benchmarks/ is on sys.path: the script's folder)

        require_gpu(__file__)
    where = "driver stand-in (--cpu): jitkern's own work" if opts.cpu else _gpu_label()
    byte = "the caller's setting (--source)" if opts.source else "compiled once, then reused"
    print(f"## First checked result in a fresh process ({where}); {opts.clock} time; "
          f"bytecode: {byte}; {opts.warmups} warm-up + {opts.processes} measured processes "
          "per library")
    if os.environ.get("PYTHONDONTWRITEBYTECODE") and not opts.source:
        print("(PYTHONDONTWRITEBYTECODE is set here: the children write their bytecode to a "
              "temporary folder all the same; --source measures them without it)")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="jitkern-first-call-") as folder:
        script = os.path.join(folder, "first_call_child.py")
        with open(script, "w") as f:
            f.write(CHILD)
        env = _child_env(opts, folder)
        results = {}
        for kind in kinds:
            results[kind] = measure(script, kind, opts, contenders(kind, opts, env, folder))
            report(kind, results[kind])
        summary(results)
        if opts.profile:
            profile(script, env, opts.profile, opts)
    print(f"\n({time.perf_counter() - started:.0f} s in all)")


if __name__ == "__main__":
    main()
