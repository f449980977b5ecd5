"""NumPy's ufuncs as C++: one row per ufunc, read by ``jitkern.fuse`` and by the JIT.

A row gives the ufunc's C++ per loop kind (``b`` bool, ``i`` signed, ``u`` unsigned, ``f``
float, ``c`` complex; ``*`` any), formatting ``{0}``, ``{1}`` (the arguments, in the loop's
input types) and ``{T}`` (the result's compute type). The loop's types are NumPy's own:
``ufunc.resolve_dtypes`` with Python scalars passed as their (weak) types, what NumPy 2
computes. float16 loops run in float and round to half on every result, as NumPy's do.

``jitkern.fuse`` formats the rows into its ElementwiseKernel/ReductionKernel C++
(:mod:`jitkern.kernels.fuse.emit`); :mod:`.builtins.ufuncs` makes each row a JIT builtin
record. The rows live outside ``builtins/`` (a leaf: NumPy only) so that a fused function's
first call in a fresh process loads the rows without the JIT's builtin tables.
"""

from __future__ import annotations

import dataclasses

import numpy

@dataclasses.dataclass(frozen=True)
class Ufunc:
    name: str
    nin: int
    templates: tuple  # one {kind: template} per output; templates format {0}, {1}, {T}

    def template(self, out: int, dtype) -> str | None:
        """The C++ of output ``out`` for a loop whose first operand is ``dtype``: the row's
        entry for float16 ("e", where a row has one), else for its kind, else "*"."""
        dtype = numpy.dtype(dtype)
        kind = dtype.kind
        table = self.templates[out]
        half = "e" if dtype.char == "e" else ""
        for key in (half, kind, "iu" if kind in "iu" else "", "fc" if kind in "fc" else "", "*"):
            if key and key in table:
                return table[key]
        return None


def _u(name, nin, *templates):
    return Ufunc(name, nin, tuple(t if isinstance(t, dict) else {"*": t} for t in templates))


_FLOAT_FNS = {  # NumPy name -> CUDA name (float and double overloads; complex where given)
    "exp": ("exp", True), "exp2": ("exp2", False), "expm1": ("expm1", False),
    "log": ("log", True), "log2": ("log2", False), "log10": ("log10", True),
    "log1p": ("log1p", False), "sqrt": ("sqrt", True), "cbrt": ("cbrt", False),
    "sin": ("sin", True), "cos": ("cos", True), "tan": ("tan", True),
    "arcsin": ("asin", True), "arccos": ("acos", True), "arctan": ("atan", True),
    "sinh": ("sinh", True), "cosh": ("cosh", True), "tanh": ("tanh", True),
    "arcsinh": ("asinh", True), "arccosh": ("acosh", True), "arctanh": ("atanh", True),
    "rint": ("rint", False), "fabs": ("fabs", False),
}  # fmt: skip

# Complex forms NumPy has and CUDA's complex header does not (jkf::, COMPLEX_HELPERS).
_COMPLEX_ONLY = {"exp2": "jkf::cexp2", "expm1": "jkf::cexpm1", "log1p": "jkf::clog1p",
                 "log2": "jkf::clog2", "rint": "jkf::crint"}  # fmt: skip

_ROUNDING = {"floor": "floor", "ceil": "ceil", "trunc": "trunc"}

_CMP = {"greater": ">", "greater_equal": ">=", "less": "<", "less_equal": "<="}

# Python's // and % (floor_divide, remainder, mod, divmod's two outputs)
_FLOORDIV = {"i": "jk::floordiv({0}, {1})", "u": "jk::ufloordiv({0}, {1})",
             "f": "jk::floordiv({0}, {1})"}
_MOD = {"i": "jk::mod({0}, {1})", "u": "jk::umod({0}, {1})", "f": "jk::mod({0}, {1})"}


_DEG2RAD = "({0} * (({T})3.141592653589793 / ({T})180))"
_RAD2DEG = "({0} * (({T})180 / ({T})3.141592653589793))"


