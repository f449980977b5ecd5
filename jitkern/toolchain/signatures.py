"""Asking the compiler, in the compile that builds a raw kernel, for the kernel's parameter types.

A raw kernel's launch is checked against its C signature (runtime/signature.py). Only the
compiler knows that signature for sure: after ``#if``/``#ifdef``, ``-D``/``-U``, included
headers, typedefs and templates. So the compile of a RawKernel/RawModule appends a few
templates (:func:`probe_source`) and instantiates, for each kernel it can name, the
variable template ``__jitkern_signature<decltype(&kernel), label>`` (one byte of
``__device__`` data, no kernel, no code). The compiler mangles its name, and the mangled
name spells, as the compiler sees them (compiler/strings/mangled.py decodes it):

- the kernel's function type: each parameter's type;
- the size and alignment of what each parameter points to (or of the parameter);
- for each parameter that is (or points to) an aggregate class, its data members: type,
  offset, size and alignment, and the same for a member that is itself such a class.

NVRTC hands the mangled names back for name expressions; with ``backend="nvcc"`` the
probes are instantiated explicitly and their names read from the binary's symbols
(:func:`build_probed`).

C++ cannot list a class's members, so the probe asks by name: every identifier that ends
a declaration in a ``struct``/``class``/``union`` body of the source or of a header from the
user's folders (:func:`member_names`) is tried on each class (``offsetof(T, name)`` in a
SFINAE context: a name that is no public non-static data member of ``T`` answers "none").
A member the probe did not ask about leaves a gap in the class, and such a class is then
checked by size only (compiler/strings/c_params.py). Only names come from the text; every
type, offset and size comes from the compiler.

Which kernels: every non-template ``__global__`` function the source text defines (with its
enclosing namespaces), and every name expression. A name the preprocessor removed (a
kernel under ``#if 0``) or that the source spells through a macro makes its probe fail: the
compile is then run again without the failed probes, and that kernel is not checked
(:func:`failed`). C++ before C++14 has no variable templates: nothing is probed.
"""

from __future__ import annotations

import re

from ..errors import CompileError

TEMPLATE = "__jitkern_signature"
#: the probe of kernel i is told apart by its label type (nvcc's symbols say no more)
LABEL = "__jitkern_label_"
PROBE_FILE = "jitkern-signatures"

# The templates every probe uses. Its own file name (#line), so an error in it is never
# shown as a line of the user's. Every name it declares is reserved (__jk..., __jitkern_...):
# the user's macros are live where it is appended (#define N 256, #define T float). What each
# template says:
#   target<T>: what a pointer or reference parameter points to (else T);
#   base<T>:   the element type of an array member, without const/volatile;
#   size<T>:   sizeof and alignof, 0 for an incomplete type (a struct only declared, void);
#   m<Tag, T>: member Tag (__jitkern_name_NAME) of class T: its field, or none (one
#              specialisation per name, below);
#   field<Tag, M, O>: a member of type M at offset O, its size and alignment, and, for a
#              class (or an array of them), its own record;
#   record<T>: for an aggregate class T, its members as fields (filled in by probe_source):
#              a class with constructors (complex, __half, CuPy's float16) is a number here.
_COMMON = """
#line 1 "{file}"
#pragma nv_diagnostic push
#pragma nv_diag_suppress 1427
template <class __jkT> struct __jitkern_target {{ typedef __jkT __jktype; }};
template <class __jkT> struct __jitkern_target<__jkT*> {{ typedef __jkT __jktype; }};
template <class __jkT> struct __jitkern_target<__jkT&> {{ typedef __jkT __jktype; }};
template <class __jkT> struct __jitkern_target<__jkT&&> {{ typedef __jkT __jktype; }};
template <class __jkT> struct __jitkern_base {{ typedef __jkT __jktype; }};
template <class __jkT, unsigned long long __jkN> struct __jitkern_base<__jkT[__jkN]> {{
  typedef typename __jitkern_base<__jkT>::__jktype __jktype; }};
template <class __jkT> struct __jitkern_base<const __jkT> {{
  typedef typename __jitkern_base<__jkT>::__jktype __jktype; }};
template <class __jkT> struct __jitkern_base<volatile __jkT> {{
  typedef typename __jitkern_base<__jkT>::__jktype __jktype; }};
template <class __jkT> struct __jitkern_base<const volatile __jkT> {{
  typedef typename __jitkern_base<__jkT>::__jktype __jktype; }};
template <class __jkT, class = void> struct __jitkern_size {{
  static const unsigned long long __jksize = 0, __jkalign = 0; }};
template <class __jkT> struct __jitkern_size<__jkT, decltype(void(sizeof(__jkT)))> {{
  static const unsigned long long __jksize = sizeof(__jkT), __jkalign = alignof(__jkT); }};
#define __JITKERN_OFFSET(__jkT, __jkm) __INTADDR__(&(((__jkT*)0)->__jkm))
#if defined(__has_builtin)
#if __has_builtin(__builtin_offsetof)
#undef __JITKERN_OFFSET
#define __JITKERN_OFFSET(__jkT, __jkm) __builtin_offsetof(__jkT, __jkm)
#endif
#endif
template <unsigned long long...> struct __jitkern_values {{}};
template <class...> struct __jitkern_types {{}};
struct __jitkern_none;
template <class __jkT, class = void> struct __jitkern_record {{ typedef void __jktype; }};
template <class __jkN, class __jkM, unsigned long long __jkO, unsigned long long __jkS,
          unsigned long long __jkA, class __jkR> struct __jitkern_member {{}};
template <class __jkTag, class __jkT, class = void> struct __jitkern_m {{
  typedef __jitkern_none __jktype; }};
template <class __jkTag, class __jkM, unsigned long long __jkO> struct __jitkern_field {{
  typedef __jitkern_member<__jkTag, __jkM, __jkO, sizeof(__jkM), alignof(__jkM),
      typename __jitkern_record<typename __jitkern_base<__jkM>::__jktype>::__jktype>
      __jktype; }};
"""

