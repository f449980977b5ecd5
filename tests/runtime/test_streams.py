"""Stream handles from every library's stream objects; the per-thread current stream."""

import threading

import pytest

import jitkern
from jitkern.runtime.device import STREAMS_IN_USE, Stream, get_current_stream, stream_handle


class CoreLike:
    def __cuda_stream__(self):
        return (0, 0x1234)


class TorchLike:
    cuda_stream = 0x5678


class CupyLike:
    ptr = 0x9ABC


@pytest.mark.parametrize("obj,expected", [
    (None, 0), (0, 0), (0xDEAD, 0xDEAD), (CoreLike(), 0x1234), (TorchLike(), 0x5678),
    (CupyLike(), 0x9ABC), (Stream(_handle=0x42), 0x42),
])
def test_stream_handle(obj, expected):
    assert stream_handle(obj) == expected


def test_stream_handle_refuses_other_things():
    with pytest.raises(TypeError, match="stream"):
        stream_handle("default")
    with pytest.raises(TypeError, match="stream"):
        stream_handle(True)


def test_current_stream_is_per_thread_and_nests():
    a, b = Stream(_handle=0x10), Stream(_handle=0x20)
    assert get_current_stream() is jitkern.Stream.null
    seen = []
    with a:
        assert get_current_stream() is a
        with b:
            assert get_current_stream() is b
            t = threading.Thread(target=lambda: seen.append(get_current_stream()))
            t.start()
            t.join()
        assert get_current_stream() is a
    assert get_current_stream() is jitkern.Stream.null
    assert seen == [jitkern.Stream.null]
    assert STREAMS_IN_USE[0] == 0


def test_stream_protocol_export():
    assert Stream(_handle=0x77).__cuda_stream__() == (0, 0x77)


def test_a_new_stream_waits_for_the_default_stream_as_cupys_does():
    # CuPy's Stream() is a blocking stream (non_blocking=False): a fill or copy queued on the
    # legacy default stream finishes before the stream's next kernel. A non-blocking default
    # raced with such fills (an output poisoned on the null stream overwrote the kernel's).
    from jitkern.runtime import driver
    from jitkern.runtime.fakedriver import FakeDriver

    with driver.use(FakeDriver()) as fake:
        plain, free = Stream(), Stream(non_blocking=True)
        flags = fake.CUstream_flags
        assert fake.stream_flags[plain.ptr] == flags.CU_STREAM_DEFAULT
        assert fake.stream_flags[free.ptr] == flags.CU_STREAM_NON_BLOCKING
