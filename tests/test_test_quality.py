"""The tests check themselves: an AST pass over tests/ that fails on the mechanical kinds of
test that cannot fail (issue 9, "tests that can fail").

Rules (each finding names file:line and the rule):
- no-assertion: a test function with no `assert`, no `pytest.raises`/`warns`/`fail`, no
  `np.testing.*` call and no call to a helper that does one of these (helpers defined in the
  same module are followed; helpers imported from elsewhere are listed in ASSERTING_HELPERS).
- broad-raises: `pytest.raises(Exception)` / `pytest.raises(BaseException)`: any bug passes.
- unchecked-raises: `pytest.raises(X)` with neither `match=` nor `as info` (whose value the
  test can then inspect): an error raised for another reason passes. Exception classes the
  test module defines itself (sentinels raised by a monkeypatch) are exempt: their identity
  is the check.
- swallowed-error: a bare `except:`, or `except Exception`/`BaseException` whose body does
  nothing (`pass`, `...`, `continue`): the error the test is about disappears.
- self-comparison: `assert a == a`, `assert a is a`, `np.testing.assert_*(a, a)`, also through
  reads such as `a.get()` (two other calls may differ: interning and determinism checks).
- loose-float64: `assert_allclose` with a literal rtol >= 1e-6 in a test whose name or
  parametrisation says float64 (float64 results want float64-level tolerances). Conservative:
  only literal tolerances, only where float64 is named in the test's own name or its
  `parametrize` arguments.
- fixed-seed: `default_rng(<constant>)`, `np.random.seed(...)`, `RandomState(<constant>)`:
  every run then draws the same inputs; the `rng` fixture draws fresh ones (and prints its seed).
- unpoisoned-output: a device array from `empty`/`empty_like` (jitkern, CuPy, PyTorch; not
  NumPy) that the function never fills (`.fill`, `.fill_`, `.set`, `.copy_`, an item
  assignment) or that is passed straight into a call: the pool may hand back memory that holds
  a previous run's right answer, so a kernel that writes nothing would pass.
- fixed-tmp-path: a string literal path under /tmp or a `tempfile.mkdtemp`/`mkstemp` call:
  tests use pytest's tmp_path/tmp_path_factory so nothing is left behind.
"""

import ast
import pathlib

import pytest

TESTS = pathlib.Path(__file__).resolve().parent

# Helpers imported from other modules that assert on their own. The reason is the helper's
# body (it must contain an assertion); test_asserting_helpers_really_assert checks that.
# Empty today: every helper a test relies on lives in the test's own module.
ASSERTING_HELPERS: dict = {}

