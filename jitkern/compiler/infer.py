"""Stage 2: the type rules. Pure functions of types (and weak Python constants).

An *operand* is what a rule sees of a value: its :class:`~.types.Type`, or, for a
Python literal that has not been given a type yet, the Python value itself
(a "weak" scalar in NumPy 2's sense). The two modes differ only here:

- ``mode='cuda'``: a literal is typed on its own (int -> int32, or int64 if it
  does not fit; float -> float32; complex -> complex64) and two types promote to
  the later one in ``CUDA_ORDER`` (CuPy's cuda mode);
- ``mode='numpy'``: NumPy 2 promotion, Python literals weak (``float32 * 2.0`` is
  float32, ``int8 + 1`` is int8), typed variables as in NumPy.
"""

from __future__ import annotations

import numpy

from ..errors import JitkernOverflowError, JitkernTypeError, JitkernValueError
from . import types as T

MODES = ("cuda", "numpy")

CUDA_ORDER = (
    "bool",
    "int8",
    "uint8",
    "int16",
    "uint16",
    "int32",
    "uint32",
    "int64",
    "uint64",
    "float8_e4m3fn",
    "float8_e5m2",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "complex64",
    "complex128",
)
_RANK = {name: i for i, name in enumerate(CUDA_ORDER)}

PY_SCALARS = (bool, int, float, complex)


def is_weak(op) -> bool:
    return isinstance(op, PY_SCALARS)


def check_mode(mode: str) -> str:
    """The mode's canonical name; ``'python'`` (cupyx.jit's name) means ``'numpy'``."""
    if mode == "python":
        return "numpy"
    if mode not in MODES:
        raise JitkernValueError(f"mode: expected 'cuda' or 'numpy' (or 'python'), got {mode!r}")
    return mode


def literal_type(value, mode: str) -> T.Scalar:
    """The type a Python literal gets when it must have one."""
    if isinstance(value, (numpy.bool_, numpy.number)):
        return T.scalar_from_dtype(value.dtype)
    if isinstance(value, bool):
        return T.bool_
    if isinstance(value, int):
        if mode == "cuda" and -(1 << 31) <= value < (1 << 31):
            return T.int32
        if -(1 << 63) <= value < (1 << 63):
            return T.int64
        if 0 <= value < (1 << 64):
            return T.uint64
        raise JitkernOverflowError(f"integer literal {value} does not fit in 64 bits")
    if isinstance(value, float):
        return T.float32 if mode == "cuda" else T.float64
    if isinstance(value, complex):
        return T.complex64 if mode == "cuda" else T.complex128
    raise JitkernTypeError(f"{value!r} is not a scalar")


def operand_type(op, mode: str) -> T.Type:
    return literal_type(op, mode) if is_weak(op) else op


def result_type(operands, mode: str) -> T.Scalar:
    """The common type of scalar operands (types or weak literals)."""
    ops = list(operands)
    for op in ops:
        if not is_weak(op) and not isinstance(op, T.Scalar):
            raise JitkernTypeError(f"expected a number, got {op}")
    if all(is_weak(op) for op in ops):
        return _promote_types([literal_type(op, mode) for op in ops], mode)
    if mode == "cuda":
        return _promote_types([operand_type(op, mode) for op in ops], mode)
    return _numpy_result_type(ops)


def _float8_result(ops):
    """numpy mode's float8 operands: one float8 type with bools, int8/uint8 and Python
    numbers stays that type; two different float8 types give float16, which holds both exactly; with
    any other type a float8 promotes as float16 does. Returns the type, the operands with
    float16 for each float8, or None when no operand is a float8."""
    typed = [op for op in ops if not is_weak(op)]
    eights = {op for op in typed if op.is_float8}
    if not eights:
        return None
    if len(eights) == 1 and all(op.is_float8 or op.name in _WITH_FLOAT8 for op in typed):
        return next(iter(eights))
    wider = T.bfloat16 if T.bfloat16 in typed else T.float16  # either holds a float8 exactly
    return [wider if not is_weak(op) and op.is_float8 else op for op in ops]


#: What a float8 type absorbs (ml_dtypes' promotion: bool and 8-bit ints).
_WITH_FLOAT8 = ("bool", "int8", "uint8")


