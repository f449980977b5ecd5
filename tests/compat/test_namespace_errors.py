"""The ``cp`` namespace refuses what NumPy refuses, with NumPy's error class (as a jitkern
error) and the value named (issue 27): sizes that are not ints are not truncated, seeds out
of range are not folded, a negative ``num`` is not an empty linspace, shapes that do not
broadcast name both shapes. Each case is checked against what NumPy itself raises; the
calls run on a simulated device (jitkern arrays) and with host arrays (the simulator alone)."""

import math

import numpy as np
import pytest

import jitkern
import jitkern as cp
from jitkern.config import settings


@pytest.fixture(params=["device", "host"])
def mode(request, monkeypatch):
    if request.param == "host":
        monkeypatch.setattr(settings, "simulate", True)
        yield request.param
        return
    with jitkern.simulated_device():
        yield request.param


def ones(shape):
    return cp.asarray(np.ones(shape))


# (name, jitkern's call, NumPy's call, the words the message holds)
CASES = [
    ("randn(2.5)", lambda: cp.random.randn(2.5), lambda: np.random.randn(2.5),
     ["randn", "2.5", "cannot be interpreted as an integer"]),
    ("rand(3, 2.5)", lambda: cp.random.rand(3, 2.5), lambda: np.random.rand(3, 2.5),
     ["rand", "2.5"]),
    ("random(2.5)", lambda: cp.random.random(2.5), lambda: np.random.random(2.5),
     ["random_sample", "2.5"]),
    ("random('3')", lambda: cp.random.random("3"), lambda: np.random.random("3"),
     ["random_sample", "'3'"]),
    ("rand(True)", lambda: cp.random.rand(True), lambda: np.random.rand(True),
     ["rand", "True"]),
    ("randn(-1)", lambda: cp.random.randn(-1), lambda: np.random.randn(-1),
     ["randn", "negative dimensions", "-1"]),
    ("standard_normal((2, -3))", lambda: cp.random.standard_normal((2, -3)),
     lambda: np.random.standard_normal((2, -3)), ["standard_normal", "(2, -3)"]),
    ("randint size 2.5", lambda: cp.random.randint(5, size=2.5),
     lambda: np.random.randint(5, size=2.5), ["randint", "2.5"]),
    ("seed(-1)", lambda: cp.random.seed(-1), lambda: np.random.seed(-1),
     ["seed", "got -1"]),
    ("seed(2**70)", lambda: cp.random.seed(2**70), lambda: np.random.seed(2**70),
     ["seed", str(2**70)]),
    ("seed(2.5)", lambda: cp.random.seed(2.5), lambda: np.random.seed(2.5),
     ["seed", "2.5"]),
    ("seed([1, -1])", lambda: cp.random.seed([1, -1]), lambda: np.random.seed([1, -1]),
     ["seed", "got -1"]),
    ("seed(float array)", lambda: cp.random.seed(np.array([1.5])),
     lambda: np.random.seed(np.array([1.5])), ["seed", "float64"]),
    ("RandomState(-1)", lambda: cp.random.RandomState(-1), lambda: np.random.RandomState(-1),
     ["RandomState", "-1"]),
    ("default_rng(-1)", lambda: cp.random.default_rng(-1), lambda: np.random.default_rng(-1),
     ["default_rng", "non-negative", "-1"]),
    ("default_rng(2.5)", lambda: cp.random.default_rng(2.5),
     lambda: np.random.default_rng(2.5), ["default_rng", "2.5"]),
    ("uniform(0, inf)", lambda: cp.random.uniform(0, math.inf, 3),
     lambda: np.random.uniform(0, math.inf, 3), ["uniform", "inf"]),
    ("uniform(0, nan)", lambda: cp.random.uniform(0, math.nan, 3),
     lambda: np.random.uniform(0, math.nan, 3), ["uniform", "nan"]),
    ("Generator.uniform(0, inf)", lambda: cp.random.default_rng(1).uniform(0, math.inf, 3),
     lambda: np.random.default_rng(1).uniform(0, math.inf, 3), ["Generator.uniform", "inf"]),
    ("normal scale -1", lambda: cp.random.normal(0, -1, 3), lambda: np.random.normal(0, -1, 3),
     ["normal", "-1"]),
    ("randint(5, 5)", lambda: cp.random.randint(5, 5), lambda: np.random.randint(5, 5),
     ["randint", "5 >= 5"]),
    ("integers(0, 2**70)", lambda: cp.random.default_rng(1).integers(0, 2**70),
     lambda: np.random.default_rng(1).integers(0, 2**70), ["Generator.integers", str(2**70)]),
    ("integers(5, 2, endpoint)", lambda: cp.random.default_rng(1).integers(5, 2, endpoint=True),
     lambda: np.random.default_rng(1).integers(5, 2, endpoint=True), ["Generator.integers"]),
    ("standard_normal int dtype", lambda: cp.random.default_rng(1).standard_normal(
        3, dtype=np.int32), lambda: np.random.default_rng(1).standard_normal(3, dtype=np.int32),
     ["standard_normal", "int32"]),
    ("linspace num -1", lambda: cp.linspace(0, 1, -1), lambda: np.linspace(0, 1, -1),
     ["linspace", "-1", "non-negative"]),
    ("linspace num 2.5", lambda: cp.linspace(0, 1, 2.5), lambda: np.linspace(0, 1, 2.5),
     ["linspace", "'float'"]),
    ("allclose (3,) (4,)", lambda: cp.allclose(ones(3), ones(4)),
     lambda: np.allclose(np.ones(3), np.ones(4)), ["allclose", "(3,)", "(4,)"]),
    ("isclose (3,) (2, 4)", lambda: cp.isclose(ones(3), ones((2, 4))),
     lambda: np.isclose(np.ones(3), np.ones((2, 4))), ["isclose", "(3,)", "(2,"]),
    ("where (3,) (4,)", lambda: cp.where(ones(3) > 0, ones(3), ones(4)),
     lambda: np.where(np.ones(3) > 0, np.ones(3), np.ones(4)), ["where", "(3,)", "(4,)"]),
    ("add (3,) (4,)", lambda: ones(3) + ones(4), lambda: np.ones(3) + np.ones(4),
     ["(3,)", "(4,)"]),
    ("dot (3,) (4,)", lambda: cp.dot(ones(3), ones(4)), lambda: np.dot(np.ones(3), np.ones(4)),
     ["dot", "(3,)", "(4,)"]),
    ("matmul (2, 3) (4,)", lambda: cp.matmul(ones((2, 3)), ones(4)),
     lambda: np.matmul(np.ones((2, 3)), np.ones(4)), ["matmul", "4"]),
    ("inner (3,) (4,)", lambda: cp.inner(ones(3), ones(4)),
     lambda: np.inner(np.ones(3), np.ones(4)), ["inner", "(3,)", "(4,)"]),
    ("vdot 3 and 4", lambda: cp.vdot(ones(3), ones(4)), lambda: np.vdot(np.ones(3), np.ones(4)),
     ["vdot", "3", "4"]),
    ("swapaxes(0, 3)", lambda: cp.swapaxes(ones(3), 0, 3), lambda: np.swapaxes(np.ones(3), 0, 3),
     ["axis2", "axis 3 is out of bounds for array of dimension 1"]),
    ("squeeze(axis=5)", lambda: cp.squeeze(ones((1, 3)), 5),
     lambda: np.squeeze(np.ones((1, 3)), 5), ["axis 5 is out of bounds for array of dimension 2"]),
    ("transpose((0, 5))", lambda: cp.transpose(ones((2, 3)), (0, 5)),
     lambda: np.transpose(np.ones((2, 3)), (0, 5)), ["axis 5", "dimension 2"]),
    ("reshape (2, 2)", lambda: cp.reshape(ones(3), (2, 2)),
     lambda: np.reshape(np.ones(3), (2, 2)), ["reshape", "size 3"]),
]


