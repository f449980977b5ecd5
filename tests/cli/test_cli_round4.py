"""The command line, as a newcomer meets it (issue 27): its usage line names the command that
was run, its output piped into ``head`` ends quietly, the no-GPU banner of ``demo`` points at
``demo --simulate``, and a ``jitkern/`` folder that is not the package (a clone's root) in the
current folder is an error message, not a TypeError from the shadow check."""

import os
import subprocess
import sys
import textwrap

import pytest

import jitkern
from jitkern import __main__ as cli
from jitkern.cli import demo as demo_module

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(jitkern.__file__)))


def _env():
    return dict(os.environ, PYTHONPATH=ROOT)


def test_the_console_scripts_usage_line_is_jitkern(tmp_path):
    script = ("import sys; sys.argv[0] = '/venv/bin/jitkern'; "
              "from jitkern.__main__ import main; sys.exit(main(['--help']))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=_env(), cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("usage: jitkern [-h]"), out.stdout[:80]
    module = subprocess.run([sys.executable, "-m", "jitkern", "--help"], capture_output=True,
                            text=True, env=_env(), cwd=tmp_path, timeout=120)
    assert module.stdout.startswith("usage: python -m jitkern [-h]"), module.stdout[:80]


def test_output_into_a_closed_pipe_ends_without_a_traceback(tmp_path):
    read, write = os.pipe()
    os.close(read)  # the reader (head) has gone: every write is EPIPE
    try:
        out = subprocess.run([sys.executable, "-m", "jitkern", "cache"], stdout=write,
                             stderr=subprocess.PIPE, text=True, env=_env(), cwd=tmp_path,
                             timeout=120)
    finally:
        os.close(write)
    assert "Traceback" not in out.stderr and "BrokenPipeError" not in out.stderr, out.stderr
    assert out.returncode == 128 + 13


def test_the_no_gpu_banner_of_demo_points_at_demo_simulate(capsys, monkeypatch):
    if jitkern.is_available():
        pytest.skip("a GPU is present: the demo runs on it")
    monkeypatch.setattr(demo_module, "DEMOS", [])  # the banner only
    monkeypatch.setattr(sys, "argv", ["/venv/bin/jitkern"])
    assert cli.main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "no GPU here" in out
    assert "To run every demo on the CPU instead, in jitkern's simulator: jitkern demo " \
           "--simulate" in out


#: An editable install's finder (a meta path finder after Python's PathFinder, as
#: setuptools' is): jitkern's modules come from ROOT, not from a folder on sys.path.
EDITABLE = textwrap.dedent("""
    import importlib.abc, importlib.machinery, importlib.util, os, runpy, sys
    ROOT = {root!r}
    class Editable(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name != "jitkern" and not name.startswith("jitkern."):
                return None
            base = os.path.join(ROOT, *name.split("."))
            if os.path.isdir(base):
                return importlib.util.spec_from_file_location(
                    name, os.path.join(base, "__init__.py"), submodule_search_locations=[base])
            return importlib.util.spec_from_file_location(name, base + ".py")
    after = sys.meta_path.index(importlib.machinery.PathFinder) + 1
    sys.meta_path.insert(after, Editable())  # ahead of any installed jitkern's finder
    sys.path[0] = ""  # as python -m puts the current folder first
    sys.argv = ["jitkern", "demo"]
    runpy.run_module("jitkern", run_name="__main__", alter_sys=True)
""")


def test_a_clone_named_jitkern_in_the_current_folder_is_a_clear_error(tmp_path):
    clone = tmp_path / "jitkern"  # a clone's root: the package is one level down
    clone.mkdir()
    (clone / "pyproject.toml").write_text("[project]\nname = 'jitkern'\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-c", EDITABLE.format(root=ROOT)],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert "Traceback" not in out.stderr, out.stderr
    assert out.returncode == 2
    assert f"error: 'import jitkern' found {clone}, a jitkern/ folder that is not the " \
           "jitkern package (it has no __init__.py: a clone's root?)" in out.stderr
