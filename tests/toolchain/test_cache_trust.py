"""The disk cache cannot be turned against its users: its key covers the user's own headers,
`clear` removes only jitkern's files, special files never block, and executable entries
are only trusted from folders no other user can write (docs/cache.md, "Trust model")."""

import os
import stat
import subprocess
import sys
import textwrap
import uuid
import warnings

import pytest

from jitkern.toolchain import cache, nvrtc as compiler


def _define(source: str, filename: str, env: dict, name: str):
    """What a launcher does with generated text (runtime/launcher.py): run the code object
    codegen keeps for it, in ``env``; the function named ``name``."""
    from jitkern.runtime import codegen

    exec(codegen.compiled(source, filename), env)  # noqa: S102 - the test's own text
    return env[name]


@pytest.fixture
def cache_dir(own_cache):
    return own_cache  # (tests/conftest.py)


def _entries(root, folder="kernels"):
    root = os.path.join(root, cache.ENTRIES_FOLDER, folder)
    return [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(".jkc")]


def _run(code: str, cache_folder) -> str:
    env = dict(os.environ, JITKERN_CACHE_DIR=str(cache_folder))
    env["PYTHONPATH"] = os.pathsep.join([os.getcwd(), env.get("PYTHONPATH", "")])
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


# -- 1. the key covers every header the compile reads from the user's folders ---------


def test_editing_a_user_header_recompiles_in_the_next_process(tmp_path):
    include = tmp_path / "include"
    (include / "deep").mkdir(parents=True)
    (include / "value.h").write_text('#include "deep/more.h"\n#define VALUE 3\n')
    more = include / "deep" / "more.h"
    first, second = (int.from_bytes(os.urandom(2), "little") + 1 for _ in range(2))
    more.write_text(f"#define MORE {first}\n")
    src = (f'// {uuid.uuid4()}\n#include "value.h"\n'
           'extern "C" __global__ void k(int* x) { x[0] = VALUE + MORE; }\n')
    code = f"""
        from jitkern.toolchain import nvrtc as compiler
        b = compiler.compile_source({src!r}, options=({'-I' + str(include)!r},), arch="sm_90")
        print(b.from_cache, b.data.hex())
    """
    cache_folder = tmp_path / "cache"
    fresh, data1 = _run(code, cache_folder).split()
    again, data2 = _run(code, cache_folder).split()
    assert (fresh, again) == ("False", "True") and data1 == data2
    more.write_text(f"#define MORE {first + second}\n")  # an edit two includes deep
    edited, data3 = _run(code, cache_folder).split()
    assert edited == "False"
    assert data3 != data1


def test_include_folder_that_does_not_exist_is_named(tmp_path):
    missing = tmp_path / f"nowhere-{uuid.uuid4().hex[:8]}"
    src = '#include "x.h"\nextern "C" __global__ void k() {}'
    with pytest.raises(FileNotFoundError, match="include folder") as info:
        compiler.compile_source(src, options=(f"-I{missing}",), arch="sm_90")
    assert str(missing) in str(info.value)
    import jitkern

    assert isinstance(info.value, jitkern.JitkernError)


# -- 2. clear removes only what jitkern wrote -----------------------------------------


def test_clear_in_a_shared_folder_removes_only_jitkern_entries(cache_dir):
    compiler.compile_source(f'extern "C" __global__ void k() {{}} // {uuid.uuid4()}',
                            arch="sm_90")
    # a home folder used as the cache folder: the user's own files in folders named like
    # jitkern's kinds, and inside jitkern's marked subfolder
    user_files = [cache_dir / "python" / "analysis.py", cache_dir / "kernels" / "saxpy.cu",
                  cache_dir / cache.ENTRIES_FOLDER / "kernels" / "README",
                  cache_dir / cache.ENTRIES_FOLDER / "kernels" / "ab" / "notes.jkc"]
    for path in user_files:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"mine {uuid.uuid4()}")
    texts = {p: p.read_text() for p in user_files}
    assert len(_entries(cache_dir)) == 2  # jitkern's entry and the user's notes.jkc
    report = cache.clear_disk()
    assert report.removed == 1 and report.failed == []
    assert _entries(cache_dir) == [str(user_files[-1])]
    assert {p: p.read_text() for p in user_files} == texts
    assert sorted(report.left) == sorted(map(str, user_files))


def test_cache_folder_and_entries_are_private(cache_dir):
    compiler.compile_source(f'extern "C" __global__ void k() {{}} // {uuid.uuid4()}',
                            arch="sm_90")
    root = cache_dir / cache.ENTRIES_FOLDER
    assert (root / cache.MARKER).read_text().startswith("Signature: 8a477f597d28d172")
    for path in (cache_dir, root, root / "kernels"):
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o700, path
    (entry,) = _entries(cache_dir)
    assert stat.S_IMODE(os.stat(entry).st_mode) & 0o077 == 0


