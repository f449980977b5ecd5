"""What CuPy's library kernels (signal windows, ndimage filters, sparse, splines) rely on in
string kernels, written our way (issue 25): a ``raw`` parameter is CuPy's
``CArray<T, ndim, c_contiguous, use_32bit_indexing>`` (``decltype(x)::index_t``, helpers
templated on CArray), a non-raw array is also ``_raw_<name>`` (the whole array), ``return``
ends one element, a reduction's identity and ``map_expr`` see the parameters and CuPy's
``_i``/``_J``/``_j``, ``thrust::`` names every complex function, complex numbers order as
NumPy orders them, and a float16 element is CuPy's ``float16`` class.

CPU: each compiles for sm_90 (static_asserts check the C++ types). Values: against NumPy,
on the GPU and, where the simulator runs the kernel, in the simulator (twins).
"""

import numpy as np
import pytest

import jitkern

ARCH = "sm_90"

SAME = """template <class A, class B> struct jk_same { enum { v = 0 }; };
template <class A> struct jk_same<A, A> { enum { v = 1 }; };
"""


# ---------------------------------------------------------------------------
# raw parameters are CuPy's CArray


def _carray_kernel(expected: str):
    return jitkern.ElementwiseKernel(
        "raw T x", "T y",
        f"static_assert(jk_same<decltype(x), const {expected}>::v, \"{expected}\"); "
        "y = first(x) + x.shape()[0];",
        "carray_type",
        preamble=SAME + "template <typename T, int N, bool C, bool I>\n"
        "__device__ T first(const CArray<T, N, C, I>& a) { return a[0]; }\n")


@pytest.mark.parametrize("case,expected", [
    ("contiguous", "CArray<T, 2, true, true>"),
    ("transposed", "CArray<T, 2, false, true>"),
    ("huge", "CArray<T, 1, false, false>"),
])
def test_a_raw_parameter_is_cupys_carray(case, expected):
    base = np.zeros((4, 6), np.float32)
    x = {"contiguous": base, "transposed": base.T,
         "huge": np.lib.stride_tricks.as_strided(base, (3,), (1 << 31,))}[case]
    info = _carray_kernel(expected).inspect(x, np.zeros(5, np.float32), arch=ARCH)
    assert f"const {expected} x(_rp_x, _rd_x.shape, _rd_x.strides);" in info.source
    assert info.cubin[:4] == b"\x7fELF"


def test_carray_index_type_and_a_writable_raw_output():
    k = jitkern.ElementwiseKernel(
        "S k, raw T table, int64 n_", "raw T out",
        "using idx_t = decltype(table)::index_t; idx_t n = static_cast<idx_t>(n_);"
        "out[i] = table[i + n * static_cast<idx_t>(k)];", "choose_like")
    info = k.inspect(np.zeros(6, np.int32), np.zeros(18, np.float64), np.int64(6),
                     np.zeros(6, np.float64), arch=ARCH)
    assert "CArray<T, 1, true, true> out(_rp_out," in info.source  # not const: an output
    assert info.cubin[:4] == b"\x7fELF"


def test_writing_to_a_raw_input_is_refused_as_in_cupy():
    k = jitkern.ElementwiseKernel("raw T x", "T y", "x[i] = 1; y = 0;", "writes_input")
    with pytest.raises(jitkern.CompileError, match="x"):
        k.inspect(np.zeros(4, np.float32), np.zeros(4, np.float32), arch=ARCH)


def test_raw_carrays_keep_the_index_arithmetic_small():
    """CuPy's 32-bit indexing for a strided raw array: its flat index is unravelled in int,
    not long long (the SASS has no 64-bit division call), and nothing spills."""
    k = jitkern.ElementwiseKernel("raw T x, int32 j", "T y", "y = x[j]", "gather_view")
    base = np.zeros((64, 64), np.float32)
    info = k.inspect(base.T, np.zeros(1024, np.int32), np.zeros(1024, np.float32), arch=ARCH)
    assert "CArray<T, 2, false, true> x" in info.source
    assert info.local_bytes == 0 and info.spill_stores == 0
    assert b"__internal" not in info.cubin  # no software 64-bit division routine


