"""Shared test setup: GPU tests skip cleanly where no device is found,
and every test session gets its own empty kernel cache folder (a pytest tmp folder,
so nothing is left behind)."""

import os

import pytest


@pytest.fixture(scope="session", autouse=True)
def session_cache_dir(tmp_path_factory):
    """An empty cache folder for the session, also seen by subprocesses the tests start."""
    from jitkern import config
    from jitkern.backend import cache

    folder = tmp_path_factory.mktemp("jitkern-cache")
    saved = os.environ.get("JITKERN_CACHE_DIR")
    os.environ["JITKERN_CACHE_DIR"] = str(folder)
    config.reload()
    cache.reset_disk_state()
    cache.clear_memory()
    yield folder
    if saved is None:
        os.environ.pop("JITKERN_CACHE_DIR", None)
    else:
        os.environ["JITKERN_CACHE_DIR"] = saved
    config.reload()


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    """Hypothesis writes its example database and caches under ./.hypothesis (the checkout)
    from collection on: point it at a pytest tmp folder so a run leaves nothing behind."""
    try:
        from hypothesis.configuration import set_hypothesis_home_dir
    except ImportError:
        return
    factory = getattr(config, "_tmp_path_factory", None)
    if factory is not None:
        set_hypothesis_home_dir(factory.mktemp("hypothesis"))


def _gpu_available() -> bool:
    try:
        from jitkern.backend import driver
    except Exception:
        return False
    return driver.is_available()


_HAS_GPU = None


def has_gpu() -> bool:
    global _HAS_GPU
    if _HAS_GPU is None:
        _HAS_GPU = _gpu_available()
    return _HAS_GPU


def pytest_collection_modifyitems(config, items):
    if has_gpu():
        return
    skip = pytest.mark.skip(reason="no CUDA device found")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def rng():
    """A fresh, differently seeded generator per test (seed printed on failure)."""
    import numpy as np

    seed = int.from_bytes(os.urandom(4), "little")
    print(f"rng seed: {seed}")
    return np.random.default_rng(seed)
