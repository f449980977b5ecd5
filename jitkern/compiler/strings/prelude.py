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

// A `raw` argument: indexed by hand, like CuPy's CArray.
template <typename T, int ND, bool CONTIG>
struct _jk_carray {
  T* data_;
  long long size_;
  const long long* shape_;
  const long long* strides_;
  __device__ _jk_carray(T* data, const _jk_dims<ND>& d)
      : data_(data), size_(d.size), shape_(d.shape), strides_(d.strides) {}
  __device__ long long size() const { return size_; }
  __device__ const long long* shape() const { return shape_; }
  __device__ const long long* strides() const { return strides_; }
  __device__ T* data() const { return data_; }
  __device__ T& operator[](long long i) const {
    if (CONTIG) return data_[i];
    char* p = reinterpret_cast<char*>(data_);
    for (int d = ND - 1; d > 0; --d) {
      p += strides_[d] * (i % shape_[d]);
      i /= shape_[d];
    }
    if (ND > 0) p += strides_[0] * i;
    return *reinterpret_cast<T*>(p);
  }
  template <typename I>
  __device__ T& operator[](const I (&idx)[ND > 0 ? ND : 1]) const {
    char* p = reinterpret_cast<char*>(data_);
    for (int d = 0; d < ND; ++d) p += strides_[d] * (long long)idx[d];
    return *reinterpret_cast<T*>(p);
  }
};

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
template <typename T, int ND, bool CONTIG, int SITE>
struct _jk_dcarray : _jk_carray<T, ND, CONTIG> {
  typedef _jk_carray<T, ND, CONTIG> _base;
  __device__ _jk_dcarray(T* data, const _jk_dims<ND>& d) : _base(data, d) {}
  __device__ T& operator[](long long i) const {
    if ((unsigned long long)i >= (unsigned long long)this->size_) {
      _jk_debug_claim_shape(SITE, -1, i, this->size_, ND, this->shape_);
      return *jk_debug_sink_for<T>();
    }
    return _base::operator[](i);
  }
  template <typename I>
  __device__ T& operator[](const I (&idx)[ND > 0 ? ND : 1]) const {
    for (int d = 0; d < ND; ++d) {
      const long long v = (long long)idx[d];
      if ((unsigned long long)v >= (unsigned long long)this->shape_[d]) {
        _jk_debug_claim_shape(SITE, d, v, this->shape_[d], ND, this->shape_);
        return *jk_debug_sink_for<T>();
      }
    }
    return _base::operator[](idx);
  }
};
"""


def raw_view_type(kernel, k: int, t: str, nd: int, contig: str) -> str:
    """The C++ type of raw parameter ``k``'s view: checked in a debug build."""
    if getattr(kernel, "debug", False):
        return f"_jk_dcarray<{t}, {nd}, {contig}, {k}>"
    return f"_jk_carray<{t}, {nd}, {contig}>"


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
