"""CuPy's C++ environment: what string kernels see besides their own source.

Two layers (docs/compat.md, "CuPy's C++ environment"):

- every kernel of every kind is compiled with ``jitkern/environment.h`` pre-included
  (toolchain/nvrtc.py): only macros, the ``M_*`` constants of POSIX ``<math.h>`` and the
  ``CUDART_*`` constants of CUDA's ``<math_constants.h>``;
- ElementwiseKernel and ReductionKernel sources also include CuPy's default headers, as
  CuPy prepends them to these kernels: complex numbers, ``CArray``/``CIndexer``, the
  atomics and the math constants (:func:`default_includes`), plus ``float16``/``bfloat16``
  where the kernel's types or code use them.

The simulator reads the constants' values from the same headers (:func:`constant_values`),
so one file states each value.
"""

from __future__ import annotations

import functools
import math
import os
import re
import struct

import numpy

from ...config import PACKAGE_INCLUDE

#: The headers CuPy prepends to every elementwise and reduction kernel, in its order.
CUPY_DEFAULT_HEADERS = ("cupy/complex.cuh", "cupy/carray.cuh", "cupy/atomics.cuh",
                        "cupy/math_constants.h")

#: Headers whose constants the simulator knows (the pre-included ones).
_CONSTANT_HEADERS = ("jitkern/math_names.h", "cupy/math_constants.h")

_HALF_WORDS = re.compile(r"\b(half|__half|float16)\b")
_BFLOAT_WORDS = re.compile(r"\b(__nv_bfloat16|nv_bfloat16|bfloat16)\b")


def default_includes(dtype_names, code: str) -> str:
    """The ``#include`` lines of an elementwise or reduction kernel's environment: CuPy's
    default headers, then ``cupy/float16.cuh`` / ``cupy/bfloat16.cuh`` when a dtype of the
    kernel or a word of its code (``code``: preamble, operation...) needs the type."""
    names = list(CUPY_DEFAULT_HEADERS)
    if "float16" in dtype_names or _HALF_WORDS.search(code):
        names.append("cupy/float16.cuh")
    if "bfloat16" in dtype_names or _BFLOAT_WORDS.search(code):
        names.append("cupy/bfloat16.cuh")
    return "".join(f"#include <{n}>\n" for n in names)


_DEFINE = re.compile(r"^#define\s+(\w+)\s+(.+?)\s*(?://.*)?$", re.M)
_BITS32 = re.compile(r"__int_as_float\((0x[0-9a-fA-F]+)\)\Z")
_BITS64 = re.compile(r"__longlong_as_double\((0x[0-9a-fA-F]+)ULL\)\Z")


@functools.lru_cache(maxsize=None)
def constant_values() -> dict:
    """Every constant the pre-included headers define: name -> (dtype, Python literal).

    The literal is what the simulator writes for the name (``math.inf``, ``-math.nan``, a
    float's repr): the value of the C expression in the header, in its C type."""
    out = {}
    for header in _CONSTANT_HEADERS:
        with open(os.path.join(PACKAGE_INCLUDE, header)) as f:
            text = f.read()
        for name, value in _DEFINE.findall(text):
            if not name.startswith(("M_", "CUDART_")):
                continue  # include guards
            out[name] = _c_constant(value)
    return out


def _c_constant(text: str) -> tuple:
    """(dtype, Python literal) of one constant's C spelling in the headers."""
    if text.startswith("(") and text.endswith(")"):  # a negative value, parenthesised
        text = text[1:-1]
    m = _BITS32.match(text)
    if m is not None:
        value = struct.unpack("<f", struct.pack("<I", int(m.group(1), 16)))[0]
        return numpy.dtype(numpy.float32), _literal(value)
    m = _BITS64.match(text)
    if m is not None:
        value = struct.unpack("<d", struct.pack("<Q", int(m.group(1), 16)))[0]
        return numpy.dtype(numpy.float64), _literal(value)
    if text.endswith("U"):
        return numpy.dtype(numpy.uint32), str(int(text[:-1]))
    if text.endswith(("F", "f")):
        return numpy.dtype(numpy.float32), _literal(float(numpy.float32(text[:-1])))
    return numpy.dtype(numpy.float64), _literal(float(text))


def _literal(value: float) -> str:
    if math.isnan(value):
        return "-math.nan" if math.copysign(1.0, value) < 0 else "math.nan"
    if math.isinf(value):
        return "math.inf" if value > 0 else "-math.inf"
    return repr(value)
