"""String kernels under JITKERN_SIMULATE on a machine without a GPU: the simulator runs JIT
kernels and fused functions; a RawKernel (or its bound launch) reaches the driver, and the
error says which kernels the simulator runs instead of only "no CUDA driver"."""

import numpy as np
import pytest

import jitkern
from jitkern.config import settings
from tests.conftest import has_gpu

pytestmark = pytest.mark.skipif(has_gpu(), reason="needs a machine without a usable GPU")

SOURCE = r"""
extern "C" __global__ void twice(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2 * x[i];
}
"""


@pytest.mark.parametrize(
    "how, error, start",
    [
        # A call compiles and loads first: the driver is what refuses.
        ("call", jitkern.CUDAError, "no CUDA driver found"),
        # bind packs the arguments first: the NumPy array is what is refused.
        ("bind", jitkern.KernelArgumentError, "twice: argument 0 (x): a numpy.ndarray lives"),
    ],
)
def test_raw_kernel_while_simulating_says_what_the_simulator_runs(monkeypatch, how, error, start):
    monkeypatch.setattr(settings, "simulate", True)
    k = jitkern.RawKernel(SOURCE, "twice")
    x, y = np.ones(8, np.float32), np.zeros(8, np.float32)
    with pytest.raises(error) as info:
        if how == "call":
            k((1,), (8,), (x, y, np.int32(8)))
        else:
            k.bind((1,), (8,), x, y, np.int32(8))
    message = str(info.value)
    assert message.startswith(start)
    assert "JITKERN_SIMULATE runs @jitkern.rawkernel kernels" in message
    assert "RawKernel" in message and "need a GPU" in message
    assert y.tolist() == [0.0] * 8  # nothing ran


@jitkern.jit.rawkernel()
def _copy_rows(src, dst):
    i = jitkern.jit.grid(1)
    if i < dst.size:
        dst[i] = src[i]


@pytest.mark.parametrize("simulate", [False, True])
def test_host_array_message_names_kernel_parameter_and_the_simulator_only_while_on(
        monkeypatch, simulate):
    # through the public launch: the bound launch packs (and refuses) before any driver call
    monkeypatch.setattr(settings, "simulate", simulate)
    k = jitkern.RawKernel(SOURCE, "twice")
    x, y = np.ones(8, np.float32), np.zeros(8, np.float32)
    with pytest.raises(jitkern.KernelArgumentError) as info:
        k.bind((1,), (8,), x, y, np.int32(8))
    message = str(info.value)
    assert message.startswith("twice: argument 0 (x): a numpy.ndarray lives in host memory")
    assert ("JITKERN_SIMULATE runs" in message) is simulate


def test_jit_kernel_given_a_host_array_names_kernel_and_parameter(monkeypatch):
    monkeypatch.setattr(settings, "simulate", False)
    src = np.random.default_rng().standard_normal(8)
    dst = np.full(8, np.nan)
    with pytest.raises(jitkern.KernelArgumentError) as info:
        _copy_rows[1, 8](src, dst)
    assert str(info.value).startswith("_copy_rows: argument 0 (src): a numpy.ndarray lives")
    assert np.isnan(dst).all()  # nothing ran


def test_without_simulate_the_error_has_no_simulator_hint(monkeypatch):
    monkeypatch.setattr(settings, "simulate", False)
    k = jitkern.RawKernel(SOURCE, "twice")
    x, y = np.ones(8, np.float32), np.zeros(8, np.float32)
    with pytest.raises(jitkern.CUDAError) as info:
        k((1,), (8,), (x, y, np.int32(8)))
    assert str(info.value).startswith("no CUDA driver found")
    assert "JITKERN_SIMULATE" not in str(info.value)
