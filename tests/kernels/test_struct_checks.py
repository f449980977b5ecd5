"""Issue 20 part 1's loose ends: an array of records given for a pointer to a struct is checked
field by field against the struct the source declares; ``RawKernel.simulate`` checks its
arguments against the C signature as a GPU launch does, with the same errors; ReductionKernel
record scalars given as frozen dataclasses and NamedTuples."""

import dataclasses
import typing

import numpy as np
import pytest

import jitkern
from jitkern.runtime import driver
from jitkern.runtime.fakedriver import FakeDriver

pytest.importorskip("pycparser")  # the simulator's C subset

SOURCE = r"""
struct Particle { float m; int n; double w; };
extern "C" __global__ void advance(Particle* ps, const float* dt, double* out, int count) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count) {
        ps[i].w += ps[i].m * dt[0];
        out[i] = ps[i].w + ps[i].n;
    }
}
extern "C" __global__ void by_value(Particle p, double* out) {
    if (threadIdx.x == 0) out[0] = p.m + p.n + p.w;
}
"""
PARTICLE = np.dtype([("m", "f4"), ("n", "i4"), ("w", "f8")], align=True)


class Records:
    """A device array of records seen only through ``__cuda_array_interface__`` (typestr
    ``|V<size>`` and the record's ``descr``): the fake driver runs nothing."""

    def __init__(self, rng, dtype, n):
        self.ptr, self.n, self.dtype = int(rng.integers(1, 1 << 30)) * 256, n, dtype

    @property
    def __cuda_array_interface__(self):
        return {"data": (self.ptr, False), "shape": (self.n,),
                "typestr": f"|V{self.dtype.itemsize}", "descr": self.dtype.descr,
                "strides": None, "version": 3}


class Floats:
    def __init__(self, rng, n, typestr="<f4"):
        self.ptr, self.n, self.typestr = int(rng.integers(1, 1 << 30)) * 256, n, typestr

    @property
    def __cuda_array_interface__(self):
        return {"data": (self.ptr, False), "shape": (self.n,), "typestr": self.typestr,
                "strides": None, "version": 3}


@pytest.fixture
def fake():
    with driver.use(FakeDriver(cc=(9, 0))) as fake:
        yield fake


WRONG_LAYOUTS = [
    # (dtype, the field the error names, words about it)
    (np.dtype([("m", "f4"), ("n", "f4"), ("w", "f8")], align=True), "'n' (float32", "field n (int"),
    (np.dtype([("m", "f4"), ("w", "f8")], align=True), "'w' (float64 at offset 8)",
     "field n (int at offset 4)"),
    (np.dtype([("w", "f8"), ("m", "f4"), ("n", "i4")], align=True), "'w' (float64 at offset 0)",
     "field m (float"),
    (np.dtype([("m", "f4"), ("n", "i4"), ("w", "f8"), ("extra", "i8")], align=True),
     "'extra'", "not in the struct"),
]


@pytest.mark.parametrize("dtype, names, words", WRONG_LAYOUTS)
def test_an_array_of_records_is_checked_field_by_field(fake, rng, dtype, names, words):
    k = jitkern.RawKernel(SOURCE, "advance")
    n = int(rng.integers(1, 100))
    good = Records(rng, PARTICLE, n)
    for _ in range(3):  # the general path, then the generated launcher
        k((1,), (128,), (good, Floats(rng, 1), Floats(rng, n, "<f8"), n))
    assert fake.launches[-1].words(1) == [good.ptr]
    launched = len(fake.launches)
    with pytest.raises(jitkern.KernelArgumentError) as info:
        k((1,), (128,), (Records(rng, dtype, n), Floats(rng, 1), Floats(rng, n, "<f8"), n))
    message = str(info.value)
    assert message.startswith("advance: argument 0 (ps): the kernel expects Particle*")
    assert "struct Particle (16 bytes)" in message
    assert names in message and words in message, message
    assert len(fake.launches) == launched


def test_records_with_the_struct_layout_under_other_names_launch(fake, rng):
    # the check is C's: each field's offset and type in order (names are not C's business)
    k = jitkern.RawKernel(SOURCE, "advance")
    renamed = np.dtype([("mass", "f4"), ("count", "u4"), ("weight", "f8")], align=True)
    n = int(rng.integers(1, 100))
    ps = Records(rng, renamed, n)
    k((1,), (128,), (ps, Floats(rng, 1), Floats(rng, n, "<f8"), n))
    assert fake.launches[-1].words(1) == [ps.ptr]


def test_a_plain_array_of_the_struct_size_is_refused_by_size_only(fake, rng):
    k = jitkern.RawKernel(SOURCE, "advance")
    with pytest.raises(jitkern.KernelArgumentError) as info:
        k((1,), (128,), (Floats(rng, 8, "<f8"), Floats(rng, 1), Floats(rng, 8, "<f8"), 8))
    assert "argument 0 (ps)" in str(info.value) and "16-byte elements" in str(info.value)


# ---------------------------------------------------------------------------
# RawKernel.simulate checks what a GPU launch checks (the simulator's C subset has no
# structs: those kernels are refused as outside it, as a GPU refuses what does not compile)


