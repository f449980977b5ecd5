"""The code examples of the spec's pages (``../shared/seeds/``), read from the pages as they are,
and a runner that executes them verbatim after ``import jitkern as cp`` / ``as cupy``.

Three page formats: a doctest page (``>>>`` sessions, with the values it prints), an article
whose code sits between prose lines (the examples are given by their first and last lines),
and a Markdown page whose lines are numbered (fenced ``python`` blocks; the ``{ .api }`` blocks
are signatures, not examples). The only change made to an example is the import:
``import cupy as cp`` becomes ``import jitkern as cp`` and ``from cupyx import jit`` becomes
``from jitkern import jit``; the doctest page's sessions start with ``cp``/``cupy`` bound to
jitkern and ``np`` to NumPy, as CuPy's documentation assumes.

The pages live outside the repository; ``JITKERN_SEEDS`` names their folder, else
``../shared/seeds`` beside the checkout. Where neither exists the tests that need them skip.
"""

from __future__ import annotations

import contextlib
import dataclasses
import doctest
import io
import os
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]

DOCTEST_PAGE = "000_eba7f77632bebcd0.txt"
ARTICLE_PAGE = "001_057da2a9865e7777.txt"
NUMBERED_PAGE = "003_d61efab219bd65e0.txt"


def seeds_dir() -> pathlib.Path | None:
    """The folder of the spec's pages, or None where this checkout has no copy beside it."""
    candidates = [os.environ.get("JITKERN_SEEDS"), ROOT.parent / "shared" / "seeds",
                  ROOT / "shared" / "seeds"]  # fmt: skip
    for c in candidates:
        if c and (pathlib.Path(c) / DOCTEST_PAGE).is_file():
            return pathlib.Path(c)
    return None


def page(name: str) -> str:
    return (seeds_dir() / name).read_text(encoding="utf-8")


def all_pages() -> dict:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(seeds_dir().glob("*.txt"))}


# ---------------------------------------------------------------------------
# extraction


@dataclasses.dataclass
class Block:
    """One example: its name, its code, and the doctest values it shows (``examples``)."""

    name: str
    code: str
    examples: tuple = ()  # (source, want, heading) per doctest example


def doctest_examples(text: str) -> list:
    """The page's ``>>>`` examples in order, each with the heading (the last prose line that
    looks like a title) it sits under."""
    parser = doctest.DocTestParser()
    out, heading = [], ""
    for part in parser.parse(text):
        if isinstance(part, str):
            titles = [ln.strip() for ln in part.splitlines() if _is_title(ln)]
            heading = titles[-1] if titles else heading
        else:
            out.append((part.source, part.want, heading))
    return out


def _is_title(line: str) -> bool:
    s = line.strip()
    return bool(s) and len(s) < 40 and not s.endswith((".", ":", ")")) and s[0].isupper()


def unnumbered(text: str) -> str:
    """A page whose lines each come after a line holding its number (0, 1, ...; an empty line
    is its number alone), without the numbers."""
    out, k = [], 0
    for line in text.splitlines():
        if line == str(k):
            out.append("")
            k += 1
        else:
            out[-1] = line
    return "\n".join(out) + "\n"


def reindented(code: str) -> str:
    """``code`` with each compound statement's body (one statement) indented again: the
    numbered page lost its indentation, which Python needs (C++ inside strings is left alone)."""
    out, depth, in_string, body = [], 0, False, False
    for line in code.splitlines():
        opens_body = not in_string and depth == 0 and line.rstrip().endswith(":")
        if body:
            line = "    " + line
        for k, part in enumerate(line.split("\x27" * 3)):
            if k:
                in_string = not in_string
            if not in_string:
                depth += part.count("(") - part.count(")")
        out.append(line)
        if body and depth == 0 and not in_string:
            body = False
        elif opens_body and not body:
            body = True
    return "\n".join(out) + "\n"


def fenced_python(text: str) -> list:
    """The bodies of the ```python blocks (not the ```python { .api } signature blocks)."""
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def between(text: str, first: str, last: str, start: int = 0) -> str:
    """The lines from the one starting with ``first`` to the one starting with ``last``."""
    lines = text.splitlines()
    i = next(k for k in range(start, len(lines)) if lines[k].startswith(first))
    j = next(k for k in range(i, len(lines)) if lines[k].startswith(last))
    return "\n".join(lines[i : j + 1]) + "\n"


