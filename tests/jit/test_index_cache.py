"""The on-disk index: a fresh kernel object (as in a new process) skips parsing when nothing
changed, and parses again when a global the kernel read changed."""

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import jitkern
from jitkern.toolchain import cache
from jitkern.compiler import frontend
from jitkern.kernels import jit as kernel_mod, jit_index
from jitkern.kernels.jit import JitKernel

MODULE = """
import numpy as np
from jitkern import jit
from jitkern.jit import rawkernel

SCALE = {scale}


@rawkernel(device=True)
def helper(v):
    return v * SCALE


@rawkernel()
def scaled(x, n):
    i = jit.grid(1)
    if i < n:
        x[i] = helper(x[i]) + OFFSET


OFFSET = np.float32(0.5)
"""


def _fresh(func) -> JitKernel:
    """A kernel object of ``func`` as in a new process: nothing kept in memory."""
    jitkern.clear_memo()
    return JitKernel(func)


def load(tmp_path, name, scale):
    path = tmp_path / f"{name}.py"
    path.write_text(MODULE.format(scale=scale))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


class Parsed(Exception):
    pass


def refuse_parsing(func):
    raise Parsed(func.__name__)


def test_fresh_kernel_object_skips_parsing(tmp_path, monkeypatch):
    mod = load(tmp_path, "index_mod_a", 3)
    x = np.zeros(8, np.float32)
    first = mod.scaled.inspect(x, 8, arch="sm_80")
    monkeypatch.setattr(frontend, "parse_function", refuse_parsing)
    fresh = _fresh(mod.scaled.py_func)
    compiles = cache.stats["compiles"]
    again = fresh.inspect(x, 8, arch="sm_80")
    assert again.source == first.source
    assert cache.stats["compiles"] == compiles
    # cached_codes is keyed by the argument-type signature, the source is the same
    (types,) = fresh.cached_codes
    assert types == (kernel_mod.arg_type(x, True), kernel_mod.arg_type(8, True))
    assert fresh.cached_codes[types] == first.source


def test_changed_global_invalidates_the_index(tmp_path, monkeypatch):
    mod = load(tmp_path, "index_mod_b", 3)
    x = np.zeros(8, np.float32)
    mod.scaled.inspect(x, 8, arch="sm_80")
    mod.OFFSET = np.float32(1.5)  # a global of the kernel
    monkeypatch.setattr(frontend, "parse_function", refuse_parsing)
    with pytest.raises(Parsed):
        _fresh(mod.scaled.py_func).inspect(x, 8, arch="sm_80")


def test_changed_global_of_a_device_function_invalidates_the_index(tmp_path, monkeypatch):
    mod = load(tmp_path, "index_mod_c", 3)
    x = np.zeros(8, np.float32)
    mod.scaled.inspect(x, 8, arch="sm_80")
    mod.SCALE = 4  # read by the device function only
    monkeypatch.setattr(frontend, "parse_function", refuse_parsing)
    with pytest.raises(Parsed):
        _fresh(mod.scaled.py_func).inspect(x, 8, arch="sm_80")


def test_index_key_depends_on_the_signature(tmp_path):
    mod = load(tmp_path, "index_mod_d", 3)
    k = mod.scaled
    f32 = jit_index.index_key(k, (kernel_mod.arg_type(np.zeros(2, np.float32), True),))
    f64 = jit_index.index_key(k, (kernel_mod.arg_type(np.zeros(2, np.float64), True),))
    assert f32 != f64


def test_inspect_twice_compiles_once(tmp_path):
    mod = load(tmp_path, "index_mod_e", 5)
    x = np.zeros(8, np.float64)
    mod.scaled.inspect(x, 8, arch="sm_90")
    compiles = cache.stats["compiles"]
    mod.scaled.inspect(x, 8, arch="sm_90")
    assert cache.stats["compiles"] == compiles


# -- the index is an entry of the shared disk cache: versioned, checksummed, cleared ----


def _index_entries(folder):
    root = folder / "jitkern-entries" / "jit-index"
    return sorted(p for p in root.rglob("*") if p.is_file())


def _warm(tmp_path, name):
    mod = load(tmp_path, name, 3)
    x = np.zeros(8, np.float32)
    first = mod.scaled.inspect(x, 8, arch="sm_80")
    return mod, x, first


def test_tampered_index_entry_is_a_miss_and_is_replaced(tmp_path, own_cache, monkeypatch):
    mod, x, first = _warm(tmp_path, "index_mod_f")
    (entry,) = _index_entries(own_cache)
    blob = entry.read_bytes()
    # still valid JSON, but not what jitkern wrote: the source now computes something else
    entry.write_bytes(blob.replace(b"0.5", b"9.5"))
    parsed = []
    real = frontend.parse_function
    monkeypatch.setattr(frontend, "parse_function", lambda f: parsed.append(f) or real(f))
    again = _fresh(mod.scaled.py_func).inspect(x, 8, arch="sm_80")
    assert parsed, "a tampered entry was trusted"
    assert again.source == first.source
    assert entry.read_bytes() == blob  # replaced by the good entry