# -- 3. special files at an entry's path are misses, and never block ------------------


def _python_entry(tag: str):
    from jitkern.runtime import codegen

    source = f"# {tag}\ndef f():\n    return {int.from_bytes(os.urandom(2), 'little')}\n"
    fn = _define(source, f"<{tag}>", {}, "f")
    key = cache.make_key("generated-python", codegen._BYTECODE, f"<{tag}>", source)
    return source, fn, key


@pytest.mark.parametrize("special", ["fifo", "symlink-to-fifo", "folder", "symlink"])
def test_special_file_at_an_entry_is_a_miss_without_blocking(cache_dir, special):
    # a child process, so a blocking open fails the test by its timeout, not by a hang
    key = cache.make_key("special", uuid.uuid4().hex)
    code = f"""
        import os, sys
        from jitkern.toolchain import cache
        cache.disk_put({key!r}, {{}}, b"payload", "binary")
        path = cache._entry_path({key!r}, "binary")
        os.unlink(path)
        kind = {special!r}
        target = path + ".target"
        if kind == "fifo":
            os.mkfifo(path)
        elif kind == "symlink-to-fifo":
            os.mkfifo(target); os.symlink(target, path)
        elif kind == "folder":
            os.mkdir(path)
        else:
            open(target, "wb").write(open(sys.executable, "rb").read(64)); os.symlink(target, path)
        print(cache.disk_get({key!r}, "binary"), cache.stats["corrupt"], cache.disk_enabled())
        other = cache.make_key("another entry")
        cache.disk_put(other, {{}}, b"second", "binary")
        print(cache.disk_get(other, "binary")[1])
    """
    env = dict(os.environ, JITKERN_CACHE_DIR=str(cache_dir))
    env["PYTHONPATH"] = os.pathsep.join([os.getcwd(), env.get("PYTHONPATH", "")])
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().split("\n") == ["None 1 True", "b'second'"]


def test_one_unwritable_entry_does_not_turn_the_disk_cache_off(cache_dir):
    key = cache.make_key("blocked", uuid.uuid4().hex)
    cache.disk_put(cache.make_key("first"), {}, b"x", "binary")
    path = cache._entry_path(key, "binary")
    os.makedirs(os.path.join(path, "inside"))  # a non-empty folder: os.replace must fail
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cache.disk_put(key, {}, b"lost", "binary")
    assert cache.disk_enabled() and cache.disabled_reason() is None
    other = cache.make_key("kept", uuid.uuid4().hex)
    payload = os.urandom(16)
    cache.disk_put(other, {}, payload, "binary")
    assert cache.disk_get(other, "binary")[1] == payload


# -- 4. executable entries only from folders and files no one else can write ----------


@pytest.mark.parametrize("what", ["root", "fanout", "entry"])
def test_launch_code_is_refused_from_a_folder_others_can_write(cache_dir, what):
    source, fn, key = _python_entry(f"trust-{uuid.uuid4().hex}")
    assert cache.disk_get(key, "python-code") is not None
    path = cache._entry_path(key, "python-code")
    target = {"root": str(cache_dir / cache.ENTRIES_FOLDER), "fanout": os.path.dirname(path),
              "entry": path}[what]
    os.chmod(target, 0o777 if what != "entry" else 0o666)
    cache.reset_disk_state()
    with pytest.warns(RuntimeWarning, match="writable by other users") as record:
        assert cache.disk_get(key, "python-code") is None
    message = str(record[0].message)
    assert target in message and "chmod go-w" in message
    # binaries (not executed by Python) are still cached
    binary_key = cache.make_key("binary-next-to-it", uuid.uuid4().hex)
    cache.disk_put(binary_key, {}, b"cubin", "binary")
    assert cache.disk_get(binary_key, "binary")[1] == b"cubin"


@pytest.mark.skipif(not hasattr(os, "chown") or os.geteuid() != 0, reason="needs root to chown")
def test_launch_code_is_refused_when_another_user_owns_the_entry(cache_dir):
    source, fn, key = _python_entry(f"owner-{uuid.uuid4().hex}")
    path = cache._entry_path(key, "python-code")
    os.chown(path, 65534, 65534)  # nobody
    cache.reset_disk_state()
    with pytest.warns(RuntimeWarning, match="owned by user id 65534"):
        assert cache.disk_get(key, "python-code") is None
