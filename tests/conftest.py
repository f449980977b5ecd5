"""Shared test setup: GPU tests skip cleanly where no device is found,
and every test session gets its own empty kernel cache folder."""

import os
import tempfile

import pytest

_cache_root = tempfile.mkdtemp(prefix="jitkern-test-cache-")
os.environ.setdefault("JITKERN_CACHE_DIR", _cache_root)


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