# (file, test name, rule) -> reason. Only for findings where the rule's heuristic is wrong.
ALLOWED = {
    ("runtime/test_memory_cache_gpu.py", "test_a_freed_block_returns_on_its_stream_only",
     "unpoisoned-output"): (
        "an allocator test: it reads which block empty() handed out (data.ptr), no launch "
        "writes these arrays, and the one whose values it checks is filled first"
    ),
    ("runtime/test_memory_cache_gpu.py", "test_free_all_blocks_empties_the_cache",
     "unpoisoned-output"): (
        "an allocator test: the arrays exist only to be freed into the cache and counted"
    ),
    ("runtime/test_memory_cache_gpu.py", "test_capture_allocations_bypass_the_cache",
     "unpoisoned-output"): (
        "the empty() before the capture only puts a block in the cache; its address is compared"
    ),
    ("sim/test_simulate_mode.py", "test_numpy_arrays_are_refused_with_the_gpus_error",
     "unpoisoned-output"): (
        "the empty() on the fake driver (which has no memory to fill) is only the device "
        "argument beside the NumPy one the GPU path refuses before any launch; nothing is read"
    ),
    ("sim/test_sim_device.py", "test_new_memory_is_poisoned_and_zeros_clears_it",
     "unpoisoned-output"): (
        "the test reads what empty() hands out on the simulated device: its poison bytes"
    ),
    ("arrays/test_arrays_gpu.py", "test_constructors", "unpoisoned-output"): (
        "the test is about empty() itself: it checks the array's shape, flags and dtype and "
        "never reads its contents"
    ),
    ("test_dask.py", "_fake_gpu_compiler", "unpoisoned-output"): (
        "the fake driver has no memory behind its arrays and runs nothing: the test counts "
        "each worker's compiles and the arch of the binaries it loads, never values"
    ),
    ("test_dask.py", "compile_on", "unpoisoned-output"): (
        "the same function (nested in _fake_gpu_compiler, so it pickles into the workers)"
    ),
    ("kernels/test_made_again.py", "test_a_kernel_made_again_falls_back_to_its_own_general_path",
     "unpoisoned-output"): (
        "the fake driver runs no kernel and the test reads no array: it counts the launches "
        "and checks which call each object runs and the error of a refused signature"
    ),
    ("kernels/test_made_again.py", "test_an_elementwise_kernel_made_again_reports_its_source",
     "unpoisoned-output"): (
        "the fake driver runs no kernel and the test reads no array: it compares the generated "
        "source each object reports"
    ),
    ("kernels/test_signature.py", "test_cupy_bfloat16_and_cuda_bfloat16", "unpoisoned-output"): (
        "the fake driver runs no kernel and the test reads no array: it checks the pointers "
        "and the packed scalar the launch was given, and that a float16 array is refused"
    ),
    ("runtime/test_results_of_instance_protocol.py",
     "test_instance_protocol_arguments_give_jitkern_results", "unpoisoned-output"): (
        "the fake driver runs no kernel and the test reads no array: it checks the type of "
        "the result a launch allocates"
    ),
    ("runtime/test_fault_is_not_blamed_on_the_launch.py",
     "test_a_launch_after_a_fault_names_the_fault_not_the_block", "unpoisoned-output"): (
        "the fake driver runs no kernel and the test reads no array: it checks the error a "
        "launch after a fault raises"
    ),
    ("kernels/test_raw_checked_args.py", "test_jitkern_arrays_are_checked_on_each_call_by_their_dtype",
     "unpoisoned-output"): (
        "the fake driver runs no kernel and the test reads no array: it checks the pointer "
        "the launch was given and that a float32 array is refused"
    ),
    ("kernels/test_multi_device.py", "test_string_kernel_on_device_1_loads_its_own_binary_there",
     "unpoisoned-output"): (
        "the fake driver has no memory behind its arrays and runs nothing: the test checks "
        "which binary each device loads and which function it launches, never values"
    ),
    ("kernels/test_multi_device.py", "test_devices_of_one_arch_share_one_binary_loaded_on_each",
     "unpoisoned-output"): (
        "the fake driver has no memory behind its arrays: the test checks module loads only"
    ),
    ("kernels/test_memo.py", "test_a_kernel_made_again_builds_nothing",
     "unpoisoned-output"): (
        "the fake driver has no memory behind its arrays and runs nothing: the test checks "
        "what was compiled, built, loaded and launched (counters), never values; "
        "test_memo.py's simulator tests check values"
    ),
    ("kernels/test_memo.py", "test_name_expressions_and_preamble_are_part_of_the_key",
     "unpoisoned-output"): (
        "the fake driver has no memory behind its arrays and runs nothing: the test checks "
        "what was compiled, built, loaded and launched (counters), never values; "
        "test_memo.py's simulator tests check values"
    ),
    ("kernels/test_memo.py", "test_clear_memo_and_clear_cache_behave_as_documented",
     "unpoisoned-output"): (
        "the fake driver has no memory behind its arrays and runs nothing: the test checks "
        "what was compiled, built, loaded and launched (counters), never values; "
        "test_memo.py's simulator tests check values"
    ),
    ("kernels/test_per_arch_binaries.py", "test_a_kernel_launches_through_the_driver_swapped_in",
     "unpoisoned-output"): (
        "the fake drivers have no memory behind their arrays and run nothing: the test checks "
        "which driver each launch reached, never values"
    ),
    ("kernels/test_per_arch_binaries.py", "test_each_device_loads_its_own_arch",
     "unpoisoned-output"): (
        "the fake driver has no memory behind its arrays and runs nothing: the test checks "
        "which binary each device loads (and which function it launches), never values"
    ),
    ("kernels/test_per_arch_binaries.py", "test_exported_kernel_loads_each_devices_binary",
     "unpoisoned-output"): (
        "the fake driver has no memory behind its arrays and runs nothing: the test checks "
        "which binary each device loads (and which function it launches), never values"
    ),
    ("kernels/test_per_arch_binaries.py", "test_autotuned_kernel_loads_each_devices_binary",
     "unpoisoned-output"): (
        "the fake driver has no memory behind its arrays and runs nothing: the test checks "
        "which binary each device loads (and which function it launches), never values"
    ),
    ("kernels/test_per_arch_binaries.py", "test_a_jit_kernel_launches_each_devices_own_function",
     "unpoisoned-output"): (
        "the fake driver has no memory behind its arrays and runs nothing: the test checks "
        "which binary each device loads (and which function it launches), never values"
    ),
    ("kernels/test_cupy_string_semantics.py", "test_launches_use_cupys_grid_and_block",
     "unpoisoned-output"): (
        "the fake driver runs nothing: the test checks the grid and block each launch was given"
    ),
    ("kernels/test_cupy_string_semantics.py", "test_an_exported_kernel_keeps_cupys_grid",
     "unpoisoned-output"): (
        "the fake driver runs nothing: the test checks the grid and block of the loaded export"
    ),
    ("kernels/test_raw_module_files.py", "test_a_file_loads_as_it_is_and_its_kernel_launches",
     "unpoisoned-output"): (
        "the fake driver runs nothing: the test checks the image loaded and the packed "
        "arguments (the pointer among them); test_raw_module_files_gpu.py checks values"
    ),
    ("kernels/test_raw_module_files.py", "test_a_fatbin_loads_and_launches",
     "unpoisoned-output"): (
        "the fake driver runs nothing: the test checks the image loaded and the packed "
        "arguments; test_raw_module_files_gpu.py checks values"
    ),
    ("compat/test_namespace.py", "test_module_seed_restarts_the_global_stream", "fixed-seed"): (
        "the test is about jitkern.random.seed itself; the seed it passes comes from the rng "
        "fixture, fresh each run"
    ),
}

