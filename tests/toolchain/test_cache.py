"""The compile cache: hits, misses, corrupt entries, concurrency, unusable folders."""

import os
import subprocess
import sys
import textwrap
import uuid

import pytest

from jitkern.toolchain import cache, nvrtc as compiler
from jitkern.config import settings


def _define(source: str, filename: str, env: dict, name: str):
    """What a launcher does with generated text (runtime/launcher.py): run the code object
    codegen keeps for it, in ``env``; the function named ``name``."""
    from jitkern.runtime import codegen

    exec(codegen.compiled(source, filename), env)  # noqa: S102 - the test's own text
    return env[name]


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


def _entries(root, folder="kernels"):
    root = os.path.join(root, cache.ENTRIES_FOLDER, folder)
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


def test_unusable_folder_degrades_to_memory_with_one_warning(tmp_path, monkeypatch):
    # A file where the cache folder should be: unusable even for root (CI runs as root,
    # and chmod does not stop root from writing).
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file, not a folder")
    monkeypatch.setattr(settings, "cache_dir", str(blocker / "cache"))
    monkeypatch.setattr(settings, "disk_cache", True)
    cache.reset_disk_state()
    with pytest.warns(RuntimeWarning, match="memory only"):
        first = compiler.compile_source(_src(), arch="sm_90")
    assert first.data[:4] == b"\x7fELF"
    assert cache.disabled_reason() is not None and "not-a-folder" in cache.disabled_reason()
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiler.compile_source(_src(), arch="sm_90")  # no second warning
    assert blocker.read_text() == "a file, not a folder"
    cache.reset_disk_state()


def test_disk_cache_off(cache_dir, monkeypatch):
    monkeypatch.setattr(settings, "disk_cache", False)
    compiler.compile_source(_src(), arch="sm_90")
    assert _entries(cache_dir) == []


