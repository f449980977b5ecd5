"""Launch overhead of every kernel kind with every array kind, and first-call cost.

Run: PYTHONPATH=. python benchmarks/bench_launch.py [--cpu|--fake] [--quick] [--no-first-call]
         [--baseline DIR [--processes N]]

One table, in one run: a bare ``cuLaunchKernel`` with a buffer packed once (the floor),
then RawKernel, ``@rawkernel`` (the ``k[grid, block](...)`` and ``k(grid, block, args)``
forms), ElementwiseKernel (output passed and output allocated), ReductionKernel and a
bound launch, each with jitkern arrays, CuPy arrays, PyTorch tensors and a plain
``__cuda_array_interface__`` object where those are installed, and CuPy's own
ElementwiseKernel and ReductionKernel on the same CuPy arrays. Allocated outputs follow the
inputs: with CuPy arrays they come from CuPy's memory pool, with tensors from PyTorch's
caching allocator, so those rows include that library's ``empty``. Every kernel has a
scalar among its arguments. Only public API is used, so the same script can time an older
checkout (PYTHONPATH pointing at it) on the same card in the same call.

``--cpu`` replaces the CUDA driver by a stub (``jitkern.runtime.fakedriver``, installed
through ``driver.use`` where the checkout has it, else by setting the driver module
before the first launch): ``cuLaunchKernel`` returns at once, so the figures are
jitkern's own Python work per launch, comparable between checkouts on a machine without
a GPU. Kernels still compile (NVRTC), for sm_90. ``--fake`` is the same. Where PyTorch or
CuPy is not installed, stand-ins of their arrays (benchmarks/fake_arrays.py, read by jitkern
through the same attributes) are timed too.

``--baseline DIR`` compares this checkout with another (say ``.baseline2``, main's tree):
the script runs itself in N alternating processes per checkout (PYTHONPATH=DIR, then this
tree, N times, on the same device), each a full interleaved table, and prints the median
per case of each checkout and their ratio (new / baseline: below 1 is faster).
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

import numpy as np

N_LAUNCH = 20000

RAW_SOURCE = r"""
extern "C" __global__ void four_args(const float* x, const float* y, float* z, float a) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < 1) z[i] = x[i] * a + y[i];
}
"""


def install_cpu_driver():
    """Make a stub the CUDA driver for this process (see the module doc)."""
    from jitkern.runtime import driver

    try:
        from jitkern.runtime.fakedriver import FakeDriver
    except ImportError:  # an older checkout: this tree's fake, by its path
        path = os.path.join(os.path.dirname(__file__), "..", "jitkern", "runtime", "fakedriver.py")
        spec = importlib.util.spec_from_file_location("_bench_fakedriver", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        FakeDriver = mod.FakeDriver
    fake = FakeDriver(cc=(9, 0), record=False)
    if hasattr(driver, "use"):
        driver.use(fake).__enter__()
    else:  # before the seam: what use() does, in a process that has launched nothing
        driver._driver_module, driver._initialised, driver._device_count = fake, True, 1
    return fake


class CAIArray:
    """A plain ``__cuda_array_interface__`` object over another array's memory."""

    def __init__(self, base):
        cai = base.__cuda_array_interface__
        self.__cuda_array_interface__ = {"data": (cai["data"][0], False),
                                         "shape": tuple(cai["shape"]), "typestr": "<f4",
                                         "strides": None, "version": 3}
        self._base = base


class CAIClass:
    """``__cuda_array_interface__`` as a property of the class (JAX, Numba)."""

    def __init__(self, base):
        self._base = base
        self._ptr = base.__cuda_array_interface__["data"][0]

    @property
    def __cuda_array_interface__(self):
        return {"data": (self._ptr, False), "shape": (32,), "typestr": "<f4", "strides": None,
                "version": 3}


def array_kinds(cpu: bool):
    """{kind: make(host float32 array) -> device array}."""
    import jitkern
    from common import try_import

    def empty(h):  # the values are never read: no copy (none can be made with --cpu)
        return jitkern.empty(h.shape, h.dtype)

    kinds = {"jitkern": empty}
    if not cpu:
        cp = try_import("cupy")
        if cp is not None:
            kinds["CuPy"] = cp.asarray
        torch = try_import("torch")
        if torch is not None and torch.cuda.is_available():
            kinds["PyTorch"] = lambda h: torch.as_tensor(h, device="cuda")
    else:
        import fake_arrays

        for name, wrap in fake_arrays.install().items():
            kinds[name] = lambda h, wrap=wrap: wrap(empty(h))
    kinds["CAI (class)"] = lambda h: CAIClass(empty(h))
    kinds["CAI (instance)"] = lambda h: CAIArray(empty(h))
    return kinds


