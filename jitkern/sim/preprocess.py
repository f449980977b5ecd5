"""The C preprocessor of string kernels in the simulator: pcpp, run as NVRTC would be.

A kernel's source reaches the C subset (:mod:`.csubset`) after a real preprocessor has run
on it, with the kernel's own ``-D``/``-U``/``-I``/``-include`` options and the macros NVRTC
defines (:data:`PREDEFINED`), so ``#if``/``#ifdef``/``#ifndef``/``#elif``, function-like
macros, a ``#define`` used as a type and a value from ``-DSCALE=3`` mean what they mean on
the GPU. pcpp is a maintained C99 preprocessor in pure Python.

Headers: the user's ``-I`` folders are searched first, then jitkern's include folder. A
header of jitkern's own (``cupy/...``, ``jitkern/...``) gives its macros only: what it
declares in C++ (complex numbers, CArray, ...) the simulator implements itself. CUDA's
``cuda_fp16.h``/``cuda_bf16.h`` likewise; another header that is not found stays in the
text, and the subset refuses it, naming it.

Each line of the source keeps its number (the subset's errors name lines); an included
header's code is put on the line before the next line of the source.
"""

from __future__ import annotations

import io
import os

from ..errors import CompileError
from ..toolchain import nvrtc_options
from ..toolchain.discovery import PACKAGE_INCLUDE

#: What NVRTC defines in device code (the arch: what the simulator's signature is read for).
PREDEFINED = (("__CUDACC__", "1"), ("__CUDACC_RTC__", "1"), ("__CUDA_ARCH__", "900"),
              ("__cplusplus", "201703L"), ("__NVCC_DIAG_PRAGMA_SUPPORT__", "1"))
#: CUDA's headers the simulator implements (the types and functions they declare).
NATIVE_CUDA_HEADERS = ("cuda_fp16.h", "cuda_bf16.h", "cuda_runtime.h", "vector_types.h")

#: NVRTC's options (their long names) -> what the preprocessor does with the value
_ACTIONS = {"--define-macro": "define", "--undefine-macro": "undefine",
            "--include-path": "path", "--pre-include": "pre_include"}


def preprocess(source: str, options: tuple, where: str) -> str:
    """``source`` with its directives run (see the module's doc). ``where`` names the code
    in errors. Source without a directive, a predefined macro's name or an option that
    defines one is returned as it is (nothing would change)."""
    settings = _settings(options)
    if "#" not in source and "__CUDA" not in source and not settings:
        return source
    try:
        import pcpp
    except ImportError:
        raise CompileError("simulating string kernels needs pcpp: pip install pcpp") from None
    pp = _preprocessor(pcpp, where)
    for name, value in PREDEFINED:
        pp.define(f"{name} {value}")
    for action, value in settings:
        if action == "define":
            name, _, body = value.partition("=")
            pp.define(f"{name} {body or '1'}")
        elif action == "undefine":
            pp.undef([_token(pp, value)])
        elif action == "path" and not _is_jitkern_header(value + os.sep):
            pp.add_path(value)  # (jitify's standard headers: C++ the subset refuses, by name)
    pp.add_path(PACKAGE_INCLUDE)
    includes = "".join(f'#include "{v}"\n' for a, v in settings if a == "pre_include")
    pp.parse(includes + source, "<source>")
    return _lines(pp, source.count("\n") + 1, includes.count("\n"))


def _settings(options: tuple) -> list[tuple[str, str]]:
    """(action, value) of each option that concerns the preprocessor, in order."""
    out = []
    for opt in options:
        name, value = nvrtc_options.split(opt)
        row = nvrtc_options.lookup(name)
        if row is not None and row.long in _ACTIONS and value:
            out.append((_ACTIONS[row.long], value.strip()))
    return out


def _token(pp, name: str):
    (tok,) = [t for t in pp.tokenize(name) if t.type not in pp.t_WS]
    return tok


def _preprocessor(pcpp, where: str):
    """A pcpp preprocessor whose errors are CompileErrors naming ``where`` and whose
    jitkern and CUDA headers give their macros only."""
    directive = pcpp.parser  # OutputDirective and Action

    class Preprocessor(pcpp.Preprocessor):
        def on_error(self, file, line, msg):
            raise CompileError(f"{where} line {line}: {msg}" if file == "<source>" else
                               f"{where}: {file} line {line}: {msg}")

        def on_directive_unknown(self, directive, toks, ifpassthru, precedingtoks):
            if directive.value == "error":
                text = "".join(t.value for t in toks).strip()
                raise CompileError(f"{where} line {directive.lineno}: #error {text}")
            return super().on_directive_unknown(directive, toks, ifpassthru, precedingtoks)

        def on_include_not_found(self, is_malformed, is_system_include, curdir, includepath):
            if includepath in NATIVE_CUDA_HEADERS or _is_jitkern_header(curdir + os.sep):
                raise directive.OutputDirective(directive.Action.IgnoreAndRemove)
            raise directive.OutputDirective(directive.Action.IgnoreAndPassThrough)  # refused

        def on_file_open(self, is_system_include, includepath):
            handle = super().on_file_open(is_system_include, includepath)
            if not _is_jitkern_header(includepath):
                return handle
            with handle:
                return io.StringIO(_directives_only(handle.read()))

        def on_comment(self, tok):
            return False  # comments are not passed on

    return Preprocessor()


def _is_jitkern_header(path: str) -> bool:
    root = os.path.abspath(PACKAGE_INCLUDE) + os.sep
    return os.path.abspath(path).startswith(root)


def _directives_only(text: str) -> str:
    """A header's preprocessor lines (continuations included), its C++ blanked."""
    out, directive = [], False
    for line in text.split("\n"):
        directive = directive or line.lstrip().startswith("#")
        out.append(line if directive else "")
        directive = directive and line.rstrip().endswith("\\")
    return "\n".join(out)


def _lines(pp, count: int, offset: int) -> str:
    """The preprocessed tokens, each of the source's at its line (``offset``: lines of
    pre-included headers before the source), the headers' on the line before the next."""
    lines = [[] for _ in range(count)]
    pending = []
    while True:
        tok = pp.token()
        if tok is None:
            break
        text = tok.value
        if tok.source != "<source>" or tok.lineno <= offset:
            pending.append(" " if "\n" in text else text)
            continue
        at = min(max(tok.lineno - offset, 1), count) - 1
        if pending:
            lines[max(at - 1, 0)].append(" " + " ".join("".join(pending).split()) + " ")
            pending = []
        lines[at].append(text.replace("\n", " ") if "\n" in text.strip("\n") else
                         text.strip("\n"))
    if pending:
        lines[-1].append(" " + " ".join("".join(pending).split()))
    return "\n".join("".join(line) for line in lines)
