"""Recursive device functions (issue 17): a recursive Fibonacci and a mutually recursive
pair, in the simulator and (marked gpu) on the device, checked against Python."""

import numpy as np
import pytest

import jitkern
from jitkern import jit


@jitkern.rawkernel(device=True)
def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


@jitkern.rawkernel(device=True)
def is_even(n):
    if n == 0:
        return True
    return is_odd(n - 1)


@jitkern.rawkernel(device=True)
def is_odd(n):
    if n == 0:
        return False
    return is_even(n - 1)


@jitkern.rawkernel(device=True)
def fill_down(x, i):
    if i >= 0:
        x[i] = i * 2
        fill_down(x, i - 1)


@jitkern.rawkernel()
def recursive_kernel(n, fibs, evens, filled):
    i = jit.grid(1)
    if i < n.shape[0]:
        fibs[i] = fib(n[i])
        evens[i] = is_even(n[i])
    if i == 0:
        fill_down(filled, filled.shape[0] - 1)


def py_fib(n):
    return n if n < 2 else py_fib(n - 1) + py_fib(n - 2)


def test_recursive_device_functions_match_python(launch, rng):
    count = 40
    n = rng.integers(0, launch.pick(18, 12), count)
    fibs = launch.poisoned(count, np.int64)
    evens = launch.poisoned(count, np.int32)
    filled = launch.poisoned(7, np.int64)
    launch(recursive_kernel)[1, 64](launch.to_device(n), fibs, evens, filled)
    launch.synchronize()
    np.testing.assert_array_equal(launch.get(fibs), [py_fib(int(v)) for v in n])
    np.testing.assert_array_equal(launch.get(evens), [int(v % 2 == 0) for v in n])
    np.testing.assert_array_equal(launch.get(filled), np.arange(7) * 2)


def test_recursive_device_functions_compile_with_prototypes():
    source = recursive_kernel.inspect(np.zeros(3, np.int64), np.zeros(3, np.int64),
                                      np.zeros(3, np.int32), np.zeros(3, np.int64),
                                      arch="sm_90").source
    assert "__device__ long long jk_fn_fib(long long n);" in source
    assert "__device__ bool jk_fn_is_even(long long n);" in source
    assert "__device__ void jk_fn_fill_down(" in source


def test_a_recursive_call_before_any_return_is_refused_with_the_fix():
    @jitkern.rawkernel(device=True)
    def down(n):
        if n > 0:
            return down(n - 1) + 1
        return 0

    @jitkern.rawkernel()
    def k(x):
        x[0] = down(x[1])

    with pytest.raises(jitkern.JitTypeError) as info:
        k.simulate[1, 1](np.zeros(2, np.int64))
    assert type(info.value) is jitkern.JitRecursionError and isinstance(info.value, ValueError)
    message = str(info.value)
    assert "down calls itself before a return statement gives its type" in message
    assert "return down(n - 1) + 1" in message.splitlines()[1]
    assert "base case first" in message
