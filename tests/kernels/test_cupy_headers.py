"""CuPy's headers, written for jitkern (include/cupy/; docs/compat.md, "CuPy's C++
environment"): each compiles alone, naming everything it defines, through RawKernel.inspect
(CPU); the GPU tests check the value of every function against NumPy or Python, over fresh
random inputs and the special values, with outputs poisoned first.
"""

import itertools

import numpy as np
import pytest

import jitkern

ARCH = "sm_90"

_SAME = "template <class A, class B> struct jk_same { enum { v = 0 }; };\n" \
        "template <class A> struct jk_same<A, A> { enum { v = 1 }; };\n"

# ---------------------------------------------------------------------------
# 16-bit floats: every function, for CuPy's classes and CUDA's types alike

HALF_FUNCTIONS = r"""
#include <cupy/float16.cuh>
#include <cupy/bfloat16.cuh>
// int predicates (6), then H results (7): iszero isnan isinf isfinite signbit, members...
template <class H, class Bits>
__device__ void functions(const Bits* xb, const Bits* yb, int* pred, Bits* res, int n) {
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i >= n) return;
    typedef jitkern::narrow::traits<H> t;
    H x = t::from_bits(xb[i]), y = t::from_bits(yb[i]);
    int* p = pred + 5 * i;
    p[0] = iszero(x); p[1] = isnan(x); p[2] = isinf(x); p[3] = isfinite(x); p[4] = signbit(x);
    Bits* r = res + 7 * i;
    r[0] = t::bits(copysign(x, y));
    r[1] = t::bits(nextafter(x, y));
    r[2] = t::bits(min(x, y));
    r[3] = t::bits(max(x, y));
    r[4] = t::bits(fmin(x, y));
    r[5] = t::bits(fmax(x, y));
    r[6] = t::bits(_floor_divide(x, y));
}
extern "C" __global__ void f16_class(const unsigned short* x, const unsigned short* y, int* p,
                                     unsigned short* r, int n) { functions<float16>(x, y, p, r, n); }
extern "C" __global__ void f16_cuda(const unsigned short* x, const unsigned short* y, int* p,
                                    unsigned short* r, int n) { functions<__half>(x, y, p, r, n); }
extern "C" __global__ void bf16_class(const unsigned short* x, const unsigned short* y, int* p,
                                      unsigned short* r, int n) { functions<bfloat16>(x, y, p, r, n); }
extern "C" __global__ void bf16_cuda(const unsigned short* x, const unsigned short* y, int* p,
                                     unsigned short* r, int n) { functions<__nv_bfloat16>(x, y, p, r, n); }

// the classes' members and conversions: 5 member predicates, then bits of
// from_bits(to_bits), T(int), T(double), T(long long), T(other class)
extern "C" __global__ void f16_members(const unsigned short* xb, const int* k, const double* d,
                                       int* pred, unsigned short* res, int n) {
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i >= n) return;
    float16 x = float16::from_bits(xb[i]);
    int* p = pred + 5 * i;
    p[0] = x.iszero(); p[1] = x.isnan(); p[2] = x.isinf(); p[3] = x.isfinite(); p[4] = x.signbit();
    unsigned short* r = res + 5 * i;
    r[0] = float16::from_bits(x.to_bits()).to_bits();
    r[1] = float16(k[i]).to_bits();
    r[2] = float16(d[i]).to_bits();
    r[3] = float16((long long)k[i] * 3).to_bits();
    r[4] = float16(bfloat16(x)).to_bits();
}
"""

_HALF_SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 65504.0, -65504.0, 6e-8, -6e-8, 1.0, -1.0,
                 2.0, 0.5]


