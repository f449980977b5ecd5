"""Structs by value at launch (issue 20 part 1): what each launch of a RawKernel, a
``@rawkernel`` and an ElementwiseKernel writes for a record argument, read from the fake
driver's recorded parameters. The generated launchers read a ``numpy.void`` through a view
of its memory while the same record comes back, and a dataclass through one precompiled
``struct`` format: a record changed between launches must be launched as it is now, and a
dataclass's fields converted as NumPy converts them."""

import dataclasses
import typing

import numpy as np
import pytest

import jitkern
from jitkern import jit
from jitkern.runtime import driver
from jitkern.runtime.codegen import launch_source
from jitkern.runtime.fakedriver import FakeDriver

PARAMS = np.dtype([("dt", "f4"), ("n", "i4"), ("w", "f8"), ("g", [("gx", "f4"), ("gy", "f4")])],
                  align=True)
SOURCE = r"""
struct Vec2 { float gx; float gy; };
struct Params { float dt; int n; double w; Vec2 g; };
extern "C" __global__ void by_struct(float* x, Params p) {
    if (threadIdx.x < p.n) x[threadIdx.x] = p.dt * p.w + p.g.gx * p.g.gy;
}
"""


class DevArray:
    """A float32 device array stand-in (``__cuda_array_interface__``): the fake driver runs
    nothing, so a test reads what each launch was given."""

    def __init__(self, rng, n=32, typestr="<f4"):
        self.ptr, self.n, self.typestr = int(rng.integers(1, 1 << 30)) * 256, n, typestr

    @property
    def __cuda_array_interface__(self):
        return {"data": (self.ptr, False), "shape": (self.n,), "typestr": self.typestr,
                "strides": None, "version": 3}


def random_records(rng, count, dtype=PARAMS):
    recs = np.zeros(count, dtype)
    recs["dt"] = rng.standard_normal(count)
    recs["n"] = rng.integers(-1000, 1000, count)
    recs["w"] = rng.standard_normal(count)
    recs["g"]["gx"] = rng.standard_normal(count)
    recs["g"]["gy"] = rng.standard_normal(count)
    return recs


def refill(rng, recs, j):
    """New random values in record ``j`` of ``recs``, written through the array."""
    recs[j] = random_records(rng, 1, recs.dtype)[0]


def launched_record(fake, index, dtype):
    return np.frombuffer(fake.launches[-1].raw(index, dtype.itemsize), dtype)[0]


def assert_same_record(got, want):
    assert got.tobytes() == want.tobytes(), f"launched {got}, the record is {want}"


@pytest.fixture
def fake():
    with driver.use(FakeDriver(cc=(9, 0))) as fake:
        yield fake


def test_raw_kernel_launches_a_record_as_it_is_after_a_change(fake, rng):
    k = jitkern.RawKernel(SOURCE, "by_struct")
    x, recs = DevArray(rng), random_records(rng, 4)
    j = int(rng.integers(0, 4))
    rec = recs[j]  # a view of the array's record j
    for launch in range(6):
        k((1,), (32,), (x, rec))
        assert_same_record(launched_record(fake, 1, PARAMS), recs[j])
        if launch % 2:
            refill(rng, recs, j)  # through the array
        else:
            rec["dt"], rec["g"] = rng.standard_normal(), tuple(rng.standard_normal(2))
    assert launch_source(k) is not None  # the later launches ran the generated launcher


def test_raw_kernel_launches_each_of_several_records(fake, rng):
    k = jitkern.RawKernel(SOURCE, "by_struct")
    x, recs = DevArray(rng), random_records(rng, 5)
    order = list(rng.integers(0, 5, 12)) + [0, 0, 1, 1, 0, 1]
    for j in order:
        k((1,), (32,), (x, recs[j]))  # a new numpy.void each launch
        assert_same_record(launched_record(fake, 1, PARAMS), recs[j])
    kept = [recs[0], recs[1]]
    for j in [0, 0, 1, 0, 1, 1]:
        k((1,), (32,), (x, kept[j]))  # the same two objects, alternating
        assert_same_record(launched_record(fake, 1, PARAMS), recs[j])
        refill(rng, recs, j)


def test_raw_kernel_refuses_a_record_of_another_layout_after_a_launcher_exists(fake, rng):
    k = jitkern.RawKernel(SOURCE, "by_struct")
    x, recs = DevArray(rng), random_records(rng, 2)
    for _ in range(3):
        k((1,), (32,), (x, recs[0]))
    other = np.dtype([("dt", "f4"), ("n", "f4"), ("w", "f8"),
                      ("g", [("gx", "f4"), ("gy", "f4")])], align=True)  # same size
    wrong = np.zeros(1, other)[0]
    with pytest.raises(jitkern.KernelArgumentError) as info:
        k((1,), (32,), (x, wrong))
    message = str(info.value)
    assert "by_struct" in message and "argument 1 (p)" in message
    assert "'n' (float32" in message and "field n (int" in message
    k((1,), (32,), (x, recs[1]))  # the right layout still launches, as it is
    assert_same_record(launched_record(fake, 1, PARAMS), recs[1])


