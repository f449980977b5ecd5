"""The C subset of string kernels, written as JIT Python for the simulator.

RawKernel, RawModule, ElementwiseKernel and ReductionKernel hold CUDA C++ source. To run
them without a GPU, the simulator translates that source into the Python of JIT kernels
(:mod:`.raw`, :mod:`.elementwise`, :mod:`.reduction`) and runs them as its own
(:mod:`.translated`): the JIT's typing, then its simulator and its checks.

This module is the translation: CUDA spellings are turned into C that pycparser reads
(:func:`preprocess`, line numbers kept), then every expression is typed with C's rules
(integer promotion, the usual arithmetic conversions, unsigned wrap-around, literals'
types) and written with explicit NumPy conversions, so the JIT computes in exactly the
C types. Integer ``/`` and ``%`` truncate toward zero (:data:`~.ctranslate.HELPERS`), not
Python's floor.
Whatever is outside the subset is refused with a :class:`~jitkern.errors.SimulatorError`
naming the construct and its line; nothing is run approximately.
"""

from __future__ import annotations

import dataclasses
import math
import re

import numpy

from ..compiler.types import bfloat16_dtype
from ..errors import CompileError, SimulatorError

# ---------------------------------------------------------------------------
# types


def _dt(name):
    return numpy.dtype(name)


BOOL, I8, U8, I16, U16 = _dt("bool"), _dt("int8"), _dt("uint8"), _dt("int16"), _dt("uint16")
I32, U32, I64, U64 = _dt("int32"), _dt("uint32"), _dt("int64"), _dt("uint64")
F16, F32, F64 = _dt("float16"), _dt("float32"), _dt("float64")
C64, C128 = _dt("complex64"), _dt("complex128")
BF16 = bfloat16_dtype()  # None without ml_dtypes
#: CuPy's float16 class (cupy/float16.cuh), the element type of string kernels: float16's
#: values, but it meets every type, itself included, as a float (cuda_fp16.h's __half op
#: __half stays __half). Equal to F16 as a dtype; its metadata tells them apart.
F16C = numpy.dtype(numpy.float16, metadata={"cupy": "float16"})


def is_float16_class(t) -> bool:
    return getattr(t, "metadata", None) is not None and "cupy" in t.metadata


def cupy_element(t):
    """A string kernel's element type as the simulator types it (float16: CuPy's class)."""
    return F16C if t == F16 and getattr(t, "kind", "") == "f" else t

#: C base type words (sorted, as pycparser lists them) -> dtype (LP64, as CUDA on Linux).
_BASE = {
    ("_Bool",): BOOL, ("char",): I8, ("char", "signed"): I8, ("char", "unsigned"): U8,
    ("short",): I16, ("int", "short"): I16, ("short", "signed"): I16,
    ("short", "unsigned"): U16, ("int", "short", "unsigned"): U16,
    ("int",): I32, ("signed",): I32, ("int", "signed"): I32, ("unsigned",): U32,
    ("int", "unsigned"): U32, ("long",): I64, ("int", "long"): I64,
    ("long", "unsigned"): U64, ("int", "long", "unsigned"): U64, ("long", "long"): I64,
    ("int", "long", "long"): I64, ("long", "long", "signed"): I64,
    ("long", "long", "unsigned"): U64, ("int", "long", "long", "unsigned"): U64,
    ("float",): F32, ("double",): F64, ("double", "long"): F64,
}

