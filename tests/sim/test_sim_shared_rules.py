"""One set of rules for both back ends: the CUDA build and the simulator refuse the same
programs with the same error and message, and the builtin records' templates serve both
(numpy.negative is unary minus in each, so fp8 negation compiles)."""

import numpy as np
import pytest

from jitkern import jit
from jitkern.errors import JitSyntaxError, JitTypeError, JitUnpackError, JitValueError
from jitkern.jit import rawkernel
from jitkern.compiler import types as T


@rawkernel()
def prints_an_array(x):
    print(x)


@rawkernel()
def prints_a_tuple_of_arrays(x):
    print(1, (x, x))


@rawkernel()
def inverts_a_float(x):
    x[0] = ~x[0]


@rawkernel()
def steps_by_zero(x):
    for i in range(0, 4, 0):
        x[i] = 1


@rawkernel()
def unrolls_negatively(x):
    for i in jit.range(0, 4, 1, unroll=-2):
        x[i] = 1


@rawkernel()
def branches_of_two_types(x):
    t = (1, 2) if x[0] > 0 else 3
    x[0] = t


@rawkernel()
def while_else(x):
    i = 0
    while i < 3:
        i += 1
    else:  # noqa: PLW0120 - the construct under test
        x[0] = 1


@rawkernel()
def loops_over_floats(x):
    for v in (0.5, "a"):
        x[0] = v


@rawkernel()
def converts_complex_to_real(x, z):
    x[0] = -z


@rawkernel()
def assert_message_not_constant(x):
    assert x[0] > 0, x


@rawkernel()
def unpacks_three_from_two(x):
    a, b, c = (x[0], x[1])
    x[0] = a + b + c


@rawkernel(device=True)
def twice(v):
    return v * 2


@rawkernel()
def calls_with_two_arguments(x):
    x[0] = twice(x[0], x[1])


REFUSED = [
    (calls_with_two_arguments, JitTypeError, "twice() takes 1 argument (v), got 2"),
    (prints_an_array, JitTypeError, "print() cannot show a value of type"),
    (prints_a_tuple_of_arrays, JitTypeError, "print() cannot show"),
    (inverts_a_float, JitTypeError, "~ needs an integer or bool, got float32"),
    (steps_by_zero, JitValueError, "range() step must not be zero"),
    (unrolls_negatively, JitTypeError, "unroll must be True, False or a positive"),
    (branches_of_two_types, JitTypeError, "both branches must have one type"),
    (while_else, JitSyntaxError, "while ... else is not supported"),
    (loops_over_floats, JitTypeError, "needs a non-empty tuple of numbers"),
    (assert_message_not_constant, JitTypeError, "the assert message must be a string"),
    (unpacks_three_from_two, JitUnpackError, "cannot unpack 2 values into 3 names"),
]


def _error(call):
    with pytest.raises(Exception) as info:
        call()
    return info.value


@pytest.mark.parametrize("kernel, cls, words", REFUSED, ids=lambda p: getattr(p, "__name__", ""))
def test_both_back_ends_refuse_with_one_message(kernel, cls, words):
    x = np.zeros(4, np.float32)
    gpu = _error(lambda: kernel.emit(T.array(T.float32, 1, True, True)))
    sim = _error(lambda: kernel.simulate.source(x))
    assert type(gpu) is cls and type(sim) is cls
    assert words in str(gpu)
    assert str(sim) == str(gpu)  # the same position, line, caret and hint


def test_complex_to_real_is_refused_alike():
    x, z = np.zeros(1, np.float32), np.complex64(1 + 2j)
    gpu = _error(
        lambda: converts_complex_to_real.emit(T.array(T.float32, 1, True, True), T.complex64)
    )
    sim = _error(lambda: converts_complex_to_real.simulate.source(x, z))
    assert type(gpu) is type(sim) is JitTypeError
    assert "cannot store" in str(gpu) and str(sim) == str(gpu)


@rawkernel()
def negations(x, y, z):
    i = jit.threadIdx.x
    y[i] = np.negative(x[i])
    z[i] = -x[i]


def test_numpy_negative_is_unary_minus_in_cpp():
    fp8 = T.array(T.float8_e4m3fn, 1, True, True)
    lines = [ln.strip() for ln in negations.emit(fp8, fp8, fp8).splitlines()]
    y = next(ln for ln in lines if ln.startswith("y["))
    z = next(ln for ln in lines if ln.startswith("z["))
    assert y.split("=", 1)[1] == z.split("=", 1)[1]  # one spelling: fp8 through float32
    assert "(float)" in y
    negations.inspect(fp8, fp8, fp8, arch="sm_90")  # cuda_fp8.h has no operator-


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.float16, np.float64, np.complex64])
def test_numpy_negative_and_minus_agree_in_the_simulator(rng, dtype):
    x = (rng.standard_normal(32) * 50).astype(dtype)
    y = np.full(32, 7, dtype)
    z = np.full(32, 9, dtype)
    negations.simulate[1, 32](x, y, z)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(y, np.negative(x))
    np.testing.assert_array_equal(z, y)
