"""ReductionKernel on the CPU: its C pieces (map_expr, reduce_expr, post_map_expr, identity)
translated as for the other string kernels (:mod:`.strings`), each put in the reduction
loop of :mod:`.loops` (one block per output element, a shared-memory tree), which runs as
the simulator's own kernel (:mod:`.translated`).

Where ``reduce_expr`` folds as a NumPy ufunc does (``a + b``, ``a * b``, ``min``/``max``,
``fmin``/``fmax``, ``|``/``&``/``^`` of the reduce type, :func:`fold_of`), the reduction
runs as :class:`Fold`: the mapped values of every element computed at once (a vectorised
elementwise loop), ``ufunc.reduce`` over each output's row, then ``post_map_expr`` per
output (``simulate.last_path`` is ``"numpy"``; the block tree's is ``"tree"``)."""

from __future__ import annotations

import ast
import dataclasses
import math as math_
import re

import numpy

from ..compiler.strings.params import convert_scalar, param_dtype
from ..runtime.module import cluster_refused
from .csubset import I64, ctor
from .ctranslate import HELPERS, Function, Translator, Var
from . import loops
from .strings import (
    StringSim,
    Unit,
    bound_of,
    last_source,
    param_var,
    placeholder_types,
    py_name,
    raw_values,
    resolved_type,
    translate,
)
from .translated import define, flat, kernel_in, simulate

#: "auto": a reduce_expr NumPy folds runs as :class:`Fold`; "tree": every reduction runs as
#: the block tree (tests of the tree).
MODE = "auto"


