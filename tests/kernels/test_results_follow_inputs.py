"""Results follow the inputs (issue 17 part 4), without a GPU: kernels that allocate their
outputs make them through the allocator of their arguments' library.

The CUDA driver is the fake (``driver.use``), the kernels compile with NVRTC, and CuPy and
PyTorch are stand-ins put in ``sys.modules`` for the test: array classes that read like
theirs (the attributes jitkern's argument table reads) and modules whose ``empty`` records
each allocation. The launches' packed pointers say which memory each kernel wrote."""

import sys
import types

import numpy as np
import pytest

import jitkern
from jitkern.runtime import driver
from jitkern.runtime.fakedriver import FakeDriver


class CountingDriver(FakeDriver):
    """The fake driver, counting jitkern's own pool allocations."""

    def __init__(self):
        super().__init__()
        self.pool_allocs = 0

    def cuMemAllocFromPoolAsync(self, size, pool, stream):  # noqa: N802 - the driver's name
        self.pool_allocs += 1
        return super().cuMemAllocFromPoolAsync(size, pool, stream)

    def cuMemsetD32Async(self, ptr, value, count, stream):  # noqa: N802 - jitkern.full's fill
        return (0,)

    cuMemsetD8Async = cuMemsetD16Async = cuMemsetD32Async


def nan_array(shape):
    """A jitkern array of NaNs (what a kernel that wrote nothing would leave)."""
    return jitkern.full(shape, np.nan, np.float32)


def _c_strides(shape, itemsize):
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


class CupyLike:
    """Reads like a cupy.ndarray: data.ptr, device.id and its plain-slot layout."""

    __cuda_array_interface__ = None  # on the class, as CuPy's: the table's "cupy" row

    def __init__(self, shape, dtype, ptr):
        self.dtype, self.shape = np.dtype(dtype), tuple(shape)
        self.ndim, self.size = len(self.shape), int(np.prod(self.shape, dtype=np.int64))
        self.strides, self._c_contiguous = _c_strides(self.shape, self.dtype.itemsize), True
        self.data = types.SimpleNamespace(ptr=ptr, device_id=0)
        self.device = types.SimpleNamespace(id=0)


CupyLike.__module__ = "cupy._core.core"


class FakeCupy(types.ModuleType):
    """``cupy``: ``empty`` hands out arrays at fresh addresses and records (shape, dtype, the
    current stream); ``cuda`` has the stream and device pieces jitkern uses."""

    def __init__(self):
        super().__init__("cupy")
        self.made, self.streams, self.next = [], [0], 1 << 40
        outer = self

        class Entered:
            def __init__(self, handle):
                self.ptr = handle

            def __enter__(self):
                outer.streams.append(self.ptr)

            def __exit__(self, *exc):
                outer.streams.pop()

        class Device:
            def __init__(self, device_id):
                self.id = device_id

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return None

        stream = types.SimpleNamespace(from_external=lambda s: Entered(s.__cuda_stream__()[1]))
        self.cuda = types.SimpleNamespace(
            Device=Device, Stream=stream,
            get_current_stream=lambda: types.SimpleNamespace(ptr=outer.streams[-1]))

    def empty(self, shape, dtype):
        self.next += 1 << 20
        self.made.append((tuple(shape), np.dtype(dtype), self.streams[-1]))
        return CupyLike(shape, dtype, self.next)

    ndarray = empty  # cupy.ndarray(shape, dtype) allocates from the pool as empty() does


class TorchDtype:
    def __init__(self, name):
        self.name, self.itemsize = name, np.dtype(name).itemsize if name != "bfloat16" else 2

    def __repr__(self):
        return f"torch.{self.name}"


# torch has no uint16 in this stand-in (older PyTorch): such results stay jitkern arrays
_TORCH_NAMES = ("bool", "int8", "int16", "int32", "int64", "uint8", "float16", "float32",
                "float64", "complex64", "complex128", "bfloat16")


