"""Every module, attribute and file the docs and the code's comments name exists.

Code moves (the ground's tables left arrays/, the simulator moved into sim/, tests/ mirrors
the package); a reference to the old place then sends a reader to nothing. This test reads
docs/, README.md and the text of jitkern/, tests/, benchmarks/ and examples/, and checks:

- each dotted name ``jitkern.a.b`` imports as a module, or is an attribute of one;
- each path ``jitkern/<folder>/<module>.py``, ``tests/...``, ``docs/...``, or a package path written from
  the package's root (``runtime/launch.py``) names a file of the checkout (a header may be
  named as it is included: ``jitkern/complex.cuh`` under ``jitkern/include/``).
"""

import importlib
import pathlib
import re
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent

#: names that are not references to a place, and why
NOT_PLACES = {
    "jitkern.BoundLaunch": "a repr's class name",
    "jitkern.DevicePointer": "a repr's class name",
    "jitkern.ExportedModule": "a repr's class name",
    "jitkern.backend": "benchmarks/common.py imports an older checkout's layout (--baseline)",
    "jitkern.backend.device": "the same fallback import",
    "jitkern.backend.driver": "the same fallback import",
    "jitkern.backend.module": "the same fallback import",
    "jitkern.no_such_thing": "a test of the error a missing name raises",
    "jitkern.not_a_routine": "a test of the error a missing routine raises",
    "jitkern.x": "a placeholder in prose",
    "jitkern.a.b": "this test's own placeholder",
}

_DOTTED = re.compile(r"(?<![\w./-])jitkern(?:\.[A-Za-z_]\w*)+")
_PATH = re.compile(r"(?<![\w./-])(?:jitkern/[\w/]+\.(?:py|h|cuh)"
                   r"|(?:tests|benchmarks|examples|docs)/[\w/]+\.(?:py|md)"
                   r"|(?:arrays|cli|compat|compiler|jit|kernels|runtime|sim|toolchain)/[\w/]+\.py)")
_PATH_ROOTS = ("", "jitkern/", "jitkern/include/", "tests/")


def _files():
    listed = subprocess.run(["git", "ls-files", "jitkern", "tests", "benchmarks", "examples",
                             "docs", "README.md"], cwd=ROOT, capture_output=True, text=True)
    if listed.returncode != 0:
        pytest.skip("not a git checkout: the files to read are git's")
    return [ROOT / f for f in listed.stdout.split() if f.endswith((".py", ".md"))]


def _resolves(name: str) -> bool:
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            try:
                obj = getattr(obj, attr)
            except AttributeError:
                return False
        return True
    return False


def _stale_references():
    stale = {}
    for path in _files():
        if not path.exists():  # deleted in the work tree, not yet in git's index
            continue
        text = path.read_text(errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            where = f"{path.relative_to(ROOT)}:{number}"
            for m in _DOTTED.finditer(line):
                name = m.group(0)
                if name not in NOT_PLACES and not _resolves(name):
                    stale.setdefault(name, []).append(where)
            for m in _PATH.finditer(line):
                if not any((ROOT / (base + m.group(0))).exists() for base in _PATH_ROOTS):
                    stale.setdefault(m.group(0), []).append(where)
    return stale


def test_every_named_module_attribute_and_file_exists():
    stale = _stale_references()
    assert not stale, "stale references (name: where):\n" + "\n".join(
        f"  {name}: {', '.join(places[:4])}" for name, places in sorted(stale.items()))


def test_the_check_finds_a_stale_name(tmp_path, monkeypatch):
    note = tmp_path / "note.md"
    stale_name = "jitkern." + "arrays.dtypes"  # (spelled apart: this file is read too)
    note.write_text(f"See {stale_name} and runtime/" + "simdevice.py.\n")
    monkeypatch.setitem(globals(), "_files", lambda: [note])
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    assert set(_stale_references()) == {stale_name, "runtime/" + "simdevice.py"}


def test_no_entry_of_the_allow_list_is_a_place():
    assert not [name for name in NOT_PLACES if _resolves(name)]
