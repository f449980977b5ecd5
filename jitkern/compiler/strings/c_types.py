"""What a raw kernel's C parameter types are: NumPy dtypes, pointees and struct layouts.

:func:`~.c_params.kernel_params` reads the parameter list; this module says what each
spelled type means, so that the runtime can check a launch against it
(runtime/signature.py): the NumPy dtype of a scalar or of a pointer's element, whether a
pointer takes any array (``void*``, ``char*``, ``unsigned char*``), and the C layout
(offsets, sizes, alignment, padding) of a ``struct`` defined in the same source. Type
names come from one table (arrays.dtypes' C++ spellings plus C's and CUDA's aliases),
``typedef``/``using`` aliases and object-like ``#define`` aliases of the source. A type
this reader does not know is ``None`` and is checked by size only (the CUBIN's).
"""

from __future__ import annotations

import dataclasses
import re

from ...arrays import dtypes

# C spelling (qualifiers stripped, whitespace normalised) -> NumPy dtype name.
# fmt: off
SCALARS: dict[str, str] = {
    **{row.cxx: row.name for row in dtypes.ROWS},
    "char": "int8", "signed char": "int8", "unsigned char": "uint8", "_Bool": "bool",
    "short int": "int16", "signed short": "int16", "unsigned short int": "uint16",
    "signed": "int32", "signed int": "int32", "unsigned": "uint32",
    "long": "int64", "long int": "int64", "unsigned long": "uint64",
    "unsigned long int": "uint64", "long long int": "int64", "signed long long": "int64",
    "unsigned long long int": "uint64", "size_t": "uint64", "ptrdiff_t": "int64",
    "ssize_t": "int64", "int8_t": "int8", "uint8_t": "uint8", "int16_t": "int16",
    "uint16_t": "uint16", "int32_t": "int32", "uint32_t": "uint32", "int64_t": "int64",
    "uint64_t": "uint64", "half": "float16", "__half": "float16",
    "float16": "float16", "bfloat16": "bfloat16",  # CuPy's classes (cupy/float16.cuh, ...)
    "complex<float>": "complex64", "complex<double>": "complex128",
    "cuComplex": "complex64", "cuFloatComplex": "complex64", "cuDoubleComplex": "complex128",
    "cudaTextureObject_t": "uint64", "cudaSurfaceObject_t": "uint64",
    "CUtexObject": "uint64", "CUsurfObject": "uint64",
}
# fmt: on
SCALARS = {k: v for k, v in SCALARS.items() if v in dtypes.BY_NAME or v == "bool"}

#: CUDA's vector types: (element dtype, count, alignment) (vector_types.h).
VECTORS: dict[str, tuple[str, int, int]] = {}
for _c, _dt, _sz in (("char", "int8", 1), ("uchar", "uint8", 1), ("short", "int16", 2),
                     ("ushort", "uint16", 2), ("int", "int32", 4), ("uint", "uint32", 4),
                     ("float", "float32", 4), ("longlong", "int64", 8),
                     ("ulonglong", "uint64", 8), ("double", "float64", 8)):
    for _n, _align in ((1, 1), (2, 2), (3, 1), (4, 4)):
        VECTORS[f"{_c}{_n}"] = (_dt, _n, min(_sz * _align, 16) if _n != 3 else _sz)

#: Pointees that accept an array of any element type.
ANY_POINTEE = frozenset({"void", "char", "unsigned char"})

_QUALIFIERS = re.compile(r"\b(const|volatile|__restrict__|__restrict|restrict|struct|"
                         r"__grid_constant__|typename)\b")
_NAMESPACES = re.compile(r"\b(?:cuda::std|thrust|std|cuda)::")


@dataclasses.dataclass(frozen=True)
class Field:
    """One member of a struct: its NumPy dtype name (or a nested struct), how many
    elements (``float m[25]``: 25), and where it sits."""

    name: str
    ctype: str
    dtype: str | None
    struct: "StructDef | None"
    count: int
    offset: int
    size: int
    align: int


@dataclasses.dataclass(frozen=True)
class StructDef:
    """A ``struct`` of the source, laid out as the C compiler lays it out."""

    name: str
    fields: tuple[Field, ...]
    size: int
    align: int


@dataclasses.dataclass(frozen=True)
class SourceTypes:
    """The type names a source defines: aliases (``typedef``, ``using``, ``#define``) and
    structs it lays out."""

    aliases: dict
    structs: dict


def base_type(ctype: str) -> str:
    """``ctype`` without qualifiers, pointers, references and namespace prefixes."""
    text = _NAMESPACES.sub("", _QUALIFIERS.sub(" ", ctype))
    text = text.replace("*", " ").replace("&", " ")
    text = re.sub(r"\s*([<>,])\s*", r"\1", " ".join(text.split()))
    return text


def resolve(ctype: str, types: SourceTypes) -> tuple[str, int]:
    """(the base type name this module knows, how many ``*`` the type has in all) of
    ``ctype``, following the source's aliases (``typedef float* fptr``)."""
    stars = ctype.count("*")
    name = base_type(ctype)
    for _ in range(16):
        target = types.aliases.get(name)
        if target is None:
            break
        stars += target.count("*")
        name = base_type(target)
    return name, stars


