"""jitkern.fuse: the NumPy path, result types, generated kernels (NVRTC, no GPU) and errors on
the CPU; device arrays on a GPU, compared with the same function run through NumPy."""

import inspect
import itertools
import linecache
import math
import re
import types

import numpy as np
import pytest

import jitkern
from jitkern.jit import builtins as B
from jitkern.kernels.elementwise import ElementwiseKernel
from jitkern.kernels.fuse import REDUCTIONS, Fused, FuseError, fuse
from jitkern.kernels.reduction import ReductionKernel

ARCHS = ["sm_80", "sm_90"]

# A stand-in for CuPy: fuse reads any module named cupy (or jitkern) as NumPy, in kernels and
# on the NumPy path alike, so functions written against it run here without CuPy.
cp = types.ModuleType("cupy")


@fuse()
def squared_diff(x, y):
    return (x - y) * (x - y)


@fuse(kernel_name="sum_of_products")
def sum_of_products(x, y):
    return np.sum(x * y, axis=-1)


@fuse
def mixed(x, y, s):
    t = np.where(x > y, x, y * s)
    return np.exp(-t) + np.sqrt(abs(x)) // 2 + x % 3 - np.maximum(x, 1.5)


@fuse()
def method_max(x):
    return (x * 2).max(axis=0, keepdims=True)


@fuse
def written_for_cupy(x, y):
    return cp.where(x > y, cp.exp(x), cp.sqrt(cp.abs(y)))


@fuse
def written_for_jitkern(x, y):
    return jitkern.where(x > y, jitkern.exp(x), jitkern.sqrt(jitkern.abs(y)))


@fuse
def written_for_numpy(x, y):
    return np.where(x > y, np.exp(x), np.sqrt(np.abs(y)))


@fuse
def written_with_math(x, y):
    return np.where(x > y, math.exp(x), math.sqrt(abs(y)))


@fuse
def rebinds(x, y):
    t = x > y  # a bool here ...
    t = t * x + y  # ... and a number here, as NumPy allows
    x = t / 2
    return x


@fuse
def two_outputs(x, y):
    return x + y, x * y


@fuse
def narrow(x, y):
    return (x * x) / 3 + (y * y) // 3 + (x << 2)  # 8-bit products wrap, as in NumPy


def _host(shape, dtype, rng):
    """Random values of a dtype, away from the edges where NumPy and CUDA may differ."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        low = 1 if dtype.kind == "u" else -9
        return rng.integers(low, 10, size=shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.random(shape) + 0.5 + 1j * (rng.random(shape) - 0.5)).astype(dtype)
    return (rng.random(shape) * 4 - 2).astype(dtype)


# ---------------------------------------------------------------------------
# the NumPy path: the original function, array modules bound to NumPy


def test_spec_numpy_path():
    x, y = np.arange(10), np.arange(10)[::-1]
    np.testing.assert_array_equal(squared_diff(x, y), [81, 49, 25, 9, 1, 1, 9, 25, 49, 81])
    assert squared_diff(3, 5) == 4
    np.testing.assert_array_equal(sum_of_products(np.ones((3, 4)), np.ones((3, 4))), [4, 4, 4])


def test_numpy_path_matches_numpy(rng):
    x = _host(5, np.float32, rng)
    y = _host(5, np.float32, rng)
    r = mixed(x, y, 2.0)
    assert r.dtype == np.float32
    expected = (
        np.exp(-np.where(x > y, x, y * 2.0)) + np.sqrt(abs(x)) // 2 + x % 3 - np.maximum(x, 1.5)
    )
    np.testing.assert_array_equal(r, expected)
    np.testing.assert_array_equal(method_max(x), (x * 2).max(axis=0, keepdims=True))


def test_numpy_path_reads_array_modules_as_numpy(rng):
    x, y = _host((3, 4), np.float64, rng), _host((3, 4), np.float64, rng)
    expected = np.where(x > y, np.exp(x), np.sqrt(np.abs(y)))
    for fused in (written_for_cupy, written_for_jitkern, written_for_numpy):
        np.testing.assert_array_equal(fused(x, y), expected)
    assert not hasattr(cp, "exp")  # the module itself is untouched
    with pytest.raises(TypeError):  # math stays Python's math on the NumPy path
        written_with_math(x, y)


# ---------------------------------------------------------------------------
# result types: the kernel's output dtype is what NumPy gives for the same arguments


def _probe(spec):
    """An argument standing for ``spec``: a dtype name -> an array, else the scalar itself."""
    return np.ones((2, 3), spec) if isinstance(spec, str) else spec


def _output_dtypes(fused, *specs):
    """The kernel's output dtypes for arguments like ``specs``, or 'refused'."""
    try:
        kernel = fused.kernel_for(*[_probe(s) for s in specs])
    except TypeError:
        return "refused"
    return tuple(p.dtype for p in kernel.out_params)


