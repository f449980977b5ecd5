"""Dask scaling: the same total work on 1 worker and on 2, 4, ... GPUs, one worker per GPU.

    PYTHONPATH=. python benchmarks/bench_dask_scaling.py [--json PATH] [--workers 1,2,4]
        [--chunk-seconds 0.5] [--repeats 3] [--chunks N] [--elements N]
    PYTHONPATH=. python benchmarks/bench_dask_scaling.py --simulate   # no GPU: the plumbing
        only, with tiny chunks in the CPU simulator (the figures mean nothing)

Three kernels, each over the same chunked data (``--chunks`` chunks of ``--elements``
float32, CuPy arrays drawn on the GPU of the worker that uses them):

- compute-bound: a ``@rawkernel`` running four independent multiply-add chains per element;
- bandwidth-bound: an ``ElementwiseKernel`` (y = a * x), launched back and forth between two
  buffers;
- a fused reduction (``jitkern.fuse``, sum of squares in float64) per chunk, its partial
  sums combined in a tree across the workers by ``da.reduction`` (split_every=2).

What keeps it fair: the cluster (jitkern.dask.local_cluster: one worker per GPU, each seeing
its GPU alone) starts once and every worker compiles and checks each kernel against NumPy
before any timing; chunk i lives on worker i mod k, drawn there before the clock starts, and
the computation is restricted to those k workers with work stealing off, so no chunk moves;
each chunk's task does ``--chunk-seconds`` of GPU work (calibrated once on worker 0, the same
for every k) and synchronises its GPU before it returns; the time is the wall clock of the
whole computation seen by the client (median of ``--repeats``). Worker counts: every power
of two up to the visible GPUs, and their number. Prints a table (workers, seconds, speedup
over one worker, per-GPU throughput) and writes ``--json PATH``.
"""

from __future__ import annotations

import argparse
import datetime
import functools
import json
import math
import os
import statistics
import sys
import time

import numpy as np

import jitkern
from jitkern import jit

CHAINS = 4  # independent multiply-add chains per thread: the SMs' pipelines stay full
A, B = np.float32(0.999), np.float32(0.001)


@jitkern.rawkernel()
def multiply_add_chains(x, out, n, iters, a, b):
    i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    if i < n:
        v0 = x[i]
        v1 = v0 + np.float32(1)
        v2 = v0 + np.float32(2)
        v3 = v0 + np.float32(3)
        for _ in range(iters):
            v0 = v0 * a + b
            v1 = v1 * a + b
            v2 = v2 * a + b
            v3 = v3 * a + b
        out[i] = v0 + v1 + v2 + v3


scale = jitkern.ElementwiseKernel("float32 x, float32 a", "float32 y", "y = a * x",
                                  "bench_scale")


@jitkern.fuse()
def sum_of_squares(x):
    return (x * x).sum(dtype=np.float64)


# -- on the workers

def make_chunk(n, seed, index):
    """Chunk ``index``: ``n`` float32 in [0, 1), drawn on this worker's device."""
    chunk_seed = np.random.SeedSequence([seed, index]).generate_state(1)[0]
    rng = jitkern.dask.array_module().random.default_rng(int(chunk_seed))
    x = rng.random(n, dtype=np.float32)
    jitkern.synchronize()
    return x


def compute_task(x, iters, run=0):
    """``iters`` rounds of the four chains over the chunk; ``run`` only names the task."""
    out = jitkern.dask.array_module().empty_like(x)
    multiply_add_chains[(x.size + 255) // 256, 256](x, out, np.int32(x.size), np.int32(iters),
                                                    A, B)
    jitkern.synchronize()
    return out


def bandwidth_task(x, reps, run=0):
    """``reps`` launches of y = a * x, back and forth between two buffers (x is not touched)."""
    xp = jitkern.dask.array_module()
    buffers = [xp.empty_like(x), xp.empty_like(x)]
    src = x
    for r in range(reps):
        src = scale(src, np.float32(-1), buffers[r % 2])
    jitkern.synchronize()
    return src


def reduction_chunk(x, axis, keepdims, reps=1):
    """da.reduction's chunk step: ``reps`` fused sums of squares of the chunk, added."""
    xp = jitkern.dask.array_module()
    total = xp.zeros((), np.float64)
    for _ in range(reps):
        total += xp.asarray(sum_of_squares(x))
    jitkern.synchronize()
    return total.reshape((1,))


