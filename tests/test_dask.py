"""Dask (issues 20 and 29): jitkern kernels pickle into worker processes; a local cluster has one
worker per GPU (jitkern.dask.local_cluster), each seeing only its own GPU; workers on one arch
share the disk cache and workers on another arch build their own binaries; a cluster of
separately started scheduler and worker processes (as on several machines) runs the example's
kernels, survives a worker killed mid-run, and matches NumPy.

Without a GPU the workers run in the simulator (JITKERN_SIMULATE=1), or against the fake driver
with devices of different compute capability where compiling is the point."""

import contextlib
import importlib
import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import jitkern

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "dask_map_blocks.py"


def _pythonpath() -> str:
    """The checkout and the examples folder: workers import jitkern and the example's module."""
    return os.pathsep.join([str(ROOT), str(EXAMPLE.parent), os.environ.get("PYTHONPATH", "")])


def _run_example(*flags, tmp_path):
    pytest.importorskip("dask.distributed")
    env = dict(os.environ, JITKERN_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=_pythonpath(),
               DASK_TEMPORARY_DIRECTORY=str(tmp_path / "dask"))
    env.pop("JITKERN_SIMULATE", None)  # --simulate says it, for the workers too
    return subprocess.run([sys.executable, str(EXAMPLE), *flags], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=540)


def _scratch_in(tmp_path):
    """Dask's scratch folders (the scheduler's and workers' lock files) under ``tmp_path``,
    not in the system's temporary folder."""
    import dask

    return dask.config.set({"temporary-directory": str(tmp_path / "dask")})


def _example(monkeypatch):
    """examples/dask_map_blocks.py as the module ``dask_map_blocks``, which the workers import
    too (so its kernels and block functions pickle by reference)."""
    monkeypatch.syspath_prepend(str(EXAMPLE.parent))
    return importlib.import_module("dask_map_blocks")