def _numpy_dtypes(fused, *specs):
    """The dtypes of what NumPy returns for the same function and arguments, or 'refused'."""
    try:
        with np.errstate(all="ignore"):
            result = fused(*[_probe(s) for s in specs])
    except TypeError:
        return "refused"
    results = result if isinstance(result, tuple) else (result,)
    return tuple(np.asarray(r).dtype for r in results)


@fuse
def affine(x, y):
    return x * 2 - y / 3


@fuse
def floor_mod(x, y):
    return x // y + x % y


@fuse
def power(x, y):
    return x**y + np.power(y, 2)


@fuse
def comparisons(x, y):
    return (x < y) | (x == y) & ~(x > 1)


@fuse
def lerp(x, a):
    return x * (1 - a) + a


@fuse
def transcendental(x, y):
    return np.exp(x) + np.hypot(x, y) - np.arctan2(y, x) * np.log10(np.abs(x) + 1)


@fuse
def choose(c, x, y):
    return np.where(c, x, y)


@fuse
def rounding(x):
    return np.floor(x) + np.ceil(x) - np.negative(x) * np.square(x)


REAL_SPECS = ["bool", "int8", "uint8", "int16", "int32", "uint32", "int64", "float16", "float32",
              "float64"]  # fmt: skip
SCALAR_SPECS = [True, 3, 2.5, np.float32(1.5), np.int16(2)]


def _pairs(specs):
    return [p for p in itertools.product(specs, repeat=2) if any(isinstance(s, str) for s in p)]


@pytest.mark.parametrize(
    "fused",
    [affine, floor_mod, power, comparisons, transcendental, two_outputs],
    ids=lambda f: f.__name__,
)
def test_output_dtypes_match_numpy(fused):
    specs = REAL_SPECS + SCALAR_SPECS
    if fused in (affine, power, two_outputs):
        specs = specs + ["complex64", "complex128", 1j]
    refused = 0
    for x, y in _pairs(specs):
        got = _output_dtypes(fused, x, y)
        assert got == _numpy_dtypes(fused, x, y), (x, y)
        refused += got == "refused"
    assert refused < len(_pairs(specs)) / 4  # the table compares types, not refusals


@pytest.mark.parametrize("x", REAL_SPECS)
def test_output_dtypes_with_python_scalars_are_weak(x):
    # a Python float keeps a float32 array float32, a Python int keeps an int8 array int8
    for a in (0.5, 0, True):
        assert _output_dtypes(lerp, x, a) == _numpy_dtypes(lerp, x, a), (x, a)
    assert _output_dtypes(rounding, x) == _numpy_dtypes(rounding, x)


def test_where_dtypes_match_numpy():
    for x, y in _pairs(REAL_SPECS + SCALAR_SPECS + ["complex64"]):
        assert _output_dtypes(choose, "bool", x, y) == _numpy_dtypes(choose, "bool", x, y)
    assert _output_dtypes(choose, "int32", 1, 2.5) == (np.dtype(np.float64),)


def test_rebinding_a_name_follows_numpy():
    for x, y in _pairs(["bool", "int8", "float32", 2.5]):
        assert _output_dtypes(rebinds, x, y) == _numpy_dtypes(rebinds, x, y)


def _reducer(reduce, axis=0, keepdims=False):
    """``reduce(x * 1, axis=..., keepdims=...)`` fused; fuse reads the closure's values."""
    return fuse(lambda x: reduce(x * 1, axis=axis, keepdims=keepdims))


def _unary(function):
    return fuse(lambda x: function(x))


def _binary(function):
    return fuse(lambda x, y: function(x, y))


