"""A sum over thread-block clusters with distributed shared memory.

Needs a GPU of compute capability 9.0 or newer (sm_90: H100, H200, GH200, B200, ...):
thread-block clusters came with Hopper. ``--simulate`` (or ``JITKERN_SIMULATE=1``) runs the
same program on jitkern's simulated device (an sm_90 stand-in: a small input, two clusters,
timings meaningless). Without a GPU, or on an older one, it says what it needs in one line
and exits with status 1 (examples/README.md).

Each block reduces its share of the input into its shared memory; the blocks of a cluster
then meet at ``cluster.sync()``, and block 0 of each cluster reads the other blocks'
partial sums straight out of their shared memory (``cluster.map_shared_rank``) and adds
the cluster's total to the result with one atomic, instead of one atomic per block.
Checked against NumPy and timed against the same reduction without clusters.

    python examples/jit_cluster_reduction.py [N]
    python examples/jit_cluster_reduction.py --simulate [N]     # no GPU needed (N: 4096)
"""

import sys

import numpy

import jitkern
from gpu_or_simulated import NEEDS_GPU, device, simulated
from jitkern import jit

BLOCK = 256
CLUSTER = 8


@jit.rawkernel(device=True)
def block_partial_sum(x, n, partial):
    """This block's share of x (a grid-stride loop), summed into partial[0]."""
    tid = jit.threadIdx.x
    acc = numpy.float64(0)
    i = jit.blockIdx.x * jit.blockDim.x + tid
    stride = jit.gridDim.x * jit.blockDim.x
    while i < n:
        acc += x[i]
        i += stride
    partial[tid] = acc
    jit.syncthreads()
    s = BLOCK // 2
    while s > 0:
        if tid < s:
            partial[tid] += partial[tid + s]
        jit.syncthreads()
        s //= 2


@jit.rawkernel()
def cluster_sum(x, n, out):
    cluster = jit.cg.this_cluster()
    partial = jit.shared_memory(numpy.float64, BLOCK)
    block_partial_sum(x, n, partial)
    cluster.sync()  # every block's partial[0] is written and visible to the cluster
    if cluster.block_rank() == 0 and jit.threadIdx.x == 0:
        total = numpy.float64(0)
        for rank in range(cluster.num_blocks()):
            remote = cluster.map_shared_rank(partial, rank)
            total += remote[0]
        jit.atomic_add(out, 0, total)
    cluster.sync()  # the other blocks keep their shared memory until block 0 has read it


@jit.rawkernel()
def block_sum(x, n, out):
    partial = jit.shared_memory(numpy.float64, BLOCK)
    block_partial_sum(x, n, partial)
    if jit.threadIdx.x == 0:
        jit.atomic_add(out, 0, partial[0])


def timed(kernel, grid, args, cluster=None, repeats=20) -> float:
    start, end = jitkern.Event(), jitkern.Event()
    kernel(grid, BLOCK, args, cluster=cluster) if cluster else kernel(grid, BLOCK, args)
    start.record()
    for _ in range(repeats):
        if cluster:
            kernel(grid, BLOCK, args, cluster=cluster)
        else:
            kernel(grid, BLOCK, args)
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / repeats


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    on = device(argv, "jit_cluster_reduction.py")
    if on is None:
        return NEEDS_GPU
    sizes = [int(a) for a in argv if a != "--simulate"]
    with on:
        problem = gpu_problem()
        if problem is not None:
            print(f"jit_cluster_reduction.py: needs an sm_90+ GPU: {problem}", file=sys.stderr)
            return NEEDS_GPU
        run(sizes[0] if sizes else 4096 if simulated() else 1 << 26)
    return 0


def run(n: int) -> None:
    rng = numpy.random.default_rng()
    host = rng.standard_normal(n)
    x = jitkern.asarray(host)
    want = host.sum()
    sms = jitkern.Device().attribute("multiprocessor_count")
    # a multiple of the cluster size: four blocks per SM on a GPU, two clusters simulated
    grid = 2 * CLUSTER if simulated() else CLUSTER * ((4 * sms + CLUSTER - 1) // CLUSTER)
    for name, kernel, cluster in (
        (f"clusters of {CLUSTER}", cluster_sum, (CLUSTER, 1, 1)),
        ("one atomic per block", block_sum, None),
    ):
        out = jitkern.zeros(1, numpy.float64)
        if cluster:
            kernel(grid, BLOCK, (x, n, out), cluster=cluster)
        else:
            kernel(grid, BLOCK, (x, n, out))
        got = out.get()[0]
        assert abs(got - want) <= 1e-9 * numpy.abs(host).sum(), (name, got, want)
        if simulated():  # the sum, not the CPU's meaningless timing
            print(f"simulated on the CPU: {name}, grid={grid}, n={n}: sum={got:.6f} "
                  f"(NumPy {want:.6f})")
            continue
        ms = timed(kernel, grid, (x, n, jitkern.zeros(1, numpy.float64)), cluster)
        print(
            f"{name:22s} sum={got:.6f} (NumPy {want:.6f})  {ms * 1e3:8.1f} us  "
            f"{n * 8 / ms / 1e6:7.1f} GB/s  grid={grid}"
        )


def gpu_problem() -> str | None:
    """Why this device cannot run the example, or None."""
    cc = jitkern.Device().compute_capability  # "90" for sm_90, as CuPy spells it
    if int(cc) < 90:
        return (f"the GPU is sm_{cc}; thread-block clusters need compute capability 9.0 "
                "or newer (sm_90)")
    return None


if __name__ == "__main__":
    sys.exit(main())
