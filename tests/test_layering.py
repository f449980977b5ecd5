"""The import rules of docs/architecture.md, checked on the package's source.

Every module under jitkern/ is parsed (nothing is imported or run) and its imports are
resolved to modules of the package. The rules:

- no import cycle between modules (imports inside functions count: they only move a
  cycle from import time to call time);
- no stage imports a later one (docs/architecture.md's table):
  - the ground (``errors``, ``config``, ``debugrecord``, ``dtypes.py``,
    ``layout.py``, ``records.py``): only the ground;
  - ``compiler/``: nothing from ``arrays/`` (but its ground), ``toolchain/``, ``runtime/``,
    ``sim/``, ``kernels/``;
  - ``toolchain/``: nothing from ``arrays/`` (but its ground), ``compiler/``, ``runtime/``,
    ``sim/``, ``kernels/``;
  - ``runtime/``: nothing from ``arrays/`` (but its ground), ``compiler/``, ``sim/``,
    ``kernels/``, and of ``toolchain/`` only the cache (generated launch code is stored
    there) and the CUBIN reader (a Binary's parameter layout, which argument packing needs);
  - ``sim/``: nothing from ``kernels/``;
  - the rest of ``arrays/`` (ndarray, interop, copy kernels): nothing from ``compiler/``,
    ``sim/``, ``kernels/``;
  - no module below the faces imports a face (``jitkern``, ``jitkern.jit``, ``jitkern.cuda``);
- every import inside a function has a reason, written down here;
- no module over 800 lines and no function over 80 lines, outside declarative tables.

What today's code still breaks is listed below with its reason and the file that owns the
fix; ``test_allow_lists_hold_no_stale_entry`` fails when an entry is no longer needed, so the
lists only shrink.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "jitkern"

GROUND = {
    "jitkern.errors",
    "jitkern.config",
    "jitkern.debugrecord",
    "jitkern.dtypes",
    "jitkern.layout",
    "jitkern.records",  # structs by value: a class's record dtype (pure layout)
    "jitkern.handles",  # texture/surface handles by value: their C types (a table)
    "jitkern.lazy",  # lazy_import: a module imported on its first attribute read
    "jitkern.pyexpr",  # function_of: a Python function of one generated expression
}
FACES = {"jitkern", "jitkern.jit", "jitkern.cuda"}

#: stage -> the stages it must not import
FORBIDDEN = {
    "ground": {"arrays", "compiler", "toolchain", "runtime", "sim", "kernels", "compat", "cli"},
    "compiler": {"arrays", "toolchain", "runtime", "sim", "kernels", "compat", "cli"},
    "toolchain": {"arrays", "compiler", "runtime", "sim", "kernels", "compat", "cli"},
    "runtime": {"arrays", "compiler", "sim", "kernels", "compat", "cli"},
    "sim": {"kernels", "compat", "cli"},
    "arrays": {"compiler", "sim", "kernels", "compat", "cli"},
    "kernels": {"compat", "cli"},
}
#: what runtime/ may take from toolchain/ (the rest of toolchain/ is forbidden to it)
RUNTIME_FROM_TOOLCHAIN = {"jitkern.toolchain.cache", "jitkern.toolchain.cubin"}

#: (importer, imported) -> why the rule is broken today, and which file owns the fix
LAYER_EXCEPTIONS = {

}

#: (importer, imported) -> why it is imported inside a function: only what cannot be a
#: module-level import. A module needed only off the common path (the simulator, the
#: exporter, the JIT's emitter: a cached first launch never loads them) is declared at the
#: top of its importer with ``lazy_import`` (jitkern/lazy.py), which this test reads as an
#: import: the rules and the cycle check hold for it.
LOCAL_IMPORTS = {
    # optional dependencies: an ImportError there is the user's message (or a fallback)
    ("jitkern.dtypes", "ml_dtypes"): "optional dependency (bfloat16, float8)",
    ("jitkern.runtime.libraries", "torch"): "optional dependency, only when a tensor is passed",
    ("jitkern.runtime.libraries", "cupy"): "optional dependency, only when a CuPy array is "
        "passed and a result is made in CuPy's pool",
    ("jitkern.kernels.raw", "cupy"): "optional dependency, only for a CuPy-compatible path",
    ("jitkern.sim.runtime", "ml_dtypes"): "optional dependency, only for a float8 kernel",
    ("jitkern.dask", "dask_cuda"): "optional dependency (the dask extra), only where a "
                                   "local cluster uses LocalCUDACluster",
    ("jitkern.dask", "cupy"): "optional dependency, only for a GPU worker's chunks",
    ("jitkern.kernels.base", "cloudpickle"): "optional dependency, only to pickle a kernel "
                                             "defined in a script (__main__) by value",
    ("jitkern.toolchain.export", "fcntl"): "POSIX only: elsewhere exports are not serialised",
    ("jitkern.sim.csubset", "pycparser"): "only when a string kernel is simulated (a "
                                          "dependency; kept out of `import jitkern`)",
    ("jitkern.sim.preprocess", "pcpp"): "only when a string kernel is simulated (a dependency; "
                                        "PLY's lexer is slow to build at import)",
    # cuda-python, kept out of `import jitkern` (tests/test_import.py), its absence reported
    ("jitkern.runtime.driver", "cuda.bindings"): "loaded on the first driver call",
    ("jitkern.toolchain.discovery", "cuda"): "cuda-pathfinder, on the first toolchain query",
    ("jitkern.toolchain.discovery", "cuda.bindings"): "NVRTC bindings, on the first query",
    ("jitkern.toolchain.export", "cuda.bindings"): "NVRTC/nvJitLink, only when exporting",
    ("jitkern.toolchain.nvrtc", "cuda.bindings"): "NVRTC, on the first compile",
}
#: at most this many function-level imports (issue 28: from 55): a new one needs a reason
#: no lazy_import can serve
MAX_LOCAL_IMPORTS = 20

#: (importer, imported) -> why the edge may close a cycle today (owner of the fix)
CYCLE_EXCEPTIONS: dict = {}

#: files over 800 lines, and who splits them
LONG_MODULES = {
}
#: functions over 80 lines: declarative tables, or who splits them
LONG_FUNCTIONS = {
    "jitkern/compiler/ufunc_rows.py:_build_ufuncs": "declarative table (one row a ufunc)",
    "jitkern/compiler/builtins/groups.py:_group_methods":
        "declarative table (one row a method: its C++ and its simulator spelling)",
}
#: the modules that compile or run Python text jitkern generated (exec, eval, compile)
GENERATED_PYTHON = {
    "jitkern.pyexpr": "functions of one expression (argument templates, slots, fields)",
    "jitkern.runtime.codegen": "the launchers' text (runtime/launcher.py), compiled and run",
    "jitkern.sim.emit": "the simulator's kernels (and the C subset's translations)",
}
#: more of them today, and who removes them
GENERATED_PYTHON_PENDING: dict = {}
MAX_MODULE_LINES = 800
MAX_FUNCTION_LINES = 80


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _targets(module: str, node, is_package: bool) -> list:
    """The modules an import statement names (``from pkg import mod`` names ``pkg.mod``)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module
    return [
        f"{target}.{a.name}" if f"{target}.{a.name}" in MODULES else target for a in node.names
    ]


