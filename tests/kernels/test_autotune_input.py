"""What the tuner is given is checked where it is given (issue 27): every field of a Config
when it is made, and restore=/reset_to_zero= positions against the kernel's arguments
before any candidate runs. A wrong value never reaches the user's grid function or an
internal index."""

import numpy as np
import pytest

import jitkern
from jitkern import Config, jit
from jitkern.config import settings


@pytest.fixture
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(settings, "cache_dir", str(tmp_path / "cache"))


@jitkern.rawkernel()
def accumulate(x, y, n):
    i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    if i < n:
        y[i] += x[i]


ACCUMULATE = r"""
extern "C" __global__ void acc(const double* x, double* y, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] += x[i];
}"""


class GridSpy:
    """A grid function that records each call: a wrong Config must not reach it."""

    def __init__(self):
        self.calls = []

    def __call__(self, cfg, x, y, n):
        self.calls.append(cfg)
        return (int(n) + cfg.block - 1) // cfg.block


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        ({"block": 0}, jitkern.JitkernValueError, "Config(block=...): expected an int >= 1, got 0"),
        ({"block": -32}, jitkern.JitkernValueError, "got -32"),
        ({"block": "64"}, jitkern.JitkernTypeError, "Config(block=...): expected an int >= 1, "
                                                    "got str '64'"),
        ({"block": 64.0}, jitkern.JitkernTypeError, "got float 64.0"),
        ({"block": True}, jitkern.JitkernTypeError, "got bool True"),
        ({"block": (32, 0)}, jitkern.JitkernValueError, "got 0"),
        ({"block": (32, "2")}, jitkern.JitkernTypeError, "got str '2'"),
        ({"block": ()}, jitkern.JitkernValueError, "a tuple of 1 to 3 ints, got ()"),
        ({"block": (1, 1, 1, 1)}, jitkern.JitkernValueError, "got (1, 1, 1, 1)"),
        ({"shared_mem": "1"}, jitkern.JitkernTypeError, "Config(shared_mem=...): expected an "
                                                        "int >= 0, got str '1'"),
        ({"shared_mem": -4}, jitkern.JitkernValueError, "Config(shared_mem=...): expected an "
                                                        "int >= 0, got -4"),
        ({"block": 32, "ITEMS": [1, 2]}, jitkern.JitkernTypeError,
         "Config(ITEMS=...): a compile-time constant must be hashable"),
    ],
)
def test_a_config_checks_every_field_when_it_is_made(kwargs, error, words):
    with pytest.raises(error) as info:
        Config(**kwargs)
    assert words in str(info.value)


def test_a_valid_config_keeps_its_values_as_python_ints():
    c = Config(block=np.int32(64), shared_mem=np.int64(128), ITEMS=4)
    assert (c.block, type(c.block), c.shared_mem, type(c.shared_mem)) == (64, int, 128, int)
    assert Config(block=[32, 4]).block == (32, 4) and Config(block=[32, 4]) == Config(block=(32, 4))


def test_reset_to_zero_past_a_rawkernels_parameters_is_refused_at_decoration():
    spy = GridSpy()
    with pytest.raises(jitkern.JitkernIndexError) as info:
        jitkern.autotune(accumulate, configs=[Config(block=32)], grid=spy, reset_to_zero=(7,))
    assert str(info.value) == (
        "autotune(accumulate): reset_to_zero=7 is out of range for the kernel's 3 argument(s) "
        "(positions 0 to 2)")
    with pytest.raises(jitkern.JitkernIndexError, match=r"restore=-4 is out of range .* 3 arg"):
        jitkern.autotune(accumulate, configs=[Config(block=32)], grid=spy, restore=(-4,))
    assert spy.calls == []


def test_a_string_kernels_position_is_checked_at_the_first_call_before_any_launch(rng,
                                                                                     own_cache):
    spy = GridSpy()
    kernel = jitkern.RawKernel(ACCUMULATE, "acc")
    tk = jitkern.autotune(kernel, configs=[Config(block=32)], grid=spy,
                          reset_to_zero=(1, 5)).simulate
    x = rng.standard_normal(50)
    y = rng.standard_normal(50)
    before = y.copy()
    with pytest.raises(jitkern.JitkernIndexError) as info:
        tk(x, y, np.int64(50))
    assert "reset_to_zero=5 is out of range for the kernel's 3 argument(s)" in str(info.value)
    assert spy.calls == [] and tk.timings == 0
    np.testing.assert_array_equal(y, before)  # nothing zeroed, nothing launched


def test_a_negative_position_counts_from_the_end_as_in_python(rng, own_cache):
    tk = jitkern.autotune(accumulate, configs=[Config(block=32), Config(block=64)],
                          grid=GridSpy(), restore=(-2,)).simulate
    x, y0 = rng.standard_normal(70), rng.standard_normal(70)
    y = y0.copy()
    tk(x, y, np.int64(70))  # two candidates and the final run: y is restored before each
    np.testing.assert_allclose(y, y0 + x, rtol=1e-12)


@pytest.mark.parametrize("which", [7.0, [1.5], None, (True,)])
def test_positions_of_the_wrong_type_are_refused(which):
    with pytest.raises(jitkern.JitkernTypeError) as info:
        jitkern.autotune(accumulate, configs=[Config(block=32)], grid=GridSpy(),
                         reset_to_zero=which)
    assert f"autotune(accumulate): reset_to_zero= takes argument positions (ints) or " \
           f"parameter names (strs), got {which!r}" in str(info.value)
