"""ElementwiseKernel record scalars given as frozen dataclasses and NamedTuples (issue 20 part
1, a gap of the first landing): each becomes the numpy.void of its class's record dtype, on
the GPU, in the simulator, and in the generated launcher (read through a fake driver)."""

import dataclasses
import typing

import numpy as np
import pytest

import jitkern
from jitkern.runtime import driver
from jitkern.runtime.fakedriver import FakeDriver

pytest.importorskip("pycparser")  # the simulator's C subset


@dataclasses.dataclass(frozen=True)
class Scale:
    k: np.float32
    shift: np.int32


class Velocity(typing.NamedTuple):
    x: np.float32
    y: np.float32


class Kick(typing.NamedTuple):
    gain: float
    v: Velocity
    flag: np.int8


BODY = np.dtype([("mass", "f8"), ("v", [("x", "f4"), ("y", "f4")])], align=True)

energy = jitkern.ElementwiseKernel(
    "T b, S s", "float64 e",
    "e = 0.5 * b.mass * (b.v.x * b.v.x + b.v.y * b.v.y) * s.k + s.shift;",
    name="struct_class_energy")

kick = jitkern.ElementwiseKernel(
    "float64 x, K kk", "float64 y", "y = x * kk.gain + kk.v.x - kk.v.y + kk.flag;",
    name="struct_class_kick")


def random_bodies(rng, n):
    host = np.zeros(n, BODY)
    host["mass"] = rng.uniform(1, 3, n)
    host["v"]["x"] = rng.standard_normal(n)
    host["v"]["y"] = rng.standard_normal(n)
    return host


def random_scale(rng):
    return Scale(np.float32(rng.uniform(0.5, 2)), np.int32(rng.integers(-5, 5)))


def random_kick(rng):
    v = Velocity(np.float32(rng.standard_normal()), np.float32(rng.standard_normal()))
    return Kick(float(rng.standard_normal()), v, np.int8(rng.integers(-9, 9)))


def kick_want(x, kk):
    return x * kk.gain + np.float64(kk.v.x) - np.float64(kk.v.y) + kk.flag


def test_a_frozen_dataclass_for_a_record_scalar(launch, rng):
    n = launch.pick(gpu=100_000, sim=200)
    host = random_bodies(rng, n)
    for _ in range(2):  # the second call takes the generated launcher on the GPU
        scale = random_scale(rng)
        out = launch.poisoned(n, np.float64)
        launch(energy)(launch.to_device(host), scale, out)
        vx, vy = host["v"]["x"], host["v"]["y"]
        speed2 = (vx * vx + vy * vy).astype(np.float32).astype(np.float64)
        want = 0.5 * host["mass"] * speed2 * np.float64(scale.k) + scale.shift
        np.testing.assert_allclose(launch.get(out), want, rtol=1e-6, atol=1e-6)


def test_a_namedtuple_with_a_nested_namedtuple(launch, rng):
    n = launch.pick(gpu=10_000, sim=100)
    x = rng.standard_normal(n)
    for _ in range(2):
        kk = random_kick(rng)
        out = launch.poisoned(n, np.float64)
        launch(kick)(launch.to_device(x), kk, out)
        np.testing.assert_allclose(launch.get(out), kick_want(x, kk), rtol=1e-12)


class DevArray:
    """A float64 device array stand-in (``__cuda_array_interface__``): the fake driver runs
    nothing, so a test reads what the launch was given."""

    def __init__(self, rng, n):
        self.ptr, self.n = int(rng.integers(1, 1 << 30)) * 256, n

    @property
    def __cuda_array_interface__(self):
        return {"data": (self.ptr, False), "shape": (self.n,), "typestr": "<f8",
                "strides": None, "version": 3}


def test_the_generated_launcher_packs_each_instance_as_its_record(rng):
    k = jitkern.ElementwiseKernel("float64 x, K kk", "float64 y", "y = x * kk.gain;",
                                  name="struct_class_packed")
    with driver.use(FakeDriver(cc=(9, 0))) as fake:
        n = int(rng.integers(8, 64))
        x, y = DevArray(rng, n), DevArray(rng, n)
        runners = None
        for call in range(4):  # the general path, then the generated one
            kk = random_kick(rng)
            k(x, kk, y)
            dt = np.dtype([("gain", "f8"), ("v", [("x", "f4"), ("y", "f4")]), ("flag", "i1")],
                          align=True)  # C's layout of the struct (padding left unread)
            got = np.frombuffer(fake.launches[-1].raw(1, dt.itemsize), dt)[0]
            assert (float(got["gain"]), float(got["v"]["x"]), float(got["v"]["y"]),
                    int(got["flag"])) == (kk.gain, float(kk.v.x), float(kk.v.y), int(kk.flag))
            if call == 1:
                runners = dict(k._runners)
        assert k._runners == runners  # no new runner after the second call
        assert len(fake.launches) == 4


def test_a_field_that_does_not_convert_is_refused_naming_the_parameter(rng):
    x = rng.standard_normal(4)
    bad = Kick(float(rng.standard_normal()), Velocity("fast", 1.0), np.int8(1))
    with pytest.raises(jitkern.JitkernTypeError) as info:
        kick.simulate(x, bad, np.zeros(4))
    assert str(info.value) == ("struct_class_kick: argument 'kk': struct Kick: field 'v.x' "
                               "(float32) takes a number, got 'fast' (str)")


def test_a_class_laid_out_unlike_the_bound_record_is_refused(rng):
    k = jitkern.ElementwiseKernel("T b, T s", "float64 e", "e = b.k + s.k;",
                                  name="struct_class_same")
    other = np.zeros(4, np.dtype([("k", "f8"), ("shift", "i4")], align=True))
    with pytest.raises(jitkern.JitkernTypeError) as info:
        k.simulate(other, random_scale(rng), np.zeros(4))
    message = str(info.value)
    assert "struct_class_same" in message and "'s'" in message
    assert "Scale" in message
