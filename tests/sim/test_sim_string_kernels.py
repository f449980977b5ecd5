"""String kernels (RawKernel, RawModule, ElementwiseKernel, ReductionKernel) in the CPU
simulator: through ``k.simulate`` and under JITKERN_SIMULATE=1, checked against NumPy and
against C's semantics (truncating division, wrap-around, the usual conversions); what is
outside the C subset is refused naming the construct and its line."""

import linecache
import subprocess
import sys

import numpy as np
import pytest

import jitkern
from jitkern.config import settings
from tests.conftest import has_gpu

pytest.importorskip("pycparser")

ADD = r"""
extern "C" __global__
void my_add(const float* x1, const float* x2, float* y) {
    int tid = blockDim.x * blockIdx.x + threadIdx.x;
    y[tid] = x1[tid] + x2[tid];
}
"""


@pytest.fixture
def simulating(monkeypatch):
    monkeypatch.setattr(settings, "simulate", True)


# -- the spec's examples ------------------------------------------------------------


def test_raw_kernel_spec_example_under_simulate(simulating, rng):
    k = jitkern.RawKernel(ADD, "my_add")
    x1 = rng.standard_normal((5, 5)).astype(np.float32)
    x2 = rng.standard_normal((5, 5)).astype(np.float32)
    y = np.full((5, 5), np.nan, np.float32)
    k((5,), (5,), (x1, x2, y))
    np.testing.assert_array_equal(y, x1 + x2)


def test_raw_kernel_simulate_spelling_without_the_setting(rng):
    k = jitkern.RawKernel(ADD, "my_add")
    x1, x2 = rng.random(64, np.float32), rng.random(64, np.float32)
    y = np.full(64, np.nan, np.float32)
    k.simulate[2, 32](x1, x2, y)
    np.testing.assert_array_equal(y, x1 + x2)
    y[:] = np.nan
    k.simulate((2,), (32,), (x1, x2, y))
    np.testing.assert_array_equal(y, x1 + x2)
    assert "def my_add(x1, x2, y):" in k.simulate.source


def test_raw_module_spec_example_extern_c_block_and_line_splices(simulating, rng):
    code = r"""
extern "C"{
__global__ void test_sum(const float* x1, const float* x2, float* y, \
                         unsigned int N)
{
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    if (tid < N)
    {
        y[tid] = x1[tid] + x2[tid];
    }
}
__global__ void test_multiply(const float* x1, const float* x2, float* y, \
                              unsigned int N)
{
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    if (tid < N)
    {
        y[tid] = x1[tid] * x2[tid];
    }
}
}"""
    module = jitkern.RawModule(code=code)
    n = 10
    x1 = rng.standard_normal((n, n)).astype(np.float32)
    x2 = rng.standard_normal((n, n)).astype(np.float32)
    y = np.full((n, n), np.nan, np.float32)
    module.get_function("test_sum")((n,), (n,), (x1, x2, y, n**2))
    np.testing.assert_array_equal(y, x1 + x2)
    module.get_function("test_multiply")((n,), (n,), (x1, x2, y, n**2))
    np.testing.assert_array_equal(y, x1 * x2)


def test_raw_kernel_complex_spec_example(simulating, rng):
    k = jitkern.RawKernel(r"""
#include <cupy/complex.cuh>
extern "C" __global__
void my_func(const complex<float>* x1, const complex<float>* x2,
             complex<float>* y, float a) {
    int tid = blockDim.x * blockIdx.x + threadIdx.x;
    y[tid] = x1[tid] + a * x2[tid];
}
""", "my_func")
    x1 = (rng.standard_normal(25) + 1j * rng.standard_normal(25)).astype(np.complex64)
    x2 = (rng.standard_normal(25) + 1j * rng.standard_normal(25)).astype(np.complex64)
    y = np.full(25, np.nan, np.complex64)
    a = np.float32(rng.random())
    k((5,), (5,), (x1, x2, y, a))
    np.testing.assert_allclose(y, x1 + a * x2, rtol=1e-6)


