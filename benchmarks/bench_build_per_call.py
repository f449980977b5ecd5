"""A kernel object built again inside the calling function, per call, against a kept one.

Run: PYTHONPATH=. python benchmarks/bench_build_per_call.py [--cpu] [--quick]

Much CuPy code builds its kernel objects inside the function it times (CuPy's own SGEMM
example does): ``RawKernel(code, name)`` then a launch, on every call. jitkern keeps what
a build produced in a process-wide memo (runtime/memo.py, docs/cache.md), so an object
built again from the same definition reuses the compiled binary, the loaded module, the
parameter layout and the packing plan. Each row times, in one run and interleaved:

- *built per call*: the object made inside the timed function, then launched or called;
- *kept object*: the same launch on an object made once, before the timing;
- their ratio (the target is <= 1.2x), and CuPy's (cupyx.jit's for the ``@rawkernel``
  row) own per-call and kept figures where CuPy is installed, on CuPy arrays, in the same
  run.

Rows: ``RawKernel(code, name)`` + launch, ``ElementwiseKernel(...)`` + call,
``ReductionKernel(...)`` + call, ``RawModule(code=...).get_function(name)`` + launch, a
``@rawkernel`` decorated inside the function + launch, and a ``jitkern.fuse`` function
fused inside it + call.

``--cpu`` replaces the CUDA driver by the fake one (runtime/fakedriver.py, through
``driver.use``): the launches return at once, so the figures are jitkern's own Python
work per call, on a machine without a GPU (CuPy is not timed then). Kernels still
compile (NVRTC), for sm_90.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

RAW_SOURCE = r"""
extern "C" __global__ void axpy_per_call(const float* x, const float* y, float* z, float a,
                                         int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) z[i] = a * x[i] + y[i];
}
"""
N = 1 << 10


def make_axpy_jit(jit):
    """The ``@rawkernel`` row's kernel, decorated now, against ``jit`` (jitkern.jit or
    cupyx.jit: the same code, as a user ports it)."""
    @jit.rawkernel()
    def axpy_jit_per_call(x, y, z, a, n):
        i = jit.grid(1)
        if i < n:
            z[i] = a * x[i] + y[i]

    return axpy_jit_per_call


def make_axpy_fused(library):
    """The fuse row's function, fused now by ``library`` (jitkern or cupy)."""
    @library.fuse(kernel_name="axpy_fused_per_call")
    def axpy_fused(x, y, a):
        return a * x + y

    return axpy_fused


def install_cpu_driver():
    from jitkern.runtime import driver
    from jitkern.runtime.fakedriver import FakeDriver

    fake = FakeDriver(cc=(9, 0), record=False)
    driver.use(fake).__enter__()
    return fake


