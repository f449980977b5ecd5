"""``jitkern.graph``: CUDA graph capture and replay (the code is in runtime/graph.py and
runtime/device.py; see docs/graphs.md)."""

from .runtime.graph import Graph, KernelNode, capture, is_capturing

__all__ = ["Graph", "KernelNode", "capture", "is_capturing"]
