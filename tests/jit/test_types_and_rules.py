"""Type rules in both modes, checked against NumPy 2 and through emitted kernels."""

import itertools

import numpy as np
import pytest

from jitkern.compiler import builtins as B
from jitkern.compiler import docs, infer
from jitkern.jit import rawkernel
from jitkern.compiler import types as T
from jitkern.compiler.values import Const, Value, operand

NUMPY_TYPES = [
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
]


def test_types_are_interned_and_spelled_in_cpp():
    assert T.scalar("float32") is T.float32
    assert T.array(T.float32, 2, False, True) is T.array(T.float32, 2, False, True)
    assert T.float16.ctype == "__half" and T.bfloat16.ctype == "__nv_bfloat16"
    assert T.complex64.ctype == "complex<float>" and T.uint64.ctype == "unsigned long long"
    assert T.array(T.float32, 1, True, True).ctype == "float*"
    assert T.array(T.int8, 3, False, False).ctype == "jk::Array<signed char, 3, long long>"
    assert T.tuple_of([T.int32, T.bool_]).ctype == "jk::Tuple<int, bool>"


@pytest.mark.parametrize("a,b", list(itertools.product(NUMPY_TYPES, repeat=2)))
def test_numpy_mode_matches_numpy_result_type(a, b):
    got = infer.result_type([T.scalar(a), T.scalar(b)], "numpy")
    assert got.name == np.result_type(np.dtype(a), np.dtype(b)).name


@pytest.mark.parametrize("t", NUMPY_TYPES)
@pytest.mark.parametrize("literal", [1, 2.5, 1j, True])
def test_numpy_mode_literals_are_weak(t, literal):
    want = np.result_type(np.dtype(t), literal)
    assert infer.result_type([T.scalar(t), literal], "numpy").name == want.name


@pytest.mark.parametrize("a,b", list(itertools.product(NUMPY_TYPES, repeat=2)))
def test_cuda_mode_is_the_later_type(a, b):
    got = infer.result_type([T.scalar(a), T.scalar(b)], "cuda")
    order = infer.CUDA_ORDER
    later = max(a, b, key=order.index)
    if later == "complex64" and "float64" in (a, b):
        later = "complex128"
    assert got.name == later


def test_cuda_mode_literals():
    assert infer.literal_type(1, "cuda") is T.int32
    assert infer.literal_type(2**40, "cuda") is T.int64
    assert infer.literal_type(1.0, "cuda") is T.float32
    assert infer.literal_type(1.0, "numpy") is T.float64
    assert infer.result_type([T.int64, 2.0], "cuda") is T.float32  # CuPy's cuda mode
    assert infer.result_type([T.int8, 1], "numpy") is T.int8


def test_true_division_types():
    assert infer.true_divide_type([T.int32, T.int32], "numpy") is T.float64
    assert infer.true_divide_type([T.int16, T.int16], "cuda") is T.float32
    assert infer.true_divide_type([T.float32, T.float32], "numpy") is T.float32


def test_bfloat16_promotes_like_ml_dtypes():
    assert infer.result_type([T.bfloat16, T.float16], "numpy") is T.float32
    assert infer.result_type([T.bfloat16, T.float32], "numpy") is T.float32
    assert infer.result_type([T.bfloat16, 1.0], "numpy") is T.bfloat16
    assert infer.result_type([T.bfloat16, T.int8], "cuda") is T.bfloat16


def test_same_kind_assignment():
    assert infer.can_assign(T.int32, T.int64, "cuda")
    assert infer.can_assign(T.int64, T.int32, "cuda")  # narrowing within a kind
    assert infer.can_assign(T.uint64, T.int64, "cuda")
    assert not infer.can_assign(T.int64, T.uint32, "cuda")
    assert not infer.can_assign(T.float32, T.int32, "cuda")
    assert infer.can_assign(1, T.float32, "cuda") and not infer.can_assign(1.5, T.int32, "cuda")
    assert infer.can_store(T.float64, T.int8) and not infer.can_store(T.complex64, T.float32)


def declared_type(kernel, *args, var="v") -> str:
    source = kernel.emit(*args)
    body = source.split("}  // namespace jk\n", 1)[1]
    for line in body.splitlines():
        line = line.strip()
        if line.endswith(f" {var}{{}};") and not line.startswith("//"):
            return line[: -len(var) - 4]
    raise AssertionError(body)


