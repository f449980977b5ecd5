"""CUDA graphs and bound launches (issue 11's graph and bind figures).

Run: PYTHONPATH=. python benchmarks/bench_graph.py

1. A chain of 100 dependent small launches (1,024 float32, each reading the previous
   one's output), issued one by one and replayed as one captured graph: host time per
   chain (the issuing call(s) alone, GPU idle before each) and end to end (issue +
   synchronize). Side by side: bound launches, a bare pre-packed ``cuLaunchKernel``
   loop (the one-by-one floor), and CuPy's own capture of the same chain (RawKernel,
   and cupyx.jit where it works) when CuPy is installed. Results are checked equal.
2. One 4-argument launch re-issued 20,000 times: ``kernel.bind(...)()`` against the
   bare pre-packed ``cuLaunchKernel``, in interleaved rounds (ratio within a round).
Prints markdown tables last.
"""

from __future__ import annotations

import ctypes
import datetime
import statistics
import struct
import time

import numpy as np

from common import interleaved

import jitkern
from jitkern import jit
from jitkern.runtime import driver
from jitkern.runtime.driver import drv

N = 1024
CHAIN = 100
THREADS = 128
BLOCKS = N // THREADS
ROUNDS = 15

STEP_SOURCE = r"""
extern "C" __global__ void step(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * 0.5f + 1.0f;
}
"""


@jitkern.rawkernel()
def jit_step(x, y, n):
    i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    if i < n:
        y[i] = x[i] * np.float32(0.5) + np.float32(1.0)


def reference(x0: np.ndarray) -> np.ndarray:
    x = x0.astype(np.float32)
    for _ in range(CHAIN):
        x = x * np.float32(0.5) + np.float32(1.0)
    return x


# -- the chain, issued in each way -----------------------------------------------------


def jitkern_chain(a, b):
    n = np.int32(N)

    def run():
        x, y = a, b
        for _ in range(CHAIN):
            jit_step[BLOCKS, THREADS](x, y, n)
            x, y = y, x

    return run