def kernels():
    import jitkern
    from jitkern import jit

    @jit.rawkernel()
    def four_args(x, y, z, a):
        i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
        if i < 1:
            z[i] = x[i] * a + y[i]

    raw = jitkern.RawKernel(RAW_SOURCE, "four_args")
    ek = jitkern.ElementwiseKernel("float32 x, float32 y, float32 a", "float32 z",
                                   "z = x * a + y", "bench_axpy")
    rk = jitkern.ReductionKernel("float32 x, float32 a", "float32 y", "x * a", "a + b", "y = a",
                                 "0", "bench_scaled_sum")
    return raw, four_args, ek, rk


def cases(cpu: bool):
    """[(name, call, target)] with the floor first."""
    from common import bare_launcher

    host = np.arange(32, dtype=np.float32)
    bare, keep = bare_launcher()
    out = [("bare cuLaunchKernel, pre-packed buffer (floor)", bare, "", keep)]
    for kind, make in array_kinds(cpu).items():
        arrays = (make(host), make(host), make(host))
        if kind == "jitkern":
            own, kept = own_launch_floors(arrays)
            out += own
            keep = (keep, kept)
        out += kind_floors(kind, arrays, bare)
        out += kind_cases(kind, arrays)
    return [(name, fn, target) for name, fn, target, *_ in out], keep


OWN_FLOOR = "floor: bare cuLaunchKernel of the kernel's own function and parameters, "


def own_launch_floors(arrays):
    """The driver's own share of an ElementwiseKernel's and a ReductionKernel's launch: a
    bare ``cuLaunchKernel`` of each one's own function with the very arguments its
    generated launcher passed (recorded on a kernel object of their own, replayed as they
    were). Their functions take more parameters than the bare row's kernel (the reduction:
    12, with its shapes), and the driver's launch costs more with each; the ratio of a row
    to this floor is what jitkern's own host work adds. ([(name, call, target)], what the
    replays need kept alive.)"""
    import jitkern
    from jitkern.runtime import driver

    d = driver.drv()
    real, calls = d.cuLaunchKernel, []

    def cuLaunchKernel(*args):  # noqa: N802 - the launchers read the driver's name
        calls.append(args)
        return real(*args)

    x, y, z = arrays
    a = np.float32(2.0)
    d.cuLaunchKernel = cuLaunchKernel
    try:  # kernels of their own: the timed rows' launchers never see the recorder
        ek = jitkern.ElementwiseKernel("float32 x, float32 y, float32 a", "float32 z",
                                       "z = x * a + y", "bench_axpy_own_floor")
        rk = jitkern.ReductionKernel("float32 x, float32 a", "float32 y", "x * a", "a + b",
                                     "y = a", "0", "bench_scaled_sum_own_floor")
        ek(x, y, a, z), ek(x, y, a, z)
        ew_call = calls[-1]
        results = [rk(x, a)]
        del calls[:]
        results.append(rk(x, a))
        red_calls = list(calls)
    finally:
        d.cuLaunchKernel = real

    def ew():
        real(*ew_call)

    def red():
        for call in red_calls:
            real(*call)

    rows = [(OWN_FLOOR + "ElementwiseKernel, jitkern", ew, ""),
            (OWN_FLOOR + f"ReductionKernel ({len(red_calls)} launch), jitkern", red, "")]
    return rows, (ek, rk, results)


READS_FLOOR = "floor: bare + reading the 3 arrays, "
ALLOC_FLOOR = "floor: bare + reading the arrays + allocating the output, "


def _reader(kind: str, a):
    """What any launcher must learn of one argument through its library's public API:
    the pointer, dtype, shape and strides (a ``__cuda_array_interface__`` dict holds all)."""
    if kind.startswith("PyTorch"):
        return lambda: (a.data_ptr(), a.dtype, a.shape, a.stride())
    if kind.startswith("CAI"):
        return lambda: a.__cuda_array_interface__
    return lambda: (a.data.ptr, a.dtype, a.shape, a.strides)


