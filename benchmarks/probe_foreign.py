"""What reading a foreign array costs: each attribute a launcher may read, per library.

    PYTHONPATH=. python benchmarks/probe_foreign.py [--sources]

Prints ns per read (timeit, best of 5) for CuPy arrays, PyTorch tensors and JAX arrays:
the floors under issue 11's "every array kind within 1.10x" target. With ``--sources``
also prints the launchers jitkern generates for a 4-argument @rawkernel and an
ElementwiseKernel called with each kind.
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


def show_sources():
    import jitkern
    from jitkern import jit
    from jitkern.backend import codegen

    seen = []
    real = codegen.compiled

    def record(source, filename):
        seen.append((filename, source))
        return real(source, filename)

    codegen.compiled = record  # every generated launcher goes through define -> compiled

    @jit.rawkernel()
    def four(x, y, z, a):
        i = jit.threadIdx.x
        if i < 1:
            z[i] = x[i] * a + y[i]

    ek = jitkern.ElementwiseKernel("float32 x, float32 y", "float32 z", "z = x - y", "probe_sub")
    host = np.arange(1024, dtype=np.float32)
    for kind, make in makers().items():
        x, y, z = make(host), make(host), make(host)
        for _ in range(3):
            four[1, 32](x, y, z, np.float32(2))
            ek(x, y, z)
        print(f"## generated for {kind}")
        for filename, source in seen:
            print(f"--- {filename}\n{source}")
        seen.clear()


if __name__ == "__main__":
    main(sys.argv[1:])
