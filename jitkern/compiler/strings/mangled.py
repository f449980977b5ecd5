"""C++ types read back from a name the compiler mangled (the Itanium C++ ABI's grammar).

A raw kernel's parameter types are what the compiler compiled, after the preprocessor,
typedefs and templates: the compile instantiates ``__jitkern_signature<decltype(&kernel),
label>`` (toolchain/signatures.py) and the compiler mangles its name. This module decodes
the part of the grammar such a name uses: builtin types, pointers, references,
const/volatile/restrict, pointers to members, named classes in namespaces, template-ids
(``complex<float>``, ``V<float, 4>``) with literal and pack arguments, function types,
arrays and substitutions (``S_``, ``S0_``, ``St``). What it does not know raises
:class:`Undecodable`, and the caller then checks nothing of that kernel (a type that cannot
be known is accepted).

Why not a demangler: it gives back C++ text, which would have to be parsed again to learn
the types (the hand-written parse this replaces). The types a kernel takes are a small part
of the grammar, decoded here straight into values.
"""

from __future__ import annotations

import dataclasses


class Undecodable(ValueError):
    """A mangled name outside the part of the grammar this module reads."""


@dataclasses.dataclass(frozen=True)
class CType:
    """One decoded type. ``kind``: ``builtin`` (``name``: its C spelling), ``class``
    (``name``: qualified, ``args``: template arguments), ``pointer``, ``ref``, ``rref``,
    ``cv`` (``name``: the qualifiers, ``inner``), ``function`` (``inner``: the result,
    ``args``: the parameters), ``array`` (``name``: the bound), ``literal`` (a template's
    value argument: ``name`` its digits, ``inner`` its type), ``pack`` (``args``)."""

    kind: str
    name: str = ""
    inner: "CType | None" = None
    args: tuple = ()


# fmt: off
BUILTINS = {
    "v": "void", "w": "wchar_t", "b": "bool", "c": "char", "a": "signed char",
    "h": "unsigned char", "s": "short", "t": "unsigned short", "i": "int",
    "j": "unsigned int", "l": "long", "m": "unsigned long", "x": "long long",
    "y": "unsigned long long", "n": "__int128", "o": "unsigned __int128", "f": "float",
    "d": "double", "e": "long double", "g": "__float128", "z": "...",
}
BUILTINS_D = {"h": "_Float16", "n": "decltype(nullptr)", "s": "char16_t", "i": "char32_t",
              "u": "char8_t", "a": "auto", "c": "decltype(auto)"}
#: the standard abbreviations (Sa, Sb, ...): std:: names
ABBREVIATIONS = {"a": "std::allocator", "b": "std::basic_string", "s": "std::string",
                 "i": "std::istream", "o": "std::ostream", "d": "std::iostream"}
QUALIFIERS = {"r": "__restrict__", "V": "volatile", "K": "const"}
# fmt: on


