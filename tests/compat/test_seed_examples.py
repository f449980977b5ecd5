"""The spec's pages run verbatim after ``import jitkern as cp`` (issue 17 part 1, issue 19 part 2).

CPU: every ``cp.``/``cupy.`` name the pages use resolves on jitkern; the examples run under
JITKERN_SIMULATE (NumPy arrays, the simulator) where the simulator runs their kernels.
GPU (``gpu`` items): every example runs on the device. Each example's result is checked
against NumPy, and the values the doctest page shows are compared with what jitkern gives.
"""

import ast
import dataclasses
import re

import numpy as np
import pytest
import seed_code

import jitkern
from jitkern.config import settings
from jitkern.sim import vector

pytestmark = pytest.mark.skipif(
    seed_code.seeds_dir() is None,
    reason="the spec's pages are not beside this checkout (set JITKERN_SEEDS to their folder)",
)

NAME = re.compile(r"\b(?:cp|cupy)((?:\.[A-Za-z_]\w*)+)")

# The doctest page's sections whose kernels the simulator runs today (fuse, @jit.rawkernel).
SIMULATED_SECTIONS = ("Kernel fusion", "Basic Usage")


@pytest.fixture(params=["sim", pytest.param("gpu", marks=pytest.mark.gpu)])
def where(request, monkeypatch):
    """Where the examples run: the simulator (NumPy arrays) or the GPU (jitkern arrays)."""
    monkeypatch.setattr(settings, "simulate", request.param == "sim")
    return request.param


def host(a):
    return jitkern.asnumpy(a)


def string_kernels_simulate() -> bool:
    """Whether the simulator runs ElementwiseKernel/RawKernel (issue 19 part 2)."""
    k = jitkern.ElementwiseKernel("float32 x", "float32 y", "y = x + 1", "seed_probe")
    try:
        y = k(np.zeros(2, np.float32))
    except (jitkern.CUDAError, jitkern.KernelArgumentError, jitkern.JitkernTypeError):
        return False
    return isinstance(y, np.ndarray) and y.tolist() == [1.0, 1.0]


def need_string_kernels(where):
    if where == "sim" and not string_kernels_simulate():
        pytest.skip("the simulator does not run string kernels yet (issue 19 part 2)")


def vectorised_only(where, monkeypatch):
    """The page's full sizes in the simulator: the vectorised path only (MODE "vector" raises
    rather than falling back to per-thread scheduling, which would take an hour). The
    differential check against the per-thread scheduler would run that too; it runs on the
    same kernels at small sizes (the tests ``*_vectorise_like_the_per_thread_scheduler``)."""
    if where == "sim":
        monkeypatch.setattr(vector, "MODE", "vector")
        monkeypatch.setattr(vector, "DIFFERENTIAL", False)


# ---------------------------------------------------------------------------
# names


def _code_of_every_page() -> str:
    blocks = seed_code.article_blocks() + seed_code.numbered_blocks()
    doctests = [src for src, _, _ in seed_code.doctest_block().examples]
    return "\n".join([b.code for b in blocks] + doctests)


def test_every_name_the_pages_use_resolves_on_jitkern():
    """Each ``cp.X.Y``/``cupy.X.Y`` in the pages' examples and prose is a jitkern attribute."""
    text = _code_of_every_page() + "\n".join(seed_code.all_pages().values())
    names = {m.group(1).strip(".") for m in NAME.finditer(text)}
    assert {"float32", "random.normal", "cuda.Stream.null.synchronize", "allclose"} <= names
    missing = []
    for dotted in sorted(names):
        value = jitkern
        for part in dotted.split("."):
            if not hasattr(value, part):
                missing.append(dotted)
                break
            value = getattr(value, part)
    assert missing == []


def test_the_examples_parse_as_python():
    blocks = seed_code.article_blocks() + seed_code.numbered_blocks()
    assert len(blocks) == 12
    for b in blocks:
        ast.parse(seed_code.with_jitkern_imports(b.code))
        assert "import cupy" not in seed_code.with_jitkern_imports(b.code)


# ---------------------------------------------------------------------------
# the doctest page


def _expected(want: str):
    text = want.strip()
    if text.endswith(","):  # the page cuts one output short before its dtype
        text += ")"
    names = {"array": np.array, "float32": np.float32, "float64": np.float64,
             "complex64": np.complex64, "int64": np.int64, "inf": np.inf, "nan": np.nan}  # fmt: skip
    return eval(text, names)  # the page's own printed values


def _check_doctest_value(source, want, value):
    if not want.strip() or value is None:
        return
    expected = _expected(want)
    if isinstance(expected, dict):  # RawKernel.attributes: the names, values are per device
        assert set(value) == set(expected), source
        return
    got = host(value)
    if isinstance(expected, np.ndarray) and "dtype=" in want:
        assert got.dtype == expected.dtype, source
    assert got.shape == np.shape(expected), source
    np.testing.assert_allclose(got, expected, rtol=2e-7, err_msg=source)