def _jitkern_cases(x, y, z):
    """{row: (built per call, kept object)} for jitkern."""
    import jitkern
    from jitkern import jit

    a, n = np.float32(2.0), np.int32(N)

    def raw_built():
        jitkern.RawKernel(RAW_SOURCE, "axpy_per_call")((N // 256,), (256,), (x, y, z, a, n))

    raw = jitkern.RawKernel(RAW_SOURCE, "axpy_per_call")

    def raw_kept():
        raw((N // 256,), (256,), (x, y, z, a, n))

    def ew():
        return jitkern.ElementwiseKernel("float32 x, float32 y, float32 a", "float32 z",
                                         "z = a * x + y", "axpy_ew_per_call")

    kept_ew = ew()

    def red():
        return jitkern.ReductionKernel("float32 x", "float32 y", "x * x", "a + b", "y = a", "0",
                                       "sumsq_per_call")

    kept_red = red()

    def module_built():
        kernel = jitkern.RawModule(code=RAW_SOURCE).get_function("axpy_per_call")
        kernel((N // 256,), (256,), (x, y, z, a, n))

    kept_module = jitkern.RawModule(code=RAW_SOURCE).get_function("axpy_per_call")

    def module_kept():
        kept_module((N // 256,), (256,), (x, y, z, a, n))

    def make_jit():
        return make_axpy_jit(jit)

    kept_jit = make_jit()

    def make_fused():
        return make_axpy_fused(jitkern)

    kept_fused = make_fused()
    return {
        "RawKernel(code, name) + launch": (raw_built, raw_kept),
        "ElementwiseKernel(...) + call": (lambda: ew()(x, y, a, z), lambda: kept_ew(x, y, a, z)),
        "ReductionKernel(...) + call": (lambda: red()(x), lambda: kept_red(x)),
        "RawModule(code=...).get_function(name) + launch": (module_built, module_kept),
        "@rawkernel decorated in the function + launch": (
            lambda: make_jit()[N // 256, 256](x, y, z, a, n),
            lambda: kept_jit[N // 256, 256](x, y, z, a, n)),
        "fuse in the function + call": (lambda: make_fused()(x, y, a),
                                        lambda: kept_fused(x, y, a)),
    }


def _cupy_cases():
    """The same rows in CuPy (cupyx.jit for the @rawkernel row), on CuPy arrays; {} where
    CuPy is not installed or has no GPU."""
    from common import try_import

    cp = try_import("cupy")
    if cp is None:
        return {}
    try:
        x = cp.ones(N, cp.float32)
    except Exception:  # noqa: BLE001 - installed without a usable GPU
        return {}
    y, z = cp.ones(N, cp.float32), cp.empty(N, cp.float32)
    a, n = np.float32(2.0), np.int32(N)
    raw = cp.RawKernel(RAW_SOURCE, "axpy_per_call")
    ew = lambda: cp.ElementwiseKernel("float32 x, float32 y, float32 a", "float32 z",  # noqa: E731
                                      "z = a * x + y", "axpy_ew_per_call")
    red = lambda: cp.ReductionKernel("float32 x", "float32 y", "x * x", "a + b",  # noqa: E731
                                     "y = a", "0", "sumsq_per_call")
    kept_ew, kept_red = ew(), red()
    kept_module = cp.RawModule(code=RAW_SOURCE).get_function("axpy_per_call")
    out = {
        "RawKernel(code, name) + launch": (
            lambda: cp.RawKernel(RAW_SOURCE, "axpy_per_call")((N // 256,), (256,), (x, y, z, a, n)),
            lambda: raw((N // 256,), (256,), (x, y, z, a, n))),
        "ElementwiseKernel(...) + call": (lambda: ew()(x, y, a, z), lambda: kept_ew(x, y, a, z)),
        "ReductionKernel(...) + call": (lambda: red()(x), lambda: kept_red(x)),
        "RawModule(code=...).get_function(name) + launch": (
            lambda: cp.RawModule(code=RAW_SOURCE).get_function("axpy_per_call")(
                (N // 256,), (256,), (x, y, z, a, n)),
            lambda: kept_module((N // 256,), (256,), (x, y, z, a, n))),
    }
    cupyx_jit = try_import("cupyx.jit")
    if cupyx_jit is not None:
        def make():
            return make_axpy_jit(cupyx_jit)

        kept = make()
        out["@rawkernel decorated in the function + launch"] = (
            lambda: make()[N // 256, 256](x, y, z, a, n),
            lambda: kept[N // 256, 256](x, y, z, a, n))

    def make_fused():
        return make_axpy_fused(cp)

    kept_fused = make_fused()
    out["fuse in the function + call"] = (lambda: make_fused()(x, y, a),
                                          lambda: kept_fused(x, y, a))
    return out


def _interleaved_us(pairs: dict, n: int, rounds: int, sync) -> dict:
    """{row: (built us, kept us, median ratio of the rounds)}: each round times every
    case n calls (then a sync), built and kept of one row side by side."""
    for built, kept in pairs.values():
        built(), kept(), built(), kept()
    sync()
    samples = {row: ([], []) for row in pairs}
    for _ in range(rounds):
        for row, (built, kept) in pairs.items():
            for side, fn in enumerate((built, kept)):
                t0 = time.perf_counter()
                for _ in range(n):
                    fn()
                sync()
                samples[row][side].append((time.perf_counter() - t0) / n * 1e6)
    return {row: (statistics.median(b), statistics.median(k),
                  statistics.median(x / y for x, y in zip(b, k)))
            for row, (b, k) in samples.items()}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpu", "--fake", action="store_true", help="the fake driver")
    parser.add_argument("--quick", action="store_true", help="fewer calls and rounds")
    opts = parser.parse_args(argv)
    if opts.cpu:
        install_cpu_driver()
    import jitkern
    from common import device_label, markdown_table, today

    n, rounds = (200, 3) if opts.quick else (2000, 7)
    x, y, z = (jitkern.empty(N, np.float32) for _ in range(3))
    ours = _interleaved_us(_jitkern_cases(x, y, z), n, rounds, jitkern.synchronize)
    theirs = {}
    if not opts.cpu:
        cupy_pairs = _cupy_cases()
        if cupy_pairs:
            import cupy

            theirs = _interleaved_us(cupy_pairs, n, rounds,
                                     cupy.cuda.get_current_stream().synchronize)
    rows = []
    for row, (built, kept, ratio) in ours.items():
        cp = theirs.get(row)
        rows.append([row, built, kept, ratio, cp[0] if cp else "", cp[1] if cp else "",
                     "<= 1.2x, <= CuPy's per call"])
    where = "driver stubbed (--cpu): jitkern's Python work" if opts.cpu else device_label()
    print(f"## A kernel object built per call vs a kept one, host us per call ({n} calls per "
          f"round, median of {rounds} interleaved rounds)\n")
    print(f"{where}, jitkern at {os.path.dirname(jitkern.__file__)}, {today()}\n")
    print(markdown_table(["row", "jitkern built per call", "jitkern kept", "x kept",
                          "CuPy built per call", "CuPy kept", "target"], rows))


if __name__ == "__main__":
    from needs import require_gpu  # (benchmarks/ is on sys.path: the script's folder)

    if not {"--cpu", "--fake"} & set(sys.argv[1:]):
        require_gpu(__file__)
    main()
