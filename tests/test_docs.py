"""The README and docs/ are true: every page is reachable from the README, every link points
somewhere, and every snippet that can run without a GPU runs and does what the page says.

A ```python block may be marked by the HTML comment on the line above it:
``<!-- snippet: gpu -->`` (a whole program written for a GPU: it runs on one where one is,
else unchanged on jitkern's simulated device, under JITKERN_SIMULATE=1),
``<!-- snippet: gpu-only: WHY -->`` (one that truly needs a GPU, saying why: run only where
one is; very few), ``<!-- snippet: fragment -->`` (not a program: names come from the text
around it), or ``<!-- snippet: raises NAME -->`` (runs under JITKERN_SIMULATE=1 on every
machine, so the same message, and raises jitkern's NAME with the message the comment lines
after the raising line show). An unmarked block must run without a GPU and exit cleanly.
"""

import os
import pathlib
import re
import subprocess
import sys

import pytest
from conftest import has_gpu

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_FENCE = re.compile(r"^(?:<!-- snippet: (?P<mark>[^>]*?) -->\n)?```python[^\n]*\n(?P<code>.*?)^```",
                    re.MULTILINE | re.DOTALL)
_LINK = re.compile(r"(?<!!)\[([^\]\n]*)\]\(([^)\n]*)\)")


def _without_code(text: str) -> str:
    text = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)
    return re.sub(r"`[^`\n]*`", "", text)


def _links(page: pathlib.Path) -> list[str]:
    return [target for _text, target in _LINK.findall(_without_code(page.read_text()))]


def test_every_docs_page_is_reachable_from_the_readme():
    seen, todo = set(), [ROOT / "README.md"]
    while todo:
        page = todo.pop()
        if page in seen:
            continue
        seen.add(page)
        for target in _links(page):
            path = target.split("#", 1)[0]
            if path.endswith(".md") and "://" not in path:
                todo.append((page.parent / path).resolve())
    unreachable = [p.name for p in PAGES if p.resolve() not in seen]
    assert unreachable == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_link_points_somewhere(page):
    # also what renders as a link by accident (`k[grid, block](*args)` outside backticks)
    bad = []
    for target in _links(page):
        path = target.split("#", 1)[0]
        if target.startswith(("http://", "https://", "mailto:", "#")):
            continue
        if not path or not (page.parent / path).exists():
            bad.append(target)
    assert bad == []


def _snippets():
    for page in PAGES:
        text = page.read_text()
        for m in _FENCE.finditer(text):
            line = text[: m.start("code")].count("\n")
            yield pytest.param(page, line, m.group("mark") or "run", m.group("code"),
                               id=f"{page.name}:{line}")


def _expected_error(code: str) -> str:
    """The message the comment lines after the last code line show (joined, unwrapped)."""
    lines = code.rstrip("\n").splitlines()
    comments = []
    while lines and lines[-1].lstrip().startswith("#"):
        comments.insert(0, lines.pop().lstrip()[1:].strip())
    return " ".join(comments)


@pytest.mark.parametrize("page, line, mark, code", list(_snippets()))
def test_snippet_runs_and_does_what_the_page_says(tmp_path, page, line, mark, code):
    assert mark in ("run", "gpu", "fragment") or mark.startswith(("raises ", "gpu-only: ")), mark
    if mark == "fragment":
        pytest.skip("a fragment of the page, not a program")
    if mark.startswith("gpu-only: ") and not has_gpu():
        pytest.skip(f"the snippet needs a GPU ({mark.split(': ', 1)[1]})")
    script = tmp_path / "example.py"  # the name the pages' messages show
    script.write_text(code)
    env = dict(os.environ, JITKERN_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(ROOT))
    env.pop("JITKERN_SIMULATE", None)
    if mark.startswith("raises ") or (mark == "gpu" and not has_gpu()):
        env["JITKERN_SIMULATE"] = "1"  # the one simulation mode: the program unchanged
    proc = subprocess.run([sys.executable, script.name], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    if not mark.startswith("raises "):
        assert proc.returncode == 0, proc.stderr[-3000:]
        return
    name = mark.split()[1]
    last = proc.stderr.strip().splitlines()[-1]
    shown = last.replace("jitkern.errors.", "jitkern.").replace(str(script), "example.py")
    assert proc.returncode == 1 and shown.startswith(f"jitkern.{name}: ")
    assert " ".join(shown.split()) == " ".join(_expected_error(code).split())
