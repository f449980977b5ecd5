"""Every rejected construct: the exact file:line:col, the caret, and what to do instead."""

import inspect
import math

import numpy as np
import pytest

from jitkern.errors import JitError, JitNameError, JitSyntaxError, JitTypeError
from jitkern import jit
from jitkern.jit import rawkernel

A = np.zeros(4, np.float32)
I = np.zeros(4, np.int32)
CAPTURED_LIST = [1, 2, 3]


def lineno_of(func, marker: str) -> tuple[int, int]:
    """(line, 1-based col) of ``marker`` inside ``func``'s source."""
    lines, first = inspect.getsourcelines(func)
    for k, text in enumerate(lines):
        col = text.find(marker)
        if col >= 0:
            return first + k, col + 1
    raise AssertionError(marker)


def check(kernel, args, cls, marker, *words):
    with pytest.raises(cls) as info:
        kernel.emit(*args)
    message = str(info.value)
    line, col = lineno_of(kernel.py_func, marker)
    head = message.splitlines()[0]
    assert head.startswith(f"{__file__}:{line}:{col}: "), message
    caret_line = message.splitlines()[2]
    assert caret_line.index("^") == message.splitlines()[1].index(marker), message
    for w in words:
        assert w in message, (w, message)
    assert isinstance(info.value, JitError)
    assert info.value.__cause__ is None
    return message


def test_list_literal():
    @rawkernel()
    def k(x):
        y = [1, 2]  # noqa

    check(k, (A,), JitSyntaxError, "[1, 2]", "a list is not supported", "tuple")


def test_unknown_name():
    @rawkernel()
    def k(x):
        x[0] = undefined_thing  # noqa: F821

    msg = check(k, (A,), JitNameError, "undefined_thing", "'undefined_thing' is not defined")
    assert "pass it as an argument" in msg


def test_captured_list_refused():
    @rawkernel()
    def k(x):
        x[0] = CAPTURED_LIST

    check(k, (A,), JitTypeError, "CAPTURED_LIST", "list cannot be captured", "numbers")


def test_type_change_of_variable():
    @rawkernel()
    def k(x):
        s = 0
        s = x[0]

    check(k, (A,), JitTypeError, "s = x[0]", "float32", "variable 's' of type int32", "s = 0.0")


def test_float_constant_into_int_variable_in_numpy_mode():
    @rawkernel(mode="numpy")
    def k(x):
        n = 1
        n += 0.5

    check(k, (A,), JitTypeError, "n += 0.5", "int64")


def test_with_statement():
    @rawkernel()
    def k(x):
        with open("f"):
            pass

    check(k, (A,), JitSyntaxError, "with open", "with is not supported")


def test_while_else():
    @rawkernel()
    def k(x):
        while x[0] > 0:
            x[0] -= 1
        else:
            x[1] = 0

    check(k, (A,), JitSyntaxError, "x[1] = 0", "while ... else", "flag")


def test_for_over_non_range():
    @rawkernel()
    def k(x):
        for v in x:
            pass

    check(k, (A,), JitSyntaxError, "x:", "range(...)")


def test_return_value_from_kernel():
    @rawkernel()
    def k(x):
        return x[0]

    check(k, (A,), JitTypeError, "x[0]", "kernels cannot return a value")


def test_builtin_wrong_type():
    @rawkernel()
    def k(x):
        jit.atomic_inc(x, 0, 1)

    check(k, (A,), JitTypeError, "jit.atomic_inc(", "atomic_inc does not support float32", "uint32")


def test_builtin_missing_argument():
    @rawkernel()
    def k(x):
        jit.shfl_sync(0xFFFFFFFF, x[0])

    check(k, (A,), JitTypeError, "jit.shfl_sync(", "missing the argument 'src_lane'", "width=32")


def test_builtin_unknown_keyword():
    @rawkernel()
    def k(x):
        jit.syncwarp(masks=1)

    check(k, (A,), JitTypeError, "jit.syncwarp(", "unexpected keyword argument 'masks'")


def test_unknown_jit_member():
    @rawkernel()
    def k(x):
        x[0] = jit.threadIdx.w

    check(k, (A,), JitNameError, "jit.threadIdx.w", "no member 'w'", "x, y, z")


def test_array_attribute():
    @rawkernel()
    def k(x):
        x[0] = x.foo

    check(k, (A,), JitNameError, "x.foo", "no attribute 'foo'", "shape")


def test_float_index():
    @rawkernel()
    def k(x):
        x[1.5] = 0

    check(k, (A,), JitTypeError, "x[1.5]", "index must be an integer")


