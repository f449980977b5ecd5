"""What the compiler tells the user about a kernel, in terms of their Python source.

- Arch requirements: builtins that need a newer GPU (thread-block clusters, some atomics)
  are recorded by the lowering as data, ``(what, span, cc)`` per use; ``check_target``
  refuses a target older than that at each use, with its line and a caret.
  (``arch_guard`` also writes them into the generated source's header, for people reading
  it and as an ``#error`` for anyone compiling it for an older GPU.)
- Compile errors: NVRTC's log mapped back to the user's Python lines through the
  generated ``#line`` directives, with what to change.
"""

from __future__ import annotations

import linecache
import os
import re

from ..capabilities import feature_note
from ..errors import CompileError, JitTypeError
from .program import GENERATED_FILE

_SPAN = re.compile(r"^(?P<file>.+?):(?P<line>\d+)(?::(?P<col>\d+)-(?P<end>\d+))?$")


def arch_needs(program) -> tuple:
    """The uses that need a newer GPU, as data: ((what, span, cc), ...) in program order."""
    return tuple((what, span, cc) for (what, span), cc in program.arch_needs.items())


def arch_guard(needs: tuple) -> str:
    """Header lines for builtins that need a newer GPU: every use (``name at
    file:LINE:COL-ENDCOL [sm_XY]``), and an #error for anyone compiling the source for an
    older one."""
    if not needs:
        return ""
    arch = max(cc for _what, _span, cc in needs)
    uses = "; ".join(f"{what} at {span} [sm_{cc}]" for what, span, cc in needs)
    return (f"\n// requires: sm_{arch}: {uses}\n"
            f"#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < {arch}0\n"
            f'#error "jitkern: this kernel needs sm_{arch} or newer"\n'
            "#endif")


def check_target(name: str, needs, arch: int) -> None:
    """Refuse to compile for sm_``arch`` a kernel whose builtins need a newer one (``needs``
    as :func:`arch_needs` gives them): a JitTypeError at the first such use, listing every
    use with its line and a caret."""
    if not needs:
        return
    need = max(cc for _what, _span, cc in needs)
    if arch >= need:
        return
    uses = [_use_lines(what, span, cc) for what, span, cc in needs if cc > arch]
    head = (f"{name}: {len(uses)} use(s) of builtins that need a newer GPU than this "
            f"compile's target, sm_{arch}")
    first = uses[0][0].split(": ", 1)[0] if uses and uses[0][0].count(":") >= 2 else None
    lines = [f"{first}: {head}" if first else head]
    for use in uses:
        lines += use
    lines.append(f"compile for arch='sm_{need}' or newer (or launch on such a GPU)")
    raise JitTypeError("\n".join(lines))


def _use_lines(what: str, span: str, needed: int) -> list[str]:
    """One use of a builtin that needs sm_``needed``: its position, line and caret."""
    feature = feature_note(needed)
    m = _SPAN.match(span.strip())
    if m is None:
        return [f"{what} at {span.strip()}: needs sm_{needed} or newer{feature}"]
    where = f"{m['file']}:{m['line']}" + (f":{m['col']}" if m["col"] else "")
    lines = [f"{where}: {what} needs sm_{needed} or newer{feature}"]
    text = linecache.getline(m["file"], int(m["line"])).rstrip("\n")
    if text and m["col"]:
        col, end = int(m["col"]), int(m["end"])
        lines += ["    " + text, "    " + " " * (col - 1) + "^" + "~" * (max(1, end - col) - 1)]
    return lines


# Compiler messages the user can act on: (pattern in the log, what to change). Any other
# rejection means jitkern generated C++ the compiler does not take: a bug to report.
_COMPILER_ADVICE = (
    (
        r"uses too much shared data",
        (
            "the kernel declares more static shared memory than the target allows (48 KiB); "
            "the arrays come from jit.shared_memory at {smem}. Use smaller arrays, or dynamic "
            "shared memory: jit.shared_memory(dtype, None) with the size in bytes given at the "
            "launch, kernel[grid, block, shared_mem](...)"
        ),
    ),
    (
        r"unrecognized option|invalid option|unknown option|option .* not supported",
        (
            "an option in options={options!r} is not one this NVRTC takes; see NVRTC's options "
            "(nvrtcCompileProgram) for the spellings"
        ),
    ),
    (
        r"invalid value for --gpu-architecture|unsupported gpu architecture",
        (
            "arch={arch!r} is not an architecture this NVRTC compiles for; name a real one, "
            "e.g. arch='sm_80' or arch='sm_90'"
        ),
    ),
    (
        r"too many resources requested|uses too much local data",
        (
            "the kernel needs more registers or local memory than the target has; "
            "launch fewer threads per block or split the kernel"
        ),
    ),
)

_LOG_LOCATION = re.compile(r"^(.+?)\((\d+)\): (?:error|catastrophic error)", re.MULTILINE)
_LINE_DIRECTIVE = re.compile(r'^#line (\d+) "(.*)"$')


def compile_message(exc: CompileError, source: str, filename: str, options=(), arch=None) -> str:
    """NVRTC's (or ptxas's) own words, where each message points (the user's Python line, or
    a line jitkern generated) and what the user can change; "please report this" only when
    the compiler rejected C++ that jitkern should not have generated."""
    full = (exc.log or str(exc)).replace("\x00", "")
    log = "\n".join(
        ln for ln in full.strip().splitlines() if not _is_compiler_chatter(ln)
    ).strip()
    name = os.path.basename(filename)
    parts = [f"the CUDA compiler rejected the kernel generated from {name}:", log]
    parts += _log_locations(full, source)
    for pattern, advice in _COMPILER_ADVICE:
        if re.search(pattern, full, re.IGNORECASE):
            smem = ", ".join(_user_lines(source, _uses_shared_memory)) or "its start"
            parts.append(advice.format(options=tuple(options), arch=arch, smem=smem))
            return "\n".join(parts)
    parts.append(
        "this is a bug in jitkern (it generated C++ the compiler rejects): please report "
        "this with the generated source (the error's .source)"
    )
    return "\n".join(parts)


def _is_compiler_chatter(line: str) -> bool:
    return line.startswith("ptxas") and not re.search(r"error|warning", line, re.IGNORECASE)


def _log_locations(log: str, source: str) -> list[str]:
    """One line per place the log names: the user's Python line, or the generated line."""
    out, seen = [], set()
    generated_lines = source.splitlines()
    for m in _LOG_LOCATION.finditer(log or ""):
        path, line = m.group(1), int(m.group(2))
        if (path, line) in seen:
            continue
        seen.add((path, line))
        if path == GENERATED_FILE and 0 < line <= len(generated_lines):
            out.append(f"  at line {line} of the generated source: "
                       f"{generated_lines[line - 1].strip()}")
        elif os.path.exists(path):
            text = linecache.getline(path, line).strip()
            if text:
                out.append(f"  {path}:{line}: {text}")
    return out


def _uses_shared_memory(line: str) -> bool:
    return ("jk_smem" in line or "jk_dynamic_smem" in line) and "__shared__" not in line


def _user_lines(source: str, predicate) -> list[str]:
    """``file:line`` of the user's statements whose C++ lines satisfy ``predicate``."""
    where, found = None, []
    for text in source.splitlines():
        m = _LINE_DIRECTIVE.match(text)
        if m:
            where = None if m.group(2) == GENERATED_FILE else f"{m.group(2)}:{m.group(1)}"
        elif where and predicate(text) and where not in found:
            found.append(where)
    return found
