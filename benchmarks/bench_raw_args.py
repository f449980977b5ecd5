"""What checking a raw kernel's arguments costs per launch, and what a struct by value costs.

Run: PYTHONPATH=. python benchmarks/bench_raw_args.py [--cpu] [--quick]

Rows, timed interleaved next to a bare ``cuLaunchKernel`` with a pre-packed buffer (the
floor): the same RawKernel launched repeatedly with ``check_args=True`` (the default)
and ``check_args=False`` (targets: within 2% of each other), and a kernel taking one
``double3`` struct by value (a size-1 structured NumPy array, a ``numpy.void``, a frozen
dataclass) against the same kernel taking the three fields as scalars (target: within 5%).
Each value is made once, outside the loop, as the fields row's floats are; one more row
builds a new dataclass every launch (the constructor's cost is in it).
``--cpu`` stubs the driver (jitkern.runtime.fakedriver): jitkern's own Python work only.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))

CHECKED = r"""
extern "C" __global__ void four_args(const float* x, const float* y, float* z, float a) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < 1) z[i] = x[i] * a + y[i];
}
"""
STRUCT = r"""
extern "C" __global__ void by_struct(double* out, double3 v, int n) {
    if (threadIdx.x == 0 && n > 0) out[0] = v.x + v.y + v.z;
}
extern "C" __global__ void by_fields(double* out, double x, double y, double z, int n) {
    if (threadIdx.x == 0 && n > 0) out[0] = x + y + z;
}
"""
DOUBLE3 = np.dtype({"names": ["x", "y", "z"], "formats": [np.float64] * 3})


@dataclasses.dataclass(frozen=True)
class Double3:
    x: float
    y: float
    z: float


def cases():
    import jitkern
    from common import bare_launcher

    bare, keep = bare_launcher()
    x, y, z = (jitkern.empty(32, np.float32) for _ in range(3))
    out = jitkern.empty(1, np.float64)
    a = np.float32(2.0)
    on = jitkern.RawKernel(CHECKED, "four_args")
    off = jitkern.RawKernel(CHECKED, "four_args", check_args=False)
    # a kernel object per case: each keeps the launcher of its last argument signature
    kernels = {name: jitkern.RawModule(code=STRUCT).get_function(name.split()[0])
               for name in ("by_struct array", "by_struct void", "by_struct dataclass",
                            "by_struct new-dataclass", "by_fields")}
    v = np.array([(1.0, 2.0, 3.0)], DOUBLE3)
    d = Double3(1.0, 2.0, 3.0)
    v0 = v[0]  # one numpy.void, as the fields row passes its floats (not made per launch)
    table = [
        ("bare cuLaunchKernel, pre-packed buffer (floor)", bare, ""),
        ("RawKernel 4 args, check_args=True", lambda: on((1,), (32,), (x, y, z, a)),
         "<= 1.02x check_args=False"),
        ("RawKernel 4 args, check_args=False", lambda: off((1,), (32,), (x, y, z, a)), ""),
        ("double3 by value: size-1 structured array",
         lambda: kernels["by_struct array"]((1,), (32,), (out, v, 1)), "<= 1.05x fields"),
        ("double3 by value: numpy.void",
         lambda: kernels["by_struct void"]((1,), (32,), (out, v0, 1)), "<= 1.05x fields"),
        ("double3 by value: frozen dataclass (one object, reused)",
         lambda: kernels["by_struct dataclass"]((1,), (32,), (out, d, 1)), "<= 1.05x fields"),
        ("double3 by value: frozen dataclass, a new object every launch (built in the loop)",
         lambda: kernels["by_struct new-dataclass"]((1,), (32,),
                                                    (out, Double3(1.0, 2.0, 3.0), 1)), ""),
        ("three doubles as scalars (the fields)",
         lambda: kernels["by_fields"]((1,), (32,), (out, 1.0, 2.0, 3.0, 1)), ""),
    ]
    return table, keep


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpu", action="store_true", help="stub the driver")
    parser.add_argument("--quick", action="store_true", help="fewer launches and rounds")
    opts = parser.parse_args(argv)
    if opts.cpu:
        from bench_launch import install_cpu_driver

        install_cpu_driver()
    import jitkern
    from common import device_label, interleaved, markdown_table, today

    table, _keep = cases()
    n, rounds = (2000, 5) if opts.quick else (20000, 9)
    results = interleaved([(name, fn) for name, fn, _t in table], n, rounds)
    rows = [[name, results[name][0], results[name][1], target] for name, _fn, target in table]
    where = "driver stubbed (--cpu): jitkern's Python work" if opts.cpu else device_label()
    print(f"## Checked raw arguments and structs by value, host us per launch ({n} launches "
          f"per round, median of {rounds} interleaved rounds)\n")
    print(f"{where}, jitkern at {os.path.dirname(jitkern.__file__)}, {today()}\n")
    print(markdown_table(["launch", "us/launch", "x bare", "target"], rows))


if __name__ == "__main__":
    from needs import require_gpu  # (benchmarks/ is on sys.path: the script's folder)

    if "--cpu" not in sys.argv:
        require_gpu(__file__)
    main()
