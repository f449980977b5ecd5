"""Launch cost of a JIT kernel taking one struct argument against the same kernel taking the
fields as scalars, and a bare ``cuLaunchKernel`` (issue 20: within 5% of the scalars).

Run: PYTHONPATH=. python benchmarks/bench_structs.py [--cpu] [--quick]

Both kernels do the same work (``x[i] = x[i] * dt + n + gx * gy`` for ``i < n``); one takes
``(x, dt, n, gx, gy)``, the other ``(x, p)`` with ``p`` a frozen dataclass holding ``dt``,
``n`` and a nested dataclass ``(gx, gy)``, the same values as a ``typing.NamedTuple``, or
as a ``numpy.void`` record. Each launch builds its arguments the way a user's loop does:
the struct is made once and passed again, as the scalars are. ``--cpu`` replaces the CUDA
driver by the stub of ``jitkern.runtime.fakedriver`` (``cuLaunchKernel`` returns at once):
the figures are then jitkern's own Python work per launch. Kernels compile with NVRTC
either way.
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


def kernels():
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


def cases(cpu: bool):
    import jitkern
    from common import bare_launcher

    x = jitkern.empty(32, np.float32)
    if not cpu:
        x.fill(1)
    dt, n, gx, gy = np.float32(0.5), np.int32(32), np.float32(1.5), np.float32(-2)
    p = Params(dt, n, Vec2(gx, gy))
    pt = ParamsTuple(dt, n, Vec2(gx, gy))
    rec = np.zeros((), RECORD)
    rec["dt"], rec["n"], rec["g"] = dt, n, (gx, gy)
    rec = rec[()]
    bare, keep = bare_launcher()
    scalars = kernels()[0]
    by_dataclass, by_tuple, by_record = (kernels()[1] for _ in range(3))
    return [
        ("bare cuLaunchKernel, pre-packed buffer (floor)", bare, ""),
        ("@rawkernel k[1, 32](x, dt, n, gx, gy): fields as scalars", lambda: scalars[1, 32](
            x, dt, n, gx, gy), "(the reference)"),
        ("@rawkernel k[1, 32](x, p): p a frozen dataclass (nested)", lambda: by_dataclass[1, 32](
            x, p), "<= 1.05x the scalars"),
        ("@rawkernel k[1, 32](x, p): p a typing.NamedTuple (nested)", lambda: by_tuple[1, 32](
            x, pt), "<= 1.05x the scalars"),
        ("@rawkernel k[1, 32](x, p): p a numpy.void record", lambda: by_record[1, 32](x, rec),
         "<= 1.05x the scalars"),
    ], keep


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpu", action="store_true", help="stub the driver (see the doc)")
    parser.add_argument("--quick", action="store_true", help="fewer launches and rounds")
    opts = parser.parse_args(argv)
    if opts.cpu:
        from bench_launch import install_cpu_driver

        install_cpu_driver()
    import jitkern
    from common import device_label, interleaved, markdown_table, today

    table, _keep = cases(opts.cpu)
    n, rounds = (2000, 5) if opts.quick else (N_LAUNCH, 9)
    results = interleaved([(name, fn) for name, fn, _t in table], n, rounds)
    reference = results[table[1][0]][1]
    rows = [[name, results[name][0], results[name][1], results[name][1] / reference, target]
            for name, _fn, target in table]
    where = "driver stubbed (--cpu): jitkern's Python work" if opts.cpu else device_label()
    print(f"## Struct arguments, host us per launch ({n} async launches per round, median of "
          f"{rounds} interleaved rounds; x = median of per-round ratios to the floor)\n")
    print(f"{where}, jitkern at {os.path.dirname(jitkern.__file__)}, {today()}\n")
    print(markdown_table(["launch", "us/launch", "x bare", "x scalars", "target"], rows))


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    if "--cpu" not in sys.argv[1:]:
        from needs import require_gpu  # (benchmarks/ is on sys.path: the script's folder)

        require_gpu(__file__)
    main()