class ReductionSim(StringSim):
    """``reduction_kernel.simulate(*args, out=None, axis=None, keepdims=False)``."""

    def __call__(self, *args, out=None, axis=None, keepdims=False, stream=None, cluster=None):
        k = self._kernel
        if cluster is not None:
            raise cluster_refused("ReductionKernel", k.name)
        if out is not None:
            args = args + (out if isinstance(out, tuple) else (out,))
        if type(axis) is list:
            axis = tuple(axis)
        host, back, arrays, a = self._arguments(args)
        nin = k.nin
        a.out_given = len(host) > nin
        dtypes = tuple(param_dtype(p, a.bound) for p in k.params)
        k._decide_shapes(a, arrays, axis, keepdims)
        kept = [d for d in range(len(a.in_shape)) if d not in a.axes]
        order = [*kept, *a.axes]
        outs = list(host[nin:]) if a.out_given else [
            numpy.empty(a.final_shape, dt) for dt in dtypes[nin:]]
        values, scalars = [], []
        for idx, p in enumerate(k.in_params):
            v = host[idx]
            if arrays[idx] is None:
                values.append(convert_scalar(v, dtypes[idx], p.name, k.name))
                scalars.append(idx)
            elif p.raw:
                f, _ = flat(v)
                values += raw_values(f, v)
            else:
                full = numpy.broadcast_to(v, a.in_shape).transpose(order)
                values.append(numpy.ascontiguousarray(full).reshape(-1))
        flats = [numpy.empty(a.out_size, dt) for dt in dtypes[nin:]]
        kernel = self.build(dtypes, tuple(scalars))
        fold = kernel.sim_fold if MODE == "auto" else None
        k.__dict__["_sim_path"] = "tree" if fold is None else "numpy"
        if a.out_size:
            args = (*values, *flats, numpy.int64(a.out_size), numpy.int64(a.red_size))
            if fold is not None:
                fold.run(args, a.out_size, a.red_size)
            else:
                simulate(kernel, loops.reduction_grid(a.out_size), loops.REDUCE_BLOCK, args)
        for o, f in zip(outs, flats):
            o[...] = f.reshape(o.shape)
        outs = self._returned(outs, back, a)
        return outs[0] if len(outs) == 1 else tuple(outs)

    def _make(self, dtypes, scalars, ndim=None):
        k = self._kernel
        bound = placeholder_types(bound_of(k.params, dtypes))
        rt = resolved_type(k.reduce_type, bound)
        identity = k.identity.strip() if k.identity else ""
        parts = [("preamble", k.preamble),
                 ("", "void __jk_map(void) { __jk_m ="), ("map_expr", k.map_expr), ("", "; }"),
                 ("", "void __jk_combine(void) { __jk_r ="), ("reduce_expr", k.reduce_expr),
                 ("", "; }"),
                 ("", "void __jk_post(void) {"), ("post_map_expr", k.post_map_expr), ("", ";"),
                 ("", "}")]
        if identity:
            parts += [("", "void __jk_identity(void) { __jk_r ="), ("identity", identity),
                      ("", "; }")]
        unit = Unit(k.name, parts, bound, k.options)
        used = {"a", "b"}
        params, inputs, scalar_names, post_names = [], {}, {}, {}
        elements = {}  # a non-raw input's name in the Python -> its dtype
        for idx, p in enumerate(k.in_params):
            py = py_name(p.name, used)
            var, more = param_var(p, py, dtypes[idx], idx in scalars, "_c_j")
            (scalar_names if idx in scalars else inputs)[p.name] = var
            if idx not in scalars and not p.raw:
                elements[py] = dtypes[idx]
            params += more
        for j, p in enumerate(k.out_params):
            py = py_name(p.name, used)
            post_names[p.name] = Var(f"{py}[_c_o]", dtypes[k.nin + j])
            params.append(py)
        params += ["_c_nout", "_c_nred"]
        acc = {"__jk_m": Var("_c_m", rt), "__jk_r": Var("_c_r", rt)}
        ab = {"a": Var("_c_a", rt), "b": Var("_c_b", rt)}
        bodies = {}

        def body(names):
            def entry(tr: Translator, ext):
                tr.names = {**scalar_names, **names, **acc}
                fn = Function(ext.decl.name, ext.decl.name, None, [], True)
                text = tr.function(ext, fn, extra_params=params)
                bodies[ext.decl.name.removeprefix("__jk_")] = [
                    line[4:] for line in text.split("\n")[1:] if line]
                return ""
            return entry

        # CuPy's names: _J within the reduction, _j in the reduced-axes-first input space
        index = {"_J": Var("_c_r0", I64, readonly=True), "_i": Var("_c_o", I64, readonly=True),
                 "_j": Var("(_c_r0 * _c_nout + _c_o)", I64, readonly=True)}
        entries = {"__jk_map": body({**inputs, **index}), "__jk_combine": body(ab),
                   "__jk_post": body({"a": ab["a"], **post_names}),
                   "__jk_identity": body({})}
        tr, sources = translate(unit, bound, entries)
        source = HELPERS + "\n\n" + "\n\n".join(s for s in sources.values() if s)
        py = py_name(k.name, set(params) | {"a", "b"})
        source += "\n\n" + loops.reduction(py, params, ctor(rt), bodies, bool(identity))
        fold = fold_of(bodies, rt, bool(identity))
        if fold is not None:
            source += "\n\n" + loops.reduction_map(py + "_map", params, bodies)
            source += "\n\n" + loops.reduction_post(py + "_post", params, bodies)
        namespace = define(source, f"ReductionKernel {k.name}")
        kernel = kernel_in(namespace, py)
        kernel.sim_source = source
        kernel.sim_fold = None if fold is None else Fold(
            *fold, rt, kernel_in(namespace, py + "_map"), kernel_in(namespace, py + "_post"),
            _mapped_argument(bodies["map"], params, elements, rt))
        return kernel

    def source(self, *args, **kwargs) -> str:
        return last_source(self._kernel)

    @property
    def last_path(self) -> str | None:
        """How the last simulated call reduced: ``"numpy"`` (reduce_expr is a NumPy ufunc's
        fold: the mapped values at once, then ``ufunc.reduce``) or ``"tree"`` (a block per
        output, a shared-memory tree, as on the GPU); None before the first call."""
        return self._kernel.__dict__.get("_sim_path")