REDUCERS = {name: _reducer(getattr(np, name)) for name in sorted(REDUCTIONS)}


@pytest.mark.parametrize("name", sorted(REDUCERS))
@pytest.mark.parametrize("dtype", REAL_SPECS + ["uint16", "complex64"])
def test_reduction_dtypes_match_numpy(name, dtype):
    fused = REDUCERS[name]
    if np.dtype(dtype).kind == "c" and REDUCTIONS[name].ordered:
        with pytest.raises(TypeError, match="complex numbers are not ordered"):
            fused.kernel_for(_probe(dtype))
        return
    assert isinstance(fused.kernel_for(_probe(dtype)), ReductionKernel)
    assert _output_dtypes(fused, dtype) == _numpy_dtypes(fused, dtype)


# ---------------------------------------------------------------------------
# the generated kernels: a JIT device function, compiled by NVRTC


def _device_code(fused, *specs) -> str:
    return fused.kernel_for(*[_probe(s) for s in specs]).preamble.split("}  // namespace jk\n")[1]


def test_the_kernel_calls_a_jit_device_function():
    kernel = mixed.kernel_for(_probe("float32"), _probe("float32"), 2.0)
    assert isinstance(kernel, ElementwiseKernel) and kernel.name == "fused_mixed"
    assert kernel.operation == "out0 = jk_fused_mixed(in0, in1, in2);"
    assert [p.dtype for p in kernel.in_params] == [np.float32, np.float32, np.float64]
    code = kernel.preamble
    assert "// signature: (float32, float32, weak float64); mode=numpy" in code
    assert "namespace jk {" in code  # the JIT's prelude
    assert "__device__ __forceinline__ float jk_fused_mixed(float x, float y, double s)" in code
    line = inspect.getsourcelines(mixed.__wrapped__)[1] + 2
    assert f'#line {line} "{__file__}"' in code
    assert "// t = np.where(x > y, x, y * s)" in code
    assert "jk::floordiv(" in code and "jk::npmax(" in code and "expf(" in code


def test_reduction_map_calls_the_device_function():
    kernel = sum_of_products.kernel_for(_probe("int8"), _probe("int8"))
    assert isinstance(kernel, ReductionKernel) and kernel.name == "sum_of_products"
    assert kernel.map_expr == "jk_fused_sum_of_products(in0, in1)"
    assert kernel.reduce_expr == "a + b" and kernel.identity == "0"
    assert kernel.reduce_type == "long long" and kernel.out_params[0].dtype == np.int64
    half = method_max.kernel_for(_probe("float16"))
    assert half.reduce_expr == "jk::npmax(a, b)" and half.identity is None
    assert half.reduce_type == "float" and half.out_params[0].dtype == np.float16


def test_array_module_spellings_compile_to_the_same_code():
    def body(fused):
        code = _device_code(fused, "float32", "float32")
        return [ln for ln in code.splitlines() if ln.startswith("    return")]

    expected = body(written_for_numpy)
    assert expected == ["    return ((x > y) ? expf(x) : sqrtf(fabsf(y)));"]
    for fused in (written_for_cupy, written_for_jitkern, written_with_math):
        assert body(fused) == expected, fused.__name__


def test_narrow_integer_products_wrap_in_the_expression():
    code = _device_code(narrow, "uint8", "int8")
    assert "((unsigned char)(x * x))" in code and "((signed char)(y * y))" in code
    assert _output_dtypes(narrow, "uint8", "int8") == _numpy_dtypes(narrow, "uint8", "int8")


def test_jit_kernels_gain_the_numpy_functions_fuse_uses():
    names = ["exp", "log", "log2", "log10", "sqrt", "sin", "cos", "tan", "arcsin", "arccos",
             "arctan", "sinh", "cosh", "tanh", "floor", "ceil", "abs", "absolute", "square",
             "negative", "maximum", "minimum", "arctan2", "hypot", "power", "where"]  # fmt: skip
    missing = [n for n in names if getattr(np, n) not in B.PY_FUNCTIONS]
    assert missing == []


