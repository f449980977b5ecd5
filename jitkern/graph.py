"""``jitkern.graph``: CUDA graph capture and replay (the code is in backend/graph.py and
backend/device.py; see docs/graphs.md)."""

from .backend.graph import Graph, capture, is_capturing

__all__ = ["Graph", "capture", "is_capturing"]