def resolve_name(name: str, types: SourceTypes, depth: int = 0) -> str:
    """Follow the source's aliases from ``name`` to a name this module knows."""
    while name in types.aliases and depth < 16:
        name = base_type(types.aliases[name])
        depth += 1
    return name


def scalar_dtype(name: str) -> str | None:
    return SCALARS.get(name)


# ---------------------------------------------------------------------------
# Reading the source's aliases and structs


_TYPEDEF = re.compile(r"\btypedef\s+(?!struct\b)([\w\s:<>,*]+?)\s+(\w+)\s*;")
_USING = re.compile(r"\busing\s+(\w+)\s*=\s*([\w\s:<>,*]+?)\s*;")
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)[ \t]+([\w \t:<>,*]+?)[ \t]*$", re.M)
_STRUCT = re.compile(r"\bstruct\s+(?:(?:__align__|alignas)\s*\(\s*(\d+)\s*\)\s*)?(\w+)\s*"
                     r"\{([^{}]*)\}")
_TYPEDEF_STRUCT = re.compile(r"\btypedef\s+struct\s+(?:(?:__align__|alignas)\s*\(\s*(\d+)\s*\)"
                             r"\s*)?(\w*)\s*\{([^{}]*)\}\s*(\w+)\s*;")


def source_types(text: str) -> SourceTypes:
    """The aliases and struct layouts of ``text`` (comments already stripped)."""
    aliases = {}
    for m in _DEFINE.finditer(text):
        aliases[m.group(1)] = m.group(2)
    for m in _TYPEDEF.finditer(text):
        aliases[m.group(2)] = m.group(1)
    for m in _USING.finditer(text):
        aliases[m.group(1)] = m.group(2)
    bodies = []
    for m in _STRUCT.finditer(text):
        bodies.append((m.group(2), m.group(1), m.group(3)))
    for m in _TYPEDEF_STRUCT.finditer(text):
        bodies.append((m.group(4), m.group(1), m.group(3)))
        if m.group(2):
            aliases[m.group(2)] = m.group(4)
    types = SourceTypes(aliases, {})
    for name, align, body in bodies:  # in source order: a member struct is defined first
        layout = _layout(name, body, int(align) if align else 1, types)
        if layout is not None:
            types.structs[name] = layout
    return types


def struct_of(name: str, types: SourceTypes) -> StructDef | None:
    return types.structs.get(resolve_name(name, types))


def size_align(name: str, types: SourceTypes) -> tuple[int, int, str | None, StructDef | None]:
    """(size, alignment, dtype name, struct) of the type ``name``; size 0 if unknown."""
    name = resolve_name(name, types)
    dtype = SCALARS.get(name)
    if dtype is not None:
        item = dtypes.BY_NAME[dtype].itemsize if dtype in dtypes.BY_NAME else 1
        return item, item, dtype, None  # complex<T>: aligned to its whole size
    struct = types.structs.get(name) or vector_struct(name)
    if struct is not None:
        return struct.size, struct.align, None, struct
    return 0, 0, None, None


def vector_struct(name: str) -> StructDef | None:
    """CUDA's ``float3``, ``double2``, ... as the struct they are (members x, y, z, w)."""
    if name not in VECTORS:
        return None
    elem, count, align = VECTORS[name]
    item = dtypes.BY_NAME[elem].itemsize
    ctype = name.rstrip("1234")
    fields = tuple(Field(c, ctype, elem, None, 1, i * item, item, item)
                   for i, c in enumerate("xyzw"[:count]))
    return StructDef(name, fields, item * count, align)


_MEMBER = re.compile(r"^(.*?)(\**)\s*([A-Za-z_]\w*)\s*((?:\[\s*\d+\s*\])*)$")


def _layout(name: str, body: str, align: int, types: SourceTypes) -> StructDef | None:
    """Lay out the members of ``body`` as C does (each at a multiple of its alignment,
    the size a multiple of the struct's); None if a member is not understood."""
    fields, pos = [], 0
    for decl in (d.strip() for d in body.split(";")):
        if not decl:
            continue
        parsed = _members(decl)
        if parsed is None:
            return None
        for ctype, pointer, member, count in parsed:
            if pointer:
                size, falign, dtype, struct = 8, 8, "uint64", None
            else:
                size, falign, dtype, struct = size_align(base_type(ctype), types)
            if size == 0:
                return None
            pos += (-pos) % falign
            fields.append(Field(member, ctype, dtype, struct, count, pos, size * count, falign))
            pos += size * count
            align = max(align, falign)
    if not fields:
        return None
    pos += (-pos) % align
    return StructDef(name, tuple(fields), pos, align)


def _members(decl: str):
    """[(ctype, is_pointer, name, count)] of one declaration (``double x, y;``)."""
    parts = [p.strip() for p in decl.split(",")]
    first = _MEMBER.match(parts[0])
    if first is None or not first.group(1).strip() or "(" in decl or "static" in decl:
        return None
    ctype = first.group(1).strip()
    out = []
    for i, part in enumerate(parts):
        m = first if i == 0 else _MEMBER.match(part)
        if m is None or (i and m.group(1).strip()):
            return None
        count = 1
        for dim in re.findall(r"\d+", m.group(4)):
            count *= int(dim)
        out.append((ctype, bool(m.group(2)), m.group(3), count))
    return out
