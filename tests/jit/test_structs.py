"""Structs in @rawkernel kernels (issue 20, part 1): frozen dataclasses, typing.NamedTuples and
numpy.void records passed by value, nested structs, struct locals and arrays of a structured
dtype, against NumPy on fresh random data.

Tests that take ``launch`` run twice: ``[gpu]`` with jitkern arrays (marked gpu) and ``[sim]``
through the simulator with NumPy arrays. The launch-packing tests read the parameter buffer
through the fake driver (driver.use); they compile with NVRTC but need no GPU.
"""

import dataclasses
import typing

import numpy as np
import pytest

import jitkern
from jitkern import jit
from jitkern.errors import JitAttributeError, JitTypeError, KernelArgumentError
from jitkern.runtime import codegen, driver
from jitkern.runtime.fakedriver import FakeDriver


@dataclasses.dataclass(frozen=True)
class Vec2:
    x: np.float32
    y: np.float32


@dataclasses.dataclass(frozen=True)
class Step:
    dt: np.float32
    n: int
    gravity: Vec2


class StepTuple(typing.NamedTuple):
    dt: np.float32
    n: int
    gravity: Vec2


PARTICLE = np.dtype(
    [("x", "f4"), ("y", "f4"), ("vx", "f4"), ("vy", "f4"), ("mass", "f8")], align=True)
STEP = np.dtype([("dt", "f4"), ("n", "i8"), ("gravity", [("x", "f4"), ("y", "f4")])],
                align=True)


@jit.rawkernel()
def advance(particles, p):
    i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    if i < p.n:
        particles[i].vx += p.dt * p.gravity.x
        particles[i].vy += p.dt * p.gravity.y
        particles[i].x += p.dt * particles[i].vx
        particles[i].y += p.dt * particles[i].vy


def random_particles(rng, n):
    host = np.zeros(n, PARTICLE)
    for name in ("x", "y", "vx", "vy"):
        host[name] = rng.standard_normal(n)
    host["mass"] = rng.uniform(1, 2, n)
    return host


def advanced(host, dt, gx, gy, n):
    """NumPy's answer: the first ``n`` particles advanced one step, in float32."""
    out = host.copy()
    dt, gx, gy = np.float32(dt), np.float32(gx), np.float32(gy)
    out["vx"][:n] += dt * gx
    out["vy"][:n] += dt * gy
    out["x"][:n] += dt * out["vx"][:n]
    out["y"][:n] += dt * out["vy"][:n]
    return out


def step_of(kind, dt, n, gx, gy):
    gravity = Vec2(np.float32(gx), np.float32(gy))
    if kind == "dataclass":
        return Step(np.float32(dt), n, gravity)
    if kind == "namedtuple":
        return StepTuple(np.float32(dt), n, gravity)
    value = np.zeros((), STEP)
    value["dt"], value["n"], value["gravity"] = dt, n, (gx, gy)
    return value[()]


