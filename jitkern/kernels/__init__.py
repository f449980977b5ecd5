"""String-based kernels: RawKernel, RawModule, ElementwiseKernel, ReductionKernel, fuse."""

from .raw import RawKernel, RawModule

__all__ = ["RawKernel", "RawModule"]