def _type_checking_only(tree) -> set:
    """Imports under ``if TYPE_CHECKING:`` (never run)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.dump(node.test):
            out.update(id(sub) for sub in ast.walk(node))
    return out


def _imports():
    """[(importer, imported, inside a function, line)] for every import in the package."""
    out = []
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(), str(path))
        skip = _type_checking_only(tree)
        local = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                local.update(id(sub) for sub in ast.walk(node))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in skip:
                for target in _targets(module, node, path.name == "__init__.py"):
                    out.append((module, target, id(node) in local, node.lineno))
            elif _lazy_target(node) is not None:
                out.append((module, _lazy_target(node), id(node) in local, node.lineno))
    return out


def _lazy_target(node):
    """The module a ``lazy_import("jitkern.x")`` call names (jitkern/lazy.py: an import
    declared at the top of a module, run on the first attribute read), else None."""
    if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)):
        return None
    func = node.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    return node.args[0].value if name == "lazy_import" else None


IMPORTS = _imports()
INTERNAL = [(a, b, local, line) for a, b, local, line in IMPORTS if b.split(".")[0] == "jitkern"]


def _stage(module: str) -> str:
    if module in GROUND:
        return "ground"
    if module in FACES:
        return "face"
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or parts[1] in FORBIDDEN else "top"


def _breaks_a_rule(importer: str, imported: str) -> bool:
    stage, target = _stage(importer), _stage(imported)
    if target == "face":
        return stage not in ("face", "top", "compat", "cli")
    if stage == "runtime" and target == "toolchain":
        return imported not in RUNTIME_FROM_TOOLCHAIN
    if stage == "ground":
        return imported not in GROUND
    return target in FORBIDDEN.get(stage, ())


def _layer_findings() -> set:
    return {(a, b) for a, b, _, _ in INTERNAL if a != b and _breaks_a_rule(a, b)}


def _cycles(skip=()) -> list:
    """Strongly connected groups of more than one module (Tarjan), over every import."""
    graph: dict = {m: set() for m in MODULES}
    for a, b, _, _ in INTERNAL:
        if b in MODULES and a != b and (a, b) not in skip:
            graph[a].add(b)
    index, low, stack, on_stack, groups = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in graph:
        if v not in index:
            visit(v)
    return groups


def _local_findings() -> set:
    return {(a, b) for a, b, local, _ in IMPORTS if local}


def _generated_python() -> set:
    """Modules calling the builtins exec, eval or compile."""
    out = set()
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text())
        shadowed = {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)}  # a parameter
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in {"exec", "eval", "compile"} - shadowed):
                out.add(module)
    return out


def _long_modules() -> set:
    out = set()
    for path in MODULES.values():
        if path.read_text().count("\n") > MAX_MODULE_LINES:
            out.add(path.relative_to(ROOT).as_posix())
    return out


def _long_functions() -> set:
    out = set()
    for path in MODULES.values():
        tree = ast.parse(path.read_text())
        rel = path.relative_to(ROOT).as_posix()
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES:
                    out.add(f"{rel}:{node.name}")
    return out


def test_the_parser_sees_the_package():
    # a rule over nothing would pass: the walk must find the stages and their imports
    assert {"jitkern.compiler.types", "jitkern.runtime.driver", "jitkern.dtypes"} <= set(
        MODULES
    )
    assert ("jitkern.compiler.types", "jitkern.dtypes", False) in {
        (a, b, local) for a, b, local, _ in INTERNAL
    }
    # ... and the imports declared lazily (jitkern/lazy.py), each naming a real module
    lazy = {(a, b) for a, b, _, _ in INTERNAL if b not in MODULES}
    assert lazy == set(), f"imports of modules that do not exist: {sorted(lazy)}"
    assert ("jitkern.kernels.raw", "jitkern.sim.raw", False) in {
        (a, b, local) for a, b, local, _ in INTERNAL
    }


def test_no_import_cycle():
    assert _cycles(skip=CYCLE_EXCEPTIONS) == []


def test_no_stage_imports_a_later_one():
    unexplained = sorted(_layer_findings() - set(LAYER_EXCEPTIONS))
    assert unexplained == [], "imports that break docs/architecture.md's rules"


def test_every_import_inside_a_function_has_a_reason():
    unexplained = sorted(_local_findings() - set(LOCAL_IMPORTS))
    assert unexplained == [], "give each a reason in LOCAL_IMPORTS, or import at the top"


def test_function_level_imports_stay_few():
    assert len(_local_findings()) <= MAX_LOCAL_IMPORTS, (
        "import at the top, or declare the module with lazy_import (jitkern/lazy.py)")


def test_generated_python_has_three_homes():
    assert len(GENERATED_PYTHON) <= 3
    homes = _generated_python() - set(GENERATED_PYTHON_PENDING)
    assert sorted(homes - set(GENERATED_PYTHON)) == [], "write generated Python through them"


def test_no_module_is_over_800_lines():
    assert sorted(_long_modules() - set(LONG_MODULES)) == []


def test_no_function_is_over_80_lines():
    assert sorted(_long_functions() - set(LONG_FUNCTIONS)) == []


@pytest.mark.parametrize(
    "name,table,found",
    [
        ("LAYER_EXCEPTIONS", LAYER_EXCEPTIONS, _layer_findings),
        ("LOCAL_IMPORTS", LOCAL_IMPORTS, _local_findings),
        ("LONG_MODULES", LONG_MODULES, _long_modules),
        ("LONG_FUNCTIONS", LONG_FUNCTIONS, _long_functions),
        ("GENERATED_PYTHON_PENDING", GENERATED_PYTHON_PENDING, _generated_python),
    ],
)
def test_allow_lists_hold_no_stale_entry(name, table, found):
    stale = sorted(set(table) - found())
    assert stale == [], f"{name}: remove the entries the code no longer needs"


def test_cycle_exceptions_are_still_needed():
    for edge in CYCLE_EXCEPTIONS:
        rest = {e: r for e, r in CYCLE_EXCEPTIONS.items() if e != edge}
        assert _cycles(skip=rest), f"CYCLE_EXCEPTIONS: {edge} no longer closes a cycle"


def test_the_rules_catch_a_backward_import():
    # the checker itself can fail: each kind of backward edge is a finding
    assert _breaks_a_rule("jitkern.compiler.types", "jitkern.runtime.driver")
    assert _breaks_a_rule("jitkern.toolchain.nvrtc", "jitkern.kernels.raw")
    assert _breaks_a_rule("jitkern.runtime.module", "jitkern.toolchain.nvrtc")
    assert not _breaks_a_rule("jitkern.runtime.module", "jitkern.toolchain.cubin")
    assert _breaks_a_rule("jitkern.dtypes", "jitkern.arrays.core")
    assert _breaks_a_rule("jitkern.sim.runtime", "jitkern.kernels.jit")
    assert _breaks_a_rule("jitkern.kernels.raw", "jitkern")
    assert not _breaks_a_rule("jitkern.kernels.raw", "jitkern.compiler.strings.params")


#: folders of tests/ that are not a folder of the package, and why
TEST_FOLDERS_OF_THEIR_OWN = {
    "tools": "scripts that read the suite (the simulator's coverage count), not tests",
}


def test_the_tests_mirror_the_package():
    """tests/<folder> tests jitkern/<folder>: a newcomer finds a module's tests by its path.
    Tests of the package as a whole (its import, layering, docs, errors) sit in tests/."""
    package = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    tests = {p.name for p in (ROOT / "tests").iterdir()
             if p.is_dir() and not p.name.startswith((".", "_"))}
    strays = sorted(tests - package - set(TEST_FOLDERS_OF_THEIR_OWN))
    assert not strays, f"tests/ folders that name no jitkern/ package folder: {strays}"
    assert set(TEST_FOLDERS_OF_THEIR_OWN) <= tests, "a stale entry in TEST_FOLDERS_OF_THEIR_OWN"


def test_no_two_test_modules_share_a_name():
    """tests/ has no __init__.py: pytest imports each test module by its file name, so two
    folders' test_x.py would stop the whole run at collection."""
    seen: dict = {}
    for path in sorted((ROOT / "tests").rglob("*.py")):
        seen.setdefault(path.name, []).append(str(path.relative_to(ROOT)))
    twice = {name: where for name, where in seen.items()
             if len(where) > 1 and name not in ("conftest.py", "__init__.py")}
    assert not twice, f"test modules sharing a name: {twice}"
