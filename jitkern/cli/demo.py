"""``python -m jitkern demo``: compile example kernels of every kind and run them.

With a GPU, each demo runs on fresh random data and is checked against NumPy.
Without one, it says so and shows the generated CUDA and its resource use instead;
``--simulate`` runs every kind in the CPU simulator instead, checked against NumPy.
"""

from __future__ import annotations

import inspect as _pyinspect
import sys
import textwrap

import numpy as np

from ..toolchain import nvrtc

ADD_SOURCE = r"""
extern "C" __global__
void my_add(const float* x1, const float* x2, float* y, int n) {
    int tid = blockDim.x * blockIdx.x + threadIdx.x;
    if (tid < n) y[tid] = x1[tid] + x2[tid];
}
"""


def _raw_demo(rng, on_gpu: bool, arch):
    import jitkern

    k = jitkern.RawKernel(ADD_SOURCE, "my_add")
    if not on_gpu:
        return "RawKernel my_add", (k.inspect(arch=arch), ADD_SOURCE.strip())
    n = 1 << 20
    a, b = rng.standard_normal((2, n)).astype(np.float32)
    y = jitkern.full(n, np.nan, np.float32)
    k(((n + 255) // 256,), (256,), (jitkern.asarray(a), jitkern.asarray(b), y, np.int32(n)))
    return "RawKernel my_add", np.array_equal(y.get(), a + b)


def _elementwise_demo(rng, on_gpu: bool, arch):
    import jitkern

    k = jitkern.ElementwiseKernel("float32 x, float32 y", "float32 z",
                                  "z = (x - y) * (x - y)", "squared_diff")
    x = rng.standard_normal((512, 1024)).astype(np.float32)
    y = rng.standard_normal(1024).astype(np.float32)
    if not on_gpu:
        return "ElementwiseKernel squared_diff", (k.inspect(x, y, arch=arch), _definition(
            'ElementwiseKernel("float32 x, float32 y", "float32 z",',
            '                  "z = (x - y) * (x - y)", "squared_diff")'))
    z = k(jitkern.asarray(x), jitkern.asarray(y))
    return "ElementwiseKernel squared_diff", np.allclose(z.get(), (x - y) ** 2, rtol=1e-6)


def _reduction_demo(rng, on_gpu: bool, arch):
    import jitkern

    k = jitkern.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")
    x = rng.standard_normal((256, 4096)).astype(np.float32)
    if not on_gpu:
        return "ReductionKernel l2norm", (k.inspect(x, axis=1, arch=arch), _definition(
            'ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")',
            "called as l2norm(x, axis=1) for x of shape (256, 4096) float32"))
    got = k(jitkern.asarray(x), axis=1).get()
    return "ReductionKernel l2norm", np.allclose(got, np.sqrt((x.astype(np.float64) ** 2).sum(1)),
                                                 rtol=1e-5)


def _jit_demo(rng, on_gpu: bool, arch):
    from jitkern import jit
    from jitkern.cli.demo_kernels import grid_stride_copy

    x = rng.standard_normal(1 << 20).astype(np.float32)
    if not on_gpu:
        return "@jit.rawkernel grid_stride_copy", (grid_stride_copy.inspect(
            x, x, np.uint32(x.size), arch=arch),
            _pyinspect.getsource(grid_stride_copy.py_func).strip())
    import jitkern

    y = jitkern.full(x.size, np.nan, np.float32)
    grid_stride_copy[128, 1024](jitkern.asarray(x), y, np.uint32(x.size))
    del jit
    return "@jit.rawkernel grid_stride_copy", np.array_equal(y.get(), x)


def _definition(*lines: str) -> str:
    return "\n".join(lines)


DEMOS = [_raw_demo, _elementwise_demo, _reduction_demo, _jit_demo]


def check_arch(arch) -> str | None:
    """Why ``--arch`` cannot be used (None when NVRTC compiles for it): checked once, up front."""
    if arch is None:
        return None
    try:
        nvrtc.target_for(arch, None)
    except Exception as exc:  # noqa: BLE001 - any refusal is the message to show
        return str(exc)
    return None


def _simulated_demos(rng) -> int:
    """``demo --simulate``: the JIT demos on the CPU (jitkern's simulator), checked."""
    from jitkern.cli.demo_kernels import block_sum, grid_stride_copy

    print("Running the demos of every kernel kind in the simulator (on the CPU, GPU semantics).")
    x = rng.standard_normal(1 << 16).astype(np.float32)
    y = np.full(x.size, np.nan, np.float32)
    grid_stride_copy.simulate[128, 1024](x, y, np.uint32(x.size))
    copied = np.array_equal(y, x)
    print(f"[{'ok' if copied else 'FAIL'}] @jit.rawkernel grid_stride_copy (simulated): "
          "checked against NumPy")
    out = np.zeros(1, np.float32)
    block_sum.simulate[16, 256](x, out, x.size)
    want = x.astype(np.float64).sum()
    summed = abs(float(out[0]) - want) <= 1e-4 * np.abs(x).sum()
    print(f"[{'ok' if summed else 'FAIL'}] @jit.rawkernel block_sum (shared memory, shuffles, "
          f"syncthreads, atomic_add; simulated): {out[0]:.4f} vs NumPy {want:.4f}")
    strings_ok = _simulated_string_demos(rng)
    return 0 if copied and summed and strings_ok else 1


def _simulated_string_demos(rng) -> bool:
    """The RawKernel, ElementwiseKernel and ReductionKernel demos in the simulator (their
    C translated into JIT kernels), checked against NumPy."""
    import jitkern

    n = 1 << 12
    a, b = rng.standard_normal((2, n)).astype(np.float32)
    y = np.full(n, np.nan, np.float32)
    jitkern.RawKernel(ADD_SOURCE, "my_add").simulate[(n + 255) // 256, 256](a, b, y, np.int32(n))
    results = [("RawKernel my_add", np.array_equal(y, a + b))]
    sq = jitkern.ElementwiseKernel("float32 x, float32 y", "float32 z",
                                   "z = (x - y) * (x - y)", "squared_diff")
    x = rng.standard_normal((16, 64)).astype(np.float32)
    yb = rng.standard_normal(64).astype(np.float32)
    results.append(("ElementwiseKernel squared_diff",
                    np.allclose(sq.simulate(x, yb), (x - yb) ** 2, rtol=1e-6)))
    l2 = jitkern.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")
    want = np.sqrt((x.astype(np.float64) ** 2).sum(1))
    results.append(("ReductionKernel l2norm",
                    np.allclose(l2.simulate(x, axis=1), want, rtol=1e-5)))
    for name, ok in results:
        print(f"[{'ok' if ok else 'FAIL'}] {name} (simulated: its C as a JIT kernel): "
              "checked against NumPy")
    return all(ok for _, ok in results)


def run_demo(arch=None, simulate=False, full=False, prog="python -m jitkern") -> int:
    from jitkern.runtime import driver

    problem = check_arch(arch)
    if problem is not None:
        print(f"demo: --arch {arch}: {problem}", file=sys.stderr)
        return 2
    rng = np.random.default_rng()
    if simulate:
        return _simulated_demos(rng)
    on_gpu = driver.is_available()
    if on_gpu:
        dev = driver.current_device_id()
        major, minor = driver.compute_capability(dev)
        print(f"device {dev}: {driver.device_name(dev)} (sm_{major}{minor})")
    else:
        arch = arch or "sm_90"
        try:
            driver.drv()
            why = "the CUDA driver found no GPU"
        except Exception as exc:  # noqa: BLE001
            why = str(exc)
        print(f"no GPU here ({why}).")
        print(f"To run every demo on the CPU instead, in jitkern's simulator: {prog} demo "
              "--simulate")
        shown = "the CUDA each demo generates" if full else "each demo kernel as written"
        print(f"Showing {shown} and its resource use when compiled for {arch}.\n")
    failures = 0
    for demo in DEMOS:
        try:
            title, result = demo(rng, on_gpu, arch)
        except Exception as exc:  # noqa: BLE001 - the demo reports every case
            failures += 1
            print(f"[FAIL] {demo.__name__}: {type(exc).__name__}: {exc}")
            continue
        if on_gpu:
            failures += not result
            print(f"[{'ok' if result else 'FAIL'}] {title}: checked against NumPy")
        else:
            inspection, user_code = result
            print(f"==== {title} ({inspection.arch}: {inspection.registers} registers, "
                  f"{inspection.shared_bytes} B shared, {inspection.local_bytes} B local) ====")
            shown = inspection.source.strip() if full else user_code
            print(textwrap.indent(shown, "    "))
            if not full:
                lines = inspection.source.count("\n") + 1
                print(f"    (the generated CUDA is {lines} lines: --full shows it)")
            print()
    return 1 if failures else 0