def test_raw_kernel_launches_a_size_one_structured_array_as_it_is(fake, rng):
    k = jitkern.RawKernel(SOURCE, "by_struct")
    x, recs = DevArray(rng), random_records(rng, 3)
    one = recs[1:2]
    for _ in range(4):
        k((1,), (32,), (x, one))
        assert_same_record(launched_record(fake, 1, PARAMS), recs[1])
        refill(rng, recs, 1)
    with pytest.raises(jitkern.KernelArgumentError) as info:
        k((1,), (32,), (x, recs[:2]))  # two records: a host array, not one struct
    assert "argument 1 (p)" in str(info.value) and "host memory" in str(info.value)


@jit.rawkernel()
def jit_by_struct(x, p):
    i = jit.threadIdx.x
    if i < p.n:
        x[i] = p.dt * p.w + p.g.gx * p.g.gy


def test_jit_kernel_launches_a_record_as_it_is_after_a_change(fake, rng):
    recs = random_records(rng, 3)
    x = DevArray(rng)
    rec = recs[2]
    for launch in range(6):
        jit_by_struct[1, 32](x, rec)
        assert_same_record(launched_record(fake, 1, PARAMS), recs[2])
        if launch % 2:
            refill(rng, recs, 2)
        else:
            rec["w"], rec["n"] = rng.standard_normal(), rng.integers(-99, 99)
    # a record of another dtype is another struct: the kernel is made again for it
    wider = np.dtype([("dt", "f8"), ("n", "i4"), ("w", "f8"),
                      ("g", [("gx", "f4"), ("gy", "f4")])], align=True)
    other = random_records(rng, 1, wider)
    jit_by_struct[1, 32](x, other[0])
    assert_same_record(launched_record(fake, 1, wider), other[0])


def test_a_record_changed_between_launches_runs_as_it_is(launch, rng):
    recs = random_records(rng, 2)
    rec = recs[1]
    for _ in range(4):
        n = int(rng.integers(1, 33))
        recs["n"][1] = n
        out = launch.poisoned(32, np.float32)
        launch(jit_by_struct)[1, 32](out, rec)
        launch.synchronize()
        r = recs[1]
        want = np.float64(r["dt"]) * r["w"] + np.float64(r["g"]["gx"] * r["g"]["gy"])
        got = launch.get(out)
        np.testing.assert_allclose(got[:n], np.full(n, want, np.float32), rtol=1e-6)
        assert np.isnan(got[n:]).all()
        refill(rng, recs, 1)


# ---------------------------------------------------------------------------
# ElementwiseKernel record scalars: numpy.void, and dataclasses through their packer


@dataclasses.dataclass(frozen=True)
class Inner:
    h: np.float16
    c: np.complex64


@dataclasses.dataclass(frozen=True)
class Mixed:
    flag: bool
    small: np.int8
    k: np.int32
    f: np.float32
    inner: Inner
    d: float


class MixedTuple(typing.NamedTuple):
    flag: bool
    small: np.int8
    k: np.int32
    f: np.float32
    inner: Inner
    d: float


# C's layout of Mixed (complex<float> aligned to its 8 bytes), as the kernel's struct
MIXED = np.dtype({"names": ["flag", "small", "k", "f", "inner", "d"],
                  "formats": ["?", "i1", "i4", "f4",
                              np.dtype({"names": ["h", "c"], "formats": ["f2", "c8"],
                                        "offsets": [0, 8], "itemsize": 16}), "f8"],
                  "offsets": [0, 1, 4, 8, 16, 32], "itemsize": 40})

# A kernel object per test: a kernel keeps the launcher its first driver made, so one shared
# by tests that each fake their own driver would launch through an earlier test's fake.


def new_mixed_kernel():
    return jitkern.ElementwiseKernel("float64 x, M m", "float64 y", "y = x * m.d + m.k;",
                                     name="record_bytes_mixed")


def new_void_kernel():
    return jitkern.ElementwiseKernel("float32 x, P p", "float32 y", "y = x * p.dt + p.n;",
                                     name="record_bytes_void")


