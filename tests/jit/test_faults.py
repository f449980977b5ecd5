"""Device faults at the user's Python line (issue 20 part 3): JIT kernels carry line
information by default, exact allocations let compute-sanitizer see an overrun of a
jitkern array, and a kernel fault's error says where to look."""

import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import jitkern
from jitkern import jit

KERNEL_MODULE = textwrap.dedent('''
    import jitkern
    from jitkern import jit

    @jitkern.rawkernel()
    def write_one_past(x, n):
        i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
        if i == 0:
            x[n] = 1.0  # planted: one element past the end
''')

SCRIPT = textwrap.dedent('''
    import numpy as np
    import jitkern
    import planted
    x = jitkern.zeros(1000, np.float32)
    planted.write_one_past[1, 32](x, np.int32(1000))
    jitkern.synchronize()
    print("launched")
''')


def test_jit_kernels_carry_line_information_unless_turned_off():
    @jitkern.rawkernel()
    def k(x):
        x[jit.threadIdx.x] = 1.0

    off = jitkern.rawkernel(lineinfo=False)(k.py_func)
    assert "-lineinfo" in k.options and "-lineinfo" not in off.options
    a = np.zeros(4, np.float32)
    assert k.inspect(a, arch="sm_90").cubin != off.inspect(a, arch="sm_90").cubin


def test_set_allocator_takes_none_or_the_pools_malloc(monkeypatch):
    monkeypatch.setattr(jitkern.config.settings, "exact_alloc", False)
    from jitkern.runtime import memory

    monkeypatch.setattr(memory, "_exact", False)
    jitkern.cuda.set_allocator(None)
    assert jitkern.config.settings.exact_alloc is True
    jitkern.cuda.set_allocator(jitkern.get_default_memory_pool().malloc)
    assert jitkern.config.settings.exact_alloc is False
    with pytest.raises(TypeError, match="takes None .* or jitkern.get_default_memory_pool") as e:
        jitkern.cuda.set_allocator(lambda n: None)
    assert isinstance(e.value, jitkern.JitkernError)


def _run(tmp_path, env, *prefix):
    (tmp_path / "planted.py").write_text(KERNEL_MODULE)
    (tmp_path / "main.py").write_text(SCRIPT)
    root = pathlib.Path(__file__).resolve().parents[2]
    full = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(root)]),
                JITKERN_CACHE_DIR=str(tmp_path / "cache"), **env)
    return subprocess.run([*prefix, sys.executable, str(tmp_path / "main.py")], env=full,
                          capture_output=True, text=True, timeout=540, cwd=tmp_path)


@pytest.mark.gpu
def test_compute_sanitizer_names_the_python_line_of_an_overrun(tmp_path):
    sanitizer = shutil.which("compute-sanitizer")
    if sanitizer is None:
        pytest.skip("compute-sanitizer is not on PATH")
    out = _run(tmp_path, {"JITKERN_EXACT_ALLOC": "1"}, sanitizer, "--tool", "memcheck")
    report = out.stdout + out.stderr
    assert "Invalid __global__ write of size 4" in report, report[-3000:]
    line = KERNEL_MODULE.splitlines().index("        x[n] = 1.0  # planted: one element past the end") + 1
    assert f"planted.py:{line}" in report, report[-3000:]
    assert "ERROR SUMMARY: 0 errors" not in report


@pytest.mark.gpu
def test_a_kernel_fault_says_where_to_look(tmp_path):
    script = textwrap.dedent('''
        import numpy as np
        import jitkern
        from jitkern import jit

        @jitkern.rawkernel()
        def wild(x, n):
            x[n] = 1.0

        @jitkern.rawkernel()
        def tame(x, n):
            x[0] = n

        x = jitkern.zeros(4, np.float32)
        tame[1, 1](x, np.int64(3))
        jitkern.synchronize()
        wild[1, 1](x, np.int64(1 << 40))  # far outside any allocation
        try:
            jitkern.synchronize()
        except jitkern.CUDAError as e:
            print("CAUGHT", e)
    ''')
    (tmp_path / "main.py").write_text(script)
    root = pathlib.Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=str(root), JITKERN_CACHE_DIR=str(tmp_path / "cache"))
    out = subprocess.run([sys.executable, str(tmp_path / "main.py")], env=env,
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert "CAUGHT" in out.stdout, out.stdout + out.stderr
    caught = out.stdout.split("CAUGHT", 1)[1]
    assert "CUDA_ERROR_ILLEGAL_ADDRESS" in caught
    assert "JITKERN_DEBUG=1" in caught and "simulate" in caught
    assert "JITKERN_EXACT_ALLOC=1" in caught
    assert "the last kernel this process launched was 'wild'" in caught


class DeviceArray:
    """A 1-D float32 device array as far as a launch reads it (the pointer is never used)."""

    def __init__(self, rng, n=64):
        self.ptr, self.n = int(rng.integers(1, 2**30)) * 256, n

    @property
    def __cuda_array_interface__(self):
        return {"data": (self.ptr, False), "shape": (self.n,), "typestr": "<f4",
                "strides": None, "version": 3}


class FaultingDriver:
    """Makes a fake driver whose next synchronize reports a kernel fault (illegal address)."""

    def __new__(cls):
        from jitkern.runtime.fakedriver import FakeDriver

        class Faulting(FakeDriver):
            fault = False

            def cuCtxSynchronize(self):
                return (700,) if self.fault else (0,)

        return Faulting(cc=(9, 0))


@jit.rawkernel()
def fault_first(x, n):
    i = jit.threadIdx.x
    if i < n:
        x[i] = 1.0


def test_a_fault_names_the_kernel_launched_last_by_every_launch_form(rng):
    from jitkern.runtime import driver

    raw = jitkern.RawKernel('extern "C" __global__ void fault_raw(float* x, int n) '
                            '{ if (threadIdx.x < n) x[threadIdx.x] = 2.0f; }', "fault_raw")
    fake = FaultingDriver()
    with driver.use(fake):
        x = DeviceArray(rng)  # the fake runs nothing: only the launch's pointer is read
        n = int(rng.integers(1, 64))
        forms = [
            ("fault_first", lambda: fault_first[1, 64](x, np.int32(n))),
            ("fault_raw", lambda: raw((1,), (64,), (x, np.int32(n)))),
            ("fault_first", lambda: fault_first((1,), (64,), (x, np.int32(n)))),
            ("fault_raw", lambda: raw[1, 64](x, np.int32(n))),
        ]
        for order in (forms, forms[::-1], [forms[k] for k in rng.permutation(len(forms))]):
            for _name, launch in order:
                for _ in range(3):  # the general path first, then the generated launcher
                    launch()
                fake.fault = True
                with pytest.raises(jitkern.CUDAError) as caught:
                    jitkern.synchronize()
                fake.fault = False
                message = str(caught.value)
                assert f"the last kernel this process launched was {_name!r}" in message
                assert "CUDA_LAUNCH_BLOCKING=1" in message and "JITKERN_DEBUG=1" in message
