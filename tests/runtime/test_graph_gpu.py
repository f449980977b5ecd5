"""CUDA graph capture and replay on the GPU: every kernel kind, pool allocations,
CuPy's and PyTorch's captures, and what a capture refuses."""

import numpy as np
import pytest

import jitkern
from jitkern import jit
from jitkern.errors import StreamCaptureError

from _graph_kernels import BLOCKS, N, THREADS, TWICE, add_scalar

pytestmark = pytest.mark.gpu


@jitkern.rawkernel()
def scale_add(x, y, a, n):
    i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    if i < n:
        y[i] = x[i] * a + y[i]


def kernels():
    raw = jitkern.RawKernel(TWICE, "twice")
    ew = jitkern.ElementwiseKernel("float64 x, float64 t", "float64 z", "z = x * t + 1.0",
                                   "graph_fma")
    red = jitkern.ReductionKernel("float64 x", "float64 y", "x * x", "a + b", "y = a", "0",
                                  "graph_sumsq")
    return raw, ew, red


def pipeline(x, raw, ew, red):
    """RawKernel, ElementwiseKernel (allocating), @rawkernel, ReductionKernel and pool
    allocations; the outputs depend on each step."""
    t = jitkern.empty(N, np.float64)
    t.fill(np.nan)  # poisoned (recorded in a capture too): each step must write its output
    raw((BLOCKS,), (THREADS,), (x, t, N))
    u = ew(x, t)  # 2 x^2 + 1
    out = jitkern.empty(N, np.float64)
    out.fill(np.nan)
    add_scalar[BLOCKS, THREADS](u, out, 0.5, N)  # 2 x^2 + 1.5
    total = red(out)
    return out, total


def expected(xh):
    out = 2.0 * xh * xh + 1.0 + 0.5
    return out, np.sum(out * out)


def test_mixed_capture_replays_like_eager_and_numpy(rng):
    raw, ew, red = kernels()
    x = jitkern.asarray(rng.standard_normal(N))
    pipeline(x, raw, ew, red)  # compile and make the launchers outside the capture
    with jitkern.graph.capture() as g:
        out, total = pipeline(x, raw, ew, red)
        assert jitkern.graph.is_capturing()
    assert isinstance(g.graph, jitkern.Graph)
    assert not g.stream.is_capturing()
    g.upload()
    for _ in range(2):  # replayed twice on fresh inputs
        xh = rng.standard_normal(N)
        x.set(xh)
        g.launch()
        got_out, got_total = out.get(), total.get()
        eager_out, eager_total = pipeline(x, raw, ew, red)
        np.testing.assert_array_equal(got_out, eager_out.get())
        np.testing.assert_array_equal(got_total, eager_total.get())
        want_out, want_total = expected(xh)
        np.testing.assert_allclose(got_out, want_out, rtol=1e-15, atol=0)
        np.testing.assert_allclose(got_total, want_total, rtol=1e-12)
        out.fill(np.nan)  # poison: the next replay must rewrite every element


def test_stream_begin_end_capture_with_a_kernel_compiled_during_the_capture(rng):
    @jitkern.rawkernel()
    def cube(x, y, n):  # first launched inside the capture: compiled and loaded there
        i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
        if i < n:
            y[i] = x[i] * x[i] * x[i]

    s = jitkern.Stream()
    x = jitkern.asarray(rng.standard_normal(N))
    y = jitkern.full(N, np.nan)
    s.begin_capture()
    assert s.is_capturing()
    cube[BLOCKS, THREADS, 0, s](x, y, N)
    graph = s.end_capture()
    assert not s.is_capturing()
    assert np.isnan(y.get()).all()  # captured, not run
    xh = rng.standard_normal(N)
    x.set(xh)
    graph.launch(s)
    s.synchronize()
    np.testing.assert_allclose(y.get(), xh ** 3, rtol=2e-15)
    assert "digraph" in graph.debug_dot_str()


def test_a_dependent_chain_of_100_launches_replays_identically(rng):
    xh = rng.standard_normal(N).astype(np.float32)
    a, b = jitkern.asarray(xh), jitkern.empty(N, np.float32)
    half = np.float32(0.5)

    def chain():
        x, y = a, b
        for _ in range(100):
            scale_add[BLOCKS, THREADS](x, y, half, N)
            x, y = y, x

    # y = x * 0.5 + y from the same start, eagerly and replayed
    b.fill(np.float32(1))
    chain()
    eager = a.get()
    a.set(xh)
    b.fill(np.float32(1))
    with jitkern.graph.capture() as g:
        chain()
    g.launch()
    np.testing.assert_array_equal(a.get(), eager)


