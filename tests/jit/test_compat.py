"""CuPy-compat items of cupyx.jit kernels: each with a CPU test (the generated source) and
a test against NumPy that takes ``launch``: run on the GPU ([gpu]) and in the simulator ([sim])."""

import types

import numpy
import numpy as np
import pytest

import jitkern as cupy  # a kernel written for CuPy, with no CuPy installed
from jitkern import jit
from jitkern.toolchain.nvrtc import compile_source
from jitkern.errors import JitSyntaxError, JitTypeError
from jitkern.jit import rawkernel

F16 = np.zeros(8, np.float16)
F32 = np.zeros(8, np.float32)
I32 = np.zeros(8, np.int32)
C64 = np.zeros(32, np.complex64)


def lines(kernel, *args) -> list:
    source = kernel.emit(*args).split("}  // namespace jk\n", 1)[1]
    return [
        ln.strip()
        for ln in source.splitlines()
        if ln.strip() and not ln.lstrip().startswith(("#", "//"))
    ]


# -- the cupy module reads as NumPy ----------------------------------------------------

fake_cupy = types.ModuleType("cupy")  # stands for CuPy itself: it has none of these names


@rawkernel()
def cupy_spellings(x, y):
    i = jit.threadIdx.x
    y[i] = cupy.float32(x[i]) * cupy.float32(1.5) + cupy.int32(2) + cupy.sqrt(cupy.float32(4))


@rawkernel()
def real_cupy_name(x, y):
    i = jit.threadIdx.x
    y[i] = fake_cupy.float32(x[i]) + fake_cupy.float64(0.25)


def test_cupy_module_reads_as_numpy():
    assert "y[i] = (((x[i] * 1.5f) + ((float)(2))) + sqrtf(4.0f));" in lines(
        cupy_spellings, F32, F32
    )
    text = lines(real_cupy_name, I32, np.zeros(8))
    assert "y[i] = (((double)(((float)(x[i])))) + 0.25);" in text


def test_cupy_module_runs(launch, rng):
    h = rng.standard_normal(32).astype(np.float32)
    y = launch.poisoned(32, np.float32, fill=-7)
    launch(cupy_spellings)[1, 32](launch.to_device(h), y)
    if launch.simulated:
        # float32 arithmetic, each operation rounded (the simulator does not contract to FMA)
        expected = h * np.float32(1.5) + np.float32(2) + np.float32(2)
        np.testing.assert_array_equal(launch.get(y), expected)
    else:
        # the GPU may fuse the multiply-add (one rounding less): float32-level agreement
        expected = h.astype(np.float64) * 1.5 + 4
        np.testing.assert_allclose(launch.get(y), expected, rtol=2e-7, atol=1e-6)


# -- numpy.dtype(t).type(v) ---------------------------------------------------------------


@rawkernel()
def dtype_type(x, y, z):
    i = jit.threadIdx.x
    y[i] = numpy.dtype(numpy.int32).type(x[i])
    z[i] = numpy.dtype(x.dtype).type(x[i]) + numpy.dtype("float64").type(0.5)


def test_numpy_dtype_type_casts():
    text = lines(dtype_type, F32, I32, np.zeros(8))
    assert "y[i] = ((int)(x[i]));" in text
    assert "z[i] = (((double)(x[i])) + 0.5);" in text


def test_numpy_dtype_needs_a_constant():
    @rawkernel()
    def k(x):
        x[0] = numpy.dtype(x[1]).type(1)

    with pytest.raises(JitTypeError, match="numpy.dtype\\(\\) takes a compile-time type") as info:
        k.emit(F32)
    assert "numpy.dtype(x[1])" in str(info.value)


def test_numpy_dtype_type_runs(launch, rng):
    h = (rng.standard_normal(32) * 10).astype(np.float32)
    y, z = launch.poisoned(32, np.int32, fill=-7), launch.poisoned(32, np.float64)
    launch(dtype_type)[1, 32](launch.to_device(h), y, z)
    np.testing.assert_array_equal(launch.get(y), h.astype(np.int32))
    np.testing.assert_array_equal(launch.get(z), h.astype(np.float64) + 0.5)


# -- a captured None folds at compile time --------------------------------------------------

OFFSET = None


def make_scaler(scale):
    @rawkernel()
    def scaler(x, y):
        i = jit.threadIdx.x
        if scale is None:
            y[i] = x[i]
        else:
            y[i] = x[i] * scale
        if OFFSET is not None:
            y[i] += OFFSET

    return scaler


