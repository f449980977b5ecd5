"""Reading a kernel's parameter list out of CUDA C++ source.

RawKernel uses this (and backend.export, for the header and manifest of exported
kernels) to tell a pointer parameter from a scalar one, so that a
Python float passed where the kernel wants ``float*`` (or an array where it wants
``int``) is refused with the parameter's name instead of crashing the kernel.
Only ``extern "C"`` style definitions are read; anything the simple reader does
not understand yields None and the launch falls back to size checks. Each parameter
also says what its type means (:mod:`.c_types`): the NumPy dtype of a scalar or of a
pointer's element, whether a pointer takes any array, the layout of a struct passed by
value; :func:`template_params` substitutes a ``name_expressions`` entry's template
arguments into a template kernel's parameter list.
"""

from __future__ import annotations

import dataclasses
import re

from . import c_types

_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_STRINGS = re.compile(r'"(?:\\.|[^"\\])*"')


@dataclasses.dataclass(frozen=True)
class Param:
    """One parameter: ``dtype`` is the NumPy dtype name of the value (a scalar) or of the
    element (a pointer), None when unknown; ``any_pointee``: a ``void*``/``char*``/``unsigned
    char*`` that takes any array; ``struct``: the source's layout of a struct passed by value
    (or pointed to); ``elem_size``: the size of a pointer's element when known."""

    name: str
    ctype: str
    pointer: bool
    dtype: str | None = None
    any_pointee: bool = False
    struct: c_types.StructDef | None = None
    elem_size: int | None = None


def _strip(source: str) -> str:
    return _COMMENTS.sub(" ", _STRINGS.sub('""', source))


def kernel_params(source: str, name: str) -> tuple[Param, ...] | None:
    """The parameters of ``__global__`` function ``name`` in ``source``, or None."""
    text = _strip(source)
    params = _read_params(text, name)
    if params is None:
        return None
    types = c_types.source_types(text)
    return tuple(_typed(p, types) for p in params)


_TEMPLATE_HEAD = r"template\s*<((?:[^<>]|<[^<>]*>)*)>\s*"


def template_params(source: str, expression: str) -> tuple[Param, ...] | None:
    """The parameters of the instantiation ``expression`` (``"fx3<float, 4>"``) of a
    template kernel in ``source``, its template arguments put in for the template's
    parameters; None where the source does not say (not found, a default argument)."""
    m = re.fullmatch(r"\s*([A-Za-z_][\w:]*)\s*<(.*)>\s*", expression, re.S)
    if m is None:
        return None
    name, args = m.group(1).split("::")[-1], _split_top_level(m.group(2))
    text = _strip(source)
    head = re.search(_TEMPLATE_HEAD + r"[^;{}()]*__global__[^;{}()]*?\b" + re.escape(name)
                     + r"\s*\(", text)
    params = _read_params(text, name)
    if head is None or params is None:
        return None
    names = [re.findall(r"(\w+)\s*(?:=.*)?$", p.strip())
             for p in _split_top_level(head.group(1))]
    if len(names) != len(args) or not all(names):
        return None
    subs = {n[0]: a for n, a in zip(names, args)}
    word = re.compile(r"\b(" + "|".join(map(re.escape, subs)) + r")\b")
    types = c_types.source_types(text)
    out = []
    for p in params:
        ctype = word.sub(lambda w: subs[w.group(1)], p.ctype)
        out.append(_typed(Param(p.name, ctype, p.pointer or "*" in ctype), types))
    return tuple(out)


def _typed(param: Param, types) -> Param:
    """``param`` with what its type means (c_types)."""
    base, stars = c_types.resolve(param.ctype, types)
    levels = stars or int(param.pointer)  # ``float y[]`` is a pointer too
    if levels > 1:  # a pointer to pointers: its element is not checked
        return dataclasses.replace(param, pointer=True)
    size, _align, dtype, struct = c_types.size_align(base, types)
    if levels == 0:
        return dataclasses.replace(param, dtype=dtype, struct=struct)
    return dataclasses.replace(param, pointer=True, dtype=dtype, struct=struct,
                               any_pointee=base in c_types.ANY_POINTEE,
                               elem_size=size or None)


def _read_params(text: str, name: str) -> list[Param] | None:
    """The untyped parameters of ``name`` in comment-free ``text``."""
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
        return []
    parts = _split_top_level(inner)
    params = []
    for part in parts:
        param = _parse_param(part)
        if param is None:
            return None
        params.append(param)
    return params


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
