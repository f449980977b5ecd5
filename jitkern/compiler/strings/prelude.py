"""CUDA C++ building blocks shared by the generated elementwise and reduction kernels.

The generated source is a public artifact (``cached_code``, ``inspect().source``), so
it is self-contained: this prelude is pasted at its top instead of being a header.
"""

from __future__ import annotations

import numpy

from ...debugrecord import DEVICE_SOURCE as DEBUG_DEVICE_SOURCE
from .environment import default_includes
from .params import c_alignment, ctype_of, record_ctype, record_fields

PRELUDE = r"""
// ---- jitkern string-kernel prelude ----
template <int ND> struct _jk_dims { long long size; long long shape[ND > 0 ? ND : 1]; long long strides[ND > 0 ? ND : 1]; };
template <int ND> struct _jk_shape { long long v[ND > 0 ? ND : 1]; };

// _ind (CuPy's CIndexer). In loop_prep and after_loop only _ind.size(), the number of
// elements of the launch (after broadcasting); _ind.get() there is refused with a message.
template <typename I> struct _jk_indexer {
  I n;
  __device__ I size() const { return n; }
  template <typename J = I> __device__ const long long* get() const {
    static_assert(sizeof(J) == 0, "jitkern: _ind.get() works in the operation only (there it "
                  "is the index of the current element); use i, the flat C-order index");
    return nullptr;
  }
};

// _ind in the operation: also get(), the index of the current element (flat index i) in each
// dimension of the loop's shape: the broadcast shape, collapsed unless reduce_dims=False, as
// in CuPy. V > 1: the innermost extent in `shape` is counted in V-element vectors.
typedef decltype((char*)0 - (char*)0) _jk_ptrdiff;
template <typename I, int ND, int V> struct _jk_ind_at {
  static const int ndim = ND;
  typedef _jk_ptrdiff index_t[ND > 0 ? ND : 1];
  I n, i;
  const long long* shape;
  mutable index_t idx;
  __device__ _jk_ind_at(I n_, I i_, const long long* s) : n(n_), i(i_), shape(s) {}
  __device__ I size() const { return n; }
  __device__ const index_t& get() const {
    I r = i;
    #pragma unroll
    for (int d = ND - 1; d > 0; --d) {
      const I e = (I)shape[d] * (d == ND - 1 ? V : 1);
      const I q = r / e;
      idx[d] = r - q * e;
      r = q;
    }
    idx[0] = r;
    return idx;
  }
};

template <typename T, int V> struct alignas(sizeof(T) * V) _jk_vec { T v[V]; };
"""

# Debug builds (``debug=True``): a `raw` argument whose accesses are bounds-checked. A failed
# check records itself (site = the parameter's position) and the access goes to a sink.
DEBUG_PRELUDE = DEBUG_DEVICE_SOURCE + r"""
__device__ __forceinline__ void _jk_debug_claim_shape(int site, int axis, long long index,
                                                      long long extent, int nd,
                                                      const long long* shape) {
  if (!jk_debug_claim(site, axis, index, extent, nd)) return;
  for (int d = 0; d < nd && d < jk_debug_dims; ++d) jk_debug_record.shape[d] = shape[d];
}
// CuPy's CArray whose own accesses are checked (a helper function given it as a CArray&
// indexes it unchecked).
template <typename T, int ND, bool CONTIG, bool I32, int SITE>
struct _jk_dcarray : CArray<T, ND, CONTIG, I32> {
  typedef CArray<T, ND, CONTIG, I32> _base;
  __device__ _jk_dcarray(T* data, const _jk_dims<ND>& d) : _base(data, d.shape, d.strides) {}
  __device__ bool _jk_out(long long i) const {
    if ((unsigned long long)i < (unsigned long long)this->size()) return false;
    _jk_debug_claim_shape(SITE, -1, i, this->size(), ND, (const long long*)this->shape());
    return true;
  }
  template <typename I>
  __device__ bool _jk_out(const I (&idx)[ND > 0 ? ND : 1]) const {
    for (int d = 0; d < ND; ++d) {
      const long long v = (long long)idx[d];
      if ((unsigned long long)v >= (unsigned long long)this->shape()[d]) {
        _jk_debug_claim_shape(SITE, d, v, this->shape()[d], ND, (const long long*)this->shape());
        return true;
      }
    }
    return false;
  }
  __device__ T& operator[](ptrdiff_t i) {
    return _jk_out(i) ? *jk_debug_sink_for<T>() : _base::operator[](i);
  }
  __device__ const T& operator[](ptrdiff_t i) const {
    return _jk_out(i) ? *jk_debug_sink_for<T>() : _base::operator[](i);
  }
  template <typename I>
  __device__ T& operator[](const I (&idx)[ND > 0 ? ND : 1]) {
    return _jk_out(idx) ? *jk_debug_sink_for<T>() : _base::operator[](idx);
  }
  template <typename I>
  __device__ const T& operator[](const I (&idx)[ND > 0 ? ND : 1]) const {
    return _jk_out(idx) ? *jk_debug_sink_for<T>() : _base::operator[](idx);
  }
};
"""


