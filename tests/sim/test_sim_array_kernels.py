"""jitkern's own array kernels (jitkern/arrays/_kernels.py: strided copies with dtype
conversion, fills) run in the simulator as written, through the C subset's structs,
reference parameters and char* bytes read as another type (issue 19).

Each launch is the one the simulated device makes: ``RawKernel(copy_source(s, d),
"jk_copy").simulate((grid,), (256,), (dst_u8, src_u8, layout))`` with the byte arrays from
each array's pointer to the end of its allocation and the layout record of
``_kernels._layout_record`` over ``layout.collapse``'d strides. Results are compared with
NumPy's ``astype`` byte for byte, and the bytes around the destination must stay poisoned."""

import re
import time

import numpy as np
import pytest

import jitkern
from jitkern.arrays import _kernels as K
from jitkern.layout import collapse
from jitkern.errors import KernelArgumentError, KernelAssertionError
from jitkern.sim import vector

try:
    import ml_dtypes
except ImportError:  # the bfloat16 rows skip
    ml_dtypes = None

NAMES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "float16", "float32", "float64", "complex64", "complex128", "bfloat16"]
POISON = 0xA5


def _dtype(name):
    if name == "bfloat16":
        if ml_dtypes is None:
            pytest.skip("bfloat16 needs ml_dtypes")
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def _is_float(dt):
    return dt.kind in "fc" or dt.name == "bfloat16"


def _values(rng, src, dst, shape):
    """Random values of ``src`` that ``dst`` holds as C converts them: floats going to
    integers stay inside the destination's range (beyond it, and NaN, C leaves undefined)."""
    n = int(np.prod(shape))
    if src.kind == "b":
        return rng.integers(0, 2, n).astype(bool).reshape(shape)
    if src.kind in "iu":
        info = np.iinfo(src)
        return rng.integers(info.min, info.max, n, dtype=src, endpoint=True).reshape(shape)
    if dst.kind in "iu":
        info = np.iinfo(dst)
        # 2% below the limit: rounding to a narrow source type must not reach past it
        top = 0.98 * min(float(info.max), 60000.0 if src.itemsize == 2 else 1e15)
        low = 0.0 if dst.kind == "u" else -min(top, -float(info.min))
        x = rng.uniform(low, top, n) * rng.choice([1.0, 1e-3, 1e-6], n)
        return x.astype(src).reshape(shape)
    x = rng.standard_normal(n) * rng.choice([1.0, 1e3, 1e-3, 1e30, 1e-30], n)
    specials = [np.inf, -np.inf, np.nan, -0.0, 0.0, 65504.0, 65520.0, 1e-8]
    x[rng.choice(n, min(n, len(specials)), replace=False)] = specials[: min(n, len(specials))]
    if src.kind == "c":
        x = x + 1j * rng.standard_normal(n) * rng.choice([1.0, 0.0, 1e5], n)
    return x.astype(src).reshape(shape)


def _layouts(rng, values):
    """A few views of ``values`` (C-ordered, 3-D): transposed, reversed and strided,
    broadcast (a zero stride), and one that merges to a single axis."""
    b = np.broadcast_to(values[:, :1, :], values.shape)
    return [values.transpose(2, 0, 1), values[::-1, ::2, 1:], b, values,
            values[:, rng.integers(0, values.shape[1])][:, ::-1]]


def _offset(view, base) -> int:
    return view.__array_interface__["data"][0] - base.__array_interface__["data"][0]