def _allocator(kind: str):
    """The output allocation a launch that makes its result pays: the library's own
    (results follow the inputs); for jitkern and protocol-only arrays, a driver pool block
    allocated and freed."""
    if kind.startswith("CuPy"):
        import cupy

        return lambda: cupy.ndarray((32,), np.float32)
    if kind.startswith("PyTorch"):
        import torch

        return lambda: torch.empty(32, dtype=torch.float32, device="cuda")
    # jitkern's own: a block from the driver's pool and back (what jitkern's free list of
    # recent blocks saves), the floor under any allocator
    from jitkern.runtime import driver

    d = driver.drv()
    err, pool = d.cuDeviceGetDefaultMemPool(driver.current_device_id())
    alloc, free = d.cuMemAllocFromPoolAsync, d.cuMemFreeAsync

    def new():
        err, ptr = alloc(128, pool, 0)
        free(ptr, 0)

    return new


def kind_floors(kind, arrays, bare):
    """Floors of one array kind, the library's own share of a launch: the bare launch plus
    the public reads of the three arrays (``READS_FLOOR``), and plus the allocation of a
    32-float output in the library (``ALLOC_FLOOR``). jitkern's rows compare with the bare
    launch itself (its arrays are its own)."""
    if kind == "jitkern":
        out = []
    else:
        r0, r1, r2 = (_reader(kind, a) for a in arrays)

        def reads():
            r0(), r1(), r2()
            bare()

        out = [(READS_FLOOR + kind, reads, "")]
    new = _allocator(kind)
    if kind == "jitkern":  # (jitkern reads its own arrays' slots, no public call)
        def alloc():
            new()
            bare()
    else:
        r0, r1 = (_reader(kind, a) for a in arrays[:2])

        def alloc():
            r0(), r1()
            new()
            bare()

    return out + [(ALLOC_FLOOR + kind, alloc, "")]


def x_own(name: str, results: dict):
    """A jitkern ElementwiseKernel's (output passed) or ReductionKernel's row against the bare
    launch of its own function (:func:`own_launch_floors`); None for the other rows."""
    if name == "ElementwiseKernel, output passed, jitkern":
        floor = OWN_FLOOR + "ElementwiseKernel, jitkern"
    elif name == "ReductionKernel, jitkern":
        floor = next((r for r in results if r.startswith(OWN_FLOOR + "ReductionKernel")), None)
    else:
        return None
    return results[name][0] / results[floor][0] if floor in results else None


def x_floor(name: str, results: dict):
    """A row's ratio to its kind's floor: allocating rows to ``ALLOC_FLOOR``, the others to
    ``READS_FLOOR`` (jitkern's: the bare launch); None for the floors themselves."""
    if name.startswith("floor") or name.startswith("bare") or ", " not in name:
        return None
    kind = name.rsplit(", ", 1)[1]
    allocating = "allocated" in name or name.startswith("ReductionKernel") or "'s Reduction" in name
    floor = (ALLOC_FLOOR if allocating else READS_FLOOR) + kind
    if floor not in results:
        if allocating:
            return None
        return results[name][1]
    return results[name][0] / results[floor][0]


def kind_cases(kind, arrays):
    """The cases of one array kind. Each case has kernel objects of its own: a kernel
    object keeps the launcher of its last argument signature, so cases sharing one would
    time its general path."""
    x, y, z = arrays
    raw, jk, ek, rk = kernels()
    ek_alloc = kernels()[2]
    a = np.float32(2.0)
    args = (x, y, z, a)
    out = [
        (f"RawKernel(grid, block, args), {kind}", lambda: raw((1,), (32,), args), "<= 1.25x"),
        (f"@rawkernel k[grid, block](...), {kind}", lambda: jk[1, 32](x, y, z, a),
         "<= 1.25x, <= call form"),
        # both forms build the argument tuple in the call, as a user's code does
        (f"@rawkernel k(grid, block, args), {kind}", lambda: jk(1, 32, (x, y, z, a)),
         "<= 1.25x"),
        (f"ElementwiseKernel, output passed, {kind}", lambda: ek(x, y, a, z), "<= 1.25x"),
        (f"ElementwiseKernel, output allocated, {kind}", lambda: ek_alloc(x, y, a), ""),
        (f"ReductionKernel, {kind}", lambda: rk(x, a), ""),
    ]
    if kind == "CuPy":
        out += cupy_own_cases(x, y, a)
    if hasattr(raw, "bind"):
        raw_b, jk_b = kernels()[:2]
        out += [(f"RawKernel.bind(...)(), {kind}", raw_b.bind((1,), (32,), x, y, z, a), "<= 1.25x"),
                (f"@rawkernel .bind(...)(), {kind}", jk_b.bind(1, 32, x, y, z, a), "<= 1.25x")]
    return out


