"""Issue 11's figures in one run: every kernel kind with every array kind, reductions
against CUB, mixed-dtype elementwise, each beside its floor.

    PYTHONPATH=. python benchmarks/bench_kernels.py [--quick]

1. Launch overhead (host us per call, 1,024 float32): RawKernel, @rawkernel
   ``k[grid, block]``, ElementwiseKernel (output passed / allocated), ReductionKernel
   (full, one output allocated), each with jitkern arrays, CuPy arrays, PyTorch tensors,
   JAX arrays where installed, a bare ``__cuda_array_interface__`` object and a DLPack-only
   object; CuPy's own kernels for reference. Floors: a bare ``cuLaunchKernel`` with a
   pre-packed buffer, and the same plus one pool allocation and free. Interleaved rounds,
   ratios are medians of per-round ratios to the bare launch.
2. Device figures (fraction of a device-to-device copy measured in the same run): full
   reductions (float32, float64, sum and L2 norm) against ``cupy.sum`` (CUB), reductions
   over axis sets of 3-D and 2-D arrays, elementwise float32 -> float64 with ``exp`` and a
   polynomial, contiguous and broadcast float32. Each figure twice: the device's time for
   the call's work (behind a spin kernel) and the single call as seen by events recorded
   just before and after it (host issue time included, as ``cupyx.profiler.benchmark``).
"""

from __future__ import annotations

import os
import statistics
import sys

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # JAX: leave memory to us

import numpy as np
from common import (
    FOUR_ARG_SOURCE,
    bare_launcher,
    device_label,
    interleaved,
    markdown_table,
    spin_gpu,
    today,
    try_import,
)

import jitkern
from jitkern import jit
from jitkern.runtime import driver, memory
from jitkern.runtime.device import Event, synchronize

N = 1024
SQ = ("float32 x, float32 y", "float32 z", "z = (x - y) * (x - y)", "squared_diff")
L2 = ("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")
SUM = ("T x", "T y", "x", "a + b", "y = a", "0", "ksum")
MIXED = (
    "float32 x",
    "float64 y",
    "y = exp(x) + x * (1.5 + x * (0.25 + x * (0.125 - 0.0625 * x)))",
    "mixed_exp_poly",
)


@jit.rawkernel()
def four_args(x, y, z, a):
    i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    if i < 1:
        z[i] = x[i] * a + y[i]


class CAIArray:
    """Nothing but ``__cuda_array_interface__`` (like a Numba device array)."""

    def __init__(self, base):
        self._cai = base.__cuda_array_interface__
        self._base = base

    @property
    def __cuda_array_interface__(self):
        return self._cai


class DLPackArray:
    """Nothing but ``__dlpack__`` / ``__dlpack_device__`` (of a CuPy array where CuPy is
    installed: a producer written in C, as most are)."""

    def __init__(self, base):
        self._base = base

    def __dlpack__(self, **kwargs):
        return self._base.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._base.__dlpack_device__()


def array_kinds():
    """(name, make(numpy array) -> device array) for every array kind available."""
    kinds = [("jitkern", jitkern.asarray)]
    cp = try_import("cupy")
    if cp is not None:
        kinds.append(("CuPy", cp.asarray))
    torch = try_import("torch")
    if torch is not None and torch.cuda.is_available():
        kinds.append(("PyTorch", lambda a: torch.as_tensor(a, device="cuda")))
    jax = try_import("jax")
    if jax is not None:
        try:
            gpu = jax.devices("gpu")[0]
            kinds.append(("JAX", lambda a: jax.device_put(a, gpu)))
        except Exception:
            pass
    kinds.append(("CAI object", lambda a: CAIArray(jitkern.asarray(a))))
    if cp is not None:
        kinds.append(("DLPack object", lambda a: DLPackArray(cp.asarray(a))))
    else:
        kinds.append(("DLPack object", lambda a: DLPackArray(jitkern.asarray(a))))
    return kinds


def alloc_floor():
    """The bare launch plus one driver pool allocation and its free
    (``cuMemAllocFromPoolAsync`` + ``cuMemFreeAsync``): what an allocating call cost
    before jitkern's cache of freed blocks."""
    call, keep = bare_launcher()
    dev = driver.current_device_id()
    memory.malloc(16, dev, 0)  # sets up the pool
    pool, d = memory._pools[dev], driver.drv()
    alloc, free = d.cuMemAllocFromPoolAsync, d.cuMemFreeAsync

    def run():
        _err, ptr = alloc(4 * N, pool, 0)
        call()
        free(ptr, 0)

    return run, keep


def cached_floor():
    """The bare launch plus one allocation from jitkern's cache and its free
    (``memory.malloc``, a block freed on the same stream: no driver call)."""
    call, keep = bare_launcher()
    dev = driver.current_device_id()
    malloc = memory.malloc

    def run():
        m = malloc(4 * N, dev, 0)
        call()
        del m

    return run, keep


