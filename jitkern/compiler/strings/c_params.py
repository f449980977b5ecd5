"""A raw kernel's parameters: their types as NVRTC compiled them, their names from the source.

:func:`compiled_params` is what a RawKernel/RawModule launch is checked against
(runtime/signature.py). Its types come from the compiler: the lowered name of the kernel's
signature probe (toolchain/signatures.py), decoded by :mod:`.mangled`, so they are the
types after ``#if``, ``-D``/``-U``, included headers, typedefs and templates. Each
parameter says what its type means (:mod:`.c_types`): the NumPy dtype of a scalar or of a
pointer's element, whether a pointer takes any array, the layout of a struct (the source's
definition of the compiled type's name, used only where its size and alignment are the
compiler's), the size of a pointer's element. Where the compiler's answer cannot be read,
there is no signature, and nothing is checked but what the binary says (sizes).

The source text is read only for what the compiler does not say: the parameters' names,
for messages (:func:`kernel_params`, which also gives exports their parameter lists), and
the fields of a struct.
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
    text = _strip(source or "")
    written = _written(text, name, len(probe.params))
    types = c_types.source_types(text)
    return tuple(_compiled(*written[i], t, probe.sizes[i], probe.aligns[i], types)
                 for i, t in enumerate(probe.params))


_BY_REFERENCE = ("pointer", "ref", "rref")


def _compiled(name: str, spelled: str | None, t: mangled.CType, size: int, align: int,
              types) -> Param:
    """One parameter from its compiled type (named as the source spells it, where that
    differs: ``size_t (unsigned long)``); ``size``/``align``: the compiler's, of what it
    points to (a pointer or reference) or of itself."""
    ctype, bare = mangled.spelling(t), mangled.unqualified(t)
    if spelled is not None and spelled.replace(" ", "") != ctype.replace(" ", ""):
        ctype = f"{spelled} ({ctype})"
    if bare.kind not in _BY_REFERENCE:
        dtype, struct = _meaning(bare, size, align, types)
        return Param(name, ctype, False, dtype, struct=struct)
    target = mangled.unqualified(bare.inner)
    if target.kind not in ("builtin", "class"):  # a pointer to pointers, to a function
        return Param(name, ctype, True)
    dtype, struct = _meaning(target, size, align, types)
    known = dtype is not None or target.kind == "class"
    return Param(name, ctype, True, dtype, any_pointee=target.name in c_types.ANY_POINTEE,
                 struct=struct, elem_size=size if known and size else None)


def _meaning(t: mangled.CType, size: int, align: int, types):
    """(dtype name, struct layout) of a builtin or class type; the source's struct only
    where the compiler lays it out the same (size and alignment)."""
    if t.kind == "builtin":
        return c_types.scalar_dtype(t.name), None
    local = mangled.spelling(mangled.CType("class", t.name.split("::")[-1], args=t.args))
    dtype = c_types.scalar_dtype(local)
    if dtype is not None:
        return dtype, None
    struct = types.structs.get(local) or (c_types.vector_struct(local) if "::" not in t.name
                                          else None)
    if struct is not None and size and (struct.size, struct.align) != (size, align):
        struct = None  # another definition than the one compiled (an #if): not known
    return None, struct


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
