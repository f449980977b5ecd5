"""Launch cost of a kernel taking one struct argument against the same kernel taking the
fields as scalars (issue 20: within 5% of the scalars), for each kernel kind.

Run: PYTHONPATH=. python benchmarks/bench_structs.py [--cpu] [--quick]

Three groups, each timed interleaved against its own reference (the same kernel taking
``(x, dt, n, gx, gy)``; ``x scalars`` is the median of the per-round ratios to it):

- ``@rawkernel`` (the JIT), ``k[1, 32](x, p)``;
- ``RawKernel`` over C source declaring ``struct Params {float dt; int n; Vec2 g;}``,
  ``k((1,), (32,), (x, p))``;
- ``ElementwiseKernel`` over 32 elements, ``k(x, p, y)`` with ``p`` a record scalar.

``p`` holds the same four values with ``(gx, gy)`` in a nested struct: a frozen dataclass,
a ``typing.NamedTuple``, a ``numpy.void`` (a record of an array, as ``recs[0]`` gives),
and for raw kernels a size-1 structured array. Each launch passes values made once, as a
user's loop passes its scalars. ``--cpu`` replaces the CUDA driver by the stub of
``jitkern.runtime.fakedriver`` (``cuLaunchKernel`` returns at once): the figures are then
jitkern's own Python work per launch. Kernels compile with NVRTC either way. The script
uses the public API only, so an older checkout runs it too (before/after comparisons).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import typing

import numpy as np

N_LAUNCH = 20000


@dataclasses.dataclass(frozen=True)
class Vec2:
    gx: np.float32
    gy: np.float32


@dataclasses.dataclass(frozen=True)
class Params:
    dt: np.float32
    n: np.int32
    g: Vec2


class ParamsTuple(typing.NamedTuple):
    dt: np.float32
    n: np.int32
    g: Vec2


RECORD = np.dtype([("dt", "f4"), ("n", "i4"), ("g", [("gx", "f4"), ("gy", "f4")])],
                  align=True)


RAW_SOURCE = r"""
struct Vec2 { float gx; float gy; };
struct Params { float dt; int n; Vec2 g; };
extern "C" __global__ void with_struct(float* x, Params p) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n) x[i] = x[i] * p.dt + p.n + p.g.gx * p.g.gy;
}
extern "C" __global__ void with_scalars(float* x, float dt, int n, float gx, float gy) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * dt + n + gx * gy;
}
"""


def jit_kernels():
    """(scalars kernel, struct kernel): fresh objects, so each case keeps its own launcher."""
    from jitkern import jit

    @jit.rawkernel()
    def with_scalars(x, dt, n, gx, gy):
        i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
        if i < n:
            x[i] = x[i] * dt + n + gx * gy

    @jit.rawkernel()
    def with_struct(x, p):
        i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
        if i < p.n:
            x[i] = x[i] * p.dt + p.n + p.g.gx * p.g.gy

    return with_scalars, with_struct


def raw_kernel(name: str):
    import jitkern

    return jitkern.RawModule(code=RAW_SOURCE).get_function(name)


def elementwise_kernel(struct: bool):
    import jitkern

    if struct:
        return jitkern.ElementwiseKernel("float32 x, P p", "float32 y",
                                         "y = x * p.dt + p.n + p.g.gx * p.g.gy;",
                                         name="bench_struct_param")
    return jitkern.ElementwiseKernel("float32 x, float32 dt, int32 m, float32 gx, float32 gy",
                                     "float32 y", "y = x * dt + m + gx * gy;",
                                     name="bench_struct_fields")


def values():
    """The four values as scalars, and as each kind of struct."""
    dt, n, gx, gy = np.float32(0.5), np.int32(32), np.float32(1.5), np.float32(-2)
    recs = np.zeros(4, RECORD)
    recs["dt"], recs["n"], recs["g"] = dt, n, (gx, gy)
    return {"scalars": (dt, n, gx, gy), "dataclass": Params(dt, n, Vec2(gx, gy)),
            "NamedTuple": ParamsTuple(dt, n, Vec2(gx, gy)), "array": recs[:1],
            "void": recs[0]}


KINDS = [("dataclass", "a frozen dataclass (nested)"),
         ("NamedTuple", "a typing.NamedTuple (nested)"),
         ("array", "a size-1 structured array"), ("void", "a numpy.void record")]


def groups(cpu: bool):
    """{group: [(row name, fn)]}, each group's reference first."""
    import jitkern

    x, y = jitkern.empty(32, np.float32), jitkern.empty(32, np.float32)
    if not cpu:
        x.fill(1)
    v = values()
    dt, n, gx, gy = v["scalars"]
    jit_scalars = jit_kernels()[0]
    raw_scalars = raw_kernel("with_scalars")
    ew_scalars = elementwise_kernel(False)
    out = {
        "@rawkernel": [("k[1, 32](x, dt, n, gx, gy): fields as scalars",
                        lambda: jit_scalars[1, 32](x, dt, n, gx, gy))],
        "RawKernel": [("k((1,), (32,), (x, dt, n, gx, gy)): fields as scalars",
                       lambda: raw_scalars((1,), (32,), (x, dt, n, gx, gy)))],
        "ElementwiseKernel": [("k(x, dt, n, gx, gy, y): fields as scalars",
                               lambda: ew_scalars(x, dt, n, gx, gy, y))],
    }
    for kind, what in KINDS:
        p = v[kind]
        if kind != "array":  # the JIT takes a NumPy array as a host array, not a struct
            k = jit_kernels()[1]
            out["@rawkernel"].append((f"k[1, 32](x, p): p {what}", lambda k=k, p=p: k[1, 32](x, p)))
            e = elementwise_kernel(True)
            out["ElementwiseKernel"].append((f"k(x, p, y): p {what}",
                                             lambda e=e, p=p: e(x, p, y)))
        r = raw_kernel("with_struct")
        out["RawKernel"].append((f"k((1,), (32,), (x, p)): p {what}",
                                 lambda r=r, p=p: r((1,), (32,), (x, p))))
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpu", action="store_true", help="stub the driver (see the doc)")
    parser.add_argument("--quick", action="store_true", help="fewer launches and rounds")
    opts = parser.parse_args(argv)
    if opts.cpu:
        from bench_launch import install_cpu_driver

        install_cpu_driver()
    import jitkern
    from common import bare_launcher, device_label, interleaved, markdown_table, today

    floor, _keep = bare_launcher()
    n, rounds = (2000, 5) if opts.quick else (N_LAUNCH, 9)
    where = "driver stubbed (--cpu): jitkern's Python work" if opts.cpu else device_label()
    print(f"## Struct arguments, host us per launch ({n} launches per round, median of "
          f"{rounds} interleaved rounds; x = median of per-round ratios to the group's "
          f"first row)\n")
    print(f"{where}, jitkern at {os.path.dirname(jitkern.__file__)}, {today()}\n")
    floor_us = interleaved([("floor", floor)], n, rounds)["floor"][0]
    rows = [["bare cuLaunchKernel, pre-packed buffer (floor)", "", floor_us, "", ""]]
    for group, cases in groups(opts.cpu).items():
        for _name, fn in cases:  # past the general path and the making of each launcher
            for _ in range(5):
                fn()
        results = interleaved(cases, n, rounds)
        for i, (name, _fn) in enumerate(cases):
            rows.append([group, name, results[name][0], results[name][1],
                         "(the reference)" if i == 0 else "<= 1.05x the scalars"])
    print(markdown_table(["kernel", "launch", "us/launch", "x scalars", "target"], rows))


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    if "--cpu" not in sys.argv[1:]:
        from needs import require_gpu  # (benchmarks/ is on sys.path: the script's folder)

        require_gpu(__file__)
    main()
