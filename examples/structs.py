"""Particles as an array of structs, advanced by a kernel that takes its parameters as one
frozen dataclass (passed by value as a C struct, a nested struct inside).

Run: python examples/structs.py [--simulate]
Needs a CUDA GPU; --simulate (or JITKERN_SIMULATE=1) runs the same program on jitkern's
simulated device instead (examples/README.md).
"""

import dataclasses
import sys

import numpy as np

import jitkern
from gpu_or_simulated import main as example_main, simulated
from jitkern import jit

#: One particle: a C struct {float x, y, vx, vy; double mass;} (align=True: C's layout).
PARTICLE = np.dtype(
    [("x", "f4"), ("y", "f4"), ("vx", "f4"), ("vy", "f4"), ("mass", "f8")], align=True)


@dataclasses.dataclass(frozen=True)
class Vec2:
    x: np.float32
    y: np.float32


@dataclasses.dataclass(frozen=True)
class StepParams:
    dt: np.float32
    n: int  # a Python int field is an int64 in the kernel
    force: Vec2


@jitkern.rawkernel()
def advance(particles, p):
    i = jit.grid(1)
    if i < p.n:
        a = particles[i]  # a struct local: a copy of the element
        inv_m = np.float32(1.0 / a.mass)
        particles[i].vx += p.dt * p.force.x * inv_m
        particles[i].vy += p.dt * p.force.y * inv_m
        particles[i].x += p.dt * particles[i].vx
        particles[i].y += p.dt * particles[i].vy


def advanced(host, p: StepParams):
    """The same step in NumPy."""
    out = host.copy()
    inv_m = (1.0 / out["mass"]).astype(np.float32)
    out["vx"] += p.dt * p.force.x * inv_m
    out["vy"] += p.dt * p.force.y * inv_m
    out["x"] += p.dt * out["vx"]
    out["y"] += p.dt * out["vy"]
    return out


def main(argv=None) -> int:
    return example_main(run, sys.argv[1:] if argv is None else argv, "structs.py")


def run():
    n = 2_000 if simulated() else 1_000_000
    rng = np.random.default_rng()
    host = np.zeros(n, PARTICLE)
    for name in ("x", "y", "vx", "vy"):
        host[name] = rng.standard_normal(n)
    host["mass"] = rng.uniform(1.0, 2.0, n)
    p = StepParams(np.float32(0.01), n, Vec2(np.float32(0.0), np.float32(-9.81)))
    steps, block = 3, 256
    grid = (n + block - 1) // block
    particles = jitkern.asarray(host)  # an array of structs on the device
    for _ in range(steps):
        advance[grid, block](particles, p)
    want = host
    for _ in range(steps):
        want = advanced(want, p)
    got = particles.get()
    for name in ("x", "y", "vx", "vy"):
        np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-5)
    print(f"advanced {n} particles {steps} steps: matches NumPy")


if __name__ == "__main__":
    sys.exit(main())
