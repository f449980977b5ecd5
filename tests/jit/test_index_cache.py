"""The on-disk index: a fresh kernel object (as in a new process) skips parsing when nothing
changed, and parses again when a global the kernel read changed."""

import importlib.util
import sys

import numpy as np
import pytest

from jitkern.backend import cache
from jitkern.jit import frontend, kernel as kernel_mod
from jitkern.jit.kernel import JitKernel

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
    fresh = JitKernel(mod.scaled.py_func)
    compiles = cache.stats["compiles"]
    again = fresh.inspect(x, 8, arch="sm_80")
    assert again.source == first.source
    assert cache.stats["compiles"] == compiles
    assert "2" not in [c for c in fresh.cached_codes]  # keyed by types


def test_changed_global_invalidates_the_index(tmp_path, monkeypatch):
    mod = load(tmp_path, "index_mod_b", 3)
    x = np.zeros(8, np.float32)
    mod.scaled.inspect(x, 8, arch="sm_80")
    mod.OFFSET = np.float32(1.5)  # a global of the kernel
    monkeypatch.setattr(frontend, "parse_function", refuse_parsing)
    with pytest.raises(Parsed):
        JitKernel(mod.scaled.py_func).inspect(x, 8, arch="sm_80")


def test_changed_global_of_a_device_function_invalidates_the_index(tmp_path, monkeypatch):
    mod = load(tmp_path, "index_mod_c", 3)
    x = np.zeros(8, np.float32)
    mod.scaled.inspect(x, 8, arch="sm_80")
    mod.SCALE = 4  # read by the device function only
    monkeypatch.setattr(frontend, "parse_function", refuse_parsing)
    with pytest.raises(Parsed):
        JitKernel(mod.scaled.py_func).inspect(x, 8, arch="sm_80")


def test_index_key_depends_on_the_signature(tmp_path):
    mod = load(tmp_path, "index_mod_d", 3)
    k = mod.scaled
    f32 = kernel_mod._index_key(k, (kernel_mod.arg_type(np.zeros(2, np.float32), True),))
    f64 = kernel_mod._index_key(k, (kernel_mod.arg_type(np.zeros(2, np.float64), True),))
    assert f32 != f64


def test_inspect_twice_compiles_once(tmp_path):
    mod = load(tmp_path, "index_mod_e", 5)
    x = np.zeros(8, np.float64)
    mod.scaled.inspect(x, 8, arch="sm_90")
    compiles = cache.stats["compiles"]
    mod.scaled.inspect(x, 8, arch="sm_90")
    assert cache.stats["compiles"] == compiles