def dlpack_floor(kinds):
    """``__dlpack__`` alone (the producer's capsule) for the DLPack object, and the
    same plus jitkern's reading of it: the least a DLPack-only argument costs."""
    make = dict(kinds)["DLPack object"]
    obj = make(np.ones(N, np.float32))
    from jitkern.arrays import _dlpack

    def capsule():
        obj.__dlpack__(stream=1, max_version=(1, 0))

    def read():
        _dlpack.read_capsule(obj.__dlpack__(stream=1, max_version=(1, 0)))

    return capsule, read


def launch_cases(kinds):
    rk = jitkern.RawKernel(FOUR_ARG_SOURCE, "four_args")
    ek = jitkern.ElementwiseKernel(*SQ)
    red = jitkern.ReductionKernel(*L2)
    a = np.float32(2.0)
    host = np.random.default_rng(0).random(N, dtype=np.float32)
    cases = []
    for name, make in kinds:
        x, y, z = make(host), make(host + 1), make(host * 0)
        launcher = four_args[1, 32]
        cases += [
            (("RawKernel (4 args)", name), lambda x=x, y=y, z=z: rk((1,), (32,), (x, y, z, a))),
            (
                ("@rawkernel k[grid, block] (4 args)", name),
                lambda x=x, y=y, z=z, k=launcher: k(x, y, z, a),
            ),
            (("ElementwiseKernel, output passed", name), lambda x=x, y=y, z=z: ek(x, y, z)),
            (("ElementwiseKernel, output allocated", name), lambda x=x, y=y: ek(x, y)),
            (("ReductionKernel (full, one output)", name), lambda x=x: red(x)),
        ]
    cp = try_import("cupy")
    if cp is not None:
        crk = cp.RawKernel(FOUR_ARG_SOURCE, "four_args")
        cek = cp.ElementwiseKernel(*SQ)
        cred = cp.ReductionKernel(*L2)
        cx, cy, cz = cp.asarray(host), cp.asarray(host + 1), cp.asarray(host * 0)
        cases += [
            (("RawKernel (4 args)", "CuPy's own"), lambda: crk((1,), (32,), (cx, cy, cz, a))),
            (("ElementwiseKernel, output passed", "CuPy's own"), lambda: cek(cx, cy, cz)),
            (("ElementwiseKernel, output allocated", "CuPy's own"), lambda: cek(cx, cy)),
            (("ReductionKernel (full, one output)", "CuPy's own"), lambda: cred(cx)),
        ]
    return cases


LAUNCH_TARGETS = {
    "RawKernel (4 args)": 1.15,
    "@rawkernel k[grid, block] (4 args)": 1.25,
    "ElementwiseKernel, output passed": 1.25,
    "ElementwiseKernel, output allocated": 1.6,
    "ReductionKernel (full, one output)": 2.5,
}


def launch_table(quick: bool) -> str:
    kinds = array_kinds()
    bare, _keep = bare_launcher()
    floor2, _keep2 = alloc_floor()
    floor3, _keep3 = cached_floor()
    capsule, read = dlpack_floor(kinds)
    cases = [("bare", bare), ("alloc", floor2), ("cached", floor3)]
    cases += [("capsule", capsule), ("capsule+read", read)]
    failed = {}
    for name, fn in launch_cases(kinds):
        try:
            fn()
            cases.append((name, fn))
        except Exception as exc:  # noqa: BLE001 - reported in the table
            failed[name] = f"{type(exc).__name__}: {str(exc)[:80]}"
    res = interleaved(cases, 2000 if quick else 10000, 5 if quick else 11)
    cols = [name for name, _ in kinds] + (["CuPy's own"] if try_import("cupy") else [])
    lines = [
        (
            f"Floor: bare cuLaunchKernel {res['bare'][0]:.2f} us (1x); with one driver pool "
            f"allocation + free {res['alloc'][0]:.2f} us ({res['alloc'][1]:.2f}x); with one "
            f"allocation + free from jitkern's cache {res['cached'][0]:.2f} us "
            f"({res['cached'][1]:.2f}x)\n"
        ),
        (
            f"DLPack object alone: __dlpack__ {res['capsule'][0]:.2f} us "
            f"({res['capsule'][1]:.2f}x of a launch), __dlpack__ + jitkern reading the capsule "
            f"{res['capsule+read'][0]:.2f} us ({res['capsule+read'][1]:.2f}x)\n"
        ),
    ]
    rows = []
    for kind, target in LAUNCH_TARGETS.items():
        row = [kind]
        for col in cols:
            r = res.get((kind, col))
            row.append(f"{r[1]:.2f}x ({r[0]:.2f} us)" if r else failed.get((kind, col), ""))
        row.append(f"<= {target}x")
        rows.append(row)
    cx = try_import("cupy")
    if cx is not None:
        ref = cupyx_jit_us(cx)
        if ref is not None:
            lines.append(
                f"cupyx.jit.rawkernel k[grid, block] (separate loop): {ref:.1f} us, "
                f"{ref / res['bare'][0]:.1f}x\n"
            )
    # Issue 11: every array kind within 1.10x of the same call with jitkern arrays.
    rel_rows = []
    for kind in LAUNCH_TARGETS:
        base = res.get((kind, "jitkern"))
        row = [kind]
        for col in cols[1:]:
            r = res.get((kind, col))
            row.append(f"{r[1] / base[1]:.2f}x" if r and base else "")
        rel_rows.append(row + ["<= 1.10x"])
    return ("\n".join(lines) + "\n" + markdown_table(["call", *cols, "target"], rows)
            + "\n\nThe same calls relative to jitkern arrays:\n\n"
            + markdown_table(["call", *cols[1:], "target"], rel_rows))


