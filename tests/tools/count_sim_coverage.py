"""How many GPU test items also run through the CPU simulator (issue 19, part 3).

Collects the suite (no test runs, no GPU needed) and reports the items marked ``gpu``
and how many of them have a simulated twin: an item that uses the ``launch`` fixture
(tests/conftest.py) with ``launch`` on the GPU counts when the same test with the same other
parameters is also collected with ``launch`` in the simulator, and that ``[sim]`` item is not
skipped by a mark (such as ``sim_gap``). Skips decided inside a test body cannot be seen
here: a twin test should say what the simulator lacks with ``@pytest.mark.sim_gap``. The pairing reads each item's parameters (``item.callspec``), not its id,
so a test's other parameter ids may come in any order.

Collection marks gpu items "skip" where no device is found, but still collects them, so the
count is the one a GPU machine sees (modules that skip themselves whole, for example on a
missing optional package, are not counted on either side).

    PYTHONPATH=$PWD python tests/tools/count_sim_coverage.py [--list-missing] [pytest args]

``--list-missing`` also prints how many GPU items of each test have no twin.
"""

import collections
import sys

import pytest


class _Collector:
    def __init__(self):
        self.items = []

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items):
        self.items = list(items)


# The fixtures that run one body on the GPU and in the simulator: name -> simulated value.
# (``where`` is tests/compat/test_seed_examples.py's, which runs whole pages of examples;
# ``on_device`` runs a test on the GPU and on jitkern.simulated_device().)
TWIN_FIXTURES = {"launch": lambda p: bool(p), "on_device": lambda p: bool(p),
                 "where": lambda p: p == "sim"}


def _twin_fixture(item):
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return None
    return next((name for name in TWIN_FIXTURES if name in callspec.params), None)


def _launch_mode(item):
    """True for a simulated run, False for a GPU run, None without a twin fixture."""
    name = _twin_fixture(item)
    if name is None:
        return None
    return TWIN_FIXTURES[name](item.callspec.params[name])


def _twin_key(item):
    """The test and its parameters other than the twin fixture's."""
    params = dict(item.callspec.params)
    params.pop(_twin_fixture(item))
    base = item.nodeid.split("[", 1)[0]
    return base, tuple(sorted((k, repr(v)) for k, v in params.items()))


def _skipped_by_mark(item):
    return any(m.name == "skip" and m.kwargs.get("reason") != "no CUDA device found"
               or m.name == "skipif" and (m.args[0] if m.args else m.kwargs.get("condition"))
               for m in item.iter_markers())


def count(items):
    """(gpu items, gpu items with a simulated twin, the gpu items without one)."""
    sims = {_twin_key(i) for i in items if _launch_mode(i) is True and not _skipped_by_mark(i)}
    gpu = [i for i in items if i.get_closest_marker("gpu") is not None]
    twinned = [i for i in gpu if _launch_mode(i) is False and _twin_key(i) in sims]
    twinned_ids = {i.nodeid for i in twinned}
    missing = [i for i in gpu if i.nodeid not in twinned_ids]
    return gpu, twinned, missing


def main(argv):
    list_missing = "--list-missing" in argv
    args = [a for a in argv if a != "--list-missing"]
    collector = _Collector()
    quiet = ["-o", "addopts=", "-p", "no:terminal", "-p", "no:cacheprovider"]
    code = pytest.main(["--collect-only", *quiet, *args], plugins=[collector])
    if code not in (0, 5):
        return int(code)
    gpu, twinned, missing = count(collector.items)
    if list_missing:
        by_file = collections.Counter(i.nodeid.split("[", 1)[0] for i in missing)
        print("\nGPU items without a simulated twin, by test:")
        for path, n in sorted(by_file.items(), key=lambda kv: -kv[1]):
            print(f"  {n:4d}  {path}")
    share = 100.0 * len(twinned) / len(gpu) if gpu else 0.0
    print(f"\nGPU items: {len(gpu)}")
    print(f"GPU items with a [sim] twin: {len(twinned)}")
    print(f"simulated share: {share:.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
