"""A plain ``pip install jitkern`` (no extras) has every module jitkern needs: each third-party
module jitkern imports is a core dependency in pyproject.toml, or an optional one imported only
where it is used (inside a function, or under ``try``/``except ImportError``); and the
simulator's demos (string kernels among them) run in a process where the test-only extras
cannot be imported."""

import ast
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "jitkern"

#: the import name of each core dependency -> its distribution in pyproject.toml
CORE = {
    "numpy": "numpy",
    "cuda.bindings": "cuda-bindings",
    "cuda.core": "cuda-core",
    "cuda.pathfinder": "cuda-pathfinder",
    "pycparser": "pycparser",
    "pcpp": "pcpp",
}

#: optional modules -> why jitkern works without them
OPTIONAL = {
    "ml_dtypes": "bfloat16 and float8 dtypes, where it is installed (the test extra has it)",
    "cupy": "only when a CuPy array is passed (CuPy is then imported already)",
    "torch": "only when a PyTorch tensor is passed",
    "jax": "only when a JAX array is passed",
    "cloudpickle": "pickling kernels defined in __main__, where it is installed",
    "dask": "jitkern.dask (the dask extra)",
    "distributed": "jitkern.dask (the dask extra)",
    "dask_cuda": "jitkern.dask's LocalCUDACluster where it installs (the dask extra)",
}

#: jitkern's modules that an optional dependency's feature is: ``import jitkern`` does not
#: import them, so their top-level imports may be optional ones
OPTIONAL_MODULES = {"jitkern/dask.py": "the dask extra's module (jitkern.dask, loaded on use)"}

#: the modules the demo's process cannot import: the test extra's and the libraries only
#: tests use
BLOCKED = ("ml_dtypes", "dask", "distributed", "dask_cuda", "hypothesis", "cupy", "torch",
           "jax", "pytest")


def _core_distributions() -> set[str]:
    text = (ROOT / "pyproject.toml").read_text()
    block = re.search(r"^dependencies = \[(.*?)^\]", text, re.S | re.M).group(1)
    names = re.findall(r'^\s*"([A-Za-z0-9_.-]+)', block, re.M)
    return {n.lower().replace("_", "-") for n in names}


def _imports():
    """(file, line, module name, guarded) of every third-party import in jitkern: guarded
    where it is inside a function or a ``try`` that catches ImportError."""
    stdlib = set(sys.stdlib_module_names)
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        yield from _module_imports(tree, path.relative_to(ROOT).as_posix(), stdlib)


def _module_imports(tree, rel: str, stdlib: set):
    def visit(node, guarded: bool):
        for child in ast.iter_child_nodes(node):
            inner = guarded or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                  ast.Lambda))
            if isinstance(child, ast.Try) and any(_catches_import_error(h)
                                                  for h in child.handlers):
                for stmt in child.body:
                    yield from visit_one(stmt, True)
                for part in (child.handlers, child.orelse, child.finalbody):
                    for stmt in part:
                        yield from visit_one(stmt, guarded)
                continue
            yield from visit_one(child, inner) if _is_import(child) else visit(child, inner)

    def visit_one(stmt, guarded: bool):
        if _is_import(stmt):
            for name in _names(stmt):
                if name.split(".")[0] not in stdlib | {"jitkern"}:
                    yield rel, stmt.lineno, name, guarded
        else:
            yield from visit(stmt, guarded or isinstance(stmt, (ast.FunctionDef,
                                                                ast.AsyncFunctionDef)))

    yield from visit(tree, False)


def _is_import(node) -> bool:
    return isinstance(node, ast.Import) or (isinstance(node, ast.ImportFrom) and not node.level)


def _names(node) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if node.module == "cuda":  # from cuda import pathfinder
        return [f"cuda.{a.name}" for a in node.names]
    return [node.module]


def _catches_import_error(handler) -> bool:
    names = []
    for t in ([handler.type] if not isinstance(handler.type, ast.Tuple) else handler.type.elts):
        names.append(getattr(t, "id", getattr(t, "attr", "")))
    return handler.type is None or bool({"ImportError", "ModuleNotFoundError", "Exception"}
                                        & set(names))


def _key(name: str) -> str:
    """The table key of an imported module (``cuda.bindings.driver`` -> ``cuda.bindings``)."""
    parts = name.split(".")
    return ".".join(parts[:2]) if parts[0] == "cuda" else parts[0]


def test_the_import_scan_finds_what_it_looks_for():
    found = {(rel, _key(name), guarded) for rel, _line, name, guarded in _imports()}
    assert ("jitkern/dtypes.py", "ml_dtypes", True) in found
    assert ("jitkern/sim/preprocess.py", "pcpp", True) in found  # (a try with a message)
    assert ("jitkern/dask.py", "distributed", False) in found
    assert any(key == "numpy" and not guarded for _rel, key, guarded in found)


def test_every_module_jitkern_imports_is_core_or_optional_and_guarded():
    core = _core_distributions()
    assert {CORE[k] for k in CORE} <= core, "a CORE module's distribution is not a dependency"
    problems = []
    for rel, line, name, guarded in _imports():
        key = _key(name)
        if key in CORE:
            continue
        if key not in OPTIONAL:
            problems.append(f"{rel}:{line}: {name} is neither a core dependency in "
                            "pyproject.toml nor listed as optional here")
        elif not guarded and rel not in OPTIONAL_MODULES:
            problems.append(f"{rel}:{line}: the optional {name} is imported at module level "
                            "(a plain install fails there): import it where it is used")
    assert problems == []


def test_pycparser_and_pcpp_are_core_so_a_plain_install_simulates():
    core = _core_distributions()
    assert {"pycparser", "pcpp"} <= core
    text = (ROOT / "pyproject.toml").read_text()
    extras = re.search(r"^\[project\.optional-dependencies\](.*?)^\[", text, re.S | re.M).group(1)
    assert "pycparser" not in extras and "pcpp" not in extras


_BLOCKER = """
import importlib.abc
import sys

BLOCKED = {blocked!r}


class _Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}} (blocked by the test)",
                                      name=name)
        return None


sys.meta_path.insert(0, _Blocker())
"""


def test_demo_simulate_runs_without_the_test_extras(tmp_path):
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(_BLOCKER.format(blocked=BLOCKED))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(blocker), str(ROOT)]),
               JITKERN_CACHE_DIR=str(tmp_path / "cache"), PYTHONNOUSERSITE="1")
    env.pop("JITKERN_SIMULATE", None)
    probe = subprocess.run([sys.executable, "-c", "import ml_dtypes"], env=env, cwd=tmp_path,
                           capture_output=True, text=True, timeout=120)
    assert probe.returncode != 0 and "blocked by the test" in probe.stderr  # it does block
    run = subprocess.run([sys.executable, "-m", "jitkern", "demo", "--simulate"], env=env,
                         cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = [ln for ln in run.stdout.splitlines() if ln.startswith("[")]
    assert len(lines) == 5 and all(ln.startswith("[ok] ") for ln in lines), run.stdout
    for kind in ("RawKernel", "ElementwiseKernel", "ReductionKernel"):
        assert any(kind in ln for ln in lines), run.stdout


@pytest.mark.parametrize("name", sorted(OPTIONAL))
def test_optional_modules_are_not_core(name):
    assert name.replace("_", "-") not in _core_distributions()
