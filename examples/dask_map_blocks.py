"""When one GPU is not enough: jitkern kernels over a chunked Dask array, one worker per GPU
(docs/dask.md).

Run: python examples/dask_map_blocks.py [--simulate] [--workers N] [--scheduler ADDRESS]
Needs dask[distributed] (pip install "dask[distributed]"; dask-cuda is used where installed).
On GPUs the chunks are CuPy arrays, drawn on each worker's own GPU and kept there; --simulate
(or JITKERN_SIMULATE=1) runs every kernel in jitkern's CPU simulator on NumPy chunks (no GPU
needed; each worker's simulated device takes a raw kernel's chunks as a GPU takes host
arrays: copied to it and back). Without
--scheduler the program starts one worker per visible GPU (--workers N: the first N; with
--simulate, N simulated workers); with it, it runs on that cluster's workers, on as many
machines as they are (docs/dask.md, "Many machines").
"""

import argparse
import contextlib
import os
import sys

import numpy as np

import jitkern
from gpu_or_simulated import NEEDS_GPU
from jitkern import jit

A = 2.5  # z = A * x + y


@jitkern.rawkernel()
def saxpy(a, x, y, out, n):
    i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    for k in range(i, n, jit.gridDim.x * jit.blockDim.x):
        out[k] = a * x[k] + y[k]


@jitkern.fuse()
def row_norms(z):
    return np.sqrt((z * z).sum(axis=1))


@jitkern.fuse()
def sum_of_squares(z):
    return (z * z).sum(dtype=np.float64)


def to_host(a):
    """A NumPy copy of a chunk or result (CuPy, jitkern or NumPy): the one conversion."""
    return jitkern.asnumpy(a)


def random_pair(seed, block_info=None):
    """One (2, rows, cols) chunk of x and y, drawn on this worker's device. Each chunk has a
    seed of its own, so a chunk lost with its worker is drawn again the same elsewhere."""
    info = block_info[None]
    chunk_seed = np.random.SeedSequence([seed, *info["chunk-location"]]).generate_state(1)[0]
    rng = jitkern.dask.array_module().random.default_rng(int(chunk_seed))
    return rng.standard_normal(info["chunk-shape"], dtype=np.float32)


def saxpy_block(xy, a):
    """z = a * x + y of one chunk, into a new array of the chunk's library."""
    x, y = xy[0], xy[1]  # chunks are C-contiguous: x and y are contiguous views
    xp = jitkern.dask.array_module()
    out = xp.empty_like(x)
    flat = [v.reshape(-1) for v in (x, y, out)]
    if xp is np:  # a simulating worker's chunks are NumPy arrays: copied to its device
        flat = [jitkern.asarray(v) for v in flat]  # (jitkern's simulated one) and back
    saxpy[(x.size + 255) // 256, 256](np.float32(a), *flat, np.int32(x.size))
    if xp is np:
        out.reshape(-1)[...] = jitkern.asnumpy(flat[2])
    return out


def norms_block(z):
    # results follow the inputs (CuPy in, CuPy out); asarray makes any other result a chunk of
    # the chunks' library
    return jitkern.dask.array_module().asarray(row_norms(z))


def squares_chunk(z, axis, keepdims):
    """da.reduction's chunk step: one fused reduction per chunk, kept as a (1, 1) partial."""
    return jitkern.dask.array_module().asarray(sum_of_squares(z)).reshape((1, 1))


def add_partials(partials, axis, keepdims):
    """da.reduction's combine and aggregate steps: the tree adds partials on the workers."""
    return partials.sum(axis=axis, keepdims=keepdims)


def draw(seed, rows, cols, chunk_rows, xp):
    """x and y as one (2, rows, cols) Dask array, each chunk drawn on the worker that holds
    it (``xp``: the chunks' library, cupy, or numpy in the simulator)."""
    import dask.array as da

    row_chunks = tuple(min(chunk_rows, rows - r) for r in range(0, rows, chunk_rows))
    return da.map_blocks(random_pair, seed, chunks=((2,), row_chunks, (cols,)),
                         dtype=np.float32, meta=xp.empty((0, 0, 0), np.float32))


def compute_graph(xy, xp, a=A):
    """Row norms and the sum of squares of z = a * x + y, from the chunks of ``xy``: each
    chunk's kernels run where the chunk is; partial sums meet in a tree (da.reduction)."""
    import dask.array as da

    z = da.map_blocks(saxpy_block, xy, a, drop_axis=0, dtype=np.float32,
                      meta=xp.empty((0, 0), np.float32))
    norms = da.map_blocks(norms_block, z, drop_axis=1, dtype=np.float32,
                          meta=xp.empty((0,), np.float32))
    total = da.reduction(z, squares_chunk, add_partials, combine=add_partials,
                         dtype=np.float64, split_every=2, meta=xp.empty((), np.float64))
    return norms, total


def on_host(array):
    """``array`` with each chunk copied to the host on its worker (for checking)."""
    return array.map_blocks(to_host, dtype=array.dtype,
                            meta=np.empty((0,) * array.ndim, array.dtype))


def reference(xy, a=A):
    """Row norms and sum of squares of a * x + y, in float64 with NumPy."""
    z = a * xy[0].astype(np.float64) + xy[1]
    return np.sqrt((z * z).sum(axis=1)), (z * z).sum()


def check(xy, norms, total, a=A):
    want_norms, want_total = reference(xy, a)
    np.testing.assert_allclose(norms, want_norms, rtol=1e-4)
    np.testing.assert_allclose(total, want_total, rtol=1e-5)


def describe_worker():
    """(CUDA_VISIBLE_DEVICES, the device, kernels compiled) of the worker running this."""
    from jitkern.toolchain import cache

    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "(all)")
    if jitkern.config.settings.simulate:
        return visible, "the simulator", cache.stats["compiles"]
    device = jitkern.Device(0)
    return visible, f"{device.name} ({device.arch})", cache.stats["compiles"]