def test_doctest_page_session(where, tmp_path):
    sections = SIMULATED_SECTIONS if where == "sim" else None
    block = seed_code.doctest_block(sections)
    if where == "sim" and string_kernels_simulate():
        # all of it but the kernel attributes (they are the device's: read on the GPU run)
        full = seed_code.doctest_block()
        block = dataclasses.replace(full, examples=tuple(
            e for e in full.examples if "attributes" not in e[0]
            and "max_dynamic_shared_size_bytes" not in e[0]))
    ns = {"cp": jitkern, "cupy": jitkern}
    results = seed_code.run_session(block.examples, tmp_path, ns)
    assert len(results) == len(block.examples) >= 18
    shown = 0
    for source, want, value in results:
        _check_doctest_value(source, want, value)
        shown += bool(want.strip())
    assert shown >= (2 if where == "sim" else 10)
    # the JIT example's arrays: a copy of normal values (the asserts in the page ran)
    x, y = host(ns["x"]), host(ns["y"])
    assert x.dtype == np.float32 and x.shape == (2**22,)
    np.testing.assert_array_equal(y, x)
    assert abs(float(x.mean())) < 0.01 and abs(float(x.std()) - 1) < 0.01


# ---------------------------------------------------------------------------
# the article and the Markdown page


def _run(block_name, tmp_path, blocks):
    block = next(b for b in blocks if b.name == block_name)
    return seed_code.run_code(block.code, tmp_path, block_name)


def _lines(printed: str) -> list:
    return printed.strip().splitlines()


def test_article_elementwise_and_reduction(where, tmp_path, monkeypatch):
    need_string_kernels(where)
    vectorised_only(where, monkeypatch)  # 10^7 elements (small: the test after the next)
    blocks = seed_code.article_blocks()
    ns, _ = _run("clipped_relu", tmp_path, blocks)
    x = host(ns["x"])
    assert x.shape == (10_000_000,) and abs(x.mean()) < 0.01 and abs(x.std() - 1) < 0.01
    np.testing.assert_array_equal(host(ns["y"]), np.minimum(np.maximum(x, 0.0), 6.0))
    ns, printed = seed_code.run_code(blocks[1].code, tmp_path, "l2", ns)
    x = host(ns["x"])
    ref = float((x * x).sum())
    np.testing.assert_allclose(float(host(ns["result"])), ref, rtol=1e-10)
    np.testing.assert_allclose(float(_lines(printed)[-1]), np.sqrt(ref), rtol=1e-10)


def test_article_kernels_vectorise_like_the_per_thread_scheduler(tmp_path, rng, monkeypatch):
    """The article's ElementwiseKernel and ReductionKernel as the page writes them, over
    fewer elements: tests/conftest.py's differential check compares the vectorised path
    with the per-thread scheduler on each launch, and the results are NumPy's."""
    monkeypatch.setattr(settings, "simulate", True)
    n = str(int(rng.integers(1000, 5000)))
    blocks = seed_code.article_blocks()
    ns, _ = seed_code.run_code(blocks[0].code.replace("10_000_000", n), tmp_path, "relu_small")
    x = ns["x"]
    assert x.shape == (int(n),)
    np.testing.assert_array_equal(ns["y"], np.minimum(np.maximum(x, 0.0), 6.0))
    ns, printed = seed_code.run_code(blocks[1].code.replace("10_000_000", n), tmp_path,
                                     "l2_small", ns)
    ref = float((ns["x"] * ns["x"]).sum())
    np.testing.assert_allclose(float(ns["result"]), ref, rtol=1e-12)
    np.testing.assert_allclose(float(_lines(printed)[-1]), np.sqrt(ref), rtol=1e-12)


def test_article_raw_kernel(where, tmp_path):
    need_string_kernels(where)
    ns, _ = _run("vector_add", tmp_path, seed_code.article_blocks())
    np.testing.assert_array_equal(host(ns["c"]), host(ns["a"]) + host(ns["b"]))


def test_article_complex_magnitude(where, tmp_path):
    need_string_kernels(where)
    ns, printed = _run("abs2", tmp_path, seed_code.article_blocks())
    assert _lines(printed) == ["True"]
    z = host(ns["z"])
    assert z.dtype == np.complex128
    np.testing.assert_allclose(host(ns["mag2_custom"]), np.abs(z) ** 2, rtol=1e-13)
    np.testing.assert_allclose(host(ns["mag2_standard"]), np.abs(z) ** 2, rtol=1e-13)


def test_markdown_elementwise(where, tmp_path):
    need_string_kernels(where)
    ns, printed = _run("basic_elementwise", tmp_path, seed_code.numbered_blocks())
    assert _lines(printed)[0] == str(np.array([11, 14, 17, 20], np.float32))
    a, b = host(ns["a"]), host(ns["b"])
    np.testing.assert_array_equal(host(ns["result"]), np.maximum(a * np.float32(0.5) + b, 0))


