"""JIT kernels read arrays of records from other libraries (issue 20 part 1, a gap of the first
landing): a ``__cuda_array_interface__`` with a void typestr takes its record from ``descr``,
and a CuPy array carries its structured dtype. Without a GPU the launches go through the
fake driver (driver.use); the GPU test reads jitkern arrays of records through a CAI-only
wrapper and compares with NumPy."""

import ast
import types

import numpy as np
import pytest

import jitkern
from jitkern import jit
from jitkern.errors import KernelArgumentError
from jitkern.runtime import driver
from jitkern.runtime.fakedriver import FakeDriver

PARTICLE = np.dtype([("x", "f4"), ("y", "f4"), ("mass", "f8")], align=True)
SWAPPED = np.dtype([("mass", "f8"), ("x", "f4"), ("y", "f4")], align=True)  # same size
PADDED = np.dtype([("mass", "f8"), ("tag", "i1")], align=True)  # 7 bytes of padding


@jit.rawkernel()
def weigh(p, out):
    i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    if i < out.size:
        out[i] = p[i].mass * p[i].x


@jit.rawkernel()
def tagged(p, out):
    i = jit.threadIdx.x
    out[i] = p[i].mass + p[i].tag


class CaiArray:
    """Only a ``__cuda_array_interface__`` (version 3, with ``descr``), at a random address
    or over another array's."""

    def __init__(self, ptr, n, typestr, descr):
        self.ptr, self.n, self.typestr, self.descr = ptr, n, typestr, descr

    @classmethod
    def of(cls, rng, dtype, n=8):
        dtype = np.dtype(dtype)
        return cls(int(rng.integers(1, 1 << 30)) * 256, n, dtype.str, dtype.descr)

    @property
    def __cuda_array_interface__(self):
        return {"data": (self.ptr, False), "shape": (self.n,), "typestr": self.typestr,
                "descr": self.descr, "strides": None, "version": 3}


class CupyLike:
    """Reads like a cupy.ndarray of a structured dtype (the table's "cupy" row)."""

    __cuda_array_interface__ = None  # on the class, as CuPy's

    def __init__(self, rng, dtype, n=8):
        self.dtype, self.shape, self.ndim, self.size = np.dtype(dtype), (n,), 1, n
        self.itemsize = self.dtype.itemsize
        self.strides, self._c_contiguous = (self.dtype.itemsize,), True
        self.data = types.SimpleNamespace(ptr=int(rng.integers(1, 1 << 30)) * 256, device_id=0)
        self.device = types.SimpleNamespace(id=0)


CupyLike.__module__ = "cupy._core.core"


@pytest.fixture
def fake():
    with driver.use(FakeDriver(cc=(9, 0))) as d:
        for k in (weigh, tagged, weigh_rows):
            k._entries.clear()
            k.cached_codes.clear()
        yield d
        for k in (weigh, tagged, weigh_rows):
            k._entries.clear()
            k.cached_codes.clear()
            k._set_call(k._launch)


def record_of(kernel, *args) -> np.dtype:
    """The record dtype the generated source says the kernel reads (its comment)."""
    source = kernel.emit(*args)
    line = next(x for x in source.splitlines() if x.startswith("// numpy dtype "))
    return np.dtype(ast.literal_eval(line[len("// numpy dtype "):]))


def test_a_cai_array_of_records_is_read_by_its_descr(fake, rng):
    n = int(rng.integers(8, 64))
    a, b = CaiArray.of(rng, PARTICLE, n), CaiArray.of(rng, SWAPPED, n)
    out = CaiArray.of(rng, np.float64, n)
    assert a.typestr == b.typestr  # '|V16': only the descr tells them apart
    for p in (a, a, a, b, b, a, b):  # general path, generated launcher, and a miss each way
        weigh[1, n](p, out)
        assert fake.launches[-1].words(2) == [p.ptr, out.ptr]
    assert record_of(weigh, a, out) == PARTICLE
    assert record_of(weigh, b, out) == SWAPPED
    handles = [launch.handle for launch in fake.launches]
    assert handles[0] == handles[5] != handles[3] == handles[6]  # A's kernel for A, B's for B
    source = weigh.emit(a, out)
    assert "float x;" in source and "double mass;" in source


@jit.rawkernel()
def weigh_rows(p, out):
    i = jit.threadIdx.x
    for j in range(p.shape[1]):
        out[i] += p[i, j].mass


class Cai2D(CaiArray):
    @property
    def __cuda_array_interface__(self):
        return {**super().__cuda_array_interface__, "shape": (self.n, 3)}


