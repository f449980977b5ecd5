"""A raw kernel's parameters: their types as NVRTC compiled them, their names from the source.

:func:`compiled_params` is what a RawKernel/RawModule launch is checked against
(runtime/signature.py). Everything it says of a type comes from the compiler: the lowered
name of the kernel's signature probe (toolchain/signatures.py), decoded by :mod:`.mangled`,
spells each parameter's type after ``#if``, ``-D``/``-U``, included headers, typedefs and
templates, the size and alignment of what it points to, and a struct's members (type,
offset, size). Each parameter says what its type means (:mod:`.c_types`): the NumPy dtype
of a scalar or of a pointer's element, whether a pointer takes any array, a struct's
layout, the size of a pointer's element. Where the compiler's answer cannot be read there
is no signature, and nothing is checked but what the binary says (sizes); a struct whose
members the probe could not all see is checked by size.

The source text is read only for names: the parameters' (for messages; :func:`kernel_params`
also gives exports their parameter lists) and the spelling the source gives a type, shown
beside the compiled one (``size_t (unsigned long)``).
"""

from __future__ import annotations

import dataclasses
import re

from . import c_types, mangled

_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_STRINGS = re.compile(r'"(?:\\.|[^"\\])*"')


@dataclasses.dataclass(frozen=True)
class Param:
    """One parameter: ``dtype`` is the NumPy dtype name of the value (a scalar) or of the
    element (a pointer), None when unknown; ``any_pointee``: a ``void*``/``char*``/``unsigned
    char*`` that takes any array; ``struct``: the layout of a struct passed by value (or
    pointed to); ``elem_size``: the size of a pointer's element when known."""

    name: str
    ctype: str
    pointer: bool
    dtype: str | None = None
    any_pointee: bool = False
    struct: c_types.StructDef | None = None
    elem_size: int | None = None


def _strip(source: str) -> str:
    return _COMMENTS.sub(" ", _STRINGS.sub('""', source))


# ---------------------------------------------------------------------------
# The compiled signature


def compiled_params(source: str | None, name: str, lowered: str | None
                    ) -> tuple[Param, ...] | None:
    """The parameters of kernel ``name`` (or name expression ``"fx3<float>"``) as the
    compiler's signature probe ``lowered`` says, or None where there is none or it cannot
    be decoded (the launch is then checked against the binary's sizes only)."""
    if lowered is None:
        return None
    try:
        probe = mangled.decode_probe(lowered)
    except mangled.Undecodable:
        return None
    written = _written(_strip(source or ""), name, len(probe.params))
    return tuple(_compiled(*written[i], t, probe.sizes[i], probe.aligns[i], probe.records[i])
                 for i, t in enumerate(probe.params))


_BY_REFERENCE = ("pointer", "ref", "rref")
#: what the source may write in a parameter that is not part of its type (a top-level
#: qualifier of the function's type, CUDA's parameter attributes)
_NOT_IN_THE_TYPE = re.compile(r"\b(?:__restrict__|__restrict|__grid_constant__)\b")


def _compiled(name: str, spelled: str | None, t: mangled.CType, size: int, align: int,
              record) -> Param:
    """One parameter from its compiled type (named as the source spells it, where that
    differs: ``size_t (unsigned long)``); ``size``/``align``/``record``: the compiler's,
    of what it points to (a pointer or reference) or of itself."""
    ctype, bare = mangled.spelling(t), mangled.unqualified(t)
    if spelled is not None:
        spelled = " ".join(_NOT_IN_THE_TYPE.sub(" ", spelled).split())
    if spelled and spelled.replace(" ", "") != ctype.replace(" ", ""):
        ctype = f"{spelled} ({ctype})"
    if bare.kind not in _BY_REFERENCE:
        dtype, struct = _meaning(bare, size, align, record)
        return Param(name, ctype, False, dtype, struct=struct)
    target = mangled.unqualified(bare.inner)
    if target.kind not in ("builtin", "class"):  # a pointer to pointers, to a function
        return Param(name, ctype, True)
    dtype, struct = _meaning(target, size, align, record)
    known = dtype is not None or target.kind == "class"
    return Param(name, ctype, True, dtype, any_pointee=target.name in c_types.ANY_POINTEE,
                 struct=struct, elem_size=size if known and size else None)


