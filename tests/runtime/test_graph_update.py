"""Graph updates without a GPU: kernels are compiled for sm_90 and captured through the fake
driver (runtime/fakedriver.py), which keeps a copy of each kernel node's parameters and
records what cuGraphExecKernelNodeSetParams receives. Each test checks those bytes, or the
exact refusal."""

import gc
import struct
import weakref

import numpy as np
import pytest

import jitkern
from jitkern import jit
from jitkern.errors import (
    CUDAError,
    JitkernIndexError,
    JitkernOverflowError,
    JitkernTypeError,
    JitkernValueError,
    KernelArgumentError,
    LaunchError,
    StreamCaptureError,
)
from jitkern.runtime import driver
from jitkern.runtime.fakedriver import FakeDriver

AXPY = r"""
extern "C" __global__ void axpy(const double* x, double* y, double a, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""


class DeviceArray:
    """A device array by __cuda_array_interface__ (the fake's pointers are never read)."""

    def __init__(self, ptr, shape=(64,), typestr="<f8", strides=None):
        self.ptr, self.shape, self.typestr, self.strides = ptr, shape, typestr, strides

    @property
    def __cuda_array_interface__(self):
        return {"data": (self.ptr, False), "shape": self.shape, "typestr": self.typestr,
                "strides": self.strides, "version": 3}


def make_scale():
    """A fresh kernel per test: its functions are loaded under this test's fake driver."""

    @jitkern.rawkernel()
    def scale(x, out, c, n):
        i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
        if i < n:
            out[i] = x[i] * c

    return scale


def make_column():
    @jitkern.rawkernel()
    def column(m, out, k):
        i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
        if i < m.shape[0]:
            out[i] = m[i, k]

    return column


def pointer(rng):
    return int(rng.integers(1, 1 << 40)) * 256


def words(launch, sizes):
    """Each parameter of ``launch`` as an int of its own size (little-endian, signed)."""
    return [int.from_bytes(launch.raw(i, n), "little", signed=True) for i, n in enumerate(sizes)]


def as_double(word: int) -> float:
    return struct.unpack("<d", struct.pack("<q", word))[0]


@pytest.fixture
def fake():
    with driver.use(FakeDriver(cc=(9, 0))) as d:
        yield d


def capture_three(rng):
    """axpy, scale, axpy captured in that order; returns the graph and what went in."""
    k = jitkern.RawKernel(AXPY, "axpy")
    scale = make_scale()
    x, y, z = (DeviceArray(pointer(rng)) for _ in range(3))
    a0, a1, c = (float(rng.standard_normal()) for _ in range(3))
    with jitkern.graph.capture() as g:
        k((2,), (32,), (x, y, a0, 64))
        scale[2, 32](y, z, c, 64)
        k((2,), (32,), (z, x, a1, 64))
    return g, (k, scale), (x, y, z), (a0, a1, c)


def test_nodes_are_listed_in_capture_order_by_kernel_and_occurrence(fake, rng):
    g, (k, scale), _arrays, _scalars = capture_three(rng)
    nodes = g.nodes()
    assert [n.label for n in nodes] == ["axpy#0", "scale#0", "axpy#1"]
    assert [n.position for n in nodes] == [0, 1, 2]
    assert g.nodes(k) == [nodes[0], nodes[2]] and g.nodes(scale) == [nodes[1]]
    assert g.node(k, 1) is nodes[2] and g.node(scale) is nodes[1] and g.node((k, -1)) is nodes[2]
    assert nodes[0].kernel is k and nodes[1].kernel is scale
    assert all(isinstance(n, jitkern.graph.KernelNode) for n in nodes)
    assert nodes[1].grid == (2, 1, 1) and nodes[1].block == (32, 1, 1)


def test_nodes_follow_dependencies_not_the_drivers_listing(fake, rng):
    fake.cuGraphGetNodes = _reversed(fake.cuGraphGetNodes)
    g, (_k, scale), _arrays, _scalars = capture_three(rng)
    assert [n.label for n in g.nodes()] == ["axpy#0", "scale#0", "axpy#1"]


def _reversed(get_nodes):
    def reversed_nodes(graph, count):
        err, nodes, total = get_nodes(graph, count)
        return err, list(reversed(nodes)), total

    return reversed_nodes


def test_update_by_name_sets_the_new_values_and_keeps_the_others(fake, rng):
    g, (k, scale), (x, y, z), (a0, a1, c) = capture_three(rng)
    new_y = DeviceArray(pointer(rng))
    a = float(rng.standard_normal())
    node = g.update((k, 1), x=new_y, a=a)
    assert node is g.node(k, 1)
    exec_handle, node_handle, launch = fake.node_updates[-1]
    got = words(launch, [8, 8, 8, 8])
    assert got[:2] == [new_y.ptr, x.ptr] and as_double(got[2]) == a and got[3] == 64
    assert node.args == {0: new_y, 2: a}
    # the replay runs the updated node and the others as captured
    fake.launches.clear()
    g.launch()
    first, second, third = fake.launches
    assert words(first, [8, 8]) == [x.ptr, y.ptr] and as_double(words(first, [8] * 3)[2]) == a0
    assert words(second, [8, 8]) == [y.ptr, z.ptr]
    assert words(third, [8, 8]) == [new_y.ptr, x.ptr]
    assert as_double(words(third, [8] * 3)[2]) == a


def test_update_by_position_replaces_every_argument(fake, rng):
    g, (_k, scale), _arrays, _scalars = capture_three(rng)
    x2, y2 = DeviceArray(pointer(rng), (200,)), DeviceArray(pointer(rng), (200,))
    c = float(rng.standard_normal())
    n = int(rng.integers(100, 200))
    g.update(scale, x2, y2, c, n, grid=(n + 31) // 32)
    launch = fake.node_updates[-1][2]
    got = words(launch, [8, 8, 8, 8])
    assert got[:2] == [x2.ptr, y2.ptr] and as_double(got[2]) == c and got[3] == n
    assert launch.grid == ((n + 31) // 32, 1, 1) and launch.block == (32, 1, 1)


def test_a_jit_arrays_shape_and_strides_follow_it(fake, rng):
    column = make_column()
    rows, cols = (int(v) for v in rng.integers(2, 50, size=2))
    m = DeviceArray(pointer(rng), (rows, cols), strides=(cols * 8, 8))
    out = DeviceArray(pointer(rng), (rows,))
    with jitkern.graph.capture() as g:
        column[1, 64](m, out, 1)
    rows2, cols2 = (int(v) for v in rng.integers(2, 50, size=2))
    m2 = DeviceArray(pointer(rng), (rows2, cols2), strides=(8, rows2 * 8))  # Fortran order
    g.update(column, m=m2, k=cols2 - 1)
    launch = fake.node_updates[-1][2]
    # m, out, k, then m's shape and strides (the parameters the JIT appends)
    assert words(launch, [8] * 7) == [m2.ptr, out.ptr, cols2 - 1, rows2, cols2, 8, rows2 * 8]


def test_grid_block_and_shared_memory_are_updated(fake, rng):
    g, (k, scale), _arrays, _scalars = capture_three(rng)
    grid = (int(rng.integers(1, 1000)), 2)
    g.update((k, 0), grid=grid, block=(64, 2), shared_mem=256)
    launch = fake.node_updates[-1][2]
    assert (launch.grid, launch.block, launch.shared_mem) == ((*grid, 1), (64, 2, 1), 256)
    assert g.node(k, 0).grid == (*grid, 1)


def test_a_new_dtype_needs_another_kernel_and_is_refused(fake, rng):
    g, (_k, scale), _arrays, _scalars = capture_three(rng)
    with pytest.raises(KernelArgumentError,
                       match=r"graph node scale#0: argument 0 \(x\): the node's kernel was "
                             r"compiled for array\(float64, 1d.*got array\(float32.*capture "
                             r"the graph again"):
        g.update(scale, x=DeviceArray(pointer(rng), typestr="<f4"))
    with pytest.raises(KernelArgumentError, match=r"argument 2 \(c\).*compiled for float64, "
                                                  r"got float32"):
        g.update(scale, c=np.float32(2))
    assert fake.node_updates == []


def test_a_new_ndim_is_refused(fake, rng):
    column = make_column()
    m = DeviceArray(pointer(rng), (4, 3), strides=(24, 8))
    with jitkern.graph.capture() as g:
        column[1, 64](m, DeviceArray(pointer(rng)), 0)
    with pytest.raises(KernelArgumentError, match=r"column#0: argument 0 \(m\).*2d.*got "
                                                  r"array\(float64, 3d"):
        g.update(column, m=DeviceArray(pointer(rng), (4, 3, 2), strides=(48, 16, 8)))


@pytest.mark.parametrize("which", ["jit", "raw"])
def test_host_arrays_are_refused(fake, rng, which):
    g, (k, scale), _arrays, _scalars = capture_three(rng)
    target = scale if which == "jit" else (k, 0)
    with pytest.raises(KernelArgumentError, match=r"argument 0 \(x\): a numpy.ndarray lives in "
                                                  r"host memory.*jitkern.asarray"):
        g.update(target, x=np.zeros(64))


def test_raw_kernel_parameter_kinds_and_sizes_are_checked(fake, rng):
    g, (k, scale), (x, _y, _z), _scalars = capture_three(rng)
    with pytest.raises(KernelArgumentError, match=r"axpy#0: argument 2 \(a\): the kernel "
                                                  r"expects a scalar \(double\), got a GPU array"):
        g.update((k, 0), a=x)
    with pytest.raises(KernelArgumentError, match=r"axpy#0: argument 3 \(n\): the kernel "
                                                  r"expects long long \(int64\), got numpy.float32"):
        g.update((k, 0), n=np.float32(3))


def test_argument_names_and_counts_are_checked(fake, rng):
    g, (k, scale), _arrays, _scalars = capture_three(rng)
    with pytest.raises(KernelArgumentError, match=r"axpy#1: no argument named 'b'; its "
                                                  r"arguments are x, y, a, n"):
        g.update((k, 1), b=1.0)
    with pytest.raises(KernelArgumentError, match=r"scale#0: the kernel takes 4 argument\(s\) "
                                                  r"\(x, out, c, n\), but 2 were given"):
        g.update(scale, 1.0, 2)
    with pytest.raises(KernelArgumentError, match="by position or some by name, not both"):
        g.update(scale, 1.0, 2, 3.0, 4, c=1.0)
    with pytest.raises(JitkernTypeError, match="scale#0: nothing to update"):
        g.update(scale)


def test_nodes_are_named_or_the_lookup_is_refused(fake, rng):
    g, (k, _scale), _arrays, _scalars = capture_three(rng)
    column = make_column()
    with pytest.raises(JitkernValueError, match=r"axpy has 2 kernel nodes in this graph "
                                                r"\(axpy#0, axpy#1\); say which"):
        g.update(k, a=1.0)
    with pytest.raises(JitkernIndexError, match="axpy has 2 kernel node.*index 2 is out of range"):
        g.node(k, 2)
    with pytest.raises(JitkernValueError, match=r"column has no kernel node in this graph "
                                                r"\(its kernel nodes: axpy#0, scale#0, axpy#1\)"):
        g.update(column, k=1)
    other, (_k2, scale2), _arrays2, _scalars2 = capture_three(rng)
    with pytest.raises(JitkernValueError, match="scale#0 belongs to another graph"):
        g.update(other.node(scale2), n=3)


def test_launch_dimensions_are_checked_and_named(fake, rng):
    g, (_k, scale), _arrays, _scalars = capture_three(rng)
    with pytest.raises(LaunchError, match=r"graph node scale#0: block x=2,048 is over CUDA's "
                                          r"limit of 1,024"):
        g.update(scale, block=2048)
    with pytest.raises(KernelArgumentError, match="scale#0: grid: every dimension must be at "
                                                  "least 1"):
        g.update(scale, grid=(0, 1))


def test_a_refused_update_changes_nothing(fake, rng):
    g, (k, scale), (x, y, _z), (a0, _a1, _c) = capture_three(rng)
    with pytest.raises(KernelArgumentError, match=r"argument 3 \(n\)"):
        g.update((k, 0), x=DeviceArray(pointer(rng)), n=np.float32(1))
    n = int(rng.integers(1, 64))
    g.update((k, 0), n=n)
    got = words(fake.node_updates[-1][2], [8, 8, 8, 8])
    assert got[:2] == [x.ptr, y.ptr] and as_double(got[2]) == a0 and got[3] == n
    assert g.node(k, 0).args == {3: n}


def test_a_driver_failure_leaves_the_node_as_it_was(fake, rng):
    g, (k, scale), (x, y, _z), _scalars = capture_three(rng)
    fake.cuGraphExecKernelNodeSetParams = lambda *args: (1,)
    with pytest.raises(CUDAError, match=r"updating graph node axpy#0 \(cuGraphExecKernel"):
        g.update((k, 0), x=DeviceArray(pointer(rng)), grid=7)
    node = g.node(k, 0)
    assert node.args == {} and node.grid == (2, 1, 1)
    assert words_of_node(node) == [x.ptr, y.ptr]


def words_of_node(node):
    """The pointers the node's own parameter copy holds (what the next update starts from)."""
    return [int.from_bytes(node._raw.raw[o:o + 8], "little") for o in node._offsets[:2]]


def test_the_graph_keeps_what_it_was_updated_with(fake, rng):
    g, (k, scale), _arrays, _scalars = capture_three(rng)
    new_x = DeviceArray(pointer(rng))
    alive = weakref.ref(new_x)
    g.update((k, 0), x=new_x)
    del new_x
    gc.collect()
    assert alive() is not None  # the graph holds it: the node's parameters point into it
    g.update((k, 0), x=DeviceArray(pointer(rng)))
    gc.collect()
    assert alive() is None  # replaced: the graph let it go


def test_elementwise_nodes_are_listed_and_refuse_updates(fake, rng):
    ew = jitkern.ElementwiseKernel("float64 x", "float64 y", "y = 2 * x", "graph_twice")
    x, y = DeviceArray(pointer(rng)), DeviceArray(pointer(rng))
    with jitkern.graph.capture() as g:
        ew(x, y)
    (node,) = g.nodes(ew)
    assert node.kernel is ew
    with pytest.raises(JitkernTypeError, match=r"graph node graph_twice#0 cannot be updated in "
                                               r"place: ElementwiseKernel kernels make their "
                                               r"parameters per call.*capture the graph again"):
        g.update(ew, DeviceArray(pointer(rng)), y)


def test_updates_need_the_block_to_have_ended(fake, rng):
    scale = make_scale()
    with jitkern.graph.capture() as g:
        with pytest.raises(StreamCaptureError, match="after the block"):
            g.update(scale, n=1)
        scale[1, 32](DeviceArray(pointer(rng)), DeviceArray(pointer(rng)), 1.0, 32)
    assert [n.label for n in g.nodes()] == ["scale#0"]


def test_stream_end_capture_graphs_update_too(fake, rng):
    scale = make_scale()
    s = jitkern.Stream()
    x, y = DeviceArray(pointer(rng)), DeviceArray(pointer(rng))
    s.begin_capture()
    scale[1, 32, 0, s](x, y, 2.0, 32)
    graph = s.end_capture()
    z = DeviceArray(pointer(rng))
    graph.update(scale, out=z)
    assert words(fake.node_updates[-1][2], [8, 8]) == [x.ptr, z.ptr]


def test_a_bound_launch_names_its_node(fake, rng):
    scale = make_scale()
    x, y = DeviceArray(pointer(rng)), DeviceArray(pointer(rng))
    bound = scale.bind(1, 32, x, y, 2.0, 32)
    with jitkern.graph.capture() as g:
        bound()
    (node,) = g.nodes(bound)
    assert g.node(bound) is node and node.kernel is scale
    c = float(rng.standard_normal())
    g.update(bound, c=c)
    assert as_double(words(fake.node_updates[-1][2], [8, 8, 8])[2]) == c


# -- the hot path: a node updated again the way it was before (graphnodes._repack) --------


def test_repeated_updates_set_each_new_value(fake, rng):
    g, (k, scale), (x, _y, _z), _scalars = capture_three(rng)
    node = g.node(scale)
    for _ in range(4):  # the first update makes the packers; the others reuse them
        new_x, new_out = DeviceArray(pointer(rng)), DeviceArray(pointer(rng))
        c, n = float(rng.standard_normal()), int(rng.integers(1, 1 << 40))
        g.update(node, new_x, new_out, c, n)
        got = words(fake.node_updates[-1][2], [8, 8, 8, 8])
        assert got[:2] == [new_x.ptr, new_out.ptr] and as_double(got[2]) == c and got[3] == n
        a = float(rng.standard_normal())
        g.update((k, 1), a=a)
        assert as_double(words(fake.node_updates[-1][2], [8] * 3)[2]) == a
        assert node.args == {0: new_x, 1: new_out, 2: c, 3: n}


def test_repeated_updates_move_a_jit_arrays_shape_and_strides(fake, rng):
    column = make_column()
    m = DeviceArray(pointer(rng), (3, 2), strides=(16, 8))
    out = DeviceArray(pointer(rng), (3,))
    with jitkern.graph.capture() as g:
        column[1, 64](m, out, 0)
    for _ in range(3):
        rows, cols = (int(v) for v in rng.integers(2, 50, size=2))
        m2 = DeviceArray(pointer(rng), (rows, cols), strides=(cols * 8, 8))
        g.update(column, m=m2, k=cols - 1)
        launch = fake.node_updates[-1][2]
        assert words(launch, [8] * 7) == [m2.ptr, out.ptr, cols - 1, rows, cols, cols * 8, 8]


def test_after_repeated_updates_a_wrong_value_is_still_refused(fake, rng):
    g, (k, scale), _arrays, _scalars = capture_three(rng)
    for _ in range(2):
        g.update(scale, x=DeviceArray(pointer(rng)), c=float(rng.standard_normal()))
        g.update((k, 0), x=DeviceArray(pointer(rng)), n=int(rng.integers(1, 64)))
    before = g.node(scale)._raw.raw
    with pytest.raises(KernelArgumentError, match=r"scale#0: argument 0 \(x\): the node's "
                                                  r"kernel was compiled for array\(float64.*got "
                                                  r"array\(float32"):
        g.update(scale, x=DeviceArray(pointer(rng), typestr="<f4"), c=1.0)
    with pytest.raises(KernelArgumentError, match=r"scale#0: argument 2 \(c\).*compiled for "
                                                  r"float64, got float32"):
        g.update(scale, x=DeviceArray(pointer(rng)), c=np.float32(1))
    assert g.node(scale)._raw.raw == before
    x, n = DeviceArray(pointer(rng)), int(rng.integers(1, 64))
    with pytest.raises(JitkernOverflowError, match=r"graph node axpy#0: argument 3 \(n\): \d+ "
                                                   r"does not fit the kernel's long long"):
        g.update((k, 0), x=x, n=2 ** 70)
    got = words(fake.node_updates[-1][2], [8, 8, 8, 8])
    g.update((k, 0), x=x, n=n)  # the refused update left nothing behind
    assert words(fake.node_updates[-1][2], [8, 8, 8, 8])[0] == x.ptr
    assert words(fake.node_updates[-1][2], [8, 8, 8, 8])[1:] == [got[1], got[2], n]


def test_a_driver_failure_after_repeated_updates_leaves_the_node_as_it_was(fake, rng):
    g, (k, _scale), _arrays, _scalars = capture_three(rng)
    x = DeviceArray(pointer(rng))
    g.update((k, 0), x=DeviceArray(pointer(rng)))
    g.update((k, 0), x=x)
    node = g.node(k, 0)
    before = node._raw.raw
    fake.cuGraphExecKernelNodeSetParams = lambda *args: (1,)
    with pytest.raises(CUDAError, match=r"updating graph node axpy#0 \(cuGraphExecKernel"):
        g.update(node, x=DeviceArray(pointer(rng)))
    assert node.args == {0: x} and node._raw.raw == before


# -- several nodes in one call --------------------------------------------------------------


def test_update_many_updates_each_node_by_position_or_by_name(fake, rng):
    g, (k, scale), (x, y, z), (_a0, a1, _c) = capture_three(rng)
    first, second, third = g.nodes()
    for _ in range(3):
        p, q = DeviceArray(pointer(rng)), DeviceArray(pointer(rng))
        a, c = (float(v) for v in rng.standard_normal(2))
        n = int(rng.integers(1, 64))
        fake.node_updates.clear()
        g.update_many([(first, (p, q, a, n)), ((scale, 0), {"c": c}), (third, {"y": p})])
        got = [words(update[2], [8] * 4) for update in fake.node_updates]
        assert [update[1] for update in fake.node_updates] == [int(nd._node) for nd in
                                                              (first, second, third)]
        assert got[0][:2] == [p.ptr, q.ptr] and as_double(got[0][2]) == a and got[0][3] == n
        assert got[1][:2] == [y.ptr, z.ptr] and as_double(got[1][2]) == c
        assert got[2][:2] == [z.ptr, p.ptr] and as_double(got[2][2]) == a1
        assert third.args == {1: p}


def test_update_many_stops_at_a_refused_update(fake, rng):
    g, (k, scale), _arrays, _scalars = capture_three(rng)
    first, second, third = g.nodes()
    p, q = DeviceArray(pointer(rng)), DeviceArray(pointer(rng))
    before = second._raw.raw
    with pytest.raises(KernelArgumentError, match=r"graph node scale#0: argument 2 \(c\).*"
                                                  r"compiled for float64, got float32"):
        g.update_many([(first, {"x": p}), (second, {"x": q, "c": np.float32(2)}),
                       (third, {"x": q})])
    assert first.args == {0: p} and second.args == {} and third.args == {}
    assert second._raw.raw == before
    assert [u[1] for u in fake.node_updates] == [int(first._node)]


def test_update_many_says_what_an_update_is(fake, rng):
    g, (k, scale), _arrays, _scalars = capture_three(rng)
    with pytest.raises(JitkernTypeError, match=r"update_many: each update is a \(node, args\) "
                                               r"pair.*got 'axpy'"):
        g.update_many(["axpy"])
    with pytest.raises(JitkernTypeError, match=r"update_many: graph node scale#0: the arguments "
                                               r"are a tuple \(every one by position\) or a dict "
                                               r"\(some by name\), not float"):
        g.update_many([(scale, 2.0)])
    with pytest.raises(JitkernValueError, match="axpy has 2 kernel nodes"):
        g.update_many([(k, {"a": 1.0})])


def test_a_raw_pointer_of_another_element_type_is_refused_as_a_launch_refuses_it(fake, rng):
    g, (k, _scale), (x, _y, _z), _scalars = capture_three(rng)
    for _ in range(3):  # the first update makes the packer; the later ones take the fast path
        new = DeviceArray(pointer(rng))
        g.update((k, 0), x=new)
        assert words(fake.node_updates[-1][2], [8])[0] == new.ptr
    done = len(fake.node_updates)
    for typestr, name in (("<f4", "float32"), ("<i8", "int64")):
        wrong = DeviceArray(pointer(rng), typestr=typestr)  # the same class, another dtype
        with pytest.raises(KernelArgumentError,
                           match=rf"graph node axpy#0: argument 0 \(x\): .*double.*{name}"):
            g.update((k, 0), x=wrong)
        with pytest.raises(KernelArgumentError, match=rf"axpy: argument 0 \(x\).*{name}"):
            k((2,), (32,), (wrong, x, 1.0, 64))  # what a launch says of the same argument
    assert len(fake.node_updates) == done  # nothing was written for the refused ones
    assert words(fake.node_updates[-1][2], [8])[0] == new.ptr
