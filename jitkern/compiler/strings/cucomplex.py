"""``translate_cucomplex=True``: compile code written against ``cuComplex.h`` unchanged.

The source's ``#include <cuComplex.h>`` is pointed at ``<jitkern/cucomplex.cuh>``, which
defines ``cuFloatComplex``/``cuDoubleComplex`` as jitkern's ``complex<float>``/
``complex<double>`` and the cuComplex.h functions on them, so a kernel taking
``cuFloatComplex*`` receives complex64 arrays.
"""

from __future__ import annotations

import re

from ...errors import JitkernTypeError

BRIDGE_HEADER = "jitkern/cucomplex.cuh"
BRIDGE_INCLUDE = f"#include <{BRIDGE_HEADER}>"

_CUCOMPLEX_INCLUDE = re.compile(
    r'^([ \t]*)#([ \t]*)include[ \t]*[<"]cuComplex\.h[>"]', re.MULTILINE
)
_BRIDGE_INCLUDED = re.compile(
    r'^[ \t]*#[ \t]*include[ \t]*[<"]jitkern/cucomplex\.cuh[>"]', re.MULTILINE
)


def translate_cucomplex(source: str) -> str:
    """``source`` with ``cuComplex.h`` replaced by jitkern's bridge header.

    Every ``#include <cuComplex.h>`` (or ``"cuComplex.h"``) becomes
    ``#include <jitkern/cucomplex.cuh>``, on the same line, so line numbers in
    compiler messages do not move. Where the source includes neither, the bridge is
    added as a new first line (code that relied on cuComplex.h being included by
    some other header). Translating twice gives the same source.
    """
    if not isinstance(source, str):
        raise JitkernTypeError(f"source: expected str, got {type(source).__name__}")
    translated, count = _CUCOMPLEX_INCLUDE.subn(rf"\1#\2include <{BRIDGE_HEADER}>", source)
    if count or _BRIDGE_INCLUDED.search(translated):
        return translated
    return f"{BRIDGE_INCLUDE}\n{translated}"
