"""Python's evaluation rules in kernels (issue 18): chained comparisons evaluate each
operand once, ``and``/``or`` short-circuit and return an operand, left to right. Each
twin test runs in the simulator and (marked gpu) on the device through ``launch``; the
generated programs are checked against Python itself."""

import collections
import importlib.util
import itertools
import textwrap

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import jitkern
from jitkern import jit


@jitkern.rawkernel(device=True)
def bump(counter, v):
    jit.atomic_add(counter, 0, 1)
    return v


def test_a_chained_comparison_evaluates_its_middle_operand_once(launch, rng):
    @jitkern.rawkernel()
    def k(counter, x, out):
        i = jit.threadIdx.x
        out[i] = 0 < bump(counter, x[i]) < 1000

    n = 32
    x = rng.uniform(-500.0, 1500.0, n)
    counter = launch.zeros(1, np.int32)
    out = launch.poisoned(n, np.int32)
    launch(k)[1, n](counter, launch.to_device(x), out)
    launch.synchronize()
    expected = [0 < v < 1000 for v in x]
    assert launch.get(counter)[0] == n  # Python calls it once per thread (it was 2n)
    np.testing.assert_array_equal(launch.get(out), np.array(expected, np.int32))


def test_a_chained_comparison_stops_at_the_first_false_one(launch, rng):
    @jitkern.rawkernel()
    def k(counter, x, out):
        i = jit.threadIdx.x
        out[i] = x[i] > 0.0 > bump(counter, x[i])

    n = 32
    x = rng.uniform(-1.0, 1.0, n)
    counter = launch.zeros(1, np.int32)
    out = launch.poisoned(n, np.int32)
    launch(k)[1, n](counter, launch.to_device(x), out)
    launch.synchronize()
    assert launch.get(counter)[0] == int(np.sum(x > 0))  # only where x > 0 held
    np.testing.assert_array_equal(launch.get(out), np.zeros(n, np.int32))


def test_or_and_and_return_an_operand(launch, rng):
    @jitkern.rawkernel()
    def k(x, y, out_or, out_and):
        i = jit.threadIdx.x
        out_or[i] = x[i] or y[i]
        out_and[i] = x[i] and y[i]

    n = 64
    x = np.where(rng.random(n) < 0.5, 0.0, rng.uniform(-9.0, 9.0, n))
    y = rng.uniform(-9.0, 9.0, n)
    out_or, out_and = launch.poisoned(n, np.float64), launch.poisoned(n, np.float64)
    launch(k)[1, n](launch.to_device(x), launch.to_device(y), out_or, out_and)
    launch.synchronize()
    np.testing.assert_array_equal(launch.get(out_or), [a or b for a, b in zip(x, y)])
    np.testing.assert_array_equal(launch.get(out_and), [a and b for a, b in zip(x, y)])


def test_or_short_circuits_and_evaluates_the_first_operand_once(launch, rng):
    @jitkern.rawkernel()
    def k(counter, x, out):
        i = jit.threadIdx.x
        out[i] = bump(counter, x[i]) or bump(counter, x[i] + 1.0)

    n = 32
    x = np.where(rng.random(n) < 0.5, 0.0, rng.uniform(1.0, 9.0, n))
    counter = launch.zeros(1, np.int32)
    out = launch.poisoned(n, np.float64)
    launch(k)[1, n](counter, launch.to_device(x), out)
    launch.synchronize()
    np.testing.assert_array_equal(launch.get(out), [a or a + 1.0 for a in x])
    assert launch.get(counter)[0] == n + int(np.sum(x == 0))


def test_or_of_an_int_and_a_float_has_their_common_type(rng):
    @jitkern.rawkernel()
    def k(a, b, out):
        out[0] = a[0] or b[0]

    a, b, out = np.zeros(1, np.int64), np.array([rng.uniform(1, 2)]), np.zeros(1)
    source = k.emit(a, b, out)
    # x_int64 or y_float64: the int converted to float64 where it decides
    assert "? ((double)(" in source and "!= 0LL" in source
    a[0] = int(rng.integers(3, 99))
    k.simulate[1, 1](a, b, out)
    assert out[0] == float(a[0])
    a[0] = 0
    k.simulate[1, 1](a, b, out)
    assert out[0] == b[0]


def test_and_or_between_bools_stay_cpp_short_circuit_operators():
    @jitkern.rawkernel()
    def k(x, out):
        i = jit.threadIdx.x
        if x[i] > 0 and x[i] < 1 or x[i] == 5:
            out[i] = x[i]

    source = k.emit(np.zeros(4), np.zeros(4))
    assert "if ((((x[i] > 0.0) && (x[i] < 1.0)) || (x[i] == 5.0))) {" in source
    assert "jk_t" not in source.split("}  // namespace jk\n", 1)[1]  # no temporaries


# -- generated programs against Python -------------------------------------------------

_CMP = ("<", "<=", ">", ">=", "==", "!=")
_ARITH = ("+", "-", "*", "/", "//", "%")