@contextlib.contextmanager
def connect(args):
    """A client of the cluster at ``--scheduler``, or of a new one with a worker per GPU."""
    from dask.distributed import Client

    if args.scheduler:
        with Client(args.scheduler) as client:
            yield client
        return
    import jitkern.dask

    with jitkern.dask.local_cluster(args.workers, simulate=args.simulate) as cluster:
        with Client(cluster) as client:
            yield client


def _arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--simulate", action="store_true",
                        help="run the kernels in jitkern's CPU simulator (no GPU needed)")
    parser.add_argument("--workers", type=int, default=None,
                        help="GPUs to use (default: every visible one; 2 with --simulate)")
    parser.add_argument("--scheduler", default=None,
                        help="address of a running Dask scheduler (tcp://HOST:8786)")
    return parser.parse_args(argv)


def _ready(args) -> str | None:
    """Why this run cannot start, or None."""
    try:
        import dask.distributed  # noqa: F401
    except ImportError:
        return 'This example needs Dask: pip install "dask[distributed]"'
    if args.simulate:
        return None
    if not args.scheduler and not jitkern.is_available():
        return ("dask_map_blocks.py: needs a CUDA GPU and none was found; run it with "
                "--simulate (or JITKERN_SIMULATE=1) to run it on jitkern's simulated device")
    try:
        import cupy  # noqa: F401
    except ImportError:
        return "On GPUs this example needs CuPy for the Dask array's chunks."
    return None


def main(argv=None):
    args = _arguments(sys.argv[1:] if argv is None else argv)
    args.simulate = args.simulate or jitkern.config.settings.simulate  # JITKERN_SIMULATE=1
    problem = _ready(args)
    if problem:
        print(problem, file=sys.stderr)
        return NEEDS_GPU  # (or Dask, or CuPy: what it needs, in one line)
    import dask

    if args.simulate:
        xp = np
    else:
        import cupy as xp
    rows, cols = (2048, 16) if args.simulate else (1 << 20, 64)
    with connect(args) as client:
        workers = len(client.scheduler_info()["workers"])
        seed = int(np.random.SeedSequence().entropy % 2**63)
        xy = draw(seed, rows, cols, -(-rows // (2 * workers)), xp)  # two chunks a worker
        norms, total = compute_graph(xy, xp)
        got_xy, got_norms, got_total = dask.compute(on_host(xy), on_host(norms), total)
        described = client.run(describe_worker)
    check(got_xy, got_norms, float(to_host(got_total)))
    where = "in the simulator" if args.simulate else "on the GPUs"
    print(f"{workers} workers, {xy.numblocks[1]} chunks {where}: row norms and sum of squares "
          f"of {A} * x + y match NumPy")
    for visible, device, compiles in sorted(described.values()):
        print(f"  worker with CUDA_VISIBLE_DEVICES={visible}: {device}, {compiles} compiles")
    print("compiles per worker:", sorted(c for _v, _d, c in described.values()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