def test_elementwise_spec_examples(simulating, rng):
    sd = jitkern.ElementwiseKernel("float32 x, float32 y", "float32 z",
                                   "z = (x - y) * (x - y)", "squared_diff")
    x = rng.standard_normal((2, 5)).astype(np.float32)
    y = rng.standard_normal(5).astype(np.float32)
    np.testing.assert_array_equal(sd(x, y), (x - y) * (x - y))
    np.testing.assert_array_equal(sd(x, 5), (x - 5) * (x - 5))
    z = np.full((2, 5), np.nan, np.float32)
    sd(x, y, z)
    np.testing.assert_array_equal(z, (x - y) * (x - y))
    generic = jitkern.ElementwiseKernel("T x, T y", "T z",
                                        "T diff = x - y;\n z = diff * diff;", "sqd_generic")
    xd, yd = x.astype(np.float64), y.astype(np.float64)
    out = generic(xd, yd)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, (xd - yd) ** 2)
    super_generic = jitkern.ElementwiseKernel("X x, Y y", "Z z", "z = (x - y) * (x - y)",
                                              "sqd_super")
    zi = np.zeros((2, 5), np.int32) + 7
    super_generic(x, y.astype(np.float64), zi)
    np.testing.assert_array_equal(zi, ((x - y.astype(np.float64)) ** 2).astype(np.int32))


def test_elementwise_raw_argument_and_ind_size(simulating, rng):
    add_reverse = jitkern.ElementwiseKernel("T x, raw T y", "T z",
                                            "z = x + y[_ind.size() - i - 1]", "add_reverse")
    x, y = rng.random(9), rng.random(9)
    np.testing.assert_array_equal(add_reverse(x, y), x + y[::-1])
    every_raw = jitkern.ElementwiseKernel("raw T x", "raw T y", "y[i] = x[i] * 2 + x.size()",
                                          "all_raw")
    out = np.full(6, np.nan)
    every_raw.simulate(x[:6], out, size=4)
    np.testing.assert_array_equal(out[:4], x[:4] * 2 + 6)
    assert np.isnan(out[4:]).all()


def test_elementwise_preamble_device_function_and_ternary(rng):
    k = jitkern.ElementwiseKernel(
        "float32 x, float32 alpha, float32 y", "float32 z",
        "float temp = clampf(x * alpha + y);\n z = temp > 0 ? temp : 0; // ReLU",
        "relu_transform",
        preamble="__device__ float clampf(float v) { return fminf(v, 10.0f); }")
    x, y = rng.standard_normal(50).astype(np.float32) * 8, rng.standard_normal(50).astype(np.float32)
    got = k.simulate(x, np.float32(0.5), y)
    want = np.maximum(np.minimum(x * np.float32(0.5) + y, np.float32(10)), 0)
    np.testing.assert_array_equal(got, want)