def split_at(code: str, marker: str) -> tuple:
    i = code.index(marker)
    return code[:i], code[i:]


def _line_of(text: str, marker: str) -> int:
    return text[: text.index(marker)].count("\n")


def article_blocks() -> list:
    text = page(ARTICLE_PAGE)
    raw_start = _line_of(text, "kernel_code = r") - 1  # the "import cupy as cp" above it
    abs2_start = _line_of(text, "abs2_kernel = ") - 1
    return [
        Block("clipped_relu", between(text, "import cupy as cp", "y = clipped_relu(")),
        Block("l2_norm_squared", between(text, "l2_norm_squared = ", "print(float(cp.sqrt")),
        Block("vector_add", between(text, "import cupy as cp", "vector_add((blocks", raw_start)),
        Block("abs2", between(text, "import cupy as cp", "print(cp.allclose", abs2_start)),
    ]


def numbered_blocks() -> list:
    bodies = [reindented(b) for b in fenced_python(unnumbered(page(NUMBERED_PAGE)))]
    basic, reduction, raw, module, perf, memory = bodies
    sum_sq, weighted = split_at(reduction, "# More complex reduction")
    inplace, multi = split_at(memory, "# Kernel with multiple outputs")
    return [
        Block("basic_elementwise", basic),
        Block("sum_of_squares", sum_sq),
        Block("weighted_mean", "import cupy as cp\n" + weighted),
        Block("matrix_multiply", raw),
        Block("raw_module", module),
        Block("optimized_reduction", perf),
        Block("inplace_kernel", inplace),
        Block("multi_output", "import cupy as cp\n" + multi),
    ]


def doctest_block(headings: tuple | None = None) -> Block:
    """The doctest page as one session (the examples under ``headings`` only, when given)."""
    examples = [e for e in doctest_examples(page(DOCTEST_PAGE))
                if headings is None or e[2] in headings]  # fmt: skip
    return Block("user_defined_kernels", "", tuple(examples))


# ---------------------------------------------------------------------------
# running


IMPORTS = (
    (re.compile(r"^(\s*)import cupy as (\w+)$", re.M), r"\1import jitkern as \2"),
    (re.compile(r"^(\s*)import cupy$", re.M), r"\1import jitkern as cupy"),
    (re.compile(r"^(\s*)from cupyx import jit$", re.M), r"\1from jitkern import jit"),
)


def with_jitkern_imports(code: str) -> str:
    """``code`` with its CuPy imports reading jitkern (``import jitkern as cp``): the one change
    made to an example."""
    for pattern, replacement in IMPORTS:
        code = pattern.sub(replacement, code)
    return code


def run_code(code: str, folder: pathlib.Path, name: str, ns: dict | None = None) -> tuple:
    """Run ``code`` as a module file (so JIT kernels can read their source) and return its
    namespace and what it printed."""
    code = with_jitkern_imports(code)
    path = folder / f"seed_{name}.py"
    path.write_text(code, encoding="utf-8")
    ns = {"__name__": f"seed_{name}"} if ns is None else ns
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(path), "exec"), ns)
    return ns, out.getvalue()


def run_session(examples, folder: pathlib.Path, ns: dict) -> list:
    """Run doctest examples one after another in ``ns``; returns ``(source, want, value)``
    per example that is an expression (its value), the others with value None."""
    import numpy

    ns.setdefault("np", numpy)
    results = []
    for k, (source, want, _) in enumerate(examples):
        code = source
        try:
            compile(source, "<expr>", "eval")
            code = f"_ = {source.strip()}\n"
        except SyntaxError:
            ns.pop("_", None)
        run_code(code, folder, f"doctest_{k}", ns)
        results.append((source, want, ns.get("_") if code is not source else None))
    return results


__all__ = ["Block", "all_pages", "article_blocks", "doctest_block", "numbered_blocks",
           "run_code", "run_session", "seeds_dir"]  # fmt: skip
