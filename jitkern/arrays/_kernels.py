"""The kernels behind strided copies, dtype conversions and fills of arrays.

One copy kernel per (source dtype, destination dtype) and one fill kernel per
item size, each compiled on first use (then cached in memory and on disk by the
backend). Every kernel walks the destination in C order over up to ``MAXDIM``
axes, reading byte strides from a layout struct passed by value.
"""

from __future__ import annotations

import numpy

from ..toolchain.nvrtc import compile_source
from ..toolchain import discovery
from ..toolchain.target import for_device
from ..runtime import driver
from ..runtime.functions import Functions
from ..runtime.module import Function
from ..errors import JitkernValueError
from .. import dtypes
from ..layout import collapse

MAXDIM = 32
BLOCK = 256
MAX_BLOCKS = 8192

LAYOUT = numpy.dtype(
    [("n", "<i8"), ("ndim", "<i4"), ("pad", "<i4"), ("shape", "<i8", (MAXDIM,)),
     ("a", "<i8", (MAXDIM,)), ("b", "<i8", (MAXDIM,))],
    align=True,
)

_PRELUDE = r"""
struct __align__(8) jk_complex64 { float re, im; };
struct __align__(8) jk_complex128 { double re, im; };
struct __align__(8) jk_bytes16 { unsigned long long lo, hi; };
#define JK_MAXDIM @MAXDIM@
struct JkLayout {
    long long n; int ndim; int pad;
    long long shape[JK_MAXDIM]; long long a[JK_MAXDIM]; long long b[JK_MAXDIM];
};
// Byte offsets of element i (C order) in the layouts a and b.
__device__ __forceinline__ void jk_offsets(const JkLayout& L, long long i, long long& oa,
                                           long long& ob) {
    oa = 0; ob = 0;
    for (int d = L.ndim - 1; d > 0; --d) {
        long long q = i / L.shape[d];
        long long k = i - q * L.shape[d];
        i = q; oa += k * L.a[d]; ob += k * L.b[d];
    }
    oa += i * L.a[0]; ob += i * L.b[0];
}
""".replace("@MAXDIM@", str(MAXDIM))

_COPY = r"""
typedef %(dst)s jk_dst;
typedef %(src)s jk_src;
__device__ __forceinline__ jk_dst jk_convert(jk_src x) { return %(expr)s; }
extern "C" __global__ void jk_copy(char* dst, const char* src, JkLayout L) {
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < L.n; i += step) {
        long long od, os;
        jk_offsets(L, i, od, os);
        *(jk_dst*)(dst + od) = jk_convert(*(const jk_src*)(src + os));
    }
}
"""

_FILL = r"""
typedef %(bits)s jk_bits;
extern "C" __global__ void jk_fill(char* dst, jk_bits value, JkLayout L) {
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < L.n; i += step) {
        long long od, unused;
        jk_offsets(L, i, od, unused);
        *(jk_bits*)(dst + od) = value;
    }
}
"""

# Same-type copies and fills move bits: one unsigned type per item size.
_BITS = dtypes.BITS_CTYPES
_BITS_SCALAR = {1: numpy.uint8, 2: numpy.uint16, 4: numpy.uint32, 8: numpy.uint64}
_BYTES16 = numpy.dtype([("lo", "<u8"), ("hi", "<u8")], align=True)

# ---------------------------------------------------------------------------
# Conversion expressions, as tables: how to read each source kind into a C value,
# and how to make each destination from a value of a given kind.


def _kind(dt: numpy.dtype) -> str:
    if dt == numpy.bool_:
        return "bool"
    if dt.kind in "iu":
        return "int"
    if dt.kind == "c":
        return "complex"
    return "double" if dt.itemsize == 8 else "float"  # float16/bfloat16 read as float


_READ = {"float16": "__half2float(x)", "bfloat16": "__bfloat162float(x)"}

_TO_HALF = {"double": "__double2half({v})", "float": "__float2half_rn({v})"}
_TO_BF16 = {"double": "__double2bfloat16({v})", "float": "__float2bfloat16_rn({v})"}


def convert_expr(src: numpy.dtype, dst: numpy.dtype) -> str:
    """A C++ expression turning ``x`` (of ``src``'s C type) into ``dst`` as NumPy casts it
    (complex to real keeps the real part; anything to bool is ``!= 0``)."""
    value = _READ.get(src.name, "x")
    kind = _kind(src)
    dst_type = dtypes.ctype(dst)
    if kind == "complex":
        if dst.kind == "c":
            part = dtypes.ctype(numpy.dtype(f"f{dst.itemsize // 2}"))
            return f"jk_dst{{({part})x.re, ({part})x.im}}"
        if dst == numpy.bool_:
            return "(x.re != 0 || x.im != 0)"
        value, kind = "x.re", ("double" if src.itemsize == 16 else "float")
    if dst == numpy.bool_:
        return value if kind == "bool" else f"({value} != 0)"
    if dst.kind == "c":
        part = dtypes.ctype(numpy.dtype(f"f{dst.itemsize // 2}"))
        return f"jk_dst{{({part})({value}), ({part})0}}"
    if dst.name == "float16":
        return _TO_HALF.get(kind, "__float2half_rn((float)({v}))").format(v=value)
    if dst.name == "bfloat16":
        return _TO_BF16.get(kind, "__float2bfloat16_rn((float)({v}))").format(v=value)
    return f"({dst_type})({value})"


