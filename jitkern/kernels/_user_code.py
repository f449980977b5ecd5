"""Which of a string kernel's arguments holds the C++ the compiler rejected.

An ElementwiseKernel's ``operation`` or a ReductionKernel's ``map_expr``, ``reduce_expr``,
``post_map_expr`` and ``identity`` (and any kernel's ``preamble``) are pasted into generated
code; NVRTC reports their mistakes at lines of that code. The first line of the error names
the argument whose text is on each reported line, so the user knows what to fix without
reading the generated source.
"""

from __future__ import annotations

import re

from ..errors import CompileError
from ..toolchain.nvrtc import make_compile_error

# the arguments whose text is pasted into generated code, most specific first (a preamble
# or an identity is matched last: short texts match many lines)
FIELDS = ("operation", "map_expr", "reduce_expr", "post_map_expr", "loop_prep", "after_loop",
          "preamble", "identity")
_LOG_LINE = re.compile(r"^(?P<file>[^\s(]+)\((?P<line>\d+)\)?: (?:error|catastrophic error)",
                       re.MULTILINE)


def _squashed(text: str) -> str:
    return " ".join(text.split())


def _holds(text: str, code: str) -> bool:
    """Whether the generated line ``code`` carries (part of) the argument ``text``."""
    flat, code = _squashed(text), _squashed(code)
    if len(code.strip("{}; ")) < 2 or not flat:
        return False
    if flat in code and (len(flat) >= 3 or re.search(rf"(?<!\w){re.escape(flat)}(?!\w)", code)):
        return True
    return any(_squashed(line) == code for line in text.splitlines() if len(line.strip()) >= 3)


def _field_at(lines: list[str], n: int, fields) -> tuple[str, str] | None:
    """The argument whose text is on line ``n`` (or on the line before: a missing token is
    reported where the next one starts)."""
    for k in (n, n - 1):
        if 1 <= k <= len(lines):
            for name, text in fields:
                if _holds(text, lines[k - 1]):
                    return name, text
    return None


def _records(log: str) -> list[list[str]]:
    """The log split into messages: a ``file(N): error: ...`` line and the lines after it."""
    records: list[list[str]] = []
    for line in log.splitlines():
        if _LOG_LINE.match(line) or not records:
            records.append([line])
        else:
            records[-1].append(line)
    return records


def name_the_arguments(exc: CompileError, kernel) -> CompileError:
    """``exc`` with a first line naming the kernel's argument(s) holding each error, and each
    mistake reported once (an argument pasted into several loops is compiled once per
    copy); ``exc`` itself when no reported line carries an argument's text."""
    lines = (exc.source or "").splitlines()
    fields = [(name, getattr(kernel, name, None)) for name in FIELDS]
    fields = [(name, text) for name, text in fields if isinstance(text, str) and text.strip()]
    found: list[tuple[str, str]] = []
    kept, seen, dropped = [], set(), False
    for record in _records(exc.log or ""):
        m = _LOG_LINE.match(record[0])
        if m is None:
            if not re.search(r"errors? detected in the compilation", record[0]):
                kept.append(record)
            continue
        field = _field_at(lines, int(m.group("line")), fields)
        message = record[0][m.end():].strip()
        key = (field, message) if field is not None else (m.group("line"), message)
        if key in seen:
            dropped = True
            continue
        seen.add(key)
        kept.append(record)
        if field is not None and field not in found:
            found.append(field)
    if not found:
        return exc
    log = "\n".join("\n".join(r) for r in kept) if dropped else exc.log
    error = make_compile_error(exc.source, log, exc.name, exc.options) if dropped else exc
    where = "; ".join(f"{name} {_squashed(text)[:80]!r}" for name, text in found)
    kname = getattr(kernel, "name", "the kernel")
    return CompileError(f"{kname}: the compiler rejected the C++ in {where}\n{error}",
                        log=exc.log, source=exc.source, name=exc.name, options=exc.options)
