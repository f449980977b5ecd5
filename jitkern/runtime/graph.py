"""CUDA graphs: capture a sequence of launches once, replay it with one call.

``jitkern.graph`` is this module::

    with jitkern.graph.capture() as g:      # a fresh stream, current inside the block
        y = jitkern.empty_like(x)           # pool allocations become graph nodes
        step[blocks, threads](x, y, n)      # every kernel kind is recorded, not run
    g.launch()                              # replay (g.graph is the Graph)
    g.update(step, x=new_x)                 # new arguments for step's node, no recapture

``Stream.begin_capture()`` / ``end_capture()`` (CuPy's names) are the same thing
without the block. Launches on a stream that CuPy or PyTorch is capturing are
recorded into their graph too: jitkern only queues work on the stream it is given.
The capture, the Graph and what is refused during a capture live in
:mod:`.device` and :mod:`.memory`; see docs/graphs.md.
"""

from __future__ import annotations

from ..errors import StreamCaptureError
from .device import Graph, Stream, get_current_stream
from .graphnodes import KernelNode
from .graphnodes import find as _find_node
from .graphnodes import update as _update_node

__all__ = ["Graph", "KernelNode", "capture", "is_capturing"]


class capture:
    """``with capture(stream=None, mode=None) as g:`` records the block into ``g.graph``.

    ``stream``: the stream to capture (a jitkern.Stream or any stream object jitkern
    accepts). When None, the current stream is captured, or a new non-blocking stream
    when the current one is the legacy default (which cannot be captured). The captured
    stream is the current stream inside the block, so launches and allocations that are
    not given a stream are recorded. ``g`` replays with ``g.launch(stream=None)`` and
    ``g.upload(stream=None)`` after the block. If the block raises, the capture is
    ended and discarded, and the exception propagates.
    """

    def __init__(self, stream=None, mode=None):
        self._given = stream
        self._mode = mode
        self.stream: Stream | None = None
        self.graph: Graph | None = None

    def __enter__(self) -> "capture":
        if self.stream is not None:
            raise StreamCaptureError("capture(): this capture block has already been entered; "
                                     "make a new jitkern.graph.capture() for another graph")
        stream = self._given
        if stream is None:
            stream = get_current_stream()
            if stream.ptr == 0:
                stream = Stream(non_blocking=True)
        elif not isinstance(stream, Stream):
            stream = Stream.from_external(stream)
        stream.begin_capture(self._mode)
        self.stream = stream
        stream.__enter__()
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        stream = self.stream
        stream.__exit__(exc_type, exc, tb)
        if exc_type is None:
            self.graph = stream.end_capture()
            return
        try:
            stream.end_capture()  # discarded: the block failed
        except StreamCaptureError:
            pass  # the block's own exception says more

    def _graph(self) -> Graph:
        if self.graph is None:
            raise StreamCaptureError(
                "capture: the graph exists once the `with jitkern.graph.capture() as g:` block "
                "has ended; launch it after the block")
        return self.graph

    def launch(self, stream=None) -> None:
        """Replay the captured graph on ``stream`` (the current stream when None)."""
        self._graph().launch(stream)

    def upload(self, stream=None) -> None:
        """Upload the captured graph on ``stream`` without running it."""
        self._graph().upload(stream)

    def nodes(self, kernel=None) -> list:
        """The captured graph's kernel nodes, in capture order (see :meth:`Graph.nodes`)."""
        return self._graph().nodes(kernel)

    def node(self, kernel, index: int | None = None):
        """The kernel node launched from ``kernel`` (see :meth:`Graph.node`)."""
        return self._graph().node(kernel, index)

    def update(self, node, /, *args, grid=None, block=None, shared_mem=None, **named):
        """Replace a kernel node's arguments in place, without a new capture
        (see :meth:`Graph.update` and docs/graphs.md)."""
        # Graph.update's body, not a call to it: a loop updating many nodes pays one call
        # less per node, with no re-spread of the arguments.
        target = _find_node(self._graph()._kernel_nodes(), node)
        _update_node(target, args, named, grid, block, shared_mem)
        return target

    def update_many(self, updates) -> None:
        """Update several kernel nodes in one call (see :meth:`Graph.update_many`)."""
        self._graph().update_many(updates)


def is_capturing(stream=None) -> bool:
    """True while ``stream`` (the current stream when None) is capturing."""
    if stream is None:
        stream = get_current_stream()
    elif not isinstance(stream, Stream):
        stream = Stream.from_external(stream)
    return stream.is_capturing()