def test_captured_none_folds():
    plain = lines(make_scaler(None), F32, F32)
    body = plain[1:]  # after the signature
    assert "y[i] = x[i];" in body and not any("*" in ln or "if" in ln for ln in body)
    scaled = lines(make_scaler(3.0), F32, F32)
    assert "y[i] = (x[i] * 3.0f);" in scaled and "y[i] = x[i];" not in scaled


def test_is_on_a_runtime_value_compares_with_none_only():
    @rawkernel()
    def k(x, y):
        if x[0] is None:
            y[0] = 1
        if x[0] is not y[0]:
            y[1] = 2

    with pytest.raises(JitSyntaxError, match="'is not' compares compile-time values") as info:
        k.emit(F32, F32)
    assert "x[0] is not y[0]" in str(info.value)


def test_captured_none_runs(launch, rng):
    h = rng.standard_normal(32).astype(np.float32)
    for scale, expected in ((None, h), (2.0, h * np.float32(2))):
        y = launch.poisoned(32, np.float32)
        launch(make_scaler(scale))[1, 32](launch.to_device(h), y)
        np.testing.assert_array_equal(launch.get(y), expected)


# -- a device function made by a Python factory ----------------------------------------------


def make_adder(n):
    @rawkernel(device=True)
    def adder(a, b):
        return a + b + n

    return adder


@rawkernel()
def factory_kernel(x, y, out):
    i = jit.threadIdx.x
    out[i] = make_adder(10)(x[i], y[i]) - make_adder(1)(x[i], y[i])


def test_factory_closures_are_separate_device_functions():
    text = "\n".join(lines(factory_kernel, F32, F32, F32))
    assert "return ((a + b) + 10.0f);" in text and "return ((a + b) + 1.0f);" in text
    assert "out[i] = (jk_fn_adder(x[i], y[i]) - jk_fn_adder_2(x[i], y[i]));" in text


BIAS = 1.0


def make_biased():
    @rawkernel(device=True)
    def biased(a):
        return a + BIAS

    return biased


def test_factory_fingerprint_follows_the_globals_its_closures_read(monkeypatch):
    from jitkern.compiler import frontend

    before = frontend.capture(make_biased).fingerprint
    assert frontend.capture(make_biased).kind == "factory"
    monkeypatch.setitem(globals(), "BIAS", 2.0)
    after = frontend.capture(make_biased).fingerprint
    assert before != after and "BIAS=const:float:2.0" in after


def test_factory_must_return_a_device_function():
    def not_a_factory(v):
        return [v]

    @rawkernel()
    def k(x):
        x[0] = not_a_factory(1)(x)

    with pytest.raises(JitTypeError, match="cannot be called from a kernel") as info:
        k.emit(F32)
    assert "not_a_factory(1)" in str(info.value)


def test_factory_runs(launch, rng):
    a, b = rng.standard_normal(32).astype(np.float32), rng.standard_normal(32).astype(np.float32)
    out = launch.poisoned(32, np.float32)
    launch(factory_kernel)[1, 32](launch.to_device(a), launch.to_device(b), out)
    f = np.float32
    if launch.simulated:  # float32 operations, each rounded as NumPy's
        np.testing.assert_array_equal(launch.get(out), (a + b + f(10)) - (a + b + f(1)))
    else:
        np.testing.assert_allclose(launch.get(out), (a + b + 10) - (a + b + 1), rtol=1e-6)


# -- cooperative-group members -----------------------------------------------------------------


@rawkernel()
def group_members(out):
    g = jit.cg.this_grid()
    b = jit.cg.this_thread_block()
    t = g.thread_rank()
    out[t, 0] = g.group_dim().x
    out[t, 1] = g.dim_blocks().y
    out[t, 2] = g.block_index().x
    out[t, 3] = g.block_rank()
    out[t, 4] = g.num_threads()
    out[t, 5] = g.num_blocks()
    out[t, 6] = g.is_valid()
    out[t, 7] = b.thread_rank()
    out[t, 8] = b.group_index().x
    out[t, 9] = b.thread_index().x
    out[t, 10] = b.dim_threads().x
    out[t, 11] = b.group_dim().x
    out[t, 12] = b.num_threads()
    out[t, 13] = g.size() + b.size()


M = np.zeros((4, 14), np.int64)