def raw_view(kernel, k: int, t: str, dims: tuple, contig: bool, itemsize: int,
             writable: bool, name: str) -> str:
    """The declaration of raw parameter ``k`` as the kernel sees it: CuPy's
    ``CArray<T, ndim, c_contiguous, use_32bit_indexing>`` over ``_rp_<name>`` with the
    shape and byte strides of the ``_jk_dims`` argument ``_rd_<name>``; ``const`` for an
    input, as in CuPy (its elements read only); bounds-checked in a debug build."""
    nd = len(dims[0])
    flags = f"{_flag(contig)}, {_flag(fits_32bit(dims, itemsize))}"
    const = "" if writable else "const "
    if getattr(kernel, "debug", False):
        return f"{const}_jk_dcarray<{t}, {nd}, {flags}, {k}> {name}(_rp_{name}, _rd_{name});"
    return (f"{const}CArray<{t}, {nd}, {flags}> {name}(_rp_{name}, _rd_{name}.shape, "
            f"_rd_{name}.strides);")


def mapped_view(t: str, nd: int, contig: bool, i32: bool, writable: bool, name: str,
                shape: str, strides: str) -> str:
    """CuPy's ``_raw_<name>``: the whole of a non-raw array parameter as a CArray over the
    loop's shape with the array's (broadcast) strides, for an operation that reads other
    elements than its own (or the shape)."""
    const = "" if writable else "const "
    return (f"{const}CArray<{t}, {nd}, {_flag(contig)}, {_flag(i32)}> _raw_{name}("
            f"const_cast<{t}*>(_p_{name}), {shape}, {strides});")


def _flag(value: bool) -> str:
    return "true" if value else "false"


def fits_32bit(dims: tuple, itemsize: int) -> bool:
    """CuPy's ``_index_32_bits`` of an array of ``(shape, byte strides)``: its size and
    every byte offset in it fit an int."""
    shape, strides = dims
    size, extent = 1, itemsize
    for n, st in zip(shape, strides):
        size *= n
        extent += (n - 1) * abs(st) if n else 0
    return size < 2**31 and extent < 2**31


def debug_prelude(kernel) -> str:
    return DEBUG_PRELUDE if getattr(kernel, "debug", False) else ""


def type_name(p, dtype) -> str:
    """The C type a parameter is declared with: its placeholder name, or its dtype's C type."""
    return p.type_name if p.placeholder else ctype_of(dtype)


def _leaves(dtypes):
    """The dtypes, with each structured dtype replaced by its fields' (recursively)."""
    for d in dtypes:
        d = numpy.dtype(d).base
        if d.fields is not None and d.names:
            yield from _leaves(dt for dt, *_ in d.fields.values())
        else:
            yield d