def _half_operands(rng, n, dtype):
    special = np.array(_HALF_SPECIAL).astype(dtype)
    x = np.concatenate([np.repeat(special, len(special)), (rng.standard_normal(n) * 100).astype(dtype)])
    y = np.concatenate([np.tile(special, len(special)), (rng.standard_normal(n) * 100).astype(dtype)])
    y[-n // 4:] = x[-n // 4:]  # equal operands too
    return x, y


def _nextafter_ref(x, y, dtype):
    """NumPy's nextafter, one step of ``dtype``, and y where x == y (C's rule, and NumPy's for
    float32/64; NumPy's float16 one returned x there before NumPy 2.5): through the bit
    pattern for bfloat16, which NumPy's ufunc does not know."""
    if dtype == np.float16:
        return np.where(x == y, y, np.nextafter(x, y))
    bits = x.view(np.uint16).astype(np.int64)
    xf, yf = x.astype(np.float32), y.astype(np.float32)
    away = (yf > xf) == ~np.signbit(xf)
    out = np.where(away, bits + 1, bits - 1)
    out = np.where(xf == 0, (y.view(np.uint16) & 0x8000) | 1, out)
    out = np.where(xf == yf, y.view(np.uint16), out)  # y itself, as C's
    out = np.where(np.isnan(xf) | np.isnan(yf), 0x7FC0, out)
    return out.astype(np.uint16).view(dtype)


def _half_references(x, y, dtype):
    xf, yf = x.astype(np.float32), y.astype(np.float32)
    with np.errstate(all="ignore"):
        preds = [xf == 0, np.isnan(xf), np.isinf(xf), np.isfinite(xf), np.signbit(xf)]
        results = [np.copysign(xf, yf).astype(dtype), _nextafter_ref(x, y, dtype),
                   np.fmin(xf, yf).astype(dtype), np.fmax(xf, yf).astype(dtype),
                   np.fmin(xf, yf).astype(dtype), np.fmax(xf, yf).astype(dtype),
                   np.floor(xf / yf).astype(dtype)]
    return np.stack(preds, 1).astype(np.int32), np.stack(results, 1)


def _bfloat16():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    return np.dtype(ml_dtypes.bfloat16)


@pytest.mark.gpu
@pytest.mark.parametrize("kernel", ["f16_class", "f16_cuda", "bf16_class", "bf16_cuda"])
def test_16_bit_float_functions_against_numpy(rng, kernel):
    dtype = np.dtype(np.float16) if kernel.startswith("f16") else _bfloat16()
    x, y = _half_operands(rng, 20_000, dtype)
    n = x.size
    pred = jitkern.full(5 * n, -1, np.int32)
    res = jitkern.full(7 * n, 0x7E01, np.uint16)
    k = jitkern.RawKernel(HALF_FUNCTIONS, kernel)
    k(((n + 255) // 256,), (256,), (jitkern.asarray(x.view(np.uint16)),
                                   jitkern.asarray(y.view(np.uint16)), pred, res, np.int32(n)))
    want_pred, want_res = _half_references(x, y, dtype)
    np.testing.assert_array_equal(pred.get().reshape(n, 5), want_pred)
    got = res.get().reshape(n, 7)
    for col, name in enumerate(["copysign", "nextafter", "min", "max", "fmin", "fmax",
                                "_floor_divide"]):
        # NaN results compare as NaN (their payloads may differ); the rest bit for bit, but
        # for min/max, whose choice between +0 and -0 C leaves open: by value
        g, w = got[:, col].view(dtype).astype(np.float32), want_res[:, col].astype(np.float32)
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=name)
        ok = ~np.isnan(w)
        if name in ("min", "max", "fmin", "fmax"):
            np.testing.assert_array_equal(g[ok], w[ok], err_msg=name)
        else:
            np.testing.assert_array_equal(got[ok, col], want_res[ok, col].view(np.uint16),
                                          err_msg=name)


@pytest.mark.gpu
def test_float16_members_and_conversions_against_numpy(rng):
    x, _ = _half_operands(rng, 20_000, np.float16)
    n = x.size
    k_int = rng.integers(-70_000, 70_000, n).astype(np.int32)
    d = rng.standard_normal(n) * 10.0 ** rng.integers(-8, 6, n)
    pred = jitkern.full(5 * n, -1, np.int32)
    res = jitkern.full(5 * n, 0x7E01, np.uint16)
    k = jitkern.RawKernel(HALF_FUNCTIONS, "f16_members")
    k(((n + 255) // 256,), (256,), (jitkern.asarray(x.view(np.uint16)), jitkern.asarray(k_int),
                                   jitkern.asarray(d), pred, res, np.int32(n)))
    xf = x.astype(np.float32)
    want_pred = np.stack([xf == 0, np.isnan(xf), np.isinf(xf), np.isfinite(xf),
                          np.signbit(xf)], 1).astype(np.int32)
    np.testing.assert_array_equal(pred.get().reshape(n, 5), want_pred)
    got = res.get().reshape(n, 5)
    np.testing.assert_array_equal(got[:, 0], x.view(np.uint16))
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(got[:, 1], k_int.astype(np.float16).view(np.uint16))
        np.testing.assert_array_equal(got[:, 2], d.astype(np.float16).view(np.uint16))
        np.testing.assert_array_equal(
            got[:, 3], (k_int.astype(np.int64) * 3).astype(np.float64).astype(np.float16).view(np.uint16))
    bf = _bfloat16()
    want = x.astype(bf).astype(np.float32).astype(np.float16)  # float16 -> bfloat16 -> float16
    ok = ~np.isnan(want)
    np.testing.assert_array_equal(got[ok, 4], want[ok].view(np.uint16))


# ---------------------------------------------------------------------------
# atomics

