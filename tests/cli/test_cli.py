"""python -m jitkern: version, help, the cache command, info's report of the cache folder."""

import os
import subprocess
import sys
import uuid

import pytest

import jitkern
from jitkern import __main__ as cli
from jitkern.toolchain import cache, nvrtc as compiler
from jitkern.config import settings


def _compile_one():
    src = f'extern "C" __global__ void k(float* x) {{ x[0] = 1; }} // {uuid.uuid4()}'
    return compiler.compile_source(src, arch="sm_90")


def test_version(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"jitkern {jitkern.__version__}"


@pytest.mark.parametrize("argv", [[], ["info"], ["demo"], ["cache"]])
def test_every_command_has_plain_help(capsys, argv):
    with pytest.raises(SystemExit) as info:
        cli.main([*argv, "--help"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    assert "``" not in text and ":func:" not in text and ":class:" not in text
    parser = cli._parser()
    commands = parser._subparsers._group_actions[0]
    for action in commands._choices_actions:
        assert action.help, action.dest  # every subcommand says what it does
    if not argv:
        for name in ("info", "demo", "cache"):
            assert name in text


def test_cache_without_action_shows_folder_kinds_and_size(own_cache, capsys):
    _compile_one()
    _compile_one()
    assert cli.main(["cache"]) == 0
    out = capsys.readouterr().out
    assert str(own_cache) in out and "usable" in out
    total = cache.disk_usage()[0]
    entries_line = next(line for line in out.splitlines() if line.startswith("cache entries"))
    assert entries_line.split()[2] == str(total)
    binary_line = next(line for line in out.splitlines() if line.strip().startswith("binary"))
    assert binary_line.split()[1] == "2"
    for kind in cache.KINDS:
        assert kind in out


def test_cache_clear_removes_all_and_exits_zero(own_cache, capsys):
    _compile_one()
    total = cache.disk_usage()[0]
    assert total >= 1
    assert cli.main(["cache", "clear"]) == 0
    assert f"removed {total} cache entries" in capsys.readouterr().out
    assert cache.disk_usage() == (0, 0)


def test_cache_clear_reports_what_it_could_not_remove_and_exits_nonzero(own_cache, capsys,
                                                                       monkeypatch):
    _compile_one()
    real_unlink = os.unlink

    def unlink(path, *a, **k):
        if path.endswith(".jkc") and os.sep + "kernels" + os.sep in path:
            raise PermissionError(13, "Permission denied", path)
        return real_unlink(path, *a, **k)

    monkeypatch.setattr(os, "unlink", unlink)
    assert cli.main(["cache", "clear"]) == 1
    captured = capsys.readouterr()
    assert "could not remove 1" in captured.err and "Permission denied" in captured.err
    with pytest.raises(jitkern.JitkernRuntimeError, match="could not remove 1"):
        jitkern.clear_cache()


def test_info_reports_a_file_where_the_cache_folder_should_be(tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    monkeypatch.setattr(settings, "cache_dir", str(blocker / "jitkern"))
    cache.reset_disk_state()
    assert cli.main(["info"]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.startswith("cache folder"))
    assert "unusable" in line and str(blocker) in line
    cache.reset_disk_state()


def test_folder_state_reports_read_only(tmp_path, monkeypatch):
    import errno
    import tempfile

    def refuse(*a, **k):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    assert cli.folder_state(str(tmp_path)).startswith("read-only")


def test_info_shows_cuda_python_parts(capsys, monkeypatch):
    versions = {"cuda-bindings": "13.0.1", "cuda-core": "1.2.0", "cuda-pathfinder": "1.3.0",
                "numpy": "2.0.0"}
    monkeypatch.setattr(cli, "_version_of", versions.get)
    rows = {name.strip(): value for name, value in cli._versions()}
    assert rows["cuda-bindings"] == "13.0.1"
    assert rows["cuda-core"] == "1.2.0"
    assert rows["cuda-pathfinder"] == "1.3.0"
    assert "not installed" not in rows["cuda-python"]  # only the metapackage is missing
    monkeypatch.setattr(cli, "_version_of", {"numpy": "2.0.0"}.get)
    rows = {name.strip(): value for name, value in cli._versions()}
    assert rows["cuda-python"].startswith("not installed")


def test_shadowing_folder_is_reported(tmp_path, monkeypatch):
    # jitkern is imported from the current folder's jitkern/; an installed copy elsewhere
    root = os.path.dirname(os.path.dirname(os.path.abspath(jitkern.__file__)))
    monkeypatch.chdir(root)
    site = tmp_path / "site"
    (site / "jitkern").mkdir(parents=True)
    (site / "jitkern" / "__init__.py").write_text("")
    monkeypatch.setattr(sys, "path", [root, *sys.path, str(site)])
    monkeypatch.setattr(sys, "path_importer_cache", dict(sys.path_importer_cache))
    hidden = cli.shadowed_install()
    assert hidden is not None and os.path.realpath(hidden) != os.path.join(root, "jitkern")
    monkeypatch.chdir(tmp_path)
    assert cli.shadowed_install() is None  # not run from the folder that holds jitkern/


def test_module_entry_point_runs():
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(jitkern.__file__)))
    out = subprocess.run([sys.executable, "-m", "jitkern", "--version"], capture_output=True,
                         text=True, env=env, check=False)
    assert out.returncode == 0 and out.stdout.strip() == f"jitkern {jitkern.__version__}"
