"""``x[i]`` of an N-d array is an (N-1)-d view of that row (issue 17): it indexes, has
``.shape``/``.size``, and its ``.begin()``/``.end()`` are (strided) iterators that
jit.thrust's algorithms take, for C and F order and any strides. Twin tests: the
simulator, and (marked gpu) the device."""

import numpy as np
import pytest

import jitkern
from jitkern import jit

LAYOUTS = ["C", "F", "strided"]


def layout(host, kind):
    if kind in ("C", "F"):
        return np.array(host, order=kind)  # a copy: kernels write it
    padded = np.zeros(host.shape[:-1] + (host.shape[-1] * 3,), host.dtype)
    padded[..., ::3] = host
    return padded[..., ::3]  # every row strided by 3 elements


@jitkern.rawkernel()
def row_facts(x, cube, out):
    i = jit.threadIdx.x
    row = x[i]
    plane = cube[i]
    out[i, 0] = row.shape[0]
    out[i, 1] = row.size
    out[i, 2] = row[1] + x[i][2]
    out[i, 3] = plane[1, 2] + cube[i][0][1]
    out[i, 4] = plane.shape[0] * 10 + plane.shape[1]
    out[i, 5] = cube[i, 1].size


def _device(launch, host, kind):
    if launch.simulated:
        return layout(host, kind)
    if kind == "strided":  # a view of a padded device array
        return jitkern.asarray(np.repeat(host, 3, axis=-1))[..., ::3]
    return jitkern.asarray(layout(host, kind))


@pytest.mark.parametrize("kind", LAYOUTS)
def test_a_row_of_an_nd_array_is_a_view(launch, rng, kind):
    x = rng.uniform(-1, 1, (4, 5))
    cube = rng.uniform(-1, 1, (4, 3, 6))
    out = launch.poisoned((4, 6), np.float64)
    launch(row_facts)[1, 4](_device(launch, x, kind), _device(launch, cube, kind), out)
    launch.synchronize()
    expected = np.stack([
        np.full(4, 5.0), np.full(4, 5.0), x[:, 1] + x[:, 2], cube[:, 1, 2] + cube[:, 0, 1],
        np.full(4, 36.0), np.full(4, 6.0),
    ], axis=1)
    np.testing.assert_allclose(launch.get(out), expected, rtol=1e-15)


@jitkern.rawkernel()
def row_algorithms(x, y, out, where):
    i = jit.threadIdx.x
    row = x[i]
    out[i, 0] = jit.thrust.reduce(jit.thrust.seq, row.begin(), row.end(), 0.0)
    out[i, 1] = jit.thrust.count(jit.thrust.seq, row.begin(), row.end(), 2.0)
    jit.thrust.inclusive_scan(jit.thrust.seq, row.begin(), row.end(), y[i].begin())
    jit.thrust.sort(jit.thrust.seq, row.begin(), row.end())
    where[i, 0] = jit.thrust.find(jit.thrust.seq, row.begin(), row.end(), 2.0) - row.begin()
    where[i, 1] = jit.thrust.max_element(jit.thrust.seq, row, row.end()) - row.begin()
    jit.thrust.reverse(jit.thrust.seq, row.begin() + 1, row.end())
    jit.thrust.fill(jit.thrust.seq, row.begin(), row.begin() + 1, -1.0)


@pytest.mark.parametrize("kind", LAYOUTS)
def test_thrust_algorithms_take_a_rows_iterators(launch, rng, kind):
    x = rng.integers(0, 4, (3, 6)).astype(np.float64)
    x[:, 4] = 2.0  # each row holds a 2 to find
    xd = _device(launch, x, kind)
    yd = _device(launch, np.full((3, 6), np.nan), kind)
    out = launch.poisoned((3, 2), np.float64)
    where = launch.poisoned((3, 2), np.int64)
    launch(row_algorithms)[1, 3](xd, yd, out, where)
    launch.synchronize()
    ordered = np.sort(x, axis=1)
    np.testing.assert_array_equal(launch.get(out)[:, 0], x.sum(axis=1))
    np.testing.assert_array_equal(launch.get(out)[:, 1], (x == 2.0).sum(axis=1))
    np.testing.assert_array_equal(np.asarray(launch.get(yd)), np.cumsum(x, axis=1))
    np.testing.assert_array_equal(launch.get(where)[:, 0], np.argmax(ordered == 2.0, axis=1))
    np.testing.assert_array_equal(launch.get(where)[:, 1], np.argmax(ordered, axis=1))
    final = ordered.copy()
    final[:, 1:] = ordered[:, 1:][:, ::-1]
    final[:, 0] = -1.0
    np.testing.assert_array_equal(np.asarray(launch.get(xd)), final)


def test_a_rows_iterators_compile_as_strided_iterators():
    x = np.asfortranarray(np.zeros((3, 6)))
    result = row_algorithms.inspect(x, x, np.zeros((3, 2)), np.zeros((3, 2), np.int64),
                                    arch="sm_90")
    assert "jk::Strided<double>(" in result.source
    assert "#include <jitkern/strided.cuh>" in result.source
