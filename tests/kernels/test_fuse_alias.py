"""fuse with arguments that share memory (issue 25): NumPy's sequential result, always.

The reference is the same Python function run on NumPy views of a copy of the same buffer
(NumPy orders the statements and copies a ufunc input that overlaps its output). Values are
small integers in float64, so every sum is exact and the comparison is exact. Each case runs
as a twin: on the GPU with jitkern arrays, and on a simulated device (jitkern arrays in host
memory, every kernel in the simulator); ``.simulate`` and ``JITKERN_SIMULATE=1`` run on
NumPy arrays; CuPy arrays on the GPU.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings as hsettings
from hypothesis import strategies as st

import jitkern
from jitkern.config import settings
from jitkern.kernels.fuse import alias
from jitkern.kernels.fuse.graph import Graph, SequentialGraph


@jitkern.fuse()
def add_twice(x, y):
    x += y
    x += y


@jitkern.fuse()
def scale_then_shift(x, y):
    x *= 2
    y += 1


@jitkern.fuse()
def add_then_read(x, y):
    x += y
    return y * 3 - x


@jitkern.fuse()
def add_out(x, y, z):
    np.add(x, y, out=z)
    return z + x


@jitkern.fuse()
def centre_by_row(x, m):
    m[...] = x.sum(axis=0)
    x -= m


@jitkern.fuse()
def row_then_total(x, y):
    y[...] = x.max(axis=0) * 2
    return x.sum(axis=1)


@jitkern.fuse()
def copy_and_scale(x, y):
    np.copyto(x, y)
    y *= 3
    return x + y


@jitkern.fuse()
def keep_then_write(x, y):
    before = y * 2  # y as it is now: the write below changes it before the return reads it
    x += 1
    return before + y


#: name -> (function, buffer shape, the arguments as views of the buffer)
CASES = {
    "same array twice": (add_twice, (6, 8), lambda b: (b, b)),
    "x *= 2; y += 1 on one array": (scale_then_shift, (6, 8), lambda b: (b, b)),
    "reversed view": (add_twice, (48,), lambda b: (b[::-1], b)),
    "shifted views": (add_twice, (48,), lambda b: (b[1:], b[:-1])),
    "shifted views, other way": (add_twice, (48,), lambda b: (b[:-1], b[1:])),
    "negative strides in 2-D": (add_twice, (6, 8), lambda b: (b[::-1, ::-1], b)),
    "interleaved, disjoint": (add_twice, (48,), lambda b: (b[::2], b[1::2])),
    "broadcast row of the same array": (add_twice, (6, 8), lambda b: (b, b[2])),
    "read after the write": (add_then_read, (6, 8), lambda b: (b[:, ::-1], b)),
    "out= aliases an input": (add_out, (48,), lambda b: (b, b[::-1], b)),
    "out= overlaps both inputs": (add_out, (48,), lambda b: (b[2:], b[:-2], b[1:-1])),
    "reduction into a row": (centre_by_row, (6, 8), lambda b: (b, b[0])),
    "reduction, then read": (row_then_total, (6, 8), lambda b: (b, b[5])),
    "copyto and a view": (copy_and_scale, (6, 8), lambda b: (b[::-1], b)),
    "a value read before a write": (keep_then_write, (6, 8), lambda b: (b, b)),
    "a view read before a write": (keep_then_write, (48,), lambda b: (b[3:], b[:-3])),
    "no sharing": (add_then_read, (2, 6, 8), lambda b: (b[0], b[1])),
}


def _buffer(rng, shape):
    return rng.integers(-9, 10, shape).astype(np.float64)


def _reference(fn, host, views):
    want = host.copy()
    result = fn.func(*views(want))
    return want, result


def _compare(got, want, got_result, want_result):
    np.testing.assert_array_equal(got, want)
    if want_result is None:
        assert got_result is None
    else:
        np.testing.assert_array_equal(jitkern.asnumpy(got_result), want_result)


@pytest.mark.parametrize("name", list(CASES))
def test_shared_memory_gives_numpys_result(on_device, rng, name):
    fn, shape, views = CASES[name]
    host = _buffer(rng, shape)
    want, want_result = _reference(fn, host, views)
    device = jitkern.asarray(host)
    got_result = fn(*views(device))
    _compare(device.get(), want, got_result, want_result)


@pytest.mark.parametrize("name", list(CASES))
def test_simulate_and_jitkern_simulate_share_numpy_memory(rng, name, monkeypatch):
    fn, shape, views = CASES[name]
    host = _buffer(rng, shape)
    want, want_result = _reference(fn, host, views)
    got = host.copy()
    _compare(got, want, fn.simulate(*views(got)), want_result)
    monkeypatch.setattr(settings, "simulate", True)  # JITKERN_SIMULATE=1
    got = host.copy()
    _compare(got, want, fn(*views(got)), want_result)


def test_a_call_sharing_nothing_runs_one_kernel_and_sharing_runs_memory_order(rng):
    b = _buffer(rng, (48,))
    assert isinstance(add_twice.graph_for(b[:24], b[24:]), Graph)
    assert len(add_twice.kernels_for(b[:24], b[24:])) == 1
    assert isinstance(add_twice.graph_for(b[::2], b[1::2]), Graph)  # spans meet, bytes do not
    shared = add_twice.graph_for(b[::-1], b)
    assert isinstance(shared, SequentialGraph) and len(shared.steps) == 2
    assert len(add_twice.kernels_for(b, b)) == 2  # one per write
    assert "step 1: write argument 0" in shared.describe()


@pytest.mark.parametrize("fn, views, copies", [
    (add_twice, lambda b: (b, b), 0),  # each element is read, then written: no copy
    (add_twice, lambda b: (b[::-1], b), 2),  # y overlaps x elsewhere: a copy before each write
    (add_twice, lambda b: (b[::2], b[1::2]), 0),  # no shared byte: one kernel
    (keep_then_write, lambda b: (b, b), 1),  # y read before the write, used after it
    (keep_then_write, lambda b: (b[:24], b[24:]), 0),
    (add_out, lambda b: (b, b[::-1], b), 1),  # z is x: only y (reversed) is copied
], ids=["same", "reversed", "interleaved", "kept", "disjoint", "out"])
def test_a_read_is_copied_only_where_a_write_changes_it_first(rng, fn, views, copies,
                                                              monkeypatch):
    """The simulator computes every kernel into new memory, so only a GPU would show a
    missing copy (the [gpu] twins above); here the copies are counted."""
    made = []
    real = alias.copy_plan
    monkeypatch.setattr(alias, "copy_plan", lambda *a: made.append(a) or real(*a))
    host = _buffer(rng, (48,))
    want, want_result = _reference(fn, host, views)
    got = host.copy()
    _compare(got, want, fn.simulate(*views(got)), want_result)
    assert len(made) == copies


def test_functions_that_only_read_never_check(rng):
    reads = jitkern.fuse(lambda x, y: x * y + x)
    b = _buffer(rng, (48,))
    assert reads.kernel_for(b, b) is reads.kernel_for(b, b[::-1])
    np.testing.assert_array_equal(reads.simulate(b, b[::-1]), b * b[::-1] + b)


def test_reading_part_of_a_written_argument_runs_in_memory_order(rng):
    @jitkern.fuse()
    def row_of_written(x, y):
        x += y
        return x[1] * 2 + x[0, 2]

    @jitkern.fuse()
    def other_row(x, y):
        x[1] = y * 2
        return x[1] + x[0]  # x[0] does not overlap x[1]: one kernel is NumPy's result

    host, y = _buffer(rng, (4, 6)), _buffer(rng, (6,))
    assert isinstance(row_of_written.graph_for(host, y), SequentialGraph)
    assert isinstance(other_row.graph_for(host, y), Graph)
    for fn in (row_of_written, other_row):
        want = host.copy()
        want_result = fn.func(want, y)
        got = host.copy()
        np.testing.assert_array_equal(fn.simulate(got, y), want_result)
        np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------------------
# random programs over random views of one buffer, against NumPy


_VIEWS = st.tuples(st.integers(0, 6), st.sampled_from([-2, -1, 1, 2]))
_STATEMENTS = st.tuples(
    st.sampled_from(["+=", "-=", "*=", "[...] =", "out=", "keep", "+= kept"]),
    st.integers(0, 2), st.integers(0, 2), st.integers(0, 2), st.sampled_from([-1, 2, 3]),
)


def _view(buffer, start, step, length):
    if step < 0:
        start = start + (length - 1) * -step
        return buffer[start::step][:length]
    return buffer[start::step][:length]


def _program(statements, result):
    def f(a, b, c):
        xs, kept = [a, b, c], a * 1
        for op, i, j, k, factor in statements:
            if op == "keep":  # a value of now, used after later writes
                kept = xs[j] * factor + xs[k]
            elif op == "+= kept":
                xs[i] += kept
            elif op == "+=":
                xs[i] += xs[j]
            elif op == "-=":
                xs[i] -= xs[j] * factor
            elif op == "*=":
                xs[i] *= factor
            elif op == "[...] =":
                xs[i][...] = xs[j] + xs[k]
            else:
                np.add(xs[j], xs[k], out=xs[i])
        return xs[result] * 1 + kept

    return f


@hsettings(max_examples=40, deadline=None, derandomize=False,
           suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(views=st.lists(_VIEWS, min_size=3, max_size=3),
       statements=st.lists(_STATEMENTS, min_size=1, max_size=5),
       result=st.integers(0, 2), length=st.integers(1, 6), seed=st.integers(0, 2**32 - 1))
def test_random_in_place_programs_over_overlapping_views_match_numpy(on_device, views,
                                                                     statements, result,
                                                                     length, seed):
    """On the GPU ([gpu]: where a missing copy would show) and on a simulated device."""
    host = np.random.default_rng(seed).integers(-5, 6, 24).astype(np.float64)
    fn = _program(statements, result)
    want = host.copy()
    want_result = fn(*[_view(want, s, k, length) for s, k in views])
    device = jitkern.asarray(host)
    got_result = jitkern.fuse(fn)(*[_view(device, s, k, length) for s, k in views]).get()
    np.testing.assert_array_equal(device.get(), want)
    np.testing.assert_array_equal(got_result, want_result)


# ---------------------------------------------------------------------------
# the GPU only


@pytest.mark.gpu
@pytest.mark.parametrize("name", list(CASES))
def test_cupy_arrays_that_share_memory(rng, name):
    cupy = pytest.importorskip("cupy")
    fn, shape, views = CASES[name]
    host = _buffer(rng, shape)
    want, want_result = _reference(fn, host, views)
    device = cupy.asarray(host)
    got_result = fn(*views(device))
    if got_result is not None:
        assert isinstance(got_result, cupy.ndarray)
        got_result = cupy.asnumpy(got_result)
    _compare(cupy.asnumpy(device), want, got_result, want_result)


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["same array twice", "reversed view", "out= aliases an input"])
def test_simulate_of_gpu_arrays_keeps_their_sharing(rng, name):
    fn, shape, views = CASES[name]
    host = _buffer(rng, shape)
    want, want_result = _reference(fn, host, views)
    device = jitkern.asarray(host)
    got_result = fn.simulate(*views(device))
    _compare(device.get(), want, got_result, want_result)


# ---------------------------------------------------------------------------
# every kernel these calls run compiles (NVRTC, no GPU)


def compile_every_kernel(fused, *args):
    """Compile for sm_90 each kernel a call with ``args`` runs (NumPy arrays stand for
    device arrays): the C++ the GPU twins run is checked here without a GPU. Returns how
    many kernels it compiled."""
    kernels = fused.kernels_for(*args)
    for kernel in kernels:
        arrays = [np.zeros(4, p.dtype) for p in kernel.params
                  if not p.is_output or not isinstance(kernel, jitkern.ReductionKernel)]
        assert kernel.inspect(*arrays, arch="sm_90").cubin
    return len(kernels)


@pytest.mark.parametrize("name", ["same array twice", "reversed view", "reduction into a row",
                                  "out= overlaps both inputs", "a value read before a write"])
def test_memory_order_kernels_compile(name):
    fn, shape, views = CASES[name]
    assert compile_every_kernel(fn, *views(np.zeros(shape))) >= 2  # a step per write


def test_a_function_writing_its_arguments_is_not_exported(tmp_path):
    with pytest.raises(NotImplementedError, match="writes its arguments") as info:
        add_twice.export(tmp_path / "k", np.zeros(8, np.float32), np.zeros(8, np.float32))
    assert isinstance(info.value, jitkern.JitkernError) and not list(tmp_path.iterdir())


def test_functions_writing_only_what_they_read_run_one_plan(rng):
    """x *= 2 and x -= x.mean(): no other view to share memory with, one plan always."""
    scale = jitkern.fuse(lambda x: x.__imul__(2))
    centre = jitkern.fuse(lambda x: x.__isub__(x.mean()))
    b = _buffer(rng, (6, 8))
    for fn, want in ((scale, b * 2), (centre, b - b.mean())):
        assert isinstance(fn.graph_for(b), Graph)
        assert len(fn.kernels_for(b)) == (1 if fn is scale else 2)
        got = b.copy()
        fn.simulate(got)
        np.testing.assert_allclose(got, want, rtol=1e-15, atol=1e-15)


@pytest.mark.parametrize("name", ["same array twice", "reversed view", "out= aliases an input",
                                  "no sharing"])
def test_simulate_copies_device_arrays_keeping_their_sharing(rng, name, monkeypatch):
    """.simulate of device arrays that are not a simulated device's (a GPU's): host copies,
    one per group of arrays that share memory, written back after. Run on a simulated
    device with its zero-copy views turned off, so the copies are the GPU path's."""
    from jitkern.runtime import simulated as simdevice

    fn, shape, views = CASES[name]
    host = _buffer(rng, shape)
    want, want_result = _reference(fn, host, views)
    with jitkern.simulated_device():
        monkeypatch.setattr(simdevice, "host_view", lambda a: None)
        device = jitkern.asarray(host)
        got_result = fn.simulate(*views(device))
        got_result = None if got_result is None else got_result.get()
        _compare(device.get(), want, got_result, want_result)
