"""Mistakes that used to be accepted silently, or answered by an opaque or internal message."""

import os
import subprocess
import sys

import numpy as np
import pytest

import jitkern
from jitkern import config
from jitkern.jit import rawkernel


@pytest.mark.parametrize("value", ["maybe", "2", "enable", "nope"])
def test_unknown_flag_value_is_refused_with_the_allowed_values(monkeypatch, value):
    monkeypatch.setenv("JITKERN_CACHE", value)
    with pytest.raises(jitkern.JitkernValueError) as info:
        config.reload()
    message = str(info.value)
    assert f"JITKERN_CACHE={value!r}" in message
    for allowed in ("'1'", "'0'", "'true'", "'false'", "'on'", "'off'"):
        assert allowed in message
    monkeypatch.delenv("JITKERN_CACHE")
    config.reload()


@pytest.mark.parametrize("value, expected", [("0", False), ("off", False), ("No", False),
                                             ("1", True), (" yes ", True), ("", True)])
def test_known_flag_values(monkeypatch, value, expected):
    monkeypatch.setenv("JITKERN_CACHE", value)
    assert config.reload().disk_cache is expected
    monkeypatch.delenv("JITKERN_CACHE")
    config.reload()


def test_unknown_flag_value_stops_import_with_a_clear_error():
    env = dict(os.environ, JITKERN_CACHE="maybe")
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(jitkern.__file__))
    out = subprocess.run([sys.executable, "-c", "import jitkern"], env=env, capture_output=True,
                         text=True, check=False)
    assert out.returncode != 0
    assert "JitkernValueError: environment variable JITKERN_CACHE='maybe'" in out.stderr


@pytest.mark.parametrize("make", [jitkern.empty, jitkern.zeros, jitkern.ones])
@pytest.mark.parametrize("shape", [3, (2, 3)])
def test_unknown_order_is_refused_before_any_device_work(make, shape):
    with pytest.raises(jitkern.JitkernValueError, match="order: expected 'C' or 'F', got 'Q'"):
        make(shape, order="Q")


@pytest.mark.parametrize("shape", [2**70, (2**40, 2**40), 2**62, (2**31, 2**31, 4)])
def test_impossible_size_is_a_clear_error_not_a_wrap(shape):
    with pytest.raises(jitkern.JitkernValueError, match="more than any device can address") as info:
        jitkern.empty(shape, np.float64)
    assert "bytes" in str(info.value)
    with pytest.raises(jitkern.JitkernValueError, match="more than any device can address"):
        jitkern.ndarray(shape, np.float64)


RAW = 'extern "C" __global__ void f(const float* x, float* y, float a) {}'


@pytest.mark.parametrize("call", [
    lambda k: k(1, 2),
    lambda k: k(),
    lambda k: k(1, 2, (1,), foo=3),
])
def test_wrong_call_of_a_raw_kernel_names_no_internal_function(call):
    k = jitkern.RawKernel(RAW, "f")
    with pytest.raises(TypeError) as info:
        call(k)
    message = str(info.value)
    assert "_launch" not in message and "RawKernel.__call__()" in message


@rawkernel()
def copy(x, y):
    y[0] = x[0]


def test_wrong_call_of_a_jit_kernel_names_no_internal_function():
    with pytest.raises(TypeError) as info:
        copy[1, 1](np.zeros(2), np.zeros(2), z=1)
    assert "_launch" not in str(info.value) and "copy[grid, block]" in str(info.value)
    with pytest.raises(TypeError) as info:
        copy(1)
    assert "_launch" not in str(info.value) and "copy[grid, block]" in str(info.value)
    with pytest.raises(TypeError) as info:
        copy(1, 2, (np.zeros(2),), 0, None, "extra")
    # Python names the kernel the user wrote, as for any function
    assert "_launch" not in str(info.value) and str(info.value).startswith("copy() takes")

    @rawkernel()
    def another(x):
        x[0] = 1

    with pytest.raises(TypeError, match=r"^another\(\) takes"):
        another(1, 2, (np.zeros(2),), 0, None, "extra")
    with pytest.raises(TypeError, match=r"^copy\(\) takes"):  # not renamed by another kernel
        copy(1, 2, (np.zeros(2),), 0, None, "extra")


@pytest.mark.parametrize("bad, name", [(("x", np.zeros(2)), "x"), ((np.zeros(2), object()), "y")])
def test_jit_inspect_names_the_bad_argument(bad, name):
    with pytest.raises(jitkern.KernelArgumentError) as info:
        copy.inspect(*bad, arch="sm_90")
    assert str(info.value).startswith(f"copy() argument {name!r}: cannot use a builtins.")
    assert isinstance(info.value, TypeError)


def test_jit_launch_names_the_host_array_argument():
    with pytest.raises(jitkern.KernelArgumentError,
                       match=r"copy\(\) argument 'y': a numpy.ndarray lives in host memory"):
        copy._arg_types((np.float32(1), np.zeros(2)), allow_host=False)