def _build_ufuncs() -> dict:
    rows = [
        _u("add", 2, {"b": "({0} || {1})", "*": "({0} + {1})"}),
        _u("subtract", 2, "({0} - {1})"),
        _u("multiply", 2, {"b": "({0} && {1})", "*": "({0} * {1})"}),
        _u("true_divide", 2, "({0} / {1})"),
        _u("divide", 2, "({0} / {1})"),
        _u("floor_divide", 2, _FLOORDIV),
        _u("remainder", 2, _MOD),
        _u("mod", 2, _MOD),
        _u("divmod", 2, _FLOORDIV, _MOD),
        _u("fmod", 2, {"iu": "jkf::ifmod({0}, {1})", "f": "fmod({0}, {1})"}),
        _u(
            "power",
            2,
            {
                "i": "jk::ipow({0}, {1})",
                "u": "jk::uipow({0}, {1})",
                "f": "pow({0}, {1})",
                "c": "pow({0}, {1})",
            },
        ),
        _u("float_power", 2, "pow({0}, {1})"),
        _u("negative", 1, "(-{0})"),
        _u("positive", 1, "{0}"),
        _u(
            "absolute",
            1,
            {"i": "jkf::iabs({0})", "u": "{0}", "b": "{0}", "f": "fabs({0})", "c": "abs({0})"},
        ),
        _u("sign", 1, {"iu": "jkf::isign({0})", "f": "jkf::fsign({0})", "c": "jkf::csign({0})"}),
        _u("conjugate", 1, {"c": "conj({0})", "*": "{0}"}),
        _u("conj", 1, {"c": "conj({0})", "*": "{0}"}),
        _u("square", 1, "({0} * {0})"),
        _u("reciprocal", 1, {"iu": "jkf::ireciprocal({0})", "*": "(({T})1 / {0})"}),
        # NumPy's constants: pi / 180 and 180 / pi divided in the loop's type (in float,
        # 180 / pi is 57.295776, one ulp below 57.29577951308232 rounded to float)
        _u("deg2rad", 1, _DEG2RAD),
        _u("radians", 1, _DEG2RAD),
        _u("rad2deg", 1, _RAD2DEG),
        _u("degrees", 1, _RAD2DEG),
        _u("arctan2", 2, "atan2({0}, {1})"),
        _u("hypot", 2, "hypot({0}, {1})"),
        _u("copysign", 2, "copysign({0}, {1})"),
        # float16: a step between halves (the float loop's nextafter would step in float)
        _u("nextafter", 2, {"e": "jkf::nextafter_half({0}, {1})", "*": "nextafter({0}, {1})"}),
        _u("logaddexp", 2, "jkf::logaddexp({0}, {1})"),
        _u("logaddexp2", 2, "jkf::logaddexp2({0}, {1})"),
        _u("heaviside", 2, "jkf::heaviside({0}, {1})"),
        _u("ldexp", 2, "ldexp({0}, jkf::clamp_int({1}))"),
        _u("frexp", 1, "jkf::frexp_mantissa({0})", "jkf::frexp_exponent({0})"),
        _u("modf", 1, "jkf::modf_fraction({0})", "jkf::modf_integral({0})"),
        _u(
            "maximum",
            2,
            {"b": "({0} || {1})", "c": "jkf::cmax({0}, {1})", "*": "jk::npmax({0}, {1})"},
        ),
        _u(
            "minimum",
            2,
            {"b": "({0} && {1})", "c": "jkf::cmin({0}, {1})", "*": "jk::npmin({0}, {1})"},
        ),
        _u(
            "fmax",
            2,
            {
                "b": "({0} || {1})",
                "iu": "jk::npmax({0}, {1})",
                "f": "fmax({0}, {1})",
                "c": "jkf::cfmax({0}, {1})",
            },
        ),
        _u(
            "fmin",
            2,
            {
                "b": "({0} && {1})",
                "iu": "jk::npmin({0}, {1})",
                "f": "fmin({0}, {1})",
                "c": "jkf::cfmin({0}, {1})",
            },
        ),
        _u("equal", 2, "({0} == {1})"),
        _u("not_equal", 2, "({0} != {1})"),
        _u("logical_and", 2, "(jkf::truth({0}) && jkf::truth({1}))"),
        _u("logical_or", 2, "(jkf::truth({0}) || jkf::truth({1}))"),
        _u("logical_xor", 2, "(jkf::truth({0}) != jkf::truth({1}))"),
        _u("logical_not", 1, "(!jkf::truth({0}))"),
        _u("bitwise_and", 2, "({0} & {1})"),
        _u("bitwise_or", 2, "({0} | {1})"),
        _u("bitwise_xor", 2, {"b": "({0} != {1})", "*": "({0} ^ {1})"}),
        _u("invert", 1, {"b": "(!{0})", "*": "(~{0})"}),
        _u("bitwise_not", 1, {"b": "(!{0})", "*": "(~{0})"}),
        _u("left_shift", 2, "jkf::lshift({0}, {1})"),
        _u("right_shift", 2, "jkf::rshift({0}, {1})"),
        _u("bitwise_count", 1, {"biu": "jkf::popcount({0})"}),
        _u("gcd", 2, "jkf::gcd({0}, {1})"),
        _u("lcm", 2, "jkf::lcm({0}, {1})"),
        _u("isfinite", 1, {"biu": "true", "*": "isfinite({0})"}),
        _u("isinf", 1, {"biu": "false", "*": "isinf({0})"}),
        _u("isnan", 1, {"biu": "false", "*": "isnan({0})"}),
        _u("signbit", 1, {"b": "false", "u": "false", "i": "({0} < 0)", "*": "signbit({0})"}),
    ]
    for name, (cname, has_complex) in _FLOAT_FNS.items():
        templates = {"f": f"{cname}({{0}})"}
        if has_complex:
            templates["c"] = f"{cname}({{0}})"
        elif name in _COMPLEX_ONLY:
            templates["c"] = f"{_COMPLEX_ONLY[name]}({{0}})"
        rows.append(_u(name, 1, templates))
    for name, cname in _ROUNDING.items():
        rows.append(_u(name, 1, {"biu": "{0}", "f": f"{cname}({{0}})"}))
    for name, op in _CMP.items():
        rows.append(
            _u(
                name,
                2,
                {"c": f"jkf::ccmp{_CMP_NAMES[op]}({{0}}, {{1}})", "*": f"({{0}} {op} {{1}})"},
            )
        )
    table = {row.name: row for row in rows}
    # "biu" keys: bool and integers alike
    for row in rows:
        for t in row.templates:
            if "biu" in t:
                for k in "biu":
                    t.setdefault(k, t["biu"])
    return table