def cupyx_jit_us(cp):
    try:
        from cupyx import jit as cjit

        @cjit.rawkernel()
        def cfour(x, y, z, a):
            i = cjit.blockIdx.x * cjit.blockDim.x + cjit.threadIdx.x
            if i < 1:
                z[i] = x[i] * a + y[i]

        x = cp.ones(32, cp.float32)
        args = (x, cp.empty_like(x), cp.empty_like(x), np.float32(2))
        cfour[1, 32](*args)
        return interleaved([("c", lambda: cfour[1, 32](*args))], 500, 3)["c"][0]
    except Exception:
        return None


# ---------------------------------------------------------------------------
# Device figures.


def device_ms(fn, reps: int) -> tuple[float, float]:
    """(device time behind a spin kernel, single call between two events), medians, ms."""
    for _ in range(3):
        fn()
    synchronize()
    dev, single = [], []
    for _ in range(reps):
        start, end = Event(), Event()
        spin_gpu()
        start.record()
        fn()
        end.record()
        dev.append(start.elapsed_time(end))
        synchronize()
        start, end = Event(), Event()
        start.record()
        fn()
        end.record()
        end.synchronize()
        single.append(start.elapsed_time(end))
    return statistics.median(dev), statistics.median(single)


def copy_gbs(nbytes: int, reps: int) -> float:
    src = jitkern.empty((nbytes,), np.uint8)
    dst = jitkern.empty((nbytes,), np.uint8)
    src.fill(3)
    ms, _ = device_ms(lambda: memory.memcpy_dtod(dst.data.ptr, src.data.ptr, nbytes), reps)
    return 2 * nbytes / (ms * 1e-3) / 1e9


