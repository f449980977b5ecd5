"""An integer to a negative integer power in a JIT kernel follows one documented rule
(docs/jit.md, issue 27): NumPy's type (an int), Python's value converted toward zero as
``int()`` does, and 0 for ``0 ** negative`` (Python raises; a kernel cannot). Checked against
Python itself, on random bases and exponents, in the simulator and on the GPU (twins)."""

import math

import numpy as np
import pytest

import jitkern
from jitkern import jit


@jitkern.rawkernel()
def power(x, e, out, via_pow, via_numpy):
    i = jit.threadIdx.x
    out[i] = x[i] ** e[i]
    via_pow[i] = pow(x[i], e[i])
    via_numpy[i] = np.power(x[i], e[i])


@jitkern.rawkernel()
def power_minus_three(x, out):
    i = jit.threadIdx.x
    out[i] = x[i] ** -3


def python_rule(x: int, e: int) -> int:
    """Python's x ** e, converted to an int as int() converts (0 for 0 ** negative)."""
    if x == 0 and e < 0:
        return 0
    return math.trunc(x ** e)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int8])
def test_integer_powers_are_pythons_value_truncated_toward_zero(launch, rng, dtype):
    n = 256
    x = rng.integers(-4, 5, n).astype(dtype)
    e = rng.integers(-7, 6, n).astype(dtype)
    x[:4], e[:4] = [0, 1, -1, -1], [-3, -9, -4, -5]  # 0 ** negative, and the units
    outs = [launch.poisoned(n, dtype) for _ in range(3)]
    launch(power)[1, n](launch.to_device(x), launch.to_device(e), *outs)
    launch.synchronize()
    info = np.iinfo(dtype)
    want = [python_rule(int(a), int(b)) for a, b in zip(x, e)]
    want = [(w - info.min) % 2**info.bits + info.min for w in want]  # NumPy's wrapping
    for out in outs:
        got = launch.get(out)
        assert got.dtype == dtype
        assert got.tolist() == want


def test_a_constant_negative_exponent_follows_the_same_rule(launch, rng):
    x = rng.integers(-3, 4, 64).astype(np.int64)
    out = launch.poisoned(64, np.int64)
    launch(power_minus_three)[1, 64](launch.to_device(x), out)
    launch.synchronize()
    assert launch.get(out).tolist() == [python_rule(int(a), -3) for a in x]


def test_python_int_arguments_follow_it_and_a_float_base_is_pythons_float(rng):
    @jitkern.rawkernel()
    def scalar_power(a, b, out):
        out[0] = a ** b
        out[1] = np.float64(a) ** b

    a = int(rng.choice([-2, -1, 1, 2, 3]))
    b = int(rng.integers(-5, 0))
    out = np.full(2, np.nan)
    scalar_power.simulate[1, 1](a, b, out)
    assert out[0] == python_rule(a, b)
    assert out[1] == pytest.approx(a ** b, rel=1e-15)


def test_constants_are_folded_by_python():
    @jitkern.rawkernel()
    def folded(out):
        out[0] = 2 ** -1

    out = np.zeros(1)
    folded.simulate[1, 1](out)
    assert out[0] == 0.5

    @jitkern.rawkernel()
    def zero_to_negative(out):
        out[0] = 0 ** -1

    with pytest.raises(jitkern.JitTypeError, match="division by zero in a constant"):
        zero_to_negative.simulate[1, 1](out)