def _copy(launch, src_view, src_base, dst_dtype, dst_order=None):
    """``dst[...] = src_view`` by the copy kernel into a strided view of a poisoned buffer
    (on the GPU or simulated): (the view, the buffer, the kernel)."""
    shape = src_view.shape
    order = tuple(range(len(shape))) if dst_order is None else dst_order
    big = [2 * n + 1 for n in shape]
    memory = tuple(big[k] for k in np.argsort(order))  # transposed by order: big
    buffer = np.full(int(np.prod(big)) * dst_dtype.itemsize, POISON, np.uint8).view(dst_dtype)
    buffer = buffer.reshape(memory)
    dst = buffer.transpose(order)[tuple(slice(1, None, 2) for _ in shape)]
    assert dst.shape == shape
    dims, (ds, ss) = collapse(shape, dst.strides, src_view.strides)
    rec = K._layout_record(dims, ds, ss)
    k = jitkern.RawKernel(K.copy_source(src_view.dtype, dst_dtype), "jk_copy")
    out = launch.to_device(buffer.reshape(-1).view(np.uint8))
    src = launch.to_device(src_base.reshape(-1).view(np.uint8))
    launch(k)((K._grid(int(rec["n"])),), (K.BLOCK,),
              (out[_offset(dst, buffer):], src[_offset(src_view, src_base):], rec))
    buffer.reshape(-1).view(np.uint8)[...] = launch.get(out)
    return dst, buffer, k


def _bf16_rounded_once(x):
    """float64 -> bfloat16 rounded once (CUDA's __double2bfloat16; ml_dtypes' astype rounds
    to float32 first): where float32 lands on a tie of two bfloat16 values, step off it
    toward ``x``."""
    x = np.asarray(x, np.float64)
    f = x.astype(np.float32)
    bits = f.view(np.uint32).copy()
    tie = ((bits & 0xFFFF) == 0x8000) & np.isfinite(f) & (f.astype(np.float64) != x)
    up = np.abs(x) > np.abs(f.astype(np.float64))
    bits[tie & up] += 1
    bits[tie & ~up] -= 1
    return bits.view(np.float32).astype(ml_dtypes.bfloat16)


def _expected(src_view, dst_dtype):
    with np.errstate(all="ignore"):
        if dst_dtype.name == "bfloat16" and src_view.dtype.kind in "fc" and (
                src_view.dtype.itemsize in (8, 16)):
            return _bf16_rounded_once(src_view.real if src_view.dtype.kind == "c" else src_view)
        if src_view.dtype.kind == "c" and dst_dtype.kind != "c" and dst_dtype.kind != "b":
            return src_view.real.astype(dst_dtype)
        return src_view.astype(dst_dtype)


def _same_bits_nan_aside(got, want) -> bool:
    """Bit for bit, except that a NaN need only be a NaN: a conversion's NaN payload is not
    NumPy's to say (an H200 writes the canonical NaN where NumPy keeps the source's bits)."""
    if want.dtype.kind == "c":  # real and imaginary parts, each a float
        part = np.dtype(f"f{want.dtype.itemsize // 2}")
        got, want = got.view(part), want.view(part)
    if want.dtype.kind not in "fV":  # integers and bools: every bit
        return got.tobytes() == want.tobytes()
    nan = np.isnan(want.astype(np.float64))
    if not np.array_equal(np.isnan(got.astype(np.float64)), nan):
        return False
    bits = np.dtype(f"u{want.dtype.itemsize}")
    return np.array_equal(got.view(bits)[~nan], want.view(bits)[~nan])


@pytest.mark.parametrize("src_name", NAMES)
def test_astype_of_every_dtype_pair_matches_numpy_on_strided_layouts(src_name, launch, rng):
    src = _dtype(src_name)
    for dst_name in NAMES:
        if dst_name == "bfloat16" and ml_dtypes is None:
            continue
        dst_dtype = _dtype(dst_name)
        shape = tuple(int(n) for n in rng.integers(2, 5, 3))
        values = _values(rng, src, dst_dtype, shape)
        layouts = _layouts(rng, values)
        view = layouts[rng.integers(len(layouts))]
        order = None if rng.random() < 0.5 else tuple(rng.permutation(view.ndim))
        dst, buffer, k = _copy(launch, view, values, dst_dtype, order)
        want = np.ascontiguousarray(_expected(view, dst_dtype))
        got = np.ascontiguousarray(dst)
        assert _same_bits_nan_aside(got, want), (
            f"{src} -> {dst_dtype}: got {got.ravel()[:8]}, NumPy {want.ravel()[:8]} "
            f"(from {view.ravel()[:8]})")
        outside = np.ones(buffer.shape, bool)
        outside.transpose(order or range(view.ndim))[(slice(1, None, 2),) * view.ndim] = 0
        around = buffer.view(np.uint8).reshape(*buffer.shape, dst_dtype.itemsize)[outside]
        assert (around == POISON).all(), f"{src} -> {dst_dtype} wrote outside the destination"


