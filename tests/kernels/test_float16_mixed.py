"""float16 in mixed expressions (issue 25, section 1): a string kernel's float16 value (CuPy's
float16 class, as in CuPy) with a float, a double, an int or another float16, under every
arithmetic and comparison operator and each compound assignment, compiles and computes what
CuPy's float16 computes: the operation in float (in double with a double), float16 op
float16 in float too, a compound assignment rounded once to float16. cuda_fp16.h's __half
mixes the same way with the other types (alone, that header finds `h * 2.0f` ambiguous),
and `__half op __half` stays __half.

CPU: the C type of every expression (static_asserts, through inspect). GPU and simulator
(twins): every value against NumPy computing in that type.
"""

import numpy as np
import pytest

import jitkern

ARCH = "sm_90"
ARITH = ["+", "-", "*", "/"]
COMPARE = ["==", "!=", "<", "<=", ">", ">="]
#: the other operand's dtype -> the C type of `half op other` (arithmetic)
RESULT = {"float32": "float", "float64": "double", "int32": "float", "float16": "float"}
NUMPY_TYPE = {"float": np.float32, "double": np.float64, "__half": np.float16}

_SAME = "template <class A, class B> struct jk_same { enum { v = 0 }; };\n" \
        "template <class A> struct jk_same<A, A> { enum { v = 1 }; };\n"


def _type_checks(left: str, right: str, arith_type: str) -> str:
    out = []
    for op in ARITH:
        out.append(f'static_assert(jk_same<decltype({left} {op} {right}), {arith_type}>::v, '
                   f'"{left} {op} {right}");')
    for op in COMPARE:
        out.append(f'static_assert(jk_same<decltype({left} {op} {right}), bool>::v, '
                   f'"{left} {op} {right}");')
    return "\n".join(out)


@pytest.mark.parametrize("other", sorted(RESULT))
def test_every_operator_has_cupys_result_type(other):
    body = [_type_checks("x", "v", RESULT[other]), _type_checks("v", "x", RESULT[other])]
    for op in ARITH:  # compound assignment: back to half
        body.append(f'{{ float16 t = x; static_assert(jk_same<decltype(t {op}= v), float16&>::v, '
                    f'"{op}="); t {op}= v; z = t; }}')
        body.append(f'{{ __half t = __half(float(x)); static_assert(jk_same<decltype(t {op}= v), '
                    f'__half&>::v, "{op}= on __half"); t {op}= v; z = float(t); }}')
    k = jitkern.ElementwiseKernel(f"float16 x, {other} v", "float16 z", "\n".join(body),
                                  f"types_{other}", preamble=_SAME)
    info = k.inspect(np.zeros(4, np.float16), np.zeros(4, other), np.zeros(4, np.float16),
                     arch=ARCH)
    assert info.cubin[:4] == b"\x7fELF"


CLASS_CHECKS = r"""
float16 a = x, b = float16(2.5);
static_assert(jk_same<decltype(a * b), float>::v, "float16 * float16 is float, as CuPy's");
static_assert(jk_same<decltype(a * 2.0f), float>::v, "float16 * float");
static_assert(jk_same<decltype(a * 2.0), double>::v, "float16 * double");
static_assert(jk_same<decltype(a * 2), float>::v, "float16 * int");
static_assert(jk_same<decltype(2 * a), float>::v, "int * float16");
static_assert(jk_same<decltype(a < 1), bool>::v, "float16 < int");
static_assert(jk_same<decltype(x), const float16&>::v, "a float16 element is CuPy's class");
__half h = __float2half(1.5f), g = __float2half(0.5f);
static_assert(jk_same<decltype(a == h), bool>::v, "float16 == __half");
static_assert(jk_same<decltype(a * h), float>::v, "float16 * __half");
static_assert(jk_same<decltype(h * g), __half>::v, "__half * __half: cuda_fp16.h's");
static_assert(jk_same<decltype(h * 2.0f), float>::v, "__half * float");
static_assert(jk_same<decltype(-a), float>::v, "-float16");
static_assert(jk_same<decltype(a += 1.5), float16&>::v, "float16 += double");
bfloat16 c = 1.5f;
static_assert(jk_same<decltype(c * 2.0), double>::v, "bfloat16 * double");
static_assert(jk_same<decltype(c * a), float>::v, "bfloat16 * float16");
__nv_bfloat16 d = __float2bfloat16(1.5f);
static_assert(jk_same<decltype(d * 2.0f), float>::v, "__nv_bfloat16 * float");
static_assert(jk_same<decltype(d < 1), bool>::v, "__nv_bfloat16 < int");
z = a * b + c * 2.0 + (d < 1) + float(h * g);
"""


def test_cupys_float16_and_bfloat16_classes_mix_as_cupys_do():
    k = jitkern.ElementwiseKernel("float16 x", "float16 z", CLASS_CHECKS, "classes",
                                  preamble=_SAME)
    info = k.inspect(np.zeros(4, np.float16), np.zeros(4, np.float16), arch=ARCH)
    assert info.cubin[:4] == b"\x7fELF"