def _headers(*dts: numpy.dtype) -> str:
    names = {dt.name for dt in dts}
    lines = []
    if "float16" in names:
        lines.append("#include <cuda_fp16.h>")
    if "bfloat16" in names:
        lines.append("#include <cuda_bf16.h>")
    return "\n".join(lines)


def copy_source(src: numpy.dtype, dst: numpy.dtype) -> str:
    if src == dst:
        bits = _BITS[src.itemsize]
        body = _COPY % {"dst": bits, "src": bits, "expr": "x"}
        return _PRELUDE + body
    body = _COPY % {"dst": dtypes.ctype(dst), "src": dtypes.ctype(src),
                    "expr": convert_expr(src, dst)}
    return _headers(src, dst) + _PRELUDE + body


def fill_source(itemsize: int) -> str:
    return _PRELUDE + _FILL % {"bits": _BITS[itemsize]}


def _compile(source: str, capability, symbol: str):
    """``source`` for the current device, whose compute capability is ``capability``."""
    arch = for_device(capability, driver.driver_version())
    return compile_source(source, arch=arch, program_name=f"jitkern_array_{symbol}.cu")


_functions = Functions()
driver.at_start(discovery.warm_up)
driver.resets(globals(), _functions=Functions)  # fresh Functions under driver.use(fake)

#: A simulated device's ``run_array_kernel`` while one is the driver (sim/device.py): the
#: kernels below then run from their C source in the simulator, never compiled.
_simulated = None
driver.resets(globals(), _simulated=driver.source_runner)


def _function(key: tuple, source_fn, symbol: str) -> Function:
    """The kernel ``key`` names for the current device: compiled for its arch (the source
    made by ``source_fn()`` only then), loaded there."""
    fn = _functions.current(key)
    if fn is None:
        device_id = driver.current_device_id()
        capability = driver.compute_capability(device_id)
        fn = _functions.built(key, capability) or Function(
            _compile(source_fn(), capability, symbol), symbol)
        _functions.add(key, capability, device_id, fn)
    return fn


def _layout_record(shape, a, b) -> numpy.void:
    rec = numpy.zeros((), LAYOUT)
    ndim = len(shape)
    if ndim > MAXDIM:
        raise JitkernValueError(f"jitkern array kernels handle at most {MAXDIM} non-mergeable axes, "
                         f"got {ndim}")
    n = 1
    for d in shape:
        n *= d
    rec["n"] = n
    rec["ndim"] = ndim
    rec["shape"][:ndim] = shape
    rec["a"][:ndim] = a
    rec["b"][:ndim] = b
    return rec[()]


def _grid(n: int) -> int:
    return max(1, min((n + BLOCK - 1) // BLOCK, MAX_BLOCKS))


def copy(dst_ptr: int, dst_strides, src_ptr: int, src_strides, shape, src_dtype, dst_dtype,
         stream: int) -> None:
    """``dst[...] = src`` elementwise (casting), for any byte strides; current device."""
    dims, (ds, ss) = collapse(shape, dst_strides, src_strides)
    rec = _layout_record(dims, ds, ss)
    if _simulated is not None:  # a simulated device: the same C, run in the simulator
        _simulated(copy_source(src_dtype, dst_dtype), "jk_copy", _grid(int(rec["n"])), BLOCK,
                   (dst_ptr, src_ptr, rec))
        return
    key = ("copy", src_dtype, dst_dtype) if src_dtype != dst_dtype else ("copy", src_dtype.itemsize)
    fn = _function(key, lambda: copy_source(src_dtype, dst_dtype), "jk_copy")
    fn.launch(_grid(int(rec["n"])), BLOCK, (dst_ptr, src_ptr, rec), stream=stream)


def fill(dst_ptr: int, dst_strides, shape, raw: bytes, stream: int) -> None:
    """Write the item ``raw`` (bytes of the array's dtype) to every element."""
    itemsize = len(raw)
    dims, (ds,) = collapse(shape, dst_strides)
    if itemsize == 16:
        value = numpy.frombuffer(raw, _BYTES16)[0]
    else:
        value = numpy.frombuffer(raw, _BITS_SCALAR[itemsize])[0]
    rec = _layout_record(dims, ds, [0] * len(dims))
    if _simulated is not None:
        _simulated(fill_source(itemsize), "jk_fill", _grid(int(rec["n"])), BLOCK,
                   (dst_ptr, value, rec))
        return
    fn = _function(("fill", itemsize), lambda: fill_source(itemsize), "jk_fill")
    fn.launch(_grid(int(rec["n"])), BLOCK, (dst_ptr, value, rec), stream=stream)