@pytest.mark.parametrize("itemsize", [1, 2, 4, 8, 16])
def test_fills_of_every_item_size_on_strided_views(itemsize, launch, rng):
    dt = np.dtype(f"V{itemsize}")
    base = np.frombuffer(rng.bytes(7 * 9 * itemsize), dt).reshape(7, 9).copy()
    want = base.copy()
    pick = int(rng.integers(3))
    view = [base[1::2, ::-3], base.T[2:, 1:5], base][pick]
    raw = rng.bytes(itemsize)
    [want[1::2, ::-3], want.T[2:, 1:5], want][pick][...] = np.frombuffer(raw, dt)[0]
    dims, (ds,) = collapse(view.shape, view.strides)
    rec = K._layout_record(dims, ds, [0] * len(dims))
    value = (np.frombuffer(raw, K._BYTES16)[0] if itemsize == 16
             else np.frombuffer(raw, K._BITS_SCALAR[itemsize])[0])
    k = jitkern.RawKernel(K.fill_source(itemsize), "jk_fill")
    memory = launch.to_device(base.reshape(-1).view(np.uint8))
    launch(k)((K._grid(int(rec["n"])),), (K.BLOCK,), (memory[_offset(view, base):], value, rec))
    assert launch.get(memory).tobytes() == want.tobytes()
    if launch.simulated:
        assert k.simulate.last_path == "vector"


@pytest.mark.parametrize("itemsize", [1, 2, 4, 8, 16])
def test_same_type_copies_move_bits(itemsize, launch, rng):
    """Same-dtype copies go through the unsigned type of the item size (jk_bytes16 for 16):
    NaN payloads and the bytes of any 16-byte item arrive unchanged."""
    dt = {1: "u1", 2: "f2", 4: "f4", 8: "f8", 16: "c16"}[itemsize]
    values = np.frombuffer(rng.bytes(5 * 6 * itemsize), dt).reshape(5, 6).copy()
    view = values.T[::-1]
    dst, buffer, _ = _copy(launch, view, values, np.dtype(dt))
    assert np.ascontiguousarray(dst).tobytes() == np.ascontiguousarray(view).tobytes()


def test_a_large_astype_runs_vectorised_in_well_under_a_second(rng, monkeypatch):
    monkeypatch.setattr(vector, "DIFFERENTIAL", False)  # only the vectorised path is timed
    n = 100_000
    pairs = [("float64", "float16"), ("complex64", "complex128"), ("int64", "float32")]
    if ml_dtypes is not None:
        pairs.append(("float32", ml_dtypes.bfloat16))
    for src, dst in pairs:
        x = (rng.standard_normal(n) * 1000).astype(src)
        k = jitkern.RawKernel(K.copy_source(x.dtype, np.dtype(dst)), "jk_copy")
        out = np.full(n, np.nan, dst)
        rec = K._layout_record((n,), (out.itemsize,), (x.itemsize,))
        args = (out.view(np.uint8), x.view(np.uint8), rec)
        k.simulate((K._grid(n),), (K.BLOCK,), args)  # translated and typed once
        out[...] = np.nan
        start = time.perf_counter()
        k.simulate((K._grid(n),), (K.BLOCK,), args)
        took = time.perf_counter() - start
        assert k.simulate.last_path == "vector"
        np.testing.assert_array_equal(out.view(np.uint8), x.astype(dst).view(np.uint8))
        assert took < 2.0, f"{src} -> {dst}: {took:.2f} s for 10^5 elements"