def test_elementwise_complex_and_multiple_outputs(simulating, rng):
    abs2 = jitkern.ElementwiseKernel("complex128 z", "float64 mag2",
                                     "mag2 = z.real() * z.real() + z.imag() * z.imag()",
                                     "abs_squared")
    z = rng.standard_normal(40) + 1j * rng.standard_normal(40)
    np.testing.assert_allclose(abs2(z), np.abs(z) ** 2, rtol=1e-12)
    trig = jitkern.ElementwiseKernel("float32 x", "float32 s, float32 c, float32 t",
                                     "s = sinf(x); c = cosf(x); t = tanf(x);", "trig")
    angles = np.linspace(0, 2 * np.pi, 100, dtype=np.float32)
    s, c, t = trig(angles)
    assert s.dtype == np.float32
    np.testing.assert_allclose(s, np.sin(angles), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(c, np.cos(angles), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(t, np.tan(angles), rtol=1e-5, atol=1e-5)


def test_reduction_spec_examples(simulating, rng):
    l2norm = jitkern.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0",
                                     "l2norm")
    x = rng.standard_normal((7, 45)).astype(np.float32)
    got = l2norm(x, axis=1)
    assert got.dtype == np.float32 and got.shape == (7,)
    np.testing.assert_allclose(got, np.sqrt((x.astype(np.float64) ** 2).sum(1)), rtol=1e-5)
    np.testing.assert_allclose(l2norm(x, axis=0, keepdims=True),
                               np.sqrt((x.astype(np.float64) ** 2).sum(0, keepdims=True)),
                               rtol=1e-5)
    sq = jitkern.ReductionKernel("float64 x", "float64 y", "x * x", "a + b", "y = a", "0",
                                 "l2_norm_sq")
    xd = rng.standard_normal(1000)
    np.testing.assert_allclose(sq(xd), (xd * xd).sum(), rtol=1e-12)


def test_reduction_without_identity_and_with_reduce_type(rng):
    mx = jitkern.ReductionKernel("T x", "T y", "x", "max(a, b)", "y = a", None, "mymax")
    x = rng.integers(-1000, 1000, (5, 70)).astype(np.int32)
    np.testing.assert_array_equal(mx.simulate(x, axis=1), x.max(1))
    np.testing.assert_array_equal(mx.simulate(x), x.max())
    mean = jitkern.ReductionKernel("T x", "float64 y", "x", "a + b", "y = a / _type_n",
                                   "0", "mean_k", reduce_type="double",
                                   preamble="#define _type_n 70.0")
    np.testing.assert_allclose(mean.simulate(x, axis=1), x.mean(1), rtol=1e-12)


def test_raw_module_template_kernels_by_name_expression(simulating, rng):
    code = r"""
template<typename T>
__global__ void fx3(T* arr, int N) {
    unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < N) {
        arr[tid] = arr[tid] * 3;
    }
}
"""
    mod = jitkern.RawModule(code=code, options=("-std=c++11",),
                            name_expressions=["fx3<float>", "fx3<double>"])
    for name, dtype in (("fx3<float>", np.float32), ("fx3<double>", np.float64)):
        a = rng.standard_normal(10).astype(dtype)
        want = a * 3
        mod.get_function(name)((1,), (10,), (a, 10))
        assert a.dtype == dtype
        np.testing.assert_array_equal(a, want)


def test_tutorial_matrix_multiply_module_and_block_reduction(simulating, rng):
    matmul = jitkern.RawKernel(r"""
extern "C" __global__
void matrix_multiply(const float* A, const float* B, float* C,
int M, int N, int K) {
int row = blockIdx.y * blockDim.y + threadIdx.y;
int col = blockIdx.x * blockDim.x + threadIdx.x;
if (row < M && col < N) {
float sum = 0.0f;
for (int k = 0; k < K; k++) {
sum += A[row * K + k] * B[k * N + col];
}
C[row * N + col] = sum;
}
}
""", "matrix_multiply")
    m, n, k = 12, 10, 7
    a = rng.random((m, k), np.float32)
    b = rng.random((k, n), np.float32)
    c = np.full((m, n), np.nan, np.float32)
    matmul(((n + 7) // 8, (m + 7) // 8), (8, 8), (a, b, c, np.int32(m), np.int32(n),
                                                   np.int32(k)))
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)
    module = jitkern.RawModule(code=r"""
extern "C" {
__device__ float activation_relu(float x) {
return fmaxf(0.0f, x);
}
__device__ float activation_sigmoid(float x) {
return 1.0f / (1.0f + expf(-x));
}
__global__ void apply_activation(const float* input, float* output,
int size, int activation_type) {
int idx = blockIdx.x * blockDim.x + threadIdx.x;
if (idx < size) {
float x = input[idx];
if (activation_type == 0) {
output[idx] = activation_relu(x);
} else if (activation_type == 1) {
output[idx] = activation_sigmoid(x);
}
}
}
}
""")
    data = rng.standard_normal(37).astype(np.float32)
    out = np.full(37, np.nan, np.float32)
    act = module.get_function("apply_activation")
    act((1,), (64,), (data, out, np.int32(37), np.int32(0)))
    np.testing.assert_array_equal(out, np.maximum(data, 0))
    act((1,), (64,), (data, out, np.int32(37), np.int32(1)))
    np.testing.assert_allclose(out, 1 / (1 + np.exp(-data.astype(np.float64))), rtol=1e-6)
    reduce = jitkern.RawKernel(r"""
extern "C" __global__
void optimized_reduction(const float* input, float* output, int size) {
extern __shared__ float sdata[];
int tid = threadIdx.x;
int i = blockIdx.x * blockDim.x + threadIdx.x;
sdata[tid] = (i < size) ? input[i] : 0;
__syncthreads();
for (int s = blockDim.x / 2; s > 0; s >>= 1) {
if (tid < s) {
sdata[tid] += sdata[tid + s];
}
__syncthreads();
}
if (tid == 0) output[blockIdx.x] = sdata[0];
}
""", "optimized_reduction")
    x = rng.random(1000, np.float32)
    partial = np.full(4, np.nan, np.float32)
    reduce((4,), (256,), (x, partial, np.int32(1000)), shared_mem=256 * 4)
    np.testing.assert_allclose(partial.sum(), x.astype(np.float64).sum(), rtol=1e-5)


