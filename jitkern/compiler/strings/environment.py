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

# The headers a kernel gets only where its types or its code need them (each costs a few
# milliseconds of every compile): header -> (dtype kinds or names, words of the code).
_WHERE_USED = {
    "cupy/complex.cuh": (("c",), re.compile(r"\bcomplex\b")),
    "cupy/float16.cuh": (("float16",), re.compile(r"\b(half|__half|float16)\b")),
    "cupy/bfloat16.cuh": (("bfloat16",), re.compile(r"\b(__nv_bfloat16|nv_bfloat16|bfloat16)\b")),
    "cuda_fp8.h": (("float8_e4m3fn", "float8_e5m2"), re.compile(r"__nv_fp8")),
}

# Defined before the headers: carray.cuh then leaves out complex.cuh and float16.cuh, which
# a direct #include of it brings in (_WHERE_USED decides them here).
ENVIRONMENT_MACRO = "JITKERN_STRING_KERNEL_ENVIRONMENT"


def default_includes(dtypes, code: str) -> str:
    """The lines that give an elementwise or reduction kernel CuPy's environment: CuPy's
    default headers (complex numbers only where a dtype is complex or the code says
    ``complex``), and ``float16``/``bfloat16``/float8 where a dtype of the kernel or a word
    of its code (``code``: preamble, operation, ...) names the type."""
    kinds = {d.kind for d in dtypes} | {d.name for d in dtypes}
    used = [h for h, (of, words) in _WHERE_USED.items()
            if kinds.intersection(of) or words.search(code)]
    names = [h for h in CUPY_DEFAULT_HEADERS if h not in _WHERE_USED or h in used]
    names += [h for h in used if h not in CUPY_DEFAULT_HEADERS]
    return f"#define {ENVIRONMENT_MACRO} 1\n" + "".join(f"#include <{n}>\n" for n in names)


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