@pytest.mark.gpu
@pytest.mark.parametrize("order", ["C", "F"])
def test_carray_helpers_and_index_arrays_compute_numpys_values(rng, order):
    """(GPU only: the simulator has no .shape() and no CArray templates.)"""
    k = jitkern.ElementwiseKernel(
        "raw T x", "T y",
        "ptrdiff_t r = i / x.shape()[1], c = i % x.shape()[1]; ptrdiff_t at[] = {r, c};"
        "y = x[at] * 10 + row_sum(x, r);",
        "helpers",
        preamble="template <typename T, int N, bool C, bool I>\n"
        "__device__ T row_sum(const CArray<T, N, C, I>& a, ptrdiff_t r) {\n"
        "  T s = 0; for (ptrdiff_t c = 0; c < a.shape()[1]; ++c) { ptrdiff_t at[] = {r, c};"
        " s += a[at]; } return s; }\n")
    x = rng.standard_normal((5, 7))
    dx = jitkern.asarray(x) if order == "C" else jitkern.asarray(np.ascontiguousarray(x.T)).T
    y = jitkern.full(35, np.nan, np.float64)
    k(dx, y)
    want = (x * 10 + x.sum(axis=1, keepdims=True)).reshape(-1)
    np.testing.assert_allclose(y.get(), want, rtol=1e-13, atol=1e-13)


# ---------------------------------------------------------------------------
# _raw_<name>: the whole array of a non-raw parameter


def test_raw_name_of_a_mapped_array_is_its_carray_over_the_loop_shape():
    k = jitkern.ElementwiseKernel(
        "raw T x, T z", "T y",
        "static_assert(jk_same<decltype(_raw_y), CArray<T, 2, true, true> >::v, \"y\");"
        "int rows = _raw_y.shape()[0], cols = _raw_y.shape()[1];"
        "y = x[i] + z + rows * 100 + cols + _raw_z[0];",
        "raw_names", reduce_dims=False, preamble=SAME)
    a = np.zeros((4, 5), np.float32)
    info = k.inspect(a, a, a, arch=ARCH)
    assert "one element per thread, as in CuPy, since it reads _raw_" in info.source
    assert "CArray<T, 2, true, true> _raw_y(const_cast<T*>(_p_y), _shape.v, _s_y.v);" in info.source
    assert "const CArray<T, 2, true, true> _raw_z(" in info.source


def test_raw_name_of_a_broadcast_input_has_stride_zero():
    k = jitkern.ElementwiseKernel("T x", "T y", "y = _raw_x.strides()[1] + x;", "raw_bcast",
                                  reduce_dims=False)
    info = k.inspect(np.zeros(5, np.float32), np.zeros((4, 5), np.float32), arch=ARCH)
    assert "CArray<T, 2, false, true> _raw_x(" in info.source


def test_raw_name_reads_the_neighbours(launch, rng):
    k = jitkern.ElementwiseKernel(
        "T x", "T y", "y = x + _raw_x[(i + 1) % _raw_x.size()] * 2;", "neighbours")
    x = rng.standard_normal(37)
    y = launch.poisoned(37, np.float64)
    launch(k)(launch.to_device(x), y)
    np.testing.assert_allclose(launch.get(y), x + np.roll(x, -1) * 2, rtol=1e-14)


@pytest.mark.gpu
def test_raw_name_shape_per_dimension_on_the_gpu(rng):
    """ndimage's idiom: the output's shape per dimension, with reduce_dims=False."""
    k = jitkern.ElementwiseKernel(
        "T x", "T y", "y = x + _raw_y.shape()[0] * 1000 + _raw_y.shape()[1] * 10"
        " + _raw_y.strides()[0];", "shape_idiom", reduce_dims=False)
    x = rng.standard_normal((6, 9))
    y = jitkern.full((6, 9), np.nan, np.float64)
    k(jitkern.asarray(x), y)
    np.testing.assert_allclose(y.get(), x + 6000 + 90 + 72, rtol=1e-14)