# ---------------------------------------------------------------------------
# values


def _expressions():
    """(C expression writing one double, its name) for each operator, both orders, and
    each compound assignment."""
    out = []
    for op in ARITH + COMPARE:
        out.append((f"(double)(x {op} v)", ("x", op, "v")))
        out.append((f"(double)(v {op} x)", ("v", op, "x")))
    for op in ARITH:
        out.append((f"[&]() {{ float16 t = x; t {op}= v; return (double)t; }}()", ("x", op + "=", "v")))
    return out


def _compound_free(exprs):
    """The simulator has no lambdas: compound assignments as statements instead."""
    lines = []
    for k, (code, (a, op, b)) in enumerate(exprs):
        if op.endswith("=") and op not in COMPARE:
            lines.append(f"{{ float16 t = x; t {op} v; out[i * K + {k}] = (double)t; }}")
        else:
            lines.append(f"out[i * K + {k}] = {code};")
    return "\n".join(lines)


def _numpy(a, op, b, x, v, result_type):
    """NumPy's value of `a op b` computed in the C type of the expression."""
    operands = {"x": x, "v": v}
    fn = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide, "==": np.equal,
          "!=": np.not_equal, "<": np.less, "<=": np.less_equal, ">": np.greater,
          ">=": np.greater_equal}
    if op.endswith("=") and op not in COMPARE:  # compound: computed as `x op v`, then half
        wide = _numpy("x", op[:-1], "v", x, v, result_type)
        return wide.astype(np.float16).astype(np.float64)
    t = NUMPY_TYPE[result_type]
    with np.errstate(divide="ignore", invalid="ignore"):
        return fn[op](operands[a].astype(t), operands[b].astype(t)).astype(np.float64)


def _operands(rng, other, n):
    x = (rng.standard_normal(n) * 8).astype(np.float16)
    if other == "int32":
        v = rng.integers(-9, 10, n).astype(np.int32)
        v[v == 0] = 3
    else:
        v = (rng.standard_normal(n) * 8).astype(other)
    # some ties, for the comparisons
    v[::7] = x[::7].astype(other) if other != "int32" else v[::7]
    return x, v


@pytest.mark.parametrize("other", sorted(RESULT))
def test_every_operator_computes_numpys_value(launch, rng, other):
    exprs = _expressions()
    k = jitkern.ElementwiseKernel(
        f"float16 x, {other} v", "raw float64 out", _compound_free(exprs), f"values_{other}",
        preamble=f"#define K {len(exprs)}")
    n = launch.pick(gpu=50_000, sim=60)
    x, v = _operands(rng, other, n)
    out = launch.poisoned(n * len(exprs), np.float64)
    launch(k)(launch.to_device(x), launch.to_device(v), out)
    got = launch.get(out).reshape(n, len(exprs))
    for col, (_, (a, op, b)) in enumerate(exprs):
        want = _numpy(a, op, b, x, v, RESULT[other])
        np.testing.assert_array_equal(got[:, col], want, err_msg=f"{a} {op} {b} ({other})")


CLASS_VALUES = jitkern.ElementwiseKernel(
    "float16 x, float16 y, float64 d", "float32 p, float64 q, float16 r, float16 s",
    "float16 a = x, b = y; p = a * b; q = a * d; r = a * d; s = a; s += d;", "class_values")


def test_the_float16_class_kernel_compiles():
    h, d = np.zeros(4, np.float16), np.zeros(4)
    info = CLASS_VALUES.inspect(h, h, d, np.zeros(4, np.float32), d, h, h, arch=ARCH)
    assert info.cubin[:4] == b"\x7fELF"


@pytest.mark.gpu
def test_the_float16_class_computes_cupys_values(rng):
    """CuPy's float16 class: arithmetic in float (double with a double), assignment rounding
    once, against NumPy."""
    k = CLASS_VALUES
    n = 40_000
    x = (rng.standard_normal(n) * 8).astype(np.float16)
    y = (rng.standard_normal(n) * 8).astype(np.float16)
    d = rng.standard_normal(n)
    outs = [jitkern.full(n, np.nan, t) for t in (np.float32, np.float64, np.float16, np.float16)]
    k(jitkern.asarray(x), jitkern.asarray(y), jitkern.asarray(d), *outs)
    p, q, r, s = (o.get() for o in outs)
    np.testing.assert_array_equal(p, x.astype(np.float32) * y.astype(np.float32))
    np.testing.assert_array_equal(q, x.astype(np.float64) * d)
    np.testing.assert_array_equal(r, (x.astype(np.float64) * d).astype(np.float16))
    np.testing.assert_array_equal(s, (x.astype(np.float64) + d).astype(np.float16))
