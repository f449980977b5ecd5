"""jit.thrust's fancy iterators in the simulator (the twins of tests/compat/test_compat2_gpu.py):
make_counting_iterator and make_constant_iterator as unbounded read-only sequences."""

import importlib.util
import pathlib

import numpy as np
import pytest

from jitkern import jit
from jitkern.errors import KernelAssertionError
from jitkern.jit import rawkernel
from jitkern.sim import thrust as sim_thrust

_PATH = pathlib.Path(__file__).resolve().parents[1] / "compat" / "compat2_kernels.py"
_SPEC = importlib.util.spec_from_file_location("compat2_kernels_for_sim", _PATH)
K = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(K)


@pytest.mark.parametrize("rows", [1, 7])
def test_fancy_rows_match_numpy(rng, rows):
    x, starts = K.fancy_inputs(rng, rows)
    outs = K.fancy_outputs(rows)
    K.fancy_rows.simulate[1, rows](x.ravel().copy(), starts, *outs, K.ROW)
    squares, scanned, ints, floats = K.fancy_expected(x, starts)
    np.testing.assert_array_equal(outs[0], squares)
    np.testing.assert_array_equal(outs[1], scanned)
    np.testing.assert_array_equal(outs[2].reshape(rows, 8), ints.reshape(rows, 8))
    np.testing.assert_array_equal(outs[3], floats)


@rawkernel()
def backwards(out, n):
    c = jit.thrust.make_counting_iterator(np.int32(10))
    far = c + n
    out[0] = jit.thrust.reduce(jit.thrust.seq, far - 3, far)  # a range away from the start
    below = c - 4  # before the start: a counting iterator has no memory to leave
    out[1] = jit.thrust.find(jit.thrust.seq, below, c, np.int32(7)) - c
    k = jit.thrust.make_constant_iterator(np.float64(1.25))
    out[2] = jit.thrust.count(jit.thrust.seq, k + 1000, k + 1000 + n, 1.25)


def test_offsets_anywhere_on_a_fancy_iterator_match_numpy(rng):
    n = int(rng.integers(5, 40))
    out = np.full(3, -7, np.int64)
    backwards.simulate[1, 1](out, n)
    start = 10 + n - 3
    np.testing.assert_array_equal(out, [start + start + 1 + start + 2, 7 - 10, n])


@rawkernel()
def counting_int8(out):
    c = jit.thrust.make_counting_iterator(np.int8(126))
    jit.thrust.transform(jit.thrust.seq, c, c + 4, out, jit.thrust.identity())


def test_a_counting_iterator_wraps_in_its_type_as_in_cpp():
    out = np.zeros(4, np.int8)
    counting_int8.simulate[1, 1](out)
    np.testing.assert_array_equal(out, np.array([126, 127, -128, -127], np.int8))


def test_the_simulated_sequence_is_read_only_and_compares_by_value():
    seq = sim_thrust.Fancy("counting", np.int32(5))
    np.testing.assert_array_equal(seq[2:5], np.array([7, 8, 9], np.int32))
    assert seq[2:5].dtype == np.int32 and seq[-1] == 4
    assert seq.same(sim_thrust.Fancy("counting", np.int32(5)))
    assert not seq.same(sim_thrust.Fancy("counting", np.int64(5)))
    assert not seq.same(sim_thrust.Fancy("constant", np.int32(5)))
    with pytest.raises(KernelAssertionError, match="counting iterator is read-only"):
        seq[0] = 1


@rawkernel()
def two_counting_ranges(out):
    a = jit.thrust.make_counting_iterator(np.int32(0))
    b = jit.thrust.make_counting_iterator(np.int32(1))
    out[0] = jit.thrust.count(jit.thrust.seq, a, b + 3, np.int32(1))


def test_a_range_over_two_different_counting_iterators_is_reported():
    out = np.zeros(1, np.int64)
    with pytest.raises(KernelAssertionError, match=r"\[first, last\) of a jit.thrust call"):
        two_counting_ranges.simulate[1, 1](out)
