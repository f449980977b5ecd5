"""One simulation mode (issue 27): JITKERN_SIMULATE=1 runs the whole process on a simulated
device, as ``with jitkern.simulated_device():`` runs a block, so a program written for a GPU
runs unchanged; the simulated device refuses what a GPU refuses (NumPy arrays given to
kernels and operators, with the GPU's error), records a stream capture and replays it as a
GPU does, and reports a kernel's attributes; what it cannot run is refused with a public
error saying why. ``.simulate`` still takes NumPy arrays."""

import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
from conftest import has_gpu

import jitkern
from jitkern import jit

ROOT = pathlib.Path(__file__).resolve().parents[2]

TWICE = r"""extern "C" __global__ void twice(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2 * x[i];
}"""


@jit.rawkernel()
def add_into(x, y, n):
    i = jit.grid(1)
    if i < n:
        y[i] = y[i] + x[i]


def _run(code: str, tmp_path, simulate="1") -> subprocess.CompletedProcess:
    script = tmp_path / "program.py"
    script.write_text(code)
    env = dict(os.environ, PYTHONPATH=str(ROOT), JITKERN_CACHE_DIR=str(tmp_path / "cache"),
               CUDA_VISIBLE_DEVICES="")  # no GPU, even on a machine with one
    env.pop("JITKERN_SIMULATE", None)
    if simulate is not None:
        env["JITKERN_SIMULATE"] = simulate
    return subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)


GPU_PROGRAM = r'''
import numpy as np
import jitkern
x = jitkern.asarray(np.array(SEEDED, np.float32))
k = jitkern.RawKernel(TWICE, "twice")
y = jitkern.full(x.size, np.nan, np.float32)
k((1,), (64,), (x, y, np.int32(x.size)))
z = y + x                      # an operator: an ElementwiseKernel
print(type(z).__name__, jitkern.Device(0).compute_capability, jitkern.is_available())
print(repr(z.get().tolist()))
'''