# One member name: its tag type, and the specialisation that answers for a class whose
# non-static data member it is (offsetof compiles: not for a member function, a static or
# private member, a bit-field). Skipped where the name is a macro. NVRTC before 13.5 has no
# __builtin_offsetof (13.0 answers so through __has_builtin): there the front end's own
# __INTADDR__ spells offsetof (without a probe that compiles there, NVRTC 13.0 checked no
# raw kernel's arguments at all).
_MEMBER = """#ifndef {n}
struct __jitkern_name_{n};
template <class __jkT> struct __jitkern_m<__jitkern_name_{n}, __jkT,
                                          decltype(void(__JITKERN_OFFSET(__jkT, {n})))> {{
  typedef typename __jitkern_field<__jitkern_name_{n},
      decltype(static_cast<__jkT*>(nullptr)->{n}), __JITKERN_OFFSET(__jkT, {n})>::__jktype
      __jktype; }};
#endif
"""

_RECORD = """template <class __jkT, bool = __is_class(__jkT) && __is_aggregate(__jkT)>
struct __jitkern_fields {{ typedef void __jktype; }};
template <class __jkT> struct __jitkern_fields<__jkT, true> {{
  typedef __jitkern_types<
{fields}__jitkern_none> __jktype; }};
template <class __jkT> struct __jitkern_record<__jkT, decltype(void(sizeof(__jkT)))>
    : __jitkern_fields<__jkT> {{}};
"""

_SIGNATURE = f"""template <class __jkF> struct __jitkern_layout {{
  typedef void __jksizes; typedef void __jkaligns; typedef void __jkrecords; }};
template <class __jkR, class... __jkA> struct __jitkern_layout<__jkR (*)(__jkA...)> {{
  typedef __jitkern_values<
      __jitkern_size<typename __jitkern_target<__jkA>::__jktype>::__jksize...> __jksizes;
  typedef __jitkern_values<
      __jitkern_size<typename __jitkern_target<__jkA>::__jktype>::__jkalign...> __jkaligns;
  typedef __jitkern_types<typename __jitkern_record<typename __jitkern_base<
      typename __jitkern_target<__jkA>::__jktype>::__jktype>::__jktype...> __jkrecords;
}};
template <class __jkF, class __jkL, class __jkS = typename __jitkern_layout<__jkF>::__jksizes,
          class __jkA = typename __jitkern_layout<__jkF>::__jkaligns,
          class __jkR = typename __jitkern_layout<__jkF>::__jkrecords>
__device__ const char {TEMPLATE} = 0;
#undef __JITKERN_OFFSET
#pragma nv_diagnostic pop
"""

#: the members of CUDA's vector types (float3, ...), asked of every class
_VECTOR_MEMBERS = ("x", "y", "z", "w")
#: more names than this in the source's classes: only x/y/z/w are asked about, and the
#: source's structs are checked by size (each name costs about 0.05 ms of compile time,
#: more with each struct parameter)
MAX_MEMBER_NAMES = 128


