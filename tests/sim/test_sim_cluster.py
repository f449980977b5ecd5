"""Thread-block clusters in the simulator: the blocks of a cluster run together,
cluster.sync() is a barrier over them and map_shared_rank reads another block's shared
memory; launches are checked as on a GPU."""

import importlib.util
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

from jitkern import jit
from jitkern.config import settings
from jitkern.errors import KernelArgumentError, KernelAssertionError, LaunchError

BLOCK = 32


@jit.rawkernel()
def neighbour_sum(x, out):
    """out[b] = x[b] + x[next block of the cluster], through the next block's shared memory."""
    cluster = jit.cg.this_cluster()
    mine = jit.shared_memory(np.float64, 1)
    if jit.threadIdx.x == 0:
        mine[0] = x[jit.blockIdx.x + jit.gridDim.x * jit.blockIdx.y]
    cluster.sync()
    if jit.threadIdx.x == 0:
        other = cluster.map_shared_rank(mine, (cluster.block_rank() + 1) % cluster.num_blocks())
        out[jit.blockIdx.x + jit.gridDim.x * jit.blockIdx.y] = mine[0] + other[0]
    cluster.sync()


@jit.rawkernel()
def identity(out):
    """Per block: block rank, number of blocks, block index in the cluster, cluster dims."""
    cluster = jit.cg.this_cluster()
    b = jit.blockIdx.x + jit.gridDim.x * jit.blockIdx.y
    if jit.threadIdx.x == 0:
        idx = cluster.block_index()
        dims = cluster.dim_blocks()
        out[b, 0] = cluster.block_rank()
        out[b, 1] = cluster.num_blocks()
        out[b, 2] = idx.x + 10 * idx.y
        out[b, 3] = dims.x + 10 * dims.y
        out[b, 4] = cluster.num_threads()
    if jit.threadIdx.x == 1:
        out[b, 5] = cluster.thread_rank()


