"""Every example and benchmark says up front what it needs and exits cleanly without it (no
traceback), and no example writes into the current folder."""

import os
import pathlib
import subprocess
import sys

import pytest
from conftest import has_gpu

ROOT = pathlib.Path(__file__).resolve().parents[1]
# the benchmarks that time GPU work (bench_simulate times the CPU simulator: it runs anywhere)
GPU_BENCHMARKS = sorted(p.name for p in (ROOT / "benchmarks").glob("*.py")
                        if p.name not in ("bench_simulate.py", "common.py", "fake_arrays.py",
                                          "needs.py", "sanitize_examples.py"))
NEEDS_GPU = [("benchmarks", name, ()) for name in GPU_BENCHMARKS] + [
    ("examples", "export_load_time.py", ()),
]  # (the JIT examples' "needs a GPU" message: tests/sim/test_sim_examples.py)

pytestmark = pytest.mark.skipif(has_gpu(), reason="what the scripts do without a GPU")


def _env(tmp_path):
    env = dict(os.environ, JITKERN_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(ROOT))
    env.pop("JITKERN_SIMULATE", None)
    return env


def test_each_gpu_script_says_it_needs_a_gpu_and_exits_cleanly(tmp_path):
    procs = {}
    for folder, name, args in NEEDS_GPU:  # started together: each is mostly import time
        procs[name] = subprocess.Popen(
            [sys.executable, str(ROOT / folder / name), *args], cwd=tmp_path, env=_env(tmp_path),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    bad = {}
    for name, proc in procs.items():
        out, err = proc.communicate(timeout=300)
        if proc.returncode != 1 or "Traceback" in err or "needs a CUDA GPU" not in err:
            bad[name] = (proc.returncode, err[-500:])
    assert bad == {}
    assert sorted(os.listdir(tmp_path)) == ["cache"] or sorted(os.listdir(tmp_path)) == []


def test_mandelbrot_writes_its_png_where_asked_never_into_the_current_folder(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    out = tmp_path / "m.png"
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / "jit_mandelbrot.py"),
                           "--simulate", "--out", str(out)], cwd=work, env=_env(tmp_path),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert os.listdir(work) == []