_ASSERT_CALL_ATTRS = {"raises", "warns", "fail", "deprecated_call", "approx"}
_NOOP = (ast.Pass, ast.Continue)


def _called_names(node: ast.Call) -> set:
    """Every name the call may resolve to: `f(...)`, `m.f(...)`, `(f if c else g)(...)`."""
    names = {n.id for n in ast.walk(node.func) if isinstance(n, ast.Name)}
    names |= {n.attr for n in ast.walk(node.func) if isinstance(n, ast.Attribute)}
    return names


def _call_name(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _dotted(node) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    if isinstance(node, ast.Call):
        return _dotted(node.func)
    return ""


def _is_direct_assertion(node) -> bool:
    if isinstance(node, ast.Assert):
        return True
    if isinstance(node, ast.Raise) and node.exc is not None:
        return "AssertionError" in _dotted(node.exc)  # a helper's own mismatch report
    if isinstance(node, ast.Call):
        dotted = _dotted(node.func)
        if dotted.startswith(("pytest.", "np.testing.", "numpy.testing.", "testing.")):
            return _call_name(node) in _ASSERT_CALL_ATTRS or "testing." in dotted
        if _call_name(node).startswith("assert_"):
            return True  # np.testing names imported directly, unittest-style helpers
    return False


def _functions(tree):
    """Module-level functions and methods of classes, by name."""
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.setdefault(node.name, node)
    return found


def _asserting(functions) -> set:
    """Names of the module's functions that assert directly or through another one."""
    calls = {}
    direct = set()
    for name, fn in functions.items():
        called = set()
        for node in ast.walk(fn):
            if _is_direct_assertion(node):
                direct.add(name)
            if isinstance(node, ast.Call):
                called |= _called_names(node)
        calls[name] = called
    result = set(direct) | set(ASSERTING_HELPERS)
    changed = True
    while changed:
        changed = False
        for name, called in calls.items():
            if name not in result and called & result:
                result.add(name)
                changed = True
    return result


def _test_functions(tree):
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith(
            "test"
        ):
            yield node
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name.startswith("test"):
                    yield item


def _no_assertion(fn, asserting):
    for node in ast.walk(fn):
        if _is_direct_assertion(node):
            return []
        if isinstance(node, ast.Call) and _called_names(node) & asserting:
            return []
    return [(fn.lineno, fn.name, "no-assertion")]


def _broad_raises(fn):
    out = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and _dotted(node.func) == "pytest.raises" and node.args:
            first = node.args[0]
            if isinstance(first, ast.Name) and first.id in ("Exception", "BaseException"):
                out.append((node.lineno, fn.name, "broad-raises"))
    return out


def _unchecked_raises(fn, own_classes):
    out = []
    for node in ast.walk(fn):
        items = node.items if isinstance(node, ast.With) else []
        for item in items:
            call = item.context_expr
            if not (isinstance(call, ast.Call) and _dotted(call.func) == "pytest.raises"):
                continue
            matched = any(kw.arg == "match" for kw in call.keywords)
            own = bool(call.args) and _dotted(call.args[0]) in own_classes
            if not matched and item.optional_vars is None and not own:
                out.append((node.lineno, fn.name, "unchecked-raises"))
    return out


def _swallowed(tree_or_fn, name):
    out = []
    for node in ast.walk(tree_or_fn):
        if not isinstance(node, ast.ExceptHandler):
            continue
        if node.type is None:
            out.append((node.lineno, name, "swallowed-error"))
            continue
        broad = isinstance(node.type, ast.Name) and node.type.id in ("Exception", "BaseException")
        noop = all(
            isinstance(s, _NOOP) or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
            for s in node.body
        )
        if broad and noop:
            out.append((node.lineno, name, "swallowed-error"))
    return out


_PURE_READS = {"get", "asnumpy", "tobytes", "item", "copy", "tolist"}


def _plain(node) -> bool:
    """A name, attribute, subscript, constant or a read of one (`a.get()`): the same
    expression twice is the same value. Other calls may differ (`f(x) is f(x)` checks
    interning, two launches check determinism)."""
    calls = [n for n in ast.walk(node) if isinstance(n, ast.Call)]
    return all(_call_name(c) in _PURE_READS for c in calls)


def _self_comparison(fn):
    out = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Assert) and isinstance(node.test, ast.Compare):
            cmp = node.test
            if len(cmp.ops) == 1 and isinstance(cmp.ops[0], (ast.Eq, ast.Is, ast.GtE, ast.LtE)):
                left, right = cmp.left, cmp.comparators[0]
                if _plain(left) and ast.dump(left) == ast.dump(right):
                    out.append((node.lineno, fn.name, "self-comparison"))
        if (
            isinstance(node, ast.Call)
            and _call_name(node).startswith("assert_")
            and len(node.args) >= 2
            and _plain(node.args[0])
            and ast.dump(node.args[0]) == ast.dump(node.args[1])
        ):
            out.append((node.lineno, fn.name, "self-comparison"))
    return out