# -- C semantics ---------------------------------------------------------------------

SEMANTICS = r"""
extern "C" __global__ void c_ops(const int* a, const int* b, int* q, int* r,
                                 unsigned int* u, long long* w, double* d) {
    int t = threadIdx.x;
    q[t] = a[t] / b[t];
    r[t] = a[t] % b[t];
    int big = 2147483647;
    w[t] = big + a[t];                // int arithmetic wraps, then widens
    u[t] = (unsigned int)a[t] * 3u;   // unsigned wrap-around
    d[t] = 1 / 3 + 1.0 / 3 + 7 / 2.0f;  // 0 + double + float promoted to double
    if (a[t] < 0u) w[t] = -1;         // a negative int compared with unsigned: never true
}
"""


def test_c_division_modulo_overflow_and_conversions(rng):
    k = jitkern.RawKernel(SEMANTICS, "c_ops")
    n = 64
    a = rng.integers(-1000, 1000, n).astype(np.int32)
    b = rng.integers(1, 50, n).astype(np.int32) * rng.choice([-1, 1], n).astype(np.int32)
    q, r = np.full(n, 7, np.int32), np.full(n, 7, np.int32)
    u, w, d = np.zeros(n, np.uint32), np.zeros(n, np.int64), np.full(n, np.nan)
    k.simulate[1, n](a, b, q, r, u, w, d)
    want_q = np.trunc(a / b).astype(np.int32)  # C truncates toward zero
    np.testing.assert_array_equal(q, want_q)
    np.testing.assert_array_equal(r, a - want_q * b)  # the dividend's sign
    assert ((r == 0) | (np.sign(r) == np.sign(a))).all()
    want_w = ((2147483647 + a.astype(np.int64) + 2**31) % 2**32 - 2**31)
    np.testing.assert_array_equal(w, want_w)
    np.testing.assert_array_equal(u, (a.astype(np.int64) * 3) % 2**32)
    np.testing.assert_array_equal(d, np.full(n, 1.0 / 3 + 3.5))


def test_char_promotion_float_literal_and_shifts(rng):
    k = jitkern.RawKernel(r"""
extern "C" __global__ void promo(const unsigned char* c, int* out, float* f, unsigned* s) {
    int t = threadIdx.x;
    out[t] = c[t] + c[t];       // promoted to int: no 8-bit wrap
    f[t] = 0.1f * c[t] + 0.1;  // float * int -> float, then + double
    s[t] = 1u << (c[t] & 31);
}
""", "promo")
    c = rng.integers(0, 256, 32).astype(np.uint8)
    out, f, s = np.zeros(32, np.int32), np.full(32, np.nan, np.float32), np.zeros(32, np.uint32)
    k.simulate[1, 32](c, out, f, s)
    np.testing.assert_array_equal(out, c.astype(np.int32) * 2)
    want_f = (np.float64(np.float32(0.1) * c.astype(np.float32)) + 0.1).astype(np.float32)
    np.testing.assert_array_equal(f, want_f)
    np.testing.assert_array_equal(s, (np.uint64(1) << (c & 31).astype(np.uint64)).astype(np.uint32))