def _meaning(t: mangled.CType, size: int, align: int, record):
    """(dtype name, struct layout) of a builtin or class type."""
    if t.kind == "builtin":
        return c_types.scalar_dtype(t.name), None
    dtype = c_types.class_dtype(mangled.spelling(t), size)
    if dtype is not None:
        return dtype, None
    return None, _struct(mangled.spelling(t), size, align, record)


def _struct(name: str, size: int, align: int, record) -> c_types.StructDef | None:
    """The layout of a class from its members as compiled; None where the members the
    probe saw do not make up the class (one it did not ask about, a bit-field, a union,
    an enum member, an incomplete type): such a struct is checked by size only."""
    if not record or not size:
        return None
    fields, pos = [], 0
    for m in sorted(record, key=lambda m: m.offset):
        field = _field(m)
        if field is None or m.offset != pos + (-pos) % max(m.align, 1):
            return None
        fields.append(field)
        pos = m.offset + m.size
    if pos + (-pos) % max(align, 1) != size:
        return None
    return c_types.StructDef(name, tuple(fields), size, align)


def _field(m: mangled.Member) -> c_types.Field | None:
    """One member as a :class:`~.c_types.Field`; None where its type is not understood."""
    element, count = mangled.unqualified(m.type), 1
    while element.kind == "array" and element.name:
        count *= int(element.name)
        element = mangled.unqualified(element.inner)
    if count == 0 or m.size % count:
        return None
    item = m.size // count
    if element.kind == "pointer":
        dtype, struct = "uint64", None
    elif element.kind in ("builtin", "class"):
        dtype, struct = _meaning(element, item, m.align, m.record)
        if dtype is None and struct is None:
            return None
    else:
        return None
    return c_types.Field(m.name, mangled.spelling(m.type), dtype, struct, count, m.offset,
                         m.size, m.align)


# ---------------------------------------------------------------------------
# The source's parameter lists: names (and, for exports, the types as spelled)


def kernel_params(source: str, name: str) -> tuple[Param, ...] | None:
    """The parameters of ``__global__`` function ``name`` as the source spells them (its
    last definition): names, C types as written, and which are pointers; None where the
    text does not say. The compiler's types are :func:`compiled_params`'."""
    lists = _param_lists(_strip(source), name)
    return tuple(lists[-1]) if lists else None


def _written(text: str, name: str, count: int) -> list[tuple[str, str | None]]:
    """(name, type as written or None) of each parameter, where the source's definitions
    of ``name`` with ``count`` parameters agree on it (one live, others under ``#if``);
    names ``p0``, ``p1``, ... where they do not. A template's written types name its
    parameters (``T*``): not used."""
    base = name.split("<", 1)[0].split("::")[-1].strip()
    lists = [params for params in _param_lists(text, base) if len(params) == count]
    names = {tuple(p.name for p in params) for params in lists}
    out = list(names.pop()) if len(names) == 1 else [f"p{i}" for i in range(count)]
    if "<" in name or not lists:
        return [(n, None) for n in out]
    spelled = [{params[i].ctype for params in lists} for i in range(count)]
    return [(n, s.pop() if len(s) == 1 else None) for n, s in zip(out, spelled)]


def _param_lists(text: str, name: str) -> list[list[Param]]:
    """The parameter lists of every ``__global__`` definition of ``name`` in comment-free
    ``text`` that this reader understands, in source order."""
    pattern = re.compile(r"__global__[^;{}()]*?\b" + re.escape(name) + r"\s*\(")
    out = []
    for found in pattern.finditer(text):
        params = _read_params(text, found.end())
        if params is not None:
            out.append(params)
    return out


def _read_params(text: str, start: int) -> list[Param] | None:
    """The parameters of the list that opens before ``start``."""
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
    params = []
    for part in _split_top_level(inner):
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