@jit.rawkernel()
def cluster_total(x, out):
    """Block sums in shared memory; block 0 of each cluster adds up the cluster's."""
    cluster = jit.cg.this_cluster()
    partial = jit.shared_memory(np.float64, BLOCK)
    tid = jit.threadIdx.x
    partial[tid] = x[jit.blockIdx.x * BLOCK + tid]
    jit.syncthreads()
    s = BLOCK // 2
    while s > 0:
        if tid < s:
            partial[tid] += partial[tid + s]
        jit.syncthreads()
        s //= 2
    cluster.sync()
    if cluster.block_rank() == 0 and tid == 0:
        total = np.float64(0)
        for r in range(cluster.num_blocks()):
            total += cluster.map_shared_rank(partial, r)[0]
        out[jit.blockIdx.x // cluster.num_blocks()] = total
    cluster.sync()


@jit.rawkernel()
def rank_out_of_range(out):
    cluster = jit.cg.this_cluster()
    mine = jit.shared_memory(np.float32, 1)
    mine[0] = 1.0
    cluster.sync()
    other = cluster.map_shared_rank(mine, cluster.num_blocks())
    out[0] = other[0]


@jit.rawkernel()
def skipped_sync(out):
    cluster = jit.cg.this_cluster()
    if jit.blockIdx.x == 0:
        return
    cluster.sync()
    out[jit.blockIdx.x] = 1


@jit.rawkernel()
def half_sync(out):
    cluster = jit.cg.this_cluster()
    if jit.threadIdx.x < 4:
        jit.syncthreads()
    else:
        cluster.sync()
    out[jit.blockIdx.x] = 1


@pytest.mark.parametrize("cluster", [2, 4, 8])
def test_distributed_shared_memory_1d(rng, cluster):
    blocks = 16
    x = rng.standard_normal(blocks)
    out = np.full(blocks, np.nan)
    neighbour_sum.simulate(blocks, BLOCK, (x, out), cluster=(cluster, 1, 1))
    want = x + x.reshape(-1, cluster)[:, np.r_[1:cluster, 0]].reshape(-1)
    np.testing.assert_array_equal(out, want)


def test_distributed_shared_memory_2d_cluster(rng):
    grid = (4, 4)
    x = rng.standard_normal(16)
    out = np.full(16, np.nan)
    neighbour_sum.simulate(grid, BLOCK, (x, out), cluster=(2, 2, 1))
    # block (bx, by) has rank (bx % 2) + 2 * (by % 2) in its cluster; its neighbour is rank+1
    want = np.empty(16)
    for by in range(4):
        for bx in range(4):
            rank = bx % 2 + 2 * (by % 2)
            nxt = (rank + 1) % 4
            ox, oy = bx - bx % 2 + nxt % 2, by - by % 2 + nxt // 2
            want[bx + 4 * by] = x[bx + 4 * by] + x[ox + 4 * oy]
    np.testing.assert_array_equal(out, want)


def test_cluster_identity_2d():
    out = np.full((16, 6), -1, np.int64)
    identity.simulate((4, 4), BLOCK, (out,), cluster=(2, 2))
    for by in range(4):
        for bx in range(4):
            rank = bx % 2 + 2 * (by % 2)
            assert list(out[bx + 4 * by]) == [
                rank, 4, bx % 2 + 10 * (by % 2), 2 + 10 * 2, 4 * BLOCK, rank * BLOCK + 1]


def test_without_cluster_every_block_is_its_own_cluster():
    out = np.full((3, 6), -1, np.int64)
    identity.simulate(3, BLOCK, (out,))
    np.testing.assert_array_equal(out, [[0, 1, 0, 11, BLOCK, 1]] * 3)


def test_cluster_sync_without_cluster_is_a_one_block_barrier(rng):
    x = rng.standard_normal(4)
    out = np.full(4, np.nan)
    neighbour_sum.simulate(4, 8, (x, out))  # each block is its own neighbour
    np.testing.assert_array_equal(out, 2 * x)


def test_cluster_sum_matches_numpy(rng):
    blocks, cluster = 12, 4
    x = rng.standard_normal(blocks * BLOCK)
    out = np.full(blocks // cluster, np.nan)
    cluster_total.simulate(blocks, BLOCK, (x, out), cluster=cluster)
    np.testing.assert_allclose(out, x.reshape(-1, cluster * BLOCK).sum(axis=1), rtol=1e-12)


def test_jitkern_simulate_setting_passes_cluster(rng, monkeypatch):
    monkeypatch.setattr(settings, "simulate", True)
    x = rng.standard_normal(8)
    out = np.full(8, np.nan)
    neighbour_sum(8, BLOCK, (x, out), cluster=(2, 1, 1))
    np.testing.assert_array_equal(out, x + x.reshape(-1, 2)[:, ::-1].reshape(-1))


@pytest.mark.parametrize(
    ("grid", "cluster", "error", "words"),
    [
        (6, (4, 1, 1), LaunchError, r"cluster=\(4, 1, 1\) must divide grid=6"),
        (16, 16, KernelArgumentError, r"cluster=16 has 16 blocks; expected at most 8"),
        (4, (0, 1), KernelArgumentError, r"cluster: every dimension must be at least 1"),
    ],
)
def test_bad_clusters_refused_as_on_a_gpu(grid, cluster, error, words):
    out = np.full(16, np.nan)
    with pytest.raises(error, match=words):
        neighbour_sum.simulate(grid, BLOCK, (np.zeros(16), out), cluster=cluster)
    assert np.isnan(out).all()


def test_map_shared_rank_outside_the_cluster():
    with pytest.raises(KernelAssertionError, match=r"test_sim_cluster.py:\d+: map_shared_rank: "
                       r"rank 2 is outside the cluster of 2 block\(s\)"):
        rank_out_of_range.simulate(2, 4, (np.zeros(1, np.float32),), cluster=2)


def test_threads_split_between_barriers_are_reported():
    out = np.zeros(4, np.int64)
    with pytest.raises(KernelAssertionError, match=r"can never continue.*this_cluster\(\)\.sync"):
        half_sync.simulate(4, 8, (out,), cluster=2)


def test_exited_block_does_not_hold_the_others():
    """Threads that returned are not waited for: a cluster barrier waits for the threads of
    the cluster that have not exited, as on the GPU."""
    out = np.zeros(4, np.int64)
    skipped_sync.simulate(4, 8, (out,), cluster=2)
    np.testing.assert_array_equal(out, [0, 1, 1, 1])


# ---------------------------------------------------------------------------
# examples/jit_cluster_reduction.py

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "jit_cluster_reduction.py"


def _run_example(*argv):
    env = dict(os.environ, PYTHONPATH=str(ROOT), CUDA_VISIBLE_DEVICES="")  # no GPU, anywhere
    return subprocess.run([sys.executable, str(EXAMPLE), *argv], capture_output=True, text=True,
                          env=env, timeout=300, check=False)


def test_cluster_example_without_a_gpu_says_so_and_exits_1():  # examples/README.md
    done = _run_example()
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("jit_cluster_reduction.py: needs a CUDA GPU and none was "
                                  "found; run it with --simulate")


def test_cluster_example_simulated_matches_numpy():
    done = _run_example("--simulate", "4096")
    assert done.returncode == 0, done.stderr
    m = re.search(r"simulated on the CPU: clusters of 8, grid=16, n=4096: sum=(\S+) "
                  r"\(NumPy (\S+)\)", done.stdout)
    assert m is not None, done.stdout
    assert abs(float(m[1]) - float(m[2])) <= 1e-5  # both printed to 6 decimals


def test_cluster_example_refuses_gpus_older_than_sm90(monkeypatch):
    spec = importlib.util.spec_from_file_location("cluster_example", EXAMPLE)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)

    class OldDevice:
        compute_capability = "86"

    class NewDevice:
        compute_capability = "90"

    monkeypatch.setattr(example.jitkern, "is_available", lambda: True)
    monkeypatch.setattr(example.jitkern, "Device", OldDevice)
    assert example.gpu_problem() == ("the GPU is sm_86; thread-block clusters need compute "
                                     "capability 9.0 or newer (sm_90)")
    monkeypatch.setattr(example.jitkern, "Device", NewDevice)
    assert example.gpu_problem() is None
