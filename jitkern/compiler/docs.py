"""Render the generated parts of docs/jit.md from the builtin records and the type rules.

``python -m jitkern.compiler.docs docs/jit.md`` rewrites the text between the
``<!-- builtins:begin -->``/``<!-- builtins:end -->``, ``<!-- thrust:begin -->``/
``<!-- thrust:end -->``, ``<!-- ufuncs:begin -->``/``<!-- ufuncs:end -->`` and
``<!-- modes:begin -->``/``<!-- modes:end -->`` markers; ``--check`` fails when the file is out of date.
"""

from __future__ import annotations

import re
import sys

from . import builtins, infer


def mode_table() -> str:
    rows = ["| expression | `mode='cuda'` | `mode='numpy'` |", "|---|---|---|"]
    rows += [
        f"| {label} | {cuda} | {numpy} |" for label, cuda, numpy in infer.describe_mode_table()
    ]
    return "\n".join(rows)


SECTIONS = {
    "builtins": builtins.render_table,
    "thrust": lambda: builtins.render_table(("thrust",)),
    "ufuncs": builtins.render_ufuncs,
    "modes": mode_table,
}


def render(text: str) -> str:
    for name, make in SECTIONS.items():
        pattern = re.compile(rf"(<!-- {name}:begin -->\n).*?(<!-- {name}:end -->)", re.S)
        text = pattern.sub(lambda m, make=make: m.group(1) + make() + "\n" + m.group(2), text)
    return text


def main(argv=None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    args = [a for a in args if a != "--check"]
    path = args[0] if args else "docs/jit.md"
    with open(path, encoding="utf-8") as f:
        old = f.read()
    new = render(old)
    if check:
        if new != old:
            print(f"{path} is out of date: run python -m jitkern.compiler.docs {path}")
            return 1
        return 0
    with open(path, "w", encoding="utf-8") as f:
        f.write(new)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
