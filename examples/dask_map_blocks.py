"""When one GPU is not enough: a jitkern kernel and a fused function over a chunked Dask
array, on a local cluster of worker processes (docs/dask.md).

Run: python examples/dask_map_blocks.py [--simulate] [--workers N]
Needs dask[distributed] (pip install "dask[distributed]"). On a GPU the chunks are CuPy
arrays (CuPy needed); --simulate runs every kernel in jitkern's CPU simulator on NumPy
chunks (no GPU needed). Each worker process compiles a kernel once, or loads it from the
disk cache the workers share.
"""

import os
import sys

import numpy as np

import jitkern
from jitkern import jit


@jitkern.rawkernel()
def saxpy(a, x, y, out, n):
    i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    for k in range(i, n, jit.gridDim.x * jit.blockDim.x):
        out[k] = a * x[k] + y[k]


@jitkern.fuse()
def row_norms(x):
    return np.sqrt((x * x).sum(axis=1))


def saxpy_block(x, y, a):
    """One chunk: the kernel writes a new array of the chunk's kind (CuPy or NumPy)."""
    out = np.empty_like(x) if isinstance(x, np.ndarray) else type(x)(x.shape, x.dtype)
    flat = [v.reshape(-1) for v in (x, y, out)]  # chunks are contiguous: flat views
    saxpy[(x.size + 255) // 256, 256](np.float32(a), *flat[:2], flat[2], np.int32(x.size))
    return out


def norms_block(x):
    result = row_norms(x)
    if isinstance(x, np.ndarray):
        return np.asarray(result)
    import cupy  # the chunk is CuPy's: hand back a CuPy array (zero-copy)

    return cupy.asarray(result)


def _compiles():
    from jitkern.toolchain import cache

    return cache.stats["compiles"]


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    simulate = "--simulate" in argv
    workers = int(argv[argv.index("--workers") + 1]) if "--workers" in argv else 2
    try:
        import dask.array as da
        from dask.distributed import Client, LocalCluster
    except ImportError:
        print('This example needs Dask: pip install "dask[distributed]"')
        return 2
    if simulate:
        os.environ["JITKERN_SIMULATE"] = "1"  # the workers inherit it
        jitkern.config.reload()
        xp = np
    else:
        if not jitkern.is_available():
            print("This example needs a CUDA GPU and none was found; run it with --simulate.")
            return 2
        try:
            import cupy as xp
        except ImportError:
            print("On a GPU this example needs CuPy for the Dask array's chunks.")
            return 2
    rng = np.random.default_rng()
    n, m = (2048, 16) if simulate else (1 << 22, 64)
    x_host = rng.standard_normal((n, m), dtype=np.float32)
    y_host = rng.standard_normal((n, m), dtype=np.float32)
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        chunks = (n // (2 * workers), m)
        x = da.from_array(xp.asarray(x_host), chunks=chunks, asarray=False)
        y = da.from_array(xp.asarray(y_host), chunks=chunks, asarray=False)
        z = da.map_blocks(saxpy_block, x, y, 2.5, dtype=np.float32)
        norms = da.map_blocks(norms_block, z, drop_axis=1, dtype=np.float32)
        got = norms.compute()
        compiles = client.run(_compiles)
    got = got.get() if hasattr(got, "get") else np.asarray(got)
    z64 = 2.5 * x_host.astype(np.float64) + y_host
    want = np.sqrt((z64 * z64).sum(axis=1))
    np.testing.assert_allclose(got, want, rtol=1e-4)
    where = "in the simulator" if simulate else "on the GPU"
    print(f"{len(compiles)} workers, {x.numblocks[0]} chunks {where}: row norms of "
          f"2.5 * x + y match NumPy")
    print("compiles per worker:", sorted(compiles.values()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