def _line_of(source, text):
    return next(n for n, line in enumerate(source.split("\n"), 1) if text in line)


@pytest.mark.parametrize("dst_name, where", [("float32", "src"), ("complex64", "dst")])
def test_a_misaligned_element_fails_as_the_gpu_faults_naming_kernel_and_line(dst_name, where):
    src = np.arange(8, dtype=np.float64)
    dst = np.zeros(12, np.float64)
    rec = K._layout_record((3,), (8 if dst_name == "complex64" else 4,), (8,))
    src_u8, dst_u8 = src.view(np.uint8), dst.view(np.uint8)
    if where == "src":
        src_u8 = src_u8[4:]  # 4 bytes past an 8-byte boundary: a double cannot be read there
    else:
        dst_u8 = dst_u8[4:]  # jk_complex64 is __align__(8)
    source = K.copy_source(src.dtype, np.dtype(dst_name))
    k = jitkern.RawKernel(source, "jk_copy")
    with pytest.raises(KernelAssertionError) as info:
        k.simulate((1,), (256,), (dst_u8, src_u8, rec))
    line = _line_of(source, "*(jk_dst*)(dst + od) =")
    message = str(info.value)
    assert f"RawKernel 'jk_copy' line {line}" in message
    assert f"misaligned address: {where} + a byte offset that is not a multiple of 8" in message


def test_a_fault_leaves_the_writes_of_the_threads_before_it(rng, monkeypatch):
    """Element 256 (thread 0's second pass of the grid-stride loop) is misaligned: the
    vectorised run has written the first pass when it stops, so it puts the memory back and
    the launch reruns per thread, where thread 0 faults first: only element 0 is written."""
    monkeypatch.setattr(vector, "DIFFERENTIAL", False)  # the vectorised run, then the rerun
    src = rng.standard_normal(512)
    dst = np.full(4200, POISON, np.uint8)
    rec = K._layout_record((2, 256), (2052, 8), (2048, 8))  # dst row 1 starts 4 bytes off
    k = jitkern.RawKernel(K.copy_source(src.dtype, src.dtype), "jk_copy")
    with pytest.raises(KernelAssertionError, match=r"misaligned address: dst .* thread \(0,"):
        k.simulate((1,), (256,), (dst, src.view(np.uint8), rec))
    assert dst[:8].tobytes() == src[:1].tobytes()
    assert (dst[8:] == POISON).all()
    assert k.simulate.last_path == "threads" and "a check failed" in k.simulate.why_threads


def test_a_pointer_below_its_allocation_is_out_of_bounds():
    src = np.arange(4, dtype=np.float32)
    dst = np.zeros(4, np.float32)
    rec = K._layout_record((4,), (4,), (-4,))  # reads src[0], src[-1], ...: before the array
    k = jitkern.RawKernel(K.copy_source(src.dtype, dst.dtype), "jk_copy")
    with pytest.raises(KernelAssertionError, match=r"index \(-4,\) is out of bounds for src__as_"):
        k.simulate((1,), (256,), (dst.view(np.uint8), src.copy().view(np.uint8), rec))


def test_double_to_half_and_bfloat16_round_once_at_ties(launch):
    """Where float32 rounding would land on a tie, __double2half and __double2bfloat16 still
    round the double once (the half's is NumPy's own astype)."""
    half_tie, bf_tie = 1 + 2.0**-11, 1 + 2.0**-8  # midway between neighbours
    x = np.array([half_tie + 2.0**-40, half_tie - 2.0**-40, -(half_tie + 2.0**-40),
                  bf_tie + 2.0**-40, bf_tie - 2.0**-40, 3.0e38, 65519.999])
    assert (x.astype(np.float32).astype(np.float16) != x.astype(np.float16)).any()
    got, _, _ = _copy(launch, x, x, np.dtype(np.float16))
    np.testing.assert_array_equal(got.view(np.uint16), x.astype(np.float16).view(np.uint16))
    if ml_dtypes is not None:
        got, _, _ = _copy(launch, x, x, np.dtype(ml_dtypes.bfloat16))
        want = _bf16_rounded_once(x)
        assert float(want[3]) == 1 + 2.0**-7 and float(want[4]) == 1.0
        np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))