ATOMICS = r"""
#include <cupy/atomics.cuh>
#include <cupy/float16.cuh>
#include <cupy/bfloat16.cuh>
extern "C" __global__ void adds(float16* h, bfloat16* b, long long* ll, const long long* llv,
                                complex<float>* zf, complex<double>* zd, const double* zv,
                                int slots, int n) {
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i >= n) return;
    int s = i % slots;  // neighbouring slots share 32-bit words
    float16 old_h = atomicAdd(h + s, float16(1.0f + (float)(i % 3)));
    if (i < 256) atomicAdd(b + s, bfloat16(1.0f));  // (bfloat16 counts exactly to 256)
    (void)old_h;
    atomicAdd(ll + s, llv[i]);
    atomicAdd(zf + s, complex<float>((float)zv[2 * i], (float)zv[2 * i + 1]));
    atomicAdd(zd + s, complex<double>(zv[2 * i], zv[2 * i + 1]));
}
extern "C" __global__ void extremes(float* fmax_, float* fmin_, double* dmax, double* dmin,
                                    const float* fv, const double* dv, int slots, int n) {
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i >= n) return;
    int s = i % slots;
    atomicMax(fmax_ + s, fv[i]); atomicMin(fmin_ + s, fv[i]);
    atomicMax(dmax + s, dv[i]); atomicMin(dmin + s, dv[i]);
}
// the value each call returns is the one it replaced: the returned values, sorted, and the
// final one are every partial sum once
extern "C" __global__ void returns(float16* h, float16* seen, int n) {
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < n) seen[i] = atomicAdd(h, float16(1.0f));
}
"""