#: Type names every kernel may use, typedef'd for pycparser and mapped here.
TYPEDEFS = {
    "bool": BOOL, "size_t": U64, "ptrdiff_t": I64, "ssize_t": I64, "int8_t": I8,
    "uint8_t": U8, "int16_t": I16, "uint16_t": U16, "int32_t": I32, "uint32_t": U32,
    "int64_t": I64, "uint64_t": U64, "half": F16, "__half": F16, "float16": F16C,
    "__jk_complex64": C64, "__jk_complex128": C128,
    # translate_cucomplex=True: jitkern/cucomplex.cuh names complex<float>/<double> so
    "cuFloatComplex": C64, "cuComplex": C64, "cuDoubleComplex": C128,
    # texture and surface objects: their 64-bit handles (.ctextures reads them)
    "cudaTextureObject_t": U64, "cudaSurfaceObject_t": U64, "CUtexObject": U64,
    "CUsurfObject": U64,
}
if BF16 is not None:
    TYPEDEFS.update({"__nv_bfloat16": BF16, "nv_bfloat16": BF16})


def promote(t):
    """C's integer promotion (bool and narrow ints become int)."""
    if t.kind == "b" or (t.kind in "iu" and t.itemsize < 4):
        return I32
    return t


def real_of(t):
    return F32 if t == C64 else F64 if t == C128 else t


def common(a, b):
    """The usual arithmetic conversions."""
    if a.kind == "c" or b.kind == "c":
        r = max(real_of(a) if a.kind in "cf" else F32, real_of(b) if b.kind in "cf" else F32,
                key=lambda t: t.itemsize)
        return C128 if r == F64 else C64
    if a.kind == "f" or b.kind == "f":
        widest = max((t for t in (a, b) if t.kind == "f"), key=lambda t: t.itemsize)
        # half meets any other type as a float (cupy/float16.cuh); __half op __half stays
        # __half, CuPy's float16 class meets even itself as a float
        if widest == F16 and (a != b or is_float16_class(a) or is_float16_class(b)):
            return F32
        return widest
    a, b = promote(a), promote(b)
    if a == b:
        return a
    if a.kind == b.kind:
        return a if a.itemsize > b.itemsize else b
    u, s = (a, b) if a.kind == "u" else (b, a)
    if u.itemsize >= s.itemsize:
        return u
    return s


def ctor(t) -> str:
    if t.name == "bfloat16":  # ml_dtypes' type, bound by HELPERS
        return "_c_bfloat16"
    return "numpy.bool_" if t.kind == "b" else f"numpy.{t.name}"


@dataclasses.dataclass(frozen=True)
class Pointer:
    """A pointer (or array) to ``elem``: its Python array, an offset and the inner
    dimensions of a multi-dimensional array (``t[4][33]`` indexed once)."""

    elem: numpy.dtype
    inner: tuple = ()
    view: str | None = None  # a char* kernel parameter whose bytes are read as elem (.cstructs)


@dataclasses.dataclass
class Val:
    """A translated expression: Python code and its C type (a dtype or a Pointer)."""

    code: str
    type: object
    lvalue: bool = False
    base: str | None = None  # pointers: the Python array and the offset expression
    offset: str | None = None
    parts: dict | None = None  # a struct's fields (.cstructs)

    @property
    def is_pointer(self) -> bool:
        return isinstance(self.type, Pointer)


@dataclasses.dataclass
class Var:
    """A name in scope: a scalar (``py``), a pointer/array (``base`` and ``offset``, the
    Python name of its offset variable or None), or a bound lvalue expression."""

    py: str
    type: object
    offset: str | None = None
    readonly: bool = False
    size: str | None = None  # raw arrays of ElementwiseKernel: x.size()
    shape: str | None = None  # and x.shape(), x.strides(): int64 arrays
    strides: str | None = None
    parts: dict | None = None  # a struct's fields: name -> Var (.cstructs)

    def val(self) -> Val:
        if self.parts is not None:
            return Val("", self.type, True, parts={f: v.val() for f, v in self.parts.items()})
        if isinstance(self.type, Pointer):
            return Val(self.py, self.type, False, self.py, self.offset)
        return Val(self.py, self.type, not self.readonly)