@pytest.mark.parametrize("kind", ["dataclass", "namedtuple", "void"])
def test_particles_advance_over_an_array_of_structs(launch, rng, kind):
    size = launch.pick(gpu=100_000, sim=300)
    n = size - int(rng.integers(1, 50))  # the last particles stay as they were
    host = random_particles(rng, size)
    dt, gx, gy = rng.uniform(0.01, 0.1), rng.standard_normal(), rng.standard_normal()
    particles = launch.to_device(host)
    for _ in range(2):  # the second launch takes the generated launcher on the GPU
        launch(advance)[(size + 127) // 128, 128](particles, step_of(kind, dt, n, gx, gy))
        host = advanced(host, dt, gx, gy, n)
    got = launch.get(particles)
    for name in ("x", "y", "vx", "vy"):
        np.testing.assert_allclose(got[name], host[name], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(got["mass"], host["mass"])  # never written


@jit.rawkernel()
def weigh(out, p, s):
    out[0] = p.dt * p.gravity.x + p.gravity.y
    out[1] = p.n + s.mass
    out[2] = s.vx


def test_struct_arguments_of_each_kind_and_nesting(launch, rng):
    dt, gx, gy = (float(v) for v in rng.standard_normal(3))
    n = int(rng.integers(-1000, 1000))
    s = np.zeros((), PARTICLE)
    s["mass"], s["vx"] = rng.standard_normal(), rng.standard_normal()
    want = [np.float32(dt) * np.float32(gx) + np.float32(gy), n + float(s["mass"]),
            float(np.float32(s["vx"]))]
    for kind in ("dataclass", "namedtuple", "void"):
        out = launch.poisoned(3, np.float64)
        launch(weigh)[1, 1](out, step_of(kind, dt, n, gx, gy), s[()])
        np.testing.assert_allclose(launch.get(out), want, rtol=1e-6, atol=1e-5, err_msg=kind)


@jit.rawkernel()
def copy_then_change(particles, out):
    i = jit.threadIdx.x
    q = particles[i]  # a struct local: a copy, as in C
    q.x = q.x * np.float32(2)
    out[i] = q.x + particles[i].x  # 3x: the element itself is unchanged
    r = q
    r.y = np.float32(0)
    particles[i].y = q.y  # q's y is unchanged by the write to r


def test_struct_locals_hold_copies(launch, rng):
    n = 64
    host = random_particles(rng, n)
    particles = launch.to_device(host)
    out = launch.poisoned(n, np.float32)
    launch(copy_then_change)[1, n](particles, out)
    got = launch.get(particles)
    np.testing.assert_allclose(launch.get(out), 3 * host["x"], rtol=1e-6)
    np.testing.assert_array_equal(got["x"], host["x"])
    np.testing.assert_array_equal(got["y"], host["y"])


def test_fields_of_arrays_of_structs_run_vectorised_and_struct_locals_per_thread(rng):
    from jitkern.sim import vector

    host = random_particles(rng, 40)
    dt, gx, gy = rng.uniform(0.01, 0.1), rng.standard_normal(), rng.standard_normal()
    want = advanced(host, dt, gx, gy, 40)
    params = Step(np.float32(dt), 40, Vec2(np.float32(gx), np.float32(gy)))
    for mode in ("vector", "threads"):
        got = host.copy()
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(vector, "MODE", mode)
            advance.simulate[1, 64](got, params)
        assert advance.simulate.last_path == mode
        np.testing.assert_array_equal(got, want)  # the same float32 steps NumPy takes
    out = np.zeros(40, np.float32)
    copy_then_change.simulate[1, 40](host.copy(), out)
    assert copy_then_change.simulate.last_path == "threads"
    assert "struct locals" in copy_then_change.simulate.why_threads


# -- errors ------------------------------------------------------------------------


@jit.rawkernel()
def reads_a_missing_field(out, p):
    out[0] = p.mass


def test_an_unknown_field_is_named_with_its_position(rng):
    p = Step(np.float32(rng.standard_normal()), 3, Vec2(np.float32(1), np.float32(2)))
    with pytest.raises(JitAttributeError) as info:
        reads_a_missing_field.simulate[1, 1](np.zeros(1, np.float32), p)
    assert isinstance(info.value, AttributeError)
    message = str(info.value)
    line = reads_a_missing_field.py_func.__code__.co_firstlineno + 2
    assert f"test_structs.py:{line}:14: struct Step has no field 'mass'" in message
    assert "\n        out[0] = p.mass\n                 ^~~~~~\n" in message  # the caret under p.mass
    assert "its fields: dt, n, gravity" in message


@jit.rawkernel()
def reads_around_a_sub_array(out, records):
    i = jit.threadIdx.x
    out[i] = records[i].a * records[i].b


@jit.rawkernel()
def reads_a_sub_array_field(out, records):
    out[0] = records[0].c


def test_a_sub_array_field_is_laid_out_and_refused_where_read(rng, launch):
    rec = np.dtype([("a", "f4"), ("c", "i2", (3,)), ("b", "f8")], align=True)
    host = np.zeros(16, rec)
    for name in rec.names:
        host[name] = rng.integers(-50, 50, host[name].shape)
    records = launch.to_device(host)
    out = launch.poisoned(16, np.float64)
    launch(reads_around_a_sub_array)[1, 16](out, records)
    np.testing.assert_array_equal(launch.get(out), host["a"].astype(np.float64) * host["b"])
    with pytest.raises(JitTypeError) as info:
        launch(reads_a_sub_array_field)[1, 1](out, records)
    line = reads_a_sub_array_field.py_func.__code__.co_firstlineno + 2
    assert f"test_structs.py:{line}:14: struct record field 'c' is a sub-array" in str(info.value)
    assert "do not read yet" in str(info.value) and "one field per element" in str(info.value)


@jit.rawkernel()
def stores_a_float_in_an_int_field(particles, v):
    particles[0].n = v


def test_a_field_keeps_its_type_as_a_variable_does(rng):
    rec = np.dtype([("n", "i4"), ("w", "f4")], align=True)
    with pytest.raises(JitTypeError) as info:
        stores_a_float_in_an_int_field.simulate[1, 1](np.zeros(2, rec), rng.standard_normal())
    assert isinstance(info.value, TypeError)
    assert "cannot store a value of type float64 in field 'n' of type int32" in str(info.value)


@dataclasses.dataclass
class Mutable:
    x: float


@dataclasses.dataclass(frozen=True)
class Untyped:
    x: object


def test_struct_classes_that_cannot_be_a_c_struct_are_refused(rng):
    out = np.zeros(1, np.float64)
    with pytest.raises(KernelArgumentError, match="Mutable is passed to kernels by value, so it "
                                                  "must be frozen"):
        weigh.simulate[1, 1](out, Mutable(rng.standard_normal()), np.zeros((), PARTICLE)[()])
    with pytest.raises(KernelArgumentError, match="field 'x' is annotated .*object.* no kernel "
                                                  "type"):
        weigh.emit(out, Untyped(1), np.zeros((), PARTICLE)[()])


# -- the signature and the launch --------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Narrow:
    a: np.float32
    b: np.int32


@dataclasses.dataclass(frozen=True)
class Wide:
    a: np.float64
    b: np.int64


@dataclasses.dataclass(frozen=True)
class NarrowTwin:
    a: np.float32
    b: np.int32


@jit.rawkernel()
def sum_fields(out, s):
    out[0] = s.a + s.b


def test_each_struct_class_is_its_own_signature(rng):
    a, b = np.float32(rng.standard_normal()), int(rng.integers(-100, 100))
    sig = sum_fields.simulate.signature
    out = np.zeros(1, np.float64)
    assert sig((out, Narrow(a, b))) == sig((out, Narrow(-a, b + 1)))  # the same class
    assert sig((out, Narrow(a, b))) != sig((out, NarrowTwin(a, b)))  # same fields, 2 classes
    assert sig((out, Narrow(a, b))) != sig((out, Wide(a, b)))
    narrow, wide = sum_fields.emit(out, Narrow(a, b)), sum_fields.emit(out, Wide(a, b))
    assert "struct Narrow" in narrow and "  float a;\n  int b;\n" in narrow
    assert "struct Wide" in wide and "  double a;\n  long long b;\n" in wide
    for cls in (Narrow, Wide, NarrowTwin):
        sum_fields.simulate[1, 1](out, cls(a, b))
        assert out[0] == pytest.approx(float(cls.__annotations__["a"](a)) + b, rel=1e-6)


class DeviceArray:
    """A 1-D float64 device array as far as a launch reads it (the pointer is never used)."""

    def __init__(self, rng, n=8):
        self.ptr, self.n = int(rng.integers(1, 2**30)) * 256, n

    @property
    def __cuda_array_interface__(self):
        return {"data": (self.ptr, False), "shape": (self.n,), "typestr": "<f8",
                "strides": None, "version": 3}


@pytest.fixture
def fake():
    d = FakeDriver(cc=(9, 0))
    sum_fields._entries.clear()
    with driver.use(d):
        yield d
    sum_fields._entries.clear()  # loaded on the fake: not for a real GPU later
    sum_fields._set_call(sum_fields._launch)


def c_bytes(fields, values) -> bytes:
    """The bytes of a C struct of ``fields`` ((name, dtype) in order, each at its C
    alignment) holding ``values``: what the kernel's parameter must hold."""
    offsets, pos = [], 0
    for _, dt in fields:
        pos = -(-pos // np.dtype(dt).alignment) * np.dtype(dt).alignment
        offsets.append(pos)
        pos += np.dtype(dt).itemsize
    align = max(np.dtype(dt).alignment for _, dt in fields)
    layout = np.dtype({"names": [n for n, _ in fields], "formats": [d for _, d in fields],
                       "offsets": offsets, "itemsize": -(-pos // align) * align})
    return np.array(tuple(values), layout).tobytes()


def test_dataclasses_pack_their_c_layout_in_the_generated_launcher(fake, rng):
    out = DeviceArray(rng)
    kinds = [(Narrow, [("a", "f4"), ("b", "i4")]), (Wide, [("a", "f8"), ("b", "i8")]),
             (NarrowTwin, [("a", "f4"), ("b", "i4")])]
    for cls, fields in kinds * 2:  # each class twice: the generated launcher packs it
        a, b = rng.standard_normal(), int(rng.integers(-2**31, 2**31))
        value = cls(cls.__annotations__["a"](a), cls.__annotations__["b"](b))
        sum_fields[1, 1](out, value)
        want = c_bytes(fields, (a, b))
        assert fake.launches[-1].raw(1, len(want)) == want, cls.__name__
    # one build per class, kept by the signature: the second round compiled nothing
    built = [types[1] for types in sum_fields.cached_codes]
    assert sorted(t.name for t in built) == ["Narrow", "NarrowTwin", "Wide"]
    # one attribute read per field, in the launcher's one pack_into
    assert "_pack_into(_buf, 0, a0_i['data'][0], a1.a, a1.b)" in codegen.launch_source(sum_fields)


def test_records_of_another_dtype_do_not_take_the_launcher_of_the_first(fake, rng):
    out = DeviceArray(rng)
    wide = np.dtype([("a", "f8"), ("b", "i8")], align=True)
    narrow = np.dtype([("a", "f4"), ("b", "i4")], align=True)
    for dt in (narrow, narrow, wide, narrow, wide):
        value = np.zeros((), dt)
        value["a"], value["b"] = rng.standard_normal(), rng.integers(-1000, 1000)
        sum_fields[1, 1](out, value[()])
        assert fake.launches[-1].raw(1, dt.itemsize) == value.tobytes(), dt


def test_a_record_with_a_sub_array_field_is_packed_whole(fake, rng):
    out = DeviceArray(rng)
    dt = np.dtype([("a", "f4"), ("c", "i2", (3,)), ("b", "f8")], align=True)
    for _ in range(2):  # the general path, then the generated launcher
        value = np.zeros((), dt)
        value["a"], value["b"] = rng.standard_normal(), rng.standard_normal()
        value["c"] = rng.integers(-9, 9, 3)
        sum_fields[1, 1](out, value[()])
        assert fake.launches[-1].raw(1, dt.itemsize) == value.tobytes()


# -- the example -------------------------------------------------------------------


def _example():
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[2] / "examples" / "structs.py"
    spec = importlib.util.spec_from_file_location("example_structs", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_example_runs_simulated(capsys, monkeypatch):
    from jitkern.config import settings

    monkeypatch.setattr(settings, "simulate", settings.simulate)  # restored afterwards
    _example().main(["--simulate"])
    assert "advanced 2000 particles 3 steps: matches NumPy" in capsys.readouterr().out


def test_the_example_says_it_needs_a_gpu(capsys, monkeypatch):
    monkeypatch.setattr(jitkern, "is_available", lambda: False)
    assert _example().main([]) == 1  # examples/README.md: one line, exit status 1
    assert "needs a CUDA GPU and none was found" in capsys.readouterr().err


# -- layouts with padding, on the GPU and in the simulator -------------------------


@dataclasses.dataclass(frozen=True)
class Mixed:
    flag: bool
    small: np.int16
    z: np.complex128  # complex<double>: aligned to 16 in C (NumPy says 8)
    half: np.float16
    inner: Vec2
    big: np.uint64


@jit.rawkernel()
def unpack_mixed(out, m):
    out[0] = m.flag
    out[1] = m.small
    out[2] = m.z.real
    out[3] = m.z.imag
    out[4] = m.half
    out[5] = m.inner.y
    out[6] = m.big


def test_padding_and_alignment_reach_every_field(launch, rng):
    values = [bool(rng.integers(0, 2)), int(rng.integers(-30000, 30000)),
              complex(*rng.standard_normal(2)), float(np.float16(rng.standard_normal())),
              float(np.float32(rng.standard_normal())), int(rng.integers(0, 2**40))]
    flag, small, z, half, y, big = values
    m = Mixed(flag, np.int16(small), np.complex128(z), np.float16(half),
              Vec2(np.float32(rng.standard_normal()), np.float32(y)), np.uint64(big))
    out = launch.poisoned(7, np.float64)
    launch(unpack_mixed)[1, 1](out, m)
    np.testing.assert_array_equal(launch.get(out),
                                  [flag, small, z.real, z.imag, half, y, big])
    assert "static_assert(sizeof(_jk_record_" in unpack_mixed.emit(out, m)


@pytest.mark.gpu
def test_a_struct_launch_compiles_once(rng):
    from jitkern.toolchain import cache

    out = jitkern.full(1, np.nan, np.float64)
    sum_fields[1, 1](out, Narrow(np.float32(1), 2))
    before = dict(cache.stats)
    for _ in range(3):
        a, b = np.float32(rng.standard_normal()), int(rng.integers(-100, 100))
        sum_fields[1, 1](out, Narrow(a, b))
        assert out.get()[0] == pytest.approx(float(a) + b, rel=1e-6)
    assert dict(cache.stats) == before  # no compile, no cache lookup: the launcher packed it


@dataclasses.dataclass(frozen=True)
class DataclassArray:
    """A GPU array type that happens to be a frozen dataclass: still an array, not a struct."""

    ptr: int
    n: int

    @property
    def __cuda_array_interface__(self):
        return {"data": (self.ptr, False), "shape": (self.n,), "typestr": "<f8",
                "strides": None, "version": 3}


def test_a_dataclass_that_is_a_gpu_array_stays_an_array(fake, rng):
    out = DataclassArray(int(rng.integers(1, 2**30)) * 256, 8)
    value = Narrow(np.float32(rng.standard_normal()), int(rng.integers(-100, 100)))
    sum_fields[1, 1](out, value)
    assert fake.launches[-1].words(1) == [out.ptr]
    assert "array(float64, 1d, C)" in sum_fields.emit(out, value)