class _Reader:
    def __init__(self, text: str):
        self.text, self.pos, self.subs = text, 0, []

    def peek(self, n: int = 1) -> str:
        return self.text[self.pos:self.pos + n]

    def take(self, expected: str | None = None) -> str:
        if self.pos >= len(self.text):
            raise Undecodable("the name ends early")
        c = self.text[self.pos]
        if expected is not None and c != expected:
            raise Undecodable(f"expected {expected!r} at {self.pos}, found {c!r}")
        self.pos += 1
        return c

    def number(self) -> int:
        start = self.pos
        while self.peek().isdigit():
            self.pos += 1
        if start == self.pos:
            raise Undecodable(f"expected a number at {start}")
        return int(self.text[start:self.pos])

    def source_name(self) -> str:
        n = self.number()
        name = self.text[self.pos:self.pos + n]
        if len(name) != n:
            raise Undecodable("a name runs past the end")
        self.pos += n
        return name

    def added(self, t: CType) -> CType:
        self.subs.append(t)
        return t

    # -- types --------------------------------------------------------------
    def type(self) -> CType:
        c = self.peek()
        if c in BUILTINS:
            self.pos += 1
            return CType("builtin", BUILTINS[c])
        handler = _TYPE_CODES.get(c)
        if handler is not None:
            return handler(self)
        if c.isdigit():
            return self.class_name()
        raise Undecodable(f"type code {c!r} at {self.pos}")

    def qualified(self) -> CType:
        quals = []
        while self.peek() in QUALIFIERS:
            quals.append(QUALIFIERS[self.take()])
        return self.added(CType("cv", " ".join(reversed(quals)), self.type()))

    def wrapped(self, kind: str) -> CType:
        self.pos += 1
        return self.added(CType(kind, inner=self.type()))

    def d_type(self) -> CType:
        self.take("D")
        c = self.take()
        if c in BUILTINS_D:
            return CType("builtin", BUILTINS_D[c])
        if c == "F":  # _FloatN
            bits = self.number()
            self.take("_")
            return CType("builtin", f"_Float{bits}")
        if c == "v":  # a vector_size vector: not a kernel parameter type jitkern maps
            raise Undecodable("a vector_size type")
        raise Undecodable(f"type code D{c}")

    def function(self) -> CType:
        self.take("F")
        if self.peek() == "Y":
            self.pos += 1
        result = self.type()
        params = []
        while self.peek() != "E" and self.peek(2) not in ("RE", "OE"):
            params.append(self.type())
        if self.peek() != "E":  # a ref-qualifier (a member function's type)
            self.pos += 1
        self.take("E")
        if [p.name for p in params] == ["void"]:
            params = []
        return self.added(CType("function", inner=result, args=tuple(params)))

    def member_pointer(self) -> CType:
        """``M <class> <member type>``: a pointer to member (spelled ``int C::*``)."""
        self.take("M")
        owner = self.type()
        return self.added(CType("member", owner.name if owner.kind == "class" else "",
                                self.type()))

    def array(self) -> CType:
        self.take("A")
        bound = str(self.number()) if self.peek().isdigit() else ""
        self.take("_")
        return self.added(CType("array", bound, self.type()))

    def class_name(self) -> CType:
        """An unscoped name (``1P``), a template-id (``1VIfE``)."""
        name = self.source_name()
        return self.template_id(self.added(CType("class", name)))

    def template_id(self, template: CType) -> CType:
        if self.peek() != "I":
            return template
        return self.added(dataclasses.replace(template, args=self.template_args()))

    def nested(self) -> CType:
        self.take("N")
        while self.peek() in QUALIFIERS:  # a member function's qualifiers: none here
            self.pos += 1
        prefix = None
        while self.peek() != "E":
            if self.peek() == "I":
                if prefix is None:
                    raise Undecodable("template arguments without a name")
                prefix = self.added(dataclasses.replace(prefix, args=self.template_args()))
                continue
            if self.peek() == "S":
                part = self.substitution()
                prefix = part if prefix is None else CType("class", f"{prefix.name}::{part.name}")
                continue
            name = self.source_name()
            full = name if prefix is None else f"{_spelled_name(prefix)}::{name}"
            prefix = self.added(CType("class", full))
        self.take("E")
        if prefix is None:
            raise Undecodable("an empty nested name")
        return prefix

    def substitution(self) -> CType:
        """``S_``, ``S<seq>_`` (an earlier component), ``St`` (std::) or an abbreviation."""
        self.take("S")
        c = self.peek()
        if c == "t":
            self.pos += 1
            return CType("class", "std")
        if c in ABBREVIATIONS:
            self.pos += 1
            return CType("class", ABBREVIATIONS[c])
        index = 0
        if c != "_":
            digits = ""
            while self.peek() not in ("_", ""):
                digits += self.take()
            try:
                index = int(digits, 36) + 1
            except ValueError:
                raise Undecodable(f"substitution S{digits}_") from None
        self.take("_")
        if index >= len(self.subs):
            raise Undecodable(f"substitution {index} of {len(self.subs)}")
        return self.subs[index]

    def substituted_type(self) -> CType:
        """A type that starts with S: an earlier type, or a (std::) template being used."""
        if self.peek(2) == "St":
            self.pos += 2
            return self.template_id(self.added(CType("class", "std::" + self.source_name())))
        found = self.substitution()
        return self.template_id(found) if self.peek() == "I" else found

    # -- template arguments -------------------------------------------------
    def template_args(self) -> tuple:
        self.take("I")
        args = []
        while self.peek() != "E":
            args.append(self.template_arg())
        self.take("E")
        return tuple(args)

    def template_arg(self) -> CType:
        c = self.peek()
        if c == "L":
            return self.literal()
        if c == "J":
            self.pos += 1
            items = []
            while self.peek() != "E":
                items.append(self.template_arg())
            self.take("E")
            return CType("pack", args=tuple(items))
        if c == "X":
            raise Undecodable("an expression as a template argument")
        return self.type()

    def literal(self) -> CType:
        self.take("L")
        if self.peek() == "_":
            raise Undecodable("an entity as a template argument")
        kind = self.type()
        negative = self.peek() == "n"
        if negative:
            self.pos += 1
        value = self.number() if self.peek().isdigit() else 0
        self.take("E")
        return CType("literal", str(-value if negative else value), kind)


_TYPE_CODES = {
    "P": lambda r: r.wrapped("pointer"),
    "R": lambda r: r.wrapped("ref"),
    "O": lambda r: r.wrapped("rref"),
    "K": _Reader.qualified,
    "V": _Reader.qualified,
    "r": _Reader.qualified,
    "D": _Reader.d_type,
    "F": _Reader.function,
    "A": _Reader.array,
    "M": _Reader.member_pointer,
    "N": _Reader.nested,
    "S": _Reader.substituted_type,
}


