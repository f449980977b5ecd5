"""Shared measurement helpers: the floors every figure is compared against.

- ``bare_launch_us``: host microseconds per ``cuLaunchKernel`` through
  cuda.bindings with a parameter buffer packed once, the fastest launch Python
  can make.
- ``copy_bandwidth``: a large device-to-device copy, counting bytes read plus
  bytes written, timed with CUDA events.
Both run in the same process as the figure they are compared to.
"""

from __future__ import annotations

import ctypes
import importlib
import datetime
import statistics
import struct
import time

import numpy as np

try:
    from jitkern.toolchain import nvrtc as compiler
    from jitkern.runtime import driver, memory
    from jitkern.runtime.device import Event, synchronize
    from jitkern.runtime.driver import drv
    from jitkern.runtime.module import Function
except ImportError:  # a checkout from before the pipeline layout (timed for comparison)
    from jitkern.backend import compiler, driver, memory
    from jitkern.backend.device import Event, synchronize
    from jitkern.backend.driver import drv
    from jitkern.backend.module import Function

FOUR_ARG_SOURCE = r"""
extern "C" __global__ void four_args(const float* x, const float* y, float* z, float a) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < 1) z[i] = x[i] * a + y[i];
}
"""


def device_label() -> str:
    dev = driver.current_device_id()
    return f"{driver.device_name(dev)} (sm_{''.join(map(str, driver.compute_capability(dev)))})"


def today() -> str:
    return datetime.date.today().isoformat()


def host_us_per_call(fn, n: int = 20000, repeats: int = 5) -> float:
    """Median over ``repeats`` of the mean host time of ``n`` calls (then a sync)."""
    fn()
    synchronize()
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        t1 = time.perf_counter()
        synchronize()
        samples.append((t1 - t0) / n * 1e6)
    return statistics.median(samples)


def interleaved(cases: list, n: int = 20000, rounds: int = 9) -> dict:
    """Host us per call of each ``(name, fn)``, measured in interleaved rounds.

    Each round times every case once (``n`` calls, then a sync), rotating the order,
    so drift of clocks and of the machine hits all cases alike. Returns
    ``{name: (median us, median ratio to the first case within a round)}``.
    """
    for _name, fn in cases:
        fn()
    synchronize()
    per_round = {name: [] for name, _fn in cases}
    for r in range(rounds):
        order = cases[r % len(cases):] + cases[:r % len(cases)]
        for name, fn in order:
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            t1 = time.perf_counter()
            synchronize()
            per_round[name].append((t1 - t0) / n * 1e6)
    first = cases[0][0]
    return {
        name: (statistics.median(v),
               statistics.median(x / b for x, b in zip(v, per_round[first])))
        for name, v in per_round.items()
    }


def bare_launch_us(n: int = 20000) -> float:
    """cuLaunchKernel of a 4-argument kernel with a pre-packed parameter buffer."""
    call, _keep = bare_launcher()
    return host_us_per_call(call, n)


def bare_launcher():
    """(call, keep-alive): the floor, cuLaunchKernel with a buffer packed once."""
    major, minor = driver.compute_capability(driver.current_device_id())
    binary = compiler.compile_source(FOUR_ARG_SOURCE, program_name="four_args.cu",
                                     arch=f"sm_{major}{minor}")  # this device's (any checkout)
    fn = Function(binary, "four_args")
    handle = fn.handle()
    bufs = [memory.malloc(16, driver.current_device_id()) for _ in range(3)]
    raw = struct.pack("<QQQf", bufs[0].ptr, bufs[1].ptr, bufs[2].ptr, 2.0)
    storage = ctypes.create_string_buffer(raw, 32)
    base = ctypes.addressof(storage)
    pointers = (ctypes.c_void_p * 4)(base, base + 8, base + 16, base + 24)
    params = ctypes.addressof(pointers)
    launch = drv().cuLaunchKernel

    def call():
        launch(handle, 1, 1, 1, 32, 1, 1, 0, 0, params, 0)

    return call, (bufs, storage, pointers)


SPIN_SOURCE = r"""
extern "C" __global__ void spin(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}
"""
_spin = None


def spin_gpu(us: float = 200.0) -> None:
    """Keep the current stream busy for ``us`` microseconds (one thread spinning)."""
    global _spin
    if _spin is None:
        from jitkern import RawKernel

        _spin = RawKernel(SPIN_SOURCE, "spin")
    _spin((1,), (1,), (np.uint64(us * 1e3),))


def time_gpu_ms(fn, reps: int = 20, warmup: int = 3) -> float:
    """Median device time of ``fn`` in ms, each rep bracketed by CUDA events.

    Each rep is queued behind a 200 us spin kernel, so the GPU reaches the start event
    only after the host has issued all of ``fn``'s work: the figure is the device's time
    for that work, not the host's time to issue it (that is what the launch tables
    measure). Without it, a 250 us kernel issued by 10 us of Python reads 4% slow.
    """
    for _ in range(warmup):
        fn()
    synchronize()
    times = []
    for _ in range(reps):
        start, end = Event(), Event()
        spin_gpu()
        start.record()
        fn()
        end.record()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def copy_bandwidth(nbytes: int = 1 << 30, reps: int = 20) -> float:
    """Device-to-device copy bandwidth in GB/s, counting read + write."""
    dev = driver.current_device_id()
    src = memory.malloc(nbytes, dev)
    dst = memory.malloc(nbytes, dev)
    memory.memset_d8(src.ptr, 7, nbytes)
    ms = time_gpu_ms(lambda: memory.memcpy_dtod(dst.ptr, src.ptr, nbytes), reps)
    return 2 * nbytes / (ms * 1e-3) / 1e9


def markdown_table(headers: list[str], rows: list[list]) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for row in rows:
        out.append("| " + " | ".join(_fmt(c) for c in row) + " |")
    return "\n".join(out)


def _fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 100 else f"{value:.0f}"
    return str(value)


def try_import(name: str):
    """The module ``name`` (a dotted name gives the submodule itself), or None."""
    try:
        return importlib.import_module(name)
    except Exception:
        return None


def fresh_random(shape, dtype=np.float32, seed=None):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape).astype(dtype)
