"""Every builtin record carries both spellings: its C++ ``template`` and, beside it, the
simulator's ``py`` (``NEUTRAL`` where the C++ template only calls back into the emitter and
so serves both back ends). One record, one name: no second table to keep in step."""

import math

import numpy as np
import pytest

from jitkern import jit
from jitkern.compiler import builtins as B
from jitkern.errors import JitTypeError


def _records() -> list:
    # math.fma's record is defined on every Python but reachable (and listed by all_records)
    # only where the math module has fma (Python 3.13+): count every defined math record
    seen = {id(r): r for r in B.all_records()}
    for record, _row in B.mathfuncs.MATH:
        seen.setdefault(id(record), record)
    return list(seen.values())


def test_every_record_has_a_cxx_and_a_simulator_spelling():
    records = _records()
    assert len(records) > 300
    assert sorted(r.name for r in records if r.template is None) == []
    assert sorted(r.name for r in records if r.py is None) == []


def test_neutral_records_are_those_whose_cxx_only_calls_the_emitter():
    neutral = {r.name for r in _records() if r.py is B.NEUTRAL}
    # range's loop is spelled by each back end's range_loop; its template is empty
    assert {"range", "len", "print", "shared_memory", "operator **", "numpy.<dtype>"} <= neutral
    assert "syncthreads" not in neutral and "atomic_add" not in neutral
    (range_,) = {r for r in _records() if r.name == "range" and r is B.range_}
    assert range_.template == ""


def test_math_fma_is_reachable_where_python_has_math_fma():
    (fma,) = [r for r, _row in B.mathfuncs.MATH if r.name == "math.fma"]
    assert (fma in B.all_records()) == hasattr(math, "fma")
    assert callable(fma.py)


@jit.rawkernel()
def _spelled_twice(x, y, out):
    i = jit.threadIdx.x
    jit.syncthreads()
    out[i] = abs(x[i] - y[i]) + jit.atomic_add(out, 0, 0.0) * 0.0


def test_a_kernel_of_several_families_runs_in_the_simulator(rng):
    x, y = rng.standard_normal(8), rng.standard_normal(8)
    out = np.full(8, np.nan)
    out[0] = 0.0
    _spelled_twice.simulate[1, 8](x, y, out)
    np.testing.assert_allclose(out[1:], np.abs(x - y)[1:], rtol=1e-15)


def test_a_call_the_simulator_refuses_says_so_with_the_record_name():
    @jit.rawkernel()
    def whole_block(x):
        g = jit.cg.this_thread_block()
        x[0] = jit.cg.reduce(g, x[0], jit.cg.plus)

    with pytest.raises(JitTypeError, match="the simulator reduces over tiles"):
        whole_block.simulate[1, 1](np.zeros(1, np.float32))
