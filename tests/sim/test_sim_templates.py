"""C++ function templates, complex.cuh's functions, ``_ind.get()`` and ``block_size=`` in
the simulator's C subset (jitkern/sim/ctemplates.py, ccomplex.py), checked against NumPy;
what stays outside the subset is refused naming the construct and its line."""

import numpy as np
import pytest

import jitkern

pytest.importorskip("pycparser")

TEMPLATES = r"""
template <typename T> __device__ T twice(T x) { return x * 2; }
template <typename T, int N = 3>
__device__ T add_n(const T& x) { return x + N; }
template <class T> __device__ void store(T* out, int k, T v) { out[k] = v; }
template <typename T>
__device__ T mag2(complex<T> z) { return z.real() * z.real() + z.imag() * z.imag(); }

extern "C" __global__ void k(const float* a, const double* b, const int* c,
                             const complex<double>* z, float* fa, double* fb, int* fc,
                             double* fz, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    store(fa, t, twice(a[t]));            // deduced: float
    fb[t] = twice<double>(b[t]) + add_n<double, 5>(b[t]) + ::add_n<double>(b[t]);
    store<int>(fc, t, jitkern::twice(c[t]) + add_n(c[t]));   // int, N = 3
    fz[t] = mag2(z[t]);                   // T deduced from complex<T>
}
"""


def test_function_templates_deduced_explicit_and_defaulted(rng):
    n = 77
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n)
    c = rng.integers(-1000, 1000, n).astype(np.int32)
    z = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    fa, fb = np.full(n, np.nan, np.float32), np.full(n, np.nan)
    fc, fz = np.full(n, -7, np.int32), np.full(n, np.nan)
    k = jitkern.RawKernel("#include <jitkern/complex.cuh>\n" + TEMPLATES, "k")
    k.simulate((2,), (64,), (a, b, c, z, fa, fb, fc, fz, np.int32(n)))
    np.testing.assert_array_equal(fa, a * np.float32(2))
    np.testing.assert_allclose(fb, 2 * b + (b + 5) + (b + 3), rtol=1e-15)
    np.testing.assert_array_equal(fc, 2 * c + c + 3)
    np.testing.assert_allclose(fz, z.real**2 + z.imag**2, rtol=1e-15)
    # one device function per distinct instantiation, named apart
    source = k.simulate.source
    assert source.count("def _c_fn_twice__jk") == 3  # float, double, int
    assert source.count("def _c_fn_add_n__jk") == 3  # <double, 5>, <double, 3>, <int, 3>


def test_a_template_in_an_elementwise_preamble_follows_the_placeholder(rng):
    k = jitkern.ElementwiseKernel(
        "T x", "T y", "y = cube(x) - sq<T>(x)", "poly",
        preamble="template <typename U> __device__ U sq(U v) { return v * v; }\n"
                 "template <typename U> __device__ U cube(U v) { return sq(v) * v; }")
    for dtype in (np.float64, np.int32):
        x = (rng.standard_normal(50) * 20).astype(dtype)
        y = k.simulate(x)
        assert y.dtype == dtype
        np.testing.assert_array_equal(y, x * x * x - x * x)


@pytest.mark.parametrize("code, construct, line", [
    ("template <typename T> __device__ void inc(T& v) { v += 1; }\n"
     'extern "C" __global__ void f(float* x) { float v = x[0]; inc(v); x[0] = v; }',
     "the reference parameter 'T& v' of inc", 1),
    ("template <typename T> struct Box { T v; };\n"
     'extern "C" __global__ void f(float* x) { x[0] = 1; }', "a template", 1),
    ("template <typename T> __device__ T zero() { return 0; }\n"
     'extern "C" __global__ void f(float* x) {\n  x[0] = zero();\n}',
     "does not decide its template parameter T", 3),
    ("template <typename T> __device__ T add(T a, T b) { return a + b; }\n"
     'extern "C" __global__ void f(float* x) {\n\n  x[0] = add(x[0], 1.0);\n}',
     "deduced as both float and double", 4),
    ("template <template <typename> class C> __device__ int g() { return 0; }\n"
     'extern "C" __global__ void f(float* x) { x[0] = 1; }', "the template parameter", 1),
])
def test_templates_outside_the_subset_are_refused(code, construct, line):
    k = jitkern.RawKernel(code, "f")
    x = np.zeros(4, np.float32)
    with pytest.raises(jitkern.CompileError) as info:
        k.simulate[1, 1](x)
    message = str(info.value)
    assert construct in message
    assert f"line {line}, column " in message
    assert "outside the C subset" in message
    assert (x == 0).all()