def _leaf(draw, slots: int):
    kind = draw(st.sampled_from(("int", "float", "int_lit", "float_lit", "tick")))
    if kind == "int_lit":
        return str(draw(st.sampled_from((1, 2, 3, 7))))
    if kind == "float_lit":
        return repr(draw(st.sampled_from((0.5, 1.5, 2.25, 3.0))))
    k = draw(st.integers(0, slots - 1))
    var = f"xi[{k}]" if kind == "int" else f"xf[{k}]"
    if kind == "tick":
        var = f"xi[{k}]" if draw(st.booleans()) else f"xf[{k}]"
        return f"tick(log, n, {{tick}}, {var})"
    return var


@st.composite
def expressions(draw, kind: str = "num", depth: int = 3, slots: int = 4):
    """Source of an expression: "num" (arithmetic may use it) or "any" (a bool too, which
    arithmetic never takes: NumPy's bool arithmetic is not Python's)."""
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return _leaf(draw, slots)
    forms = ("arith", "neg", "boolop", "ifexp")
    if kind == "any":
        forms += ("cmp", "not", "boolop")
    form = draw(st.sampled_from(forms))

    def sub(k="num"):
        return draw(expressions(k, depth - 1, slots))

    if form == "arith":
        return f"({sub()} {draw(st.sampled_from(_ARITH))} {sub()})"
    if form == "neg":
        return f"(-{sub()})"
    if form == "not":
        return f"(not {sub('any')})"
    if form == "cmp":
        ops = draw(st.lists(st.sampled_from(_CMP), min_size=1, max_size=3))
        parts = [sub("any")]
        for op in ops:
            parts += [op, sub("any")]
        return "(" + " ".join(parts) + ")"
    if form == "boolop":  # a num context needs one number among the operands
        word = draw(st.sampled_from(("and", "or")))
        count = draw(st.integers(2, 3))
        items = [sub("num" if k == 0 and kind == "num" else "any") for k in range(count)]
        return "(" + f" {word} ".join(draw(st.permutations(items))) + ")"
    return f"({sub(kind)} if {sub('any')} else {sub()})"


def _numbered(text: str) -> str:
    """Each tick site gets its own number (what the log records)."""
    pieces = text.split("{tick}")
    return "".join(p + (str(k) if k < len(pieces) - 1 else "") for k, p in enumerate(pieces))


_MODULE = '''
import jitkern
from jitkern import jit


@jitkern.rawkernel(device=True, mode="numpy", options=("--fmad=false",))
def tick(log, n, k, v):
    log[jit.atomic_add(n, 0, 1)] = k
    return v


@jitkern.rawkernel(mode="numpy", options=("--fmad=false",))  # Python rounds each operation
def kern(xi, xf, log, n, out):
    out[0] = {expr}


def ptick(log, n, k, v):
    log.append(k)
    return v


def reference(xi, xf, log, n=None):
    return {ref}
'''


def _load(tmp_path, expr: str):
    name = f"gen_{next(_COUNTER)}"
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(_MODULE.format(expr=expr, ref=expr.replace("tick(", "ptick("))))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_COUNTER = itertools.count()

_SMALL_INTS = st.integers(-6, 6)
_SMALL_FLOATS = st.one_of(st.just(0.0), st.floats(-6.0, 6.0, allow_nan=False, width=64))


def _check_against_python(launch, tmp_path, expr, ints, floats):
    expr = _numbered(expr)
    module = _load(tmp_path, expr)
    xi = [int(v) for v in ints]
    xf = [float(v) for v in floats]
    log = []
    try:
        expected = module.reference(xi, xf, log)
    except ZeroDivisionError:
        assume(False)
    assume(abs(float(expected)) < 2.0**40)
    out = launch.poisoned(1, np.float64)
    calls = launch.full(64, -1, np.int64)
    count = launch.zeros(1, np.int32)
    arrays = [launch.to_device(np.array(xi, np.int64)), launch.to_device(np.array(xf))]
    launch(module.kern)[1, 1](*arrays, calls, count, out)
    launch.synchronize()
    got = launch.get(out)[0]
    np.testing.assert_allclose(got, float(expected), rtol=1e-9, atol=1e-9, err_msg=expr)
    n = int(launch.get(count)[0])
    seen = launch.get(calls)[:n].tolist()
    if launch.simulated:
        assert seen == log, expr  # each operand once, left to right, short-circuited
    else:  # C++ orders the operands of arithmetic as it likes: the same calls, once each
        assert collections.Counter(seen) == collections.Counter(log), expr


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    expr=expressions("any"),
    ints=st.lists(_SMALL_INTS, min_size=4, max_size=4),
    floats=st.lists(_SMALL_FLOATS, min_size=4, max_size=4),
)
def test_generated_expressions_match_python(launch, tmp_path, expr, ints, floats):
    _check_against_python(launch, tmp_path, expr, ints, floats)