def _mentions_float64(fn) -> bool:
    if "float64" in fn.name or "f64" in fn.name or "double" in fn.name:
        return True
    for deco in fn.decorator_list:
        if not (isinstance(deco, ast.Call) and _dotted(deco.func).endswith("parametrize")):
            continue
        if "float64" in ast.unparse(deco) or "'d'" in ast.unparse(deco):
            return True
    return False


def _loose_float64(fn):
    if not _mentions_float64(fn):
        return []
    out = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and _call_name(node) == "assert_allclose":
            for kw in node.keywords:
                value = kw.value.value if isinstance(kw.value, ast.Constant) else None
                if kw.arg == "rtol" and isinstance(value, (int, float)) and value >= 1e-6:
                    out.append((node.lineno, fn.name, "loose-float64"))
    return out


def _fixed_tmp(tree):
    out = []
    for node in ast.walk(tree):
        text = node.value if isinstance(node, ast.Constant) else None
        if isinstance(text, str) and (text.startswith("/tmp/") or text == "/tmp"):
            out.append((node.lineno, "", "fixed-tmp-path"))
        if isinstance(node, ast.Call) and _dotted(node.func) in (
            "tempfile.mkdtemp",
            "tempfile.mkstemp",
            "mkdtemp",
            "mkstemp",
        ):
            out.append((node.lineno, "", "fixed-tmp-path"))
    return out