def test_a_2d_cai_array_of_records_takes_its_guard_per_descr(fake, rng):
    a = Cai2D(int(rng.integers(1, 1 << 30)) * 256, 4, PARTICLE.str, PARTICLE.descr)
    b = Cai2D(int(rng.integers(1, 1 << 30)) * 256, 4, SWAPPED.str, SWAPPED.descr)
    out = CaiArray.of(rng, np.float64, 4)
    for p in (a, a, a, b, b, a):
        weigh_rows[1, 4](p, out)
        assert fake.launches[-1].words(1) == [p.ptr]
    handles = [launch.handle for launch in fake.launches]
    assert handles[0] == handles[2] == handles[5] != handles[3] == handles[4]
    assert record_of(weigh_rows, b, out) == SWAPPED


def test_padding_in_the_descr_reaches_the_record(fake, rng):
    p, out = CaiArray.of(rng, PADDED, 8), CaiArray.of(rng, np.float64, 8)
    assert p.descr[-1] == ("", "|V7")
    tagged[1, 8](p, out)
    assert fake.launches[-1].words(2) == [p.ptr, out.ptr]
    assert record_of(tagged, p, out) == PADDED
    assert "sizeof(" in tagged.emit(p, out) and "== 16," in tagged.emit(p, out)


def test_a_cupy_array_of_records_carries_its_dtype(fake, rng):
    p, out = CupyLike(rng, SWAPPED), CaiArray.of(rng, np.float64, 8)
    for _ in range(2):
        weigh[1, 8](p, out)
        assert fake.launches[-1].words(1) == [p.data.ptr]
    assert record_of(weigh, p, out) == SWAPPED


@pytest.mark.parametrize("typestr, descr, words", [
    ("|V16", None, "needs a 'descr'"),
    ("|V16", [("", "|V16")], "needs a 'descr'"),
    ("|V16", [("mass", "<f8"), ("", "<f8")], "unnamed entry is padding"),
    ("|V16", [("mass", "<f8"), ("x", "<f4")], "records of 12 bytes"),
    ("|V16", [("mass", "<f8"), ("x", "<q9")], "is not a record dtype"),
])
def test_a_descr_jitkern_cannot_lay_out_is_refused_naming_the_argument(fake, rng, typestr,
                                                                       descr, words):
    p = CaiArray(int(rng.integers(1, 1 << 30)) * 256, 8, typestr, descr)
    out = CaiArray.of(rng, np.float64, 8)
    with pytest.raises(KernelArgumentError) as info:
        weigh[1, 8](p, out)
    message = str(info.value)
    assert "weigh() argument 'p'" in message and words in message, message
    assert fake.launches == []


def test_a_packed_descr_is_refused_as_a_packed_numpy_dtype_is(fake, rng):
    p = CaiArray(int(rng.integers(1, 1 << 30)) * 256, 8, "|V9", [("tag", "|i1"), ("mass", "<f8")])
    with pytest.raises(jitkern.JitkernError, match=r"'mass' is at offset 1.*align=True"):
        tagged[1, 8](p, CaiArray.of(rng, np.float64, 8))
    assert fake.launches == []


def test_elementwise_kernels_read_cai_records_by_their_descr_too(fake, rng):
    k = jitkern.ElementwiseKernel("T p", "float64 y", "y = p.mass * p.x", "cai_records")
    n = int(rng.integers(8, 64))
    a, b = CaiArray.of(rng, PARTICLE, n), CaiArray.of(rng, SWAPPED, n)
    out = CaiArray.of(rng, np.float64, n)
    for p in (a, a, a, b, b, a, b):  # the generated launcher's guard compares the descr
        k(p, out)
        assert fake.launches[-1].words(2) == [p.ptr, out.ptr]
    handles = [launch.handle for launch in fake.launches]
    assert handles[0] == handles[1] == handles[5] != handles[3] == handles[4] == handles[6]
    assert "double mass;" in k.inspect(a, out, arch="sm_90").source


class CaiView:
    """A GPU array seen only through its ``__cuda_array_interface__`` (as Numba's or
    another library's arrays are)."""

    def __init__(self, array):
        self._array = array

    @property
    def __cuda_array_interface__(self):
        return self._array.__cuda_array_interface__


@pytest.mark.gpu
def test_cai_records_on_the_gpu(rng):
    n = int(rng.integers(1000, 5000))
    host = np.zeros(n, SWAPPED)
    host["mass"], host["x"], host["y"] = rng.uniform(1, 2, n), rng.standard_normal(n), 0
    out = jitkern.full(n, np.nan, np.float64)
    for _ in range(2):
        weigh[(n + 127) // 128, 128](CaiView(jitkern.asarray(host)), CaiView(out))
        want = host["mass"] * host["x"].astype(np.float64)
        np.testing.assert_allclose(out.get(), want, rtol=1e-12)
        out.fill(np.nan)