CASES = [
    (mixed, ("float32", "float32", 2.0)),
    (mixed, ("float16", "float16", 2.0)),
    (mixed, ("int8", "uint16", 3)),
    (affine, ("complex64", 2.5)),
    (power, ("int32", "int8")),
    (comparisons, ("bool", "int16")),
    (transcendental, ("float16", "int8")),
    (choose, ("float32", "int64", 0.5)),
    (rounding, ("int32",)),
    (narrow, ("uint8", "int8")),
    (two_outputs, ("float64", "complex128")),
    (sum_of_products, ("int8", "int8")),
    (method_max, ("float16",)),
    (REDUCERS["prod"], ("bool",)),
    (REDUCERS["min"], ("float64",)),
    (REDUCERS["sum"], ("complex64",)),
]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize(
    "fused,specs", CASES, ids=[f"{f.__name__}-{'-'.join(map(str, s))}" for f, s in CASES]
)
def test_generated_kernels_compile(fused, specs, arch):
    args = [np.ones((4, 6), s) if isinstance(s, str) else s for s in specs]
    result = fused.inspect(*args, arch=arch)
    assert result.cubin and result.arch == arch


@pytest.mark.parametrize("arch", ARCHS)
def test_reductions_compile_for_each_axis_form(arch):
    x = np.ones((3, 4, 5), np.float32)
    for axis in (None, 1, -1, (0, 2)):
        for keepdims in (False, True):
            fused = _reducer(np.sum, axis, keepdims)
            assert fused.kernel_for(x).reduce_expr == "a + b"
            assert fused.inspect(x, arch=arch).cubin


def test_kernels_are_cached_per_signature():
    f32 = np.ones((4, 5), np.float32)
    first = mixed.kernel_for(f32, f32, 2.0)
    assert mixed.kernel_for(np.zeros((7, 1), np.float32), f32, 3.5) is first  # shape, value
    assert mixed.kernel_for(f32, f32, 2) is not first  # another scalar type
    assert mixed.kernel_for(f32, f32, np.float32(2)) is not first
    assert mixed.kernel_for(f32.astype(np.float64), f32, 2.0) is not first  # another dtype
    assert mixed.kernel_for(np.ones(3, np.float32), f32, 2.0) is not first  # another ndim
    assert len({id(k) for k, _ in mixed._kernels.values()}) == len(mixed._kernels)


def test_decorator_forms():
    def f(x):
        return x + 1

    assert isinstance(fuse(f), Fused) and fuse(f).kernel_name == "fused_f"
    assert fuse()(f).kernel_name == "fused_f"
    assert fuse(kernel_name="k")(f).kernel_name == "k"
    assert fuse(lambda x: x * 2).kernel_name == "fused_lambda"
    with pytest.raises(TypeError, match="fuse"):
        fuse(f, f)
    assert repr(fuse(f)) == "<jitkern.fuse 'f'>"


# ---------------------------------------------------------------------------
# errors: JitError subclasses naming file:line:col, with the line and a caret


@fuse
def has_loop(x):
    for _ in range(3):
        x = x + 1
    return x


@fuse
def has_if(x):
    if x > 0:
        x = -x
    return x


@fuse
def has_augassign(x):
    t = x * 2
    t += 1
    return t


@fuse
def no_return(x):
    y = x + 1  # noqa: F841


@fuse
def unknown_function(x):
    return np.cumsum(x) * 2


@fuse
def undefined_name(x):
    return x + not_defined_anywhere  # noqa: F821


@fuse
def where_two_args(x):
    return np.where(x > 0, x)


@fuse
def exp_two_args(x, y):
    return x + np.exp(x, y)


@fuse
def uses_not(x):
    return not x


@fuse
def uses_and(x, y):
    return (x > 0) and (y > 0)


@fuse
def chained(x, y):
    return 0 < x < y


@fuse
def if_expression(x):
    return x if x > 0 else -x


@fuse
def nested_sum(x):
    return np.sum(x, axis=0) + 1


@fuse
def python_max(x, y):
    return max(x, y)


@fuse
def axis_not_constant(x, k):
    return np.sum(x, axis=k)


@fuse
def reduction_dtype(x):
    return x.sum(axis=0, dtype=np.float64)


@fuse
def negate_bool(x):
    return -(x > 0)