def add_partials(partials, axis, keepdims):
    return partials.sum(axis=axis, keepdims=keepdims)


def moved_bytes(dask_worker):
    """Bytes this worker has received from other workers (moved chunks, partial sums)."""
    return sum(t["total"] for t in dask_worker.transfer_incoming_log)


def chunk_reference(x):
    """The float64 sum of squares of one chunk (to check the tree's total)."""
    return float(jitkern.asnumpy((x.astype(np.float64) ** 2).sum()))


def warm_up():
    """Compile (or load) and check every kernel on this worker, on a small chunk, against
    NumPy in float64. Returns (CUDA_VISIBLE_DEVICES, the device)."""
    host = np.random.default_rng().random(4096, dtype=np.float32)
    x = jitkern.dask.array_module().asarray(host)
    got = jitkern.asnumpy(compute_task(x, 3))
    v = [host.astype(np.float64) + k for k in range(CHAINS)]
    for _ in range(3):
        v = [c * float(A) + float(B) for c in v]
    np.testing.assert_allclose(got, sum(v), rtol=1e-5)
    np.testing.assert_array_equal(jitkern.asnumpy(bandwidth_task(x, 3)), -host)
    partial = jitkern.asnumpy(reduction_chunk(x, None, True, reps=2))
    np.testing.assert_allclose(partial, [2 * (host.astype(np.float64) ** 2).sum()], rtol=1e-6)
    return os.environ.get("CUDA_VISIBLE_DEVICES", "(all)"), describe_device()


def describe_device() -> str:
    if jitkern.config.settings.simulate:
        return "the simulator"
    device = jitkern.Device(0)
    return f"{device.name} ({device.arch}, PCI bus {device.attribute('pci_bus_id')})"


def calibrate(kind, x, seconds):
    """The work (iterations or repetitions) for which one chunk's task takes ``seconds``."""
    task = TASKS[kind]
    work = 1
    while True:
        t0 = time.perf_counter()
        task(x, work)
        elapsed = time.perf_counter() - t0
        if elapsed >= seconds / 8 or work >= 1 << 30:
            return max(1, round(work * seconds / elapsed))
        work *= 4


TASKS = {
    "compute": compute_task,
    "bandwidth": bandwidth_task,
    "reduction": lambda x, reps: reduction_chunk(x, None, True, reps),
}


# -- on the client

KERNELS = {  # kind -> (row label, throughput unit, units of work per element and work step)
    "compute": ("compute-bound @rawkernel", "TFLOP/s", 2 * CHAINS / 1e12),
    "bandwidth": ("bandwidth-bound ElementwiseKernel", "GB/s", 8 / 1e9),
    "reduction": ("fused reduction + tree combine", "GB/s", 4 / 1e9),
}
TARGETS = {("compute", 2): 1.9, ("compute", 4): 3.7}


def worker_counts(gpus: int) -> list[int]:
    counts = [1 << p for p in range(gpus.bit_length()) if 1 << p <= gpus]
    return counts + ([gpus] if gpus not in counts else [])


class Placement:
    """The chunks drawn on k workers (chunk i on worker i mod k), as a Dask array."""

    def __init__(self, client, workers, k, opts, xp):
        import dask.array as da
        from distributed import wait

        self.workers = workers[:k]
        self.futures = [client.submit(make_chunk, opts.elements, opts.seed, i,
                                      workers=[self.workers[i % k]], allow_other_workers=False,
                                      pure=False) for i in range(opts.chunks)]
        wait(self.futures)
        meta = xp.empty((0,), np.float32)
        self.array = da.concatenate([da.from_delayed(f, (opts.elements,), np.float32, meta=meta)
                                     for f in self.futures])
        parts = [client.submit(chunk_reference, f, pure=False) for f in self.futures]
        self.sum_of_squares = sum(p.result() for p in parts)