class TensorLike:
    """Reads like a CUDA torch.Tensor: data_ptr(), is_cuda, stride() in elements."""

    is_cuda = True

    def __init__(self, shape, dtype, ptr):
        self.shape, self.dtype, self._ptr = tuple(shape), dtype, ptr

    def data_ptr(self):
        return self._ptr

    def element_size(self):
        return self.dtype.itemsize

    def stride(self):
        return _c_strides(self.shape, 1)

    def dim(self):
        return len(self.shape)

    def numel(self):
        return int(np.prod(self.shape, dtype=np.int64))

    def is_contiguous(self):
        return True

    def get_device(self):
        return 0


TensorLike.__module__ = "torch"


class FakeTorch(types.ModuleType):
    """``torch``: its dtypes, and ``empty(shape, dtype=, device=)`` recording each call."""

    def __init__(self):
        super().__init__("torch")
        for name in _TORCH_NAMES:
            setattr(self, name, TorchDtype(name))
        self.made, self.next = [], 1 << 41

    def empty(self, *extents, size=None, dtype, device):
        # torch.empty(3, 4, ...), torch.empty((3, 4), ...) and torch.empty(size=(3, 4), ...)
        if size is not None:
            assert not extents, "torch.empty takes the size once"
            shape = tuple(size)
        elif len(extents) == 1 and isinstance(extents[0], tuple):
            shape = tuple(extents[0])
        else:
            shape = extents
        self.next += 1 << 20
        self.made.append((shape, dtype, device))
        return TensorLike(shape, dtype, self.next)


# One stand-in of each for the whole module: jitkern keeps what it read of a library per
# array type, as it does for the real ones.
CUPY, TORCH = FakeCupy(), FakeTorch()


