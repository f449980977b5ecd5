"""Pickling kernel objects: RawKernel, RawModule (also its kernels), ElementwiseKernel,
ReductionKernel and JIT kernels come back as equal definitions, and a fresh process gets
their binaries from the cache instead of compiling (a compile counter says so)."""

import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import jitkern
from jitkern.toolchain import cache

ARCH = "sm_90"
SRC = 'extern "C" __global__ void f(float* x, int n) { if (threadIdx.x < n) x[threadIdx.x] *= 2; }'
TEMPLATES = r"""
template <typename T> __global__ void fx3(T* a, int n) { if (threadIdx.x < n) a[threadIdx.x] *= 3; }
extern "C" __global__ void g(float* x) { x[0] = 1; }
"""


def roundtrip(obj):
    return pickle.loads(pickle.dumps(obj))


def test_raw_kernel_pickles_as_its_definition():
    k = jitkern.RawKernel(SRC, "f", options=("-DSCALE=2",), translate_cucomplex=True,
                          enable_cooperative_groups=True)
    back = roundtrip(k)
    assert type(back) is jitkern.RawKernel and back is not k
    assert (back.code, back.name, back.options, back.backend) == (k.code, k.name, k.options,
                                                                  k.backend)
    assert back.translate_cucomplex and back.enable_cooperative_groups and not back.jitify
    assert back._source == k._source


def test_raw_module_and_its_kernels_pickle():
    mod = jitkern.RawModule(code=TEMPLATES, options=("-std=c++17",),
                            name_expressions=["fx3<float>", "fx3<double>"])
    back = roundtrip(mod)
    assert (back.code, back.options, back.name_expressions) == (
        mod.code, mod.options, ("fx3<float>", "fx3<double>"))
    # A kernel of a module pickles with its module and comes back bound to a copy of it.
    from jitkern.kernels.raw import RawKernel

    kernel = RawKernel._from_module(mod, "fx3<double>")
    kback = roundtrip(kernel)
    assert kback.name == "fx3<double>" and kback._module is not mod
    assert kback._module.name_expressions == mod.name_expressions
    assert kback._module._kernels["fx3<double>"] is kback


def test_module_from_a_file_pickles_its_path(tmp_path):
    binary = jitkern.RawKernel(SRC, "f")._binary(ARCH)
    path = tmp_path / "f.cubin"
    path.write_bytes(binary.data)
    back = roundtrip(jitkern.RawModule(path=str(path)))
    assert back.path == str(path) and back._binary().data == binary.data


def test_string_kernels_pickle_as_their_definitions():
    ek = jitkern.ElementwiseKernel("T x, raw T y", "T z", "z = x + y[0]", "ek",
                                   preamble="// p", no_return=False, return_tuple=True,
                                   reduce_dims=False, options=("-DX=1",))
    eb = roundtrip(ek)
    assert repr(eb) == repr(ek)
    assert (eb.operation, eb.preamble, eb.return_tuple, eb.reduce_dims, eb.options) == (
        ek.operation, ek.preamble, True, False, ek.options)
    rk = jitkern.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2",
                                 reduce_type="double")
    rb = roundtrip(rk)
    assert repr(rb) == repr(rk)
    assert (rb.map_expr, rb.reduce_expr, rb.post_map_expr, rb.identity, rb.reduce_type) == (
        "x * x", "a + b", "y = sqrt(a)", "0", "double")
    x = np.zeros(16, np.float32)
    assert eb.inspect(x, x, arch=ARCH).source == ek.inspect(x, x, arch=ARCH).source
    assert rb.inspect(x, arch=ARCH).source == rk.inspect(x, arch=ARCH).source


KERNELS_MODULE = textwrap.dedent('''
    import jitkern
    from jitkern import jit

    @jit.rawkernel()
    def scale(x, y, a):
        i = jit.grid(1)
        if i < x.size:
            y[i] = x[i] * a

    raw = jitkern.RawKernel(%r, "f")
    module = jitkern.RawModule(code=%r, name_expressions=["fx3<float>"])
    elementwise = jitkern.ElementwiseKernel("T x, T y", "T z", "z = x * y + 1", "ewk")
    reduction = jitkern.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2")
''') % (SRC, TEMPLATES)

USE = textwrap.dedent('''
    import pickle, sys
    import numpy as np
    from jitkern.toolchain import cache
    kernels = pickle.load(open(sys.argv[1], "rb"))
    x = np.zeros(64, np.float32)
    kernels["scale"].inspect(x, x, np.float32(2), arch="sm_90")
    kernels["raw"].inspect(arch="sm_90")
    kernels["module"].inspect(arch="sm_90")
    kernels["elementwise"].inspect(x, x, arch="sm_90")
    kernels["reduction"].inspect(x, arch="sm_90")
    print("STATS", cache.stats["compiles"], cache.stats["disk_hits"])
''')