def includes_for(dtypes, extra_code: str = "") -> str:
    """The #includes of the kernel's C++ environment: CuPy's default headers, and the ones
    its types or its code (``extra_code``) need (environment.py)."""
    return default_includes(set(_leaves(dtypes)), extra_code)


def typedefs(bound: dict) -> str:
    """``typedef float T;`` for each bound placeholder."""
    return record_definitions(bound.values()) + "".join(
        f"typedef {ctype_of(dt)} {letter};\n" for letter, dt in sorted(bound.items()))


def record_definitions(dtypes) -> str:
    """C structs for the structured dtypes among ``dtypes`` (nested ones first), laid out as
    NumPy lays them out: fields at their offsets, explicit padding, a size check."""
    done: dict = {}
    for dt in dtypes:
        _define_record(numpy.dtype(dt), done)
    return "".join(done.values())


def _define_record(dtype: numpy.dtype, done: dict) -> None:
    dtype = dtype.base
    if dtype.fields is None or dtype in done:
        return
    for field_dtype, *_ in dtype.fields.values():
        _define_record(field_dtype, done)
    name = record_ctype(dtype)
    lines, pos = [], 0
    for k, f in enumerate(record_fields(dtype)):
        if f.offset > pos:
            lines.append(f"  char _jk_pad{k}[{f.offset - pos}];\n")
        lines.append(f"  {f.ctype} {f.member}{f'[{f.count}]' if f.count > 1 else ''};\n")
        pos = f.offset + dtype.fields[f.name][0].itemsize
    align = c_alignment(dtype)
    if dtype.itemsize > -(-pos // align) * align:  # NumPy's itemsize has extra tail bytes
        lines.append(f"  char _jk_tail[{dtype.itemsize - pos}];\n")
    done[dtype] = (
        f"// numpy dtype {dtype}\n"
        f"struct alignas({align}) {name} {{\n{''.join(lines)}{_positional_access(dtype)}}};\n"
        f"static_assert(sizeof({name}) == {dtype.itemsize}, \"record layout\");\n"
        + _field_positions(dtype, name)
    )


def _positional_access(dtype: numpy.dtype) -> str:
    """The members CuPy's record type (cupy::StructView) has besides the fields' names:
    T::field_count, T::size, T::alignment, and x.at<I>(), field I in the dtype's order."""
    return (
        f"  static constexpr size_t field_count = {len(dtype.names)};\n"
        f"  static constexpr size_t size = {dtype.itemsize};\n"
        f"  static constexpr size_t alignment = {c_alignment(dtype)};\n"
        "  template <size_t I> __device__ auto& at();\n"
        "  template <size_t I> __device__ const auto& at() const;\n"
    )


def _field_positions(dtype: numpy.dtype, name: str) -> str:
    out = []
    for k, field in enumerate(f.member for f in record_fields(dtype)):
        for const in ("", "const "):
            out.append(f"template <> __device__ inline {const}auto& {name}::at<{k}>() "
                       f"{const}{{ return {field}; }}\n")
    return "".join(out)


def dims_struct(shape, strides) -> numpy.void:
    """A ``_jk_dims<ND>`` value (shape then byte strides, int64) for a launch argument."""
    nd = max(len(shape), 1)
    dt = numpy.dtype(
        [("size", "<i8"), ("shape", "<i8", (nd,)), ("strides", "<i8", (nd,))], align=True
    )
    value = numpy.zeros((), dt)
    value["size"] = int(numpy.prod(shape, dtype=numpy.int64)) if shape else 1
    if shape:
        value["shape"] = shape
        value["strides"] = strides
    return value[()]


def int64_struct(values) -> numpy.void:
    """A ``_jk_shape<ND>`` value (one int64 per dimension)."""
    nd = max(len(values), 1)
    dt = numpy.dtype([("v", "<i8", (nd,))], align=True)
    value = numpy.zeros((), dt)
    if values:
        value["v"] = values
    return value[()]