# ---------------------------------------------------------------------------
# return ends one element, as with CuPy's one thread per element


def test_an_operation_that_returns_runs_one_element_per_thread():
    k = jitkern.ElementwiseKernel("T x", "T y", "if (x > 0) return; y = -x;", "returns")
    source = k.inspect(np.zeros(4096, np.float32), np.zeros(4096, np.float32),
                       arch=ARCH).source
    assert "linear loop" in source and "since its operation returns" in source


def test_return_skips_only_its_own_element(launch, rng):
    k = jitkern.ElementwiseKernel("T x", "T y", "y = 1; if (x > 0) return; y = x * 2;",
                                  "return_one")
    x = rng.standard_normal(1000).astype(np.float32)
    y = launch.poisoned(1000, np.float32)
    launch(k)(launch.to_device(x), y)
    np.testing.assert_array_equal(launch.get(y), np.where(x > 0, 1, x * 2).astype(np.float32))


# ---------------------------------------------------------------------------
# reductions: the identity and map_expr see the parameters


def test_an_identity_naming_a_parameter(launch, rng):
    """CuPy's first_nonzero: the identity is the length, an input."""
    k = jitkern.ReductionKernel("T data, int64 len", "int64 y", "data == T(0) ? len : _j",
                                "min(a, b)", "y = a", "len", "first_nonzero_like")
    x = rng.standard_normal(3000)
    x[: rng.integers(0, 3000)] = 0
    got = launch.get(launch(k)(launch.to_device(x), np.int64(x.size)))
    nz = np.flatnonzero(x)
    assert int(got) == (nz[0] if nz.size else x.size)
    zeros = launch.to_device(np.zeros(700))
    assert int(launch.get(launch(k)(zeros, np.int64(700)))) == 700


def test_an_identity_naming_a_parameter_compiles_split_and_unsplit():
    k = jitkern.ReductionKernel("T x, T start", "T y", "x", "a + b", "y = a", "start * 2",
                                "param_identity")
    for shape, axis in (((1 << 22,), None), ((64, 33), 1), ((300, 40), 0)):
        info = k.inspect(np.zeros(shape, np.float32), np.float32(1), axis=axis, arch=ARCH)
        assert "_s.v = _type_reduce((start * 2));" in info.source
        assert "void init()" not in info.source
        assert info.cubin[:4] == b"\x7fELF"


POST_MAP_SCALED = ("T x, T scale, int64 n", "T y", "x", "a + b", "y = a * scale / n", "0",
                   "scaled_mean")


def test_post_map_naming_parameters_compiles_split_and_unsplit():
    """A split reduction's post_map_expr runs in its _final kernel, which gets the scalars."""
    k = jitkern.ReductionKernel(*POST_MAP_SCALED)
    info = k.inspect(np.zeros(1 << 22, np.float32), np.float32(2), np.int64(3), arch=ARCH)
    assert "T* _p_y, T scale, long long n, int _out_size, int _splits" in info.source
    assert info.cubin[:4] == b"\x7fELF"


@pytest.mark.parametrize("shape,axis", [((1 << 22,), None), ((64, 20000), 1), ((20000, 64), 0)])
def test_post_map_naming_parameters(launch, rng, shape, axis):
    shape = launch.pick(shape, tuple(min(d, 300) for d in shape))
    x = rng.standard_normal(shape)
    got = launch.get(launch(jitkern.ReductionKernel(*POST_MAP_SCALED))(
        launch.to_device(x), 2.5, np.int64(7), axis=axis))
    np.testing.assert_allclose(got, x.sum(axis=axis) * 2.5 / 7, rtol=1e-9, atol=1e-9)


# ---------------------------------------------------------------------------
# complex numbers: thrust:: names, NumPy's order