def convert(v: Val, t) -> str:
    """``v`` as a value of dtype ``t`` (C's conversion rules)."""
    src = v.type
    if isinstance(src, Pointer):  # callers check first (Translator.to)
        raise Refused("a pointer where a number is expected")
    if src == t:
        return v.code
    if src == F64 and t.name in ("float16", "bfloat16"):  # once, not through float32
        return f"_c_double2{'half' if t == F16 else 'bfloat16'}({v.code})"
    if t.kind == "b":
        return f"({v.code} != {ctor(src)}(0))" if src.kind != "b" else v.code
    if t.kind == "c" and src.kind != "c":
        return f"{ctor(t)}({ctor(real_of(t))}({v.code}))"
    if src.kind == "c" and t.kind != "c":
        return f"{ctor(t)}({v.code}.real)"
    if src.kind == "b" and t.kind == "f":
        return f"{ctor(t)}({ctor(I32)}({v.code}))"
    return f"{ctor(t)}({v.code})"


def int_value(digits: str) -> int:
    """An integer literal's value (its suffix taken off)."""
    if digits.startswith("0x"):
        return int(digits, 16)
    if digits.startswith("0b"):
        return int(digits, 2)
    if len(digits) > 1 and digits.startswith("0"):
        return int(digits, 8)
    return int(digits)


def float_text(v: float) -> str:
    if math.isnan(v):
        return "math.nan"
    if math.isinf(v):
        return "math.inf" if v > 0 else "-math.inf"
    return repr(v)


# ---------------------------------------------------------------------------
# errors


#: source outside the simulator's C subset: the public class (a CompileError and a
#: NotImplementedError), under the name the translator's modules raise it by
Refused = SimulatorError

#: where a message names the user's place: ``<kernel> [<part> ]line N[, column C]``
_PLACE = re.compile(r" line (\d+)(?:, column (\d+))?")
#: the construct a refusal names: a quoted token, or a call ``name()``
_TOKEN = re.compile(r"'([^'\s]+)'|\b(\w+)\(\)")


def excerpt(message: str, lines, first_line: int = 1, anchor: str | None = None) -> str:
    """``message`` with the user's line it names shown under it, a caret at the column:
    the quoted construct's place in that line where the message quotes one, else the
    column it gives, else the line's first character. ``lines``: the user's text, a list
    of lines, whose first is line ``first_line`` of the message's numbering. ``anchor``: the
    rest of the line from the error on, as the parser read it (the line may have been
    rewritten before it: its columns are not the user's), found at the user's line's end."""
    m = _PLACE.search(message)
    if m is None or "\n |" in message:
        return message
    n = int(m.group(1))
    k = n - first_line
    if not 0 <= k < len(lines):
        return message
    text = lines[k].replace("\t", " ").rstrip()
    column = None
    if anchor and text.endswith(anchor):
        column = len(text) - len(anchor)
    for t in _TOKEN.finditer(message[m.end():] if column is None else ""):
        token = t.group(1) or t.group(2)
        found = re.search(r"(?<!\w)" + re.escape(token) + r"(?!\w)", text)
        if found is not None:
            column = found.start()
            break
    if column is None and m.group(2) is not None and int(m.group(2)) - 1 < len(text):
        column = int(m.group(2)) - 1
    if column is None:
        column = len(text) - len(text.lstrip())
    if m.group(2) is None:  # the place, always with its column
        message = f"{message[:m.end(1)]}, column {column + 1}{message[m.end(1):]}"
    elif int(m.group(2)) != column + 1:  # the user's column, where the parser's was not
        message = f"{message[:m.start(2)]}{column + 1}{message[m.end(2):]}"
    width = len(str(n))
    return f"{message}\n {n} | {text}\n {' ' * width} | {' ' * column}^"


def refuse(what: str, where) -> Refused:
    return Refused(f"{where}: {what} is outside the C subset the simulator runs "
                   "(docs/debugging.md); run it on a GPU")


# ---------------------------------------------------------------------------
# preprocessing: CUDA spellings -> C that pycparser reads, line numbers kept

_COMMENT_OR_STRING = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'',
                                re.S)
