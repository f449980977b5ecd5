"""Debug mode's record: the C++ that every debug build carries and its host layout.

The compiler writes :data:`DEVICE_SOURCE` into debug builds (JIT and string kernels) and
numbers each checked access as a :class:`Site`; the runtime (runtime/debugcheck.py) reads
the record back through :data:`RECORD_DTYPE` after a launch and names the failing site.
Both stages read this one description, so it is ground: it imports nothing of jitkern.
"""

from __future__ import annotations

import dataclasses

import numpy

#: The name of the record in every debug module.
RECORD_NAME = "jk_debug_record"
MAX_DIMS = 8  # dimensions of the shape kept in the record (more are shown as "...")
SINK_BYTES = 1024

#: C++ shared by every debug build (JIT kernels and string kernels), at global scope.
DEVICE_SOURCE = r"""
// ---- jitkern debug mode: the first failed bounds check of a launch is recorded here ----
constexpr int jk_debug_dims = %(dims)d;  // dimensions of the shape kept
struct jk_debug_record_t {
  unsigned int flag; int site; int axis; int ndim;
  long long index; long long extent;
  long long shape[%(dims)d];
  unsigned int thread[3]; unsigned int block[3];
};
__device__ jk_debug_record_t jk_debug_record;
// A failing access reads or writes here instead of out of bounds.
__device__ __align__(16) unsigned char jk_debug_sink[%(sink)d];
template <class T> __device__ __forceinline__ T* jk_debug_sink_for() {
  static_assert(sizeof(T) <= %(sink)d, "jitkern debug mode: element type too large");
  return reinterpret_cast<T*>(jk_debug_sink);
}
// Claims the record for the first failed check and fills it in, except the shape, which
// the caller writes when this returns true (no address of the caller's shape is taken,
// so arrays stay in registers on the path that passes).
__device__ __noinline__ bool jk_debug_claim(int site, int axis, long long index,
                                            long long extent, int ndim) {
  if (atomicCAS(&jk_debug_record.flag, 0u, 1u) != 0u) return false;  // not the first
  jk_debug_record.site = site;
  jk_debug_record.axis = axis;
  jk_debug_record.ndim = ndim;
  jk_debug_record.index = index;
  jk_debug_record.extent = extent;
  jk_debug_record.thread[0] = threadIdx.x;
  jk_debug_record.thread[1] = threadIdx.y;
  jk_debug_record.thread[2] = threadIdx.z;
  jk_debug_record.block[0] = blockIdx.x;
  jk_debug_record.block[1] = blockIdx.y;
  jk_debug_record.block[2] = blockIdx.z;
  return true;
}
""" % {"dims": MAX_DIMS, "sink": SINK_BYTES}

#: The host view of ``jk_debug_record_t`` (natural C alignment).
RECORD_DTYPE = numpy.dtype(
    [
        ("flag", "<u4"),
        ("site", "<i4"),
        ("axis", "<i4"),
        ("ndim", "<i4"),
        ("index", "<i8"),
        ("extent", "<i8"),
        ("shape", "<i8", (MAX_DIMS,)),
        ("thread", "<u4", (3,)),
        ("block", "<u4", (3,)),
    ],
    align=True,
)


@dataclasses.dataclass(frozen=True)
class Site:
    """One checked access in the generated source: where it is and what it indexes.

    ``file``/``line`` are the user's Python line (None for string kernels); ``name`` is the
    indexed expression as written; ``kind`` is 'array', 'shared', 'local' or 'raw', or
    'unset' for a read of the local ``name`` that may run before any assignment of it.
    """

    file: str | None
    line: int | None
    name: str
    kind: str = "array"

    def to_json(self) -> list:
        return [self.file, self.line, self.name, self.kind]

    @classmethod
    def from_json(cls, data) -> "Site":
        file, line, name, kind = data
        return cls(file, line, name, kind)
