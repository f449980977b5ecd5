"""What reading a foreign array costs: each attribute a launcher may read, per library.

    PYTHONPATH=. python benchmarks/probe_foreign.py [--sources]
    PYTHONPATH=. python benchmarks/probe_foreign.py --launchers

Prints ns per read (timeit, best of 5) for CuPy arrays, PyTorch tensors and JAX arrays:
the floors under issue 11's "every array kind within 1.10x" target. With ``--sources``
also prints the launchers jitkern generates for a 4-argument @rawkernel and an
ElementwiseKernel called with each kind. ``--launchers`` times those generated launchers
with ``cuLaunchKernel`` replaced by a stub: jitkern's own Python work per call, per kind.
"""

from __future__ import annotations

import os
import sys
import timeit

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import numpy as np
from common import try_import

READS = {
    "CuPy": ["a.dtype", "a._c_contiguous", "a.ndim", "a.data", "a.data.ptr", "a.data.device_id",
             "a.shape", "a.strides", "a.size", "a.__cuda_array_interface__", "type(a)"],
    "PyTorch": ["a.dtype", "a.dim()", "a.ndim", "a.is_contiguous()", "a.is_cuda", "a.data_ptr()",
                "a.get_device()", "a.device", "a.shape", "a.stride()", "a.numel()",
                "a.__cuda_array_interface__"],
    "JAX": ["a.dtype", "a.ndim", "a.shape", "a.unsafe_buffer_pointer()",
            "a.__cuda_array_interface__", "a.is_fully_addressable", "a.committed",
            "a.sharding", "a._committed", "a.is_deleted()", "a.__dlpack_device__()"],
}


def makers():
    out = {}
    cp = try_import("cupy")
    if cp is not None:
        out["CuPy"] = lambda h: cp.asarray(h)
    torch = try_import("torch")
    if torch is not None and torch.cuda.is_available():
        out["PyTorch"] = lambda h: torch.as_tensor(h, device="cuda")
    jax = try_import("jax")
    if jax is not None:
        try:
            gpu = jax.devices("gpu")[0]
            out["JAX"] = lambda h: jax.device_put(h, gpu)
        except RuntimeError:
            pass
    return out


def main(argv):
    host = np.arange(1024, dtype=np.float32)
    for kind, make in makers().items():
        a = make(host)
        print(f"## {kind}: {type(a).__module__}.{type(a).__qualname__}")
        for expr in READS[kind]:
            try:
                eval(expr, {"a": a})
            except Exception as exc:  # noqa: BLE001 - reported
                print(f"  {expr:40s} fails: {type(exc).__name__}: {exc}")
                continue
            t = min(timeit.repeat(expr, globals={"a": a}, number=100000, repeat=5))
            print(f"  {expr:40s} {t / 100000 * 1e9:8.1f} ns")
    if "--sources" in argv:
        show_sources()


def warmed_kinds():
    """(kind, @rawkernel, ElementwiseKernel, (x, y, z)) per array kind, each kernel called
    three times with that kind's arrays (its generated launcher is then installed)."""
    import jitkern
    from jitkern import jit

    @jit.rawkernel()
    def four(x, y, z, a):
        i = jit.threadIdx.x
        if i < 1:
            z[i] = x[i] * a + y[i]

    ek = jitkern.ElementwiseKernel("float32 x, float32 y", "float32 z", "z = x - y", "probe_sub")
    host = np.arange(1024, dtype=np.float32)
    for kind, make in {"jitkern": jitkern.asarray, **makers()}.items():
        x, y, z = make(host), make(host), make(host)
        for _ in range(3):
            four[1, 32](x, y, z, np.float32(2))
            ek(x, y, z)
        yield kind, four, ek, (x, y, z)


def show_sources():
    from jitkern.runtime import codegen

    seen = []
    real = codegen.compiled

    def record(source, filename):
        seen.append((filename, source))
        return real(source, filename)

    codegen.compiled = record  # every generated launcher goes through define -> compiled
    for kind, _four, _ek, _arrays in warmed_kinds():
        print(f"## generated for {kind}")
        for filename, source in seen:
            print(f"--- {filename}\n{source}")
        seen.clear()


def launcher_overhead():
    """Host ns of jitkern's generated launchers with cuLaunchKernel replaced by a stub: the
    Python work per call for each array kind, without the driver (interleaved rounds)."""
    import statistics
    import types

    def stubbed(kernel):
        fn = kernel.func
        env = dict(fn.__globals__)
        env["_launch"] = lambda *a: (0,)
        new = types.FunctionType(fn.__code__, env, fn.__name__, fn.__defaults__, fn.__closure__)
        kw = dict(fn.__kwdefaults__ or {})
        if "_launch" in kw:
            kw["_launch"] = env["_launch"]
        new.__kwdefaults__ = kw or None
        return new

    cases = []
    a = np.float32(2)
    for kind, four, ek, (x, y, z) in warmed_kinds():
        jit_run, ek_run = stubbed(four), stubbed(ek)
        cases.append((f"@rawkernel run, {kind}",
                      lambda r=jit_run, x=x, y=y, z=z: r((1,), (32,), (x, y, z, a))))
        cases.append((f"ElementwiseKernel entry, output passed, {kind}",
                      lambda r=ek_run, x=x, y=y, z=z: r(x, y, z)))
    samples = {name: [] for name, _ in cases}
    for r in range(7):
        for name, fn in cases[r % len(cases):] + cases[:r % len(cases)]:
            samples[name].append(min(timeit.repeat(fn, number=20000, repeat=3)) / 20000 * 1e9)
    print("## generated launchers, cuLaunchKernel stubbed (ns per call, median of 7 rounds)")
    for name, v in samples.items():
        print(f"  {name:60s} {statistics.median(v):8.0f} ns")


if __name__ == "__main__":
    from needs import require_gpu  # (benchmarks/ is on sys.path: the script's folder)

    require_gpu(__file__)
    if "--launchers" in sys.argv:
        launcher_overhead()
    else:
        main(sys.argv[1:])