def test_bound_launches_are_captured(rng):
    x = jitkern.asarray(rng.standard_normal(N))
    y = jitkern.zeros(N, np.float64)
    bound = scale_add.bind(BLOCKS, THREADS, x, y, 3.0, N)  # stream=None: follows the current
    with jitkern.graph.capture() as g:
        bound()
        bound()
    xh = rng.standard_normal(N)
    x.set(xh)
    y.fill(1.0)
    g.launch()
    np.testing.assert_allclose(y.get(), 1.0 + 6.0 * xh, rtol=1e-14, atol=1e-14)


def test_capture_refusals_leave_the_capture_usable(rng):
    with jitkern.Stream() as s:
        x = jitkern.asarray(rng.standard_normal(N))  # on s: get() needs no cross-stream wait
        y = jitkern.empty(N, np.float64)
        doomed = jitkern.zeros(64, np.float64)  # allocated on s before the capture
        with jitkern.graph.capture() as g:
            assert g.stream is s
            with pytest.raises(StreamCaptureError, match="host.*begin_capture"):
                x.get()
            with pytest.raises(StreamCaptureError, match="synchronize"):
                jitkern.synchronize()
            with pytest.raises(StreamCaptureError, match="synchronize"):
                s.synchronize()
            with pytest.raises(StreamCaptureError, match="already capturing"):
                s.begin_capture()
            del doomed  # held by the capture, not freed into the graph
            add_scalar[BLOCKS, THREADS](x, y, 2.0, N)
        assert len(g.graph._held) == 1
    y.fill(np.nan)
    g.launch()
    np.testing.assert_allclose(y.get(), x.get() + 2.0, rtol=1e-15)
    with pytest.raises(StreamCaptureError, match="not capturing"):
        s.end_capture()


def test_arrays_of_other_streams_in_a_capture(rng):
    xh = rng.standard_normal(N)
    x = jitkern.asarray(xh)  # on the legacy stream, before the capture
    with jitkern.graph.capture() as g:
        with pytest.raises(StreamCaptureError, match="host"):
            x.get()  # refused before any cross-stream wait could invalidate the capture
        x.fill(2.0)  # recorded: no wait on work queued before the capture
        y = jitkern.empty(N, np.float64)
        y.fill(np.nan)  # recorded: the replay poisons y before the kernel writes it
        add_scalar[BLOCKS, THREADS](x, y, 0.25, N)
        with pytest.raises(StreamCaptureError, match="written during a graph capture"):
            y.get(stream=jitkern.Stream.null)
    np.testing.assert_array_equal(x.get(), xh)  # nothing ran yet
    g.launch()
    np.testing.assert_array_equal(y.get(), np.full(N, 2.25))


def test_an_exception_in_the_block_ends_the_capture():
    s = jitkern.Stream()
    with pytest.raises(ZeroDivisionError, match="inside the block"), jitkern.graph.capture(s) as g:
        raise ZeroDivisionError("inside the block")
    assert g.graph is None
    assert not s.is_capturing()
    assert jitkern.get_current_stream() == jitkern.Stream.null


def test_cupy_capture_records_jitkern_launches(rng):
    cupy = pytest.importorskip("cupy")
    raw = jitkern.RawKernel(TWICE, "twice")
    s = cupy.cuda.Stream(non_blocking=True)
    x = cupy.asarray(rng.standard_normal(N))
    y = cupy.full_like(x, np.nan)
    z = cupy.full_like(x, np.nan)
    raw((BLOCKS,), (THREADS,), (x, y, N), stream=s)  # warm up
    add_scalar[BLOCKS, THREADS, 0, s](y, z, 1.0, N)
    s.synchronize()
    s.begin_capture()
    raw((BLOCKS,), (THREADS,), (x, y, N), stream=s)  # given as stream=
    with jitkern.Stream.from_external(s):  # or made jitkern's current stream
        add_scalar[BLOCKS, THREADS](y, z, 1.0, N)
    graph = s.end_capture()
    xh = rng.standard_normal(N)
    x.set(xh)
    z.fill(np.nan)
    graph.launch(s)
    s.synchronize()
    np.testing.assert_allclose(cupy.asnumpy(z), 2.0 * xh + 1.0, rtol=1e-15)


def test_torch_capture_records_jitkern_launches(rng):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch without CUDA")
    xh = rng.standard_normal(N)
    x = torch.tensor(xh, device="cuda")
    y = torch.empty_like(x)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm up on the side stream, as PyTorch asks
        add_scalar[BLOCKS, THREADS, 0, s](x, y, 3.0, N)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=s):
        add_scalar[BLOCKS, THREADS, 0, torch.cuda.current_stream()](x, y, 3.0, N)
    xh = rng.standard_normal(N)
    x.copy_(torch.tensor(xh))
    y.fill_(float("nan"))
    g.replay()
    torch.cuda.synchronize()
    np.testing.assert_allclose(y.cpu().numpy(), xh + 3.0, rtol=1e-15)
