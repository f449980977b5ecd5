"""Kept for imports: the parameter-list reader lives in backend.signature (the export
mechanism in backend/ reads parameter lists too)."""

from ..backend.signature import Param, kernel_params  # noqa: F401