_HEADERS_OK = ("cupy/", "jitkern/")
_CUDA_HEADERS_OK = ("cuda_fp16.h", "cuda_bf16.h")  # __half, __nv_bfloat16 and conversions
_REFUSED_WORDS = [
    (re.compile(r"\btemplate\s*<"), "a template"),
    (re.compile(r"\b(class|union|namespace|using|typename|operator|new|delete)\b"),
     "C++ '{0}'"),
    (re.compile(r"\b(asm|__asm__|__asm)\b"), "inline PTX ({0})"),
    (re.compile(r"\b(reinterpret_cast|const_cast|dynamic_cast)\b"), "{0}"),
    (re.compile(r"\b__constant__\b"), "__constant__ memory"),
    (re.compile(r"\bauto\b"), "'auto'"),
    (re.compile(r"\b(printf|goto|nullptr|texture)\b"), "'{0}'"),
    (re.compile(r"\b__nv_fp8\w*"), "'{0}'"),
    (re.compile(r"\[\s*\]\s*\(|\[\s*&\s*\]|\[\s*=\s*\]"), "a lambda"),
]
_COMPLEX = re.compile(r"(?:thrust\s*::\s*|cuda\s*::\s*std\s*::\s*)?complex\s*<\s*(\w+)\s*>")
_SUBS = [
    (re.compile(r'\bextern\s+"C"\s*'), ""),
    (re.compile(r"\b(inline|_Noreturn|register|__inline__|__forceinline__|__noinline__|"
                r"__host__|static|__restrict__|__restrict|restrict|volatile)\b"), ""),
    (re.compile(r"\b__launch_bounds__\s*\([^()]*\)"), ""),
    (re.compile(r"\b(__align__|alignas)\s*\([^()]*\)"), ""),
    (re.compile(r"\bconstexpr\b"), "const"),
    (re.compile(r"\b__global__\b"), "_Noreturn"),
    (re.compile(r"\b__device__\b"), "inline"),
    (re.compile(r"\b__shared__\b"), "register"),
    (re.compile(r"\bstatic_cast\s*<([^<>;]+)>\s*\("), r"(\1)("),
    # tex2D<float>(t, x, y) -> tex2D((float)0, t, x, y): the type rides on a cast (.ctextures)
    (re.compile(r"\b(tex1Dfetch|tex[123]D|surf[123]Dread)\s*<\s*([\w\s]+?)\s*>\s*\("),
     r"\1((\2)0, "),
]
_DEFINE = re.compile(r"#\s*define\s+(\w+)(\([^)]*\))?\s*(.*)$")
_INCLUDE = re.compile(r'#\s*include\s*[<"]([^>"]+)[>"]')


def _blank(match) -> str:
    text = match.group(0)
    if text.startswith(("//", "/*")):
        return " " * len(text) if "\n" not in text else "\n" * text.count("\n")
    return text


def _extern_c_blocks(text: str) -> str:
    """``extern "C" { ... }``: drop the braces (keeping every other character)."""
    while True:
        m = re.search(r'\bextern\s+"C"\s*\{', text)
        if m is None:
            return text
        depth, k = 1, m.end()
        while k < len(text) and depth:
            depth += (text[k] == "{") - (text[k] == "}")
            k += 1
        if depth:
            return text
        spaces = re.sub(r"[^\n]", " ", m.group(0))
        text = text[: m.start()] + spaces + text[m.end(): k - 1] + " " + text[k:]