PLAIN = r"""
extern "C" __global__ void axpy(const float* x, double* y, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += a * x[i];
}
"""


def _mismatches(rng):
    """(name, simulated args, device args for the fake driver) of launches the C signature
    refuses, each with its own wrong argument."""
    n = int(rng.integers(2, 50))
    a = np.float32(rng.uniform(1, 2))
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n)
    dx, dy = Floats(rng, n), Floats(rng, n, "<f8")
    return [
        ("count", (x, y, a), (dx, dy, a)),
        ("pointer dtype", (y, y, a, n), (dy, dy, a, n)),
        ("scalar kind", (x, y, a, float(n)), (dx, dy, a, float(n))),
        ("scalar width", (x, y, np.float64(a), n), (dx, dy, np.float64(a), n)),
        ("int range", (x, y, a, 2**40 + n), (dx, dy, a, 2**40 + n)),
        ("scalar for a pointer", (x, a, a, n), (dx, a, a, n)),
        ("array for a scalar", (x, y, x, n), (dx, dy, dx, n)),
    ]


def _error(fn):
    with pytest.raises((jitkern.KernelArgumentError, jitkern.JitkernOverflowError)) as info:
        fn()
    return info.value


def test_simulate_refuses_what_a_gpu_launch_refuses_with_the_same_error(fake, rng):
    k = jitkern.RawKernel(PLAIN, "axpy")
    for name, host_args, device_args in _mismatches(rng):
        on_gpu = _error(lambda: k((1,), (64,), device_args))
        simulated = _error(lambda: k.simulate((1,), (64,), host_args))
        assert type(simulated) is type(on_gpu), name
        head = str(on_gpu).split(", got")[0]
        assert head.startswith("axpy") and str(simulated).startswith(head), (
            name, str(simulated), str(on_gpu))
    assert fake.launches == []


def test_simulate_checks_a_plain_kernel_and_runs_what_passes(rng):
    k = jitkern.RawKernel(PLAIN, "axpy")
    n = int(rng.integers(2, 40))
    x, y0 = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n)
    with pytest.raises(jitkern.KernelArgumentError) as info:
        k.simulate((1,), (64,), (x.astype(np.float64), y0.copy(), np.float32(2), n))
    assert "argument 0 (x)" in str(info.value) and "const float*" in str(info.value)
    with pytest.raises(jitkern.JitkernOverflowError) as info:
        k.simulate((1,), (64,), (x, y0.copy(), np.float32(2), 2**31 + n))
    assert "argument 3 (n)" in str(info.value) and str(2**31 + n) in str(info.value)
    a, y = np.float32(rng.uniform(1, 2)), y0.copy()
    k.simulate((1,), (64,), (x, y, a, n))
    np.testing.assert_allclose(y, y0 + np.float64(np.float32(a * x)), rtol=1e-6)


def test_check_args_false_leaves_simulate_unchecked_as_on_the_gpu(rng):
    k = jitkern.RawKernel(PLAIN, "axpy", check_args=False)
    n = int(rng.integers(2, 20))
    x, y0 = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n)
    y = y0.copy()
    with pytest.raises(jitkern.KernelArgumentError) as info:
        jitkern.RawKernel(PLAIN, "axpy").simulate((1,), (32,), (x, y, np.float64(2), n))
    assert "argument 2 (a)" in str(info.value) and "numpy.float64" in str(info.value)
    k.simulate((1,), (32,), (x, y, np.float64(2), n))  # a double for a float: unchecked
    np.testing.assert_allclose(y, y0 + 2 * x.astype(np.float64), rtol=1e-6)


# ---------------------------------------------------------------------------
# ReductionKernel record scalars given as struct classes


@dataclasses.dataclass(frozen=True)
class Window:
    lo: np.float32
    hi: np.float32
    weight: np.float64


class WindowTuple(typing.NamedTuple):
    lo: np.float32
    hi: np.float32
    weight: np.float64


windowed_sum = jitkern.ReductionKernel(
    "T x, W w", "float64 y", "(x >= w.lo && x < w.hi) ? w.weight * x : 0.0", "a + b", "y = a",
    "0", "windowed_sum")


@pytest.mark.parametrize("cls", [Window, WindowTuple])
def test_a_reduction_takes_a_struct_class_for_a_record_scalar(launch, rng, cls):
    n = launch.pick(gpu=100_000, sim=300)
    host = rng.standard_normal(n).astype(np.float32)
    x = launch.to_device(host)
    for _ in range(3):  # the general path, then the generated launcher
        lo = np.float32(rng.uniform(-1.5, 0))
        w = cls(lo, np.float32(lo + rng.uniform(0.5, 2)), np.float64(rng.uniform(0.5, 3)))
        got = launch(windowed_sum)(x, w)
        inside = (host >= w.lo) & (host < w.hi)
        want = np.sum(np.where(inside, w.weight * host.astype(np.float64), 0.0))
        np.testing.assert_allclose(float(launch.get(got)), want, rtol=1e-9, atol=1e-9)
