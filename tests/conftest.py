"""Shared test setup: GPU tests skip cleanly where no device is found,
and every test session gets its own empty kernel cache folder (a pytest tmp folder,
so nothing is left behind)."""

import os
import sys

import pytest

# JAX takes 75% of the GPU's memory when it starts, unless told otherwise: with several test
# workers on one GPU (pytest -n 4), that starves the others. Allocate on demand instead.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
# examples/*.py import their shared helper (examples/gpu_or_simulated.py) as a sibling, as
# `python examples/<name>.py` finds it; tests load them by path (appended: it shadows nothing)
sys.path.append(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                             "examples"))


@pytest.fixture(scope="session", autouse=True)
def session_cache_dir(tmp_path_factory):
    """An empty cache folder for the session, also seen by subprocesses the tests start."""
    from jitkern import config
    from jitkern.toolchain import cache

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


@pytest.fixture
def own_cache(tmp_path, monkeypatch):
    """A disk cache of the test's own (under tmp_path), on, with the memory cache emptied:
    what a test of the cache or of its CLI reads and clears is only what it wrote."""
    from jitkern.config import settings
    from jitkern.toolchain import cache

    folder = tmp_path / "cache"
    monkeypatch.setattr(settings, "cache_dir", str(folder))
    monkeypatch.setattr(settings, "disk_cache", True)
    cache.reset_disk_state()
    cache.clear_memory()
    yield folder
    cache.reset_disk_state()


@pytest.fixture
def shared_identity(monkeypatch):
    """jitkern's generator identity (part of every cache key) computed now, for a test whose
    processes share cache entries. A process caches the identity when it first needs it; a
    test session runs for minutes, and when jitkern's files change meanwhile (an edit, a
    checkout), the processes a test starts see other files and compute another identity:
    by design they then read none of the session's entries. Computed again at the test's
    start, it is the one the test's processes compute from the same files; they report
    theirs, and a test asserts they agree."""
    from jitkern.toolchain import cache

    monkeypatch.setattr(cache, "_identity", None)
    return cache.identity()


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
        from jitkern.runtime import driver
    except Exception:
        return False
    return driver.is_available()


_HAS_GPU = None


def has_gpu() -> bool:
    global _HAS_GPU
    if _HAS_GPU is None:
        _HAS_GPU = _gpu_available()
    return _HAS_GPU


#: The fixtures that run one test body on the GPU and on the CPU: param True is the CPU's.
TWIN_FIXTURES = ("launch", "on_device")


def _skip_simulator_gaps(items):
    """``@pytest.mark.sim_gap("what the simulator lacks")`` on a twin test skips its ``[sim]``
    item only, with that reason (the ``[gpu]`` item runs as usual)."""
    for item in items:
        gap = item.get_closest_marker("sim_gap")
        callspec = getattr(item, "callspec", None)
        if gap is not None and callspec is not None and any(
                callspec.params.get(name) is True for name in TWIN_FIXTURES):
            item.add_marker(pytest.mark.skip(reason=f"simulator gap: {gap.args[0]}"))


def pytest_collection_modifyitems(config, items):
    _skip_simulator_gaps(items)
    if has_gpu():
        return
    skip = pytest.mark.skip(reason="no CUDA device found")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _restore_working_directory():
    """Every test starts in the folder the session started in, whatever an earlier test (or a
    library it called) did with the process's working directory."""
    start = os.getcwd()
    yield
    try:
        here = os.getcwd()
    except FileNotFoundError:  # the folder a test moved into is gone
        here = None
    if here != start:
        os.chdir(start)


@pytest.fixture
def rng():
    """A fresh, differently seeded generator per test (seed printed on failure)."""
    import numpy as np

    seed = int.from_bytes(os.urandom(4), "little")
    print(f"rng seed: {seed}")
    return np.random.default_rng(seed)


