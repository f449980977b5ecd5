"""Python functions of one generated expression: ``function_of("a", "a.data.ptr")``.

jitkern writes Python in three places: the launchers (runtime/launcher.py writes their text,
runtime/codegen.py compiles and runs it), the simulator's kernels (sim/emit.py), and the
small functions of one expression made here, read once per class or slot (a template of
the argument table as a function of the array, a struct's field reads, what a packing slot
evaluates). Nothing else evaluates text.
"""

from __future__ import annotations


def function_of(params: str, expr: str, env: dict | None = None):
    """``lambda params: expr``, the expression reading the names of ``env`` as globals."""
    return eval(f"lambda {params}: {expr}", dict(env or {}))  # noqa: S307 - text jitkern wrote