THRUST = """
thrust::complex<double> z(x, w);
y = thrust::polar(thrust::abs(z), thrust::arg(z)) + thrust::conj(z) * thrust::exp(z * 0.0)
    + thrust::sqrt(thrust::norm(z)) + thrust::pow(z, 2.0) - thrust::log(thrust::exp(z))
    + thrust::proj(z) * 0.0 + thrust::sin(z) - thrust::sin(z);
"""


def test_thrust_names_every_complex_function():
    k = jitkern.ElementwiseKernel("float64 x, float64 w", "complex128 y", THRUST, "thrust_fns")
    d = np.zeros(4)
    assert k.inspect(d, d, np.zeros(4, np.complex128), arch=ARCH).cubin[:4] == b"\x7fELF"


@pytest.mark.gpu
def test_thrust_names_compute_numpys_values(rng):
    k = jitkern.ElementwiseKernel("float64 x, float64 w", "complex128 y", THRUST, "thrust_fns")
    x, w = rng.uniform(0.2, 2, 500), rng.uniform(-1, 1, 500)
    z = x + 1j * w
    y = k(jitkern.asarray(x), jitkern.asarray(w)).get()
    want = z + np.conj(z) + np.abs(z) + z**2 - z
    np.testing.assert_allclose(y, want, rtol=1e-12, atol=1e-12)


ORDER = """
y = (a < b) | (a <= b) << 1 | (a > b) << 2 | (a >= b) << 3
    | (a < s) << 4 | (s < a) << 5 | (a >= s) << 6 | (s >= a) << 7;
"""


def test_complex_numbers_compare_in_numpys_order_compiles():
    k = jitkern.ElementwiseKernel("T a, T b, float64 s", "int32 y", ORDER, "cx_order")
    for dt in (np.complex64, np.complex128):
        c = np.zeros(4, dt)
        info = k.inspect(c, c, np.zeros(4), np.zeros(4, np.int32), arch=ARCH)
        assert info.cubin[:4] == b"\x7fELF"


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_numbers_compare_in_numpys_order(rng, dtype):
    k = jitkern.ElementwiseKernel("T a, T b, float64 s", "int32 y", ORDER, "cx_order")
    n = 4000
    parts = rng.integers(-2, 3, (4, n)).astype(np.float64)  # ties in either part
    parts[0, ::97] = np.nan
    a = (parts[0] + 1j * parts[1]).astype(dtype)
    b = (parts[2] + 1j * parts[3]).astype(dtype)
    s = rng.integers(-2, 3, n).astype(np.float64)
    got = k(jitkern.asarray(a), jitkern.asarray(b), jitkern.asarray(s)).get()
    sc = s.astype(dtype)
    with np.errstate(invalid="ignore"):
        bits = [a < b, a <= b, a > b, a >= b, a < sc, sc < a, a >= sc, sc >= a]
    want = sum(v.astype(np.int32) << k for k, v in enumerate(bits))
    np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------------------
# float16 elements are CuPy's float16 class


HALF_MEMBERS = """
static_assert(jk_same<T, float16>::v, "T is CuPy's float16");
y = (x.isnan() ? 1 : 0) | (x.isinf() ? 2 : 0) | (x.isfinite() ? 4 : 0) | (x.signbit() ? 8 : 0)
    | (x.iszero() ? 16 : 0) | (T::from_bits(x.to_bits()) == x ? 32 : 0)
    | (isnan(x) ? 64 : 0);
"""


def test_float16_elements_have_cupys_members():
    k = jitkern.ElementwiseKernel("T x", "int32 y", HALF_MEMBERS, "half_members", preamble=SAME)
    info = k.inspect(np.zeros(8, np.float16), np.zeros(8, np.int32), arch=ARCH)
    assert "typedef float16 T;" in info.source
    assert info.cubin[:4] == b"\x7fELF"
    r = jitkern.ReductionKernel("T x", "T y", "x.isnan() ? T(0) : x", "a + b", "y = a", "0",
                                "half_sum")
    assert r.reduce_type == "T" and r.out_params[0].ctype == "T"
    assert jitkern.ReductionKernel("float16 x", "float16 y", "x", "a + b", "y = a", "0",
                                   "h").reduce_type == "float16"
    assert r.inspect(np.zeros(4096, np.float16), arch=ARCH).cubin[:4] == b"\x7fELF"


