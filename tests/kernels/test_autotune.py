"""jitkern.autotune: candidates timed once per argument signature and size bucket, the
fastest kept per GPU model in the disk cache, failures skipped with their reason.

The mechanism is tested in the simulator with fake timers (``timer=``: the public hook), so
which configuration wins is known; the twin tests run on the GPU too (docs/autotune.md)."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import jitkern
from jitkern import Config, jit
from jitkern.config import settings


@pytest.fixture
def own_cache(tmp_path, monkeypatch):
    """A cache folder for this test alone: choices made under one test's fake timer must
    not be read back by another test's tuner of the same kernel."""
    folder = tmp_path / "cache"
    monkeypatch.setattr(settings, "cache_dir", str(folder))
    return folder


def make_scale(ITEMS):
    """y = a * x, ITEMS consecutive elements per thread (a compile-time constant)."""

    @jitkern.rawkernel()
    def scale(x, y, a, n):
        base = (jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x) * ITEMS
        for k in range(ITEMS):
            i = base + k
            if i < n:
                y[i] = a * x[i]

    return scale


def scale_grid(cfg, x, y, a, n):
    per = cfg.block * cfg.ITEMS
    return (int(n) + per - 1) // per


@jitkern.rawkernel()
def accumulate(x, y, n):
    i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    if i < n:
        y[i] += x[i]


@jitkern.rawkernel()
def total(x, out, n):
    i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    if i < n:
        jit.atomic_add(out, 0, x[i])


def flat_grid(cfg, x, out, n):
    return (int(n) + cfg.block - 1) // cfg.block


class FakeTimer:
    """Milliseconds from a table keyed by (block, ITEMS), optionally per size; counts calls."""

    def __init__(self, table, small=None, cut=None):
        self.table, self.small, self.cut = table, small, cut
        self.calls = []

    def __call__(self, trial):
        self.calls.append((trial.config, trial.size))
        table = self.small if self.cut is not None and trial.size < self.cut else self.table
        return table[(trial.config.block, trial.config.constants.get("ITEMS", 1))]


CONFIGS = [Config(block=b, ITEMS=i) for b in (32, 64, 128) for i in (1, 4)]


def _scale_args(launch, rng, n):
    x = rng.standard_normal(n).astype(np.float32)
    a = np.float32(rng.uniform(0.5, 2.0))
    return x, a, launch.to_device(x), launch.poisoned(n, np.float32)


def test_the_fastest_candidate_runs_and_its_result_equals_numpy(launch, rng, own_cache):
    times = {(32, 1): 5.0, (32, 4): 4.0, (64, 1): 3.0, (64, 4): 0.5, (128, 1): 2.0, (128, 4): 1.0}
    timer = FakeTimer(times)
    tk = launch(jitkern.autotune(make_scale, configs=CONFIGS, grid=scale_grid, timer=timer))
    n = launch.pick(5000, 300)
    x, a, dx, dy = _scale_args(launch, rng, n)
    tk(dx, dy, a, np.int32(n))
    launch.synchronize()
    np.testing.assert_allclose(launch.get(dy), a * x, rtol=1e-6)
    assert tk.config_for(dx, dy, a, np.int32(n)) == Config(block=64, ITEMS=4)
    assert [c for c, _ in timer.calls] == CONFIGS  # each candidate timed once, in order
    assert {s for _, s in timer.calls} == {n}


def test_the_choice_is_used_from_then_on_without_timing(rng, own_cache):
    timer = FakeTimer({(b, i): b * 0.01 + i for b in (32, 64, 128) for i in (1, 4)})
    tk = jitkern.autotune(make_scale, configs=CONFIGS, grid=scale_grid, timer=timer).simulate
    n = 200
    for _ in range(3):
        x = rng.standard_normal(n).astype(np.float32)
        y = np.full(n, np.nan, np.float32)
        tk(x, y, np.float32(3), np.int32(n))
        np.testing.assert_allclose(y, 3 * x, rtol=1e-6)
    assert len(timer.calls) == len(CONFIGS)
    assert tk.timings == len(CONFIGS)
    assert tk.config_for(x, y, np.float32(3), np.int32(n)) == Config(block=32, ITEMS=1)