def _promote_types(types, mode: str) -> T.Scalar:
    if mode == "numpy":
        return _numpy_result_type(types)
    best = max(types, key=lambda t: _RANK[t.name])
    names = {t.name for t in types}
    if best.is_float8 and len(names & set(T.FLOAT8_NAMES)) > 1:
        return T.float16  # the two float8 types: float16 holds both exactly
    if {"float16", "bfloat16"} <= names and best.name in ("float16", "bfloat16"):
        return T.float32
    if best.is_complex and any(t.name == "float64" for t in types):
        return T.complex128
    return best


def _numpy_result_type(ops) -> T.Scalar:
    eight = _float8_result(ops)
    if isinstance(eight, T.Scalar):
        return eight
    if eight is not None:
        ops = eight
    # bfloat16 is not a NumPy dtype without ml_dtypes: it promotes like float16,
    # and bfloat16 with float16 gives float32 (what ml_dtypes and PyTorch do).
    has_bf16 = any(op is T.bfloat16 for op in ops)
    if has_bf16:
        if any(op is T.float16 for op in ops):
            return T.float32
        ops = [T.float16 if op is T.bfloat16 else op for op in ops]
    args = [op if is_weak(op) else numpy.dtype(op.name) for op in ops]
    out = T.scalar_from_dtype(numpy.result_type(*args))
    if has_bf16 and out is T.float16:
        return T.bfloat16
    return out


#: numpy mode, typed bool operands: NumPy's ``add`` and ``multiply`` have a bool loop
#: (logical or, and), ``subtract`` refuses bools (None), and the other operators have no
#: bool loop, so NumPy runs their smallest integer loop (int8).
NUMPY_BOOL_LOOPS = {
    "+": "bool",
    "*": "bool",
    "-": None,
    "//": "int8",
    "%": "int8",
    "**": "int8",
    "<<": "int8",
    ">>": "int8",
}


def arithmetic_type(operands, mode: str, op: str = "+") -> T.Scalar:
    """Like result_type, but bool arithmetic gives an integer (Python: True + True == 2),
    except on typed bools in numpy mode, which follow NumPy's loops (NUMPY_BOOL_LOOPS)."""
    ops = list(operands)
    out = result_type(ops, mode)
    if out is not T.bool_:
        return out
    if mode == "numpy" and not all(is_weak(o) for o in ops):
        return numpy_bool_loop(op)
    return T.int32 if mode == "cuda" else T.int64


def numpy_bool_loop(op: str) -> T.Scalar:
    """The type NumPy computes ``bool op bool`` in (TypeError where it refuses bools)."""
    name = NUMPY_BOOL_LOOPS[op]
    if name is None:
        raise JitkernTypeError(
            f"NumPy does not apply {op} to bools; use ^ (or numpy.logical_xor), or convert "
            "to an int first"
        )
    return T.scalar(name)


def true_divide_type(operands, mode: str) -> T.Scalar:
    out = result_type(operands, mode)
    if out.kind in "biu":
        if mode == "cuda" and out.itemsize <= 2:
            return T.float32
        return T.float64
    return out


def integer_type(operands, mode: str, op_name: str) -> T.Scalar:
    """Operand type of bit operations: integers and bools only."""
    ops = list(operands)
    out = result_type(ops, mode)
    if out.kind not in "biu":
        raise JitkernTypeError(f"{op_name} needs integers or bools, got {out}")
    if out is T.bool_ and mode == "numpy" and op_name in NUMPY_BOOL_LOOPS:  # shifts
        return T.int64 if all(is_weak(o) for o in ops) else numpy_bool_loop(op_name)
    return out


def float_type(t: T.Scalar, mode: str = "cuda") -> T.Scalar:
    """The floating type math functions compute ``t`` in: ints -> float64, except in numpy
    mode, where bools and ints take NumPy's loop: the smallest float that holds them exactly
    (bool and 8-bit ints -> float16, 16-bit ints -> float32)."""
    if t.kind not in "biu":
        return t
    if mode == "numpy":
        return _NUMPY_INT_FLOATS.get(t.itemsize, T.float64)
    return T.float64


_NUMPY_INT_FLOATS = {1: T.float16, 2: T.float32}