def cupy_own_cases(x, y, a):
    """CuPy's own kernels on the same arrays: the figures jitkern's allocating launches on
    CuPy arrays (results from CuPy's pool, issue 17 part 4) stand beside."""
    import cupy

    ek = cupy.ElementwiseKernel("float32 x, float32 y, float32 a", "float32 z",
                                "z = x * a + y", "bench_axpy_cupy")
    # (CuPy's reduce_expr names its operands a and b: the scale is s here)
    rk = cupy.ReductionKernel("float32 x, float32 s", "float32 y", "x * s", "a + b", "y = a",
                              "0", "bench_scaled_sum_cupy")
    return [("CuPy's ElementwiseKernel, output allocated, CuPy", lambda: ek(x, y, a),
             "reference (jitkern's CuPy row above: lower)"),
            ("CuPy's ReductionKernel, CuPy", lambda: rk(x, a),
             "reference (jitkern's CuPy row above: lower)")]


_FIRST_CALL = r"""
import time, sys
t0 = time.perf_counter()
import jitkern
t1 = time.perf_counter()
import numpy as np
x = jitkern.asarray(np.ones(32, np.float32)); y = jitkern.empty_like(x); z = jitkern.empty_like(x)
jitkern.synchronize()
SRC = sys.argv[1]
k = jitkern.RawKernel(SRC, "four_args")  # construction (and jitkern.kernels' import) not timed
t2 = time.perf_counter()
k.compile()  # the cache lookup and module load the first call would do
tc = time.perf_counter()
k((1,), (32,), (x, y, z, np.float32(2.0)))
jitkern.synchronize()
t3 = time.perf_counter()
k((1,), (32,), (x, y, z, np.float32(2.0)))
jitkern.synchronize()
t4 = time.perf_counter()
print((t1 - t0) * 1e3, (t3 - t2) * 1e3, (t4 - t3) * 1e3, (tc - t2) * 1e3,
      file=sys.stdout)
"""


def first_call_ms(cache_dir: str, source: str) -> tuple[float, float, float, float]:
    env = dict(os.environ, JITKERN_CACHE_DIR=cache_dir)
    env["PYTHONPATH"] = os.pathsep.join([env.get("PYTHONPATH", ""), os.getcwd()])
    proc = subprocess.run([sys.executable, "-c", _FIRST_CALL, source], env=env,
                          capture_output=True, text=True, check=True)
    imp, first, second, compile_and_load = (float(v) for v in proc.stdout.split())
    return imp, first, second, compile_and_load


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpu", "--fake", action="store_true",
                        help="stub the driver (see the doc)")
    parser.add_argument("--baseline", metavar="DIR",
                        help="compare with the checkout in DIR (alternating processes)")
    parser.add_argument("--processes", type=int, default=3,
                        help="processes per checkout with --baseline")
    parser.add_argument("--best", action="store_true",
                        help="best of short runs instead of the median of long rounds (a "
                             "host shared with other jobs)")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="fewer launches and rounds")
    parser.add_argument("--no-first-call", action="store_true")
    opts = parser.parse_args(argv)
    if opts.baseline:
        return compare(opts, argv if argv is not None else sys.argv[1:])
    if opts.cpu:
        install_cpu_driver()
    import jitkern
    from common import device_label, interleaved, markdown_table, today

    table, _keep = cases(opts.cpu)
    n, rounds = (2000, 5) if opts.quick else (N_LAUNCH, 9)
    if opts.best:
        results = best_of([(name, fn) for name, fn, _t in table], rounds)
    else:
        results = interleaved([(name, fn) for name, fn, _t in table], n, rounds)
    rows = [[name, results[name][0], results[name][1], x_floor(name, results), target,
             x_own(name, results)] for name, _fn, target in table]
    if opts.json:
        print(json.dumps({"rows": rows, "jitkern": os.path.dirname(jitkern.__file__)}))
        return
    where = "driver stubbed (--cpu): jitkern's Python work" if opts.cpu else device_label()
    if opts.best:
        print(f"## Launch overhead, host us per launch (best of {rounds} x 5 runs of 300 "
              "launches; ratio to the floor's best)\n")
    else:
        print(f"## Launch overhead, host us per launch ({n} async launches per round, median "
              f"of {rounds} interleaved rounds; ratio = median of per-round ratios to the "
              "floor)\n")
    print(f"{where}, jitkern at {os.path.dirname(jitkern.__file__)}, {today()}\n")
    print(markdown_table(["launch", "us/launch", "x bare", "x its floor", "target",
                          "x its own launch"], rows))
    if opts.cpu or opts.no_first_call:
        return
    with tempfile.TemporaryDirectory() as cache_dir:
        src = RAW_SOURCE + f"\n// {os.getpid()}\n"
        cold = first_call_ms(cache_dir, src)
        runs = [first_call_ms(cache_dir, src) for _ in range(5)]
        warm = tuple(statistics.median(r[i] for r in runs) for i in range(4))
    print("\n## First call in a fresh process (ms)\n")
    print(markdown_table(
        ["case", "import jitkern", "first call", "of which compile/cache + load", "second call",
         "first - second", "target"],
        [["cold disk cache", cold[0], cold[1], cold[3], cold[2], cold[1] - cold[2], ""],
         ["warm disk cache (median of 5 processes)", warm[0], warm[1], warm[3], warm[2],
          warm[1] - warm[2], "<= 2 ms beyond launch; import <= 150 ms"]]))


