"""The shared CUDA backend: driver access, compile, cache, module loading, launch.

Every kernel kind (RawKernel, ElementwiseKernel, ReductionKernel, @rawkernel)
compiles through :mod:`.compiler` and launches through :mod:`.launch`.
Nothing here touches the GPU at import time.
"""