class _Launcher:
    """Where a twin test runs its kernel: on the GPU with jitkern arrays, or in the simulator
    with NumPy arrays. A test body written once against this runs on both back ends."""

    def __init__(self, simulated: bool):
        self.simulated = simulated

    def __repr__(self):
        return "sim" if self.simulated else "gpu"

    def __call__(self, kernel):
        """The launchable: ``launch(k)[grid, block](*args)`` or ``launch(k)(grid, block, args)``."""
        return kernel.simulate if self.simulated else kernel

    def pick(self, gpu, sim):
        """A size for this back end: the simulator runs Python per thread, so it gets less."""
        return sim if self.simulated else gpu

    def to_device(self, host):
        """A copy of ``host`` the kernel may write (the host array stays as it was)."""
        import numpy as np

        if self.simulated:
            return np.array(host, copy=True)
        import jitkern

        # (not np.ascontiguousarray, which makes a 0-d array 1-d)
        return jitkern.asarray(np.array(host, copy=True, order="C"))

    def full(self, shape, value, dtype):
        import numpy as np

        if self.simulated:
            return np.full(shape, value, dtype)
        import jitkern

        return jitkern.full(shape, value, dtype)

    def zeros(self, shape, dtype):
        return self.full(shape, 0, dtype)

    def poisoned(self, shape, dtype, fill=7):
        """An output filled with a value no right answer has: NaN for floats, else ``fill``."""
        import numpy as np

        return self.full(shape, np.nan if np.dtype(dtype).kind in "fc" else fill, dtype)

    def stream(self):
        """A new stream on the GPU; None in the simulator (which has none)."""
        if self.simulated:
            return None
        import jitkern

        return jitkern.Stream()

    def synchronize(self, stream=None):
        """Waits for ``stream`` and the device (the simulator has finished already)."""
        if self.simulated:
            return
        import jitkern

        if stream is not None:
            stream.synchronize()
        jitkern.synchronize()

    def debug_error(self, start, sync):
        """The message of the KernelAssertionError a debug check raises: ``start()`` launches;
        the GPU reports at the synchronisation ``sync()`` (the launch itself raises nothing),
        the simulator at the launch (its first bad access)."""
        import jitkern

        if self.simulated:
            with pytest.raises(jitkern.KernelAssertionError) as info:
                start()
            return str(info.value)
        start()
        with pytest.raises(jitkern.KernelAssertionError) as info:
            sync()
        return str(info.value)

    def get(self, array):
        """The results as a NumPy array (after the launch has finished)."""
        import numpy as np

        return np.asarray(array) if self.simulated else array.get()


@pytest.fixture(
    params=[pytest.param(False, marks=pytest.mark.gpu, id="gpu"), pytest.param(True, id="sim")]
)
def launch(request):
    """Each twin test twice: ``[gpu]`` (marked gpu) and ``[sim]`` (runs everywhere)."""
    return _Launcher(request.param)


@pytest.fixture(
    params=[pytest.param(False, marks=pytest.mark.gpu, id="gpu"), pytest.param(True, id="sim")]
)
def on_device(request):
    """Each twin test of device memory twice: ``[gpu]`` (marked gpu) on the GPU, and ``[sim]``
    on a simulated device with two devices (``jitkern.simulated_device(devices=2)``: jitkern
    arrays in host memory, copies, fills and kernels run in the simulator). The value is the
    :class:`jitkern.sim.device.SimulatedDevice`, or None on the GPU."""
    if not request.param:
        yield None
        return
    import jitkern
    from jitkern.runtime import driver

    with jitkern.simulated_device(devices=2) as device:  # two: cross-device copies run too
        driver.set_current(0)  # as in a GPU process that has used device 0 already
        yield device


@pytest.fixture(autouse=True, scope="session")
def _differential_simulation():
    """Every simulated launch of the suite that can be vectorised runs both ways, the
    per-thread scheduler (the reference) and the vectorised path, and the two must
    agree bit for bit (jitkern.sim.vector.DIFFERENTIAL)."""
    from jitkern.sim import vector

    vector.DIFFERENTIAL = True
    yield
    vector.DIFFERENTIAL = False
