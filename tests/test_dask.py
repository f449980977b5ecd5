"""Dask (issue 20 part 6): jitkern kernels pickle into worker processes, each worker runs them
(or compiles once), and map_blocks over a chunked array matches NumPy. CI runs the example on
a local cluster of two worker processes with the simulator; the GPU run uses CuPy chunks."""

import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import jitkern

EXAMPLE = pathlib.Path(__file__).resolve().parents[1] / "examples" / "dask_map_blocks.py"


def _run_example(*flags, tmp_path):
    pytest.importorskip("dask.distributed")
    env = dict(os.environ, JITKERN_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=os.pathsep.join(
        [str(EXAMPLE.parents[1]), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, str(EXAMPLE), *flags], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=540)


def test_example_on_two_worker_processes(tmp_path, launch):
    """examples/dask_map_blocks.py on two worker processes, on the GPU (CuPy chunks) and in the
    simulator (``--simulate``: NumPy chunks)."""
    if not launch.simulated:
        pytest.importorskip("cupy")
    out = _run_example(*(["--simulate"] if launch.simulated else []), "--workers", "2",
                       tmp_path=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "row norms of 2.5 * x + y match NumPy" in out.stdout
    counts = out.stdout.split("compiles per worker:")[1].strip().splitlines()[0]
    if launch.simulated:
        assert "2 workers, 4 chunks in the simulator" in out.stdout
        assert counts == "[0, 0]"  # the simulator compiles nothing
    # each worker compiles each of its two kernels at most once (or loads them from the
    # disk cache the other worker wrote)
    assert all(0 <= int(c) <= 2 for c in counts.strip("[]").split(",")), counts


def test_kernels_pickle_into_other_processes_and_match_numpy(rng):
    distributed = pytest.importorskip("dask.distributed")
    fused = jitkern.fuse(lambda a, b: np.hypot(a, b) * 2)

    @jitkern.rawkernel()
    def scale(x, out):
        i = jitkern.jit.threadIdx.x
        out[i] = x[i] * 3

    def in_worker(f, k, a):
        out = np.full_like(a, np.nan)
        k.simulate[1, a.size](a, out)
        return f.simulate(a, a), out, os.getpid()

    x = rng.standard_normal((64,)).astype(np.float32)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            hyp, tripled, pid = client.submit(in_worker, fused, scale, x).result()
    assert pid != os.getpid()
    np.testing.assert_allclose(hyp, np.hypot(x, x) * 2, rtol=1e-6)
    np.testing.assert_array_equal(tripled, x * np.float32(3))
