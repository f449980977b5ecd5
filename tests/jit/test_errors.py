"""Every rejected construct: the exact file:line:col, the caret, and what to do instead."""

import importlib.util
import inspect
import math
import uuid

import numpy as np
import pytest

from jitkern.errors import (
    CompileError,
    JitAttributeError,
    JitError,
    JitIndexError,
    JitkernError,
    JitkernTypeError,
    JitNameError,
    JitSyntaxError,
    JitTypeError,
    JitValueError,
    KernelArgumentError,
)
import jitkern
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

    check(k, (A,), JitAttributeError, "jit.threadIdx.w", "no member 'w'", "x, y, z")


def test_array_attribute():
    @rawkernel()
    def k(x):
        x[0] = x.foo

    check(k, (A,), JitAttributeError, "x.foo", "no attribute 'foo'", "shape")


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


def test_recursion_before_the_return_type_is_known_says_how_to_order_it():
    # recursion compiles (tests/jit/test_recursion.py) once a return gives the type first
    with pytest.raises(ValueError) as info:  # cupyx.jit's class for recursion
        recursive_kernel.emit(I)
    assert type(info.value) is jitkern.JitRecursionError
    assert isinstance(info.value, JitTypeError)  # and what jitkern raised before
    line, col = lineno_of(fact.py_func, "fact(n - 1)")
    message = str(info.value)
    assert message.startswith(f"{__file__}:{line}:{col}: ")
    assert message.splitlines()[2].index("^") == message.splitlines()[1].index("fact(n - 1)")
    assert "fact calls itself before a return statement gives its type" in message
    assert "return 1 if n <= 1 else n * fact(n - 1)" in message.splitlines()[1]
    assert "base case first" in message


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

    check(k, (A,), JitValueError, "range(0, 4, 0)", "step must not be zero")


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


# -- issue 9 / issue 8: every refusal positioned, typed as users catch it ----------------


def test_constant_tuple_index_out_of_range():
    @rawkernel()
    def k(x):
        t = (1, 2)
        x[0] = t[5]

    check(k, (A,), JitIndexError, "t[5]", "tuple index 5 is out of range", "2 items", "-2 to 1")


def test_runtime_tuple_index_out_of_range():
    @rawkernel()
    def k(x):
        t = (x[0], 1)
        x[1] = t[-3]

    check(k, (A,), JitIndexError, "t[-3]", "tuple index -3 is out of range", "2 items")


def test_device_function_arity_names_the_function():
    @rawkernel(device=True)
    def dev(a, b):
        return a + b

    @rawkernel()
    def k(x):
        x[0] = dev(x[0])

    check(k, (A,), JitTypeError, "dev(x[0])", "device function dev()", "takes 2 arguments (a, b)",
          "got 1")


def test_unsupported_argument_dtype_names_the_parameter():
    @rawkernel()
    def k(x, when):
        x[0] = 1

    with pytest.raises(KernelArgumentError) as info:
        k.emit(A, np.zeros(3, "datetime64[s]"))
    message = str(info.value)
    assert "k() argument 'when'" in message and "datetime64" in message
    assert isinstance(info.value, TypeError) and isinstance(info.value, JitkernError)


@pytest.mark.parametrize("width", [3, 0, 64, -4])
def test_shfl_width_must_be_a_power_of_two_up_to_32(width, monkeypatch):
    monkeypatch.setitem(globals(), "WIDTH", width)

    @rawkernel()
    def bad(x):
        x[0] = jit.shfl_down_sync(0xFFFFFFFF, x[1], 1, WIDTH)

    check(bad, (A,), JitValueError, "jit.shfl_down_sync", "width must be a power of two",
          f"got {width}")

    @rawkernel()
    def at_run_time(x, w):
        x[0] = jit.shfl_down_sync(0xFFFFFFFF, x[1], 1, w)

    assert "__shfl_down_sync(4294967295u, x[1], 1, w)" in at_run_time.emit(A, np.int32(16))


def test_shfl_width_16_accepted():
    @rawkernel()
    def k(x):
        x[0] = jit.shfl_xor_sync(0xFFFFFFFF, x[1], 1, 16)

    assert "__shfl_xor_sync(4294967295u, x[1], 1, 16)" in k.emit(A)


def test_negative_constant_index_refused():
    @rawkernel()
    def k(x):
        x[0] = x[-1]

    check(k, (A,), JitIndexError, "-1", "negative index -1", "do not wrap around",
          "x.shape[0] - 1")

    @rawkernel()
    def k2(m):
        m[0, -2] = 1.0

    check(k2, (np.zeros((2, 2), np.float32),), JitIndexError, "-2", "negative index -2")

    @rawkernel()
    def k3(x):
        jit.atomic_add(x, -1, 1.0)

    check(k3, (A,), JitIndexError, "jit.atomic_add", "negative index -1")


def test_decorating_a_builtin_is_refused():
    for builtin in (print, len):
        with pytest.raises(JitkernTypeError) as info:
            rawkernel()(builtin)
        message = str(info.value)
        assert f"the builtin {builtin.__name__}()" in message and "def" in message


