"""Graph capture without a GPU: the public names, argument checks, and what a capture
refuses (simulated by registering a capture on a made-up stream handle)."""

import weakref

import numpy as np
import pytest

import jitkern
from jitkern.runtime import driver, memory
from jitkern.runtime.device import Graph, Stream
from jitkern.errors import JitkernTypeError, JitkernValueError, StreamCaptureError

FAKE = 0x4242


@pytest.fixture
def fake_capture(monkeypatch):
    """Pretend jitkern is capturing on stream handle FAKE (no driver call is made)."""
    captures = {}
    monkeypatch.setattr(memory, "CAPTURES", captures)
    record = memory.CaptureRecord()
    captures[FAKE] = record
    return record


def test_public_names():
    from jitkern.graph import Graph as G2
    from jitkern.graph import capture, is_capturing

    assert jitkern.graph.capture is capture
    assert jitkern.graph.is_capturing is is_capturing
    assert G2 is Graph is jitkern.Graph
    assert issubclass(jitkern.StreamCaptureError, jitkern.CUDAError)
    for name in ("begin_capture", "end_capture", "is_capturing"):
        assert callable(getattr(Stream, name))


def test_graph_cannot_be_made_directly():
    with pytest.raises(JitkernTypeError, match="end_capture"):
        Graph()


def test_capture_launch_before_the_block_ends_is_refused():
    g = jitkern.graph.capture()
    with pytest.raises(StreamCaptureError, match="after the block"):
        g.launch()
    with pytest.raises(StreamCaptureError, match="after the block"):
        g.upload()


@pytest.mark.parametrize("mode", ["bogus", 3, -1, True, 2.0])
def test_begin_capture_mode_is_checked_first(mode):
    with pytest.raises(JitkernValueError, match=r"mode.*relaxed.*got"):
        Stream(_handle=FAKE).begin_capture(mode)


def test_the_legacy_stream_cannot_be_captured():
    with pytest.raises(StreamCaptureError, match="legacy default stream"):
        Stream.null.begin_capture()


def test_host_copies_on_the_capturing_stream_are_refused(fake_capture):
    buf = np.empty(4, np.float32)
    with pytest.raises(StreamCaptureError, match="device memory to the host.*0x4242"):
        memory.memcpy_dtoh(buf, 0x1000, 16, FAKE)
    with pytest.raises(StreamCaptureError, match="host memory to the device.*begin_capture"):
        memory.memcpy_htod(0x1000, buf, 16, FAKE)


def test_synchronizing_during_a_capture_is_refused(fake_capture):
    with pytest.raises(StreamCaptureError, match=r"Stream.synchronize\(\)"):
        Stream(_handle=FAKE).synchronize()
    with pytest.raises(StreamCaptureError, match="Stream.done"):
        Stream(_handle=FAKE).done()
    with pytest.raises(StreamCaptureError, match=r"jitkern.synchronize\(\)"):
        jitkern.synchronize()
    with pytest.raises(StreamCaptureError, match=r"Device.synchronize\(\)"):
        jitkern.Device(0).synchronize()


def test_a_block_allocated_before_the_capture_is_held_not_freed(fake_capture):
    mem = memory.MemoryPointer(0x1000, 64, 0, FAKE)
    del mem
    assert fake_capture.held == [(0x1000, FAKE)]


def test_a_block_allocated_in_the_capture_is_freed_into_it(fake_capture):
    freed = []

    class FakeDriver:
        def cuMemFreeAsync(self, ptr, stream):
            freed.append((ptr, stream))
            return (0,)

    with driver.use(FakeDriver()):
        mem = memory.MemoryPointer(0x2000, 64, 0, FAKE)
        fake_capture.allocated[mem.ptr] = weakref.ref(mem)
        del mem
    assert freed == [(0x2000, FAKE)]
    assert fake_capture.held == [] and 0x2000 not in fake_capture.allocated


def test_blocks_on_other_streams_are_freed_as_usual(fake_capture):
    freed = []

    class FakeDriver:
        def cuMemFreeAsync(self, ptr, stream):
            freed.append((ptr, stream))
            return (0,)

    with driver.use(FakeDriver()):
        mem = memory.MemoryPointer(0x3000, 64, 0, 0x77)
        del mem
    assert freed == [(0x3000, 0x77)] and fake_capture.held == []


class NoDriver:
    devices = 1

    def __getattr__(self, name):
        raise AssertionError("no event may be recorded or waited on across a capture")


def test_stream_ordering_across_a_capture(fake_capture):
    from jitkern.runtime import context as _context

    with driver.use(NoDriver()):
        _stream_ordering_across_a_capture(_context)


def _stream_ordering_across_a_capture(_context):
    # work queued before the capture: the graph cannot wait for it, and need not
    _context.order_after(FAKE, 0x99, 0)
    _context.order_after(FAKE, 0, 0)
    # work queued in the capture has not run: another stream cannot wait for it
    with pytest.raises(StreamCaptureError, match="written during a graph capture"):
        _context.order_after(0x99, FAKE, 0)