_POISONS = {"fill", "fill_", "set", "copy_", "poisoned"}


def _is_device_empty(node) -> bool:
    """`jitkern.empty(...)`, `cupy.empty_like(...)`, `empty(...)`: not NumPy's."""
    if not isinstance(node, ast.Call) or _call_name(node) not in ("empty", "empty_like"):
        return False
    return _dotted(node.func).split(".")[0] not in ("np", "numpy")


def _inside_raises(fn):
    """Nodes under `with pytest.raises(...)`: an allocation there is the thing that fails."""
    inside = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.With) and any(
            _dotted(item.context_expr).startswith("pytest.raises") for item in node.items
        ):
            inside |= {id(n) for n in ast.walk(node)}
    return inside


def _unpoisoned(fn):
    """A device array from `empty` that a kernel may write and the test then reads holds
    whatever the pool's last user left there (often a previous run's correct answer): fill it
    (NaN or a sentinel) before the launch. An `empty` array the test never fills is flagged,
    and so is one passed straight into a call."""
    raises = _inside_raises(fn)
    poisoned = set()
    for node in ast.walk(fn):
        func = node.func if isinstance(node, ast.Call) else None
        if isinstance(func, ast.Attribute) and func.attr in _POISONS:
            poisoned.add(_dotted(func.value))
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Subscript):
                    poisoned.add(_dotted(target.value))
    out = []
    for node in ast.walk(fn):
        if id(node) in raises:
            continue
        if isinstance(node, ast.Assign) and _is_device_empty(node.value):
            names = [_dotted(t) for t in node.targets]
            if not any(name in poisoned for name in names):
                out.append((node.lineno, fn.name, "unpoisoned-output"))
        elif (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Tuple)
            and isinstance(node.targets[0], ast.Tuple)
        ):
            for target, value in zip(node.targets[0].elts, node.value.elts):
                if _is_device_empty(value) and _dotted(target) not in poisoned:
                    out.append((node.lineno, fn.name, "unpoisoned-output"))
        elif isinstance(node, ast.Call):
            for arg in node.args:
                if _is_device_empty(arg) and id(arg) not in raises:
                    out.append((arg.lineno, fn.name, "unpoisoned-output"))
        elif isinstance(node, (ast.List, ast.ListComp)):
            elts = node.elts if isinstance(node, ast.List) else [node.elt]
            for elt in elts:
                if _is_device_empty(elt):
                    out.append((elt.lineno, fn.name, "unpoisoned-output"))
    return out


def _fixed_seed(fn):
    out = []
    for node in ast.walk(fn):
        if not isinstance(node, ast.Call):
            continue
        name, dotted = _call_name(node), _dotted(node.func)
        constant = bool(node.args) and isinstance(node.args[0], ast.Constant)
        if (name in ("default_rng", "RandomState") and constant) or dotted.endswith("random.seed"):
            out.append((node.lineno, fn.name, "fixed-seed"))
    return out