def test_switch_sizeof_and_elementwise_integer_division(rng):
    k = jitkern.RawKernel(r"""
extern "C" __global__ void sw(const int* a, int* out, unsigned long long* sz) {
    int t = threadIdx.x;
    int r;
    switch (a[t] % 4) {
      case 0: r = 10; break;
      case 1:
      case -1: r = 20; break;
      case 2: { r = 30; break; }
      default: r = -1;
    }
    out[t] = r;
    sz[t] = sizeof(double) + sizeof(r) + sizeof(short);
}""", "sw")
    a = rng.integers(-1000, 1000, 64).astype(np.int32)
    out, sz = np.full(64, 99, np.int32), np.zeros(64, np.uint64)
    k.simulate[1, 64](a, out, sz)
    rem = np.fmod(a, 4)  # C's remainder
    want = np.select([rem == 0, np.abs(rem) == 1, rem == 2], [10, 20, 30], -1)
    np.testing.assert_array_equal(out, want)
    assert (sz == 14).all()
    div = jitkern.ElementwiseKernel("T x, T y", "T q, T r", "q = x / y; r = x % y", "cdivmod")
    x = rng.integers(-10**6, 10**6, 200).astype(np.int64)
    y = rng.integers(1, 100, 200).astype(np.int64) * rng.choice([-1, 1], 200)
    q, r = div.simulate(x, y)
    np.testing.assert_array_equal(q, np.trunc(x / y).astype(np.int64))
    np.testing.assert_array_equal(r, np.fmod(x, y))


def test_switch_fallthrough_is_refused():
    k = jitkern.RawKernel(
        'extern "C" __global__ void f(int* x) {\n switch (x[0]) {\n  case 1: x[0] = 2;\n'
        "  case 2: x[0] = 3; break;\n }\n}", "f")
    with pytest.raises(jitkern.CompileError, match=r"line 3, column \d+: a switch case falling through"):
        k.simulate[1, 1](np.zeros(1, np.int32))


