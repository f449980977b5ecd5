"""ElementwiseKernel with structured dtypes (issue 20, part 1): a record array parameter and a
structured scalar (numpy.void) become C structs whose fields the operation reads, on the GPU
with jitkern arrays of the record dtype and in the simulator, against NumPy."""

import numpy as np
import pytest

import jitkern

pytest.importorskip("pycparser")  # the simulator's C subset

BODY = np.dtype([("mass", "f8"), ("v", [("x", "f4"), ("y", "f4")])], align=True)
SCALE = np.dtype([("k", "f4"), ("shift", "i4")], align=True)

energy = jitkern.ElementwiseKernel(
    "T b, S s", "float64 e",
    "e = 0.5 * b.mass * (b.v.x * b.v.x + b.v.y * b.v.y) * s.k + s.shift;",
    name="kinetic_energy")


def random_bodies(rng, n):
    host = np.zeros(n, BODY)
    host["mass"] = rng.uniform(1, 3, n)
    host["v"]["x"] = rng.standard_normal(n)
    host["v"]["y"] = rng.standard_normal(n)
    return host


def test_record_arrays_and_a_record_scalar(launch, rng):
    n = launch.pick(gpu=100_000, sim=200)
    host = random_bodies(rng, n)
    scale = np.zeros((), SCALE)
    scale["k"], scale["shift"] = rng.uniform(0.5, 2), rng.integers(-5, 5)
    out = launch.poisoned(n, np.float64)
    launch(energy)(launch.to_device(host), scale[()], out)
    vx, vy = host["v"]["x"], host["v"]["y"]
    speed2 = (vx * vx + vy * vy).astype(np.float32).astype(np.float64)
    want = 0.5 * host["mass"] * speed2 * np.float64(np.float32(scale["k"])) + scale["shift"]
    np.testing.assert_allclose(launch.get(out), want, rtol=1e-6, atol=1e-6)


def test_a_missing_field_is_named_by_the_simulator_and_the_compiler(rng):
    k = jitkern.ElementwiseKernel("T b", "float64 e", "e = b.charge;", name="charge")
    host = random_bodies(rng, 4)
    with pytest.raises(jitkern.JitkernError, match="field 'charge', which the record has not "
                                                   r"\(its fields: mass, v\)"):
        k.simulate(host, np.zeros(4))
    with pytest.raises(jitkern.CompileError, match="charge"):
        k.inspect(host, np.zeros(4), arch="sm_90")