@rawkernel(mode="numpy")
def add_numpy(a, b):
    v = a[0] + b[0]


@rawkernel(mode="cuda")
def add_cuda(a, b):
    v = a[0] + b[0]


@rawkernel(mode="numpy")
def scale_numpy(a):
    v = a[0] * 2.0


@rawkernel(mode="cuda")
def scale_cuda(a):
    v = a[0] * 2.0


@pytest.mark.parametrize(
    "a,b",
    [
        ("int8", "uint8"),
        ("int32", "float32"),
        ("uint64", "int64"),
        ("float16", "int16"),
        ("int8", "int8"),
        ("float32", "complex64"),
    ],
)
def test_emitted_variable_types_follow_the_mode(a, b):
    x, y = np.zeros(2, a), np.zeros(2, b)
    want_numpy = T.scalar(np.result_type(x.dtype, y.dtype).name).ctype
    assert declared_type(add_numpy, x, y) == want_numpy
    want_cuda = infer.result_type([T.scalar(a), T.scalar(b)], "cuda")
    assert declared_type(add_cuda, x, y) == infer.arithmetic_type([want_cuda], "cuda").ctype


@pytest.mark.parametrize("t", ["int8", "int64", "float16", "float32", "float64"])
def test_emitted_literal_promotion(t):
    x = np.zeros(2, t)
    assert declared_type(scale_numpy, x) == T.scalar(np.result_type(x.dtype, 2.0).name).ctype
    assert declared_type(scale_cuda, x) == infer.result_type([T.scalar(t), 2.0], "cuda").ctype


def test_docs_are_up_to_date():
    import os

    path = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "jit.md")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    assert docs.render(text) == text, "run: python -m jitkern.compiler.docs docs/jit.md"


def test_mode_names():
    assert rawkernel(mode="python")(lambda x: None).mode == "numpy"
    with pytest.raises(ValueError, match="'cuda' or 'numpy'"):
        rawkernel(mode="fast")


@rawkernel(mode="numpy")
def pow_builtin(a):
    v = pow(a[0], 2)


def test_pow_builtin_has_the_operator_type():
    assert declared_type(pow_builtin, np.zeros(2, np.float32)) == "float"
    assert declared_type(pow_builtin, np.zeros(2, np.int16)) == "short"


def test_weak_values_promote_as_python_scalars():
    s = Value("s", T.float64, weak=True)
    assert operand(s) == 0.0 and infer.is_weak(operand(s))
    assert infer.result_type([T.float32, operand(s)], "numpy") is T.float32
    assert infer.result_type([T.int8, operand(Value("k", T.int64, weak=True))], "numpy") is T.int8
    assert operand(Value("x", T.float64)) is T.float64


# ---------------------------------------------------------------------------
# numpy mode against NumPy's own ufuncs: every operator and the NumPy functions
# jitkern.fuse relies on, over every pair of real types and Python scalars.

REAL_TYPES = [t for t in NUMPY_TYPES if not t.startswith("complex")]
PY_SCALARS = [True, 3, 2.5]

OPERATOR_UFUNCS = {
    "Add": np.add,
    "Sub": np.subtract,
    "Mult": np.multiply,
    "Div": np.true_divide,
    "FloorDiv": np.floor_divide,
    "Mod": np.remainder,
    "Pow": np.power,
    "LShift": np.left_shift,
    "RShift": np.right_shift,
    "BitAnd": np.bitwise_and,
    "BitOr": np.bitwise_or,
    "BitXor": np.bitwise_xor,
    "Lt": np.less,
    "GtE": np.greater_equal,
    "Eq": np.equal,
}
# complex operands, where the JIT takes them (it does not order complex numbers)
COMPLEX_OPERATORS = ("Add", "Sub", "Mult", "Div", "Pow", "Eq")
UNARY_FUNCTIONS = [
    np.exp, np.log, np.log2, np.log10, np.sqrt, np.sin, np.cos, np.tan, np.arcsin, np.arccos,
    np.arctan, np.sinh, np.cosh, np.tanh, np.floor, np.ceil, np.trunc, np.absolute, np.square,
    np.negative, np.fabs, np.isnan,
]  # fmt: skip
BINARY_FUNCTIONS = [np.maximum, np.minimum, np.arctan2, np.hypot, np.power, np.copysign]


