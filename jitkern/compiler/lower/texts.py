"""What the statement lowering modules share: the names a function assigns, the
``#pragma`` of an unroll, C string literals, and the texts of messages.
"""

from __future__ import annotations

import ast

from .. import infer
from ..values import Const, Value
from .spelling import problem


def _assigned_names(tree) -> frozenset:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return frozenset(names)


def unroll_pragma(unroll) -> str:
    """The ``#pragma`` of ``range(..., unroll=...)``; refuses a value it cannot take."""
    if unroll is None:
        return ""
    if unroll is True:
        return "#pragma unroll"
    if unroll is False:
        return "#pragma unroll 1"
    if isinstance(unroll, int) and unroll > 0:
        return f"#pragma unroll {unroll}"
    raise problem("unroll must be True, False or a positive constant int")


def _c_string(text: str) -> str:
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif 32 <= ord(ch) < 127:
            out.append(ch)
        else:
            out.extend(f"\\{b:03o}" for b in ch.encode())
    return '"' + "".join(out) + '"'


def _op_text(op) -> str:
    if infer.is_weak(op):
        return f"{type(op).__name__} (the literal {op!r})"
    return str(op)


def _const_text(item) -> str:
    return repr(item.value)


def _item_text(item) -> str:
    if isinstance(item, Value):
        return f"a value of type {item.type}"
    if isinstance(item, Const):
        return f"{item.value!r} ({type(item.value).__name__})"
    return type(item).__name__


def _binding_text(item) -> str:
    if isinstance(item, Value):
        return f"a {item.type}"
    if isinstance(item, Const):
        return repr(item.value)
    return "a compile-time value"


_STATEMENT_HINTS = {
    "FunctionDef": ("a nested def", "define it at module level with @rawkernel(device=True)"),
    "AsyncFunctionDef": ("async def", ""),
    "ClassDef": ("a class definition", "define classes outside kernels"),
    "With": ("with", ""),
    "AsyncWith": ("async with", ""),
    "AsyncFor": ("async for", ""),
    "Try": ("try", "kernels cannot catch exceptions"),
    "TryStar": ("try", "kernels cannot catch exceptions"),
    "Raise": ("raise", "use assert for device-side checks"),
    "Import": ("import", "import at module level"),
    "ImportFrom": ("import", "import at module level"),
    "Global": ("global", "pass the value as an argument"),
    "Nonlocal": ("nonlocal", "pass the value as an argument"),
    "Delete": ("del", ""),
    "Match": ("match", "use if/elif"),
}