def test_group_members_emit_and_compile():
    text = "\n".join(lines(group_members, M))
    for member in (
        "dim_blocks().x",
        "dim_blocks().y",
        "block_index().x",
        "block_rank()",
        "num_blocks()",
        "is_valid()",
        "group_index().x",
        "thread_index().x",
        "dim_threads().x",
        "group_dim().x",
    ):
        assert member in text
    assert group_members.inspect(M, arch="sm_90").cubin


def test_group_members_run(launch):
    grid, block = 3, 64
    out = launch.full((grid * block, 14), -1, np.int64)
    launch(group_members)[grid, block](out)
    t = np.arange(grid * block)
    expected = np.stack(
        [
            np.full_like(t, grid),
            np.ones_like(t),
            t // block,
            t // block,
            np.full_like(t, grid * block),
            np.full_like(t, grid),
            np.zeros_like(t),
            t % block,
            t // block,
            t % block,
            np.full_like(t, block),
            np.full_like(t, block),
            np.full_like(t, block),
            np.full_like(t, grid * block + block),
        ],
        axis=1,
    )
    got = launch.get(out)
    if not launch.simulated:
        # is_valid() of a plain (not cooperative) launch is not defined by CUDA: on the
        # H100 it read 0 when this test ran before the suite's cooperative launches and 1
        # when it ran after them. Only its agreement across threads is checked; the
        # simulator says 0.
        assert set(got[:, 6].tolist()) in ({0}, {1})
        got[:, 6] = 0
    np.testing.assert_array_equal(got, expected)


# -- cub.Max()/Min() order complex values as NumPy does (real part, then imaginary) ----------


@rawkernel()
def complex_extremes(x, out):
    WR = jit.cub.WarpReduce[numpy.complex128]
    BR = jit.cub.BlockReduce[numpy.complex128, 32]
    wtemp = jit.shared_memory(WR.TempStorage, 1)
    btemp = jit.shared_memory(BR.TempStorage, 1)
    v = x[jit.threadIdx.x]
    a = WR(wtemp[0]).Max(v)
    b = BR(btemp[0]).Min(v)
    c = WR(wtemp[0]).Reduce(v, jit.cub.Max())
    d = WR(wtemp[0]).Reduce(v, jit.cub.Min())
    if jit.threadIdx.x == 0:
        out[0] = a
        out[1] = b
        out[2] = c
        out[3] = d


def test_cub_max_min_of_complex_values_use_numpys_order(launch, rng):
    # few distinct real parts: ties are decided by the imaginary part
    x = rng.integers(-3, 4, 32) + 1j * rng.uniform(-1, 1, 32)
    out = launch.poisoned(4, np.complex128)
    launch(complex_extremes)[1, 32](launch.to_device(x), out)
    launch.synchronize()
    high, low = np.max(x), np.min(x)  # NumPy: lexicographic
    np.testing.assert_array_equal(launch.get(out), [high, low, high, low])


def test_cub_max_min_of_complex_values_compile():
    source = complex_extremes.inspect(np.zeros(32, np.complex128), np.zeros(4, np.complex128),
                                      arch="sm_90").source
    assert "a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag())" in source
    assert "b.real() < a.real() || (b.real() == a.real() && b.imag() < a.imag())" in source


@rawkernel()
def complex_sum(x, out):
    WR = jit.cub.WarpReduce[numpy.complex64]
    temp = jit.shared_memory(WR.TempStorage, 1)
    s = WR(temp[0]).Sum(x[jit.threadIdx.x])
    if jit.threadIdx.x == 0:
        out[0] = s


def test_cub_complex_sum_still_works(launch, rng):
    h = (rng.standard_normal(32) + 1j * rng.standard_normal(32)).astype(np.complex64)
    out = launch.poisoned(1, np.complex64)
    launch(complex_sum)[1, 32](launch.to_device(h), out)
    np.testing.assert_allclose(launch.get(out)[0], h.astype(np.complex128).sum(), rtol=1e-5)


# -- x[g(x)] += v evaluates the target once ------------------------------------------------------


@rawkernel(device=True)
def counted_index(calls, i):
    jit.atomic_add(calls, 0, 1)
    return i