ERRORS = [
    (has_loop, FuseError, "for _ in", "a for loop is not supported in fused functions"),
    (has_if, FuseError, "if x > 0", "an if statement is not supported.*xp.where"),
    (has_augassign, FuseError, "t += 1", "in-place assignment.*t = t \\+"),
    (no_return, FuseError, "y = x + 1", "must end with 'return expr'"),
    (unknown_function, jitkern.JitTypeError, "np.cumsum(x)", "cumsum cannot be called"),
    (undefined_name, jitkern.JitNameError, "not_defined", "'not_defined_anywhere' is not defined"),
    (
        where_two_args,
        jitkern.JitTypeError,
        "np.where(",
        "numpy.where.. is missing the argument 'y'",
    ),
    (exp_two_args, jitkern.JitTypeError, "np.exp(", "takes at most 1 arguments"),
    (uses_not, FuseError, "not x", "'not' does not work elementwise"),
    (uses_and, FuseError, "(x > 0) and", "'and' / 'or' do not work elementwise"),
    (chained, FuseError, "0 < x", "chained comparisons"),
    (if_expression, FuseError, "x if x", "use xp.where"),
    (nested_sum, FuseError, "np.sum(", "outermost call of the returned expression"),
    (python_max, jitkern.JitTypeError, "max(x", "Python's max\\(\\) does not work elementwise"),
    (axis_not_constant, FuseError, "k)", "axis must be a constant"),
    (reduction_dtype, FuseError, "dtype=", "only axis= and keepdims="),
    (negate_bool, jitkern.JitTypeError, "-(x > 0)", "NumPy has no unary - for bools"),
]


def _position(fused, text):
    """(line, column) of ``text`` in the fused function's source, both 1-based."""
    lines, first = inspect.getsourcelines(fused.__wrapped__)
    for k, line in enumerate(lines):
        if text in line and (k > 1 or text.startswith("def")):  # lines[0] is "@fuse"
            return first + k, line.index(text) + 1
    raise AssertionError(text)


@pytest.mark.parametrize("fused,cls,where,message", ERRORS, ids=[e[0].__name__ for e in ERRORS])
def test_errors_name_the_position(fused, cls, where, message):
    args = [np.ones(3, np.float32)] * len(inspect.signature(fused.__wrapped__).parameters)
    with pytest.raises(cls) as info:
        fused.kernel_for(*args)
    assert isinstance(info.value, jitkern.JitError)
    line, col = _position(fused, where)
    text = str(info.value)
    first, source_line, caret = text.splitlines()[:3]
    assert first.startswith(f"{__file__}:{line}:{col}: "), text
    assert re.search(message, text, re.DOTALL), text
    assert source_line == "    " + linecache.getline(__file__, line).rstrip("\n")
    assert caret.index("^") == 4 + col - 1


def test_fuse_error_is_a_syntax_error_and_a_value_error():
    assert issubclass(FuseError, jitkern.JitSyntaxError)
    assert issubclass(FuseError, SyntaxError) and issubclass(FuseError, ValueError)


def test_wrong_number_of_arguments_names_the_def():
    with pytest.raises(jitkern.JitTypeError) as info:
        squared_diff.kernel_for(np.ones(3), np.ones(3), np.ones(3))
    line, col = _position(squared_diff, "def squared_diff")
    assert str(info.value).startswith(f"{__file__}:{line}:{col}: ")
    assert "takes 2 arguments (x, y), got 3" in str(info.value)
    with pytest.raises(TypeError):
        squared_diff(np.ones(3), np.ones(3), np.ones(3))  # the NumPy path: Python's own error


def test_complex_max_is_refused():
    with pytest.raises(jitkern.JitTypeError, match="complex numbers are not ordered"):
        method_max.kernel_for(np.ones((2, 2), np.complex64))


# ---------------------------------------------------------------------------
# on a GPU: the same function through a kernel and through NumPy, on fresh random data


def _compare(fused, *host_args, rtol=1e-6, atol=1e-6, wrap=jitkern.asarray):
    device_args = [wrap(a) if isinstance(a, np.ndarray) else a for a in host_args]
    with np.errstate(all="ignore"):
        expected = fused(*host_args)
    got = fused(*device_args)
    expected = expected if isinstance(expected, tuple) else (expected,)
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        g = jitkern.asnumpy(g) if not isinstance(g, np.ndarray) else g
        e = np.asarray(e)
        assert g.dtype == e.dtype and g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, equal_nan=True)


