"""CuPy spellings that are not kernels: texture objects, compile_with_cache and memoize."""