def _rule_result(record, operands) -> str:
    items = [Value("x", T.scalar(o)) if isinstance(o, str) else Const(o) for o in operands]
    try:
        return record.rule(items, "numpy").result.name
    except TypeError:
        return "refused"


def _numpy_result(fn, operands) -> str:
    args = [np.ones(3, o) if isinstance(o, str) else o for o in operands]
    try:
        with np.errstate(all="ignore"):
            return np.asarray(fn(*args)).dtype.name
    except TypeError:
        return "refused"


def _mismatches(record, fn, combos) -> list:
    out = []
    for ops in combos:
        got, want = _rule_result(record, ops), _numpy_result(fn, ops)
        if got != want:
            out.append((ops, got, want))
    return out


def _typed_pairs(types):
    pairs = itertools.product(types + PY_SCALARS, repeat=2)
    return [p for p in pairs if any(isinstance(o, str) for o in p)]


@pytest.mark.parametrize("op", sorted(OPERATOR_UFUNCS))
def test_numpy_mode_operators_match_numpy_ufuncs(op):
    types = NUMPY_TYPES if op in COMPLEX_OPERATORS else REAL_TYPES
    combos = _typed_pairs(types)
    if op in COMPLEX_OPERATORS:
        combos += [(t, 1j) for t in NUMPY_TYPES]
    assert _mismatches(B.OPERATORS[op], OPERATOR_UFUNCS[op], combos) == []


@pytest.mark.parametrize("fn", UNARY_FUNCTIONS, ids=lambda f: f.__name__)
def test_numpy_mode_math_functions_match_numpy(fn):
    combos = [(t,) for t in REAL_TYPES + PY_SCALARS]
    assert _mismatches(B.PY_FUNCTIONS[fn], fn, combos) == []


@pytest.mark.parametrize("fn", BINARY_FUNCTIONS, ids=lambda f: f.__name__)
def test_numpy_mode_binary_functions_match_numpy(fn):
    assert _mismatches(B.PY_FUNCTIONS[fn], fn, _typed_pairs(REAL_TYPES)) == []


def test_numpy_mode_where_matches_numpy():
    combos = [("bool",) + p for p in _typed_pairs(NUMPY_TYPES)]
    combos += [("float32", 1, 2.5), ("int8", True, 3)]
    assert _mismatches(B.PY_FUNCTIONS[np.where], np.where, combos) == []


def test_numpy_bool_rules_and_python_scalars():
    # typed bools take NumPy's loops; Python's own bools keep Python's arithmetic
    assert infer.arithmetic_type([T.bool_, T.bool_], "numpy", "+") is T.bool_
    assert infer.arithmetic_type([T.bool_, True], "numpy", "**") is T.int8
    assert infer.arithmetic_type([True, True], "numpy", "+") is T.int64
    assert infer.arithmetic_type([T.bool_, T.bool_], "cuda", "+") is T.int32
    with pytest.raises(TypeError, match="does not apply -"):
        infer.arithmetic_type([T.bool_, T.bool_], "numpy", "-")
    assert infer.math_type([T.int8, T.uint8], "numpy") is T.float16
    assert infer.math_type([T.bool_, 1], "numpy") is T.float64
    assert infer.math_type([T.int8], "cuda") is T.float64


@rawkernel(mode="numpy")
def or_numpy(a, b):
    v = a[0] + b[0]


@rawkernel(mode="numpy")
def negate_flag(a):
    v = -a[0]


def test_emitted_bool_arithmetic_follows_numpy():
    flags = np.zeros(2, bool)
    assert declared_type(or_numpy, flags, flags) == "bool"
    assert "||" in or_numpy.emit(flags, flags)
    with pytest.raises(TypeError, match=r"test_types_and_rules.py:\d+:9: NumPy has no unary -"):
        negate_flag.emit(flags)
    assert declared_type(negate_flag, np.zeros(2, np.int8)) == "signed char"


@rawkernel(mode="numpy")
def narrow_product(a, b):
    v = a[0] * b[0] / 3


def test_narrow_integer_arithmetic_wraps_before_it_widens():
    source = narrow_product.emit(np.zeros(2, np.int8), np.zeros(2, np.int8))
    assert "((double)(((signed char)(a[0LL] * b[0LL]))))" in source
    source = narrow_product.emit(np.zeros(2, np.int32), np.zeros(2, np.int32))
    assert "((double)((a[0LL] * b[0LL])))" in source
