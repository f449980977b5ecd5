"""The compile cache: hits, misses, corrupt entries, concurrency, unusable folders."""

import os
import subprocess
import sys
import textwrap
import uuid

import pytest

from jitkern.backend import cache, compiler
from jitkern.config import settings


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(settings, "cache_dir", str(tmp_path))
    monkeypatch.setattr(settings, "disk_cache", True)
    cache.reset_disk_state()
    cache.clear_memory()
    yield tmp_path
    cache.reset_disk_state()


def _src():
    # a fresh kernel each time, so no other test's cache entry can answer
    return f'extern "C" __global__ void k(float* x) {{ x[0] = 1; }} // {uuid.uuid4()}'


def _entries(root):
    return [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(".jkc")]


def test_miss_then_memory_hit_then_disk_hit(cache_dir):
    src = _src()
    before = cache.stats["compiles"]
    first = compiler.compile_source(src, arch="sm_90")
    assert cache.stats["compiles"] == before + 1
    assert not first.from_cache
    again = compiler.compile_source(src, arch="sm_90")
    assert again is first
    cache.clear_memory()
    from_disk = compiler.compile_source(src, arch="sm_90")
    assert from_disk.from_cache
    assert from_disk.data == first.data
    assert from_disk.resources == first.resources
    assert cache.stats["compiles"] == before + 1
    # fanned out into a two-character subfolder
    (entry,) = _entries(cache_dir)
    assert os.path.basename(os.path.dirname(entry)) == os.path.basename(entry)[:2]


def test_key_covers_options_and_arch(cache_dir):
    src = _src()
    a = compiler.compile_source(src, arch="sm_90")
    b = compiler.compile_source(src, arch="sm_80")
    c = compiler.compile_source(src, arch="sm_90", options=("-DX=1",))
    assert len({a.key, b.key, c.key}) == 3


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "empty"])
def test_corrupt_entry_is_a_miss_and_is_rewritten(cache_dir, damage):
    src = _src()
    good = compiler.compile_source(src, arch="sm_90")
    (entry,) = _entries(cache_dir)
    blob = open(entry, "rb").read()
    if damage == "truncate":
        blob = blob[: len(blob) // 2]
    elif damage == "flip":
        blob = blob[:-10] + bytes([blob[-10] ^ 0xFF]) + blob[-9:]
    elif damage == "garbage":
        blob = os.urandom(len(blob))
    else:
        blob = b""
    open(entry, "wb").write(blob)
    cache.clear_memory()
    before = cache.stats["compiles"]
    again = compiler.compile_source(src, arch="sm_90")
    assert cache.stats["compiles"] == before + 1
    assert again.data == good.data
    cache.clear_memory()
    assert compiler.compile_source(src, arch="sm_90").from_cache  # rewritten whole


def test_read_only_folder_degrades_to_memory_with_one_warning(tmp_path, monkeypatch):
    if os.geteuid() == 0:
        target = "/proc/jitkern-cannot-write-here"
    else:
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        target = str(ro)
    monkeypatch.setattr(settings, "cache_dir", target)
    cache.reset_disk_state()
    with pytest.warns(RuntimeWarning, match="memory only"):
        compiler.compile_source(_src(), arch="sm_90")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiler.compile_source(_src(), arch="sm_90")  # no second warning
    cache.reset_disk_state()


def test_disk_cache_off(cache_dir, monkeypatch):
    monkeypatch.setattr(settings, "disk_cache", False)
    compiler.compile_source(_src(), arch="sm_90")
    assert _entries(cache_dir) == []


def test_concurrent_processes_compile_same_kernel(cache_dir):
    src = _src()
    script = textwrap.dedent(f"""
        import sys
        from jitkern.backend import compiler
        b = compiler.compile_source({src!r}, arch="sm_90")
        sys.stdout.write(b.key + " " + str(len(b.data)))
    """)
    env = dict(os.environ, JITKERN_CACHE_DIR=str(cache_dir))
    env["PYTHONPATH"] = os.pathsep.join([os.getcwd(), env.get("PYTHONPATH", "")])
    procs = [subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(4)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1] for o in outs]
    assert len({o[0] for o in outs}) == 1
    assert len(_entries(cache_dir)) == 1
    leftovers = [f for d, _, fs in os.walk(cache_dir) for f in fs if f.startswith(".tmp-")]
    assert leftovers == []
    cache.clear_memory()
    assert compiler.compile_source(src, arch="sm_90").from_cache


def test_clear_disk(cache_dir):
    compiler.compile_source(_src(), arch="sm_90")
    compiler.compile_source(_src(), arch="sm_90")
    assert cache.disk_usage()[0] == 2
    assert cache.clear_disk() == 2
    assert cache.disk_usage() == (0, 0)


def test_key_covers_jitkern_headers_only_when_something_is_included(monkeypatch):
    # A source that includes nothing does not depend on jitkern's headers, so its key
    # skips walking the header folder; one that includes something keys on them.
    target = compiler.Target("cubin", 90)
    digests = iter(["headers-v1", "headers-v2"])
    monkeypatch.setattr(compiler, "_include_hash", None)
    monkeypatch.setattr(compiler, "_include_digest", lambda: next(digests))
    plain = 'extern "C" __global__ void k() {}'
    included = "#include <jitkern/complex.cuh>\n" + plain

    def key(src, options=()):
        return compiler.cache_key(src, options, (), target, "nvrtc", ())

    k_plain, k_inc = key(plain), key(included)
    monkeypatch.setattr(compiler, "_include_hash", None)  # the headers changed: v2
    assert key(plain) == k_plain
    assert key(included) != k_inc
    assert key(plain, ("-include=jitkern/complex.cuh",)) != key(plain)