def math_type(operands, mode: str) -> T.Scalar:
    """The type a math function computes real operands in.

    Their common type when it is a float; otherwise (integers and bools) float64, but in
    numpy mode NumPy's loop: the smallest float every operand converts to exactly
    (``hypot(int8, uint8)`` is float16, though ``int8 + uint8`` is int16).
    """
    ops = list(operands)
    t = result_type(ops, mode)
    if t.kind not in "biu" or mode != "numpy":
        return float_type(t, mode)
    # a Python int takes the common type (int8 with an int8, int64 with a bool)
    exact = [t if is_weak(op) else op for op in ops]
    return result_type([float_type(op, mode) for op in exact], mode)


def can_assign(src, dst: T.Type, mode: str) -> bool:
    """Whether a value of ``src`` (type or weak literal) may be stored in ``dst``.

    NumPy's 'same_kind' casting: bool -> uint -> int -> float -> complex, and
    narrowing within a kind. Literals go anywhere their kind fits (an int literal into a
    float variable, not a float literal into an int variable).
    """
    if not isinstance(dst, T.Scalar):
        return src == dst
    if is_weak(src):
        kind = literal_type(src, "numpy").kind
        return _KIND_ORDER.index(kind) <= _KIND_ORDER.index(_kind(dst))
    if not isinstance(src, T.Scalar):
        return False
    return _KIND_ORDER.index(_kind(src)) <= _KIND_ORDER.index(_kind(dst))


_KIND_ORDER = "buifc"


def can_store(src, dst: T.Type) -> bool:
    """Whether a value may be written into an array element: NumPy's ``a[i] = v`` casts
    unsafely, so anything but complex -> real (and non-numbers) goes."""
    if not isinstance(dst, T.Scalar):
        return src == dst
    if is_weak(src):
        return not isinstance(src, complex) or dst.is_complex
    if not isinstance(src, T.Scalar):
        return False
    return dst.is_complex or not src.is_complex


def _kind(t: T.Scalar) -> str:
    return t.kind


def describe_mode_table() -> list[tuple[str, str, str]]:
    """Rows (expression, cuda mode, numpy mode) for docs/jit.md, computed from the rules."""
    i8, i32, i64, f16, f32, f64, u32 = (
        T.int8,
        T.int32,
        T.int64,
        T.float16,
        T.float32,
        T.float64,
        T.uint32,
    )
    cases = [
        ("literal `1`", lambda m: literal_type(1, m)),
        ("literal `1.0`", lambda m: literal_type(1.0, m)),
        ("literal `1j`", lambda m: literal_type(1j, m)),
        ("`int8 + 1`", lambda m: arithmetic_type([i8, 1], m)),
        ("`int32 + int64`", lambda m: arithmetic_type([i32, i64], m)),
        ("`uint32 + int32`", lambda m: arithmetic_type([u32, i32], m)),
        ("`int32 + float32`", lambda m: arithmetic_type([i32, f32], m)),
        ("`int64 * 2.0`", lambda m: arithmetic_type([i64, 2.0], m)),
        ("`float32 * 2.0`", lambda m: arithmetic_type([f32, 2.0], m)),
        ("`float16 + float32`", lambda m: arithmetic_type([f16, f32], m)),
        ("`float32 + float64`", lambda m: arithmetic_type([f32, f64], m)),
        ("`int32 / int32`", lambda m: true_divide_type([i32, i32], m)),
        ("`int8 / int8`", lambda m: true_divide_type([i8, i8], m)),
        ("`True + True`", lambda m: arithmetic_type([True, True], m)),
        ("`bool + bool` (typed)", lambda m: arithmetic_type([T.bool_, T.bool_], m)),
        ("`bool // bool` (typed)", lambda m: arithmetic_type([T.bool_, T.bool_], m, "//")),
        ("`numpy.exp(int8)`", lambda m: math_type([i8], m)),
        ("`numpy.exp(int16)`", lambda m: math_type([T.int16], m)),
        ("`float32 + 1j`", lambda m: arithmetic_type([f32, 1j], m)),
    ]
    return [(label, str(rule("cuda")), str(rule("numpy"))) for label, rule in cases]