def bound_chain(a, b):
    n = np.int32(N)
    ab = jit_step.bind(BLOCKS, THREADS, a, b, n)
    ba = jit_step.bind(BLOCKS, THREADS, b, a, n)

    def run():
        for _ in range(CHAIN // 2):
            ab()
            ba()

    return run


def bare_chain(a, b):
    """The floor: cuLaunchKernel with two parameter buffers packed once."""
    k = jitkern.RawKernel(STEP_SOURCE, "step")
    handle = k.kernel.handle()
    keep, params = [], []
    for x, y in ((a, b), (b, a)):
        storage = ctypes.create_string_buffer(struct.pack("<QQi", x.data.ptr, y.data.ptr, N), 24)
        base = ctypes.addressof(storage)
        pointers = (ctypes.c_void_p * 3)(base, base + 8, base + 16)
        keep += [storage, pointers]
        params.append(ctypes.addressof(pointers))
    launch = drv().cuLaunchKernel
    p0, p1 = params

    def run(_keep=keep):
        for _ in range(CHAIN // 2):
            launch(handle, BLOCKS, 1, 1, THREADS, 1, 1, 0, 0, p0, 0)
            launch(handle, BLOCKS, 1, 1, THREADS, 1, 1, 0, 0, p1, 0)

    return run


def captured(chain_run):
    with jitkern.graph.capture() as g:
        chain_run()
    g.upload()
    return g.launch


def cupy_cases(x0):
    """(name, issue, sync, result) for CuPy's RawKernel and cupyx.jit chains, one by one and
    captured by CuPy; [] where CuPy is missing."""
    try:
        import cupy
    except Exception:
        return []
    cases = []
    k = cupy.RawKernel(STEP_SOURCE, "step")
    n = np.int32(N)
    kernels = [("CuPy RawKernel", lambda x, y: k((BLOCKS,), (THREADS,), (x, y, n)))]
    try:
        from cupyx import jit as cjit

        @cjit.rawkernel()
        def cupy_jit_step(x, y, size):
            i = cjit.blockIdx.x * cjit.blockDim.x + cjit.threadIdx.x
            if i < size:
                y[i] = x[i] * np.float32(0.5) + np.float32(1.0)

        kernels.append(("cupyx.jit", lambda x, y: cupy_jit_step((BLOCKS,), (THREADS,), (x, y, n))))
    except Exception as exc:  # report, do not hide
        print(f"cupyx.jit unavailable: {exc}")
    stream = cupy.cuda.Stream(non_blocking=True)
    for name, launch in kernels:
        a = cupy.asarray(x0)
        b = cupy.empty_like(a)

        def run(a=a, b=b, launch=launch):
            x, y = a, b
            for _ in range(CHAIN):
                launch(x, y)
                x, y = y, x

        with stream:
            run()  # compile outside the capture
            stream.synchronize()
            stream.begin_capture()
            run()
            graph = stream.end_capture()
        graph.upload(stream)

        def sync(stream=stream):
            stream.synchronize()

        def result(a=a):
            return cupy.asnumpy(a)

        def one_by_one(run=run, stream=stream):
            with stream:
                run()

        cases.append((f"{name}, one by one", one_by_one, sync, result, a, x0))
        cases.append((f"{name}, CuPy graph replay", lambda g=graph, s=stream: g.launch(s), sync,
                      result, a, x0))
    return cases


# -- timing ----------------------------------------------------------------------------


def host_and_end_to_end(issue, sync) -> tuple[list, list]:
    """Per round: host us of ``issue()`` with the GPU idle before it; us of issue + sync."""
    sync()
    t0 = time.perf_counter()
    issue()
    t1 = time.perf_counter()
    sync()
    t2 = time.perf_counter()
    return (t1 - t0) * 1e6, (t2 - t0) * 1e6


def chain_table(x0: np.ndarray):
    a = jitkern.asarray(x0)
    b = jitkern.empty_like(a)
    sync = jitkern.synchronize
    one = jitkern_chain(a, b)
    one()  # compile and make the fast launchers outside the capture
    sync()
    cases = [
        ("bare cuLaunchKernel x100 (floor)", bare_chain(a, b), sync, a.get, a, x0),
        ("jitkern @rawkernel, one by one", one, sync, a.get, a, x0),
        ("jitkern bound launches, one by one", bound_chain(a, b), sync, a.get, a, x0),
        ("jitkern graph replay", captured(one), sync, a.get, a, x0),
        *cupy_cases(x0),
    ]
    expected = reference(x0)
    rows = []
    for name, issue, case_sync, result, arr, start in cases:
        arr.set(start)  # jitkern and CuPy arrays both have set()
        issue()
        case_sync()
        got = result()
        same = bool(np.array_equal(got, expected))
        err = float(np.max(np.abs(got - expected)))
        hosts, ends = zip(*(host_and_end_to_end(issue, case_sync) for _ in range(ROUNDS)))
        host, end = statistics.median(hosts), statistics.median(ends)
        rows.append([name, host, end, "yes" if same else f"NO (max err {err:.3g})"])
    one_host, one_end = rows[1][1], rows[1][2]  # jitkern one by one
    for row in rows:
        row.insert(2, one_host / row[1])
        row.insert(4, one_end / row[3])
    return rows


def bind_table():
    """Bound launch vs bare cuLaunchKernel for one 4-argument kernel, interleaved rounds."""
    src = r"""
    extern "C" __global__ void four_args(const float* x, const float* y, float* z, float a) {
        unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < 1) z[i] = x[i] * a + y[i];
    }
    """
    k = jitkern.RawKernel(src, "four_args")
    x = jitkern.asarray(np.ones(32, np.float32))
    y, z = jitkern.empty_like(x), jitkern.empty_like(x)
    args = (x, y, z, np.float32(2.0))
    k((1,), (32,), args)
    bound = k.bind((1,), (32,), *args)
    handle = k.kernel.handle()
    storage = ctypes.create_string_buffer(
        struct.pack("<QQQf", x.data.ptr, y.data.ptr, z.data.ptr, 2.0), 32)
    base = ctypes.addressof(storage)
    pointers = (ctypes.c_void_p * 4)(base, base + 8, base + 16, base + 24)
    params = ctypes.addressof(pointers)
    launch = drv().cuLaunchKernel

    def bare():
        launch(handle, 1, 1, 1, 32, 1, 1, 0, 0, params, 0)

    def call():
        k((1,), (32,), args)

    cases = [("bare cuLaunchKernel (pre-packed)", bare), ("kernel.bind(...)()", bound),
             ("RawKernel call", call)]
    results = interleaved(cases, 20000, 11)  # (median us, median per-round ratio to bare)
    return [[name, *results[name]] for name, _ in cases]


def table(headers, rows) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for row in rows:
        out.append("| " + " | ".join(f"{c:.3g}" if isinstance(c, float) else str(c)
                                     for c in row) + " |")
    return "\n".join(out)


def main():
    dev = driver.current_device_id()
    label = f"{driver.device_name(dev)}, {datetime.date.today().isoformat()}"
    x0 = np.random.default_rng().standard_normal(N).astype(np.float32)
    chain = chain_table(x0)
    bind = bind_table()
    print(f"\n## {CHAIN} dependent launches of {N} float32 ({label})\n")
    print(table(["way", "host us per chain", "speed-up vs one by one (host)",
                 "issue+sync us", "speed-up (end to end)", "result == NumPy"], chain))
    print(f"\n## one launch re-issued ({label})\n")
    print(table(["call", "host us per launch", "x bare (median of per-round ratios)"], bind))


if __name__ == "__main__":
    from needs import require_gpu  # (benchmarks/ is on sys.path: the script's folder)

    require_gpu(__file__)
    main()
