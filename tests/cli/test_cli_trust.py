"""python -m jitkern says what is wrong instead of a traceback, and `cache` tells the truth
about the folder: what clear left, and a folder it cannot read."""

import os
import subprocess
import sys
import uuid

import pytest

import jitkern
from jitkern import __main__ as cli
from jitkern.toolchain import cache, nvrtc as compiler


def _env(**extra):
    env = dict(os.environ, **extra)
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(jitkern.__file__))
    return env


@pytest.mark.parametrize("variable", ["JITKERN_CACHE", "JITKERN_SIMULATE", "JITKERN_DEBUG"])
def test_bad_environment_variable_is_a_message_and_status_2(tmp_path, variable):
    value = f"maybe-{uuid.uuid4().hex[:6]}"
    out = subprocess.run([sys.executable, "-m", "jitkern", "info"], capture_output=True,
                         text=True, env=_env(**{variable: value}), cwd=tmp_path, timeout=120)
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    assert f"{variable}={value!r}" in out.stderr and "expected one of" in out.stderr
    # a script importing jitkern still gets the exception
    script = subprocess.run([sys.executable, "-c", "import jitkern"], capture_output=True,
                            text=True, env=_env(**{variable: value}), cwd=tmp_path, timeout=120)
    assert script.returncode == 1 and "JitkernValueError" in script.stderr


def test_cache_clear_lists_what_it_left(own_cache, capsys):
    src = f'extern "C" __global__ void k(float* x) {{ x[0] = 1; }} // {uuid.uuid4()}'
    compiler.compile_source(src, arch="sm_90")
    stray = own_cache / cache.ENTRIES_FOLDER / "kernels" / f"mine-{uuid.uuid4().hex[:6]}.txt"
    stray.write_text("not jitkern's")
    before = cache.disk_usage()[0]
    assert cli.main(["cache", "clear"]) == 0
    out = capsys.readouterr().out
    assert f"removed {before} cache entries" in out and before >= 1
    assert cache.disk_usage() == (0, 0)
    assert "left 1 files and folders jitkern did not write" in out and str(stray) in out
    assert stray.read_text() == "not jitkern's"


def test_cache_on_an_unreadable_folder_says_so(own_cache, capsys, monkeypatch):
    src = f'extern "C" __global__ void k(float* x) {{ x[0] = 1; }} // {uuid.uuid4()}'
    compiler.compile_source(src, arch="sm_90")
    locked = str(own_cache / cache.ENTRIES_FOLDER / "kernels")
    real_scandir = os.scandir

    def scandir(path="."):  # chmod 000 does not stop root, who runs CI
        if os.fspath(path) == locked:
            raise PermissionError(13, "Permission denied", locked)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    assert cli.main(["cache"]) == 0
    out = capsys.readouterr().out
    assert f"unreadable: {locked}: Permission denied" in out
    assert "read-only" not in out and "(usable)" not in out


@pytest.mark.parametrize("argv", [["demo", "--arch", "sm_1000"],
                                  ["demo", "--simulate", "--arch", "sm_1000"]])
def test_demo_arch_is_checked_once_up_front(capsys, argv):
    assert cli.main(argv) == 2
    captured = capsys.readouterr()
    assert "--arch sm_1000" in captured.err and "is not a target NVRTC" in captured.err
    assert captured.out == ""  # refused before any demo ran


@pytest.mark.skipif(__import__("conftest").has_gpu(), reason="the demo without a GPU")
def test_demo_without_a_gpu_shows_each_kernel_as_written_not_the_prelude(capsys):
    assert cli.main(["demo", "--arch", "sm_80"]) == 0
    out = capsys.readouterr().out
    assert "string-kernel prelude" not in out
    assert len(out.splitlines()) < 60
    assert out.count("registers") == 4 and "sm_80" in out
    assert '"z = (x - y) * (x - y)"' in out and "def grid_stride_copy" in out
    assert cli.main(["demo", "--arch", "sm_80", "--full"]) == 0
    full = capsys.readouterr().out
    assert full.count("string-kernel prelude ----") == 2