def preprocess(source: str, where: str, types: dict, extract=None,
               macros=None) -> tuple[str, dict]:
    """(C for pycparser, the object-like macros' values). ``where`` names the code in
    errors (``my_kernel line 3``); ``types`` maps placeholder names to dtypes; ``extract``
    takes C++ out of the text first (:func:`.ctemplates.extract`); ``macros``: the ones
    defined before ``source`` (a template's text: its unit's)."""
    text = _COMMENT_OR_STRING.sub(_blank, source.replace("\r", ""))
    lines = _splice(text.split("\n"))
    if extract is not None:
        lines = extract("\n".join(lines)).split("\n")
    macros = dict(macros or {})
    out = []
    for n, line in enumerate(lines, 1):
        stripped = line.strip()
        if stripped.startswith("#"):
            out.append(_directive(stripped, f"{where} line {n}", macros))
            continue
        for pattern, what in _REFUSED_WORDS:
            m = pattern.search(line)
            if m is not None:
                raise refuse(what.format(m.group(0).strip()), f"{where} line {n}")
        if "::" in _COMPLEX.sub("", line):
            raise refuse("a C++ scope ('::')", f"{where} line {n}")
        if BF16 is None and re.search(r"\b(__)?nv_bfloat16\b", line):
            raise refuse("'__nv_bfloat16' without ml_dtypes, which the simulator computes "
                         "bfloat16 with (pip install ml_dtypes)", f"{where} line {n}")
        out.append(line)
    text = "\n".join(out)
    text = _expand(text, macros)
    text = _extern_c_blocks(text)
    text = _COMPLEX.sub(lambda m: _complex_name(m, types, where), text)
    text, names = _structs(text)
    for pattern, repl in _SUBS:
        text = pattern.sub(lambda m, r=repl: m.expand(r) if "\\" in r else r, text)
    text = _references(text, {*_TYPE_WORDS, *TYPEDEFS, *types, *names})
    text = re.sub(r"\b__jk_complex(64|128)\s*\(", r"__jk_make_complex\1(", text)
    # a placeholder bound to a complex type, T(re, im) or T(x): its constructor, as
    # complex<double>(re, im) is (a C cast would read T(2, 3) as T((2, 3)), that is T(3))
    for name, t in types.items():
        if t == C64 or t == C128:
            bits = "64" if t == C64 else "128"
            text = re.sub(r"\b" + re.escape(name) + r"\s*\(", f"__jk_make_complex{bits}(", text)
    # C++ functional casts, float(x) and T(0), as C casts
    words = ["float", "double", "int", "unsigned", "char", "short", "long", *TYPEDEFS, *types]
    text = re.sub(r"\b(" + "|".join(map(re.escape, words)) + r")\s*\(", r"(\1)(", text)
    return text, macros


_STRUCT_ALIGN = re.compile(r"\bstruct\s+(?:__align__|alignas)\s*\(\s*(\d+)\s*\)\s*(\w+)\s*\{")
_STRUCT_DEF = re.compile(r"(\btypedef\s+)?\bstruct\s+(\w+)\s*\{")
_TYPEDEF_NAME = re.compile(r"\btypedef\b[^;{}]*?\b(\w+)\s*;")
_TYPE_WORDS = ("void", "bool", "char", "short", "int", "long", "float", "double", "signed",
               "unsigned")


def _keep_lines(text: str, repl: str) -> str:
    return repl + "\n" * text.count("\n")


def _structs(text: str) -> tuple[str, set]:
    """C++ structs as C: ``__align__(N)`` kept as a first field ``char __jk_align_N`` (read
    by .cstructs), each struct name also a typedef name (written before its definition, on
    its line), and ``T{a, b}`` of a struct or typedef name a compound literal ``(T){a, b}``.
    Returns the text and the struct and typedef names."""
    text = _STRUCT_ALIGN.sub(lambda m: _keep_lines(
        m.group(0), f"struct {m.group(2)} {{ char __jk_align_{m.group(1)};"), text)
    names = {m.group(2) for m in _STRUCT_DEF.finditer(text)}
    text = _STRUCT_DEF.sub(lambda m: f"typedef struct {m.group(2)} {m.group(2)}; {m.group(0)}",
                           text)
    names |= {m.group(1) for m in _TYPEDEF_NAME.finditer(text)}
    if not names:
        return text, names
    literal = re.compile(r"(\bstruct\s+)?(?<![\w.])(" + "|".join(map(re.escape, names))
                         + r")(\s*)\{")
    text = literal.sub(lambda m: m.group(0) if m.group(1) else f"({m.group(2)}){m.group(3)}{{",
                       text)
    return text, names


