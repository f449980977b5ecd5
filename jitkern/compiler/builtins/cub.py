"""CUB block-level primitives (``jit.cub``) through CCCL's headers."""

from __future__ import annotations

import dataclasses

from ...errors import JitkernRuntimeError, JitkernTypeError
from .. import types as T
from ..values import Const
from . import simspell
from .records import Builtin, Marker, Namespace, Sig


@dataclasses.dataclass(frozen=True, eq=False)
class CubTemplate:
    """``cub.WarpReduce`` / ``cub.BlockReduce``: subscript with the value type (and size)."""

    name: str
    cname: str
    family: str
    include: str
    nparams: int

    def __getitem__(self, item):
        raise JitkernRuntimeError(f"jit.cub.{self.name}[...] can only be used inside a kernel")

    def instantiate(self, params) -> "CubClass":
        if len(params) != self.nparams:
            raise JitkernTypeError(f"cub.{self.name}[...] takes {self.nparams} parameter(s)")
        value_t = T.scalar_from_dtype(params[0])
        rest = []
        for p in params[1:]:
            if not isinstance(p, int) or p <= 0:
                raise JitkernTypeError(f"cub.{self.name}: the block size must be a positive constant")
            rest.append(str(p))
        # float16/bfloat16 are reduced in float32 and rounded once (NumPy sums halves in
        # float32 too): the C++ reducer works on float, the values convert on the way
        cname = f"cub::{self.name}<{', '.join([_accumulator(value_t).ctype] + rest)}>"
        return CubClass(self, cname, value_t)

    def __jit_fingerprint__(self) -> str:
        return "cub:" + self.name


@dataclasses.dataclass(frozen=True)
class CubClass:
    template: CubTemplate
    cname: str
    value_type: T.Scalar

    @property
    def storage_type(self) -> T.Opaque:
        return T.opaque("cub_storage", self.cname + "::TempStorage", default_constructible=True)

    @property
    def instance_type(self) -> T.Opaque:
        return T.opaque(self.template.family, self.cname, params=(self.value_type,))

    def __jit_fingerprint__(self) -> str:
        return "cub:" + self.cname


@dataclasses.dataclass(frozen=True)
class CubStorage:
    """``WarpReduce[T].TempStorage``: a dtype for shared_memory."""

    cls: CubClass

    @property
    def storage_type(self):
        return self.cls.storage_type


def _accumulator(t: T.Scalar) -> T.Scalar:
    return T.float32 if t.is_half else t


def _typed(code: str, t: T.Scalar, ctx) -> str:
    """The reducer's float32 result as the value type ``t``."""
    return ctx.via_float(t, code) if t.is_half else code


def _functor(op: Marker, t: T.Scalar) -> str:
    """The C++ functor of ``cub.Sum/Max/Min()`` over ``t``: complex values are ordered as
    NumPy orders them, by real part, then imaginary part (CUDA's functors need ``<``)."""
    if not (t.is_complex and op.name in ("cub.Max", "cub.Min")):
        return op.cname
    first, second = ("a", "b") if op.name == "cub.Max" else ("b", "a")
    less = (
        f"({first}.real() < {second}.real() || "
        f"({first}.real() == {second}.real() && {first}.imag() < {second}.imag()))"
    )
    return f"[]({t.ctype} a, {t.ctype} b) {{ return {less} ? b : a; }}"


CUB_OPS = {
    "Sum": Marker("cub.Sum", "::cuda::std::plus<>{}"),
    "Max": Marker("cub.Max", "::cuda::maximum<>{}"),
    "Min": Marker("cub.Min", "::cuda::minimum<>{}"),
}


def _cub_reduce_rule(items, mode):
    owner = items[0].type
    t = owner.params[0]
    op = items[2]
    if isinstance(op, Const) and isinstance(op.value, Marker) and op.value.name.startswith("cub."):
        return Sig((None, _accumulator(t), None), t)
    if isinstance(op, Const) and hasattr(op.value, "__jit_device__"):
        return Sig((None, _accumulator(t), None), t)
    raise JitkernTypeError("op must be jit.cub.Sum(), jit.cub.Max(), jit.cub.Min() or a device function")