def _sum_atol(x, y):
    """Tolerance of a float32 sum of x * y over the last axis, added in another order than
    NumPy's: it scales with the sum of the terms' magnitudes, not with the (possibly
    cancelled) result."""
    return 8 * float(np.finfo(np.float32).eps) * float(np.abs(x * y).sum(axis=-1).max())


@pytest.mark.gpu
def test_spec_examples_on_device(rng):
    x = _host((50, 40), np.float32, rng)
    y = _host((50, 40), np.float32, rng)
    _compare(squared_diff, x, y)
    _compare(sum_of_products, x, y, rtol=1e-5, atol=_sum_atol(x, y))
    _compare(mixed, x, y, 2.0, rtol=1e-5)
    _compare(method_max, x)
    xi = jitkern.asarray(np.arange(10))
    np.testing.assert_array_equal(
        jitkern.asnumpy(squared_diff(xi, xi[::-1])), [81, 49, 25, 9, 1, 1, 9, 25, 49, 81]
    )


@pytest.mark.gpu
@pytest.mark.parametrize(
    "dx,dy,scalar",
    [
        ("float32", "float32", 2.5),
        ("float32", "float64", 3),
        ("int8", "uint8", 3),
        ("int32", "float16", 0.5),
        ("bool", "int16", True),
        ("int64", "int64", np.float32(1.5)),
        ("float16", "float16", 2.0),
    ],
)
def test_elementwise_mixed_types_and_scalars(rng, dx, dy, scalar):
    x, y = _host((33, 17), dx, rng), _host((33, 17), dy, rng)
    tol = 2e-3 if "float16" in (dx, dy) else 1e-6
    _compare(affine, x, y, rtol=tol, atol=tol)
    _compare(lerp, x, scalar, rtol=tol, atol=tol)
    _compare(mixed, x, y, scalar, rtol=max(tol, 1e-5), atol=tol)
    _compare(two_outputs, x, y, rtol=tol, atol=tol)


@pytest.mark.gpu
def test_integer_operators(rng):
    x, y = _host((1000,), np.int32, rng), _host((1000,), np.int8, rng)
    y[y == 0] = 3
    _compare(floor_mod, x, y)
    _compare(power, x, np.abs(y).astype(np.int8))
    _compare(comparisons, x, y)
    _compare(rounding, x)
    wide = (
        rng.integers(0, 256, 1000).astype(np.uint8),
        rng.integers(-128, 128, 1000).astype(np.int8),
    )
    _compare(narrow, *wide)


@pytest.mark.gpu
def test_broadcasting(rng):
    x = _host((8, 1, 5), np.float32, rng)
    y = _host((7, 1), np.float64, rng)
    _compare(affine, x, y)
    _compare(choose, _host((7, 5), bool, rng), x, y)
    z = _host((7, 5), np.float32, rng)
    _compare(sum_of_products, x, z, rtol=1e-5, atol=_sum_atol(x, z))


@pytest.mark.gpu
def test_where(rng):
    c = _host((64, 3), bool, rng)
    _compare(choose, c, _host((64, 3), np.float32, rng), 0.5)
    _compare(choose, c, _host((64, 3), np.int8, rng), _host((64, 3), np.uint8, rng))
    _compare(choose, _host((64, 3), np.float32, rng), 1, 2.5)


MATH_NAMES = ["exp", "log", "log2", "log10", "sqrt", "sin", "cos", "tan", "arcsin", "arccos",
              "arctan", "sinh", "cosh", "tanh", "floor", "ceil", "abs", "absolute", "square",
              "negative"]  # fmt: skip