def _references(text: str, type_words: set) -> str:
    """``T& name`` (a reference parameter) as ``T * volatile name``, which .cstructs reads
    back as a reference (``volatile`` itself is dropped before)."""
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, sorted(type_words)))
                         + r")(\s*)&(?![&=])(\s*)(?=[A-Za-z_])")
    return pattern.sub(r"\1\2 * volatile \3", text)


def _splice(lines: list) -> list:
    """Join lines ending in a backslash, each joined line leaving an empty one behind
    (after it), so every other line keeps its number."""
    out, k = [], 0
    while k < len(lines):
        line, extra = lines[k], 0
        while line.endswith("\\") and k + 1 < len(lines):
            k += 1
            extra += 1
            line = line[:-1] + " " + lines[k]
        out.append(line)
        out.extend([""] * extra)
        k += 1
    return out


def _complex_name(m, types, where) -> str:
    inner = m.group(1)
    t = types.get(inner, {"float": F32, "double": F64}.get(inner))
    if t == F32 or t == C64:
        return "__jk_complex64"
    if t == F64 or t == C128:
        return "__jk_complex128"
    raise refuse(f"complex<{inner}>", where)


def _directive(line: str, where: str, macros: dict) -> str:
    m = _INCLUDE.match(line)
    if m is not None:
        if m.group(1).startswith(_HEADERS_OK) or m.group(1) in _CUDA_HEADERS_OK:
            return ""
        raise refuse(f"the header <{m.group(1)}> (not found: the simulator reads headers of the "
                     "kernel's -I folders and jitkern's, and knows cuda_fp16.h and cuda_bf16.h)",
                     where)
    m = _DEFINE.match(line)
    if m is not None:
        if m.group(2) is not None:
            raise refuse(f"the function-like macro {m.group(1)}{m.group(2)}", where)
        macros[m.group(1)] = m.group(3).strip()
        return ""
    m = re.match(r"#\s*undef\s+(\w+)", line)
    if m is not None:
        macros.pop(m.group(1), None)
        return ""
    if re.match(r"#\s*pragma\b", line):
        return ""
    word = re.match(r"#\s*(\w*)", line).group(1)
    raise refuse(f"the preprocessor directive #{word}", where)


def _expand(text: str, macros: dict) -> str:
    if not macros:
        return text
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, macros)) + r")\b")
    for _ in range(16):
        new = pattern.sub(lambda m: _expansion(macros[m.group(1)]), text)
        if new == text:
            break
        text = new
    return text


def _expansion(value: str) -> str:
    """A macro's replacement: an expression in parentheses; statements as they are."""
    if not value or ";" in value or "{" in value:
        return value
    return f"({value})"


def prelude(types: dict, text: str = "") -> str:
    """One line of typedefs naming every type the kernel may use (pycparser needs them),
    and the CUDA vector types ``text`` names (:func:`vector_types`)."""
    names = {**TYPEDEFS, **types}
    return " ".join(f"typedef int {n};" for n in names) + vector_types(text) + "\n"


#: CUDA's vector types: name stem -> the C type of each component
_VECTOR_STEMS = {"char": "signed char", "uchar": "unsigned char", "short": "short",
                 "ushort": "unsigned short", "int": "int", "uint": "unsigned int",
                 "long": "long", "ulong": "unsigned long", "longlong": "long long",
                 "ulonglong": "unsigned long long", "float": "float", "double": "double"}
_VECTOR = re.compile(r"\b(?:make_)?(" + "|".join(sorted(_VECTOR_STEMS, key=len, reverse=True))
                     + r")([1-4])\b")