def test_int_multiply_wraps_and_unsigned_division(rng):
    k = jitkern.RawKernel(r"""
extern "C" __global__ void ops(const int* a, const unsigned int* u, int* m, unsigned int* d,
                               long long* wide) {
    int t = threadIdx.x;
    m[t] = a[t] * 65537;            // wraps at 32 bits
    d[t] = u[t] / 7u + u[t] % 7u;   // unsigned division
    wide[t] = (long long)a[t] * 65537;
}""", "ops")
    a = rng.integers(-2**31, 2**31, 32, dtype=np.int64).astype(np.int32)
    u = rng.integers(0, 2**32, 32, dtype=np.uint64).astype(np.uint32)
    m, d, wide = np.zeros(32, np.int32), np.zeros(32, np.uint32), np.zeros(32, np.int64)
    k.simulate[1, 32](a, u, m, d, wide)
    exact = a.astype(np.int64) * 65537
    np.testing.assert_array_equal(wide, exact)
    np.testing.assert_array_equal(m, ((exact + 2**31) % 2**32 - 2**31).astype(np.int32))
    np.testing.assert_array_equal(d, (u // 7 + u % 7).astype(np.uint32))


def test_translate_cucomplex_code(rng):
    k = jitkern.RawKernel(r"""
#include <cuComplex.h>
extern "C" __global__ void rotate(cuFloatComplex* z, cuFloatComplex by, int n) {
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < n) z[i] = cuCaddf(cuCmulf(z[i], by), make_cuFloatComplex(cuCrealf(by), 0.0f));
}""", "rotate", translate_cucomplex=True)
    z = (rng.standard_normal(40) + 1j * rng.standard_normal(40)).astype(np.complex64)
    by = np.complex64(complex(rng.standard_normal(), rng.standard_normal()))
    want = z * by + by.real
    k.simulate[2, 32](z, by, np.int32(40))
    np.testing.assert_allclose(z, want, rtol=1e-6, atol=1e-6)


# -- shared memory, barriers, atomics, shuffles, loops, device functions -----------------

BLOCK_SUM = r"""
#define THREADS 128
__device__ float square(float v) { return v * v; }

extern "C" __global__ void block_sum(const float* x, float* out, int n) {
    __shared__ float partial[THREADS];
    int t = threadIdx.x;
    float acc = 0.0f;
    for (int i = blockIdx.x * blockDim.x + t; i < n; i += blockDim.x * gridDim.x) {
        if (x[i] < -100.0f) continue;
        acc += square(x[i]);
    }
    partial[t] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s >= 32; s >>= 1) {
        if (t < s) partial[t] += partial[t + s];
        __syncthreads();
    }
    if (t < 32) {
        float v = partial[t];
        for (int off = 16; off > 0; off /= 2)
            v += __shfl_down_sync(0xffffffff, v, off);
        if (t == 0) atomicAdd(&out[0], v);
    }
}
"""


def test_block_reduction_with_shared_memory_shuffles_and_atomics(simulating, rng):
    k = jitkern.RawKernel(BLOCK_SUM, "block_sum")
    x = rng.standard_normal(3000).astype(np.float32)
    x[rng.integers(0, 3000, 20)] = -1000.0  # skipped by `continue`
    out = np.zeros(1, np.float32)
    k((4,), (128,), (x, out, np.int32(x.size)))
    kept = x[x >= -100].astype(np.float64)
    np.testing.assert_allclose(out[0], (kept**2).sum(), rtol=1e-4)


def test_dynamic_shared_memory_while_do_while_and_pointer_offsets(rng):
    k = jitkern.RawKernel(r"""
extern "C" __global__ void rows(const int* m, int* out, int cols) {
    extern __shared__ int buf[];
    const int* row = m + blockIdx.x * cols;
    int t = threadIdx.x;
    buf[t] = row[t];
    __syncthreads();
    if (t == 0) {
        int total = 0, k = 0;
        while (k < cols) { total += buf[k]; k++; }
        int steps = 0;
        do { steps++; } while (steps < 3);
        out[blockIdx.x] = total * steps;
    }
}
""", "rows")
    m = rng.integers(-50, 50, (6, 16)).astype(np.int32)
    out = np.full(6, -7, np.int32)
    k.simulate[6, 16](m, out, np.int32(16), shared_mem=16 * 4)
    np.testing.assert_array_equal(out, m.sum(1) * 3)


def test_two_dimensional_shared_tile_transpose(rng):
    k = jitkern.RawKernel(r"""
#define TILE 8
extern "C" __global__ void transpose(const double* a, double* b, int n) {
    __shared__ double tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    if (x < n && y < n) tile[threadIdx.y][threadIdx.x] = a[y * n + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x; y = blockIdx.x * TILE + threadIdx.y;
    if (x < n && y < n) b[y * n + x] = tile[threadIdx.x][threadIdx.y];
}
""", "transpose")
    a = rng.standard_normal((20, 20))
    b = np.full((20, 20), np.nan)
    k.simulate[(3, 3), (8, 8)](a, b, np.int32(20))
    np.testing.assert_array_equal(b, a.T)


def test_simulator_errors_name_the_c_line():
    k = jitkern.RawKernel(r"""extern "C" __global__ void f(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n)
        y[i] = x[i] * 2;
}""", "f")
    x, y = np.ones(10, np.float32), np.zeros(10, np.float32)
    with pytest.raises(jitkern.KernelAssertionError) as info:
        k.simulate[1, 16](x, y, np.int32(10))
    assert str(info.value).startswith(
        "RawKernel 'f' line 4: index 10 is out of bounds for x of shape (10,) in thread (10")
    ew = jitkern.ElementwiseKernel("T x, raw T y", "T z", "T t = x;\nz = t + y[i + 1]", "off1")
    with pytest.raises(jitkern.KernelAssertionError) as info:
        ew.simulate(np.ones(4), np.ones(4))
    assert str(info.value).startswith("off1 operation line 2: index 4 is out of bounds for y")


def test_racecheck_reaches_string_kernels():
    k = jitkern.RawKernel(r"""extern "C" __global__ void race(int* out) {
    __shared__ int s[1];
    s[0] = threadIdx.x;
    out[threadIdx.x] = s[0];
}""", "race")
    out = np.zeros(4, np.int32)
    k.simulate((1,), (4,), (out,))  # runs without racecheck
    with pytest.raises(jitkern.KernelAssertionError) as info:
        k.simulate((1,), (4,), (out,), racecheck=True)
    message = str(info.value)
    assert message.startswith("RawKernel 'race' line 3: shared-memory race on element 0")
    assert "wrote it at RawKernel 'race' line 3" in message and "__syncthreads()" in message


# -- refusals ---------------------------------------------------------------------------


@pytest.mark.parametrize("code, construct, line", [
    ("template<typename T>\n__global__ void f(T* x) { x[0] = 1; }", "a template", 1),
    ('extern "C" __global__ void f(int* x) {\n  asm("mov.u32 %0, 1;" : "=r"(x[0]));\n}',
     "inline PTX", 2),
    ("#include <cub/cub.cuh>\nextern \"C\" __global__ void f(int* x) {}", "<cub/cub.cuh>", 1),
    ('union P { int a; };\nextern "C" __global__ void f(int* x) {}', "C++ 'union'", 1),
    ('struct P { int a; int* p; };\nextern "C" __global__ void f(int* x) {}', "field 'p'", 1),
    ('extern "C" __global__ void f(float* x) {\n\n  x[0] = unknown_fn(1.0f);\n}',
     "unknown_fn()", 3),
    ('extern "C" __global__ void f(float4* x) {\n  x[0] = make_float4(1, 2, 3, 4);\n}',
     "a pointer to struct float4", 1),
])
def test_outside_the_subset_is_refused_naming_construct_and_line(construct, code, line):
    k = jitkern.RawKernel(code, "f")
    x = np.zeros(4, np.float32)
    with pytest.raises(jitkern.CompileError) as info:
        k.simulate[1, 1](x)
    message = str(info.value)
    assert construct in message
    assert f"line {line}, column " in message
    shown, caret = message.split("\n")[-2:]  # the user's line, and a caret under it
    assert shown.startswith(f" {line} | ") and caret.rstrip().endswith("^")
    assert "outside the C subset" in message
    assert (x == 0).all()


def test_elementwise_refusal_names_the_operation_line():
    k = jitkern.ElementwiseKernel("float32 x", "float32 y", "float t = x;\ny = reinterpret_cast<float>(t);",
                                  "bad_cast")
    with pytest.raises(jitkern.CompileError) as info:
        k.simulate(np.ones(4, np.float32))
    assert "bad_cast operation line 2, column " in str(info.value)


def test_raw_kernel_arguments_are_checked(rng):
    k = jitkern.RawKernel(ADD, "my_add")
    x = rng.random(8, np.float32)
    with pytest.raises(jitkern.KernelArgumentError, match=r"my_add takes 3 argument\(s\)"):
        k.simulate[1, 8](x, x)
    with pytest.raises(jitkern.KernelArgumentError,
                       match=r"argument 2 \(y\): the kernel expects a pointer"):
        k.simulate[1, 8](x, x, 1.5)
    with pytest.raises(jitkern.KernelArgumentError, match="non-contiguous"):
        k.simulate[1, 4](x[::2], x[::2], x[::2])


# -- what a newcomer hits ---------------------------------------------------------------


@jitkern.rawkernel()
def _fill_shared(out):
    buf = jitkern.jit.shared_memory(np.int32, None)
    t = jitkern.jit.threadIdx.x
    buf[t] = t * 3
    jitkern.jit.syncthreads()
    out[t] = buf[t]


def test_simulate_takes_the_launch_keywords():
    out = np.full(4, -1, np.int32)
    _fill_shared.simulate[1, 4](out, shared_mem=16)
    assert out.tolist() == [0, 3, 6, 9]
    with pytest.raises(jitkern.KernelArgumentError) as info:
        _fill_shared.simulate[1, 4](out, shared=16)
    assert "only shared_mem= and stream= as keywords" in str(info.value)
    assert "_star" not in str(info.value)
    with pytest.raises(jitkern.KernelArgumentError, match="given both in the brackets"):
        _fill_shared.simulate[1, 4, 16](out, shared_mem=16)


@pytest.mark.skipif(has_gpu(), reason="needs a machine without a usable GPU")
def test_no_driver_error_names_the_simulator(monkeypatch):
    monkeypatch.setattr(settings, "simulate", False)
    k = jitkern.RawKernel(ADD, "my_add")
    x = np.zeros(4, np.float32)
    with pytest.raises(jitkern.CUDAError) as info:
        k((1,), (4,), (x, x, x))
    message = str(info.value)
    assert message.startswith("no CUDA driver found")
    assert "k.simulate[grid, block]" in message and "JITKERN_SIMULATE=1" in message
    assert "inspect(..., arch=...)" in message
    monkeypatch.setattr(settings, "simulate", True)
    with pytest.raises(jitkern.CUDAError) as info:
        jitkern.arrays.empty(4, np.float32)  # device memory: the simulator cannot help
    message = str(info.value)
    assert ".." not in message and ". ;" not in message
    assert "pass NumPy arrays to simulated kernels" in message


def test_host_array_error_names_the_simulator(monkeypatch):
    monkeypatch.setattr(settings, "simulate", False)
    from jitkern.runtime.launch import host_array_message

    message = host_array_message("numpy.ndarray")
    assert "jitkern.asarray(x)" in message and "k.simulate[grid, block]" in message
    assert "JITKERN_SIMULATE=1" in message and "inspect(..., arch=...)" in message


@jitkern.jit.rawkernel()
def _copy_rows(src, dst):
    i = jitkern.jit.grid(1)
    if i < dst.size:
        dst[i] = src[i]


@pytest.mark.parametrize("simulate", [False])
def test_host_array_message_names_kernel_parameter_and_the_simulator_only_while_on(
        monkeypatch, simulate):
    # through the public launch: the bound launch packs (and refuses) before any driver call
    monkeypatch.setattr(settings, "simulate", simulate)
    k = jitkern.RawKernel(ADD, "my_add")
    x, y = np.ones(8, np.float32), np.zeros(8, np.float32)
    with pytest.raises(jitkern.KernelArgumentError) as info:
        k.bind((1,), (8,), x, x, y)
    message = str(info.value)
    assert message.startswith("my_add: argument 0 (x1): a numpy.ndarray lives in host memory")
    assert ("JITKERN_SIMULATE runs" in message) is simulate


def test_jit_kernel_given_a_host_array_names_kernel_and_parameter(monkeypatch):
    monkeypatch.setattr(settings, "simulate", False)
    src = np.random.default_rng().standard_normal(8)
    dst = np.full(8, np.nan)
    with pytest.raises(jitkern.KernelArgumentError) as info:
        _copy_rows[1, 8](src, dst)
    assert str(info.value).startswith("_copy_rows: argument 0 (src): a numpy.ndarray lives")
    assert np.isnan(dst).all()  # nothing ran


def test_kernel_typed_at_python_c_says_why_it_cannot_compile(tmp_path):
    code = ("import numpy, jitkern\n"
            "@jitkern.rawkernel()\n"
            "def k(x):\n    x[0] = 1\n"
            "k.simulate[1, 1](numpy.zeros(1, numpy.int32))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=tmp_path, env=_env())
    assert done.returncode != 0
    assert "cannot read the source of 'k'" in done.stderr
    assert "python -c" in done.stderr and "IPython/Jupyter" in done.stderr


def _env():
    import os

    env = dict(os.environ)
    env["PYTHONPATH"] = os.getcwd() + os.pathsep + env.get("PYTHONPATH", "")
    return env


def test_source_kept_in_linecache_compiles(rng):
    filename = "<ipython-input-7-3f2a1c>"  # how IPython names a cell it keeps in linecache
    source = "def scale(x, a):\n    i = jitkern.jit.threadIdx.x\n    x[i] = x[i] * a\n"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"jitkern": jitkern}
    exec(compile(source, filename, "exec"), namespace)
    k = jitkern.rawkernel()(namespace["scale"])
    x = rng.random(8)
    want = x * 2.5
    k.simulate[1, 8](x, 2.5)
    np.testing.assert_array_equal(x, want)


def test_without_pycparser_the_error_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "pycparser", None)
    monkeypatch.setitem(sys.modules, "pycparser.c_parser", None)
    jitkern.clear_memo()  # a translation made by an earlier test would be reused
    k = jitkern.RawKernel(ADD, "my_add")
    x = np.zeros(4, np.float32)
    with pytest.raises(jitkern.CompileError) as info:
        k.simulate[1, 4](x, x, x)
    assert "needs pycparser, a dependency of jitkern: pip install pycparser" in str(info.value)


def test_without_pcpp_the_error_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "pcpp", None)
    k = jitkern.RawKernel("#define T float\n" + ADD.replace("float", "T"), "my_add")
    x = np.zeros(4, np.float32)
    with pytest.raises(jitkern.CompileError) as info:
        k.simulate[1, 4](x, x, x)
    assert "needs pcpp: pip install pcpp" in str(info.value)
