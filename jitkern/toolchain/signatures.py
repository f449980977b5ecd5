"""Asking NVRTC, in the compile that builds a raw kernel, for the kernel's parameter types.

A raw kernel's launch is checked against its C signature (runtime/signature.py). Only the
compiler knows that signature for sure: after ``#if``/``#ifdef``, ``-D``/``-U``, included
headers, typedefs and templates. So the compile of a RawKernel/RawModule appends one
variable template, :data:`PROBE_SOURCE`, and adds, for each kernel it can name, the name
expression ``&__jitkern_signature<decltype(&kernel)>``. NVRTC lowers (mangles) that name;
the mangled name spells the kernel's function type exactly, and the template's defaulted
arguments the size and alignment of what each parameter points to (or of the parameter),
so a struct read from the source can be checked against the compiler's layout
(compiler/strings/mangled.py decodes it). The probe adds one byte of ``__device__`` data
per kernel to the module, no kernel and no code; the names are kept with the binary
(``Binary.signatures``) in the cache.

Which kernels: every non-template ``__global__`` function the source text defines (with
its enclosing namespaces), and every name expression. A name the preprocessor removed
(a kernel under ``#if 0``) or that the source spells through a macro makes its probe fail:
the compile is then run again without the failed probes, and that kernel is not checked
(:func:`failed`). C++ before C++14 has no variable templates: nothing is probed.
"""

from __future__ import annotations

import re

TEMPLATE = "__jitkern_signature"
PROBE_FILE = "jitkern-signatures"

# Its own file name (#line), so an error in it is never shown as a line of the user's.
PROBE_SOURCE = f"""
#line 1 "{PROBE_FILE}"
template <class T> struct __jitkern_target {{ typedef T type; }};
template <class T> struct __jitkern_target<T*> {{ typedef T type; }};
template <class T> struct __jitkern_target<T&> {{ typedef T type; }};
template <class T> struct __jitkern_target<T&&> {{ typedef T type; }};
template <class T, class = void> struct __jitkern_size {{
  static const unsigned long long size = 0, align = 0; }};
template <class T> struct __jitkern_size<T, decltype(void(sizeof(T)))> {{
  static const unsigned long long size = sizeof(T), align = alignof(T); }};
template <unsigned long long...> struct __jitkern_values {{}};
template <class F> struct __jitkern_layout {{ typedef void sizes; typedef void aligns; }};
template <class R, class... A> struct __jitkern_layout<R (*)(A...)> {{
  typedef __jitkern_values<__jitkern_size<typename __jitkern_target<A>::type>::size...> sizes;
  typedef __jitkern_values<__jitkern_size<typename __jitkern_target<A>::type>::align...> aligns;
}};
template <class F, class S = typename __jitkern_layout<F>::sizes,
          class A = typename __jitkern_layout<F>::aligns>
__device__ const char {TEMPLATE} = 0;
"""

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
    """{kernel name or name expression: the name expression that probes its signature}."""
    if any(_OLD_STD.match(o) for o in options):
        return {}
    labels = {name: qualified for name, qualified in kernel_names(source)}
    out = {name: _probe(qualified) for name, qualified in labels.items()}
    for expr in name_expressions:
        if not expr.lstrip().startswith("&"):  # a variable's address: not a kernel
            out[expr] = _probe(expr)
    return out


def _probe(name: str) -> str:
    return f"&{TEMPLATE}<decltype(&{name})>"


def kernel_names(source: str) -> list[tuple[str, str]]:
    """(name, name qualified by its namespaces) of each non-template ``__global__``
    function the text defines or declares; preprocessor lines are not read."""
    text = _COMMENT_OR_STRING.sub(" ", source)
    text = _DIRECTIVE.sub("", text)
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


def _templated(text: str, at: str) -> bool:
    """Whether the declaration ``__global__`` at ``at`` is in has a template header."""
    start = max(text.rfind(";", 0, at), text.rfind("}", 0, at), text.rfind("{", 0, at))
    return re.search(r"\btemplate\s*<", text[start + 1:at]) is not None


def _name_after(text: str, pos: int) -> str | None:
    """The kernel's name: the first word before a parenthesis that is not an attribute's."""
    while True:
        m = re.compile(r"([A-Za-z_]\w*)\s*\(|[;{}]").search(text, pos)
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


_PRAGMA = re.compile(r"#pragma nv_mangled_name (.*)$", re.M)


def failed(log: str, probing: dict[str, str]) -> set[str]:
    """The labels of ``probing`` whose probe the compile log shows an error in."""
    named = {m.group(1).strip() for m in _PRAGMA.finditer(log)}
    return {label for label, expr in probing.items() if expr in named}


def mentions_probes(log: str) -> bool:
    return TEMPLATE in log or PROBE_FILE in log