def vector_types(text: str) -> str:
    """C definitions of the CUDA vector types ``text`` uses (``float4``, ``make_float4``...):
    a struct of the components ``x``, ``y``, ``z``, ``w`` and its ``make_`` function. Their
    sizes are CUDA's (the components' sum); CUDA aligns the 2- and 4-component ones to
    their size, which these structs do not say: a vector inside a struct parameter may sit
    at another offset than on the GPU (docs/debugging.md)."""
    out = []
    for stem, count in sorted({(m.group(1), int(m.group(2))) for m in _VECTOR.finditer(text)}):
        c_type, name, fields = _VECTOR_STEMS[stem], f"{stem}{count}", "xyzw"[:count]
        args = ", ".join(f"{c_type} {f}" for f in fields)
        sets = " ".join(f"v.{f} = {f};" for f in fields)
        out.append(f" typedef struct {name} {{ {c_type} {', '.join(fields)}; }} {name};"
                   f" inline {name} make_{name}({args}) {{ {name} v; {sets} return v; }}")
    return "".join(out)


def parse(source: str, where: str, types: dict, extract=None, macros=None):
    """pycparser's AST of ``source`` (a translation unit) and its macros (``extract``,
    ``macros``: see :func:`preprocess`)."""
    try:
        from pycparser import c_parser
    except ImportError:
        raise CompileError(
            "simulating string kernels (RawKernel, RawModule, ElementwiseKernel, "
            "ReductionKernel) needs pycparser, a dependency of jitkern: pip install pycparser"
        ) from None
    text, macros = preprocess(source, where, types, extract, macros)
    parser = c_parser.CParser()
    try:
        ast = parser.parse(prelude(types, text) + text, "<source>")
    except c_parser.ParseError as exc:
        error = _parse_error(str(exc), source, where, parser)
        parsed = (prelude(types, text) + text).split("\n")
        line, column = _stopped_at(parser)
        if line is not None and 0 < line <= len(parsed):
            error.anchor = parsed[line - 1][max(column - 1, 0):].replace("\t", " ").rstrip()
        raise error from None
    return ast, macros


def _parse_error(message: str, source: str, where: str, parser) -> Refused:
    """The parser's complaint at the user's line and column (the prelude is line 1): from
    its message, or, where it gives no place ("Invalid expression"), from where its lexer
    stopped."""
    m = re.match(r"<source>:(\d+):(\d+): (.*)", message)
    if m is not None:
        line, column, why = int(m.group(1)) - 1, int(m.group(2)), m.group(3)
    else:
        line, column = _stopped_at(parser)
        why = message.split(": ", 1)[-1] if message.startswith("<source>") else message
        if line is None:
            return Refused(f"{where}: cannot read the source ({why}): outside the C subset "
                           "the simulator runs (docs/debugging.md); run it on a GPU")
        line -= 1
    lines = source.split("\n")
    text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    return Refused(
        f"{where} line {line}, column {max(column, 1)}: cannot read {text!r} ({why}): outside "
        "the C subset the simulator runs (docs/debugging.md); run it on a GPU"
    )


def _stopped_at(parser) -> tuple:
    """(line, column) of the token pycparser stopped at, where its message gives none;
    (None, None) where this pycparser keeps no such record (its token stream is private:
    read with care, and only for the message)."""
    tokens = getattr(parser, "_tokens", None)
    buffer, index = getattr(tokens, "_buffer", None), getattr(tokens, "_index", None)
    if isinstance(buffer, list) and isinstance(index, int) and buffer:
        token = buffer[min(index, len(buffer) - 1)]
        line, column = getattr(token, "lineno", None), getattr(token, "column", None)
        if isinstance(line, int) and isinstance(column, int):
            return line, column
    return None, None


def line_of(node) -> int:
    """The user's line of a node (the prelude is one line)."""
    coord = getattr(node, "coord", None)
    return coord.line - 1 if coord is not None and coord.line else 0
