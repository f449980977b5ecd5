"""Graph updates on the GPU: capture several kernels once, give nodes new arrays, scalars,
shapes and grids with g.update, replay, and compare with NumPy on fresh inputs (outputs
poisoned before each replay)."""

import gc

import numpy as np
import pytest

import jitkern
from jitkern import jit
from jitkern.errors import KernelArgumentError

from _graph_kernels import BLOCKS, N, THREADS, TWICE, add_scalar

pytestmark = pytest.mark.gpu


@jitkern.rawkernel()
def column(m, out, k):
    i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    if i < m.shape[0]:
        out[i] = m[i, k] * 3.0


def capture_pipeline(raw, x, t, out, c):
    """Two nodes: twice(x) -> t, then t + c -> out."""
    with jitkern.graph.capture() as g:
        raw((BLOCKS,), (THREADS,), (x, t, N))
        add_scalar[BLOCKS, THREADS](t, out, c, N)
    return g


def test_update_nodes_to_new_arrays_and_replay(rng):
    raw = jitkern.RawKernel(TWICE, "twice")
    x = jitkern.asarray(rng.standard_normal(N))
    t, out = jitkern.full(N, np.nan), jitkern.full(N, np.nan)
    raw((BLOCKS,), (THREADS,), (x, t, N))  # compiled and loaded before the capture
    add_scalar[BLOCKS, THREADS](t, out, 0.5, N)
    g = capture_pipeline(raw, x, t, out, 0.5)
    x2h = rng.standard_normal(N)
    x2, out2 = jitkern.asarray(x2h), jitkern.full(N, np.nan)
    g.update(raw, x=x2)
    g.update(add_scalar, out=out2)
    out.fill(np.nan)
    g.launch()
    np.testing.assert_allclose(out2.get(), 2.0 * x2h + 0.5, rtol=1e-15)
    assert np.isnan(out.get()).all()  # the node no longer writes the captured output
    for _ in range(2):  # the updated graph replays on fresh inputs, as a captured one does
        x2h = rng.standard_normal(N)
        x2.set(x2h)
        out2.fill(np.nan)
        g.launch()
        np.testing.assert_allclose(out2.get(), 2.0 * x2h + 0.5, rtol=1e-15)


def test_update_scalars_by_name_and_by_position(rng):
    raw = jitkern.RawKernel(TWICE, "twice")
    xh = rng.standard_normal(N)
    x = jitkern.asarray(xh)
    t, out = jitkern.full(N, np.nan), jitkern.full(N, np.nan)
    g = capture_pipeline(raw, x, t, out, 0.25)
    c = float(rng.standard_normal())
    g.update(add_scalar, c=c)
    g.launch()
    np.testing.assert_allclose(out.get(), 2.0 * xh + c, rtol=1e-15, atol=1e-15)
    half = int(rng.integers(1, N))  # a smaller n: the rest of the output keeps its poison
    out.fill(np.nan)
    g.update(add_scalar, t, out, -c, half)
    g.launch()
    got = out.get()
    np.testing.assert_allclose(got[:half], 2.0 * xh[:half] - c, rtol=1e-15, atol=1e-15)
    assert np.isnan(got[half:]).all()


def test_a_new_shape_with_its_grid(rng):
    rows, cols = 700, 5
    mh = rng.standard_normal((rows, cols))
    m, out = jitkern.asarray(mh), jitkern.full(rows, np.nan)
    with jitkern.graph.capture() as g:
        column[(rows + THREADS - 1) // THREADS, THREADS](m, out, 2)
    g.launch()
    np.testing.assert_allclose(out.get(), 3.0 * mh[:, 2], rtol=1e-15)
    rows2, cols2 = 4000, 9  # more rows than the captured grid covers: the grid goes with them
    m2h = np.asfortranarray(rng.standard_normal((rows2, cols2)))
    m2, out2 = jitkern.asarray(m2h), jitkern.full(rows2, np.nan)
    k = int(rng.integers(0, cols2))
    g.update(column, m=m2, out=out2, k=k, grid=(rows2 + THREADS - 1) // THREADS)
    g.launch()
    np.testing.assert_allclose(out2.get(), 3.0 * m2h[:, k], rtol=1e-15)


def test_a_new_dtype_is_refused_and_the_graph_still_runs(rng):
    raw = jitkern.RawKernel(TWICE, "twice")
    xh = rng.standard_normal(N)
    x = jitkern.asarray(xh)
    t, out = jitkern.full(N, np.nan), jitkern.full(N, np.nan)
    g = capture_pipeline(raw, x, t, out, 1.5)
    with pytest.raises(KernelArgumentError, match=r"add_scalar#0: argument 0 \(x\): the node's "
                                                  r"kernel was compiled for array\(float64.*"
                                                  r"float32.*capture the graph again"):
        g.update(add_scalar, x=jitkern.zeros(N, np.float32))
    g.launch()
    np.testing.assert_allclose(out.get(), 2.0 * xh + 1.5, rtol=1e-15)


def test_the_graph_keeps_updated_arrays_alive(rng):
    raw = jitkern.RawKernel(TWICE, "twice")
    x = jitkern.asarray(rng.standard_normal(N))
    t, out = jitkern.full(N, np.nan), jitkern.full(N, np.nan)
    g = capture_pipeline(raw, x, t, out, 0.0)
    x2h = rng.standard_normal(N)
    x2 = jitkern.asarray(x2h)
    g.update(raw, x=x2)
    del x2
    gc.collect()
    junk = [jitkern.full(N, np.inf) for _ in range(4)]  # would take x2's block if freed
    g.launch()
    np.testing.assert_allclose(out.get(), 2.0 * x2h, rtol=1e-15)
    assert np.isinf(junk[0].get()).all()


def test_a_captured_bound_launch_is_a_node_of_its_kernel(rng):
    xh = rng.standard_normal(N)
    x, out = jitkern.asarray(xh), jitkern.full(N, np.nan)
    bound = add_scalar.bind(BLOCKS, THREADS, x, out, 1.0, N)
    with jitkern.graph.capture() as g:
        bound()
    c = float(rng.standard_normal())
    g.update(g.node(bound), c=c)
    g.launch()
    np.testing.assert_allclose(out.get(), xh + c, rtol=1e-15, atol=1e-15)


def test_update_many_moves_every_node_and_repeats(rng):
    raw = jitkern.RawKernel(TWICE, "twice")
    x = jitkern.asarray(rng.standard_normal(N))
    t, out = jitkern.full(N, np.nan), jitkern.full(N, np.nan)
    g = capture_pipeline(raw, x, t, out, 0.5)
    first, second = g.nodes()
    for _ in range(3):  # the first update_many makes the packers; the others reuse them
        xh, c = rng.standard_normal(N), float(rng.standard_normal())
        x2, t2, out2 = jitkern.asarray(xh), jitkern.full(N, np.nan), jitkern.full(N, np.nan)
        g.update_many([(first, (x2, t2, N)), (second, {"x": t2, "out": out2, "c": c})])
        out.fill(np.nan)
        g.launch()
        np.testing.assert_allclose(out2.get(), 2.0 * xh + c, rtol=1e-15, atol=1e-15)
        assert np.isnan(out.get()).all()
