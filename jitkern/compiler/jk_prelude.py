"""The ``jk::`` C++ prelude every generated program starts with: arrays and tuples by value,
Python's ``//``, ``%`` and ``**`` on integers, and the other helpers the JIT's templates call.

A leaf (text only): :mod:`.program` assembles it into JIT programs, and ``jitkern.fuse``
into its string kernels without loading the JIT (a fused call's first launch in a fresh
process reads it with nothing else of the compiler).
"""

PRELUDE = r"""
namespace jk {
// Arrays other than 1-D contiguous ones: a pointer, the shape and byte strides.
template <typename T, int N, typename I> struct Array { T* ptr; I shape[N]; I strides[N]; };
// Tuples: nested head/tail pairs, so that any arity is one template.
template <class... Ts> struct Tuple {};
template <class H, class... Ts> struct Tuple<H, Ts...> { H head; Tuple<Ts...> tail; };

// Python's // and % on signed integers: floor, sign of the divisor; x // 0 == x % 0 == 0.
template <class T> __device__ __forceinline__ T floordiv(T a, T b) {
  if (b == 0) return T(0);
  T q = T(a / b);
  return (T(q * b) != a && ((a < 0) != (b < 0))) ? T(q - 1) : q;
}
template <class T> __device__ __forceinline__ T mod(T a, T b) {
  if (b == 0) return T(0);
  T r = T(a % b);
  return (r != 0 && ((r < 0) != (b < 0))) ? T(r + b) : r;
}
template <class T> __device__ __forceinline__ T ufloordiv(T a, T b) {
  return b == 0 ? T(0) : T(a / b);
}
template <class T> __device__ __forceinline__ T umod(T a, T b) {
  return b == 0 ? T(0) : T(a % b);
}
// On floats, NumPy's divmod: floor of the exact quotient, remainder with the divisor's sign.
#define JK_FLOAT_DIVMOD(F, SUF)                                                   \
  __device__ __forceinline__ F floordiv(F a, F b) {                               \
    if (b == F(0)) return a / b;                                                  \
    F m = fmod##SUF(a, b);                                                        \
    F d = (a - m) / b;                                                            \
    if (m != F(0) && ((b < F(0)) != (m < F(0)))) d -= F(1);                       \
    if (d != F(0)) { F f = floor##SUF(d); if (d - f > F(0.5)) f += F(1); return f; } \
    return copysign##SUF(F(0), a / b);                                            \
  }                                                                               \
  __device__ __forceinline__ F mod(F a, F b) {                                    \
    F m = fmod##SUF(a, b);                                                        \
    if (b == F(0)) return m;                                                      \
    if (m != F(0)) { if ((b < F(0)) != (m < F(0))) m += b; }                      \
    else m = copysign##SUF(F(0), b);                                              \
    return m;                                                                     \
  }
JK_FLOAT_DIVMOD(float, f)
JK_FLOAT_DIVMOD(double, )
#undef JK_FLOAT_DIVMOD
// int ** int stays an int (a negative exponent gives 0 unless the base is 1 or -1).
template <class T> __device__ __forceinline__ T ipow(T base, T exp) {
  if (exp < 0) return base == 1 ? T(1) : (base == -1 ? ((exp & 1) ? T(-1) : T(1)) : T(0));
  T r = 1;
  while (exp) { if (exp & 1) r = T(r * base); base = T(base * base); exp >>= 1; }
  return r;
}
template <class T> __device__ __forceinline__ T uipow(T base, T exp) {
  T r = 1;
  while (exp) { if (exp & 1) r = T(r * base); base = T(base * base); exp >>= 1; }
  return r;
}
template <class T> __device__ __forceinline__ T pow2(T x) { return T(x * x); }
// Python's min/max (first wins on ties and NaN) and NumPy's minimum/maximum (NaN wins).
template <class T> __device__ __forceinline__ T pymin(T a, T b) { return (b < a) ? b : a; }
template <class T> __device__ __forceinline__ T pymax(T a, T b) { return (b > a) ? b : a; }
template <class T> __device__ __forceinline__ T npmin(T a, T b) {
  return (a != a || a <= b) ? a : b;
}
template <class T> __device__ __forceinline__ T npmax(T a, T b) {
  return (a != a || a >= b) ? a : b;
}
__device__ __forceinline__ unsigned int laneid() {
  unsigned int r;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(r));
  return r;
}
template <class T>
__device__ __forceinline__ Tuple<unsigned int, bool> match_all(unsigned int mask, T v) {
  int pred;
  unsigned int m = __match_all_sync(mask, v, &pred);
  return {m, {pred != 0, {}}};
}
}  // namespace jk
"""