@pytest.mark.parametrize("block", ["sum_of_squares", "weighted_mean"])
def test_markdown_reductions_have_shifted_arguments(where, tmp_path, block):
    """The page passes '0' as post_map_expr and the name as identity (CuPy's order is
    post_map_expr, identity, name): jitkern refuses it at construction, naming the fix."""
    with pytest.raises(ValueError, match="look shifted by one.*post_map_expr, identity, name"):
        _run(block, tmp_path, seed_code.numbered_blocks())


def test_markdown_matrix_multiply(where, tmp_path, monkeypatch):
    need_string_kernels(where)
    vectorised_only(where, monkeypatch)
    ns, printed = _run("matrix_multiply", tmp_path, seed_code.numbered_blocks())
    assert _lines(printed) == ["Results match: True"]
    if where == "sim":
        assert ns["matrix_multiply_kernel"].simulate.last_path == "vector"
    a, b = host(ns["A"]), host(ns["B"])
    assert a.dtype == np.float32 and a.min() >= 0 and a.max() < 1
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(host(ns["C"]), ref, rtol=1e-5)
    np.testing.assert_allclose(host(ns["expected"]), ref, rtol=1e-5)


def test_markdown_raw_module(where, tmp_path):
    need_string_kernels(where)
    ns, printed = _run("raw_module", tmp_path, seed_code.numbered_blocks())
    data = host(ns["data"])
    assert _lines(printed)[0] == f"ReLU: {np.maximum(data, 0)}"
    np.testing.assert_allclose(host(ns["output"]), 1 / (1 + np.exp(-data)), rtol=1e-6)


def test_markdown_shared_memory_reduction(where, tmp_path, monkeypatch):
    need_string_kernels(where)
    vectorised_only(where, monkeypatch)
    ns, printed = _run("optimized_reduction", tmp_path, seed_code.numbered_blocks())
    assert _lines(printed)[-1] == "Results match: True"
    if where == "sim":
        assert ns["optimized_kernel"].simulate.last_path == "vector"
    data = host(ns["data"]).astype(np.float64)
    np.testing.assert_allclose(float(host(ns["builtin_result"])), data.sum(), rtol=1e-5)
    block = 256
    partial = np.add.reduceat(data, np.arange(0, data.size, block))
    np.testing.assert_allclose(host(ns["output"]), partial, rtol=1e-5)


def test_markdown_inplace_kernel_reuses_a_name(where, tmp_path):
    """The page names the output like an input ('float32 x' twice): jitkern refuses it and
    says to pass the same array as input and output instead."""
    with pytest.raises(ValueError, match="'x' is already an input.*same array"):
        _run("inplace_kernel", tmp_path, seed_code.numbered_blocks())


def test_markdown_multiple_outputs(where, tmp_path):
    need_string_kernels(where)
    ns, printed = _run("multi_output", tmp_path, seed_code.numbered_blocks())
    assert _lines(printed) == ["Identity check: True"]
    angles = host(ns["angles"])
    np.testing.assert_allclose(angles, np.linspace(0, 2 * np.pi, 1000, dtype=np.float32))
    np.testing.assert_allclose(host(ns["sin_vals"]), np.sin(angles), atol=1e-6)
    np.testing.assert_allclose(host(ns["cos_vals"]), np.cos(angles), atol=1e-6)


def _page_kernel(block_name: str):
    """The RawKernel an example of the Markdown page defines (its source and name as given)."""
    code = next(b.code for b in seed_code.numbered_blocks() if b.name == block_name)
    found = re.search(r"RawKernel\(r'''(.*?)''', '(\w+)'\)", code, re.S)
    return jitkern.RawKernel(found.group(1), found.group(2))


def test_page_kernels_vectorise_like_the_per_thread_scheduler(rng):
    """The matrix multiply and the shared-memory reduction of the page, at small sizes: the
    vectorised path runs them (tests/conftest.py's differential check compares it with the
    per-thread scheduler, bit for bit), and the results are NumPy's."""
    mm = _page_kernel("matrix_multiply")
    m, n, k = (int(v) for v in rng.integers(3, 40, 3))
    a = rng.random((m, k), dtype=np.float32)
    b = rng.random((k, n), dtype=np.float32)
    c = np.full((m, n), np.nan, np.float32)
    mm.simulate(((n + 15) // 16, (m + 15) // 16), (16, 16), (a, b, c, m, n, k))
    assert mm.simulate.last_path == "vector", mm.simulate.why_threads
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5)

    red = _page_kernel("optimized_reduction")
    data = rng.random(int(rng.integers(300, 2000)), dtype=np.float32)
    blocks = (data.size + 127) // 128
    out = np.full(blocks, np.nan, np.float32)
    red.simulate((blocks,), (128,), (data, out, data.size), shared_mem=128 * 4)
    assert red.simulate.last_path == "vector", red.simulate.why_threads
    want = np.add.reduceat(data.astype(np.float64), np.arange(0, data.size, 128))
    np.testing.assert_allclose(out, want, rtol=1e-5)