def test_an_error_inside_an_instantiation_names_the_template_line():
    code = ("template <typename T>\n__device__ T f(T x) {\n  return x + undefined_name;\n}\n"
            'extern "C" __global__ void k(float* x) { x[0] = f(x[0]); }')
    k = jitkern.RawKernel(code, "k")
    with pytest.raises(jitkern.CompileError) as info:
        k.simulate[1, 1](np.zeros(1, np.float32))
    assert "RawKernel 'k' line 3, column 14:" in str(info.value)
    assert "undefined_name" in str(info.value)


def test_immediately_invoked_lambdas_run_where_they_are_called(rng):
    k = jitkern.RawKernel(r"""
extern "C" __global__ void f(const int* x, int* y, int* z, int n) {
    int t = threadIdx.x;
    if (t >= n) return;
    int acc = 0;
    for (int k = 0; k < [&] { return x[t] % 4 + 1; }(); k++) {
        acc += [=]() {
            int sq = k * k;
            return sq + 1;
        }();
    }
    y[t] = acc;
    int w = [&] { acc = -acc; return 2 * acc; }();  // the capture is by reference
    z[t] = w + acc;
}""", "f")
    n = 40
    x = rng.integers(-100, 100, n).astype(np.int32)
    y, z = np.full(n, -7, np.int32), np.full(n, -7, np.int32)
    k.simulate((1,), (64,), (x, y, z, np.int32(n)))
    counts = np.fmod(x, 4) + 1  # C's remainder: the sign of x
    want = np.array([sum(j * j + 1 for j in range(c)) for c in counts], np.int32)
    np.testing.assert_array_equal(y, want)
    np.testing.assert_array_equal(z, -3 * want)


@pytest.mark.parametrize("body, construct", [
    ("x[0] = [&](int k) { return k; }(1);", "a lambda"),
    ("x[0] = [&] { if (x[1] > 0) return 1.0f; return 2.0f; }();", "its only return"),
    ("x[0] = x[1] > 0 && [&] { x[2] = 1; return true; }();", "a side effect"),
])
def test_lambdas_outside_the_subset_are_refused(body, construct):
    k = jitkern.RawKernel(f'extern "C" __global__ void f(float* x) {{\n  {body}\n}}', "f")
    x = np.zeros(4, np.float32)
    with pytest.raises(jitkern.CompileError) as info:
        k.simulate[1, 1](x)
    assert construct in str(info.value)
    assert "line 2, column " in str(info.value)
    assert (x == 0).all()


def test_elementwise_simulate_takes_block_size(rng):
    k = jitkern.ElementwiseKernel("T x", "T y, int32 b", "y = x * 2; b = blockDim.x", "bs")
    x = rng.standard_normal(300)
    for block in (32, 96, 1024):
        y, b = k.simulate(x, block_size=block)
        np.testing.assert_array_equal(y, x * 2)
        np.testing.assert_array_equal(b, min(block, x.size))  # CuPy's block: at most n threads
    with pytest.raises(jitkern.JitkernValueError, match="block_size: expected an int from 1 to "
                                                        "1024, got 2000"):
        k.simulate(x, block_size=2000)


def test_complex_functions_of_complex_cuh(rng):
    k = jitkern.ElementwiseKernel(
        "complex128 z, float64 s", "complex128 a, complex128 p, complex128 q, bool nan",
        "a = asin(z) + atanh(z); p = pow(z, s) + polar(s, z.real()); "
        "q = pow(s, z) + complex<double>(z.x, -z.y); nan = isnan(z)", "cx")
    z = rng.standard_normal(40) + 1j * rng.standard_normal(40)
    z[3] = complex(np.nan, 1)
    s = rng.uniform(0.5, 3, 40)
    a, p, q, nan = k.simulate(z, s)
    ok = ~np.isnan(z)
    np.testing.assert_allclose(a[ok], (np.arcsin(z) + np.arctanh(z))[ok], rtol=1e-12)
    np.testing.assert_allclose(p[ok], (z**s + s * np.exp(1j * z.real))[ok], rtol=1e-12)
    np.testing.assert_allclose(q[ok], (s**z + np.conj(z))[ok], rtol=1e-12)
    np.testing.assert_array_equal(nan, np.isnan(z))


def test_a_raw_array_indexed_by_ind_get_needs_the_loops_rank(rng):
    k = jitkern.ElementwiseKernel("T x, raw T w", "T y", "y = x * w[_ind.get()]", "by_index",
                                  reduce_dims=False)
    x, w = rng.standard_normal((4, 3)), rng.standard_normal((3, 4))
    np.testing.assert_array_equal(k.simulate(x, w.T), x * w.T)  # w.T: strided, read by index
    y = np.full((4, 3), np.nan)
    with pytest.raises(jitkern.KernelArgumentError,
                       match=r"by_index: w\[_ind.get\(\)\] needs w to have the loop's 2 "
                             r"dimension\(s\) \(shape \(4, 3\)\); it has shape \(12,\)"):
        k.simulate(x, w.ravel(), y)
    assert np.isnan(y).all()