BINARY_MATH = ["maximum", "minimum", "arctan2", "hypot", "power"]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int16"])
def test_math_functions(rng, dtype):
    x = (_host((500,), np.float32, rng) * 0.45).astype(dtype)  # inside arcsin's domain
    if np.dtype(dtype).kind == "i":
        x = _host((500,), dtype, rng)
    y = _host((500,), dtype, rng)
    tol = 2e-3 if dtype == "float16" else 1e-5
    for name in MATH_NAMES:
        _compare(_unary(getattr(np, name)), x, rtol=tol, atol=tol)
    for name in BINARY_MATH:
        a, b = x, y
        if name == "power":  # NumPy refuses negative integer powers of integers
            a, b = np.abs(x), (np.abs(y) % 3 if y.dtype.kind == "i" else y)
        _compare(_binary(getattr(np, name)), a, b, rtol=tol, atol=tol)


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(REDUCERS))
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2), (1,)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions(rng, name, axis, keepdims):
    reduce = getattr(np, name)
    fused = fuse(lambda x, y: reduce(x * y - 1, axis=axis, keepdims=keepdims))
    x = 1 + rng.random((6, 7, 9), np.float32) / 2
    y = 1.5 + rng.random((7, 9), np.float32) / 2  # x * y - 1 in [0.5, 2]: products stay finite
    _compare(fused, x, y, rtol=1e-4)
    methods = [
        ("sum", lambda x: (x + 1).sum(axis=axis, keepdims=keepdims)),
        ("prod", lambda x: (x + 1).prod(axis=axis, keepdims=keepdims)),
        ("max", lambda x: (x + 1).max(axis=axis, keepdims=keepdims)),
        ("min", lambda x: (x + 1).min(axis=axis, keepdims=keepdims)),
    ]
    method = fuse(dict(methods)[name.lstrip("a")])
    _compare(method, _host((6, 7, 9), np.int16, rng))


@pytest.mark.gpu
def test_max_and_min_propagate_nan(rng):
    x = _host((16, 40), np.float32, rng)
    x[3, 7] = np.nan
    x[10, 0] = np.nan
    for name in ("max", "min"):
        for axis in (None, 0, 1):
            _compare(_reducer(getattr(np, name), axis), x)


@pytest.mark.gpu
def test_half_sums_accumulate_in_float(rng):
    x = _host((4, 2000), np.float16, rng)
    got = jitkern.asnumpy(sum_of_products(jitkern.asarray(x), jitkern.asarray(x)))
    exact = (x.astype(np.float64) ** 2).sum(-1)
    assert got.dtype == np.float16
    np.testing.assert_allclose(got, exact, rtol=2e-3)


@pytest.mark.gpu
def test_second_call_does_not_recompile(rng, monkeypatch):
    from jitkern.backend import compiler
    from jitkern.kernels import fuse as fuse_module

    calls = {"compile": 0, "emit": 0}

    def counting(name, real):
        def wrapper(*args, **kwargs):
            calls[name] += 1
            return real(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(compiler, "compile_source", counting("compile", compiler.compile_source))
    monkeypatch.setattr(
        fuse_module,
        "_emit_device_function",
        counting("emit", fuse_module._emit_device_function),
    )
    fused = fuse(lambda x, y: x * y + 1)
    x = jitkern.asarray(_host((100,), np.float32, rng))
    fused(x, 2.0)
    first = dict(calls)
    assert first["emit"] == 1 and first["compile"] >= 1
    for value in (3.0, -1.5):
        # x * y + 1 contracts to one fma on the GPU (one rounding, NumPy has two):
        # within an ulp of the result's magnitude.
        np.testing.assert_allclose(jitkern.asnumpy(fused(x, value)),
                                   jitkern.asnumpy(x) * value + 1, rtol=1e-6, atol=1e-6)
    assert calls == first


@pytest.mark.gpu
def test_cupy_arrays(rng):
    cupy = pytest.importorskip("cupy")
    x, y = _host((20, 30), np.float32, rng), _host((20, 30), np.float32, rng)
    _compare(mixed, x, y, 2.0, rtol=1e-5, wrap=cupy.asarray)
    _compare(sum_of_products, x, y, rtol=1e-5, atol=_sum_atol(x, y), wrap=cupy.asarray)
    _compare(written_for_cupy, x, y, rtol=1e-6, wrap=cupy.asarray)


@pytest.mark.gpu
def test_torch_tensors(rng):
    torch = pytest.importorskip("torch")
    x, y = _host((20, 30), np.float32, rng), _host((20, 30), np.float32, rng)

    def wrap(a):
        return torch.from_numpy(a).cuda()

    _compare(mixed, x, y, 2.0, rtol=1e-5, wrap=wrap)
    _compare(method_max, x, wrap=wrap)