def probe_source(names, labels: int) -> str:
    """The text appended to the user's source: the templates, one record of ``names``,
    ``labels`` label types (one per kernel probed)."""
    members = "".join(_MEMBER.format(n=n) for n in names)
    fields = "".join(f"#ifndef {n}\ntypename __jitkern_m<__jitkern_name_{n}, __jkT>::__jktype,"
                     "\n#endif\n" for n in names)
    tags = "".join(f"struct {LABEL}{i};\n" for i in range(labels))
    return (_COMMON.format(file=PROBE_FILE) + members + _RECORD.format(fields=fields)
            + _SIGNATURE + tags)


_OLD_STD = re.compile(r"^--?std=c\+\+(98|03|0x|11)$")
_COMMENT_OR_STRING = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'',
                                re.S)
_DIRECTIVE = re.compile(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.M)
_TOKENS = re.compile(r"\bnamespace\s+([\w:]*)\s*(?:__attribute__\s*\(\(.*?\)\)\s*)?\{|[{}]|"
                     r"\b__global__\b")
#: what may stand between __global__ and the kernel's name with parentheses of its own
_ATTRIBUTES = frozenset({"__launch_bounds__", "__cluster_dims__", "__maxnreg__",
                         "__block_size__", "__attribute__", "__declspec", "alignas",
                         "__align__", "decltype"})


def probes(source: str, name_expressions: tuple, options: tuple) -> dict[str, str]:
    """{kernel name or name expression: the expression that probes its signature}."""
    if any(_OLD_STD.match(o) for o in options):
        return {}
    named = dict(kernel_names(source))
    named.update((e, e) for e in name_expressions if not e.lstrip().startswith("&"))
    return {label: f"{TEMPLATE}<decltype(&{name}), {LABEL}{i}>"
            for i, (label, name) in enumerate(named.items())}


def _code(text: str) -> str:
    """``text`` without comments, strings and preprocessor lines."""
    return _DIRECTIVE.sub("", _COMMENT_OR_STRING.sub(" ", text))


def kernel_names(source: str) -> list[tuple[str, str]]:
    """(name, name qualified by its namespaces) of each non-template ``__global__``
    function the text defines or declares; preprocessor lines are not read."""
    text = _code(source)
    found, scopes = [], []
    for m in _TOKENS.finditer(text):
        token = m.group(0)
        if token.startswith("namespace"):
            scopes.append(m.group(1))  # "" for an anonymous namespace: visible outside
        elif token == "{":
            scopes.append(None)
        elif token == "}":
            if scopes:
                scopes.pop()
        elif not _templated(text, m.start()):
            name = _name_after(text, m.end())
            if name is not None:
                outer = [s for s in scopes if s]
                found.append((name, "::".join([*outer, name]) if outer else name))
    return found


def _templated(text: str, at: int) -> bool:
    """Whether the declaration ``__global__`` at ``at`` is in has a template header."""
    start = max(text.rfind(";", 0, at), text.rfind("}", 0, at), text.rfind("{", 0, at))
    return re.search(r"\btemplate\s*<", text[start + 1:at]) is not None


_CALLED = re.compile(r"([A-Za-z_]\w*)\s*\(|[;{}]")


def _name_after(text: str, pos: int) -> str | None:
    """The kernel's name: the first word before a parenthesis that is not an attribute's."""
    while True:
        m = _CALLED.search(text, pos)
        if m is None or m.group(1) is None:
            return None
        if m.group(1) not in _ATTRIBUTES:
            return m.group(1)
        pos = _closing(text, m.end() - 1)
        if pos is None:
            return None


def _closing(text: str, open_at: int) -> int | None:
    depth = 0
    for k in range(open_at, len(text)):
        depth += (text[k] == "(") - (text[k] == ")")
        if depth == 0:
            return k + 1
    return None


# ---------------------------------------------------------------------------
# The member names to ask about

_CLASS_HEAD = re.compile(r"\b(?:struct|class|union)\b[^;{}()]*(?:\([^()]*\)[^;{}()]*)*\{")
#: an identifier that ends a member's declarator: `a;`, `a, b`, `m[4]`, `f : 3`, `x = 0`, `y{}`
_DECLARED = re.compile(r"\b([A-Za-z_]\w*)\s*(?=[;,\[={]|:(?!:))")
_KEYWORDS = frozenset("""
alignas alignof and asm auto bool break case catch char char16_t char32_t char8_t class const
const_cast consteval constexpr constinit continue decltype default delete do double
dynamic_cast else enum explicit export extern false float for friend goto if inline int long
mutable namespace new noexcept not nullptr operator or private protected public register
reinterpret_cast restrict return short signed sizeof static static_assert static_cast struct
switch template this thread_local throw true try typedef typeid typename union unsigned using
virtual void volatile wchar_t while xor bitand bitor compl and_eq or_eq xor_eq not_eq
co_await co_yield co_return concept requires""".split())


