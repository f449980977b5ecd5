"""Generated launch code: compiled once per text, kept in the disk cache, never trusted blindly."""

import os
import uuid

import pytest

from jitkern.toolchain import cache
from jitkern.runtime import codegen
from jitkern.config import settings


def _define(source: str, filename: str, env: dict, name: str):
    """What a launcher does with generated text (runtime/launcher.py): run the code object
    codegen keeps for it, in ``env``; the function named ``name``."""
    exec(codegen.compiled(source, filename), env)  # noqa: S102 - the test's own text
    return env[name]


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(settings, "cache_dir", str(tmp_path))
    monkeypatch.setattr(settings, "disk_cache", True)
    monkeypatch.setattr(codegen, "_memo", {})
    cache.reset_disk_state()
    yield tmp_path
    cache.reset_disk_state()


def _source(value):
    return f"# {uuid.uuid4()}\ndef f(a):\n    return a * {value}\n"


def _entries(root):
    return [os.path.join(d, n) for d, _, fs in os.walk(root) for n in fs if n.endswith(".jkc")]


def test_compiled_once_then_read_back_from_disk(cache_dir, monkeypatch):
    src = _source(3)
    assert _define(src, "<test gen>", {}, "f")(5) == 15
    assert len(_entries(cache_dir)) == 1
    # A fresh process: nothing in memory, compile() must not be needed.
    monkeypatch.setattr(codegen, "_memo", {})
    monkeypatch.setattr(codegen, "compile", lambda *a: pytest.fail("compiled again"),
                        raising=False)
    assert _define(src, "<test gen>", {}, "f")(7) == 21


def test_each_env_gets_its_own_function(cache_dir):
    src = "def f():\n    return K\n"
    one = _define(src, "<test env>", {"K": 1}, "f")
    two = _define(src, "<test env>", {"K": 2}, "f")
    assert (one(), two()) == (1, 2)


@pytest.mark.parametrize("damage", ["truncate", "flip"])
def test_damaged_entry_is_recompiled(cache_dir, monkeypatch, damage):
    src = _source(4)
    codegen.compiled(src, "<test damage>")
    (path,) = _entries(cache_dir)
    blob = open(path, "rb").read()
    blob = blob[: len(blob) // 2] if damage == "truncate" else blob[:-3] + bytes(
        b ^ 0xFF for b in blob[-3:])
    with open(path, "wb") as f:
        f.write(blob)
    monkeypatch.setattr(codegen, "_memo", {})
    assert _define(src, "<test damage>", {}, "f")(2) == 8
    assert open(path, "rb").read() != blob  # rewritten whole


def test_no_disk_cache_still_works(cache_dir, monkeypatch):
    monkeypatch.setattr(settings, "disk_cache", False)
    assert _define(_source(5), "<test off>", {}, "f")(2) == 10
    assert _entries(cache_dir) == []
