"""Complex numbers in the C subset (:mod:`.ctranslate`): complex.cuh's functions that
are not one JIT math call (``real``, ``imag``, ``conj``, ``norm``, ``arg``, ``proj``,
``polar``, ``pow`` with a complex operand, the constructor) and cuComplex.h's functions
(``translate_cucomplex=True``).

Each takes ``(translator, C name, translated arguments, node)`` and returns the Val of the
call, with complex.cuh's types: ``polar(r, theta)`` is ``complex<T>`` of its real type,
``pow`` computes in the usual arithmetic conversion of its operands (NumPy's complex power,
which, as complex.cuh, multiplies out small integral exponents).
"""

from __future__ import annotations

from .csubset import C64, C128, F32, F64, Val, common, convert, ctor, real_of


def proj(tr, name, args, node) -> Val:
    """Riemann-sphere projection: infinities become (inf, +-0), the rest stay."""
    tr.nargs(name, args, 1, node)
    t = args[0].type if args[0].type.kind == "c" else C128 if args[0].type == F64 else C64
    z = tr.to(args[0], t, node)
    r = ctor(real_of(t))
    far = f"{ctor(t)}(complex({r}(math.inf), math.copysign({r}(0), {z}.imag)))"
    return Val(f"({far} if math.isinf({z}) else {z})", t)


def polar(tr, name, args, node) -> Val:
    """``polar(r, theta = 0)``: r (cos theta + i sin theta)."""
    tr.nargs(name, args, (1, 2), node)
    rt = common(args[0].type, args[-1].type) if len(args) == 2 else args[0].type
    rt = rt if rt in (F32, F64) else F64
    t = C64 if rt == F32 else C128
    r = tr.to(args[0], rt, node)
    theta = tr.to(args[1], rt, node) if len(args) == 2 else f"{ctor(rt)}(0)"
    return Val(f"{ctor(t)}(complex({r} * math.cos({theta}), {r} * math.sin({theta})))", t)


def power(tr, name, args, node) -> Val:
    """``pow`` where an operand is complex."""
    tr.nargs(name, args, 2, node)
    t = common(args[0].type, args[1].type)
    if name.endswith("f"):
        t = C64
    return Val(f"math.pow({tr.to(args[0], t, node)}, {tr.to(args[1], t, node)})", t)


def part(tr, name, args, node) -> Val:
    tr.nargs(name, args, 1, node)
    v = args[0]
    t = real_of(v.type) if v.type.kind == "c" else v.type
    return Val(f"{v.code}.{name}", t)


def conj(tr, name, args, node) -> Val:
    tr.nargs(name, args, 1, node)
    return Val(f"numpy.conj({args[0].code})", args[0].type)


def norm(tr, name, args, node) -> Val:
    tr.nargs(name, args, 1, node)
    v = args[0]
    if v.type.kind != "c":
        t = tr.float_type(v.type, None)
        x = tr.to(v, t, node)
        return Val(f"({x} * {x})", t)
    return Val(f"({v.code}.real * {v.code}.real + {v.code}.imag * {v.code}.imag)",
               real_of(v.type))


def arg(tr, name, args, node) -> Val:
    tr.nargs(name, args, 1, node)
    v = args[0]
    t = real_of(v.type) if v.type.kind == "c" else tr.float_type(v.type, None)
    if v.type.kind != "c":
        return Val(f"math.atan2({ctor(t)}(0), {tr.to(v, t, node)})", t)
    return Val(f"math.atan2({v.code}.imag, {v.code}.real)", t)


def make_complex(tr, name, args, node) -> Val:
    """``complex<T>(re, im)`` (both parts kept exactly, the signs of zeros too)."""
    tr.nargs(name, args, (0, 1, 2), node)
    t = C64 if name.endswith("64") else C128
    r = real_of(t)
    if not args:
        return Val(f"{ctor(t)}(0)", t)
    if args[0].type.kind == "c":
        return Val(convert(args[0], t), t)
    re_ = tr.to(args[0], r, node)
    im = tr.to(args[1], r, node) if len(args) == 2 else f"{ctor(r)}(0)"
    return Val(f"{ctor(t)}(complex({re_}, {im}))", t)


# -- cuComplex.h (translate_cucomplex=True) ------------------------------------------

_CU_OPS = {"cuCadd": "+", "cuCsub": "-", "cuCmul": "*", "cuCdiv": "/"}


def _cu_type(name: str):
    single = name.endswith("f") or name in ("make_cuComplex", "cuComplexDoubleToFloat")
    return C64 if single else C128


def cu_binary(tr, name, args, node) -> Val:
    tr.nargs(name, args, 2, node)
    t, op = _cu_type(name), _CU_OPS[name.rstrip("f")]
    return Val(f"({tr.to(args[0], t, node)} {op} {tr.to(args[1], t, node)})", t)


def cu_fma(tr, name, args, node) -> Val:
    tr.nargs(name, args, 3, node)
    t = _cu_type(name)
    x, y, d = (tr.to(a, t, node) for a in args)
    return Val(f"({x} * {y} + {d})", t)


def cu_make(tr, name, args, node) -> Val:
    return make_complex(tr, "__jk_make_complex" + ("64" if _cu_type(name) == C64 else "128"),
                        args, node)


def cu_convert(tr, name, args, node) -> Val:
    """cuComplexFloatToDouble / cuComplexDoubleToFloat."""
    tr.nargs(name, args, 1, node)
    t = _cu_type(name)
    return Val(convert(args[0], t), t)


def handler(name: str):
    """The handler of C function ``name``, or None."""
    if name in HANDLERS:
        return HANDLERS[name]
    if name.rstrip("f") in _CU_OPS and name.startswith("cuC"):
        return cu_binary
    if name in ("cuCreal", "cuCrealf", "cuCimag", "cuCimagf"):
        return lambda tr, n, args, node: part(tr, n[3:7].lower(), args, node)
    if name in ("cuConj", "cuConjf"):
        return conj
    if name in ("cuCabs", "cuCabsf"):
        return lambda tr, n, args, node: tr.absolute(n, args, node)
    if name in ("cuCfma", "cuCfmaf"):
        return cu_fma
    if name in ("make_cuFloatComplex", "make_cuComplex", "make_cuDoubleComplex"):
        return cu_make
    if name in ("cuComplexFloatToDouble", "cuComplexDoubleToFloat"):
        return cu_convert
    return None


#: complex.cuh's functions: C name -> handler.
HANDLERS = {"proj": proj, "polar": polar, "real": part, "imag": part, "conj": conj,
            "norm": norm, "arg": arg, "__jk_make_complex64": make_complex,
            "__jk_make_complex128": make_complex}


def set_part(tr, obj: Val, field: str, args, node) -> Val:
    """``z.real(v)`` / ``z.imag(v)``: the part of variable ``z`` replaced (a statement)."""
    tr.nargs(f".{field}", args, 1, node)
    if not obj.lvalue:
        raise tr.refuse(f".{field}(value) on something that is not a variable", node)
    r = real_of(obj.type)
    v = tr.to(args[0], r, node)
    parts = (v, f"{obj.code}.imag") if field == "real" else (f"{obj.code}.real", v)
    tr.pre.append(tr.store(obj, f"{ctor(obj.type)}(complex({parts[0]}, {parts[1]}))"))
    return Val("", None)