def device_table(quick: bool) -> str:
    reps = 7 if quick else 15
    n = 1 << (24 if quick else 28)
    copy = copy_gbs(4 * n, reps)
    cp = try_import("cupy")
    rng = np.random.default_rng(1)
    rows = []

    def add(name, nbytes, fn, ref=""):
        try:
            dev, single = device_ms(fn, reps)
        except Exception as exc:  # noqa: BLE001 - reported in the table
            rows.append([name, f"failed: {type(exc).__name__}: {str(exc)[:100]}", "", "", ref])
            return
        rows.append(
            [
                name,
                f"{dev * 1e3:.0f}",
                f"{100 * nbytes / (dev * 1e-3) / 1e9 / copy:.1f}%",
                f"{100 * nbytes / (single * 1e-3) / 1e9 / copy:.1f}%",
                ref,
            ]
        )

    l2, ksum = jitkern.ReductionKernel(*L2), jitkern.ReductionKernel(*SUM)
    for dt in (np.float32, np.float64):
        count = n if dt == np.float32 else n // 2
        host = rng.standard_normal(count).astype(dt)
        x = jitkern.asarray(host)
        nb = host.nbytes
        tag = f"2^{int(np.log2(count))} {np.dtype(dt).name}"
        add(f"ReductionKernel sum, {tag}, full", nb, lambda x=x: ksum(x))
        add(f"ReductionKernel l2norm (x*x, sqrt), {tag}, full", nb, lambda x=x: l2(x))
        if cp is not None:
            cx = cp.asarray(host)
            add(f"cupy.sum (CUB), {tag}", nb, lambda cx=cx: cp.sum(cx), "CuPy")
            add(f"ReductionKernel sum, {tag}, CuPy input", nb, lambda cx=cx: ksum(cx))
        if dt == np.float64:
            got, want = float(ksum(x).get()), float(np.sum(host, dtype=np.float64))
            rows.append(
                [
                    f"(check: float64 sum rel. error {abs(got - want) / abs(want):.1e})",
                    "",
                    "",
                    "",
                    "",
                ]
            )
        del x
    shape3 = (256, 256, 1024) if quick else (1024, 256, 1024)
    host3 = rng.standard_normal(shape3).astype(np.float32)
    x3 = jitkern.asarray(host3)
    nb3 = host3.nbytes
    for axis, keep in (((0, 2), False), ((0, 2), True), (0, False), (-1, False), ((1, 2), False)):
        add(
            f"ReductionKernel l2norm {shape3}, axis={axis}" + (", keepdims" if keep else ""),
            nb3,
            lambda axis=axis, keep=keep, x3=x3: l2(x3, axis=axis, keepdims=keep),
        )
    if cp is not None:
        cx3 = cp.asarray(host3)
        cl2 = cp.ReductionKernel(*L2)
        add(
            f"CuPy ReductionKernel l2norm {shape3}, axis=(0, 2)",
            nb3,
            lambda: cl2(cx3, axis=(0, 2)),
            "CuPy",
        )
        add(f"cupy.sum {shape3}, axis=(0, 2)", nb3, lambda: cp.sum(cx3, axis=(0, 2)), "CuPy")
        del cx3
    got = jitkern.asnumpy(l2(x3, axis=(0, 2))).astype(np.float64)
    want = np.sqrt((host3.astype(np.float64) ** 2).sum(axis=(0, 2)))
    rows.append(
        [
            f"(check: axis=(0, 2) max rel. error {np.max(np.abs(got - want) / want):.1e}; "
            f"same bits twice: {bool((jitkern.asnumpy(l2(x3, axis=(0, 2))) == got.astype(np.float32)).all())})",
            "",
            "",
            "",
            "",
        ]
    )
    del x3
    side = 1 << (12 if quick else 14)
    m = jitkern.asarray(rng.standard_normal((side, side)).astype(np.float32))
    add(
        f"ReductionKernel l2norm ({side}, {side}), axis=0",
        4 * side * side,
        lambda m=m: l2(m, axis=0),
    )
    add(
        f"ReductionKernel l2norm ({side}, {side}), axis=1",
        4 * side * side,
        lambda m=m: l2(m, axis=1),
    )
    del m
    # Elementwise.
    xf = rng.standard_normal(n).astype(np.float32)
    x = jitkern.asarray(xf)
    y64 = jitkern.empty((n,), np.float64)
    mixed = jitkern.ElementwiseKernel(*MIXED)
    add(
        "ElementwiseKernel float32 -> float64, exp + polynomial",
        12 * n,
        lambda y64=y64: mixed(x, y64),
    )
    got = jitkern.asnumpy(y64[:4096])
    x64 = xf[:4096].astype(np.float64)
    want = np.exp(xf[:4096]).astype(np.float64) + x64 * (
        1.5 + x64 * (0.25 + x64 * (0.125 - 0.0625 * x64))
    )
    rows.append(
        [f"(check: max rel. error {np.max(np.abs(got - want) / np.abs(want)):.1e})", "", "", "", ""]
    )
    if cp is not None:
        cmixed = cp.ElementwiseKernel(*MIXED)
        cxf, cy64 = cp.asarray(xf), cp.empty(n, cp.float64)
        add(
            "CuPy ElementwiseKernel float32 -> float64, exp + polynomial",
            12 * n,
            lambda: cmixed(cxf, cy64),
            "CuPy",
        )
        del cxf, cy64
    del y64
    sq = jitkern.ElementwiseKernel(*SQ)
    y = jitkern.asarray(rng.standard_normal(n).astype(np.float32))
    z = jitkern.empty((n,), np.float32)
    add("ElementwiseKernel squared_diff float32, contiguous", 12 * n, lambda: sq(x, y, z))
    side = int(np.sqrt(n))
    mx, row, mz = x.reshape(side, side), y[:side], z.reshape(side, side)
    add(
        f"ElementwiseKernel squared_diff ({side}, {side}) - a row (broadcast)",
        8 * n,
        lambda: sq(mx, row, mz),
    )
    header = (
        f"Copy: {copy:.0f} GB/s (read + write, {4 * n >> 20} MiB). Reductions count bytes "
        "read, elementwise bytes read + written.\n\n"
    )
    return header + markdown_table(
        ["case", "device us", "of copy (device)", "of copy (single call)", ""], rows
    )


def main(argv) -> None:
    quick = "--quick" in argv
    print(f"# Kernels by array kind, {device_label()}, {today()}\n")
    if "--device-only" not in argv:
        print("## Launch overhead (host time per call; x = ratio to the bare launch)\n")
        print(launch_table(quick), flush=True)
    if "--launch-only" not in argv:
        print("\n## Device figures\n")
        print(device_table(quick), flush=True)


if __name__ == "__main__":
    from needs import require_gpu  # (benchmarks/ is on sys.path: the script's folder)

    require_gpu(__file__)
    main(sys.argv[1:])