def test_each_size_bucket_gets_its_own_choice(rng, own_cache):
    small = {(b, i): (1.0 if (b, i) == (32, 1) else 2.0) for b in (32, 64, 128) for i in (1, 4)}
    large = {(b, i): (1.0 if (b, i) == (128, 4) else 2.0) for b in (32, 64, 128) for i in (1, 4)}
    timer = FakeTimer(large, small=small, cut=256)
    tk = jitkern.autotune(make_scale, configs=CONFIGS, grid=scale_grid, timer=timer).simulate
    choices = {}
    for n in (100, 600, 1000):  # buckets 128, 1024, 1024
        x = rng.standard_normal(n).astype(np.float32)
        y = np.full(n, np.nan, np.float32)
        tk(x, y, np.float32(-1.5), np.int32(n))
        np.testing.assert_allclose(y, -1.5 * x, rtol=1e-6)
        choices[n] = tk.config_for(x, y, np.float32(-1.5), np.int32(n))
    assert choices[100] == Config(block=32, ITEMS=1)
    assert choices[600] == choices[1000] == Config(block=128, ITEMS=4)
    assert sorted({s for _, s in timer.calls}) == [100, 600]  # 1000 shares 600's bucket
    report = tk.autotune_report()
    assert "size bucket <= 128 (size 100)" in report and "size bucket <= 1024" in report


def test_a_size_function_chooses_the_bucket(rng, own_cache):
    timer = FakeTimer({(b, 1): float(b) for b in (32, 64)})
    configs = [Config(block=32), Config(block=64)]
    tk = jitkern.autotune(accumulate, configs=configs, grid=flat_grid, timer=timer,
                          size=lambda x, y, n: 5000, restore=("y",)).simulate
    x = rng.standard_normal(40)
    y = rng.standard_normal(40)
    expected = y + x
    tk(x, y, np.int64(40))
    np.testing.assert_allclose(y, expected, rtol=1e-12, atol=1e-15)
    assert timer.calls and {s for _, s in timer.calls} == {5000}
    assert "size bucket <= 8192 (size 5000)" in tk.autotune_report()


def test_restore_keeps_an_in_place_kernel_applied_once(launch, rng, own_cache):
    configs = [Config(block=b) for b in (32, 64, 128)]
    timer = FakeTimer({(32, 1): 2.0, (64, 1): 1.0, (128, 1): 3.0})

    def run_each(trial):  # a timer that launches, as the real ones do, several times
        for _ in range(3):
            trial()
        return timer(trial)

    tk = launch(jitkern.autotune(accumulate, configs=configs, grid=flat_grid, timer=run_each,
                                 restore=("y",)))
    n = launch.pick(4000, 200)
    x, y0 = rng.standard_normal(n), rng.standard_normal(n)
    dy = launch.to_device(y0)
    tk(launch.to_device(x), dy, np.int64(n))
    launch.synchronize()
    np.testing.assert_allclose(launch.get(dy), y0 + x, rtol=1e-12)
    assert tk.config_for(launch.to_device(x), dy, np.int64(n)) == Config(block=64)


def test_reset_to_zero_gives_an_accumulator_one_run(launch, rng, own_cache):
    configs = [Config(block=32), Config(block=64)]
    tk = launch(jitkern.autotune(total, configs=configs, grid=flat_grid,
                                 timer=FakeTimer({(32, 1): 1.0, (64, 1): 2.0}),
                                 reset_to_zero=(1,)))
    n = launch.pick(3000, 150)
    x = rng.integers(-50, 50, n).astype(np.int32)
    out = launch.zeros(1, np.int32)
    tk(launch.to_device(x), out, np.int32(n))
    launch.synchronize()
    assert int(launch.get(out)[0]) == int(x.sum())


def test_candidates_that_cannot_launch_or_compile_are_skipped_with_the_reason(rng, own_cache):
    def make(BAD):
        @jitkern.rawkernel()
        def copy(x, y, n):
            i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
            if i < n:
                y[i] = x[i] + BAD

        return copy

    configs = [Config(block=2048, BAD=0), Config(block=64, BAD=0), Config(block=64, BAD="s")]
    timer = FakeTimer({(64, 1): 1.0})
    tk = jitkern.autotune(make, configs=configs, grid=flat_grid, timer=timer).simulate
    x = rng.standard_normal(100)
    y = np.full(100, np.nan)
    tk(x, y, np.int64(100))
    np.testing.assert_array_equal(y, x)
    assert [c for c, _ in timer.calls] == [Config(block=64, BAD=0)]
    report = tk.autotune_report()
    assert ("block=2048 BAD=0  skipped: LaunchError: cannot launch copy: block x=2,048 is over "
            "CUDA's limit of 1,024") in report
    bad = next(line for line in report.splitlines() if "BAD='s'" in line)
    assert "skipped: Jit" in bad and "BAD" in bad
    assert "* block=64 BAD=0" in report