def time_run(client, placement, kind, work, run, xp):
    """Seconds for the whole computation of one kernel over the placement, and its result."""
    from distributed import wait

    x = placement.array
    restrict = {"workers": placement.workers, "allow_other_workers": False}
    t0 = time.perf_counter()
    if kind == "reduction":
        import dask.array as da

        total = da.reduction(x, functools.partial(reduction_chunk, reps=work), add_partials,
                             combine=add_partials, split_every=2, dtype=np.float64,
                             meta=xp.empty((), np.float64), name=f"bench-reduction-{run}")
        result = float(jitkern.asnumpy(client.compute(total, **restrict).result()))
        return time.perf_counter() - t0, result
    out = x.map_blocks(TASKS[kind], work, run, dtype=np.float32, meta=xp.empty((0,), np.float32))
    persisted = client.persist(out, **restrict)
    wait(persisted)
    elapsed = time.perf_counter() - t0
    del persisted
    return elapsed, None


def measure(client, workers, counts, opts, xp, work):
    rows = []
    for k in sorted(counts):
        placement = Placement(client, workers, k, opts, xp)
        for kind in KERNELS:
            times = []
            for r in range(opts.repeats):
                seconds, total = time_run(client, placement, kind, work[kind], f"{k}-{r}", xp)
                times.append(seconds)
                if total is not None:
                    want = work[kind] * placement.sum_of_squares
                    if not abs(total - want) <= 1e-6 * abs(want):
                        raise SystemExit(f"reduction on {k} workers: {total} != {want}")
            rows.append({"kernel": kind, "workers": k, "seconds": statistics.median(times),
                         "seconds_each": times})
        del placement
    return rows


def with_ratios(rows, opts, work):
    one = {r["kernel"]: r["seconds"] for r in rows if r["workers"] == 1}
    for r in rows:
        label, unit, per_element = KERNELS[r["kernel"]]
        units = per_element * opts.elements * opts.chunks * work[r["kernel"]]
        r["speedup"] = one[r["kernel"]] / r["seconds"] if r["kernel"] in one else None
        r["per_gpu_throughput"] = units / r["seconds"] / r["workers"]
        r["unit"] = unit
        r["target"] = TARGETS.get((r["kernel"], r["workers"]))
    return rows


def table(rows) -> str:
    lines = ["| kernel | workers | seconds | speedup | per-GPU throughput | target |",
             "|---|---:|---:|---:|---:|---|"]
    for r in sorted(rows, key=lambda r: (list(KERNELS).index(r["kernel"]), r["workers"])):
        speedup = f"{r['speedup']:.2f}x" if r["speedup"] is not None else ""
        target = ""
        if r["target"] is not None:
            met = r["speedup"] is not None and r["speedup"] >= r["target"]
            target = f">= {r['target']}x: {'met' if met else 'NOT met'}"
        lines.append(f"| {KERNELS[r['kernel']][0]} | {r['workers']} | {r['seconds']:.3f} | "
                     f"{speedup} | {r['per_gpu_throughput']:.4g} {r['unit']} | {target} |")
    return "\n".join(lines)


def _arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", metavar="PATH", help="write the figures as JSON to PATH")
    parser.add_argument("--workers", help="worker counts, e.g. 1,2,4 (default: every power "
                        "of two up to the visible GPUs, and their number)")
    parser.add_argument("--chunk-seconds", type=float, default=None,
                        help="GPU seconds of one chunk's task (default 0.5; 0.02 simulated)")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs (the median)")
    parser.add_argument("--chunks", type=int, default=None,
                        help="chunks (default: 8, or a multiple of every worker count)")
    parser.add_argument("--elements", type=int, default=None,
                        help="float32 per chunk (default 2**27, 512 MiB; 2**10 simulated)")
    parser.add_argument("--simulate", action="store_true",
                        help="no GPU: tiny chunks in jitkern's CPU simulator")
    opts = parser.parse_args(argv)
    opts.seed = int(np.random.SeedSequence().entropy % 2**63)
    return opts