@pytest.mark.parametrize("field, bad", [("plans", "zzz"), ("symbol", "1 bad"),
                                         ("binaries", {"arch:sm_80": 5}), ("source", None),
                                         ("cooperative", "yes"), ("fingerprints", []),
                                         ("sites", [["f.py", 1]])])
def test_well_formed_entry_with_a_bad_field_is_a_miss(tmp_path, own_cache, monkeypatch, field,
                                                      bad):
    # An entry with a valid checksum (written by a buggy or foreign writer) whose fields
    # do not have their shape must not make every new process fail.
    mod, x, first = _warm(tmp_path, "index_mod_g_" + field)
    key = jit_index.index_key(mod.scaled, tuple(kernel_mod.arg_type(a, True) for a in (x, 8)))
    _header, payload = cache.disk_get(key, "jit-index")
    data = json.loads(payload)
    data[field] = bad
    cache.disk_put(key, {}, json.dumps(data).encode(), "jit-index")
    cache.clear_memory()
    again = _fresh(mod.scaled.py_func).inspect(x, 8, arch="sm_80")
    assert again.source == first.source
    assert json.loads(cache.disk_get(key, "jit-index")[1])[field] != bad  # replaced


def test_upgraded_code_generator_does_not_reuse_old_generated_source(tmp_path, own_cache,
                                                                     monkeypatch):
    mod, x, _first = _warm(tmp_path, "index_mod_h")
    version, _generator = cache.identity()
    monkeypatch.setattr(cache, "_identity", (version, "another-code-generator"))
    monkeypatch.setattr(frontend, "parse_function", refuse_parsing)
    with pytest.raises(Parsed):
        _fresh(mod.scaled.py_func).inspect(x, 8, arch="sm_80")


def test_new_jitkern_version_does_not_reuse_old_generated_source(tmp_path, own_cache,
                                                                 monkeypatch):
    mod, x, _first = _warm(tmp_path, "index_mod_i")
    _version, generator = cache.identity()
    monkeypatch.setattr(cache, "_identity", ("99.0", generator))
    monkeypatch.setattr(frontend, "parse_function", refuse_parsing)
    with pytest.raises(Parsed):
        _fresh(mod.scaled.py_func).inspect(x, 8, arch="sm_80")


def test_clear_cache_removes_the_index(tmp_path, own_cache, monkeypatch):
    mod, x, _first = _warm(tmp_path, "index_mod_j")
    assert _index_entries(own_cache)
    assert jitkern.clear_cache() >= 2  # the binary and the index entry at least
    assert _index_entries(own_cache) == []
    monkeypatch.setattr(frontend, "parse_function", refuse_parsing)
    with pytest.raises(Parsed):
        _fresh(mod.scaled.py_func).inspect(x, 8, arch="sm_80")


def test_cache_clear_command_removes_the_index(tmp_path, own_cache, capsys):
    from jitkern.__main__ import main

    _warm(tmp_path, "index_mod_k")
    assert main(["cache", "clear"]) == 0
    assert _index_entries(own_cache) == []
    assert not [p for p in own_cache.rglob("*") if p.is_file()]
    assert "removed" in capsys.readouterr().out


# -- the index's binaries follow the user's headers (issue 18) ------------------------

_HEADER_KERNEL = """
import os, sys
import numpy as np
from jitkern import jit
from jitkern.toolchain import cache


@jit.rawkernel(options=({include!r}, "-include=marker.h"))
def marked(x):
    x[0] = 1


info = marked.inspect(np.zeros(1, np.int32), arch="sm_90")
print(cache.stats["compiles"], info.cubin.hex())
"""


def _run_header_kernel(tmp_path, include):
    script = tmp_path / "marked_kernel.py"
    script.write_text(_HEADER_KERNEL.format(include=f"-I{include}"))
    env = dict(os.environ, JITKERN_CACHE_DIR=str(tmp_path / "cache"))
    env["PYTHONPATH"] = os.pathsep.join([os.getcwd(), env.get("PYTHONPATH", "")])
    proc = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                          text=True, timeout=180, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    compiles, cubin = proc.stdout.split()[-2:]
    return int(compiles), bytes.fromhex(cubin)


def test_editing_a_header_a_jit_kernel_includes_uses_the_new_binary_in_the_next_process(
        tmp_path):
    include = tmp_path / "include"
    include.mkdir()
    first, second = (int.from_bytes(os.urandom(3), "little") for _ in range(2))
    second += first + 1  # a different marker
    header = include / "marker.h"
    header.write_text(f'extern "C" __global__ void jk_marker_{first}() {{}}\n')
    compiles, old = _run_header_kernel(tmp_path, include)
    assert compiles == 1 and f"jk_marker_{first}".encode() in old
    assert _run_header_kernel(tmp_path, include) == (0, old)  # the index and cache answer
    header.write_text(f'extern "C" __global__ void jk_marker_{second}() {{}}\n')
    compiles, new = _run_header_kernel(tmp_path, include)
    assert compiles == 1
    assert f"jk_marker_{second}".encode() in new
    assert f"jk_marker_{first}".encode() not in new
