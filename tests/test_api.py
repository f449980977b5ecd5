"""CuPy's cache helpers: compile_with_cache, memoize, clear_memo."""

import jitkern
from jitkern.toolchain import cache
from jitkern.runtime import driver


def test_compile_with_cache_for_a_named_arch_returns_the_binary():
    src = 'extern "C" __global__ void k(float* x) { x[0] = 2; } // api-test'
    first = jitkern.compile_with_cache(src, arch="sm_90")
    again = jitkern.compile_with_cache(src, arch="sm_90")
    assert first is again
    assert first.data[:4] == b"\x7fELF"


def test_compile_with_cache_honours_cache_dir(tmp_path):
    src = 'extern "C" __global__ void k(float* x) { x[0] = 3; } // api-cache-dir'
    cache.clear_memory()
    jitkern.compile_with_cache(src, arch="sm_80", cache_dir=str(tmp_path))
    assert list((tmp_path / "jitkern-entries" / "kernels").rglob("*.jkc"))


def test_memoize_and_clear_memo(monkeypatch):
    calls = []

    @jitkern.memoize()
    def square(x):
        calls.append(x)
        return x * x

    assert square(3) == 9 and square(3) == 9
    assert calls == [3]
    jitkern.clear_memo()
    assert square(3) == 9
    assert calls == [3, 3]


def test_memoize_for_each_device(monkeypatch):
    device = [0]
    monkeypatch.setattr(driver, "current_device_id", lambda: device[0])
    calls = []

    @jitkern.memoize(for_each_device=True)
    def f(x):
        calls.append((device[0], x))
        return x

    f(1)
    f(1)
    device[0] = 1
    f(1)
    assert calls == [(0, 1), (1, 1)]


def test_the_session_cache_folder_is_a_pytest_tmp_folder(tmp_path_factory):
    # tests/conftest.py: nothing a test run writes to the cache outlives pytest's tmp folders
    import os

    from jitkern.config import settings

    base = str(tmp_path_factory.getbasetemp())
    assert settings.cache_dir.startswith(base)
    assert os.environ["JITKERN_CACHE_DIR"] == settings.cache_dir