def findings_for(path: pathlib.Path):
    tree = ast.parse(path.read_text(), filename=str(path))
    asserting = _asserting(_functions(tree))
    own_classes = {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    out = []
    for fn in _test_functions(tree):
        out += _no_assertion(fn, asserting)
        out += _broad_raises(fn)
        out += _unchecked_raises(fn, own_classes)
        out += _self_comparison(fn)
        out += _loose_float64(fn)
    for fn in _functions(tree).values():
        out += _unpoisoned(fn)
        out += _fixed_seed(fn)
    out += _swallowed(tree, "")
    if path.name != pathlib.Path(__file__).name:
        out += _fixed_tmp(tree)
    rel = path.relative_to(TESTS).as_posix()
    return [(rel, line, name, rule) for line, name, rule in out]


def _all_findings():
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        found += findings_for(path)
    return found


def test_tests_can_fail():
    bad = [f for f in _all_findings() if (f[0], f[2], f[3]) not in ALLOWED]
    report = "\n".join(f"tests/{rel}:{line}: {rule} {name}" for rel, line, name, rule in bad)
    assert not bad, f"{len(bad)} test defects:\n{report}"


def test_allow_list_entries_are_still_needed():
    found = {(rel, name, rule) for rel, _, name, rule in _all_findings()}
    stale = [key for key in ALLOWED if key not in found]
    assert not stale, f"allow-list entries that no longer match a finding: {stale}"


def test_asserting_helpers_really_assert():
    for helper, rel in ASSERTING_HELPERS.items():
        tree = ast.parse((TESTS / rel).read_text())
        functions = _functions(tree)
        assert helper in functions, f"{helper} is not defined in tests/{rel}"
        assert helper in _asserting(functions), f"{helper} in tests/{rel} asserts nothing"


_SAMPLES = {
    "no-assertion": "def test_x():\n    f(1)\n",
    "broad-raises": "def test_x():\n    with pytest.raises(Exception):\n        f()\n",
    "unchecked-raises": "def test_x():\n    with pytest.raises(ValueError):\n        f()\n",
    "swallowed-error": "def test_x():\n    try:\n        f()\n    except Exception:\n        pass\n"
    "    assert g()\n",
    "self-comparison": "def test_x():\n    a = f()\n    np.testing.assert_array_equal(a.get(), a.get())\n",
    "loose-float64": "def test_x_float64():\n    np.testing.assert_allclose(f(), g(), rtol=1e-5)\n",
    "fixed-seed": "def test_x():\n    x = np.random.default_rng(0).random(4)\n    assert f(x)\n",
    "unpoisoned-output": "def test_x():\n    y = jitkern.empty(4)\n    k(y)\n    assert y.get()\n",
    "fixed-tmp-path": "def test_x():\n    open('/tmp/out.bin', 'wb')\n    assert 1\n",
}


@pytest.mark.parametrize("rule", sorted(_SAMPLES))
def test_checker_catches_each_rule(rule, tmp_path):
    sample = tmp_path / "test_sample.py"
    sample.write_text(_SAMPLES[rule])
    tree = ast.parse(sample.read_text())
    asserting = _asserting(_functions(tree))
    rules = set()
    for fn in _test_functions(tree):
        for finding in (
            _no_assertion(fn, asserting)
            + _broad_raises(fn)
            + _unchecked_raises(fn, set())
            + _self_comparison(fn)
            + _loose_float64(fn)
        ):
            rules.add(finding[2])
    rules |= {f[2] for f in _swallowed(tree, "") + _fixed_tmp(tree)}
    for fn in _functions(tree).values():
        rules |= {f[2] for f in _unpoisoned(fn) + _fixed_seed(fn)}
    assert rule in rules


def test_checker_follows_local_helpers():
    tree = ast.parse(
        "def check(a):\n    assert a\n\ndef run(a):\n    check(a)\n\ndef test_x():\n    run(1)\n"
    )
    fn = next(_test_functions(tree))
    assert _no_assertion(fn, _asserting(_functions(tree))) == []
