"""``jitify=True``: an ``#include`` that cannot be found is skipped, as Jitify skips it.

Jitify compiles, reads the name of a header NVRTC could not open from the log, comments the
``#include`` line out, warns, and compiles again. jitkern does the same for the kernel's own
source (the compiler finds the line; nothing here parses C++): :func:`skip_missing` turns
one failed compile's log into the source with that line commented out (the line count
kept, so later messages keep their line numbers), or None where the log names no missing
header in the kernel's source (a header that includes a missing one is the user's file,
which jitkern does not edit: that error stays).
"""

from __future__ import annotations

import os
import re

_CANNOT_OPEN = re.compile(r'^(?P<file>[^\s(]+)\((?P<line>\d+)\): (?:catastrophic )?error: '
                          r'cannot open source file "(?P<name>[^"]+)"', re.M)


def _include_of(name: str) -> re.Pattern:
    return re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]' + re.escape(name) + r'[>"]')


def skip_missing(source: str, log: str, program_name: str) -> tuple[str, int, str] | None:
    """(``source`` with the failing ``#include`` commented out, its line, the header's name),
    or None where ``log`` reports no header missing from ``source`` itself."""
    for m in _CANNOT_OPEN.finditer(log):
        if os.path.basename(m.group("file")) != os.path.basename(program_name):
            continue
        lines = source.split("\n")
        name, reported = m.group("name"), int(m.group("line"))
        include = _include_of(name)
        # the reported line, unless #line directives moved it: then the first such include
        candidates = [reported] if 0 < reported <= len(lines) and include.match(
            lines[reported - 1]) else [k + 1 for k, text in enumerate(lines) if include.match(text)]
        if not candidates:
            return None
        n = candidates[0]
        lines[n - 1] = f"// jitify=True: not found, skipped: {lines[n - 1].strip()}"
        return "\n".join(lines), n, name
    return None


def warning_text(program_name: str, line: int, name: str) -> str:
    """Jitify's warning, in NVRTC's message form (it goes to the compile log too)."""
    return (f"{program_name}({line}): warning: {name}: file not found; jitify=True skips this "
            "#include, as Jitify does")