def test_sum_of_a_generator_says_what_to_write():
    @rawkernel()
    def k(x):
        x[0] = sum(x[i] for i in range(3))

    check(k, (A,), JitTypeError, "sum", "builtin sum() is not available in kernels",
          "for i in range(n): s += x[i]")


def test_shadowed_range_is_named():
    @rawkernel()
    def k(x):
        range = 3  # noqa: A001
        for i in range(2):
            x[i] = range

    check(k, (A,), JitNameError, "range(2)", "'range' here is a variable of the kernel",
          "rename")


def test_calling_a_kernel_from_a_kernel():
    @rawkernel()
    def inner(x):
        x[0] = 1.0

    @rawkernel()
    def outer(x):
        inner(x)

    check(outer, (A,), JitTypeError, "inner(x)", "inner is a kernel",
          "@jitkern.rawkernel(device=True)", "launch it from the host")


def test_error_classes_users_catch():
    @rawkernel()
    def grid0(x):
        x[0] = jit.grid(0)

    message = check(grid0, (A,), JitValueError, "jit.grid(0)", "must be one of [1, 2, 3]")
    assert "got 0" in message
    for cls, base in ((JitTypeError, TypeError), (JitValueError, ValueError),
                      (JitNameError, NameError), (JitIndexError, IndexError),
                      (JitSyntaxError, SyntaxError)):
        assert issubclass(cls, base) and issubclass(cls, JitkernError)


def test_launch_call_errors_do_not_name_internals():
    @rawkernel()
    def k(x):
        x[0] = 1.0

    with pytest.raises(KernelArgumentError) as info:
        k(A)  # the grid, block, args form with only one
    assert "_launch" not in str(info.value) and "k[grid, block](*args)" in str(info.value)
    with pytest.raises(KernelArgumentError) as info:
        k[1, 1](A, out=A)
    assert "_launch_star" not in str(info.value) and "keyword argument 'out'" in str(info.value)


# -- NVRTC and ptxas errors: their words, the user's line, what to change ----------------


def test_too_much_shared_memory_points_at_the_declaration():
    @rawkernel()
    def k(x):
        s = jit.shared_memory(np.float64, 100000)
        s[jit.threadIdx.x] = x[jit.threadIdx.x]
        jit.syncthreads()
        x[jit.threadIdx.x] = s[jit.threadIdx.x + 1]

    with pytest.raises(CompileError) as info:
        k.inspect(A, arch="sm_90")
    message = str(info.value)
    line, _col = lineno_of(k.py_func, "jit.shared_memory")
    assert "uses too much shared data" in message  # ptxas's own words
    assert f"{__file__}:{line}" in message and "dynamic shared memory" in message
    assert "please report" not in message


def test_bad_option_names_the_option():
    # refused when the kernel is made (issue 18), not at its first compile
    def k(x):
        x[0] = 1.0

    with pytest.raises(jitkern.JitkernValueError) as info:
        rawkernel(k, options=("--no-such-option",))
    message = str(info.value)
    assert message.startswith("rawkernel 'k': options: '--no-such-option' is not an NVRTC option")
    assert "please report" not in message


def test_error_in_generated_code_is_a_report_with_the_generated_line(monkeypatch):
    from jitkern.compiler import program

    monkeypatch.setattr(program, "PRELUDE", program.PRELUDE + "\nint jk_broken = ;\n")

    @rawkernel()
    def k(x):
        x[0] = 2.0

    with pytest.raises(CompileError) as info:
        k.inspect(A, arch="sm_90")
    message = str(info.value)
    source = info.value.source.splitlines()
    bad = next(n for n, text in enumerate(source, 1) if "jk_broken" in text)
    assert f"jitkern-generated.cu({bad}): error" in message  # NVRTC's words, real line
    assert f"at line {bad} of the generated source: int jk_broken = ;" in message
    assert "please report this" in message
    assert f"{__file__}(" not in message  # no generated line under the user's file name


@pytest.mark.parametrize("target, marker, words", [
    ("x, = jit.grid(1)", "x, =", "cannot unpack a value of type uint32"),
    ("x, y = jit.grid(1)", "x, y =", "cannot unpack a value of type uint32"),
    ("x, y = jit.grid(3)", "x, y =", "cannot unpack 3 values into 2 names"),
    ("x, y, z, w = o.shape", "x, y, z, w =", "cannot unpack 1 values into 4 names"),
])
def test_unpacking_a_scalar_or_a_wrong_count_is_a_value_error(tmp_path, target, marker, words):
    # cupyx.jit raises ValueError for both; Python says TypeError for a non-iterable, which
    # the class is too
    source = f"from jitkern import jit\n\n\n@jit.rawkernel()\ndef k(o):\n    {target}\n"
    path = tmp_path / "unpack_kernels.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"unpack_{uuid.uuid4().hex}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(ValueError) as info:
        module.k.emit(A)
    assert type(info.value) is jitkern.JitUnpackError
    assert isinstance(info.value, TypeError) and isinstance(info.value, JitkernError)
    head, line, caret = str(info.value).splitlines()[:3]
    assert head == f"{path}:6:5: {words}"
    assert line.strip() == target and caret.index("^") == line.index(marker[0])
    assert caret.count("^") + caret.count("~") == len(target.split(" =")[0])