@dataclasses.dataclass(frozen=True)
class Fold:
    """A reduction run as NumPy folds: ``map_kernel`` writes every element's mapped value,
    ``ufunc.reduce`` folds each output's row (then ``identity``, once: it is neutral, or
    the fold is idempotent), ``post_kernel`` runs post_map_expr per output."""

    ufunc: numpy.ufunc
    identity: object  # the reduce type's value, or None
    dtype: numpy.dtype
    map_kernel: object
    post_kernel: object
    #: the argument that holds the mapped values already (map_expr reads an input of the
    #: reduce type), else None
    mapped_argument: int | None = None

    def run(self, args: tuple, nout: int, nred: int) -> None:
        reduced = numpy.empty(nout, self.dtype)
        if nred:
            if self.mapped_argument is not None:  # flat, reduced axes last: as mapped
                mapped = args[self.mapped_argument]
            else:
                mapped = numpy.empty(nout * nred, self.dtype)
                simulate(self.map_kernel, *_grid(nout * nred), (*args, mapped))
            with numpy.errstate(all="ignore"):  # wrapped ints and inf as the tree gives them
                self.ufunc.reduce(mapped.reshape(nout, nred), axis=1, dtype=self.dtype,
                                  out=reduced)
                if self.identity is not None:
                    self.ufunc(self.identity, reduced, out=reduced)
        else:  # the tree's: the identity, else the reduce type's zero
            reduced[...] = 0 if self.identity is None else self.identity
        simulate(self.post_kernel, *_grid(nout), (*args, reduced))


def _mapped_argument(lines: list, params: list, elements: dict, rt: numpy.dtype):
    """The index in ``params`` of the input whose elements map_expr is (of the reduce
    type: no conversion), else None."""
    code = _code(lines[0], "_c_m = ") if len(lines) == 1 else None
    m = re.fullmatch(r"(\w+)\[_c_j\]", code or "")
    if m is None or elements.get(m.group(1)) != rt:
        return None
    return params.index(m.group(1))


def _grid(n: int) -> tuple:
    return loops.elementwise_grid(n, loops.BLOCK), loops.BLOCK


