"""A fresh process whose kernels are in the disk cache loads only what a GPU launch needs.

Each kernel kind is built and launched once in a process that fills a temporary cache, then
in a fresh process per kind, on the fake driver (the runtime's one seam). The second
process must launch the kernel without compiling: NVRTC is not loaded (neither its bindings
nor its library), nor cuda-pathfinder, nor the parts of jitkern a warm GPU launch does not
use: the simulator (sim/, with the string kernels' C translator, which fuse's kernels use
too), the exporter, and the JIT's emitter and builtin tables (fuse, which traces its function in every process,
reads the ufunc rows without them). These are what a fresh process's first result waited
for (docs/performance.md, "First result in a fresh process").
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent

CHILD = r'''
import json, sys

import numpy as np

import jitkern
from jitkern.runtime import driver
from jitkern.runtime.fakedriver import FakeDriver

SRC = r"""
extern "C" __global__ void axpy(const float* x, const float* y, float* z, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) z[i] = a * x[i] + y[i];
}
"""
N = 1000


def fused_axpy(x, y, a):
    return a * x + y


def launch(kind, x, y, z):
    a, n = np.float32(2.5), np.int32(N)
    if kind == "raw":
        jitkern.RawKernel(SRC, "axpy")((4,), (256,), (x, y, z, a, n))
    elif kind == "module":
        jitkern.RawModule(code=SRC).get_function("axpy")((4,), (256,), (x, y, z, a, n))
    elif kind == "elementwise":
        jitkern.ElementwiseKernel("float32 x, float32 y, float32 a", "float32 z",
                                  "z = a * x + y", "probe_axpy")(x, y, a, z)
    elif kind == "reduction":
        jitkern.ReductionKernel("float32 x, float32 y", "float32 z", "x * y", "a + b",
                                "z = a", "0", "probe_dot")(x, y)
    elif kind == "jit":
        from first_call_jit import jit_axpy  # (the JIT reads its kernels from files)

        jit_axpy((4,), (256,), (x, y, z, a, n))
    elif kind == "fuse":
        jitkern.fuse()(fused_axpy)(x, y, a)


def loaded():
    modules = sorted(m for m in sys.modules if m.startswith(("jitkern", "cuda")))
    try:
        with open("/proc/self/maps") as f:
            libraries = sorted({line.rsplit("/", 1)[-1].strip() for line in f
                                if "libnvrtc" in line or "libnvJitLink" in line})
    except OSError:  # not Linux: the bindings' modules say it alone
        libraries = []
    return {"modules": modules, "libraries": libraries}


stages = {"import": loaded()}
fake = FakeDriver()
with driver.use(fake):
    x, y, z = (jitkern.empty(N, np.float32) for _ in range(3))
    stages["first array"] = loaded()
    kinds = sys.argv[1:]
    for kind in kinds:
        launch(kind, x, y, z)
    stages["first launch"] = loaded()
    stages["launched"] = sorted({fake.functions[launch.handle] for launch in fake.launches})
print(json.dumps(stages))
'''

JIT_KERNEL = '''
from jitkern import jit


@jit.rawkernel()
def jit_axpy(x, y, z, a, n):
    i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    if i < n:
        z[i] = a * x[i] + y[i]
'''

KINDS = ("raw", "module", "elementwise", "reduction", "jit", "fuse")
#: never loaded by a first launch whose binary is cached (whatever the kind)
NEVER = ("cuda.bindings.nvrtc", "cuda.bindings.nvjitlink", "cuda.pathfinder",
         "jitkern.sim", "jitkern.kernels._export_kinds", "jitkern.toolchain.export",
         "jitkern.compiler.statements", "jitkern.compiler.builtins")
#: the JIT's types, parser and program: only a @rawkernel's launch reads them
JIT_ONLY = ("jitkern.compiler.types", "jitkern.compiler.frontend", "jitkern.compiler.program",
            "jitkern.kernels.jit")


def _run(script: pathlib.Path, cache: pathlib.Path, *kinds: str) -> dict:
    env = dict(os.environ, JITKERN_CACHE_DIR=str(cache))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    for name in ("JITKERN_SIMULATE", "JITKERN_CACHE"):  # the simulator, no disk cache: not this
        env.pop(name, None)
    proc = subprocess.run([sys.executable, str(script), *kinds], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _loaded_of(modules: list, names) -> list:
    return [m for m in modules if any(m == n or m.startswith(n + ".") for n in names)]


@pytest.fixture(scope="module")
def warm_cache(tmp_path_factory):
    """A cache every kind's kernel is in (the process that filled it compiled with NVRTC)."""
    folder = tmp_path_factory.mktemp("first_call")
    script = folder / "first_call_child.py"
    script.write_text(CHILD)
    (folder / "first_call_jit.py").write_text(JIT_KERNEL)
    cache = folder / "cache"
    filled = _run(script, cache, *KINDS)
    # the detection works: the filling process did load NVRTC to compile
    assert "cuda.bindings.nvrtc" in filled["first launch"]["modules"]
    assert "axpy" in filled["launched"] and "jit_axpy" in filled["launched"]
    return script, cache


@pytest.mark.parametrize("kind", KINDS)
def test_a_cached_kernel_launches_in_a_fresh_process_without_the_compiler(warm_cache, kind):
    script, cache = warm_cache
    stages = _run(script, cache, kind)
    assert stages["launched"], f"{kind}: nothing was launched"
    modules = stages["first launch"]["modules"]
    assert _loaded_of(modules, NEVER) == [], f"{kind} loaded what a cached launch never needs"
    assert stages["first launch"]["libraries"] == [], "NVRTC/nvJitLink library loaded"
    if kind != "jit":
        assert _loaded_of(modules, JIT_ONLY) == [], f"{kind} loaded the JIT"


def test_import_and_first_array_load_no_kernel_or_compiler_module(warm_cache):
    script, cache = warm_cache
    stages = _run(script, cache, "raw")
    assert [m for m in stages["import"]["modules"] if m.startswith("cuda")] == []
    array = stages["first array"]["modules"]
    assert _loaded_of(array, ("jitkern.kernels", "jitkern.compiler", "jitkern.sim")) == []
    assert _loaded_of(array, ("cuda",)) == []  # the fake driver: nothing of cuda-python