_CMP_NAMES = {">": "gt", ">=": "ge", "<": "lt", "<=": "le"}

UFUNC_ROWS = _build_ufuncs()

# Helpers the templates above call (in addition to the JIT prelude's jk:: ones).
HELPERS = r"""
namespace jkf {
template <class T> __device__ __forceinline__ bool truth(T x) { return x != T(0); }
template <class T> __device__ __forceinline__ T iabs(T x) { return x < 0 ? T(-x) : x; }
template <class T> __device__ __forceinline__ T isign(T x) { return T((x > 0) - (x < 0)); }
template <class T> __device__ __forceinline__ T fsign(T x) {
  return x > T(0) ? T(1) : (x < T(0) ? T(-1) : (x == T(0) ? T(0) : x));
}
template <class T> __device__ __forceinline__ T ireciprocal(T x) {
  return x == T(0) ? T(0) : T(T(1) / x);
}
template <class T> __device__ __forceinline__ T ifmod(T a, T b) {
  return b == T(0) ? T(0) : T(a % b);
}
template <class T> __device__ __forceinline__ T logaddexp(T a, T b) {
  if (a == b) return a + log(T(2));
  T d = a - b;
  if (d > 0) return a + log1p(exp(-d));
  if (d <= 0) return b + log1p(exp(d));
  return d;
}
template <class T> __device__ __forceinline__ T logaddexp2(T a, T b) {
  const T ln2 = T(0.6931471805599453);
  if (a == b) return a + T(1);
  T d = a - b;
  if (d > 0) return a + log1p(exp2(-d)) / ln2;
  if (d <= 0) return b + log1p(exp2(d)) / ln2;
  return d;
}
template <class T> __device__ __forceinline__ T heaviside(T x, T h0) {
  return x != x ? x : (x < T(0) ? T(0) : (x > T(0) ? T(1) : h0));
}
template <class T> __device__ __forceinline__ int clamp_int(T e) {
  return e > T(2147483647) ? 2147483647 : (e < T(-2147483647) ? -2147483647 : int(e));
}
template <class T> __device__ __forceinline__ T frexp_mantissa(T x) { int e; return frexp(x, &e); }
template <class T> __device__ __forceinline__ int frexp_exponent(T x) {
  int e = 0;
  if (isfinite(x)) frexp(x, &e);
  return e;
}
template <class T> __device__ __forceinline__ T modf_fraction(T x) { T i; return modf(x, &i); }
template <class T> __device__ __forceinline__ T modf_integral(T x) { T i; modf(x, &i); return i; }
template <class T, class S> __device__ __forceinline__ T lshift(T a, S b) {
  return (b < S(0) || b >= S(8 * sizeof(T))) ? T(0) : T(a << b);
}
template <class T, class S> __device__ __forceinline__ T rshift(T a, S b) {
  if (b < S(0) || b >= S(8 * sizeof(T))) return a < T(0) ? T(-1) : T(0);
  return T(a >> b);
}
template <class T> __device__ __forceinline__ unsigned char popcount(T x) {  // of |x|
  unsigned long long m = (unsigned long long)x;
  return (unsigned char)__popcll(x < T(0) ? 0ULL - m : m);
}
template <class T> __device__ __forceinline__ T gcd(T a, T b) {
  a = a < T(0) ? T(-a) : a; b = b < T(0) ? T(-b) : b;
  while (b != T(0)) { T t = T(a % b); a = b; b = t; }
  return a;
}
template <class T> __device__ __forceinline__ T lcm(T a, T b) {
  T g = gcd(a, b);
  if (g == T(0)) return T(0);
  auto r = a / g * b;  // in C's promoted type (int for 8- and 16-bit types), as NumPy's
  return T(r < 0 ? -r : r);  // absolute value there, then the wrap to T
}
// nextafter of two halves (widened to float): the next half from x toward y.
__device__ __forceinline__ float nextafter_half(float x, float y) {
  if (x != x || y != y) return x + y;
  if (x == y) return x;  // NumPy's half loop keeps x (-0 toward +0 stays -0)
  if (x == 0.0f) return copysignf(5.9604644775390625e-08f, y);  // the smallest subnormal
  if (isinf(x)) return copysignf(65504.0f, x);
  float a = fabsf(x);
  bool away = (y > x) == (x > 0.0f);
  int e;
  frexpf(a, &e);  // a in [2^(e-1), 2^e): a half's step there is 2^(e-11), at least 2^-24
  float step = ldexpf(1.0f, max(e - 11, -24));
  if (!away && a == ldexpf(1.0f, e - 1) && e - 1 > -14) step *= 0.5f;  // down a binade
  float r = away ? a + step : a - step;
  return copysignf(r > 65504.0f ? __int_as_float(0x7f800000) : r, x);  // past the largest: inf
}
template <class T> __device__ __forceinline__ T nan_to_zero(T x) { return x != x ? T(0) : x; }
template <class T> __device__ __forceinline__ T nan_to_one(T x) { return x != x ? T(1) : x; }
}  // namespace jkf
"""