def test_no_candidate_that_launches_is_an_error_naming_each_reason(own_cache):
    tk = jitkern.autotune(accumulate, configs=[Config(block=2048), Config(block=4096)],
                          grid=flat_grid, timer=FakeTimer({})).simulate
    x = np.ones(8)
    with pytest.raises(jitkern.JitkernRuntimeError, match="no configuration compiled") as info:
        tk(x, np.zeros(8), np.int64(8))
    assert "block=2048: LaunchError" in str(info.value)
    assert "block=4096: LaunchError" in str(info.value)
    assert isinstance(info.value, RuntimeError)


def test_wrong_uses_are_refused_with_what_to_do():
    with pytest.raises(jitkern.JitkernValueError, match="need a factory"):
        jitkern.autotune(accumulate, configs=[Config(block=32, ITEMS=2)], grid=flat_grid)
    with pytest.raises(jitkern.JitkernTypeError, match="needs grid="):
        jitkern.autotune(accumulate, configs=[Config(block=32)])
    with pytest.raises(jitkern.JitkernValueError, match="configs is empty"):
        jitkern.autotune(accumulate, configs=[], grid=flat_grid)
    with pytest.raises(jitkern.JitkernValueError, match="needs block="):
        jitkern.autotune(accumulate, configs=[Config(shared_mem=64)], grid=flat_grid)
    with pytest.raises(jitkern.JitkernTypeError, match="expected a kernel or a factory"):
        jitkern.autotune(42, configs=[Config(block=32)], grid=flat_grid)
    tk = jitkern.autotune(accumulate, configs=[Config(block=32)], grid=flat_grid).simulate
    with pytest.raises(jitkern.KernelArgumentError, match=r"keywords \['size'\]"):
        tk(np.ones(4), np.ones(4), np.int64(4), size=4)
    with pytest.raises(jitkern.JitkernValueError, match=r"restore='z' names no argument.*'y'"):
        jitkern.autotune(accumulate, configs=[Config(block=32)], grid=flat_grid, restore=("z",))
    with pytest.raises(jitkern.JitkernAttributeError, match="has no constant 'ITEMS'"):
        _ = Config(block=32).ITEMS


TUNED_MODULE = textwrap.dedent('''
    import numpy as np
    import jitkern
    from jitkern import Config, jit


    def make_scale(ITEMS):
        @jitkern.rawkernel()
        def scale(x, y, a, n):
            base = (jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x) * ITEMS
            for k in range(ITEMS):
                i = base + k
                if i < n:
                    y[i] = a * x[i]

        return scale


    def grid(cfg, x, y, a, n):
        return (int(n) + cfg.block * cfg.ITEMS - 1) // (cfg.block * cfg.ITEMS)


    CONFIGS = [Config(block=b, ITEMS=i) for b in (32, 64) for i in (1, 2)]


    def tuned(timer=None):
        return jitkern.autotune(make_scale, configs=CONFIGS, grid=grid, timer=timer)
''')

READER = textwrap.dedent('''
    import sys
    import numpy as np
    import tuned_scale

    def refuse(trial):
        raise SystemExit("timed again: " + repr(trial.config))

    tk = tuned_scale.tuned(refuse)
    if sys.argv[1] == "sim":
        tk = tk.simulate
    n = int(sys.argv[2])
    x = np.random.default_rng().standard_normal(n).astype(np.float32)
    if sys.argv[1] == "sim":
        dx, y = x, np.full(n, np.nan, np.float32)
        tk(dx, y, np.float32(2), np.int32(n))
        host = y
    else:
        import jitkern
        dx, y = jitkern.asarray(x), jitkern.full(n, np.nan, np.float32)
        tk(dx, y, np.float32(2), np.int32(n))
        host = y.get()
    from jitkern.toolchain import cache
    print("IDENTITY", cache.identity()[1])
    print("MATCH", bool(np.allclose(host, 2 * x, rtol=1e-6)))
    print("CHOSE", tk.config_for(dx, y, np.float32(2), np.int32(n)))
    print(tk.autotune_report())
''')