def test_concurrent_processes_compile_same_kernel(cache_dir, shared_identity):
    src = _src()
    script = textwrap.dedent(f"""
        import sys
        from jitkern.toolchain import cache, nvrtc as compiler
        b = compiler.compile_source({src!r}, arch="sm_90")
        sys.stdout.write(cache.identity()[1] + " " + b.key + " " + str(len(b.data)))
    """)
    env = dict(os.environ, JITKERN_CACHE_DIR=str(cache_dir))
    # the children import the jitkern this process runs, wherever the suite was started
    root = os.path.dirname(os.path.dirname(os.path.abspath(compiler.__file__)))
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(root), env.get("PYTHONPATH", "")])
    procs = [subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(4)]
    try:  # a loaded machine may take minutes; no child outlives the test
        outs = [p.communicate(timeout=900) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    assert all(p.returncode == 0 for p in procs), [o[1] for o in outs]
    identities = {o[0].split()[0] for o in outs}
    assert identities == {shared_identity[1]}, "jitkern's files changed while the test ran"
    assert len({o[0] for o in outs}) == 1
    assert len(_entries(cache_dir)) == 1
    leftovers = [f for d, _, fs in os.walk(cache_dir) for f in fs if f.startswith(".tmp-")]
    assert leftovers == []
    cache.clear_memory()
    assert compiler.compile_source(src, arch="sm_90").from_cache


def test_clear_disk(cache_dir):
    compiler.compile_source(_src(), arch="sm_90")
    compiler.compile_source(_src(), arch="sm_90")
    assert cache.disk_usage_by_kind()["binary"][0] == 2
    report = cache.clear_disk()
    assert report.failed == []
    assert report.removed >= 2
    assert cache.disk_usage() == (0, 0)


def test_key_covers_jitkern_headers_only_when_something_is_included(monkeypatch):
    # A source that includes nothing does not depend on jitkern's headers, so its key
    # skips walking the header folder; one that includes something keys on them.
    target = compiler.Arch("cubin", 90)
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


# -- one mechanism for every kind of entry ------------------------------------------


@pytest.mark.parametrize("kind", sorted(cache.KINDS))
def test_every_kind_round_trips_under_its_own_folder(cache_dir, kind):
    key = cache.make_key("test-entry", kind, uuid.uuid4().hex)
    payload = os.urandom(64)
    cache.disk_put(key, {"note": "x"}, payload, kind)
    (entry,) = _entries(cache_dir, cache.KINDS[kind])
    assert os.path.basename(entry) == key + ".jkc"
    header, got = cache.disk_get(key, kind)
    assert got == payload and header["note"] == "x"
    other = next(k for k in cache.KINDS if k != kind)
    assert cache.disk_get(key, other) is None  # a key is only valid for its kind


@pytest.mark.parametrize("where", ["header", "payload", "magic"])
@pytest.mark.parametrize("kind", sorted(cache.KINDS))
def test_a_changed_byte_anywhere_is_a_miss(cache_dir, kind, where):
    key = cache.make_key("test-entry", uuid.uuid4().hex)
    cache.disk_put(key, {"note": "original"}, b"payload-bytes", kind)
    (entry,) = _entries(cache_dir, cache.KINDS[kind])
    blob = open(entry, "rb").read()
    if where == "header":
        blob = blob.replace(b"original", b"tampered")
    elif where == "payload":
        blob = blob[:-1] + b"X"
    else:
        blob = b"XXXX" + blob[4:]
    open(entry, "wb").write(blob)
    corrupt = cache.stats["corrupt"]
    assert cache.disk_get(key, kind) is None
    assert cache.stats["corrupt"] == corrupt + 1


def test_tampered_binary_header_is_a_miss(cache_dir):
    # the header (log, lowered names, resources) is checksummed like the payload
    src = _src()
    good = compiler.compile_source(src, arch="sm_90")
    (entry,) = _entries(cache_dir)
    blob = open(entry, "rb").read()
    registers = f'"registers": {good.resources["k"].registers}'.encode()
    assert registers in blob
    open(entry, "wb").write(blob.replace(registers, b'"registers": 99999'))
    cache.clear_memory()
    again = compiler.compile_source(src, arch="sm_90")
    assert not again.from_cache
    assert again.resources["k"].registers == good.resources["k"].registers


def test_keys_depend_on_version_and_generator_identity(cache_dir, monkeypatch):
    src = _src()
    first = compiler.compile_source(src, arch="sm_90")
    version, generator = cache.identity()
    for changed in ((version + ".post1", generator), (version, "0" * 64)):
        monkeypatch.setattr(cache, "_identity", changed)
        cache.clear_memory()
        before = cache.stats["compiles"]
        upgraded = compiler.compile_source(src, arch="sm_90")
        assert upgraded.key != first.key
        assert cache.stats["compiles"] == before + 1  # nothing an older jitkern wrote is read


def test_entry_written_by_another_identity_is_a_miss_even_under_the_same_key(cache_dir,
                                                                             monkeypatch):
    key = cache.make_key("test-entry", uuid.uuid4().hex)
    monkeypatch.setattr(cache, "_identity", ("0.0.1", "f" * 64))
    cache.disk_put(key, {}, b"old", "binary")
    monkeypatch.undo()
    monkeypatch.setattr(settings, "cache_dir", str(cache_dir))
    monkeypatch.setattr(settings, "disk_cache", True)
    assert cache.disk_get(key, "binary") is None


def test_generator_identity_covers_the_package_sources():
    ident = cache.generator_identity()
    assert len(ident) == 64 and ident == cache.generator_identity()
    assert cache.identity()[0] == __import__("jitkern").__version__


def test_clear_disk_removes_every_kind_and_old_layouts_but_nothing_else(cache_dir):
    import numpy as np

    from jitkern.runtime import codegen
    from jitkern.toolchain import discovery as toolchain
    from jitkern.jit import rawkernel

    compiler.compile_source(_src(), arch="sm_90")
    _define(f"# {uuid.uuid4()}\ndef f():\n    return 1\n", "<clear test>", {}, "f")
    toolchain._remember_toolchain_facts({"archs": [90], "version": [13, 0]})
    cache.disk_put(cache.make_key("a tuning"), {}, b"{}", kind="autotune")  # kernels.autotune

    @rawkernel()
    def copy(x, y):
        y[0] = x[0]

    copy.inspect(np.zeros(2, np.float32), np.zeros(2, np.float32), arch="sm_90")
    old_key = uuid.uuid4().hex * 2  # an older jitkern's entry, directly under the folder
    old_entry = cache_dir / "jit-index" / old_key[:2] / (old_key + ".jkc")
    old_entry.parent.mkdir(parents=True)
    old_entry.write_bytes(b"JKC2" + os.urandom(40))
    # not jitkern's, though in folders named like its kinds: must survive, and be listed
    mine = [cache_dir / "notes.txt", cache_dir / "python" / "script.py",
            cache_dir / "kernels" / "mine.cu", cache_dir / "jit-index" / "ab" / "abcdef.json"]
    for path in mine:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"keep me {uuid.uuid4()}")
    texts = {path: path.read_text() for path in mine}
    usage = cache.disk_usage_by_kind()
    assert all(usage[kind][0] >= 1 for kind in cache.KINDS), usage

    report = cache.clear_disk()
    assert report.failed == []
    assert report.removed >= len(cache.KINDS) + 1
    assert not old_entry.exists()
    left = sorted(os.path.join(d, f) for d, _, fs in os.walk(cache_dir) for f in fs)
    assert left == sorted(map(str, mine))
    assert {path: path.read_text() for path in mine} == texts
    assert sorted(report.left) == sorted(map(str, mine[1:]))  # what clear left, named


