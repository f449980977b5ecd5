"""Stage 2: CUDA C++ text -> Binary. NVRTC (and nvcc for Thrust), the disk cache, CUBIN
reading, inspection and export. No driver calls: the caller passes a concrete arch."""