def test_jitkern_simulate_runs_a_gpu_program_unchanged(tmp_path, rng):
    values = rng.standard_normal(50).astype(np.float32)
    code = f"TWICE = {TWICE!r}\nSEEDED = {values.tolist()!r}\n" + GPU_PROGRAM
    done = _run(code, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    first, second = done.stdout.splitlines()
    assert first == "ndarray 90 True"  # jitkern arrays on an sm_90 stand-in
    np.testing.assert_array_equal(np.array(eval(second), np.float32), 3 * values)


@pytest.mark.skipif(has_gpu(), reason="what a machine without a CUDA driver says")
def test_without_jitkern_simulate_the_same_program_needs_a_gpu(tmp_path):
    code = f"TWICE = {TWICE!r}\nSEEDED = [1.0]\n" + GPU_PROGRAM
    done = _run(code, tmp_path, simulate=None)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("jitkern.errors.CUDAError: no CUDA driver found")
    assert "JITKERN_SIMULATE=1, or `with jitkern.simulated_device():`" in last


def test_the_process_device_refuses_numpy_arrays_and_simulate_takes_them(tmp_path):
    code = f"TWICE = {TWICE!r}\n" + r'''
import numpy as np
import jitkern
k = jitkern.RawKernel(TWICE, "twice")
h = np.arange(4, dtype=np.float32)
try:
    k((1,), (32,), (h, jitkern.zeros(4, np.float32), np.int32(4)))
except jitkern.KernelArgumentError as exc:
    print("refused:", str(exc).split(":")[0])
y = np.zeros(4, np.float32)
k.simulate((1,), (32,), (h, y, np.int32(4)))
print(y.tolist())
'''
    done = _run(code, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == ["refused: twice", "[0.0, 2.0, 4.0, 6.0]"]


# -- NumPy arrays are refused as a GPU refuses them, with the GPU's error ----------------

GPU_WORDS = "a numpy.ndarray lives in host memory and cannot be passed to a kernel"


def _cases():
    ew = jitkern.ElementwiseKernel("float32 x", "float32 y", "y = x * 2", "ew_host")
    red = jitkern.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "red_host")
    raw = jitkern.RawKernel(TWICE, "twice")
    fused = jitkern.fuse(lambda a, b: a + b)
    return {
        "elementwise input": (lambda h, d: ew(h), "ew_host: input 'x'"),
        "elementwise output": (lambda h, d: ew(d, h), "ew_host: output 'y'"),
        "reduction": (lambda h, d: red(h), "red_host: input 'x'"),
        "reduction out=": (lambda h, d: red(d, out=np.zeros((), np.float32)),
                           "red_host: output 'y'"),
        "raw": (lambda h, d: raw((1,), (32,), (d, h, np.int32(4))), "twice: argument 1 (y)"),
        "jit": (lambda h, d: add_into[1, 32](h, d, 4), "add_into: argument 0 (x)"),
        "operator": (lambda h, d: d + h, "jitkern_add: input 'in1'"),
        "fuse": (lambda h, d: fused(h, d), "fused_lambda: input 'in0'"),
    }


@pytest.mark.parametrize("case", sorted(_cases()))
def test_numpy_arrays_are_refused_with_the_gpus_error(case, rng):
    call, where = _cases()[case]
    h = rng.standard_normal(4).astype(np.float32)
    from jitkern.runtime import driver
    from jitkern.runtime.fakedriver import FakeDriver

    with driver.use(FakeDriver()):  # the GPU path, up to the launch
        d = jitkern.empty(4, np.float32)
        with pytest.raises(jitkern.KernelArgumentError) as on_gpu:
            call(h, d)
    with jitkern.simulated_device():
        d = jitkern.asarray(h)
        with pytest.raises(jitkern.KernelArgumentError) as simulated:
            call(h, d)
    for info in (on_gpu, simulated):
        assert isinstance(info.value, TypeError)
        assert str(info.value).startswith(f"{where}: {GPU_WORDS}"), str(info.value)
    assert "on jitkern's simulated device as on a GPU" in str(simulated.value)


def test_what_a_gpu_takes_from_numpy_the_simulated_device_takes(rng):
    h = rng.uniform(0.5, 2.0, 5)
    with jitkern.simulated_device():
        np.testing.assert_array_equal(jitkern.sqrt(h), np.sqrt(h))  # NumPy in, NumPy out
        fused = jitkern.fuse(lambda a, b: a * b + 1)
        np.testing.assert_array_equal(fused(h, h), h * h + 1)
        d = jitkern.zeros(5, np.float64)
        d[:] = h  # a copy into device memory
        np.testing.assert_array_equal(d.get(), h)


# -- graphs ---------------------------------------------------------------------------


def test_a_capture_records_and_replays_as_on_a_gpu(rng):
    n = 300
    hx = rng.standard_normal(n).astype(np.float32)
    raw = jitkern.RawKernel(TWICE, "twice")
    with jitkern.simulated_device():
        x = jitkern.asarray(hx)
        y = jitkern.zeros(n, np.float32)
        t = jitkern.full(n, np.nan, np.float32)
        s = jitkern.Stream()
        s.begin_capture()
        add_into[(n + 127) // 128, 128, 0, s](x, y, n)      # recorded, not run
        raw(((n + 127) // 128,), (128,), (y, t, np.int32(n)), stream=s)
        g = s.end_capture()
        assert (y.get() == 0).all() and np.isnan(t.get()).all()  # nothing ran yet
        g.launch(s)
        np.testing.assert_array_equal(y.get(), hx)
        np.testing.assert_array_equal(t.get(), 2 * hx)
        g.launch(s)  # a second replay: y = x + x, t = 2 y
        s.synchronize()
        np.testing.assert_allclose(y.get(), 2 * hx, rtol=1e-6)
        np.testing.assert_allclose(t.get(), 4 * hx, rtol=1e-6)


def test_the_block_form_records_device_copies_and_fills(rng):
    h = rng.standard_normal(64).astype(np.float32)
    with jitkern.simulated_device():
        x = jitkern.asarray(h)
        y = jitkern.zeros(64, np.float32)
        with jitkern.graph.capture() as g:
            y[...] = x      # a device copy, recorded
            add_into[1, 64](x, y, 64)
        assert (y.get() == 0).all()
        g.launch()
        np.testing.assert_allclose(y.get(), 2 * h, rtol=1e-6)


def test_a_host_copy_invalidates_the_capture_and_nodes_are_refused(rng):
    with jitkern.simulated_device():
        x = jitkern.zeros(8, np.float32)
        s = jitkern.Stream()
        s.begin_capture()
        with pytest.raises(jitkern.StreamCaptureError, match="copying host memory to the "
                                                               "device cannot be done while"):
            x.set(np.ones(8, np.float32), stream=s)  # refused before the driver, as on a GPU
        assert s.is_capturing()  # nothing reached the device: the capture goes on
        from jitkern.runtime import driver

        dev = driver.drv()  # the driver itself refuses it too, and invalidates the capture
        assert dev.cuMemcpyHtoDAsync(x.data.ptr, np.ones(8, np.float32), 32, s.ptr)[0] == 900
        with pytest.raises(jitkern.StreamCaptureError, match="was invalidated by an "
                                                               "operation that cannot be"):
            s.end_capture()
        with jitkern.graph.capture() as g:
            add_into[1, 8](x, x, 8)
        with pytest.raises(jitkern.JitkernNotImplementedError, match="not modelled by "
                                                                      "jitkern's simulated"):
            g.update(add_into, n=4)


# -- attributes and what the simulated device cannot run ------------------------------


def test_a_kernels_attributes_are_those_compiled_for_the_devices_arch():
    raw = jitkern.RawKernel(TWICE, "twice")
    want = raw.inspect(arch="sm_80")
    with jitkern.simulated_device(cc=(8, 0)):
        attrs = raw.attributes
        assert attrs["num_regs"] == want.registers == raw.num_regs
        assert attrs["shared_size_bytes"] == want.shared_bytes
        assert attrs["local_size_bytes"] == want.local_bytes
        assert attrs["binary_version"] == attrs["ptx_version"] == 80
        assert 32 <= raw.max_threads_per_block <= 1024
        assert attrs["max_dynamic_shared_size_bytes"] == 49152 - want.shared_bytes
        raw.max_dynamic_shared_size_bytes = 100_000
        raw.preferred_shared_memory_carveout = 50
        assert (raw.max_dynamic_shared_size_bytes, raw.preferred_shared_memory_carveout) == \
            (100_000, 50)
        with pytest.raises(jitkern.JitkernValueError, match="carveout: expected an int from "
                                                            "-1 .* got 101"):
            raw.preferred_shared_memory_carveout = 101


def test_compiled_binaries_are_refused_saying_why(tmp_path):
    raw = jitkern.RawKernel(TWICE, "twice")
    path = tmp_path / "twice.cubin"
    path.write_bytes(raw.inspect(arch="sm_90").cubin)
    z = np.zeros(8, np.float32)
    add_into.export(str(tmp_path / "add"), z, z, np.int32(8), arch=("sm_90",))
    with jitkern.simulated_device():
        x = jitkern.zeros(8, np.float32)
        module = jitkern.RawModule(path=str(path))
        with pytest.raises(jitkern.JitkernNotImplementedError, match="compiled binary"):
            module.get_function("twice")((1,), (8,), (x, x, np.int32(8)))
        exported = jitkern.load(str(tmp_path / "add.json")).add_into
        with pytest.raises(jitkern.JitkernNotImplementedError, match="jitkern.load"):
            exported((1,), (8,), (x, x, np.int32(8)))


def test_a_capture_of_a_call_that_allocates_its_result_is_refused_saying_what_to_pass(rng):
    ew = jitkern.ElementwiseKernel("float32 x, float32 y", "float32 z", "z = x + y", "addk")
    h = rng.standard_normal(8).astype(np.float32)
    with jitkern.simulated_device():
        x, out = jitkern.asarray(h), jitkern.full(8, np.nan, np.float32)
        with jitkern.graph.capture() as g:
            ew(x, x, out)  # the output given: recorded
        assert np.isnan(out.get()).all()
        g.launch()
        np.testing.assert_array_equal(out.get(), 2 * h)
        with pytest.raises(jitkern.StreamCaptureError, match="ElementwiseKernel 'addk': .* "
                                                               "pass the output array"):
            with jitkern.graph.capture():
                ew(x, x)
