"""Errors of ElementwiseKernel and ReductionKernel that need no GPU (issue 9's classes)."""

import numpy as np
import pytest

import jitkern
from jitkern import CompileError, KernelArgumentError


@pytest.fixture
def sqd():
    return jitkern.ElementwiseKernel(
        "float32 x, float32 y", "float32 z", "z = (x - y) * (x - y)", "sqd_errors"
    )


def test_output_that_does_not_broadcast_is_named_with_both_shapes(sqd):
    x = np.zeros(4, np.float32)
    with pytest.raises(ValueError, match=r"output 'z' has shape \(3,\).*inputs' shape \(4,\)"):
        sqd.inspect(x, x, np.zeros(3, np.float32), arch="sm_90")
    # An output that broadcasts but is smaller than the loop is refused too, named.
    with pytest.raises(ValueError, match=r"output 'z' has shape \(1,\).*broadcast to \(4,\)"):
        sqd.inspect(x, x, np.zeros(1, np.float32), arch="sm_90")
    # Inputs that do not broadcast are the inputs' error, not the output's.
    with pytest.raises(ValueError, match=r"shapes \(4,\), \(3,\) cannot be broadcast"):
        sqd.inspect(x, np.zeros(3, np.float32), arch="sm_90")


def test_output_may_give_the_inputs_its_shape(sqd):
    ins = sqd.inspect(
        np.zeros(1, np.float32), np.zeros(1, np.float32), np.zeros((3, 5), np.float32), arch="sm_90"
    )
    assert "_p_z" in ins.source


def test_reduction_output_shape_error_names_the_output():
    k = jitkern.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "rsum_err")
    with pytest.raises(ValueError, match=r"output 'y' has shape \(3,\).*result has shape \(4,\)"):
        k.inspect(np.zeros((4, 5), np.float32), axis=1, out=np.zeros(3, np.float32), arch="sm_90")


@pytest.mark.parametrize("bad", ["yes", 1, None, "False"])
def test_keepdims_must_be_a_bool(bad):
    k = jitkern.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "rsum_keep")
    with pytest.raises(TypeError, match=f"keepdims must be True or False, got {bad!r}"):
        k.inspect(np.zeros((4, 5), np.float32), axis=1, keepdims=bad, arch="sm_90")
    ins = k.inspect(np.zeros((4, 5), np.float32), axis=1, keepdims=np.bool_(True), arch="sm_90")
    assert "rsum_keep" in ins.source


def test_empty_post_map_writes_every_output():
    k = jitkern.ReductionKernel("T x", "T s, T t", "x", "a + b", "", "0", "two_outs")
    assert k.post_map_expr == "s = a; t = a"
    src = k.inspect(np.zeros((4, 5), np.float32), axis=1, arch="sm_90").source
    assert "s = a; t = a" in src


def test_operation_error_is_reported_once():
    k = jitkern.ElementwiseKernel(
        "float32 x", "float32 y", "y = x +\n  undefined_thing;", "dup_error"
    )
    with pytest.raises(CompileError) as info:
        k.inspect(np.zeros(100, np.float32), arch="sm_90")  # vector loop and its tail
    message = str(info.value)
    assert message.count('identifier "undefined_thing" is undefined') == 1
    assert "undefined_thing;" in message.split("source:")[1]  # the user's line is shown
    assert "#177-D" not in message  # no warnings about jitkern's own variables


HOST = (
    "numpy.ndarray lives in host memory and cannot be passed to a kernel; copy it to the "
    "GPU first with jitkern.asarray(x), or run the kernel on the CPU with NumPy arrays: "
    "k.simulate[grid, block](*args) (ElementwiseKernel and ReductionKernel: "
    "k.simulate(*args)); JITKERN_SIMULATE=1 runs the whole program on a simulated device, "
    "with jitkern arrays; k.inspect(..., arch=...) compiles without a GPU"
)


def test_host_arrays_same_error_from_every_kernel_kind(sqd):
    x = np.zeros(8, np.float32)
    with pytest.raises(KernelArgumentError) as ek:
        sqd(x, x)
    assert str(ek.value) == f"sqd_errors: input 'x': a {HOST}"
    red = jitkern.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "rsum_host")
    with pytest.raises(KernelArgumentError) as rk:
        red(x)
    assert str(rk.value) == f"rsum_host: input 'x': a {HOST}"
    raw_kernel = jitkern.RawKernel(
        'extern "C" __global__ void raw_copy(const float* src, float* dst) {}', "raw_copy")
    with pytest.raises(KernelArgumentError) as raw:  # RawKernel's packing, through bind
        raw_kernel.bind((1,), (32,), _device_view(), x)
    assert str(raw.value).startswith(f"raw_copy: argument 1 (dst): a {HOST}")
    with pytest.raises(KernelArgumentError) as jit_error:  # @rawkernel, before any GPU work
        _copy[1, 32](_device_view(), x)
    assert str(jit_error.value) == f"_copy: argument 1 (y): a {HOST}"


def _device_view():
    from jitkern.arrays import core
    from jitkern.runtime.device import Stream

    return core.make((8,), (4,), np.dtype(np.float32), 4096, None, None, 0, Stream.null, 8)


@jitkern.jit.rawkernel()
def _copy(x, y):
    i = jitkern.jit.grid(1)
    y[i] = x[i]
