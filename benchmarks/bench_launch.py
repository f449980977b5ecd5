"""Launch overhead and first-call cost of RawKernel (issue 2's figures).

Run: PYTHONPATH=. python benchmarks/bench_launch.py
Prints a markdown table; the floor (bare cuLaunchKernel) is measured in the same run.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

import jitkern
from common import (FOUR_ARG_SOURCE, bare_launcher, device_label, interleaved, markdown_table,
                    today, try_import)

N_LAUNCH = 20000


def jitkern_arrays():
    x = jitkern.asarray(np.ones(32, np.float32))
    return x, jitkern.empty_like(x), jitkern.empty_like(x)


def rawkernel_call(arrays):
    k = jitkern.RawKernel(FOUR_ARG_SOURCE, "four_args")
    args = (*arrays, np.float32(2.0))
    return lambda: k((1,), (32,), args)


def hand_packed_call(arrays, pointer):
    """The least a launcher reading pointers from these arrays can cost: ``pointer(a)``
    for each, one ``struct.pack_into`` into a fixed buffer, ``cuLaunchKernel`` (no type,
    count or stream checks). A reference for what the array library's own calls cost."""
    import ctypes
    import struct

    from jitkern.runtime.driver import drv

    k = jitkern.RawKernel(FOUR_ARG_SOURCE, "four_args")
    handle = k.kernel.handle()
    buf = bytearray(32)
    base = ctypes.addressof(ctypes.c_char.from_buffer(buf))
    pointers = (ctypes.c_void_p * 4)(base, base + 8, base + 16, base + 24)
    params = ctypes.addressof(pointers)
    pack_into, launch = struct.Struct("<QQQf").pack_into, drv().cuLaunchKernel
    x, y, z = arrays
    a = np.float32(2.0)

    def call(_keep=(buf, pointers)):
        pack_into(buf, 0, pointer(x), pointer(y), pointer(z), a)
        launch(handle, 1, 1, 1, 32, 1, 1, 0, 0, params, 0)

    return call


def cupy_rawkernel_call(cp):
    k = cp.RawKernel(FOUR_ARG_SOURCE, "four_args")
    x = cp.ones(32, cp.float32)
    args = (x, cp.empty_like(x), cp.empty_like(x), np.float32(2.0))
    return lambda: k((1,), (32,), args)


_FIRST_CALL = r"""
import time, sys
t0 = time.perf_counter()
import jitkern
t1 = time.perf_counter()
import numpy as np
from jitkern.runtime import driver
x = jitkern.asarray(np.ones(32, np.float32)); y = jitkern.empty_like(x); z = jitkern.empty_like(x)
jitkern.synchronize()
SRC = sys.argv[1]
k = jitkern.RawKernel(SRC, "four_args")  # construction (and jitkern.kernels' import) not timed
t2 = time.perf_counter()
k.compile()  # the cache lookup and module load the first call would do
tc = time.perf_counter()
k((1,), (32,), (x, y, z, np.float32(2.0)))
jitkern.synchronize()
t3 = time.perf_counter()
k((1,), (32,), (x, y, z, np.float32(2.0)))
jitkern.synchronize()
t4 = time.perf_counter()
print((t1 - t0) * 1e3, (t3 - t2) * 1e3, (t4 - t3) * 1e3, (tc - t2) * 1e3,
      file=sys.stdout)
print("modules after first call:", sorted(m for m in sys.modules if m.startswith("cuda")),
      file=sys.stderr)
"""


def first_call_ms(cache_dir: str, source: str) -> tuple[float, float, float]:
    env = dict(os.environ, JITKERN_CACHE_DIR=cache_dir)
    env["PYTHONPATH"] = os.pathsep.join([os.getcwd(), env.get("PYTHONPATH", "")])
    proc = subprocess.run([sys.executable, "-c", _FIRST_CALL, source], env=env,
                          capture_output=True, text=True, check=True)
    imp, first, second, compile_and_load = (float(v) for v in proc.stdout.split())
    return imp, first, second, compile_and_load


def main() -> None:
    bare_call, _keep = bare_launcher()
    cases = [("bare cuLaunchKernel, pre-packed buffer (floor)", bare_call, ""),
             ("jitkern.RawKernel, jitkern arrays", rawkernel_call(jitkern_arrays()), "<= 1.15x"),
             ("hand-packed launch reading `x._ptr` (reference)",
              hand_packed_call(jitkern_arrays(), lambda a: a._ptr), "")]
    cp = try_import("cupy")
    if cp is not None:
        x = cp.ones(32, cp.float32)
        cases.append(("jitkern.RawKernel, CuPy arrays",
                      rawkernel_call((x, cp.empty_like(x), cp.empty_like(x))), "<= 1.15x"))
        cases.append(("cupy.RawKernel, CuPy arrays (reference)", cupy_rawkernel_call(cp), ""))
        cases.append(("hand-packed launch reading `x.data.ptr` (reference)",
                      hand_packed_call((x, cp.empty_like(x), cp.empty_like(x)),
                                       lambda a: a.data.ptr), ""))
    torch = try_import("torch")
    if torch is not None and torch.cuda.is_available():
        t = torch.ones(32, dtype=torch.float32, device="cuda")
        cases.append(("jitkern.RawKernel, PyTorch tensors",
                      rawkernel_call((t, torch.empty_like(t), torch.empty_like(t))), "<= 1.15x"))
        cases.append(("hand-packed launch reading `t.data_ptr()` after `t.is_cuda` (reference)",
                      hand_packed_call((t, torch.empty_like(t), torch.empty_like(t)),
                                       lambda a: a.data_ptr() if a.is_cuda else 0), ""))
    results = interleaved([(name, fn) for name, fn, _t in cases], N_LAUNCH)
    rows = [[name, results[name][0], results[name][1], target] for name, _fn, target in cases]
    print(f"## Launch overhead, host us per launch ({N_LAUNCH} async launches per round, median of 9 interleaved rounds; ratio = median of per-round ratios)\n")
    print(f"{device_label()}, {today()}\n")
    print(markdown_table(["launch", "us/launch", "x bare", "target"], rows))

    with tempfile.TemporaryDirectory() as cache_dir:
        src = FOUR_ARG_SOURCE.replace("four_args(", "four_args(") + f"\n// {os.getpid()}\n"
        cold = first_call_ms(cache_dir, src)
        runs = [first_call_ms(cache_dir, src) for _ in range(5)]
        warm = tuple(statistics.median(r[i] for r in runs) for i in range(4))
    print("\n## First call in a fresh process (ms)\n")
    print(markdown_table(
        ["case", "import jitkern", "first call", "of which compile/cache + load", "second call",
         "first - second", "target"],
        [["cold disk cache", cold[0], cold[1], cold[3], cold[2], cold[1] - cold[2], ""],
         ["warm disk cache (median of 5 processes)", warm[0], warm[1], warm[3], warm[2], warm[1] - warm[2],
          "<= 2 ms beyond launch; import <= 150 ms"]]))


if __name__ == "__main__":
    from needs import require_gpu  # (benchmarks/ is on sys.path: the script's folder)

    require_gpu(__file__)
    main()
