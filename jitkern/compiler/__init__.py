"""Stage 1: Python source -> AST -> typed program -> CUDA C++ (or the simulator's Python).

No driver and no NVRTC here: everything in this package runs on a machine without a GPU.
``strings/`` holds the same stage for CuPy's string kernels (parameter lists, the
elementwise and reduction code generators, the prelude they share).
"""