@pytest.mark.gpu
def test_float16_members_compute_numpys_values():
    k = jitkern.ElementwiseKernel("T x", "int32 y", HALF_MEMBERS, "half_members", preamble=SAME)
    x = np.array([0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan, 6e-8, 65504], np.float16)
    got = k(jitkern.asarray(x)).get()
    want = (np.isnan(x) * 1 | np.isinf(x) * 2 | np.isfinite(x) * 4 | np.signbit(x) * 8
            | (x == 0) * 16 | (~np.isnan(x)) * 32 | np.isnan(x) * 64)
    np.testing.assert_array_equal(got, want)


def test_float16_arithmetic_is_cupys(launch, rng):
    """x * y of two float16 elements is a float (CuPy's class), rounded once where stored."""
    k = jitkern.ElementwiseKernel("T x, T y", "float32 p, T q", "p = x * y; q = x * y + x;",
                                  "half_arith")
    x = (rng.standard_normal(300) * 30).astype(np.float16)
    y = (rng.standard_normal(300) * 30).astype(np.float16)
    p, q = launch.poisoned(300, np.float32), launch.poisoned(300, np.float16)
    launch(k)(launch.to_device(x), launch.to_device(y), p, q)
    x32, y32 = x.astype(np.float32), y.astype(np.float32)
    np.testing.assert_array_equal(launch.get(p), x32 * y32)
    np.testing.assert_array_equal(launch.get(q), (x32 * y32 + x32).astype(np.float16))


# ---------------------------------------------------------------------------
# CuPy's signal kernels: C++11 brace-initialised constants, shapes per dimension


def test_brace_initialised_loop_prep_constants(launch):
    """The window kernels' idiom: no array at all, constants braced in loop_prep."""
    k = jitkern.ElementwiseKernel(
        "float64 alpha", "float64 w",
        "const double x { i * delta - 1.0 }; w = alpha * x * x + (odd ? 1.0 : 0.0);",
        "braced_window",
        loop_prep="const double delta { 2.0 / ( _ind.size() - 1 ) }; "
                  "const bool odd { (_ind.size() & 1) != 0 };")
    for m in (7, 10):
        got = launch.get(launch(k)(np.float64(0.5), size=m))
        x = np.linspace(-1, 1, m)
        np.testing.assert_allclose(got, 0.5 * x * x + (m % 2), rtol=1e-14, atol=1e-15)


def test_raw_shape_and_strides_per_dimension(launch, rng):
    k = jitkern.ElementwiseKernel(
        "raw T x", "T y",
        "const ptrdiff_t cols = x.shape()[1], row_step = x.strides()[0] / sizeof(T);"
        "ptrdiff_t r = i % x.shape()[0], c = i / x.shape()[0];"
        "y = x[r * row_step + c] + x.shape()[0] * 100 + cols;",
        "shape_strides")
    x = rng.standard_normal((4, 6))
    y = launch.poisoned(24, np.float64)
    launch(k)(launch.to_device(x), y)
    np.testing.assert_allclose(launch.get(y), x.T.reshape(-1) + 406, rtol=1e-14)


def test_a_parameter_named_like_a_raw_arrays_helpers(launch, rng):
    """The simulator's names for a raw array's size and shape never meet a parameter's."""
    k = jitkern.ElementwiseKernel("raw T a, int32 a_size, int32 a_shape", "T y",
                                  "y = a[i % a_size] * a_shape + a.size();", "packbits_like")
    a = rng.standard_normal(5)
    y = launch.poisoned(12, np.float64)
    launch(k)(launch.to_device(a), np.int32(3), np.int32(2), y)
    np.testing.assert_allclose(launch.get(y), a[np.arange(12) % 3] * 2 + 5, rtol=1e-14)