def test_a_layout_record_of_another_layout_is_refused_naming_the_field():
    """Same size and field names as JkLayout, but 'shape' after 'a': not the C struct."""
    bad = np.zeros((), [("n", "<i8"), ("ndim", "<i4"), ("pad", "<i4"), ("a", "<i8", (32,)),
                        ("shape", "<i8", (32,)), ("b", "<i8", (32,))])[()]
    assert bad.dtype.itemsize == K.LAYOUT.itemsize
    k = jitkern.RawKernel(K.fill_source(4), "jk_fill")
    out = np.zeros(4, np.uint8)
    with pytest.raises(KernelArgumentError) as info:
        k.simulate((1,), (256,), (out, np.uint32(1), bad))
    message = str(info.value)
    assert "JkLayout" in message and "'shape'" in message
    assert "argument 2 (L)" in message
    assert (out == 0).all()


# -- the same constructs in user kernels, and their near misses ------------------------------

STRUCTS = r"""
#include <cuda_fp16.h>
#define NPICK 4
typedef float real;
struct __align__(8) pair { real lo, hi; };
struct Params { long long n; int pad; long long pick[NPICK]; real scale; };
__device__ __forceinline__ pair split(real v, const Params& P, int& count) {
    count += 1;
    return pair{v * P.scale, v - P.scale};
}
__device__ void bump(long long& k, int by) { k += by; if (k > 100) { return; } k += 1; }
extern "C" __global__ void k(char* out, const float* x, Params P, int* counts) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= P.n) return;
    int c = 0;
    pair p = split(x[P.pick[t % NPICK]], P, c);
    split(p.lo, P, c);
    pair* q = (pair*)(out + t * sizeof(pair));
    q->lo = p.lo;
    (q + 0)->hi = p.hi;
    long long k = t;
    bump(k, 2);
    *(long long*)(out + (P.n + t) * 8) = k;
    *((__half*)(out + 16 * P.n + 2 * t)) = __double2half((double)p.hi);
    counts[t] = c;
}
"""


def test_structs_references_and_byte_views_in_a_user_kernel(launch, rng):
    n = int(rng.integers(5, 40))
    x = rng.standard_normal(8).astype(np.float32)
    params_t = np.dtype([("n", "<i8"), ("pad", "<i4"), ("pick", "<i8", (4,)),
                         ("scale", "<f4")], align=True)
    params = np.zeros((), params_t)
    params["n"], params["pick"] = n, rng.integers(0, 8, 4)
    params["scale"] = rng.standard_normal()
    k = jitkern.RawKernel(STRUCTS, "k")
    out = launch.full(18 * n, POISON, np.uint8)
    counts = launch.full(n, -1, np.int32)
    launch(k)((1,), (64,), (out, launch.to_device(x), params[()], counts))
    got = launch.get(out)
    t = np.arange(n)
    v = x[params["pick"][t % 4]]
    scale = np.float32(params["scale"])
    pairs = got[: 8 * n].view(np.float32).reshape(n, 2)
    np.testing.assert_array_equal(pairs[:, 0], v * scale)
    np.testing.assert_array_equal(pairs[:, 1], v - scale)
    np.testing.assert_array_equal(got[8 * n: 16 * n].view(np.int64), t + 3)
    np.testing.assert_array_equal(got[16 * n:].view(np.float16), (v - scale).astype(np.float16))
    np.testing.assert_array_equal(launch.get(counts), np.full(n, 2))


COMPLEX_FIELD = r"""
#include <cupy/complex.cuh>
struct S { char c; complex<float> z; float w; };
extern "C" __global__ void fields(S s, float* out) {
    out[0] = s.z.real(); out[1] = s.z.imag(); out[2] = s.w; out[3] = s.c;
}
"""