@dataclasses.dataclass(frozen=True)
class Member:
    """A data member of a class, as the compiler laid it out: ``record`` is the member's
    own members where its element type is a class (else None)."""

    name: str
    type: CType
    offset: int
    size: int
    align: int
    record: "tuple[Member, ...] | None"


@dataclasses.dataclass(frozen=True)
class Probe:
    """What one signature probe says: the parameters' types; per parameter the size and
    alignment of what it points to (a pointer, a reference) or of itself (a value), 0
    where C++ has none (``void``, a function, a type only declared); and where that is a
    class, the members the probe asked about (``records``, else None)."""

    params: tuple
    sizes: tuple
    aligns: tuple
    records: tuple


#: the probe's tag for member NAME (toolchain/signatures.py)
_NAME_TAG = "__jitkern_name_"


def decode_probe(mangled: str) -> Probe:
    """The :class:`Probe` of the mangled name of ``probe<decltype(&kernel), label>`` (a
    variable template whose defaulted arguments are the sizes, the alignments and the
    records), at namespace scope (NVRTC) or in nvcc's internal namespace."""
    r = _Reader(mangled)
    if not mangled.startswith("_Z"):
        raise Undecodable("not a mangled name")
    r.pos = 2
    if r.peek() == "N":  # in a namespace (nvcc's internal one, for a module's own variable)
        args = r.nested().args
    else:
        r.subs.append(CType("class", r.source_name()))  # an unscoped template name
        args = r.template_args()
    if r.pos != len(mangled):
        raise Undecodable(f"{len(mangled) - r.pos} characters left over")
    if len(args) != 5 or args[0].kind != "pointer" or args[0].inner.kind != "function":
        raise Undecodable("not a pointer to a function")
    params = args[0].inner.args  # args[1]: the probe's label
    sizes, aligns = (tuple(int(a.name) for a in _pack(t)) for t in args[2:4])
    records = tuple(_record(t) for t in _pack(args[4]))
    if not len(sizes) == len(aligns) == len(records) == len(params):
        raise Undecodable("sizes that do not match the parameters")
    return Probe(params, sizes, aligns, records)


def _pack(t: CType) -> tuple:
    """The arguments of a ``values<N...>`` or ``types<T...>`` template-id."""
    if t.kind != "class" or len(t.args) != 1 or t.args[0].kind != "pack":
        raise Undecodable("not a list")
    return t.args[0].args


def _record(t: CType):
    """The members a ``types<member<name, M, offset, size, align, record>..., none>`` lists
    (``void``: not a class: None)."""
    if t.kind == "builtin" and t.name == "void":
        return None
    members = []
    for m in _pack(t):
        if m.kind == "class" and not m.args:
            continue  # a name that is no data member of this class
        tag, member, *numbers, record = m.args
        if not tag.name.startswith(_NAME_TAG) or len(numbers) != 3:
            raise Undecodable("not a member")
        offset, size, align = (int(n.name) for n in numbers)
        members.append(Member(tag.name[len(_NAME_TAG):], member, offset, size, align,
                              _record(record)))
    return tuple(members)


# ---------------------------------------------------------------------------
# Spelling


def _spelled_name(t: CType) -> str:
    if not t.args:
        return t.name
    inner = ", ".join(spelling(a) for a in t.args)
    return f"{t.name}<{inner}{' ' if inner.endswith('>') else ''}>"


def spelling(t: CType) -> str:
    """The C++ spelling of ``t`` (``const float*``, ``thrust::complex<double>``)."""
    kind = t.kind
    if kind == "builtin":
        return t.name
    if kind == "class":
        return _spelled_name(t)
    if kind == "literal":
        return {"bool": {"0": "false", "1": "true"}}.get(t.inner.name, {}).get(t.name, t.name)
    if kind == "pack":
        return ", ".join(spelling(a) for a in t.args)
    if kind == "cv":
        if t.inner.kind in ("pointer", "ref", "rref"):
            return f"{spelling(t.inner)} {t.name}"
        return f"{t.name} {spelling(t.inner)}"
    if kind == "function":
        return f"{spelling(t.inner)} ({', '.join(spelling(a) for a in t.args)})"
    if kind == "member":
        return f"{spelling(t.inner)} {t.name}::*"
    mark = {"pointer": "*", "ref": "&", "rref": "&&"}.get(kind)
    if mark is not None:
        if t.inner.kind == "function":
            fn = t.inner
            return f"{spelling(fn.inner)} ({mark})({', '.join(spelling(a) for a in fn.args)})"
        return spelling(t.inner) + mark
    return f"{spelling(t.inner)}[{t.name}]"  # an array


def unqualified(t: CType) -> CType:
    """``t`` without const/volatile/restrict."""
    while t.kind == "cv":
        t = t.inner
    return t
