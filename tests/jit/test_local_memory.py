"""jit.local_memory(dtype, size): per-thread arrays. CPU: the generated C array, the
refusals, and ptxas's local bytes for sm_90 (registers when every index is a constant after
unrolling, the stack when an index is computed at run time). GPU: against NumPy."""

import numpy as np
import pytest

import jitkern
from jitkern import jit
from jitkern.errors import JitTypeError
from jitkern.jit import rawkernel

F32 = np.zeros(64, np.float32)
I64 = np.zeros(64, np.int64)


@rawkernel()
def gather_sum(x, y, n):
    """Each thread loads 16 values, then reads them back in a data-dependent order."""
    i = jit.grid(1)
    a = jit.local_memory(np.float32, 16)
    for j in range(16):
        a[j] = x[i * 16 + j]
    s = np.float32(0)
    for j in range(n):
        s += a[(j * 7) % 16]
    y[i] = s


@rawkernel()
def unrolled_window(x, y):
    """Every index is a constant once the loops are unrolled: the array lives in registers."""
    i = jit.grid(1)
    w = jit.local_memory(np.float32, 4)
    for j in jit.range(4, unroll=True):
        w[j] = x[i * 4 + j]
    y[i] = w[0] * w[3] + w[1] * w[2]


@rawkernel()
def histogram_per_thread(x, out, bins):
    """A local int array indexed by data: counts per thread, then written out."""
    i = jit.grid(1)
    h = jit.local_memory(np.int32, 8)
    for b in range(8):
        h[b] = 0
    for j in range(bins):
        v = x[i * bins + j]
        h[v % 8] += 1
    for b in range(8):
        out[i, b] = h[b]


def body(kernel, *args) -> list:
    source = kernel.emit(*args).split("}  // namespace jk\n", 1)[1]
    return [ln.strip() for ln in source.splitlines() if ln.strip() and not ln.startswith("#")]


def test_local_memory_is_a_c_array_at_the_function_start():
    text = body(gather_sum, F32, F32, 16)
    assert text[1] == "float jk_local[16];"
    assert "a = jk_local;" in text
    assert "a[j] = x[((i * 16u) + ((unsigned int)(j)))];" in text
    assert "s = (s + a[jk::mod((j * 7), 16)]);" in text


def test_two_local_arrays_have_two_names():
    @rawkernel()
    def k(x):
        a = jit.local_memory(np.int64, 3)
        b = jit.local_memory(np.float64, 5)
        a[0] = 1
        b[0] = 2.0
        x[0] = a[0] + b[0]

    text = body(k, np.zeros(2))
    assert "long long jk_local[3];" in text and "double jk_local_2[5];" in text


def test_debug_builds_check_local_indices():
    @rawkernel(debug=True)
    def k(x, n):
        a = jit.local_memory(np.float32, 4)
        for j in range(n):
            a[j] = x[j]
        x[0] = a[1]

    text = body(k, F32, 4)
    assert "jk_extent_a = 4LL;" in text
    assert any("jk::dbg::at1(a, (long long)(j), jk_extent_a," in ln for ln in text)
    assert k.inspect(F32, 4, arch="sm_90").cubin[:4] == b"\x7fELF"


def test_dynamic_index_spills_to_local_memory_on_sm90():
    result = gather_sum.inspect(F32, F32, 16, arch="sm_90")
    assert result.local_bytes is not None and result.local_bytes >= 64  # 16 floats, stacked


def test_constant_indices_after_unrolling_stay_in_registers_on_sm90():
    result = unrolled_window.inspect(F32, F32, arch="sm_90")
    assert result.local_bytes == 0
    assert "#pragma unroll" in result.source


