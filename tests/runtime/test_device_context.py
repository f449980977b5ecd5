"""``with jitkern.Device(i):`` leaves the thread's current context as it found it (issue 27:
in a fresh process, device 1 stayed current after the block), "no context" included; so do
the calls that make a device current for a moment (``Device(i).mem_info``,
``Device(i).synchronize()``). The fake driver stands for two GPUs; its ``current`` is the
context the driver would report."""

import pytest

import jitkern
from jitkern.runtime import driver
from jitkern.runtime.fakedriver import FakeDriver


@pytest.fixture
def fake():
    with driver.use(FakeDriver(devices=2, cc=[(9, 0), (8, 0)])) as fake:
        yield fake


def test_a_block_in_a_fresh_process_leaves_no_context_current(fake):
    assert fake.current == 0  # nothing has made a context current yet
    with jitkern.Device(1) as dev:
        assert fake.current == FakeDriver.context(1) and dev.id == 1
    assert fake.current == 0


def test_nested_blocks_restore_each_outer_device(fake):
    with jitkern.Device(0):
        with jitkern.Device(1):
            assert fake.current == FakeDriver.context(1)
            with jitkern.Device(0):
                assert fake.current == FakeDriver.context(0)
            assert fake.current == FakeDriver.context(1)
        assert fake.current == FakeDriver.context(0)
    assert fake.current == 0


def test_a_block_left_by_an_exception_restores_too(fake):
    jitkern.Device(0).use()
    with pytest.raises(KeyError, match="inside"):
        with jitkern.Device(1):
            raise KeyError("inside")
    assert fake.current == FakeDriver.context(0)


def test_calls_that_borrow_a_device_leave_no_context_current():
    with jitkern.simulated_device(devices=2, capacity=1 << 20) as device:  # a driver with memory
        assert device.current == 0
        free, total = jitkern.Device(1).mem_info
        assert total == 1 << 20 and device.current == 0
        jitkern.Device(1).synchronize()
        assert device.current == 0


@pytest.mark.gpu
def test_gpu_a_block_in_a_fresh_process_leaves_no_context_current():
    """The real driver: a fresh process has no current context, and has none after the
    block (cuCtxSetCurrent takes the null context cuCtxGetCurrent gave)."""
    import os
    import subprocess
    import sys

    script = (
        "import jitkern\n"
        "from cuda.bindings import driver as d\n"
        "d.cuInit(0)\n"
        "before = int(d.cuCtxGetCurrent()[1])\n"
        "with jitkern.Device(0):\n"
        "    inside = int(d.cuCtxGetCurrent()[1])\n"
        "after = int(d.cuCtxGetCurrent()[1])\n"
        "print(before, inside != 0, after)\n"
    )
    root = os.path.dirname(os.path.dirname(os.path.abspath(jitkern.__file__)))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=root), timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "True", "0"]