def _launch(kernel, n, *args):
    kernel(((n + 255) // 256,), (256,), args)


@pytest.mark.gpu
def test_atomic_adds_against_numpy(rng):
    n, slots = 3000, 7
    k = jitkern.RawKernel(ATOMICS, "adds")
    idx = np.arange(n)
    llv = rng.integers(-2**62, 2**62, n, dtype=np.int64)
    zv = rng.integers(-1000, 1000, 2 * n).astype(np.float64)  # integers: every order sums exactly
    h = jitkern.zeros(slots, np.float16)
    b = jitkern.zeros(slots, _bfloat16())
    ll = jitkern.asarray(rng.integers(-100, 100, slots, dtype=np.int64))
    ll0 = ll.get()
    zf, zd = jitkern.zeros(slots, np.complex64), jitkern.zeros(slots, np.complex128)
    _launch(k, n, h, b, ll, jitkern.asarray(llv), zf, zd, jitkern.asarray(zv), np.int32(slots),
            np.int32(n))
    by_slot = [idx % slots == s for s in range(slots)]
    np.testing.assert_array_equal(h.get(), [np.sum(1.0 + idx[m] % 3) for m in by_slot])
    np.testing.assert_array_equal(b.get().astype(np.float64), [(m & (idx < 256)).sum() for m in by_slot])
    with np.errstate(over="ignore"):
        want_ll = [ll0[s] + llv[m].sum() for s, m in enumerate(by_slot)]  # wraps, as int64 does
    np.testing.assert_array_equal(ll.get(), want_ll)
    z = zv[0::2] + 1j * zv[1::2]
    np.testing.assert_array_equal(zd.get(), [z[m].sum() for m in by_slot])
    np.testing.assert_array_equal(zf.get(), np.array([z[m].sum() for m in by_slot], np.complex64))


@pytest.mark.gpu
def test_atomic_max_min_against_numpy(rng):
    n, slots = 5000, 5
    k = jitkern.RawKernel(ATOMICS, "extremes")
    fv = (rng.standard_normal(n) * 1e3).astype(np.float32)
    dv = rng.standard_normal(n) * 1e300  # past float's range: compared in double
    fv[::97], dv[::89] = np.nan, np.nan  # a NaN given leaves the value (fmax/fmin)
    idx = np.arange(n)
    outs = [jitkern.full(slots, v, t) for v, t in ((-np.inf, np.float32), (np.inf, np.float32),
                                                   (-np.inf, np.float64), (np.inf, np.float64))]
    _launch(k, n, *outs, jitkern.asarray(fv), jitkern.asarray(dv), np.int32(slots), np.int32(n))
    for out, values, fn in zip(outs, (fv, fv, dv, dv), (np.nanmax, np.nanmin, np.nanmax, np.nanmin)):
        np.testing.assert_array_equal(out.get(), [fn(values[idx % slots == s]) for s in range(slots)])


@pytest.mark.gpu
def test_atomic_add_returns_the_value_it_replaced():
    n = 1000
    h = jitkern.zeros(1, np.float16)
    seen = jitkern.full(n, np.nan, np.float16)
    _launch(jitkern.RawKernel(ATOMICS, "returns"), n, h, seen, np.int32(n))
    np.testing.assert_array_equal(np.sort(seen.get()), np.arange(n, dtype=np.float16))
    assert h.get()[0] == n


# ---------------------------------------------------------------------------
# type_dispatcher

DISPATCH = r"""
#include <cupy/type_dispatcher.cuh>
struct Fill {
    template <class T> __device__ void operator()(void* p, int i, int v) {
        static_cast<T*>(p)[i] = T(v);
    }
};
extern "C" __global__ void fill(void* p, int id, int n, int v) {
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < n) dtype_dispatcher(id, Fill(), p, i, v);
}
"""

CUPY_TYPE_IDS = {"int8": 0, "uint8": 1, "int16": 2, "uint16": 3, "int32": 4, "uint32": 5,
                 "int64": 6, "uint64": 7, "float16": 8, "float32": 9, "float64": 10,
                 "complex64": 11, "complex128": 12, "bool": 13}


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", sorted(CUPY_TYPE_IDS))
def test_dtype_dispatcher_calls_the_functor_with_the_dtypes_type(rng, dtype):
    n, v = 1000, int(rng.integers(1, 100))
    out = jitkern.zeros(n, dtype)
    _launch(jitkern.RawKernel(DISPATCH, "fill"), n, out, np.int32(CUPY_TYPE_IDS[dtype]),
            np.int32(n), np.int32(v))
    np.testing.assert_array_equal(out.get(), np.full(n, v).astype(dtype))


# ---------------------------------------------------------------------------
# carray.cuh: CArray, CIndexer, CArrayIterator, _floor_divide, cupy::type_traits

CARRAY = _SAME + r"""
#include <cupy/carray.cuh>
static_assert(jk_same<cupy::type_traits::conditional<true, int, float>::type, int>::v, "");
static_assert(jk_same<cupy::type_traits::conditional<false, int, float>::type, float>::v, "");
static_assert(jk_same<cupy::type_traits::enable_if<true, char>::type, char>::v, "");
static_assert(cupy::type_traits::is_same<int, int>::value && !cupy::type_traits::is_same<int, long>::value, "");
static_assert(jk_same<CArray<float, 2, false, true>::index_t, int>::v, "32-bit indexing");
static_assert(jk_same<CArray<float, 2>::index_t, ptrdiff_t>::v, "");
// a strided 3-d view, read flat (C order), by index arrays and by braced lists
extern "C" __global__ void gather(const double* src, const long long* shape,
                                  const long long* strides, double* out) {
    CArray<const double, 3> a(src, shape, strides);
    CIndexer<3> ind(shape);
    CUPY_FOR(i, a.size()) {
        ind.set(i);
        const ptrdiff_t* at = ind.get();
        out[4 * i] = a[i];
        out[4 * i + 1] = a[ind.get()];
        out[4 * i + 2] = a[{at[0], at[1], at[2]}];
        out[4 * i + 3] = at[0] * 10000 + at[1] * 100 + at[2];
    }
}
// a C-contiguous view from its shape alone, its iterator, and a strided 1-d iterator
extern "C" __global__ void walk(const double* src, int n, double* out) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    CArray<const double, 1, true> c(src, {n});
    double sum = 0;
    for (const double* it = c.begin(); it != c.end(); ++it) sum += *it;
    out[0] = sum;
    long long shape[1] = {n / 2}, strides[1] = {2 * (long long)sizeof(double)};
    CArray<const double, 1> every_other(src, shape, strides);
    double odd = 0;
    for (auto it = every_other.begin(); it != every_other.end(); it += 1) odd += *it;
    out[1] = odd;
    out[2] = every_other.end() - every_other.begin();
    CArray<const double, 0, true> one(src);
    out[3] = one[12345] + one.size();
    CIndexer<0> none;
    out[4] = none.size();
}
extern "C" __global__ void floor_divide(const long long* a, const long long* b, long long* q,
                                        double* qf, int n) {
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i >= n) return;
    q[4 * i] = _floor_divide((int)a[i], (int)b[i]);
    q[4 * i + 1] = _floor_divide(a[i], b[i]);
    q[4 * i + 2] = _floor_divide((unsigned)(a[i] & 0xffffffff), (unsigned)(b[i] & 0xffffffff));
    q[4 * i + 3] = (long long)_floor_divide((unsigned long long)a[i], (unsigned long long)b[i]);
    qf[2 * i] = _floor_divide((float)a[i] / 7.0f, (float)b[i] / 3.0f);
    qf[2 * i + 1] = _floor_divide((double)a[i] / 7.0, (double)b[i] / 3.0);
}
"""


@pytest.mark.gpu
def test_carray_and_cindexer_read_a_strided_view_as_numpy_does(rng):
    base = rng.standard_normal((7, 9, 11))
    view = base[1::2, ::-3, 2:9]  # strided, negative strides included
    shape = np.array(view.shape, np.int64)
    strides = np.array(view.strides, np.int64)
    n = view.size
    out = jitkern.full(4 * n, np.nan, np.float64)
    k = jitkern.RawKernel(CARRAY, "gather")
    # the device view's pointer is its first element, as the NumPy view's is
    dev_view = jitkern.asarray(base)[1::2, ::-3, 2:9]
    k((4,), (64,), (dev_view, jitkern.asarray(shape), jitkern.asarray(strides), out))
    got = out.get().reshape(n, 4)
    flat = view.reshape(-1)
    for col in range(3):
        np.testing.assert_array_equal(got[:, col], flat)
    idx = np.array(list(itertools.product(*map(range, view.shape))))
    np.testing.assert_array_equal(got[:, 3], idx @ [10000, 100, 1])


@pytest.mark.gpu
def test_carray_iterators_and_zero_dimensions(rng):
    n = 101
    x = rng.standard_normal(n)
    out = jitkern.full(5, np.nan, np.float64)
    jitkern.RawKernel(CARRAY, "walk")((1,), (1,), (jitkern.asarray(x), np.int32(n), out))
    got = out.get()
    np.testing.assert_allclose(got[0], x.sum(), rtol=1e-13)
    np.testing.assert_allclose(got[1], x[0:2 * (n // 2):2].sum(), rtol=1e-13)
    np.testing.assert_array_equal(got[2:], [n // 2, x[0] + 1, 1])


@pytest.mark.gpu
def test_floor_divide_is_pythons(rng):
    n = 5000
    a = rng.integers(-10**6, 10**6, n)
    b = rng.integers(-50, 50, n)
    b[::10] = 0  # an integer division by zero gives 0
    q = jitkern.full(4 * n, -7, np.int64)
    qf = jitkern.full(2 * n, np.nan, np.float64)
    _launch(jitkern.RawKernel(CARRAY, "floor_divide"), n, jitkern.asarray(a), jitkern.asarray(b),
            q, qf, np.int32(n))
    got = q.get().reshape(n, 4)

    def py(x, y):
        return [xi // yi if yi else 0 for xi, yi in zip(x.tolist(), y.tolist())]

    np.testing.assert_array_equal(got[:, 0], py(a, b))
    np.testing.assert_array_equal(got[:, 1], py(a, b))
    np.testing.assert_array_equal(got[:, 2], py(a & 0xFFFFFFFF, b & 0xFFFFFFFF))
    np.testing.assert_array_equal(got[:, 3].view(np.uint64), py(a.astype(np.uint64), b.astype(np.uint64)))
    with np.errstate(all="ignore"):
        want_f = np.floor(np.float32(a) / np.float32(7) / (np.float32(b) / np.float32(3)))
        want_d = np.floor((a / 7.0) / (b / 3.0))
    gf = qf.get().reshape(n, 2)
    np.testing.assert_array_equal(gf[:, 0], want_f.astype(np.float64))
    np.testing.assert_array_equal(gf[:, 1], want_d)


# ---------------------------------------------------------------------------
# complex.cuh's additions: log1p, log2, expm1, rint, min, max

COMPLEX_EXTRAS = r"""
#include <cupy/complex.cuh>
template <class T>
__device__ void extras(const complex<T>* z, const complex<T>* w, complex<T>* out, int n) {
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i >= n) return;
    complex<T>* o = out + 6 * i;
    o[0] = log1p(z[i]); o[1] = log2(z[i]); o[2] = expm1(z[i]); o[3] = rint(z[i]);
    o[4] = min(z[i], w[i]); o[5] = max(z[i], w[i]);
}
extern "C" __global__ void extras_f(const complex<float>* z, const complex<float>* w,
                                    complex<float>* o, int n) { extras(z, w, o, n); }
extern "C" __global__ void extras_d(const complex<double>* z, const complex<double>* w,
                                    complex<double>* o, int n) { extras(z, w, o, n); }
"""


def _lexicographic(z, w, pick_smaller):
    out = []
    for a, b in zip(z.tolist(), w.tolist()):
        if np.isnan(a.real) or np.isnan(a.imag):
            out.append(b)
        elif np.isnan(b.real) or np.isnan(b.imag):
            out.append(a)
        else:
            smaller = (a.real, a.imag) < (b.real, b.imag)
            out.append(a if smaller == pick_smaller or (a == b) else b)
    return np.array(out)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype, kernel, rtol", [(np.complex64, "extras_f", 1e-5),
                                                 (np.complex128, "extras_d", 1e-12)])
def test_complex_additions_against_numpy(rng, dtype, kernel, rtol):
    n = 20_000
    # small arguments, where log1p/expm1 matter; |Re z| stays under ~60, so expm1 of a
    # complex64 does not overflow float32 (e^88.7), which the long double reference would not
    scale = 10.0 ** rng.uniform(-5, 1.0, n)
    z = ((rng.standard_normal(n) + 1j * rng.standard_normal(n)) * scale).astype(dtype)
    w = z.copy()
    w[: n // 2] = (rng.standard_normal(n // 2) + 1j * rng.standard_normal(n // 2)).astype(dtype)
    w[n // 2: 3 * n // 4] = z.real[n // 2: 3 * n // 4] + 1j * rng.standard_normal(n // 4)  # ties
    w[::50] = complex(np.nan, 0)
    out = jitkern.full(6 * n, complex(np.nan, np.nan), dtype)
    _launch(jitkern.RawKernel(COMPLEX_EXTRAS, kernel), n, jitkern.asarray(z), jitkern.asarray(w),
            out, np.int32(n))
    got = out.get().reshape(n, 6)
    # references in long double: NumPy's complex log1p/expm1 lose the accuracy of a small z
    zl = z.astype(np.clongdouble)
    refs = [np.log(1 + zl), np.log(zl) / np.log(np.longdouble(2)), np.exp(zl) - 1]
    for col, want in enumerate(refs):
        err = np.abs(got[:, col] - want) / np.maximum(np.abs(want), np.finfo(dtype).tiny)
        assert float(err.max()) < rtol, (["log1p", "log2", "expm1"][col], float(err.max()))
    np.testing.assert_array_equal(got[:, 3], np.rint(z.real) + 1j * np.rint(z.imag))
    np.testing.assert_array_equal(got[:, 4], _lexicographic(z, w, True).astype(dtype))
    np.testing.assert_array_equal(got[:, 5], _lexicographic(z, w, False).astype(dtype))


# ---------------------------------------------------------------------------
# structview.cuh, unstructured_void.cuh, cuComplex_bridge.h, cuda_workaround.h

STRUCTS = _SAME + r"""
#include <cupy/structview.cuh>
#include <cupy/unstructured_void.cuh>
typedef cupy::StructView<cupy::raw_structview_storage<16, 8>,
                         cupy::Field<double, 0>, cupy::Field<int, 8>> Wide;
typedef cupy::StructView<cupy::raw_structview_storage<8, 4>,
                         cupy::Field<float, 4>, cupy::Field<short, 0>> Narrow;
static_assert(Wide::field_count == 2 && Wide::size == 16 && Wide::alignment == 8, "");
static_assert(jk_same<Wide::storage_type, cupy::raw_structview_storage<16, 8>>::v, "");
static_assert(cupy::is_struct_view<Wide>::value && !cupy::is_struct_view<double>::value, "");
static_assert(jk_same<decltype(Wide().at<1>()), int&>::v, "");
extern "C" __global__ void views(const Wide* in, Narrow* narrowed, Wide* widened,
                                 Wide* filled, bool* equal, cupy::UnstructuredVoid<8>* bytes,
                                 cupy::UnstructuredVoid<12>* padded, bool* same_bytes, int n) {
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i >= n) return;
    narrowed[i] = in[i];                 // field by field: double -> float, int -> short
    widened[i] = Wide(narrowed[i]);
    filled[i] = in[i].at<1>();           // every field the int
    equal[2 * i] = in[i] == widened[i];
    equal[2 * i + 1] = in[i] != in[i];
    bytes[i] = in[i].at<0>();            // a double's 8 bytes
    padded[i] = in[i].at<0>();           // ... and 4 zero bytes
    same_bytes[i] = bytes[i] == cupy::UnstructuredVoid<8>(in[i].at<0>());
}
"""

WIDE = np.dtype({"names": ["a", "b"], "formats": ["f8", "i4"], "offsets": [0, 8], "itemsize": 16})
NARROW = np.dtype({"names": ["a", "b"], "formats": ["f4", "i2"], "offsets": [4, 0], "itemsize": 8})


@pytest.mark.gpu
def test_struct_views_and_unstructured_voids_against_numpy(rng):
    n = 3000
    rec = np.zeros(n, WIDE)
    rec["a"] = rng.standard_normal(n) * 1e3
    rec["b"] = rng.integers(-30000, 30000, n)
    rec["a"][::3] = np.round(rec["a"][::3])  # these survive the float round trip: equal
    outs = [jitkern.asarray(np.full(n, 0x55, np.uint8).repeat(d.itemsize).view(d))
            for d in (NARROW, WIDE, WIDE)]
    equal = jitkern.zeros(2 * n, np.bool_)
    bytes8 = jitkern.full(8 * n, 0x55, np.uint8)
    bytes12 = jitkern.full(12 * n, 0x55, np.uint8)
    same = jitkern.zeros(n, np.bool_)
    # the record and void pointers are the headers' own class templates: checked by size
    # only where jitkern can; this test is about the headers, so no checks
    views = jitkern.RawKernel(STRUCTS, "views", check_args=False)
    _launch(views, n, jitkern.asarray(rec), *outs, equal, bytes8,
            bytes12, same, np.int32(n))
    narrowed, widened, filled = (o.get() for o in outs)
    np.testing.assert_array_equal(narrowed["a"], rec["a"].astype(np.float32))
    np.testing.assert_array_equal(narrowed["b"], rec["b"].astype(np.int16))
    np.testing.assert_array_equal(widened["a"], rec["a"].astype(np.float32).astype(np.float64))
    np.testing.assert_array_equal(filled["a"], rec["b"].astype(np.float64))
    np.testing.assert_array_equal(filled["b"], rec["b"])
    eq = equal.get().reshape(n, 2)
    want_eq = (widened["a"] == rec["a"]) & (widened["b"] == rec["b"])
    np.testing.assert_array_equal(eq[:, 0], want_eq)
    assert eq[:, 0].any() and not eq[:, 1].any()
    np.testing.assert_array_equal(bytes8.get().reshape(n, 8),
                                  np.ascontiguousarray(rec["a"]).view(np.uint8).reshape(n, 8))
    want12 = np.zeros((n, 12), np.uint8)
    want12[:, :8] = np.ascontiguousarray(rec["a"]).view(np.uint8).reshape(n, 8)
    np.testing.assert_array_equal(bytes12.get().reshape(n, 12), want12)
    assert same.get().all()


BRIDGE_AND_STD = r"""
#include <cupy/cuComplex_bridge.h>
#include <cupy/cuda_workaround.h>
extern "C" __global__ void bridge(const cuFloatComplex* a, const cuFloatComplex* b,
                                  cuFloatComplex* out, float* re, int n) {
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i >= n) return;
    out[3 * i] = cuCaddf(cuCmulf(a[i], b[i]), make_cuFloatComplex(1.0f, -2.0f));
    out[3 * i + 1] = cuCdivf(cuConjf(a[i]), b[i]);
    out[3 * i + 2] = cuCfmaf(a[i], b[i], a[i]);
    re[2 * i] = cuCabsf(a[i]) + cuCrealf(b[i]);
    re[2 * i + 1] = cuCimagf(a[i]);
}
template <class T, class = typename std::enable_if<std::is_floating_point<T>::value>::type>
__device__ T largest() { return std::numeric_limits<T>::max(); }
extern "C" __global__ void std_names(double* out) {
    static_assert(std::is_same<std::make_unsigned<int>::type, unsigned>::value, "");
    static_assert(std::is_integral<long>::value && !std::is_pointer<int>::value, "");
    static_assert(std::integral_constant<int, 3>::value == 3, "");
    static_assert(std::tuple_size<std::tuple<int, float, char>>::value == 3, "");
    auto t = std::make_tuple(1.5, 2);
    std::pair<int, double> p = std::make_pair(4, 0.25);
    out[0] = largest<float>();
    out[1] = largest<double>();
    out[2] = std::get<0>(t) + std::get<1>(t) + p.first + p.second;
    out[3] = std::numeric_limits<int>::min();
    out[4] = std::make_index_sequence<5>::size();
}
"""


@pytest.mark.gpu
def test_cucomplex_bridge_against_numpy(rng):
    n = 5000
    a = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
    b = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
    out = jitkern.full(3 * n, complex(np.nan, np.nan), np.complex64)
    re = jitkern.full(2 * n, np.nan, np.float32)
    _launch(jitkern.RawKernel(BRIDGE_AND_STD, "bridge"), n, jitkern.asarray(a),
            jitkern.asarray(b), out, re, np.int32(n))
    a128, b128 = a.astype(np.complex128), b.astype(np.complex128)
    got = out.get().reshape(n, 3)
    for col, want in enumerate([a128 * b128 + (1 - 2j), np.conj(a128) / b128, a128 * b128 + a128]):
        np.testing.assert_allclose(got[:, col], want, rtol=1e-5, atol=1e-5)
    got_re = re.get().reshape(n, 2)
    np.testing.assert_allclose(got_re[:, 0], np.abs(a128) + b.real, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(got_re[:, 1], a.imag)


@pytest.mark.gpu
def test_cuda_workaround_std_names_against_numpy():
    out = jitkern.full(5, np.nan, np.float64)
    jitkern.RawKernel(BRIDGE_AND_STD, "std_names")((1,), (1,), (out,))
    np.testing.assert_array_equal(out.get(), [np.finfo(np.float32).max, np.finfo(np.float64).max,
                                              1.5 + 2 + 4 + 0.25, np.iinfo(np.int32).min, 5])


# ---------------------------------------------------------------------------
# records of ElementwiseKernel: T::field_count and x.at<I>(), as CuPy's StructView has them

RECORD = np.dtype([("mass", "f8"), ("v", [("x", "f4"), ("y", "f4")]), ("n", "i4")], align=True)


BY_POSITION = jitkern.ElementwiseKernel(
    "T r", "float64 e, int64 c",
    "e = r.at<0>() * r.at<1>().at<0>() - r.at<1>().at<1>() + r.at<2>();"
    "c = T::field_count * 1000 + T::size * 10 + T::alignment;", "by_position")


def test_elementwise_records_by_position_compile():
    info = BY_POSITION.inspect(np.zeros(3, RECORD), np.zeros(3), np.zeros(3, np.int64), arch=ARCH)
    assert info.cubin[:4] == b"\x7fELF"
    assert "static constexpr size_t field_count = 3;" in info.source


@pytest.mark.gpu
def test_elementwise_records_read_fields_by_position(rng):
    k = BY_POSITION
    n = 4000
    rec = np.zeros(n, RECORD)
    rec["mass"] = rng.standard_normal(n)
    rec["v"]["x"] = rng.standard_normal(n)
    rec["v"]["y"] = rng.standard_normal(n)
    rec["n"] = rng.integers(-100, 100, n)
    e, c = jitkern.full(n, np.nan, np.float64), jitkern.full(n, -1, np.int64)
    k(jitkern.asarray(rec), e, c)
    want = rec["mass"] * rec["v"]["x"].astype(np.float64) - rec["v"]["y"] + rec["n"]
    np.testing.assert_allclose(e.get(), want, rtol=1e-15, atol=1e-15)
    np.testing.assert_array_equal(c.get(), 3 * 1000 + RECORD.itemsize * 10 + RECORD.alignment)


# ---------------------------------------------------------------------------
# CPU: every header compiles, alone and together in either order

HEADER_SOURCES = {
    "float16.cuh, bfloat16.cuh": (HALF_FUNCTIONS, "f16_class"),
    "atomics.cuh": (ATOMICS, "adds"),
    "type_dispatcher.cuh": (DISPATCH, "fill"),
    "carray.cuh": (CARRAY, "gather"),
    "complex.cuh": (COMPLEX_EXTRAS, "extras_d"),
    "structview.cuh, unstructured_void.cuh": (STRUCTS, "views"),
    "cuComplex_bridge.h, cuda_workaround.h": (BRIDGE_AND_STD, "std_names"),
}


@pytest.mark.parametrize("header", sorted(HEADER_SOURCES))
def test_each_header_compiles_naming_what_it_defines(header):
    source, kernel = HEADER_SOURCES[header]
    info = jitkern.RawKernel(source, kernel).inspect(arch=ARCH)
    assert info.cubin[:4] == b"\x7fELF"
    assert info.registers > 0


ALL_HEADERS = ["cupy/complex.cuh", "cupy/carray.cuh", "cupy/atomics.cuh", "cupy/math_constants.h",
               "cupy/float16.cuh", "cupy/bfloat16.cuh", "cupy/type_dispatcher.cuh",
               "cupy/cuComplex_bridge.h", "cupy/structview.cuh", "cupy/unstructured_void.cuh",
               "cupy/cuda_workaround.h"]


@pytest.mark.parametrize("order", ["forward", "backward"])
def test_all_headers_together_in_either_order(order):
    names = ALL_HEADERS if order == "forward" else ALL_HEADERS[::-1]
    src = "".join(f"#include <{h}>\n" for h in names + names)  # twice: the guards
    src += ('extern "C" __global__ void k(float16* h, double* o) {\n'
            '  h[0] = float16(CUDART_PI_F) * 2; o[0] = M_PI + _floor_divide(7.0, 2.0);\n}\n')
    info = jitkern.RawKernel(src, "k").inspect(arch=ARCH)
    assert info.cubin[:4] == b"\x7fELF"


def test_carray_alone_still_gives_complex_and_float16():
    """<cupy/carray.cuh> by itself brings complex<T> and float16 (jitkern's earlier
    carray.cuh did), as code written against it expects."""
    src = ('#include <cupy/carray.cuh>\n'
           'extern "C" __global__ void k(complex<float>* z, float16* h) {\n'
           '  z[0] = exp(z[1]); h[0] = float16(2.0f) * 3; }\n')
    info = jitkern.RawKernel(src, "k").inspect(arch=ARCH)
    assert info.cubin[:4] == b"\x7fELF"


# ---------------------------------------------------------------------------
# CuPy's default environment in elementwise kernels: its idioms with no #include

IDIOMS = jitkern.ElementwiseKernel(
    "raw float64 values, int32 m", "float64 y, int64 q",
    r"""
    CArray<const double, 1, true, true> window(&values[0], {m});
    CIndexer<1> at({m});
    at.set(m - 1);
    double total = 0;
    for (const double* it = window.begin(); it != window.end(); ++it) total += *it;
    thrust::complex<double> z(total, M_PI);
    y = abs(z) + window[at.get()] + CUDART_SQRT_2PI;
    q = _floor_divide((long long)i - 5, (long long)m);
    """, "idioms")


def test_cupys_idioms_compile_in_an_elementwise_kernel_with_no_include():
    info = IDIOMS.inspect(np.zeros(8), np.int32(8), np.zeros(8), np.zeros(8, np.int64), arch=ARCH)
    assert info.cubin[:4] == b"\x7fELF"
    assert "#include <cupy/complex.cuh>" in info.source  # its code says complex


@pytest.mark.gpu
def test_cupys_idioms_compute_numpys_values(rng):
    n, m = 1000, 37
    values = rng.standard_normal(m)
    y, q = jitkern.full(n, np.nan, np.float64), jitkern.full(n, -99, np.int64)
    IDIOMS(jitkern.asarray(values), np.int32(m), y, q)
    want = np.hypot(values.sum(), np.pi) + values[m - 1] + np.sqrt(2 * np.pi)
    np.testing.assert_allclose(y.get(), np.full(n, want), rtol=1e-14)
    np.testing.assert_array_equal(q.get(), (np.arange(n) - 5) // m)