def test_clear_disk_reports_what_it_could_not_remove(cache_dir, monkeypatch):
    compiler.compile_source(_src(), arch="sm_90")
    compiler.compile_source(_src(), arch="sm_90")
    stuck = _entries(cache_dir)[0]
    real_unlink = os.unlink

    def unlink(path, *a, **k):
        if path == stuck:
            raise PermissionError(13, "Permission denied", path)
        return real_unlink(path, *a, **k)

    monkeypatch.setattr(os, "unlink", unlink)
    report = cache.clear_disk()
    assert report.removed == 1
    assert report.failed == [(stuck, "Permission denied")]


def test_generator_identity_changes_when_a_generator_file_changes(tmp_path, monkeypatch):
    package = tmp_path / "jitkern"
    (package / "jit").mkdir(parents=True)
    emitter = package / "jit" / "statements.py"
    emitter.write_text("EMIT = 'old'\n")
    (package / "notes.txt").write_text("not source")
    monkeypatch.setattr(cache, "_PACKAGE_ROOT", str(package))
    before = cache.generator_identity()
    (package / "notes.txt").write_text("still not source, longer")
    assert cache.generator_identity() == before  # only source files count
    emitter.write_text("EMIT = 'new, upgraded'\n")
    assert cache.generator_identity() != before
    again = cache.generator_identity()
    os.utime(emitter, ns=(1, 1))  # same text, another install of it
    assert cache.generator_identity() != again


def test_warm_up_computes_the_identity_once_and_runs_then(tmp_path):
    # The driver's start runs warm_up(); a fresh process has no identity before it, the
    # identity after it is the one computed directly, and a second call does nothing.
    code = (
        "from jitkern.toolchain import cache\n"
        "assert cache._identity is None\n"
        "ran = []\n"
        "cache.warm_up(then=lambda: ran.append(1))\n"
        "assert cache._identity == (cache.VERSION, cache.generator_identity())\n"
        "cache.warm_up(then=lambda: ran.append(2))\n"
        "print(ran)\n"
    )
    env = dict(os.environ, JITKERN_CACHE_DIR=str(tmp_path))
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[1]"