# NumPy 2 orders complex numbers lexicographically (real part, then imaginary part); a
# NaN in either part propagates through maximum/minimum.
COMPLEX_HELPERS = r"""
namespace jkf {
template <class T> __device__ __forceinline__ bool truth(const complex<T>& z) {
  return z.real() != T(0) || z.imag() != T(0);
}
template <class T> __device__ __forceinline__ bool cnan(const complex<T>& z) {
  return z.real() != z.real() || z.imag() != z.imag();
}
template <class T> __device__ __forceinline__ bool ccmplt(const complex<T>& a, const complex<T>& b) {
  return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag());
}
template <class T> __device__ __forceinline__ bool ccmple(const complex<T>& a, const complex<T>& b) {
  return a.real() < b.real() || (a.real() == b.real() && a.imag() <= b.imag());
}
template <class T> __device__ __forceinline__ bool ccmpgt(const complex<T>& a, const complex<T>& b) {
  return ccmplt(b, a);
}
template <class T> __device__ __forceinline__ bool ccmpge(const complex<T>& a, const complex<T>& b) {
  return ccmple(b, a);
}
template <class T> __device__ __forceinline__ complex<T> cmax(const complex<T>& a, const complex<T>& b) {
  return (cnan(a) || ccmpge(a, b)) ? a : b;
}
template <class T> __device__ __forceinline__ complex<T> cmin(const complex<T>& a, const complex<T>& b) {
  return (cnan(a) || ccmple(a, b)) ? a : b;
}
template <class T> __device__ __forceinline__ complex<T> cfmax(const complex<T>& a, const complex<T>& b) {
  return (cnan(b) || ccmpge(a, b)) ? a : b;
}
template <class T> __device__ __forceinline__ complex<T> cfmin(const complex<T>& a, const complex<T>& b) {
  return (cnan(b) || ccmple(a, b)) ? a : b;
}
template <class T> __device__ __forceinline__ complex<T> csign(const complex<T>& z) {
  if (cnan(z)) return complex<T>(z.real() + z.imag(), z.real() + z.imag());
  T r = abs(z);
  return r == T(0) ? complex<T>(T(0), T(0)) : complex<T>(z.real() / r, z.imag() / r);
}
template <class T> __device__ __forceinline__ complex<T> cexp2(const complex<T>& z) {
  return exp(z * T(0.6931471805599453));
}
template <class T> __device__ __forceinline__ complex<T> cexpm1(const complex<T>& z) {
  // exp(x + iy) - 1 = (expm1(x) cos y - 2 sin^2(y/2)) + i exp(x) sin y, accurate near 0
  T s = sin(z.imag() / T(2));
  return complex<T>(expm1(z.real()) * cos(z.imag()) - T(2) * s * s, exp(z.real()) * sin(z.imag()));
}
template <class T> __device__ __forceinline__ complex<T> clog1p(const complex<T>& z) {
  return log(complex<T>(T(1) + z.real(), z.imag()));
}
template <class T> __device__ __forceinline__ complex<T> clog2(const complex<T>& z) {
  complex<T> l = log(z);
  return complex<T>(l.real() / T(0.6931471805599453), l.imag() / T(0.6931471805599453));
}
template <class T> __device__ __forceinline__ complex<T> crint(const complex<T>& z) {
  return complex<T>(rint(z.real()), rint(z.imag()));
}
template <class T> __device__ __forceinline__ complex<T> nan_to_zero(const complex<T>& z) {
  return cnan(z) ? complex<T>(T(0), T(0)) : z;
}
template <class T> __device__ __forceinline__ complex<T> nan_to_one(const complex<T>& z) {
  return cnan(z) ? complex<T>(T(1), T(0)) : z;
}
}  // namespace jkf
"""