def _cub_reduce_template(codes, sig, items, ctx):
    op = items[2].value
    if isinstance(op, Marker):
        ctx.include("<cuda/functional>")
        functor = _functor(op, sig.result)
    else:
        functor = ctx.device_functor(op, sig.result)
    return _typed(f"{codes[0]}.Reduce({codes[1]}, {functor})", sig.result, ctx)


def _cub_sum_rule(items, mode):
    t = items[0].type.params[0]
    has_count = len(items) > 2 and not (isinstance(items[2], Const) and items[2].value is None)
    rest = (T.int32,) if has_count else (None,) * (len(items) - 2)
    return Sig((None, _accumulator(t)) + rest, t)


def _cub_py(op_name):
    """The simulator's: a warp reduction is a warp collective; a block reduction a barrier
    that reduces (a half value accumulates in float32)."""

    def template(codes, sig, items, ctx):
        if op_name == "Reduce":
            op = simspell.op_code(items[2].value, sig, ctx)
            count = "None"
        else:
            op = "_jk_op_cub_" + op_name
            count = codes[2] if op_name == "Sum" and len(codes) > 2 and codes[2] else "None"
        if simspell.family(items[0]) == "warp_reduce":
            code = ctx.yields(f"_jk_REDUCE, {ctx.site()}, {codes[0]}, {codes[1]}, {count}, {op}")
        else:
            code = ctx.yields(f"_jk_SYNC, {ctx.site()}, {op}, {codes[1]}, {count}")
        t = sig.result
        return ctx.via_float(t, code) if t.is_half else code

    return template


def _cub_methods(family):
    def named(op):
        return lambda codes, sig, items, ctx: (
            ctx.include("<cuda/functional>")
            or _typed(
                f"{codes[0]}.Reduce({codes[1]}, {_functor(CUB_OPS[op], sig.result)})",
                sig.result,
                ctx,
            )
        )

    return {
        (family, "Sum"): Builtin(
            f"{family}.Sum",
            ("self", "value", "num_valid=None"),
            "the reducer's value type",
            _cub_sum_rule,
            lambda codes, sig, items, ctx: _typed(
                f"{codes[0]}.Sum({', '.join(c for c in codes[1:] if c)})", sig.result, ctx
            ),
            "Sum over the warp/block (valid in lane/thread 0).",
            "cub",
            py=_cub_py("Sum"),
        ),
        (family, "Max"): Builtin(
            f"{family}.Max",
            ("self", "value"),
            "value type (complex: NumPy's order, real part first)",
            _cub_sum_rule,
            named("Max"),
            "Maximum over the warp/block.",
            "cub",
            py=_cub_py("Max"),
        ),
        (family, "Min"): Builtin(
            f"{family}.Min",
            ("self", "value"),
            "value type (complex: NumPy's order, real part first)",
            _cub_sum_rule,
            named("Min"),
            "Minimum over the warp/block.",
            "cub",
            py=_cub_py("Min"),
        ),
        (family, "Reduce"): Builtin(
            f"{family}.Reduce",
            ("self", "value", "op"),
            "value type; cub.Sum()/Max()/Min() or a device function",
            _cub_reduce_rule,
            _cub_reduce_template,
            "Reduce with op over the warp/block.",
            "cub",
            py=_cub_py("Reduce"),
        ),
    }


CUB_METHODS = {**_cub_methods("warp_reduce"), **_cub_methods("block_reduce")}

cub = Namespace(
    "cub",
    {
        "WarpReduce": CubTemplate(
            "WarpReduce", "cub::WarpReduce", "warp_reduce", "<cub/warp/warp_reduce.cuh>", 1
        ),
        "BlockReduce": CubTemplate(
            "BlockReduce", "cub::BlockReduce", "block_reduce", "<cub/block/block_reduce.cuh>", 2
        ),
        **CUB_OPS,
    },
)
