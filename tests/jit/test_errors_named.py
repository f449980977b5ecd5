"""JIT errors that name the mistake (issue 18): the built-in class Python would raise, the
position of the construct with a caret, and words that say what went wrong. Each kernel
goes through the public path (the simulator's launch, or inspect for an arch)."""

import inspect

import numpy as np
import pytest

import jitkern
from jitkern import jit

X = np.zeros(4)
min = 5  # noqa: A001 - a global that shadows the builtin (the test's point)


def position(func, marker: str) -> tuple[int, int]:
    lines, first = inspect.getsourcelines(func)
    for k, text in enumerate(lines):
        col = text.find(marker)
        if col >= 0:
            return first + k, col + 1
    raise AssertionError(marker)


def refused(launch_or_inspect, kernel, cls, base, marker, *words):
    with pytest.raises(cls) as info:
        launch_or_inspect()
    error = info.value
    assert isinstance(error, base) and isinstance(error, jitkern.JitError)
    message = str(error)
    line, col = position(kernel.py_func, marker)
    lines = message.splitlines()
    assert lines[0].startswith(f"{__file__}:{line}:{col}: "), message
    assert lines[2].index("^") == lines[1].index(marker), message
    for word in words:
        assert word in message, (word, message)
    return message


def test_an_unknown_array_attribute_is_an_attribute_error():
    @jitkern.rawkernel()
    def k(x):
        x[0] = x.colour

    refused(lambda: k.simulate[1, 1](X.copy()), k, jitkern.JitAttributeError, AttributeError,
            "x.colour", "no attribute 'colour'", "shape")


def test_a_range_step_of_zero_is_a_value_error():
    @jitkern.rawkernel()
    def k(x):
        for i in range(0, 4, 0):
            x[i] = 1.0

    refused(lambda: k.simulate[1, 1](X.copy()), k, jitkern.JitValueError, ValueError,
            "range(0, 4, 0)", "step must not be zero")


def test_a_parameter_shadowing_a_builtin_is_named():
    @jitkern.rawkernel()
    def k(x, abs):  # noqa: A002
        x[0] = abs(x[1])

    refused(lambda: k.simulate[1, 1](X.copy(), 2.0), k, jitkern.JitTypeError, TypeError,
            "abs(x[1])", "'abs' here is the parameter 'abs'", "float64", "shadows", "rename")


def test_a_local_shadowing_a_builtin_is_named():
    @jitkern.rawkernel()
    def k(x):
        len = 3  # noqa: A001
        x[0] = len(x)

    refused(lambda: k.inspect(X, arch="sm_90"), k, jitkern.JitTypeError, TypeError,
            "len(x)", "'len' here is the local variable 'len'", "shadows Python's len()")


def test_a_global_shadowing_a_builtin_is_named():
    @jitkern.rawkernel()
    def k(x):
        x[0] = min(x[1], x[2])

    refused(lambda: k.simulate[1, 1](X.copy()), k, jitkern.JitTypeError, TypeError,
            "min(x[1], x[2])", "'min' here is the global min = 5", __name__, "shadows")


@jitkern.rawkernel()
def inner(x):
    x[0] = 1.0


@jitkern.rawkernel(device=True)
def helper(x):
    x[0] = 1.0


def test_launching_a_kernel_inside_a_kernel_says_so():
    @jitkern.rawkernel()
    def outer(x):
        inner[1, 1](x)

    refused(lambda: outer.simulate[1, 1](X.copy()), outer, jitkern.JitTypeError, TypeError,
            "inner[1, 1]", "kernels cannot be launched from kernels",
            "@jitkern.rawkernel(device=True)", "inner(...)")


def test_launching_a_device_function_says_to_call_it():
    @jitkern.rawkernel()
    def outer(x):
        helper[1, 1](x)

    refused(lambda: outer.simulate[1, 1](X.copy()), outer, jitkern.JitTypeError, TypeError,
            "helper[1, 1]", "device function", "helper(...)")


def test_an_integer_literal_beyond_64_bits_is_positioned():
    @jitkern.rawkernel()
    def k(x):
        x[0] = x[1] + 99999999999999999999999

    refused(lambda: k.inspect(np.zeros(4, np.int64), arch="sm_90"), k,
            jitkern.JitOverflowError, OverflowError, "x[1] + 9999", "99999999999999999999999",
            "does not fit in 64 bits")


def test_an_integer_literal_beyond_64_bits_assigned_is_positioned():
    @jitkern.rawkernel()
    def k(x):
        y = 123456789012345678901234567890
        x[0] = y

    refused(lambda: k.simulate[1, 1](np.zeros(4, np.int64)), k, jitkern.JitOverflowError,
            OverflowError, "y = 1234", "123456789012345678901234567890", "64 bits")


def test_a_builtin_used_as_itself_still_works(rng):
    @jitkern.rawkernel()
    def k(x, out):
        out[0] = abs(x[0]) + len(x) + jit.threadIdx.x

    x = rng.uniform(-5, 5, 3)
    out = np.zeros(1)
    k.simulate[1, 1](x, out)
    assert out[0] == abs(x[0]) + 3


@jitkern.rawkernel(device=True)
def returns_undefined(a):
    return undefined_in_device  # noqa: F821 - the test's point


def test_an_undefined_name_in_a_kernels_return_is_a_name_error():
    @jitkern.rawkernel()
    def k(x):
        return undefined_in_kernel  # noqa: F821 - the test's point

    refused(lambda: k.simulate[1, 1](X.copy()), k, jitkern.JitNameError, NameError,
            "undefined_in_kernel", "name 'undefined_in_kernel' is not defined")


def test_an_undefined_name_in_a_device_functions_return_is_a_name_error():
    with pytest.raises(jitkern.JitNameError) as info:

        @jitkern.rawkernel()
        def k(x):
            x[0] = returns_undefined(x[1])

        k.simulate[1, 1](X.copy())
    line, col = position(returns_undefined.py_func, "undefined_in_device")
    assert str(info.value).startswith(f"{__file__}:{line}:{col}: name 'undefined_in_device'")


def test_an_augmented_assignment_of_an_undefined_name_is_a_name_error():
    @jitkern.rawkernel()
    def k(x):
        total += x[0]  # noqa: F821 - the test's point
        x[1] = total

    refused(lambda: k.simulate[1, 1](X.copy()), k, jitkern.JitNameError, NameError,
            "total +=", "'total' is used before assignment")
