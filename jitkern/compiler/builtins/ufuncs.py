"""NumPy's ufuncs as JIT builtins: each row of :mod:`..ufunc_rows` as a builtin record.

The rows (one table, read by ``jitkern.fuse`` and by the JIT) are in
:mod:`jitkern.compiler.ufunc_rows`. Each row is also a builtin record (:data:`UFUNC_RECORDS`,
``ufunc.<name>``) whose rule is NumPy's loop (``ufunc.resolve_dtypes`` with Python scalars
passed as their weak types) and whose C++ is the row's: a JIT kernel
calls it as ``numpy.<name>(...)`` where the JIT has no math row of that name (``numpy.gcd``,
``numpy.logaddexp``, ``numpy.add``), and fuse's simulated kernels call every ufunc through
it. The simulator renders a record as the NumPy ufunc on NumPy scalars with
``signature=`` the loop (:func:`_py_template`, each record's ``py=``).
"""

from __future__ import annotations

import numpy

from ...errors import JitkernTypeError
from .. import infer
from .. import types as T
from ..values import operand
from .records import Builtin, Namespace, Sig
from ..ufunc_rows import COMPLEX_HELPERS, HELPERS, UFUNC_ROWS, Ufunc  # noqa: F401 - the rows


# ---------------------------------------------------------------------------
# the rows as JIT builtins

#: The dtypes a ufunc loop may have in kernels (NumPy's own scalar types).
LOOP_DTYPES = frozenset(
    numpy.dtype(n) for n in ("?", "b", "B", "h", "H", "i", "I", "q", "Q", "e", "f", "d", "F", "D")
)


def _loop_operand(op):
    """What ``resolve_dtypes`` takes for a rule operand: a weak Python number's type (a bool
    is a bool), or the dtype of a typed one."""
    if infer.is_weak(op):
        return numpy.dtype(numpy.bool_) if isinstance(op, bool) else type(op)
    if not isinstance(op, T.Scalar):
        raise JitkernTypeError(f"expected a number, got {op}")
    return numpy.dtype(op.name) if op.name in T.NUMPY_SCALAR_NAMES else op.name


def resolve(row: Ufunc, ops) -> tuple:
    """NumPy's loop (input dtypes, then output dtypes) of ``numpy.<row.name>`` on the rule
    operands ``ops`` (types or weak literals); refuses a loop the row has no C++ for."""
    ufunc = getattr(numpy, row.name)
    nout = len(row.templates)
    loop_ops = tuple(_loop_operand(op) for op in ops)
    text = ", ".join(str(getattr(o, "__name__", o)) for o in loop_ops)
    if any(isinstance(o, str) for o in loop_ops):
        raise JitkernTypeError(f"numpy.{row.name}({text}): NumPy has no loop for these types")
    try:
        loop = ufunc.resolve_dtypes(loop_ops + (None,) * nout)
    except (TypeError, numpy.exceptions.DTypePromotionError) as exc:
        raise JitkernTypeError(f"numpy.{row.name}({text}): {exc}") from None
    if any(dt not in LOOP_DTYPES for dt in loop) or any(
        row.template(j, loop[0]) is None for j in range(nout)
    ):
        raise JitkernTypeError(f"numpy.{row.name}({text}): no {loop[0]} loop in kernels")
    return tuple(loop)


def _rule(row: Ufunc):
    def rule(items, mode):
        if len(items) != row.nin:
            raise JitkernTypeError(f"numpy.{row.name} takes {row.nin} argument(s), got {len(items)}")
        loop = [T.scalar_from_dtype(dt) for dt in resolve(row, [operand(i) for i in items])]
        outs = loop[row.nin :]
        return Sig(tuple(loop[: row.nin]), outs[0] if len(outs) == 1 else T.tuple_of(outs))

    return rule


def result_types(row: Ufunc, sig: Sig) -> tuple:
    """The loop's output types of a checked call."""
    return tuple(sig.result.items) if isinstance(sig.result, T.Tuple) else (sig.result,)


def _compute_ctype(t: T.Scalar) -> str:
    return "float" if t.is_half else t.ctype


def _need_helpers(ctx, complex_: bool) -> None:
    """The rows' jkf:: helpers (and the complex ones), once per program, after the prelude."""
    chunks = ctx.program.device_code
    if HELPERS not in chunks:
        chunks.insert(0, HELPERS)
    if complex_:
        ctx.need_complex()
        if COMPLEX_HELPERS not in chunks:
            chunks.insert(chunks.index(HELPERS) + 1, COMPLEX_HELPERS)