def test_unpickled_in_a_new_process_the_binaries_come_from_the_cache(tmp_path):
    (tmp_path / "pickled_kernels.py").write_text(KERNELS_MODULE)
    env = dict(os.environ, JITKERN_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([str(tmp_path), os.getcwd()]))
    make = textwrap.dedent('''
        import pickle, sys
        import numpy as np
        import pickled_kernels as m
        from jitkern.toolchain import cache
        x = np.zeros(64, np.float32)
        m.scale.inspect(x, x, np.float32(2), arch="sm_90")
        m.raw.inspect(arch="sm_90"); m.module.inspect(arch="sm_90")
        m.elementwise.inspect(x, x, arch="sm_90"); m.reduction.inspect(x, arch="sm_90")
        names = ["scale", "raw", "module", "elementwise", "reduction"]
        pickle.dump({n: getattr(m, n) for n in names}, open(sys.argv[1], "wb"))
        print("STATS", cache.stats["compiles"], cache.stats["disk_hits"])
    ''')
    blob = tmp_path / "kernels.pkl"
    first = subprocess.run([sys.executable, "-c", make, str(blob)], env=env,
                           capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    assert first.stdout.split()[-2:] == ["5", "0"]  # five compiles the first time
    second = subprocess.run([sys.executable, "-c", USE, str(blob)], env=env,
                            capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stderr
    compiles, disk_hits = map(int, second.stdout.split()[-2:])
    assert compiles == 0 and disk_hits == 5


def test_jit_kernel_pickles_by_reference(tmp_path, monkeypatch):
    (tmp_path / "pickled_jit.py").write_text(KERNELS_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    import pickled_jit

    assert roundtrip(pickled_jit.scale) is pickled_jit.scale
    # Not reachable by name (wrapped again): pickled as the function and the settings.
    again = jitkern.rawkernel(mode="numpy")(pickled_jit.scale.py_func)
    with pytest.raises(pickle.PicklingError, match="not the same object"):
        pickle.dumps(again)  # the module attribute is the decorated kernel, not the function
    sys.modules.pop("pickled_jit", None)


def test_compile_counter_sees_no_compile_for_an_unpickled_kernel():
    k = jitkern.RawKernel(SRC.replace("*= 2", "*= 5"), "f")
    k.inspect(arch=ARCH)
    compiles = cache.stats["compiles"]
    roundtrip(k).inspect(arch=ARCH)
    assert cache.stats["compiles"] == compiles


SCRIPT_KERNELS = textwrap.dedent('''
    import pickle, sys
    import numpy as np
    import jitkern
    from jitkern import jit

    @jit.rawkernel()
    def triple(x, out, n):
        i = jit.threadIdx.x
        if i < n:
            out[i] = x[i] * 3

    @jitkern.fuse()
    def hypot2(a, b):
        return np.hypot(a, b) * 2

    @jit.rawkernel(device=True)
    def itself(x):  # reads its own name: its by-value pickle must not recurse forever
        return x if itself is not None else -x

    pickle.dumps(itself)
    with open(sys.argv[1], "wb") as f:
        pickle.dump((triple, hypot2), f)  # the standard pickler: no cloudpickle asked for
''')

LOAD_SCRIPT_KERNELS = textwrap.dedent('''
    import pickle, sys
    import numpy as np
    with open(sys.argv[1], "rb") as f:
        triple, hypot2 = pickle.load(f)
    x = np.frombuffer(bytes.fromhex(sys.argv[2]), np.float32)
    out = np.full_like(x, np.nan)
    triple.simulate[1, x.size](x, out, np.int32(x.size))
    print(out.tobytes().hex(), np.asarray(hypot2.simulate(x, x), np.float32).tobytes().hex())
''')


def test_kernels_of_a_script_pickle_by_value_into_a_process_that_never_ran_it(tmp_path, rng):
    """A @rawkernel and a fused function defined in a script (``__main__``) pickle by value,
    as cloudpickle pickles the script's functions: a process that never ran the script (a
    Dask scheduler or worker started on its own) rebuilds and runs them. By name
    (``__main__.triple``), that process would find nothing."""
    pytest.importorskip("cloudpickle")
    (tmp_path / "script.py").write_text(SCRIPT_KERNELS)
    env = dict(os.environ, JITKERN_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=os.getcwd())
    blob = tmp_path / "kernels.pkl"
    made = subprocess.run([sys.executable, "script.py", str(blob)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr
    x = rng.standard_normal(48).astype(np.float32)
    used = subprocess.run([sys.executable, "-c", LOAD_SCRIPT_KERNELS, str(blob),
                           x.tobytes().hex()], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert used.returncode == 0, used.stderr
    tripled, hypot = (np.frombuffer(bytes.fromhex(h), np.float32) for h in used.stdout.split())
    np.testing.assert_array_equal(tripled, x * np.float32(3))
    np.testing.assert_allclose(hypot, np.hypot(x, x) * 2, rtol=1e-6)