def _settle(opts, gpus: int) -> list[int]:
    """Worker counts, chunks and sizes from the options and the GPUs there are."""
    counts = sorted({int(c) for c in opts.workers.split(",")} if opts.workers
                    else set(worker_counts(gpus)))
    if counts[0] != 1 or (counts[-1] > gpus and not opts.simulate):
        raise SystemExit(f"bench_dask_scaling.py: --workers {opts.workers}: needs 1, and at "
                         f"most {gpus} (the GPUs visible)")
    if opts.chunks is None:
        lcm = math.lcm(*counts)
        opts.chunks = lcm * -(-8 // lcm)
    opts.elements = opts.elements or (1 << 10 if opts.simulate else 1 << 27)
    if opts.chunk_seconds is None:
        opts.chunk_seconds = 0.02 if opts.simulate else 0.5
    return counts


def _ready(opts) -> None:
    if not opts.simulate:
        from needs import require_gpu  # (benchmarks/ is on sys.path: the script's folder)

        require_gpu(__file__)
    try:
        import dask.array  # noqa: F401
        import distributed  # noqa: F401
    except ImportError:
        raise SystemExit('bench_dask_scaling.py: needs Dask: pip install "dask[distributed]"'
                         ) from None
    if not opts.simulate:
        try:
            import cupy  # noqa: F401
        except ImportError:
            raise SystemExit("bench_dask_scaling.py: needs CuPy for the chunks") from None


def run(opts, counts, client, xp):
    workers = [w for _name, w in sorted(
        (info["name"], address) for address, info in client.scheduler_info()["workers"].items())]
    warm = [client.submit(warm_up, workers=[w], allow_other_workers=False, pure=False)
            for w in workers]
    described = [f.result() for f in warm]
    first = Placement(client, workers, 1, argparse.Namespace(**{**vars(opts), "chunks": 1}), xp)
    work = {kind: client.submit(calibrate, kind, first.futures[0], opts.chunk_seconds,
                                workers=workers[:1], pure=False).result() for kind in KERNELS}
    del first
    rows = with_ratios(measure(client, workers, counts, opts, xp, work), opts, work)
    return described, work, rows, sum(client.run(moved_bytes).values())


def main(argv=None) -> int:
    opts = _arguments(sys.argv[1:] if argv is None else argv)
    _ready(opts)
    import dask
    import distributed

    import jitkern.dask

    gpus = len(jitkern.dask.visible_devices())
    counts = _settle(opts, gpus or jitkern.dask.SIMULATED_WORKERS)
    xp = np if opts.simulate else __import__("cupy")
    started = time.perf_counter()
    with dask.config.set({"distributed.scheduler.work-stealing": False}), \
            jitkern.dask.local_cluster(counts[-1], simulate=opts.simulate) as cluster, \
            distributed.Client(cluster) as client:
        described, work, rows, moved = run(opts, counts, client, xp)
    print(f"Dask scaling, {counts[-1]} worker(s), one per GPU, {datetime.date.today()}, "
          f"jitkern {jitkern.__version__}, dask {dask.__version__}, distributed "
          f"{distributed.__version__}")
    for i, (visible, device) in enumerate(described):
        print(f"  worker {i}: CUDA_VISIBLE_DEVICES={visible}, {device}")
    print(f"{opts.chunks} chunks of {opts.elements} float32, {opts.chunk_seconds} s of work per "
          f"chunk (compute: {work['compute']} iterations; bandwidth: {work['bandwidth']} "
          f"launches; reduction: {work['reduction']} passes), median of {opts.repeats}\n")
    print(table(rows))
    chunk_bytes = 4 * opts.elements
    print(f"\nbytes workers received from each other in the whole run: {moved} "
          + ("(partial sums only: no chunk moved)" if moved < chunk_bytes else
             "(MORE THAN A CHUNK: data moved between GPUs, the figures are not of resident data)"))
    print(f"\n(whole run: {time.perf_counter() - started:.0f} s)")
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump({"date": datetime.date.today().isoformat(), "simulated": opts.simulate,
                       "workers": [{"visible": v, "device": d} for v, d in described],
                       "chunks": opts.chunks, "elements": opts.elements,
                       "chunk_seconds": opts.chunk_seconds, "repeats": opts.repeats,
                       "work": work, "rows": rows, "bytes_moved_between_workers": moved,
                       "versions": {
                           "jitkern": jitkern.__version__, "dask": dask.__version__,
                           "distributed": distributed.__version__}}, f, indent=1)
    return 0


if __name__ == "__main__":
    import bench_dask_scaling  # the workers import it by this name: its kernels pickle by reference

    sys.exit(bench_dask_scaling.main())