@pytest.mark.parametrize(
    "call,message",
    [
        ("jit.local_memory(np.float32, n)", "size must be a compile-time int"),
        ("jit.local_memory(np.float32, 0)", "size must be positive, got 0"),
        ("jit.local_memory(np.float32, None)", "size must be a compile-time int"),
        ("jit.local_memory(3, 4)", "dtype must be a NumPy dtype"),
        ("jit.local_memory(np.float64, 70000)", "more than a thread's 524288 bytes"),
    ],
)
def test_refusals_name_the_line(tmp_path, call, message):
    path = tmp_path / "local_kernel.py"
    path.write_text(
        "import numpy as np\nfrom jitkern import jit\n\n\n@jit.rawkernel()\n"
        f"def k(x, n):\n    a = {call}\n    a[0] = 1\n    x[0] = a[0]\n"
    )
    import importlib.util

    spec = importlib.util.spec_from_file_location("local_kernel", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(JitTypeError) as info:
        module.k.emit(F32, 4)
    text = str(info.value)
    assert message in text and "local_kernel.py:7:" in text and call in text


def test_documented_in_the_builtin_table():
    from jitkern.compiler import builtins as B

    record = B.local_memory
    assert record.group == "memory" and "Per-thread array" in record.doc
    assert "| memory | `local_memory(dtype, size)` | dtype, size |" in B.render_table()


# -- GPU -----------------------------------------------------------------------------


def _gather_expected(x, n):
    rows = x.reshape(-1, 16)
    out = np.zeros(rows.shape[0], np.float32)
    for j in range(n):  # float32, in the kernel's order
        out = out + rows[:, (j * 7) % 16]
    return out


def test_local_arrays_on_gpu(rng, launch):
    threads = 256
    x = rng.standard_normal(threads * 16).astype(np.float32)
    y = launch.to_device(np.full(threads, np.nan, np.float32))
    launch(gather_sum)[2, 128](launch.to_device(x), y, 40)
    np.testing.assert_array_equal(launch.get(y), _gather_expected(x, 40))
    w = launch.to_device(np.full(threads, np.nan, np.float32))
    launch(unrolled_window)[2, 128](launch.to_device(x[: threads * 4]), w)
    q = x[: threads * 4].reshape(-1, 4).astype(np.float64)
    expected = q[:, 0] * q[:, 3] + q[:, 1] * q[:, 2]  # the GPU may fuse one multiply-add
    np.testing.assert_allclose(launch.get(w), expected, rtol=1e-6, atol=1e-6)
    v = rng.integers(0, 1000, threads * 24).astype(np.int32)
    out = launch.to_device(np.full((threads, 8), -7, np.int32))
    launch(histogram_per_thread)[2, 128](launch.to_device(v), out, 24)
    expected = np.stack([np.bincount(r % 8, minlength=8) for r in v.reshape(threads, 24)])
    np.testing.assert_array_equal(launch.get(out), expected)


@rawkernel(debug=True)
def local_overrun(x, y, n):
    a = jit.local_memory(np.float32, 4)
    for j in range(n):
        a[j] = x[j]
    y[jit.threadIdx.x] = a[1]


def test_debug_build_reports_a_local_index_past_the_end(rng, launch):
    from jitkern.runtime import debugcheck

    h = rng.standard_normal(8).astype(np.float32)
    y = launch.poisoned(32, np.float32)
    x = launch.to_device(h)
    try:
        message = launch.debug_error(lambda: launch(local_overrun)[1, 32](x, y, 5),
                                     lambda: jitkern.Device().synchronize())  # fmt: skip
    finally:
        debugcheck.PENDING.clear()
    assert "test_local_memory.py:" in message
    if launch.simulated:  # the launch ends at the first bad store (thread 0's)
        line = local_overrun.py_func.__code__.co_firstlineno + 4
        assert f"test_local_memory.py:{line}: index 4 is out of bounds for a of shape (4,)" in message
        return
    assert "index 4 on axis 0 of local array a (shape (4,))" in message
    np.testing.assert_array_equal(y.get(), np.full(32, h[1]))  # the bad store was skipped
