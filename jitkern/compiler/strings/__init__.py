"""CuPy's string kernels, as text: parameter strings, C parameter lists, the elementwise and
reduction code generators, their prelude, cuComplex translation and jitify options."""