@pytest.fixture
def fake(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", CUPY)
    monkeypatch.setitem(sys.modules, "torch", TORCH)
    CUPY.made.clear()
    TORCH.made.clear()
    with driver.use(CountingDriver()) as fake_driver:
        yield fake_driver


def cupy_array(rng, shape, dtype="float32"):
    return CupyLike(shape, dtype, int(rng.integers(1, 1 << 20)) << 12)


def tensor(rng, shape, dtype="float32"):
    return TensorLike(shape, getattr(TORCH, dtype), int(rng.integers(1, 1 << 20)) << 12)


def launched_pointers(fake_driver):
    """x, y and z of the last axpy launch (parameter 2 is the scalar a)."""
    x, y, _a, z = fake_driver.launches[-1].words(4)
    return [x, y, z]


def axpy():
    return jitkern.ElementwiseKernel("T x, T y, T a", "T z", "z = a * x + y", "follow_axpy")


def test_elementwise_on_cupy_arrays_returns_cupy_arrays_from_cupys_pool(fake, rng):
    n = int(rng.integers(100, 5000))
    k = axpy()
    x, y = cupy_array(rng, (n,)), cupy_array(rng, (n,))
    for call in range(3):  # the general path, then the generated launcher
        z = k(x, y, np.float32(2.0))
        assert type(z) is CupyLike
        assert CUPY.made[-1] == ((n,), np.dtype(np.float32), 0)
        assert launched_pointers(fake) == [x.data.ptr, y.data.ptr, z.data.ptr]
    assert len(CUPY.made) == 3 and fake.pool_allocs == 0  # jitkern's pool is not touched


def test_reduction_on_cupy_arrays_returns_a_cupy_array_of_the_reduced_shape(fake, rng):
    rows, cols = int(rng.integers(2, 40)), int(rng.integers(2, 300))
    dist = jitkern.ReductionKernel("T x", "T y", "x * x", "a + b", "y = a", "0", "follow_sq")
    x = cupy_array(rng, (rows, cols), "float64")
    for _ in range(2):
        r = dist(x, axis=1)
        assert type(r) is CupyLike and r.shape == (rows,)
        assert CUPY.made[-1] == ((rows,), np.dtype(np.float64), 0)
    r = dist(x)  # a full reduction: a 0-d CuPy array, as CuPy's
    assert type(r) is CupyLike and r.shape == () and CUPY.made[-1][0] == ()


def test_torch_tensors_in_give_torch_tensors_out_on_their_device(fake, rng):
    n = int(rng.integers(100, 5000))
    k = axpy()
    x, y = tensor(rng, (n,)), tensor(rng, (n,))
    for _ in range(2):
        z = k(x, y, np.float32(3.0))
        assert type(z) is TensorLike
        assert TORCH.made[-1] == ((n,), TORCH.float32, 0)
        assert launched_pointers(fake) == [x.data_ptr(), y.data_ptr(), z.data_ptr()]
    assert fake.pool_allocs == 0


def test_a_dtype_the_library_lacks_gives_a_jitkern_array(fake, rng):
    n = int(rng.integers(10, 500))
    widen = jitkern.ElementwiseKernel("float32 x", "uint16 y", "y = x", "follow_to_u16")
    y = widen(tensor(rng, (n,)))  # this torch has no uint16
    assert type(y) is jitkern.ndarray and y.dtype == np.uint16 and y.shape == (n,)
    assert TORCH.made == []


def test_jitkern_arrays_give_jitkern_arrays(fake, rng):
    n = int(rng.integers(10, 500))
    x = nan_array((n,))
    z = axpy()(x, x, np.float32(1.0))
    assert type(z) is jitkern.ndarray and z.shape == (n,)
    assert CUPY.made == [] and TORCH.made == []


def iota(name):
    return jitkern.ElementwiseKernel("int32 start", "raw int32 y", "y[i] = start + i", name)


@pytest.mark.parametrize("imported, made", [
    (("cupy", "torch"), CupyLike), (("torch",), TensorLike), ((), jitkern.ndarray)])
def test_no_array_arguments_give_the_programs_library(fake, rng, monkeypatch, imported, made):
    # 'auto': CuPy's arrays where the program imported CuPy, else PyTorch's, else jitkern's
    for name in {"cupy", "torch"} - set(imported):
        monkeypatch.delitem(sys.modules, name)
    n, start = int(rng.integers(10, 500)), int(rng.integers(-100, 100))
    k = iota(f"follow_iota_{len(imported)}")
    for call in range(2):  # the general path, then the generated one
        r = k(start, size=n)
        assert type(r) is made and r.shape == (n,)
        assert fake.launches[-1].words(2)[1] == _pointer(r)
    assert len(CUPY.made) == (2 if made is CupyLike else 0)
    assert len(TORCH.made) == (2 if made is TensorLike else 0)
    assert fake.pool_allocs == (2 if made is jitkern.ndarray else 0)


def _pointer(array):
    return jitkern.arrays.pointer_of(array)


@pytest.mark.parametrize("setting, made", [("jitkern", jitkern.ndarray), ("torch", TensorLike),
                                           ("cupy", CupyLike)])
def test_the_results_setting_decides_and_is_read_per_call(fake, rng, monkeypatch, setting,
                                                          made):
    monkeypatch.setattr(jitkern.config.settings, "results", "auto")
    n = int(rng.integers(10, 500))
    k = iota(f"follow_setting_{setting}")
    assert type(k(0, size=n)) is CupyLike  # auto, with both libraries imported
    jitkern.config.settings.results = setting
    assert type(k(0, size=n)) is made  # the same call layout, after the setting changed


def test_a_bad_results_setting_is_refused():
    with pytest.raises(jitkern.JitkernValueError, match="expected one of 'auto', 'jitkern'"):
        jitkern.config.settings.results = "numpy"
    assert jitkern.config.settings.results in jitkern.config.RESULTS


def test_a_library_that_cannot_be_imported_is_named(fake, rng, monkeypatch):
    monkeypatch.setattr(jitkern.config.settings, "results", "cupy")
    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy raises ImportError
    with pytest.raises(jitkern.JitkernRuntimeError, match="returns cupy arrays.*cannot be "
                                                          "imported"):
        iota("follow_missing")(0, size=int(rng.integers(1, 100)))


@pytest.mark.parametrize("order", ["jitkern first", "cupy first"])
def test_any_cupy_argument_makes_cupy_results(fake, rng, order):
    n = int(rng.integers(10, 500))
    jk, cp, th = nan_array((n,)), cupy_array(rng, (n,)), tensor(rng, (n,))
    args = (jk, cp) if order == "jitkern first" else (cp, jk)
    assert type(axpy()(*args, np.float32(1.0))) is CupyLike
    args = (th, cp) if order == "jitkern first" else (cp, th)
    assert type(axpy()(*args, np.float32(1.0))) is CupyLike  # CuPy over PyTorch
    assert type(axpy()(jk, th, np.float32(1.0))) is TensorLike  # PyTorch over jitkern


def test_outputs_passed_in_are_returned_as_given(fake, rng):
    n = int(rng.integers(10, 500))
    x, out = cupy_array(rng, (n,)), nan_array((n,))
    assert axpy()(x, x, np.float32(1.0), out) is out
    total = jitkern.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "follow_total")
    given = nan_array(())
    assert total(x, out=given) is given
    assert CUPY.made == []