def member_names(texts) -> tuple[str, ...]:
    """The names the probe asks every class about: each identifier that ends a declaration
    in a class body of ``texts`` (a superset of the members: a name that is no member of a
    class answers none), and x/y/z/w (CUDA's vector types); only those where there are
    more than :data:`MAX_MEMBER_NAMES`."""
    names = set(_VECTOR_MEMBERS)
    for text in texts:
        code = _code(text)
        for head in _CLASS_HEAD.finditer(code):
            body = code[head.end():_matching_brace(code, head.end())]
            names.update(n for n in _DECLARED.findall(body)
                         if n not in _KEYWORDS and not n.startswith("__"))
            if len(names) > MAX_MEMBER_NAMES:
                return _VECTOR_MEMBERS
    return tuple(sorted(names))


def _matching_brace(text: str, start: int) -> int:
    depth = 1
    for k in range(start, len(text)):
        depth += (text[k] == "{") - (text[k] == "}")
        if depth == 0:
            return k
    return len(text)


# ---------------------------------------------------------------------------
# The compile with the probes


def build_probed(source: str, names: tuple, options: tuple, headers, compile, nvcc: bool):
    """``compile(suffix, name_expressions) -> (data, log, lowered, skipped)`` run with
    the probes of ``source``'s kernels and of ``names`` (``headers``: the text of the
    user's headers it may include): (compile's result for ``names``, {label: mangled
    name of its probe}). NVRTC lowers each probe as a name expression; with nvcc, each is
    instantiated explicitly and read back from the binary's symbols. A probe the
    compiler refuses (a kernel the preprocessor removed, a name spelled by a macro) is
    left out and the source compiled again; an error of the user's own is raised."""
    probing = probes(source, names, options)
    common = (probe_source(member_names([source, *headers]), len(probing)) if probing
              else "")
    while probing:
        exprs = tuple(f"&{e}" for e in probing.values())
        instances = "".join(f"template __device__ const char {e};\n" for e in probing.values())
        try:
            if nvcc:
                out = compile(common + instances, ())
                return out, _from_symbols(out[0], probing)
            data, log, lowered, skipped = compile(common, exprs)
        except CompileError as exc:
            if not mentions_probes(exc.log or ""):
                raise
            first = common.count("\n") - 1 if nvcc else None  # after #line 1
            bad = failed(exc.log or "", probing, first)
            probing = {k: v for k, v in probing.items() if k not in bad} if bad else {}
            continue
        found = {label: lowered[f"&{e}"] for label, e in probing.items()}
        return (data, log, {n: lowered[n] for n in names}, skipped), found
    return compile("", ()), {}


_SYMBOL = re.compile(rb"_Z\w*" + TEMPLATE.encode() + rb"I\w*")
#: a label type in a mangled name: its length, then its name (the next name's length follows)
_MANGLED_LABEL = re.compile(r"(\d+)" + LABEL)


def _from_symbols(binary: bytes, probing: dict[str, str]) -> dict[str, str]:
    """{label: mangled name} of the probe variables among ``binary``'s symbols (nvcc)."""
    by_name = {}
    for symbol in set(_SYMBOL.findall(binary)):
        text = symbol.decode("ascii")
        m = _MANGLED_LABEL.search(text)
        if m is not None:
            by_name[text[m.end(1):m.end(1) + int(m.group(1))]] = text
    out = {}
    for label, expr in probing.items():
        tag = expr.rsplit(", ", 1)[1].rstrip(">")
        if tag in by_name:
            out[label] = by_name[tag]
    return out


_PRAGMA = re.compile(r"#pragma nv_mangled_name (.*)$", re.M)
_PROBE_LINE = re.compile(re.escape(PROBE_FILE) + r'"?\((\d+)\)')


def failed(log: str, probing: dict[str, str], first_instance: int | None = None) -> set[str]:
    """The labels of ``probing`` whose probe the compile log shows an error in: NVRTC
    quotes a name expression; nvcc names the line of an explicit instantiation (the
    first at line ``first_instance`` of the probe's text, one a line, in order)."""
    named = {m.group(1).strip() for m in _PRAGMA.finditer(log)}
    out = {label for label, expr in probing.items() if f"&{expr}" in named}
    if first_instance is not None:
        labels = list(probing)
        for m in _PROBE_LINE.finditer(log):
            k = int(m.group(1)) - first_instance
            if 0 <= k < len(labels):
                out.add(labels[k])
    return out


def mentions_probes(log: str) -> bool:
    return TEMPLATE in log or PROBE_FILE in log