def best_of(cases: list, rounds: int, runs: int = 5, n: int = 300) -> dict:
    """``{name: (best us per call, its ratio to the first case's best)}``: each round runs
    every case ``runs`` times ``n`` calls, in turn; a case's figure is its fastest run (on a
    host other jobs preempt, the minimum of short runs is what stays put)."""
    import time

    for _name, fn in cases:
        for _ in range(n):
            fn()
    best = {name: float("inf") for name, _fn in cases}
    clock = time.perf_counter
    for _ in range(rounds):
        for name, fn in cases:
            for _ in range(runs):
                t0 = clock()
                for _ in range(n):
                    fn()
                best[name] = min(best[name], (clock() - t0) / n * 1e6)
    floor = best[cases[0][0]]
    return {name: (us, us / floor) for name, us in best.items()}


def compare(opts, argv: list) -> None:
    """This checkout against ``opts.baseline`` (see the module doc)."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    base = os.path.abspath(opts.baseline)
    child = [a for a in argv if not a.startswith("--baseline") and a != opts.baseline]
    child = [sys.executable, os.path.abspath(__file__), *child, "--json", "--no-first-call"]
    runs = {"baseline": [], "new": []}
    for _ in range(opts.processes):
        for label, tree in (("baseline", base), ("new", here)):
            env = dict(os.environ, PYTHONPATH=tree)
            proc = subprocess.run(child, env=env, capture_output=True, text=True, cwd=tree)
            if proc.returncode:
                sys.exit(f"bench_launch in {tree} failed:\n{proc.stderr[-3000:]}")
            runs[label].append(json.loads(proc.stdout.strip().splitlines()[-1]))
    from common import markdown_table

    def medians(label, col):
        table = {}
        for run in runs[label]:
            for row in run["rows"]:
                table.setdefault(row[0], []).append(row[col])
        # (a floor has no ratio to a floor: None)
        return {name: statistics.median(v) if None not in v else None
                for name, v in table.items()}

    b_us, n_us = medians("baseline", 1), medians("new", 1)
    b_x, n_x = medians("baseline", 2), medians("new", 2)
    n_floor = medians("new", 3)
    targets = {row[0]: row[-1] for row in runs["new"][0]["rows"]}
    rows = [[name, b_us.get(name, float("nan")), n_us[name], b_x.get(name, float("nan")),
             n_x[name], n_floor.get(name), n_us[name] / b_us[name] if name in b_us
             else float("nan"), targets[name]] for name in n_us]
    where = "driver stubbed (--fake)" if opts.cpu else "GPU"
    print(f"## Launch overhead, {runs['baseline'][0]['jitkern']} (baseline) vs "
          f"{runs['new'][0]['jitkern']} (new), {where}; medians of {opts.processes} alternating "
          "processes per checkout\n")
    print(markdown_table(["launch", "baseline us", "new us", "baseline x bare", "new x bare",
                          "new x its floor", "new/baseline", "target"], rows))


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from needs import require_gpu  # (benchmarks/ is on sys.path: the script's folder)

    if not {"--cpu", "--fake"} & set(sys.argv[1:]):
        require_gpu(__file__)
    main()