def random_mixed(rng, cls=Mixed):
    inner = Inner(np.float16(rng.standard_normal()),
                  np.complex64(complex(*rng.standard_normal(2))))
    return cls(bool(rng.integers(0, 2)), np.int8(rng.integers(-128, 128)),
               np.int32(rng.integers(-2**31, 2**31)), np.float32(rng.standard_normal()),
               inner, float(rng.standard_normal()))


def numpy_record(value):
    """What NumPy makes of ``value``'s fields in the record (the reference conversion)."""
    inner = value.inner
    return np.array((value.flag, value.small, value.k, value.f, (inner.h, inner.c), value.d),
                    MIXED)[()]


def assert_same_fields(got, want):
    for name in ("flag", "small", "k", "f", "d"):
        assert got[name] == want[name], (name, got, want)
    assert got["inner"]["h"] == want["inner"]["h"] and got["inner"]["c"] == want["inner"]["c"]


@pytest.mark.parametrize("cls", [Mixed, MixedTuple])
def test_elementwise_packs_each_struct_instance_as_numpy_converts_it(fake, rng, cls):
    mixed_kernel = new_mixed_kernel()
    n = int(rng.integers(8, 64))
    xs, ys = DevArray(rng, n, "<f8"), DevArray(rng, n, "<f8")
    for _ in range(5):  # the general path, then the generated launcher
        m = random_mixed(rng, cls)
        mixed_kernel(xs, m, ys)
        assert_same_fields(launched_record(fake, 1, MIXED), numpy_record(m))


def test_elementwise_converts_a_field_struct_cannot_pack_as_numpy_does(fake, rng):
    mixed_kernel = new_mixed_kernel()
    xs, ys = DevArray(rng, 16, "<f8"), DevArray(rng, 16, "<f8")
    for _ in range(3):
        mixed_kernel(xs, random_mixed(rng), ys)
    base = random_mixed(rng)
    for k in (float(rng.uniform(-1e6, 1e6)), np.float32(rng.uniform(-1e3, 1e3))):
        m = dataclasses.replace(base, k=k)  # a float in the int32 field: NumPy truncates it
        mixed_kernel(xs, m, ys)
        got = launched_record(fake, 1, MIXED)
        assert got["k"] == int(k) and got["k"] == numpy_record(m)["k"]
    huge = dataclasses.replace(base, k=2**40)
    with pytest.raises(jitkern.JitkernTypeError) as info:
        mixed_kernel(xs, huge, ys)
    message = str(info.value)
    assert "record_bytes_mixed" in message and "argument 1" in message
    assert "1099511627776" in message and "int32" in message


def test_elementwise_launches_a_record_as_it_is_after_a_change(fake, rng):
    void_kernel = new_void_kernel()
    recs = random_records(rng, 3)
    xs, ys = DevArray(rng, 16), DevArray(rng, 16)
    rec = recs[0]
    for launch in range(6):
        void_kernel(xs, rec, ys)
        assert_same_record(launched_record(fake, 1, PARAMS), recs[0])
        if launch % 2:
            refill(rng, recs, 0)
        else:
            rec["dt"] = rng.standard_normal()
    for j in list(rng.integers(0, 3, 6)):
        void_kernel(xs, recs[j], ys)
        assert_same_record(launched_record(fake, 1, PARAMS), recs[j])


@pytest.mark.gpu
def test_gpu_raw_kernel_runs_each_record_as_it_is(rng):
    k = jitkern.RawKernel(SOURCE, "by_struct")
    recs = random_records(rng, 2)
    rec = recs[0]
    for _ in range(4):
        n = int(rng.integers(1, 33))
        recs["n"][0] = n
        x = jitkern.full(32, np.nan, np.float32)
        k((1,), (32,), (x, rec))
        r = recs[0]
        want = np.float64(r["dt"]) * r["w"] + np.float64(r["g"]["gx"] * r["g"]["gy"])
        got = x.get()
        np.testing.assert_allclose(got[:n], np.full(n, want, np.float32), rtol=1e-6)
        assert np.isnan(got[n:]).all()
        refill(rng, recs, 0)


@pytest.mark.gpu
def test_gpu_elementwise_dataclass_record_matches_numpy(rng):
    mixed_kernel = new_mixed_kernel()
    n = int(rng.integers(1000, 5000))
    host = rng.standard_normal(n)
    x = jitkern.asarray(host)
    for k in (np.int32(rng.integers(-99, 99)), float(rng.uniform(-99, 99))):
        m = dataclasses.replace(random_mixed(rng), k=k)  # a float: converted as NumPy does
        y = jitkern.full(n, np.nan, np.float64)
        mixed_kernel(x, m, y)
        np.testing.assert_allclose(y.get(), host * m.d + int(k), rtol=1e-12)