def test_too_many_indices():
    @rawkernel()
    def k(x):
        x[0, 1] = 0

    check(k, (A,), JitTypeError, "x[0, 1]", "too many indices")


def test_complex_to_float_store():
    @rawkernel()
    def k(x):
        x[0] = 1j

    check(k, (A,), JitTypeError, "x[0] = 1j", "complex", "real")


def test_recursion_refused():
    message = None
    with pytest.raises(JitTypeError) as info:
        recursive_kernel.emit(I)
    message = str(info.value)
    assert "recursion is not supported" in message and "fact -> fact" in message
    assert "loop" in message


@rawkernel(device=True)
def fact(n):
    return 1 if n <= 1 else n * fact(n - 1)


@rawkernel()
def recursive_kernel(x):
    x[0] = fact(x[0])


def test_python_function_not_device():
    def helper(v):
        return v

    @rawkernel()
    def k(x):
        x[0] = helper(x[0])

    check(k, (A,), JitTypeError, "helper", "@jitkern.rawkernel(device=True)")


def test_unsupported_numpy_function():
    @rawkernel()
    def k(x):
        x[0] = np.linalg.norm(x)

    check(k, (A,), JitTypeError, "np.linalg", "module")


def test_range_step_zero():
    @rawkernel()
    def k(x):
        for i in range(0, 4, 0):
            x[i] = 0

    check(k, (A,), JitTypeError, "range(0, 4, 0)", "step must not be zero")


def test_range_of_floats():
    @rawkernel()
    def k(x):
        for i in range(x[0]):
            pass

    check(k, (A,), JitTypeError, "i in", "range() takes integers", "float32")


def test_constant_overflow():
    @rawkernel(mode="numpy")
    def k(x):
        v = x[0] + 300

    check(k, (np.zeros(4, np.int8),), JitTypeError, "x[0] + 300", "300 does not fit in int8")


def test_negative_step_on_unsigned_loop():
    @rawkernel()
    def k(x, n):
        for i in range(n, -1, -1):
            x[i] = 0

    check(k, (A, np.uint32(3)), JitTypeError, "-1,", "-1 does not fit in uint32")


def test_lambda_several_on_one_line():
    f, g = (lambda a: a), (lambda b: b)  # noqa: E731
    k = rawkernel(device=True)(f)
    with pytest.raises(JitSyntaxError) as info:
        k.parsed()
    assert "2 lambdas on one line" in str(info.value) and "def" in str(info.value)


def test_source_unavailable():
    namespace = {}
    exec("def made_by_exec(x):\n    x[0] = 1\n", namespace)
    k = rawkernel()(namespace["made_by_exec"])
    with pytest.raises(JitSyntaxError) as info:
        k.emit(A)
    assert "cannot read the source" in str(info.value)
    assert ".py file" in str(info.value)


def test_wrong_argument_count():
    @rawkernel()
    def k(x, y):
        pass

    with pytest.raises(JitTypeError) as info:
        k.emit(A)
    assert "takes 2 arguments (x, y), got 1" in str(info.value)


def test_errors_subclass_builtin_exceptions():
    assert issubclass(JitTypeError, TypeError) and issubclass(JitSyntaxError, SyntaxError)
    assert issubclass(JitNameError, NameError)


def test_grid_needs_constant():
    @rawkernel()
    def k(x, n):
        i = jit.grid(n)

    check(k, (A, 1), JitTypeError, "jit.grid(n)", "compile-time integer")


def test_math_on_complex_refused():
    @rawkernel()
    def k(x):
        v = math.erf(x[0])

    check(k, (np.zeros(2, np.complex64),), JitTypeError, "math.erf", "complex")


HOST_ARRAY = np.zeros(3)


def test_captured_numpy_array_refused():
    @rawkernel()
    def k(x):
        x[0] = HOST_ARRAY[0]

    check(k, (A,), JitTypeError, "HOST_ARRAY", "NumPy array cannot be captured", "kernel argument")


def test_local_used_before_assignment():
    @rawkernel()
    def k(x):
        for i in range(3):
            x[i] = total + 0
            total = x[i]

    check(k, (A,), JitNameError, "total + 0", "'total' is used before it is assigned")


def test_print_keywords():
    @rawkernel()
    def bad_sep(x):
        print(x[0], sep=x[1])

    check(bad_sep, (A,), JitError, "print(x[0], sep=x[1])", "sep", "constant string")

    @rawkernel()
    def bad_keyword(x):
        print(x[0], flush=True)

    check(bad_keyword, (A,), JitError, "print(x[0], flush=True)", "flush", "sep, end")