def test_example_runs_a_worker_per_gpu(tmp_path, launch):
    """examples/dask_map_blocks.py on a local cluster: on the GPU one worker per visible GPU
    (CuPy chunks); in the simulator (``--simulate``) two workers on NumPy chunks. Each worker
    sees one CUDA_VISIBLE_DEVICES entry of its own and compiles each kernel at most once."""
    if not launch.simulated:
        pytest.importorskip("cupy")
    out = _run_example(*(["--simulate"] if launch.simulated else []), tmp_path=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "row norms and sum of squares of 2.5 * x + y match NumPy" in out.stdout
    workers = [line.split("CUDA_VISIBLE_DEVICES=")[1] for line in out.stdout.splitlines()
               if line.startswith("  worker with ")]
    entries = [w.split(":")[0] for w in workers]
    assert len(set(entries)) == len(entries) >= (2 if launch.simulated else 1), out.stdout
    counts = out.stdout.split("compiles per worker:")[1].strip().splitlines()[0]
    if launch.simulated:
        assert "2 workers, 4 chunks in the simulator" in out.stdout
        assert sorted(entries) == ["0", "1"]
        assert counts == "[0, 0]"  # the simulator compiles nothing
        assert all(w.endswith(": the simulator, 0 compiles") for w in workers), workers
    # each worker compiles each of its three kernels at most once (or loads them from the
    # disk cache another worker wrote)
    assert all(0 <= int(c) <= 3 for c in counts.strip("[]").split(",")), counts


def test_kernels_pickle_into_other_processes_and_match_numpy(rng, tmp_path):
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
    with _scratch_in(tmp_path), distributed.LocalCluster(
            n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            hyp, tripled, pid = client.submit(in_worker, fused, scale, x).result()
    assert pid != os.getpid()
    np.testing.assert_allclose(hyp, np.hypot(x, x) * 2, rtol=1e-6)
    np.testing.assert_array_equal(tripled, x * np.float32(3))


# -- jitkern.dask.local_cluster: one worker per GPU, the cache shared per arch

def test_local_cluster_refuses_devices_it_cannot_give_one_worker_each(monkeypatch):
    pytest.importorskip("dask.distributed")
    import jitkern.dask

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")  # no GPU visible, whatever the machine
    with pytest.raises(jitkern.CUDAError, match="no CUDA device is visible; simulate=True"):
        jitkern.dask.local_cluster(simulate=False)
    with pytest.raises(jitkern.CUDAError, match=r"devices=2 but 0 GPU\(s\) are visible"):
        jitkern.dask.local_cluster(2, simulate=False)
    with pytest.raises(jitkern.JitkernTypeError, match="devices='0,1': expected a count or"):
        jitkern.dask.local_cluster("0,1")
    with pytest.raises(ValueError, match=r"devices=\[0, '0'\] names a GPU twice"):
        jitkern.dask.local_cluster([0, "0"])
    with pytest.raises(ValueError, match="devices=0: expected a count of 1 or more"):
        jitkern.dask.local_cluster(0, simulate=True)
    with pytest.raises(ValueError, match="dask_cuda=True with simulate=True: dask-cuda's"):
        jitkern.dask.local_cluster(2, simulate=True, dask_cuda=True)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3, GPU-5d1c")
    assert jitkern.dask.visible_devices() == ["3", "GPU-5d1c"]


def _fake_gpu_compiler():
    """A function for a worker (built here so that it pickles by value): the example's three
    kernels launched on a fake GPU of compute capability ``cc`` (nothing runs; compiling and
    loading are real). It returns the worker's compiles and disk-cache hits for them, the arch
    of every binary loaded, and the worker's GPU entry."""

    def compile_on(cc):
        import dask_map_blocks as ex
        from jitkern.runtime import driver
        from jitkern.runtime.fakedriver import FakeDriver
        from jitkern.toolchain import cache, cubin

        before = dict(cache.stats)
        with driver.use(FakeDriver(cc=cc)) as fake:
            xy, z = jitkern.empty((2, 64, 8), np.float32), jitkern.empty((64, 8), np.float32)
            flat = [v.reshape(-1) for v in (xy[0], xy[1], z)]
            ex.saxpy[1, 256](np.float32(2.5), *flat, np.int32(z.size))
            ex.row_norms(z)
            ex.sum_of_squares(z)
            archs = sorted(cubin.elf_arch(image) for _device, image in fake.loads)
        return {"compiles": cache.stats["compiles"] - before["compiles"],
                "disk_hits": cache.stats["disk_hits"] - before["disk_hits"], "archs": archs,
                "visible": os.environ["CUDA_VISIBLE_DEVICES"], "pid": os.getpid(),
                "simulate": jitkern.config.settings.simulate}

    return compile_on


def _visible_device():
    return lambda: os.environ["CUDA_VISIBLE_DEVICES"]  # a lambda: it pickles by value


def test_workers_see_one_gpu_each_and_share_the_cache_per_arch(tmp_path, monkeypatch):
    """Four workers of jitkern.dask.local_cluster (the fallback without dask-cuda), on fake GPUs
    of two archs (9.0 for entries 0 and 1, 8.0 for 2 and 3), one disk cache: the first worker
    of each arch compiles the three kernels for its arch; the second, and a restarted worker
    (a fresh process), compile nothing and load their arch's binaries from the cache."""
    distributed = pytest.importorskip("dask.distributed")
    import jitkern.dask

    _example(monkeypatch)  # the workers import it too: a spawned process takes our sys.path
    monkeypatch.setenv("JITKERN_CACHE_DIR", str(tmp_path / "cache"))
    ccs = {"0": (9, 0), "1": (9, 0), "2": (8, 0), "3": (8, 0)}
    with _scratch_in(tmp_path), jitkern.dask.local_cluster(
            list(ccs), simulate=False, dask_cuda=False,
            local_directory=tmp_path / "workers") as cluster, \
            distributed.Client(cluster) as client:
        addresses = {v: a for a, v in client.run(_visible_device()).items()}
        assert sorted(addresses) == sorted(ccs)  # one worker per entry, each its own
        limits = {w["memory_limit"] for w in client.scheduler_info()["workers"].values()}
        assert limits == {0}  # GPU chunks are not host memory: nothing spills them to disk
        compile_on = _fake_gpu_compiler()

        def on(entries):
            futures = {e: client.submit(compile_on, ccs[e], workers=[addresses[e]],
                                        allow_other_workers=False, pure=False) for e in entries}
            return {e: f.result(timeout=300) for e, f in futures.items()}

        first, second = on(["0", "2"]), on(["1", "3"])
        (old_pid,) = client.run(os.getpid, workers=[addresses["1"]]).values()
        client.restart_workers([addresses["1"]], timeout=300)
        addresses = {v: a for a, v in client.run(_visible_device()).items()}
        restarted = on(["1"])
    for entry, got in {**first, **second, **restarted}.items():
        assert got["visible"] == entry and got["simulate"] is False
        assert got["archs"] == [10 * ccs[entry][0] + ccs[entry][1]] * 3, (entry, got)
    assert [first[e]["compiles"] for e in ("0", "2")] == [3, 3]  # each arch builds its own
    for got in (second["1"], second["3"], restarted["1"]):
        assert (got["compiles"], got["disk_hits"]) == (0, 3), got  # the cache's binaries
    assert restarted["1"]["pid"] != old_pid
    binaries = list((tmp_path / "cache" / "jitkern-entries" / "kernels").rglob("*.jkc"))
    assert len(binaries) == 6  # three kernels x two archs


# -- a cluster of separate processes, as on several machines

class _Processes:
    """Processes a test starts (``python -m dask ...``), each in a session of its own with its
    log in ``folder``; stopped, their children with them, when the block ends, however."""

    def __init__(self, folder: pathlib.Path, env: dict):
        self.folder, self.env, self.procs = folder, env, {}

    def start(self, name: str, *args, **env):
        log = open(self.folder / f"{name}.log", "w")
        with log:
            self.procs[name] = subprocess.Popen(
                [sys.executable, "-m", "dask", *map(str, args)], env=dict(self.env, **env),
                cwd=self.folder, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        return self.procs[name]

    def logs(self) -> str:
        return "\n".join(f"--- {name}.log\n{(self.folder / f'{name}.log').read_text()[-3000:]}"
                         for name in self.procs)

    def stop(self):
        for proc in self.procs.values():
            _signal_group(proc, signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
            _signal_group(proc, signal.SIGKILL)  # a worker its nanny left behind, if any
            proc.wait(timeout=30)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def _signal_group(proc, sig):
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, sig)  # the session this test started: the process and its children


def _scheduler_address(path: pathlib.Path, scheduler, procs, timeout: float = 120) -> str:
    """The address the scheduler writes to ``path`` once it listens (Dask's own wait for the
    file has no deadline, and would outlive a scheduler that failed to start)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            with contextlib.suppress(ValueError, KeyError):
                return json.loads(path.read_text())["address"]
        if scheduler.poll() is not None:
            break
        time.sleep(0.05)
    pytest.fail(f"the scheduler wrote no address to {path}\n{procs.logs()}")


def _hold_first_chunk():
    """A map_blocks function that passes chunks through, except that the first time the first
    chunk comes, it tells the test which process holds it and waits to be killed."""

    def hold(chunk, block_info=None):
        from distributed import Event, Queue

        if block_info[0]["chunk-location"][1] == 0 and not Event("killed").is_set():
            Queue("held").put(os.getpid())
            Event("never").wait(timeout=300)
        return chunk

    return hold


def test_separate_processes_run_the_example_and_survive_a_killed_worker(tmp_path, monkeypatch):
    """A scheduler and three workers started as their own processes (``dask scheduler``,
    ``dask worker`` with one CUDA_VISIBLE_DEVICES entry each, in the simulator), on 127.0.0.1:
    the example program given the scheduler's address runs there and matches NumPy; then the
    example's kernels over six chunks match NumPy though the worker holding the first chunk
    is killed mid-run: its nanny starts a fresh worker, and Dask draws the lost chunks again
    (each from its own seed) and retries the task that was running."""
    distributed = pytest.importorskip("dask.distributed")
    ex = _example(monkeypatch)
    env = dict(os.environ, PYTHONPATH=_pythonpath(), JITKERN_SIMULATE="1",
               JITKERN_CACHE_DIR=str(tmp_path / "cache"),
               DASK_TEMPORARY_DIRECTORY=str(tmp_path / "dask"))
    scheduler_file = tmp_path / "scheduler.json"
    with _Processes(tmp_path, env) as procs:
        scheduler = procs.start("scheduler", "scheduler", "--host", "127.0.0.1", "--port", "0",
                                "--no-dashboard", "--scheduler-file", scheduler_file,
                                "--idle-timeout", "600")
        for i in range(3):
            procs.start(f"worker{i}", "worker", "--scheduler-file", scheduler_file,
                        "--host", "127.0.0.1", "--nthreads", "1", "--no-dashboard",
                        "--name", f"gpu{i}", "--local-directory", tmp_path / f"worker{i}",
                        "--death-timeout", "120", CUDA_VISIBLE_DEVICES=str(i))
        address = _scheduler_address(scheduler_file, scheduler, procs)
        with distributed.Client(address, timeout=120) as client:
            client.wait_for_workers(3, timeout=300)
            pids = set(client.run(os.getpid).values())
            program = subprocess.run(  # the example itself, given the scheduler's address
                [sys.executable, str(EXAMPLE), "--simulate", "--scheduler", address], env=env,
                cwd=tmp_path, capture_output=True, text=True, timeout=300)
            assert program.returncode == 0, program.stdout + program.stderr + procs.logs()
            seed = int.from_bytes(os.urandom(4), "little")
            xy = ex.draw(seed, rows=192, cols=8, chunk_rows=32, xp=np)
            held = xy.map_blocks(_hold_first_chunk(), dtype=np.float32,
                                 meta=np.empty((0, 0, 0), np.float32))
            norms, total = ex.compute_graph(held, np)
            futures = client.compute([ex.on_host(xy), ex.on_host(norms), total])
            pid = distributed.Queue("held", client=client).get(timeout=300)
            assert pid in pids, procs.logs()
            distributed.Event("killed", client=client).set()
            os.kill(pid, signal.SIGKILL)  # the worker process running the held task
            got_xy, got_norms, got_total = (f.result(timeout=300) for f in futures)
            client.wait_for_workers(3, timeout=300)
            after = set(client.run(os.getpid).values())
    assert "3 workers, 6 chunks in the simulator: row norms and sum of squares" in program.stdout
    for entry in "012":
        assert f"worker with CUDA_VISIBLE_DEVICES={entry}: the simulator" in program.stdout
    assert len(after) == 3 and pid not in after and len(after - pids) == 1, (pids, after)
    assert got_xy.shape == (2, 192, 8) and got_norms.shape == (192,)
    ex.check(got_xy, got_norms, float(got_total))


def test_scaling_benchmark_runs_in_the_simulator(tmp_path):
    """benchmarks/bench_dask_scaling.py --simulate: its plumbing (a worker per device, chunks
    placed before the clock, calibration, the three kernels checked against NumPy on every
    worker, the tree reduction's total checked, the table and --json) on 1 and 2 workers."""
    pytest.importorskip("dask.distributed")
    out = tmp_path / "scaling.json"
    env = dict(os.environ, JITKERN_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=_pythonpath(),
               DASK_TEMPORARY_DIRECTORY=str(tmp_path / "dask"))
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_dask_scaling.py"),
                           "--simulate", "--workers", "1,2", "--repeats", "1",
                           "--chunk-seconds", "0.01", "--json", str(out)],
                          env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    figures = json.loads(out.read_text())
    rows = {(r["kernel"], r["workers"]): r for r in figures["rows"]}
    assert sorted(rows) == sorted((k, w) for k in ("compute", "bandwidth", "reduction")
                                  for w in (1, 2))
    assert all(rows[k, 1]["speedup"] == 1.0 for k in ("compute", "bandwidth", "reduction"))
    assert all(r["seconds"] > 0 and r["per_gpu_throughput"] > 0 for r in rows.values())
    assert [w["visible"] for w in figures["workers"]] == ["0", "1"]
    assert 0 < figures["bytes_moved_between_workers"] < 4 * figures["elements"]  # partials only
    assert "| compute-bound @rawkernel | 2 |" in proc.stdout