def _reader(tmp_path, where: str, n: int):
    """Runs READER in a new process with this test's cache folder; its stdout."""
    import jitkern as package

    root = os.path.dirname(os.path.dirname(os.path.abspath(package.__file__)))
    env = dict(os.environ, JITKERN_CACHE_DIR=settings.cache_dir,
               PYTHONPATH=os.pathsep.join([str(tmp_path), root]))
    env.pop("JITKERN_SIMULATE", None)
    done = subprocess.run([sys.executable, "-c", READER, where, str(n)], env=env,
                          capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _fresh_module(monkeypatch, tmp_path):
    """This test's tuned_scale.py, imported afresh (an earlier test's module of that name,
    from another folder, must not answer the import)."""
    (tmp_path / "tuned_scale.py").write_text(TUNED_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "tuned_scale", raising=False)
    import tuned_scale

    assert os.path.dirname(tuned_scale.__file__) == str(tmp_path)
    return tuned_scale


def test_another_process_reads_the_choice_from_the_disk_cache(tmp_path, monkeypatch, own_cache,
                                                              shared_identity):
    tuned_scale = _fresh_module(monkeypatch, tmp_path)
    timer = FakeTimer({(32, 1): 4.0, (32, 2): 3.0, (64, 1): 2.0, (64, 2): 5.0})
    tk = tuned_scale.tuned(timer).simulate
    x = np.ones(150, np.float32)
    tk(x, np.zeros(150, np.float32), np.float32(2), np.int32(150))
    assert len(timer.calls) == 4
    out = _reader(tmp_path, "sim", 130)  # the same bucket (256), a different size
    assert f"IDENTITY {shared_identity[1]}" in out, "jitkern's files changed while the test ran"
    assert "MATCH True" in out
    assert "CHOSE Config(block=64 ITEMS=1)" in out
    assert "read from the disk cache (timed by an earlier process)" in out
    assert "2.0000 ms" in out  # the first process's timings are shown
    # another bucket is new to the cache: the reader would have to time it, and refuses
    with pytest.raises(AssertionError, match="timed again"):
        _reader(tmp_path, "sim", 700)


def test_a_corrupt_entry_is_timed_again(rng, own_cache):
    timer = FakeTimer({(32, 1): 1.0, (64, 1): 2.0})
    configs = [Config(block=32), Config(block=64)]
    first = jitkern.autotune(accumulate, configs=configs, grid=flat_grid, timer=timer,
                             restore=(1,)).simulate
    x, y = rng.standard_normal(50), rng.standard_normal(50)
    first(x, y.copy(), np.int64(50))
    entries = [os.path.join(d, f) for d, _, fs in os.walk(own_cache) for f in fs
               if os.sep + "autotune" in d]  # jitkern's entries of the autotune kind
    assert len(entries) == 1
    with open(entries[0], "r+b") as f:  # flip one payload byte: the SHA-256 no longer holds
        f.seek(-3, os.SEEK_END)
        byte = f.read(1)
        f.seek(-3, os.SEEK_END)
        f.write(bytes([byte[0] ^ 0xFF]))
    again = jitkern.autotune(accumulate, configs=configs, grid=flat_grid, timer=timer,
                             restore=(1,)).simulate
    expected = y + x
    again(x, y, np.int64(50))
    np.testing.assert_allclose(y, expected, rtol=1e-12, atol=1e-15)
    assert len(timer.calls) == 4 and "timed here" in again.autotune_report()


# -- on the GPU: real timings with CUDA events -------------------------------------------


@pytest.mark.gpu
def test_gpu_tuning_times_every_candidate_and_another_process_reuses_it(tmp_path, monkeypatch,
                                                                        own_cache, rng,
                                                                        shared_identity):
    tk = _fresh_module(monkeypatch, tmp_path).tuned()
    n = 1 << 20
    x = rng.standard_normal(n).astype(np.float32)
    y = jitkern.full(n, np.nan, np.float32)
    tk(jitkern.asarray(x), y, np.float32(2), np.int32(n))
    np.testing.assert_allclose(y.get(), 2 * x, rtol=1e-6)
    report = tk.autotune_report()
    assert report.count(" ms") == 4 and "timed here" in report
    assert jitkern.Device().name in report
    out = _reader(tmp_path, "gpu", n - 1000)
    assert f"IDENTITY {shared_identity[1]}" in out, "jitkern's files changed while the test ran"
    assert "MATCH True" in out and "read from the disk cache" in out
    chosen = tk.config_for(jitkern.asarray(x), y, np.float32(2), np.int32(n))
    assert f"CHOSE {chosen!r}" in out


def test_gpu_too_much_shared_memory_is_skipped(rng, own_cache, launch):
    configs = [Config(block=128), Config(block=128, shared_mem=1 << 20)]
    tk = jitkern.autotune(accumulate, configs=configs, grid=flat_grid, restore=(1,))
    n = 10000
    x, y0 = rng.standard_normal(n), rng.standard_normal(n)
    y = launch.to_device(y0)
    launch(tk)(launch.to_device(x), y, np.int64(n))
    np.testing.assert_allclose(launch.get(y), y0 + x, rtol=1e-12)
    line = next(s for s in launch(tk).autotune_report().splitlines() if "shared_mem=1048576" in s)
    assert "skipped:" in line
    assert launch(tk).config_for(launch.to_device(x), y, np.int64(n)) == Config(block=128)


def test_gpu_elementwise_and_raw_kernels_tune_their_block_size(rng, own_cache, launch):
    ew = jitkern.ElementwiseKernel("T x, T y", "T z", "z = x * y + 1", "fma1")
    tk = jitkern.autotune(ew, configs=[Config(block=b) for b in (64, 256, 1024)])
    n = launch.pick(70000, 3000)
    x, y = rng.standard_normal(n), rng.standard_normal(n)
    z = launch(tk)(launch.to_device(x), launch.to_device(y))
    np.testing.assert_allclose(launch.get(z), x * y + 1, rtol=1e-12, atol=1e-14)
    assert launch(tk).config_for(launch.to_device(x), launch.to_device(y)) in tk.configs

    raw = jitkern.RawKernel(r'''
    extern "C" __global__ void twice(const float* x, float* y, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) y[i] = 2.0f * x[i];
    }''', "twice")
    tr = jitkern.autotune(raw, configs=[Config(block=b) for b in (128, 512)], grid=flat_grid)
    xs = rng.standard_normal(5000).astype(np.float32)
    out = launch.full(5000, np.nan, np.float32)
    launch(tr)(launch.to_device(xs), out, np.int32(5000))
    np.testing.assert_allclose(launch.get(out), 2 * xs, rtol=1e-6)


# -- the example -------------------------------------------------------------------------

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "autotune_block_size.py")