# ---------------------------------------------------------------------------
# An ndimage-style filter: everything above at once, as CuPy's generated filters combine it


FILTER_PREAMBLE = r"""
#include <cupy/cuda_workaround.h>
template <class B, class A>
__device__ __forceinline__ typename std::enable_if<
    !std::is_floating_point<A>::value || std::is_signed<B>::value, B>::type
cast(A a) { return (B)a; }
template <class B, class A>
__device__ __forceinline__ typename std::enable_if<
    std::is_floating_point<A>::value && !std::is_signed<B>::value, B>::type
cast(A a) { return (a >= 0) ? (B)a : -(B)(-a); }
__device__ __forceinline__ int mirror_index(int k, int n) {  // scipy's 'reflect'
  if (n == 1) return 0;
  const int period = 2 * n;
  k %= period;
  if (k < 0) k += period;
  return k < n ? k : period - 1 - k;
}
"""

FILTER_OPERATION = r"""
const int rows = _raw_y.shape()[0], cols = _raw_y.shape()[1];
const int r = _ind.get()[0], c = _ind.get()[1];
if (r >= rows || c >= cols) return;
const unsigned char* data = (const unsigned char*)&x[0];
W sum = (W)0;
int k = 0;
for (int dr = 0; dr < w.shape()[0]; ++dr) {
  const int rr = mirror_index(r + dr - (int)w.shape()[0] / 2, (int)x.shape()[0]);
  for (int dc = 0; dc < w.shape()[1]; ++dc, ++k) {
    const int cc = mirror_index(c + dc - (int)w.shape()[1] / 2, (int)x.shape()[1]);
    sum += cast<W>(*(const X*)&data[rr * x.strides()[0] + cc * x.strides()[1]]) * w[k];
  }
}
y = cast<Y>(sum);
"""


def _correlate_kernel():
    return jitkern.ElementwiseKernel("raw X x, raw W w", "Y y", FILTER_OPERATION,
                                     "correlate_reflect_2d", reduce_dims=False,
                                     preamble=FILTER_PREAMBLE)


def _numpy_correlate(x, w):
    pr, pc = w.shape[0] // 2, w.shape[1] // 2
    padded = np.pad(x.astype(np.float64), ((pr, w.shape[0] - 1 - pr), (pc, w.shape[1] - 1 - pc)),
                    mode="symmetric")
    out = np.zeros(x.shape)
    for dr in range(w.shape[0]):
        for dc in range(w.shape[1]):
            out += w[dr, dc] * padded[dr:dr + x.shape[0], dc:dc + x.shape[1]]
    return out


def test_an_ndimage_style_filter_compiles_for_every_layout():
    k = _correlate_kernel()
    x = np.zeros((40, 30), np.float32)
    for view in (x, x.T, x[::2, ::3]):
        info = k.inspect(view, np.zeros((3, 5)), np.zeros(view.shape, np.float64), arch=ARCH)
        assert "one element per thread, as in CuPy" in info.source
        assert info.cubin[:4] == b"\x7fELF" and info.spill_stores == 0


@pytest.mark.gpu
@pytest.mark.parametrize("layout", ["c", "transposed", "strided"])
def test_an_ndimage_style_filter_computes_numpys_correlation(rng, layout):
    base = rng.standard_normal((41, 33)).astype(np.float32)
    host = {"c": base, "transposed": base.T, "strided": base[::2, ::3]}[layout]
    device = jitkern.asarray(base)
    x = {"c": device, "transposed": device.T, "strided": device[::2, ::3]}[layout]
    w = rng.standard_normal((3, 5))
    y = jitkern.full(host.shape, np.nan, np.float64)
    _correlate_kernel()(x, jitkern.asarray(w), y)
    np.testing.assert_allclose(y.get(), _numpy_correlate(host, w), rtol=1e-5, atol=1e-5)