#: with host arrays these are NumPy's own operators, not jitkern's
NUMPY_OPERATORS = {"where (3,) (4,)", "add (3,) (4,)"}


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_the_namespace_raises_what_numpy_raises_naming_the_value(case, mode):
    name, ours, theirs, words = case
    if mode == "host" and name in NUMPY_OPERATORS:
        pytest.skip("NumPy arrays' own operator")
    try:
        theirs()
    except Exception as exc:  # noqa: BLE001 - whatever NumPy raises is the reference
        numpy_class = type(exc)
    else:
        pytest.fail(f"NumPy accepts {name}: the case is not one NumPy refuses")
    with pytest.raises(jitkern.JitkernError) as info:
        ours()
    if numpy_class.__module__ != "builtins":  # AxisError: NumPy's own class
        assert isinstance(info.value, numpy_class)
    else:
        assert isinstance(info.value, numpy_class), (type(info.value).__mro__, numpy_class)
    for word in words:
        assert word in str(info.value), (word, str(info.value))


def test_valid_sizes_and_seeds_still_draw_the_same_stream(mode, rng):
    top = 2**64 - 1 - int(rng.integers(0, 1000))  # the largest seeds are valid
    first = cp.asnumpy(cp.random.RandomState(top).randn(2, np.int64(3)))
    again = cp.asnumpy(cp.random.RandomState(np.uint64(top)).standard_normal((2, 3)))
    np.testing.assert_array_equal(first, again)
    assert first.shape == (2, 3) and np.isfinite(first).all()
    huge = 2**70 + int(rng.integers(0, 2**32))
    big = cp.asnumpy(cp.random.default_rng(huge).random(4))  # NumPy's default_rng takes it
    np.testing.assert_array_equal(big, cp.asnumpy(cp.random.default_rng(huge).random(4)))
    assert not np.array_equal(big, cp.asnumpy(cp.random.default_rng(huge % 2**64).random(4)))
    assert cp.asnumpy(cp.linspace(0, 1, True)).tolist() == np.linspace(0, 1, True).tolist()
    assert cp.asnumpy(cp.linspace(0, 1, np.int64(3))).tolist() == [0.0, 0.5, 1.0]