#: The reduce types NumPy's ufuncs fold as the simulator computes them.
_FOLD_TYPES = frozenset(["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                         "uint64", "float16", "float32", "float64", "complex64", "complex128"])
#: The combine ``reduce_expr`` translates to (operands ``_c_a``/``_c_b``, C's widening of
#: narrow types taken off) -> the ufunc folding as it does, by the reduce type's kind.
_INTEGER_FOLDS = {"+": numpy.add, "*": numpy.multiply, "|": numpy.bitwise_or,
                  "&": numpy.bitwise_and, "^": numpy.bitwise_xor, "min": numpy.minimum,
                  "max": numpy.maximum, "<": numpy.minimum, ">": numpy.maximum}
_FOLDS = {
    "i": _INTEGER_FOLDS, "u": _INTEGER_FOLDS,
    "f": {"+": numpy.add, "*": numpy.multiply, "numpy.fmin": numpy.fmin,
          "numpy.fmax": numpy.fmax},
    "c": {"+": numpy.add, "*": numpy.multiply},
    "b": {"+": numpy.logical_or, "|": numpy.logical_or, "max": numpy.logical_or,
          "or": numpy.logical_or, "*": numpy.logical_and, "&": numpy.logical_and,
          "min": numpy.logical_and, "and": numpy.logical_and, "^": numpy.logical_xor},
}
#: Folds that are not idempotent take the identity once only where it is neutral (the
#: tree starts each of its threads with it).
_NEUTRAL = {numpy.add: 0, numpy.multiply: 1, numpy.bitwise_xor: 0, numpy.logical_xor: 0}
_BINARY = re.compile(r"\((_c_[ab]) ([+*|&^]|and|or) (_c_[ab])\)")
_CALL = re.compile(r"(min|max|numpy\.fmin|numpy\.fmax)\((_c_[ab]), (_c_[ab])\)")
# a < b ? a : b (integers only: a float's NaN and signed zeros make the order matter)
_PICK = re.compile(r"\((_c_[ab]) if \((_c_[ab]) ([<>])=? (_c_[ab])\) else (_c_[ab])\)")


def fold_of(bodies: dict, rt: numpy.dtype, has_identity: bool):
    """(the ufunc, the identity's value or None) where the translated ``combine`` is a
    ufunc's fold of the reduce type ``rt`` and the identity a constant it may take once;
    else None (the block tree runs)."""
    if rt.name not in _FOLD_TYPES or len(bodies["combine"]) != 1:
        return None
    op = _combine_op(bodies["combine"][0], rt)
    ufunc = _FOLDS[rt.kind].get(op)
    if ufunc is None:
        return None
    if not has_identity:
        return ufunc, None
    value = _constant(bodies["identity"], rt)
    if value is None or (ufunc in _NEUTRAL and not value == _NEUTRAL[ufunc]):
        return None
    return ufunc, value


def _combine_op(line: str, rt: numpy.dtype):
    """The operator or function of ``_c_r = <a op b>`` (either order), or None."""
    code = _code(line, "_c_r = ")
    if code is None:
        return None
    if rt.kind == "b" and code.startswith("(") and code.endswith(" != numpy.int32(0))"):
        code = code[1:-len(" != numpy.int32(0))")]  # C's int result, made a bool again
    elif code.startswith(f"numpy.{rt.name}(") and code.endswith(")"):
        code = code[len(f"numpy.{rt.name}("):-1]  # the narrow type's wrap
    widened = "float32" if rt.kind == "f" else "int32"
    if rt.itemsize < 4 or rt.kind == "b":  # C computes narrow types as int (half as float)
        code = re.sub(rf"numpy\.{widened}\((_c_[ab])\)", r"\1", code)
    m = _BINARY.fullmatch(code)
    if m is not None and {m.group(1), m.group(3)} == {"_c_a", "_c_b"}:
        return m.group(2)
    m = _CALL.fullmatch(code)
    if m is not None and {m.group(2), m.group(3)} == {"_c_a", "_c_b"}:
        return m.group(1)
    m = _PICK.fullmatch(code)
    if m is None or rt.kind not in "iu" or {m.group(2), m.group(4)} != {"_c_a", "_c_b"}:
        return None
    if (m.group(1), m.group(5)) == (m.group(2), m.group(4)):
        return m.group(3)  # x < y ? x : y, the smaller
    if (m.group(1), m.group(5)) == (m.group(4), m.group(2)):
        return "<>".replace(m.group(3), "")  # x < y ? y : x, the larger
    return None


def _constant(lines: list, rt: numpy.dtype):
    """The identity's value where it is a constant: numbers, their signs, NumPy's number
    types applied to them, ``!=`` (a bool's), ``math.inf``/``math.nan``; else None."""
    code = _code(lines[0], "_c_r = ") if len(lines) == 1 else None
    if code is None:
        return None
    try:
        with numpy.errstate(all="ignore"):
            return rt.type(_value(ast.parse(code, mode="eval").body))
    except (_NotConstant, TypeError, ValueError, OverflowError):  # the tree decides
        return None


class _NotConstant(Exception):
    pass


_NUMBER_TYPES = _FOLD_TYPES | {"bool_"}


def _value(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, bool)):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _value(node.operand)
        return -v if isinstance(node.op, ast.USub) else v
    if (isinstance(node, ast.Call) and _dotted(node.func)[:1] == ("numpy",)
            and _dotted(node.func)[1] in _NUMBER_TYPES and len(node.args) == 1
            and not node.keywords):
        return getattr(numpy, _dotted(node.func)[1])(_value(node.args[0]))
    if (isinstance(node, ast.Compare) and len(node.ops) == 1
            and isinstance(node.ops[0], ast.NotEq)):
        return _value(node.left) != _value(node.comparators[0])
    if _dotted(node) in (("math", "inf"), ("math", "nan")):
        return getattr(math_, node.attr)
    raise _NotConstant


def _dotted(node) -> tuple:
    if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)):
        return node.value.id, node.attr
    return ()


def _code(line: str, prefix: str):
    code = line.split("  #", 1)[0].strip()
    return code[len(prefix):] if code.startswith(prefix) else None


__all__ = ["ReductionSim"]