def test_a_given_stream_allocates_on_that_stream(fake, rng):
    n, handle = int(rng.integers(10, 500)), int(rng.integers(1, 1 << 30)) << 4
    k, x = axpy(), cupy_array(rng, (n,))
    stream = jitkern.Stream.from_external(handle)
    for _ in range(2):
        z = k(x, x, np.float32(1.0), stream=stream)
        assert type(z) is CupyLike and CUPY.made[-1][2] == handle
        assert fake.launches[-1].stream == handle
    assert CUPY.streams == [0]  # CuPy's current stream is restored


def test_the_general_path_follows_too_misaligned_and_empty(fake, rng):
    n = int(rng.integers(64, 5000))
    k = axpy()
    x = cupy_array(rng, (n,))
    k(x, x, np.float32(1.0))  # the vectorised layout's launcher
    bent = CupyLike((n,), "float32", x.data.ptr + 4)  # not 16-byte aligned: the general path
    z = k(bent, bent, np.float32(1.0))
    assert type(z) is CupyLike and launched_pointers(fake)[2] == z.data.ptr
    nothing = k(cupy_array(rng, (0,)), cupy_array(rng, (0,)), np.float32(1.0))
    assert type(nothing) is CupyLike and nothing.shape == (0,)


def test_fused_functions_return_the_arguments_library(fake, rng):
    n = int(rng.integers(10, 500))

    @jitkern.fuse()
    def scaled(x, y):
        return x * 2 + y

    @jitkern.fuse()
    def total(x):
        return (x * x).sum()

    x = cupy_array(rng, (n,))
    assert type(scaled(x, x)) is CupyLike and CUPY.made[-1][0] == (n,)
    r = total(x)
    assert type(r) is CupyLike and r.shape == ()
    assert type(scaled(nan_array((n,)), tensor(rng, (n,)))) is TensorLike


def test_jitkern_routines_on_cupy_arrays_return_cupy_arrays(fake, rng):
    rows, cols = int(rng.integers(2, 50)), int(rng.integers(2, 50))
    x = cupy_array(rng, (rows, cols))
    root = jitkern.sqrt(x)
    assert type(root) is CupyLike and root.shape == (rows, cols)
    total = jitkern.sum(x, axis=1)
    assert type(total) is CupyLike and total.shape == (rows,)
    assert [m[0] for m in CUPY.made] == [(rows, cols), (rows,)]