@rawkernel()
def augmented(x, m, calls, smem_out):
    i = jit.threadIdx.x
    x[counted_index(calls, i)] += 1
    m[counted_index(calls, i) // 4, i % 4] *= 2
    s = jit.shared_memory(numpy.int32, 4)
    if i < 4:
        s[i] = 0
    jit.syncthreads()
    jit.atomic_add(s, counted_index(calls, 0), 0)
    s[counted_index(calls, i) % 1] -= 0
    jit.syncthreads()
    if i < 4:
        smem_out[i] = s[i]


AUG_ARGS = (np.zeros(32, np.int32), np.zeros((8, 4), np.float64), np.zeros(1, np.int32), I32)


def test_augmented_assignment_binds_the_target_once():
    text = lines(augmented, *AUG_ARGS)
    assert "auto& jk_ref1 = x[jk_fn_counted_index(calls, i)];" in text
    assert "jk_ref1 = (jk_ref1 + 1);" in text
    assert sum("jk_fn_counted_index(calls, i)" in ln for ln in text) == 3  # once per statement
    ref = [ln for ln in text if ln.startswith("auto& jk_ref2")]
    assert ref and "m.ptr" in ref[0]
    assert "jk_ref2 = (jk_ref2 * 2.0);" in text


def test_augmented_assignment_calls_the_index_function_once(launch):
    x = launch.zeros(32, np.int32)
    m = launch.to_device(np.ones((8, 4)))
    calls = launch.zeros(1, np.int32)
    smem_out = launch.poisoned(4, np.int32, fill=-7)
    launch(augmented)[1, 32](x, m, calls, smem_out)
    # three augmented assignments and one atomic per thread: four calls each, not seven
    assert launch.get(calls)[0] == 4 * 32
    np.testing.assert_array_equal(launch.get(x), np.ones(32))  # each thread its own element
    np.testing.assert_array_equal(launch.get(m), np.full((8, 4), 2.0))
    np.testing.assert_array_equal(launch.get(smem_out), [0, 0, 0, 0])


# -- float16 / bfloat16: computed in float32, rounded where stored ---------------------------


@rawkernel()
def fma_half(a, b, c, y):
    i = jit.grid(1)
    y[i] = a[i] * b[i] + c[i]


@rawkernel()
def half_local(a, b, c, y):
    i = jit.grid(1)
    t = a[i] * b[i]  # a float16 local: rounded here
    y[i] = t + c[i]


def test_half_expression_rounds_once_where_stored():
    assert (
        "y[i] = __float2half_rn(((__half2float(a[i]) * __half2float(b[i])) + __half2float(c[i])));"
        in lines(fma_half, F16, F16, F16, F16)
    )
    text = lines(half_local, F16, F16, F16, F16)
    assert "t = __float2half_rn((__half2float(a[i]) * __half2float(b[i])));" in text
    assert "y[i] = __float2half_rn((__half2float(t) + __half2float(c[i])));" in text
    assert fma_half.inspect(F16, F16, F16, F16, arch="sm_90").cubin


def test_half_square_and_math_stay_in_float():
    @rawkernel()
    def k(a, b, y):
        i = jit.threadIdx.x
        y[i] = (a[i] * b[i]) ** 2 + numpy.sin(a[i] - b[i])

    assert (
        "y[i] = __float2half_rn((jk::pow2((__half2float(a[i]) * __half2float(b[i]))) + "
        "sinf((__half2float(a[i]) - __half2float(b[i])))));" in lines(k, F16, F16, F16)
    )


def test_bfloat16_follows_the_same_rule():
    from jitkern.compiler import types as T

    bf = T.array(T.bfloat16, 1, True, True)
    source = fma_half.emit(bf, bf, bf, bf)
    assert (
        "y[i] = __float2bfloat16_rn(((__bfloat162float(a[i]) * __bfloat162float(b[i])) + "
        "__bfloat162float(c[i])));" in source
    )
    assert compile_source(source, arch="sm_90").data[:4] == b"\x7fELF"


@rawkernel()
def half_warp_sum(x, out):
    WR = jit.cub.WarpReduce[numpy.float16]
    temp = jit.shared_memory(WR.TempStorage, 1)
    s = WR(temp[0]).Sum(x[jit.threadIdx.x])
    if jit.threadIdx.x == 0:
        out[0] = s


def test_cub_half_reduction_accumulates_in_float():
    text = lines(half_warp_sum, np.zeros(32, np.float16), np.zeros(1, np.float16))
    assert "__shared__ cub::WarpReduce<float>::TempStorage jk_smem[1];" in text
    assert any(
        "__float2half_rn(cub::WarpReduce<float>(temp[0]).Sum(__half2float(x[threadIdx.x])))" in ln
        for ln in text
    )
    assert half_warp_sum.inspect(
        np.zeros(32, np.float16), np.zeros(1, np.float16), arch="sm_90"
    ).cubin


def test_half_arithmetic_matches_float32_then_round(launch, rng):
    n = 1024
    a, b, c = (rng.standard_normal(n).astype(np.float16) for _ in range(3))
    da, db, dc = (launch.to_device(v) for v in (a, b, c))
    y = launch.poisoned(n, np.float16)
    launch(fma_half)[n // 256, 256](da, db, dc, y)
    f32 = np.float32
    once = (a.astype(f32) * b.astype(f32) + c.astype(f32)).astype(np.float16)
    np.testing.assert_array_equal(launch.get(y).view(np.uint16), once.view(np.uint16))
    # NumPy's own float16 ufuncs round after each operation; the two differ somewhere here
    per_op = a * b + c
    assert (per_op.view(np.uint16) != once.view(np.uint16)).any()
    y2 = launch.poisoned(n, np.float16)
    launch(half_local)[n // 256, 256](da, db, dc, y2)  # the local t rounds
    np.testing.assert_array_equal(launch.get(y2).view(np.uint16), per_op.view(np.uint16))


def test_cub_half_sum_matches_numpy(launch, rng):
    x = (rng.random(32) * 100).astype(np.float16)
    out = launch.poisoned(1, np.float16)
    launch(half_warp_sum)[1, 32](launch.to_device(x), out)
    got = launch.get(out)
    # NumPy sums float16 in float32 and rounds once; the tree order differs only within float32
    assert abs(float(got[0]) - float(np.sum(x))) <= float(np.spacing(np.sum(x)))
    if launch.simulated:  # the warp's tree order, in float32, rounded once: to the bit
        tree = x.astype(np.float32)
        for offset in (16, 8, 4, 2, 1):
            tree[:offset] = tree[:offset] + tree[offset : 2 * offset]
        assert got.view(np.uint16)[0] == tree[:1].astype(np.float16).view(np.uint16)[0]


@pytest.mark.gpu
def test_bfloat16_on_gpu(rng):
    torch = pytest.importorskip("torch")
    n = 256
    a, b, c = (torch.randn(n, dtype=torch.bfloat16, device="cuda") for _ in range(3))
    y = torch.full((n,), float("nan"), dtype=torch.bfloat16, device="cuda")
    fma_half[1, n](a, b, c, y)
    torch.cuda.synchronize()
    once = (a.float() * b.float() + c.float()).to(torch.bfloat16)
    assert torch.equal(y.view(torch.int16), once.view(torch.int16))


# -- 0-d arrays as arguments -----------------------------------------------------------------


@rawkernel()
def zero_d(s, x, y, out):
    i = jit.threadIdx.x
    y[i] = x[i] * s[()] + s.size + s.ndim
    if i == 0:
        out[()] += s[()]


S0 = np.zeros((), np.float32)


def test_zero_d_array_is_a_pointer_to_its_element():
    text = lines(zero_d, S0, F32, F32, np.zeros((), np.float64))
    assert text[0] == (
        'extern "C" __global__ void zero_d(float* s, float* x, float* y, double* out) {'
    )
    assert "y[i] = (((x[i] * (*s)) + ((float)((1LL)))) + 0.0f);" in text
    assert "auto& jk_ref1 = (*out);" in text
    assert zero_d.inspect(S0, F32, F32, np.zeros((), np.float64), arch="sm_90").cubin


def test_zero_d_array_takes_no_index():
    @rawkernel()
    def k(s):
        s[0] = 1

    with pytest.raises(JitTypeError, match="too many indices \\(1\\) for a 0-d array") as info:
        k.emit(S0)
    assert "x[()]" in str(info.value) and "s[0] = 1" in str(info.value)


def test_zero_d_arrays_run(launch, rng):
    h = rng.standard_normal(32).astype(np.float32)
    scale = np.float32(rng.standard_normal())
    arrays = [(launch.to_device(np.array(scale)), launch.to_device(np.array(0.5)))]
    cp = None
    if not launch.simulated:
        try:
            import cupy as cp
        except ImportError:
            pass
    if cp is not None:
        arrays.append((cp.asarray(np.array(scale)), cp.asarray(np.array(0.5))))
    for s, out in arrays:
        y = launch.poisoned(32, np.float32)
        launch(zero_d)[1, 32](s, launch.to_device(h), y, out)
        if launch.simulated:
            np.testing.assert_array_equal(launch.get(y), h * scale + np.float32(1))
        else:
            np.testing.assert_allclose(launch.get(y), h * scale + 1, rtol=1e-6, atol=1e-6)
        got = out.get() if hasattr(out, "get") else out
        assert float(got) == 0.5 + float(scale)