def _load_example():
    import importlib.util

    spec = importlib.util.spec_from_file_location("autotune_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_example_runs_in_the_simulator(capsys, own_cache):
    _load_example().main(["--simulate"])  # it checks its results against NumPy itself
    out = capsys.readouterr().out
    assert "size bucket <= 128 (size 96): timed here" in out
    assert "size bucket <= 2048 (size 1500): timed here" in out
    assert out.count("block=2048 ITEMS=1  skipped: LaunchError") == 2
    assert "timings are CPU wall-clock" in out
    _load_example().main(["--simulate"])  # a second run reads both choices from the disk
    assert capsys.readouterr().out.count("read from the disk cache") == 2


@pytest.mark.gpu
def test_gpu_example_tunes_both_sizes(capsys, own_cache):
    _load_example().main([])
    out = capsys.readouterr().out
    assert "size bucket <= 16384 (size 16384): timed here" in out
    assert "size bucket <= 16777216 (size 16777216): timed here" in out
    assert "block=2048 ITEMS=1  skipped:" in out
    print(out)  # which configurations the two sizes chose (docs/autotune.md)


def test_string_kernels_tune_in_the_simulator(rng, own_cache):
    ew = jitkern.ElementwiseKernel("T x, T y", "T z", "z = x * y + 1", "fma_one")
    timer = FakeTimer({(32, 1): 2.0, (64, 1): 1.0})
    tk = jitkern.autotune(ew, configs=[Config(block=32), Config(block=64)], timer=timer).simulate
    x, y = rng.standard_normal(300), rng.standard_normal(300)
    z = tk(x, y)
    np.testing.assert_allclose(np.asarray(z), x * y + 1, rtol=1e-12)
    assert tk.config_for(x, y) == Config(block=64)
    assert [c for c, _ in timer.calls] == [Config(block=32), Config(block=64)]

    def make_raw(SCALE):
        return jitkern.RawKernel(f"""
        extern "C" __global__ void scaled(const double* x, double* y, int n) {{
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) y[i] = {SCALE} * x[i];
        }}""", "scaled")

    times = {(32, 1): 3.0, (128, 1): 1.0}
    configs = [Config(block=b, SCALE=3) for b in (32, 128, 2048)]
    tr = jitkern.autotune(make_raw, configs=configs, grid=flat_grid,
                          timer=lambda t: times[(t.config.block, 1)]).simulate
    out = np.full(300, np.nan)
    tr(x, out, np.int32(300))
    np.testing.assert_allclose(out, 3 * x, rtol=1e-12)
    assert tr.config_for(x, out, np.int32(300)) == Config(block=128, SCALE=3)
    assert "block=2048 SCALE=3  skipped: LaunchError" in tr.autotune_report()