def _cpp_template(row: Ufunc):
    """The row's C++ in the loop's types (half through float, as fuse's kernels do); an
    argument the C++ would read twice (``({0} * {0})``, several outputs) is passed once to
    a lambda, so it is evaluated once."""
    def template(codes, sig, items, ctx):
        outs = result_types(row, sig)
        _need_helpers(ctx, any(t.is_complex for t in (*sig.args, *outs)))
        args = [ctx.to_float(t, c) if t.is_half else c for t, c in zip(sig.args, codes)]
        texts = [row.template(j, sig.args[0].dtype) for j in range(len(outs))]
        twice = any(sum(t.count(f"{{{k}}}") for t in texts) > 1 for k in range(row.nin))
        names = [f"jk_a{k}" for k in range(row.nin)] if twice else args
        results = []
        for text, t in zip(texts, outs):
            compute = _compute_ctype(t)
            expr = text.format(*names, T=compute)
            expr = f"{compute}({expr})" if t.is_complex else f"(({compute})({expr}))"
            results.append(ctx.via_float(t, expr) if t.is_half else expr)
        code = results[0] if len(results) == 1 else ctx.tuple_code(sig.result, results)
        if not twice:
            return code
        params = ", ".join(f"{_compute_ctype(t)} {n}" for t, n in zip(sig.args, names))
        return f"([]({params}) {{ return {code}; }}({', '.join(args)}))"

    return template


#: (ufunc, loop kind) -> the simulator's run-time twin of its C++ where that is not NumPy's
#: loop: an integer power with a negative exponent is 0 (or +-1) in the kernel; NumPy
#: raises. An integer reciprocal of 0 is 0 in the kernel, as in CuPy; NumPy's is undefined.
_UFUNC_RUNTIME = {("power", "i"): "_jk_ipow", ("power", "u"): "_jk_ipow",
                  ("reciprocal", "i"): "_jk_ireciprocal", ("reciprocal", "u"): "_jk_ireciprocal"}

#: Rows whose float16 loop the C++ computes between halves (not in float and rounded):
#: the simulator runs NumPy's own float16 loop for them.
_HALF_NATIVE = frozenset({"nextafter"})


def _py_template(row: Ufunc):
    """The simulator's: NumPy's ufunc on NumPy scalars with ``signature=`` the loop (or the
    C++'s run-time twin, :data:`_UFUNC_RUNTIME`); a half loop runs in float32 and rounds
    each result, as the C++ row does."""
    fn = f"_jk_np.{row.name}"

    def template(codes, sig, items, ctx):
        outs = result_types(row, sig)
        args = [ctx.to_float(t, c) if t.is_half else c for t, c in zip(sig.args, codes)]
        twin = _UFUNC_RUNTIME.get((row.name, sig.args[0].kind))
        if twin is not None:
            return f"{twin}({', '.join(args)})"
        if row.name in _HALF_NATIVE and sig.args[0].name == "float16":
            signature = "".join(ctx.type_code(t) + ", " for t in (*sig.args, *outs))
            return f"{fn}({', '.join(codes)}, signature=({signature}))"
        loop = [T.float32 if t.is_half else t for t in (*sig.args, *outs)]
        signature = "".join(ctx.type_code(t) + ", " for t in loop)
        call = f"{fn}({', '.join(args)}, signature=({signature}))"
        if not any(t.is_half for t in outs):
            return call
        if len(outs) == 1:
            return ctx.via_float(outs[0], call)
        parts = [ctx.via_float(t, f"r[{j}]") if t.is_half else f"r[{j}]" for j, t in enumerate(outs)]
        return f"(lambda r: ({''.join(p + ', ' for p in parts)}))({call})"

    return template


def _record(row: Ufunc) -> Builtin:
    params = ("x", "y")[: row.nin]
    nout = len(row.templates)
    doc = f"numpy.{row.name}, NumPy's loop for the argument types" + (
        f" ({nout} results, a tuple)." if nout > 1 else "."
    )
    return Builtin(
        f"ufunc.{row.name}", params, "numbers NumPy has a loop for", _rule(row),
        _cpp_template(row), doc, "ufunc", py=_py_template(row),
    )  # fmt: skip


#: ufunc name -> its builtin record (``ufunc.<name>``).
UFUNC_RECORDS = {name: _record(row) for name, row in UFUNC_ROWS.items()}

#: The records as a namespace: ``ufunc.gcd(a, b)`` in a kernel whose globals bind it
#: (fuse's generated kernels do).
ufunc = Namespace("ufunc", UFUNC_RECORDS)

__all__ = ["COMPLEX_HELPERS", "HELPERS", "UFUNC_RECORDS", "UFUNC_ROWS", "Ufunc", "resolve", "ufunc"]
