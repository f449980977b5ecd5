"""Reading a kernel's parameter list out of CUDA C++ source.

RawKernel uses this (and backend.export, for the header and manifest of exported
kernels) to tell a pointer parameter from a scalar one, so that a
Python float passed where the kernel wants ``float*`` (or an array where it wants
``int``) is refused with the parameter's name instead of crashing the kernel.
Only ``extern "C"`` style definitions are read; anything the simple reader does
not understand yields None and the launch falls back to size checks.
"""

from __future__ import annotations

import dataclasses
import re

_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_STRINGS = re.compile(r'"(?:\\.|[^"\\])*"')


@dataclasses.dataclass(frozen=True)
class Param:
    name: str
    ctype: str
    pointer: bool


def _strip(source: str) -> str:
    return _COMMENTS.sub(" ", _STRINGS.sub('""', source))


def kernel_params(source: str, name: str) -> tuple[Param, ...] | None:
    """The parameters of ``__global__`` function ``name`` in ``source``, or None."""
    text = _strip(source)
    pattern = re.compile(r"__global__[^;{}()]*?\b" + re.escape(name) + r"\s*\(")
    found = None
    for m in pattern.finditer(text):
        found = m
    if found is None:
        return None
    start = found.end()
    depth = 1
    i = start
    while i < len(text) and depth:
        c = text[i]
        depth += (c == "(") - (c == ")")
        i += 1
    if depth:
        return None
    inner = text[start:i - 1].strip()
    if not inner or inner == "void":
        return ()
    parts = _split_top_level(inner)
    params = []
    for part in parts:
        param = _parse_param(part)
        if param is None:
            return None
        params.append(param)
    return tuple(params)


def _split_top_level(text: str) -> list[str]:
    parts, depth, cur = [], 0, []
    for c in text:
        if c in "<([":
            depth += 1
        elif c in ">)]":
            depth -= 1
        if c == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    parts.append("".join(cur))
    return [p.strip() for p in parts]


_NAME_AT_END = re.compile(r"([A-Za-z_]\w*)\s*(\[[^\]]*\])?\s*$")


def _parse_param(text: str) -> Param | None:
    text = text.split("=", 1)[0].strip()
    m = _NAME_AT_END.search(text)
    if m is None:
        return None
    name = m.group(1)
    ctype = text[:m.start()].strip()
    if not ctype:
        return None
    pointer = "*" in ctype or m.group(2) is not None
    return Param(name=name, ctype=" ".join(ctype.split()), pointer=pointer)
