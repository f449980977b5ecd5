"""The state shared by every function of one generated program, and its assembly.

A :class:`Program` is created per specialisation and passed explicitly to each
function emitter: which headers are needed, which device functions have been
emitted (per argument types), whether the launch must be cooperative, and the
fingerprint of every global each function read (for the on-disk index).
"""

from __future__ import annotations

import dataclasses

from ..debugrecord import DEVICE_SOURCE as DEBUG_DEVICE_SOURCE, Site
from . import frontend
from .jk_prelude import PRELUDE  # noqa: F401 - every program starts with it (fuse's too)
from .structs import definitions as struct_definitions, structs_in


# Debug builds: each checked access calls one of these with its site number (an index into
# Program.debug_sites); a failing check records itself (runtime/debugcheck.py) and the
# access goes to a scratch sink instead, so an out-of-bounds store never lands.
DEBUG_HELPERS = DEBUG_DEVICE_SOURCE + r"""
namespace jk { namespace dbg {
// x[i] on a 1-D contiguous array or a shared-memory pointer of n elements (n < 0: unknown).
template <class T> __device__ __forceinline__ T* at1(T* p, long long i, long long n, int site) {
  if (n >= 0 && (unsigned long long)i >= (unsigned long long)n) {
    if (jk_debug_claim(site, 0, i, n, 1)) jk_debug_record.shape[0] = n;
    return jk_debug_sink_for<T>();
  }
  return p + i;
}
// The address of a[i0, i1, ...] (as many indices as given), each checked on its axis.
template <class T, int N, class I, class... Ix>
__device__ __forceinline__ T* at(const Array<T, N, I>& a, int site, Ix... ix) {
  const long long idx[] = {(long long)ix...};
  char* p = (char*)a.ptr;
#pragma unroll
  for (int k = 0; k < (int)sizeof...(Ix); ++k) {
    if ((unsigned long long)idx[k] >= (unsigned long long)a.shape[k]) {
      if (jk_debug_claim(site, k, idx[k], (long long)a.shape[k], N)) {
        for (int d = 0; d < N && d < jk_debug_dims; ++d) jk_debug_record.shape[d] = (long long)a.shape[d];
      }
      return jk_debug_sink_for<T>();
    }
    p += (I)idx[k] * a.strides[k];
  }
  return (T*)p;
}
// a[i0, ...] with fewer indices than axes: the sub-array (empty when a check failed, so
// every access to it fails its own check and lands in the sink).
template <class T, int N, class I, class... Ix>
__device__ __forceinline__ Array<T, N - (int)sizeof...(Ix), I> sub(const Array<T, N, I>& a,
                                                                   int site, Ix... ix) {
  constexpr int M = (int)sizeof...(Ix);
  Array<T, N - M, I> r;
  T* p = at(a, site, ix...);
  const bool ok = p != jk_debug_sink_for<T>();
  r.ptr = p;
#pragma unroll
  for (int k = 0; k < N - M; ++k) {
    r.shape[k] = ok ? a.shape[M + k] : I(0);
    r.strides[k] = ok ? a.strides[M + k] : I(0);
  }
  return r;
}
// A read of local v, whose flag says whether an assignment ran: a read on a path that
// assigned nothing records its site (the local, the line) and reads the zero v holds.
template <class T> __device__ __forceinline__ T& use(T& v, bool set, int site) {
  if (!set) jk_debug_claim(site, 0, 0, 0, 0);
  return v;
}
// The element count of dynamic shared memory seen as T.
template <class T> __device__ __forceinline__ long long dynamic_extent() {
  unsigned int bytes;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(bytes));
  return (long long)(bytes / sizeof(T));
}
}}  // namespace jk::dbg
"""

#: The file name compiler messages give for code jitkern wrote (not a user's statement).
GENERATED_FILE = "jitkern-generated.cu"

# Headers added when the generated text names what they declare.
_IMPLIED_INCLUDES = (
    ("__half", "<cuda_fp16.h>"),
    ("__nv_bfloat16", "<cuda_bf16.h>"),
    ("__nv_fp8", "<cuda_fp8.h>"),
    ("complex<", "<jitkern/complex.cuh>"),
    ("cooperative_groups::", "<cooperative_groups.h>"),
)


@dataclasses.dataclass
class DeviceFunction:
    cname: str
    return_type: object
    code: str


class Program:
    """Mutable state of one program's emission; never global."""

    def __init__(self, mode: str, debug: bool = False):
        self.mode = mode
        self.debug = debug  # bounds-checked build: every checked access is a debug site
        self.debug_sites: list[Site] = []
        self.includes: set[str] = set()
        self.cooperative = False
        self.min_arch = 0
        # (builtin, "file:LINE:COL-ENDCOL" of a use) -> the arch it needs, for every use
        self.arch_needs: dict[tuple[str, str], int] = {}
        self.device_functions: dict = {}  # (function, arg types) -> DeviceFunction
        self.device_code: list[str] = []  # in completion order: callees first
        self.stack: list = []  # functions being emitted (recursion check)
        self.pending: dict = {}  # (function, arg types) -> its emitter, while emitted
        self.prototypes: list[str] = []  # declarations of recursive device functions
        self.fingerprints: dict[str, dict[str, str]] = {}  # function identity -> {name: fp}
        self._names: set[str] = set()
        self.structs: list = []  # the T.Struct types of parameters, defined before the code

    def use_structs(self, types) -> None:
        """Define the structs among ``types`` (parameters' types) in the program."""
        for t in structs_in(types):
            if t not in self.structs:
                self.structs.append(t)

    def capture(self, func, name: str) -> frontend.Captured:
        captured = frontend.resolve(func, name)
        self.fingerprints.setdefault(function_identity(func), {})[name] = captured.fingerprint
        return captured

    def debug_site(self, site: Site) -> int:
        """The number a checked access passes to the device helpers (its index here)."""
        self.debug_sites.append(site)
        return len(self.debug_sites) - 1

    def unique_name(self, base: str) -> str:
        name, n = base, 1
        while name in self._names:
            n += 1
            name = f"{base}_{n}"
        self._names.add(name)
        return name

    def assemble(self, kernel_code: str, header_comment: str) -> str:
        """The whole source. Each chunk jitkern wrote (the prelude, each function's head and
        declarations) starts with ``#line N "jitkern-generated.cu"`` at its real line, so a
        compiler message about it never shows a generated line under the user's file name;
        the statements inside carry the user's ``#line``."""
        chunks = [PRELUDE.strip(), struct_definitions(self.structs).strip(),
                  "\n".join(self.prototypes), *self.device_code, kernel_code]
        if self.debug:
            chunks.insert(1, DEBUG_HELPERS.strip())
        includes = set(self.includes)
        for marker, header in _IMPLIED_INCLUDES:
            if any(marker in chunk for chunk in chunks):
                includes.add(header)
        lines = header_comment.split("\n")
        lines += [f"#include {h}" for h in sorted(includes, key=_include_order)]
        for chunk in chunks:
            if chunk:
                lines.append(f'#line {len(lines) + 2} "{GENERATED_FILE}"')
                lines += chunk.split("\n")
        return "\n".join(lines) + "\n"


def _include_order(header: str):
    # fp16/bf16 first: complex.cuh and CUB may use them.
    first = ("<cuda_fp16.h>", "<cuda_bf16.h>")
    return (0 if header in first else 1, header)


def function_identity(func) -> str:
    code = func.__code__
    return f"{code.co_filename}:{code.co_firstlineno}:{func.__qualname__}"