def test_a_complex_field_of_a_struct_sits_where_c_puts_it(launch, rng):
    # complex<float> is aligned to 8 bytes in C (NumPy says 4): z at byte 8, w at 16
    dt = np.dtype({"names": ["c", "z", "w"], "formats": ["i1", "c8", "f4"],
                   "offsets": [0, 8, 16], "itemsize": 24})
    rec = np.zeros((), dt)
    rec["c"] = rng.integers(-100, 100)
    rec["z"] = complex(*rng.standard_normal(2).astype(np.float32))
    rec["w"] = rng.standard_normal()
    out = launch.poisoned(4, np.float32)
    launch(jitkern.RawKernel(COMPLEX_FIELD, "fields"))((1,), (1,), (rec[()], out))
    want = np.array([rec["z"].real, rec["z"].imag, rec["w"], rec["c"]], np.float32)
    np.testing.assert_array_equal(launch.get(out), want)


NEAR_MISSES = [
    ('extern "C" __global__ void f(float* x) {\n  int* p = (int*)(x + 1);\n  p[0] = 1;\n}',
     "a cast to a pointer type (only a char* kernel parameter's bytes", 2),
    ('__device__ float rd(const char* p) {\n  return *(const float*)p;\n}\n'
     'extern "C" __global__ void f(char* x) { }', "only a char* kernel parameter's bytes", 2),
    ('extern "C" __global__ void f(int* x) {\n  int& r = x[0];\n}', "a reference variable", 2),
    ('struct P { int a; };\n__device__ void g(P& p) { }\n'
     'extern "C" __global__ void f(int* x) { }', "struct P passed by non-const reference", 2),
    ('struct P { int a[2]; };\nextern "C" __global__ void f(int* x) {\n  P p;\n}',
     "a struct local with an array field (a)", 3),
    ('struct P { int a, b; };\nextern "C" __global__ void f(int* x) {\n'
     '  P p = P{1, 2, 3};\n}', "3 initializers for struct P of 2 fields", 3),
    ('struct P { int a, b; };\nextern "C" __global__ void f(int* x, P p) {\n  x[0] = p.z;\n}',
     "field 'z', which struct P has not (its fields: a, b)", 3),
    ('#include <cuda_fp8.h>\nextern "C" __global__ void f(int* x) { }',
     "the header <cuda_fp8.h>", 1),
    ('extern "C" __global__ void f(int& x) { }', "a reference parameter of a __global__", 1),
    ('struct P { int a; };\nextern "C" __global__ void f(char* x) {\n'
     '  P* p = (P*)(x + 1);\n  p->b = 0;\n}', "field 'b'", 4),
    ('struct P { int a; };\nextern "C" __global__ void f(\n  P* p) { }',
     "a pointer to struct P as a parameter", 3),
    ('struct P { int a; };\nextern "C" __global__ void f(int* x) {\n  P v;\n'
     '  P* q = &v;\n}', "the address of a local variable", 4),
    ('struct P { int a[2]; };\nextern "C" __global__ void f(int* x, P p, P w) {\n'
     '  p = w;\n}', "an assignment of struct P, which has array fields", 3),
    ('struct P { int a[2]; };\n__device__ void g(P p) {\n  p.a[0]++;\n}\n'
     'extern "C" __global__ void f(int* x) { }', "a write to an array field of a struct", 3),
]


@pytest.mark.parametrize("code, construct, line", NEAR_MISSES)
def test_near_misses_are_refused_naming_construct_and_line(code, construct, line):
    k = jitkern.RawKernel(code, "f")
    with pytest.raises(jitkern.CompileError) as info:
        k.simulate((1,), (1,), (np.zeros(4, np.int32),))
    message = str(info.value)
    assert construct in message
    assert re.search(rf"RawKernel 'f' line {line}\b", message), message
