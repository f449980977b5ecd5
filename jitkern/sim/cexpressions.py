"""The expressions of the C subset (see :mod:`.ctranslate`): every C expression becomes a
typed :class:`~.csubset.Val` of JIT Python, with C's conversions made explicit; calls of
CUDA's math, atomic, shuffle, vote, bit and barrier functions map to the JIT's.
:class:`Expressions` is the half of :class:`.ctranslate.Translator` that writes them; the
tables of C names below are what it reads."""

from __future__ import annotations

import ast as pyast
import dataclasses
import math

import numpy

from ..compiler.strings.environment import constant_values
from ..records import c_members
from . import ccomplex, cmath, cprelude, ctextures
from .csubset import (
    BF16, BOOL, F16, F32, F64, I8, I32, I64, U32, U64, Pointer, Val,
    common, convert, ctor, float_text, int_value, promote, real_of,
)
from .cstructs import CStruct, Ref

_CONSTANTS = {
    **constant_values(),  # every kernel's M_* and CUDART_* (compiler/strings/environment.py)
    "INFINITY": (F32, "math.inf"), "NAN": (F32, "math.nan"), "HUGE_VALF": (F32, "math.inf"),
    "HUGE_VAL": (F64, "math.inf"), "FLT_MAX": (F32, repr(float(numpy.finfo(F32).max))),
    "DBL_MAX": (F64, repr(float(numpy.finfo(F64).max))),
    "FLT_MIN": (F32, repr(float(numpy.finfo(F32).tiny))),
    "FLT_EPSILON": (F32, repr(float(numpy.finfo(F32).eps))),
    "DBL_EPSILON": (F64, repr(float(numpy.finfo(F64).eps))),
    "INT_MAX": (I32, "2147483647"), "INT_MIN": (I32, "-2147483648"),
    "UINT_MAX": (U32, "4294967295"), "LLONG_MAX": (I64, str(2**63 - 1)),
    "LLONG_MIN": (I64, str(-(2**63))), "ULLONG_MAX": (U64, str(2**64 - 1)),
    "warpSize": (I32, "32"), "true": (BOOL, "True"), "false": (BOOL, "False"),
}

_ATOMICS = {"atomicAdd": "atomic_add", "atomicSub": "atomic_sub", "atomicExch": "atomic_exch",
            "atomicMin": "atomic_min", "atomicMax": "atomic_max", "atomicAnd": "atomic_and",
            "atomicOr": "atomic_or", "atomicXor": "atomic_xor", "atomicInc": "atomic_inc",
            "atomicDec": "atomic_dec", "atomicCAS": "atomic_cas"}
_SHUFFLES = {"__shfl_sync": "shfl_sync", "__shfl_up_sync": "shfl_up_sync",
             "__shfl_down_sync": "shfl_down_sync", "__shfl_xor_sync": "shfl_xor_sync"}
_VOTES = {"__ballot_sync": ("ballot_sync", U32), "__any_sync": ("any_sync", I32),
          "__all_sync": ("all_sync", I32)}
_BITS = {"__popc": ("popc", U32), "__popcll": ("popc", U64), "__clz": ("clz", I32),
         "__clzll": ("clz", I64), "__ffs": ("ffs", I32), "__ffsll": ("ffs", I64),
         "__brev": ("brev", U32), "__brevll": ("brev", U64)}
_BARRIERS = {"__syncthreads": "jit.syncthreads()", "__threadfence": "jit.threadfence()",
             "__threadfence_block": "jit.threadfence_block()",
             "__threadfence_system": "jit.threadfence_system()"}
_BARRIER_PREDICATES = {"__syncthreads_count": ("syncthreads_count", I32),
                       "__syncthreads_and": ("syncthreads_and", I32),
                       "__syncthreads_or": ("syncthreads_or", I32)}
#: cuda_fp16.h's and cuda_bf16.h's conversions: name -> (argument type, result type)
_HALF = {"__half2float": (F16, F32), "__float2half_rn": (F32, F16), "__float2half": (F32, F16),
         "__double2half": (F64, F16), "__bfloat162float": (BF16, F32),
         "__float2bfloat16_rn": (F32, BF16), "__float2bfloat16": (F32, BF16),
         "__double2bfloat16": (F64, BF16)}
#: ElementwiseKernel's indexer: its members -> the names the caller binds them to.
_IND = {"size": "_ind", "get": "__jk_ind_get", "ndim": "__jk_ind_ndim"}
_INDEX_VARS = ("threadIdx", "blockIdx", "blockDim", "gridDim")
_ARITH = {"+", "-", "*"}
_BITWISE = {"&", "|", "^"}
_COMPARE = {"<", ">", "<=", ">=", "==", "!="}


@dataclasses.dataclass
class Function:
    name: str
    py: str
    ret: object
    params: list  # [(name, type)]
    kernel: bool
    views: list = dataclasses.field(default_factory=list)  # [(char* param index, dtype)]


@dataclasses.dataclass
class _Fake:
    lvalue: object
    op: str
    rvalue: object

    @property
    def coord(self):
        return getattr(self.lvalue, "coord", None)


class Expressions:
    """C expressions -> typed JIT Python (mixed into :class:`.ctranslate.Translator`, whose
    scopes, temporaries and errors these methods use)."""

    def expr(self, node) -> Val:
        method = getattr(self, "e_" + type(node).__name__, None)
        if method is None:
            raise self.refuse(f"the expression {type(node).__name__}", node)
        return method(node)

    def to(self, v: Val, t, node) -> str:
        if v.is_pointer or isinstance(t, Pointer):
            raise self.refuse("a pointer where a number is expected", node)
        if isinstance(v.type, CStruct) or isinstance(t, CStruct):
            raise self.refuse("a struct where a number is expected, or a number where a "
                              "struct is", node)
        if v.type is None:
            raise self.refuse("the value of a void function", node)
        if t.kind != "c" and v.type.kind == "c":
            raise self.refuse("a complex number converted to a real one", node)
        return convert(v, t)

    def truth(self, v: Val, node) -> str:
        return self.to(v, BOOL, node)

    def e_Constant(self, node) -> Val:
        text = node.value
        if node.type == "string":
            raise self.refuse("a string literal", node)
        if node.type == "char":
            return Val(f"numpy.int8({ord(pyast.literal_eval(text))})", I8)
        if "float" not in node.type and "double" not in node.type:
            return self.int_literal(text, node)
        lower = text.lower()
        t = F32 if lower.endswith("f") else F64
        value = float.fromhex(lower.rstrip("fl")) if lower.startswith("0x") else float(
            lower.rstrip("fl"))
        return Val(f"{ctor(t)}({float_text(value)})", t)

    def int_literal(self, text: str, node) -> Val:
        lower = text.lower()
        digits = lower.rstrip("ul")
        suffix = lower[len(digits):]
        value = int_value(digits)
        decimal = not digits.startswith("0") or digits == "0"
        unsigned, long_ = "u" in suffix, "l" in suffix
        choices = []
        if not unsigned and not long_:
            choices = [I32] + ([] if decimal else [U32]) + [I64] + ([] if decimal else [U64])
        elif unsigned and not long_:
            choices = [U32, U64]
        elif long_ and not unsigned:
            choices = [I64] + ([] if decimal else [U64])
        else:
            choices = [U64]
        for t in choices:
            if value <= numpy.iinfo(t).max:
                return Val(f"{ctor(t)}({value})", t)
        raise self.refuse(f"the integer literal {text} (too large)", node)

    def e_ID(self, node) -> Val:
        var = self.lookup(node.name)
        if var is not None:
            return var.val()
        if node.name in _CONSTANTS:
            t, text = _CONSTANTS[node.name]
            return Val(f"{ctor(t)}({text})", t)
        raise self.refuse(f"the name {node.name!r} (not declared)", node)

    def e_Cast(self, node) -> Val:
        t, dims = self.decl_type(node.to_type.type)
        v = self.expr(node.expr)
        if isinstance(t, Pointer) and v.is_pointer and dims is None:
            return self.byte_cast(v, t, node)
        if isinstance(t, Pointer) or dims is not None:
            raise self.refuse("a cast to a pointer type", node)
        if t is None:  # (void)x
            return Val("", None)
        if v.type is not None and not v.is_pointer and v.type.kind == "c" and t.kind != "c":
            raise self.refuse("a complex number cast to a real type", node)
        return Val(self.to(v, t, node), t)

    def e_TernaryOp(self, node) -> Val:
        cond = self.truth(self.expr(node.cond), node)
        saved, self.pre = self.pre, []
        a = self.expr(node.iftrue)
        b = self.expr(node.iffalse)
        if self.pre:
            raise self.refuse("a side effect inside ?: (assign it in a statement first)", node)
        self.pre = saved
        if a.is_pointer or b.is_pointer:
            raise self.refuse("a pointer chosen by ?:", node)
        t = common(a.type, b.type) if not (a.type == BOOL and b.type == BOOL) else BOOL
        return Val(f"({self.to(a, t, node)} if {cond} else {self.to(b, t, node)})", t)

    def e_BinaryOp(self, node) -> Val:
        op = node.op
        if op in ("&&", "||"):
            a = self.truth(self.expr(node.left), node)
            saved, self.pre = self.pre, []
            b = self.truth(self.expr(node.right), node)
            if self.pre:
                raise self.refuse(f"a side effect in the right operand of {op}", node)
            self.pre = saved
            return Val(f"({a} {'and' if op == '&&' else 'or'} {b})", BOOL)
        a, b = self.expr(node.left), self.expr(node.right)
        return self.binary(op, a, b, node)

    def binary(self, op: str, a: Val, b: Val, node) -> Val:
        if a.is_pointer or b.is_pointer:
            return self.pointer_arith(op, a, b, node)
        if a.type is None or b.type is None:
            raise self.refuse("the value of a void function", node)
        if op in ("<<", ">>"):
            if a.type.kind not in "biu" or b.type.kind not in "biu":
                raise self.refuse(f"{op} on a non-integer", node)
            t = promote(a.type)
            return Val(f"({self.to(a, t, node)} {op} {self.to(b, t, node)})", t)
        t = common(a.type, b.type)
        x, y = self.to(a, t, node), self.to(b, t, node)
        if op in _COMPARE:
            return Val(f"({x} {op} {y})", BOOL)
        if op in _ARITH:
            return Val(f"({x} {op} {y})", t)
        if op in _BITWISE:
            if t.kind not in "iu":
                raise self.refuse(f"{op} on a floating-point value", node)
            return Val(f"({x} {op} {y})", t)
        if op == "/":
            if t.kind in "iu":
                return Val(f"_c_div({x}, {y})", t)
            return Val(f"({x} / {y})", t)
        if op == "%":
            if t.kind not in "iu":
                raise self.refuse("% on a floating-point value (use fmod)", node)
            return Val(f"_c_rem({x}, {y})", t)
        raise self.refuse(f"the operator {op}", node)

    def pointer_arith(self, op: str, a: Val, b: Val, node) -> Val:
        if op == "+" and b.is_pointer and not a.is_pointer:
            a, b = b, a
        if op in ("+", "-") and a.is_pointer and not b.is_pointer and not a.type.inner:
            if b.type.kind not in "biu":
                raise self.refuse("a pointer plus a non-integer", node)
            step = convert(b, I64)
            if a.type.view is not None:  # a pointer into bytes: its offset counts bytes
                step = f"({step} * numpy.int64({a.type.elem.itemsize}))"
            off = step if op == "+" else f"(-{step})"
            if a.offset is not None:
                off = f"({a.offset} + {off})"
            return Val(a.code, a.type, False, a.base, off)
        raise self.refuse(f"this pointer arithmetic ({op})", node)

    def e_UnaryOp(self, node) -> Val:
        op = node.op
        if op in ("p++", "p--", "++", "--"):
            return self.incdec(node, statement=False)
        if op == "sizeof":
            return self.size_of(node)
        v = self.expr(node.expr)
        if op == "*":
            return self.index(v, Val("numpy.int64(0)", I64), node)
        if op == "&":
            if v.lvalue and v.base is not None:
                return Val(v.base, Pointer(v.type), False, v.base, v.offset)
            raise self.refuse("the address of a local variable", node)
        if v.is_pointer:
            raise self.refuse(f"{op} on a pointer", node)
        if op == "!":
            return Val(f"(not {self.truth(v, node)})", BOOL)
        t = promote(v.type)
        x = self.to(v, t, node)
        if op == "-":
            if t.kind == "u":
                return Val(f"({ctor(t)}(0) - {x})", t)
            return Val(f"(-{x})", t)
        if op == "+":
            return Val(x, t)
        if op == "~":
            if t.kind not in "iu":
                raise self.refuse("~ on a non-integer", node)
            return Val(f"(~{x})", t)
        raise self.refuse(f"the operator {op}", node)

    def size_of(self, node) -> Val:
        """``sizeof(type)`` or ``sizeof x``: a size_t constant."""
        target = node.expr
        if type(target).__name__ == "Typename":
            t, dims = self.decl_type(target.type)
            if isinstance(t, Pointer):
                return Val("numpy.uint64(8)", U64)
            if t is None:
                raise self.refuse("sizeof(void)", node)
            return Val(f"numpy.uint64({t.itemsize * math.prod(d or 1 for d in dims or [1])})",
                       U64)
        saved, self.pre = self.pre, []
        v = self.expr(target)
        self.pre = saved  # sizeof does not evaluate its operand
        if v.is_pointer:
            if v.type.inner or type(target).__name__ != "ID":
                raise self.refuse("sizeof of an array or pointer expression", node)
            var = self.lookup(target.name)
            if var is not None and var.offset is None and var.size is None:
                raise self.refuse("sizeof of an array (use its element count)", node)
            return Val("numpy.uint64(8)", U64)
        return Val(f"numpy.uint64({v.type.itemsize})", U64)

    def e_ArrayRef(self, node) -> Val:
        base = self.expr(node.name)
        idx = self.expr(node.subscript)
        return self.index(base, idx, node)

    def index(self, p: Val, idx: Val, node) -> Val:
        if not p.is_pointer:
            raise self.refuse("indexing a value that is not an array or pointer", node)
        if idx.is_pointer and p.base in self.raw_shapes and idx.base == "_c_ind":
            return self.index_by_ind(p, node)
        if idx.is_pointer or idx.type.kind not in "biu":
            raise self.refuse("an index that is not an integer", node)
        if p.type.view is not None:
            return self.view_element(p, idx, node)
        inner = p.type.inner
        if inner:
            step = math.prod(inner)
            off = f"({convert(idx, I64)} * numpy.int64({step}))"
            if p.offset is not None:
                off = f"({p.offset} + {off})"
            return Val(p.code, Pointer(p.type.elem, inner[1:]), False, p.base, off)
        i = idx.code if idx.type.kind != "b" else convert(idx, I32)
        if p.offset is not None:
            i = f"({p.offset} + {convert(idx, I64)})"
        return Val(f"{p.base}[{i}]", p.type.elem, True, p.base, i)

    def index_by_ind(self, p: Val, node) -> Val:
        """``w[_ind.get()]`` on a raw array of the loop's rank: its element at the index."""
        shape, nd = self.raw_shapes[p.base]
        if p.offset is not None or p.type.inner:
            raise self.refuse("_ind.get() indexing a moved pointer", node)
        flat = "_c_ind[0]"
        for d in range(1, nd):
            flat = f"({flat} * {shape}[{d}] + _c_ind[{d}])"
        self.indexed_by_ind.add(p.base)
        return Val(f"{p.base}[{flat}]", p.type.elem, True, p.base, flat)

    def e_StructRef(self, node) -> Val:
        if node.type == "->":
            base = self.expr(node.name)
            if base.is_pointer and isinstance(base.type.elem, CStruct):
                element = self.index(base, Val("numpy.int64(0)", I64), node)
                return self.field_of(element, node.field.name, node)
        if node.type == "." and self.names_struct(node.name):
            return self.field_of(self.expr(node.name), node.field.name, node)
        if node.type == "." and type(node.name).__name__ == "ID" and node.name.name in _INDEX_VARS:
            if self.lookup(node.name.name) is None and node.field.name in ("x", "y", "z"):
                return Val(f"jit.{node.name.name}.{node.field.name}", U32)
        if node.type == "." and node.field.name in ("x", "y"):  # float2-style parts
            v = self.expr(node.name)
            if not v.is_pointer and v.type is not None and v.type.kind == "c":
                return Val(f"{v.code}.{'real' if node.field.name == 'x' else 'imag'}",
                           real_of(v.type))
        if node.type == "." and type(node.name).__name__ == "ID" and node.name.name == "_ind":
            var = self.lookup(_IND.get(node.field.name, ""))
            if var is not None and node.field.name == "ndim":
                return var.val()
        if node.type == ".":  # a field of a record (a structured dtype): the JIT's struct field
            base = self.expr(node.name)
            fields = (None if base.is_pointer or base.type is None
                      else getattr(base.type, "fields", None))
            # the C++ member (records.c_members: ``new_`` for a field ``new``) -> the field
            field = {m: f for f, m in c_members(fields or ()).items()}.get(node.field.name)
            if field is not None:
                field_type = fields[field][0]
                if field_type.shape:  # the JIT reads no sub-array field
                    raise self.refuse(f"the sub-array field {field!r} of a record", node)
                return Val(f"{base.code}.{field}", field_type, base.lvalue)
            if fields is not None:
                raise self.refuse(f"field {node.field.name!r}, which the record has not "
                                  f"(its fields: {', '.join(fields)})", node)
        raise self.refuse("a struct member (only threadIdx/blockIdx/blockDim/gridDim .x/.y/.z)",
                          node)

    def e_ExprList(self, node) -> Val:
        v = None
        for e in node.exprs:
            v = self.expr(e)
        return v

    # assignment and ++/-- (statements, or hoisted before the statement using them)
    def store(self, target: Val, code: str) -> str:
        return f"{target.code} = {code}"

    def assign(self, node, statement: bool) -> Val:
        target = self.expr(node.lvalue)
        rhs = self.expr(node.rvalue)
        if target.is_pointer:
            return self.assign_pointer(node, target, rhs)
        if isinstance(target.type, CStruct):
            return self.assign_struct(node, target, rhs)
        if not target.lvalue:
            raise self.refuse("an assignment to something that is not a variable or element",
                              node)
        self.check_writable(target, node)
        if node.op == "=":
            code = self.to(rhs, target.type, node)
        else:
            value = self.binary(node.op[:-1], target, rhs, node)
            code = self.to(value, target.type, node)
        target = self.stable(target)
        self.pre.append(self.store(target, code))
        return Val(target.code, target.type)

    def stable(self, target: Val) -> Val:
        """An element whose index has side effects or is long: index it through a temp."""
        return target

    def assign_pointer(self, node, target: Val, rhs: Val) -> Val:
        var = self.lookup(node.lvalue.name) if type(node.lvalue).__name__ == "ID" else None
        if var is None or var.offset is None or not isinstance(var.type, Pointer):
            raise self.refuse("an assignment to this pointer", node)
        if node.op in ("+=", "-="):
            rhs = self.pointer_arith(node.op[0], target, rhs, node)
        elif node.op != "=":
            raise self.refuse(f"{node.op} on a pointer", node)
        if not rhs.is_pointer or rhs.base != var.py:
            raise self.refuse("a pointer moved to another array", node)
        self.pre.append(f"{var.offset} = {rhs.offset or 'numpy.int64(0)'}")
        return target

    def incdec(self, node, statement: bool) -> Val:
        target = self.expr(node.expr)
        op = "+" if "++" in node.op else "-"
        if target.is_pointer:
            one = Val("numpy.int64(1)", I64)
            self.assign_pointer(_Fake(node.expr, op + "=", None), target, one)
            return target
        if not target.lvalue:
            raise self.refuse(f"{node.op} on something that is not a variable", node)
        self.check_writable(target, node)
        one = Val("numpy.int32(1)", I32)
        new = self.to(self.binary(op, target, one, node), target.type, node)
        if node.op.startswith("p") and not statement:
            old = self.temp()
            self.pre.append(f"{old} = {target.code}")
            self.pre.append(self.store(target, new))
            return Val(old, target.type)
        self.pre.append(self.store(target, new))
        return Val(target.code, target.type)

    def e_Assignment(self, node) -> Val:
        return self.assign(node, statement=False)

    # -- calls -----------------------------------------------------------------
    def e_FuncCall(self, node) -> Val:
        v = self.call(node)
        if v is None or v.type is None:
            raise self.refuse("the value of a void function", node)
        return v

    def args(self, node) -> list:
        return [self.expr(a) for a in (node.args.exprs if node.args is not None else [])]

    def call(self, node) -> Val | None:
        if type(node.name).__name__ == "StructRef":
            return self.method(node)
        if type(node.name).__name__ != "ID":
            raise self.refuse("a call through a pointer", node)
        name = node.name.name
        fn = self.functions.get(name)
        if fn is not None:
            return self.call_function(fn, node)
        if self.templates is not None and name in self.templates.lambdas:
            return self.templates.inline_lambda(self, name, node)
        if self.templates is not None and self.templates.called(name) is not None:
            args = self.args(node)
            return self.call_function(self.templates.function(self, name, args, node), node, args)
        texture = ctextures.handler(name)  # reads its arguments' nodes (template types)
        if texture is not None:
            return texture(self, name, node)
        handler = self.builtin(name)
        if handler is None:
            raise self.refuse(f"the function {name}()", node)
        return handler(name, self.args(node), node)

    def call_function(self, fn: Function, node, args=None) -> Val:
        if fn.kernel:
            raise self.refuse(f"a call of the __global__ function {fn.name}", node)
        args = self.args(node) if args is None else args
        if len(args) != len(fn.params):
            raise self.refuse(f"{fn.name}() called with {len(args)} argument(s), it takes "
                              f"{len(fn.params)}", node)
        codes, refs = [], []
        for v, (pname, t) in zip(args, fn.params):
            if isinstance(t, Pointer):
                if not v.is_pointer or v.type.elem != t.elem or v.type.view is not None:
                    raise self.refuse(f"argument {pname} of {fn.name}: a pointer to "
                                      f"{t.elem} is expected", node)
                codes += [v.base, v.offset or "numpy.int64(0)"]
            elif isinstance(t, CStruct):
                codes += self.struct_argument_codes(self.struct_value(v, t, node), node)
            elif isinstance(t, Ref):
                if v.is_pointer or not v.lvalue or v.type != t.elem:
                    raise self.refuse(f"argument {pname} of {fn.name}: a variable or element "
                                      f"of type {t.elem} (it is a reference)", node)
                codes.append(v.code)
                refs.append(v)
            else:
                codes.append(self.to(v, t, node))
        call = f"{fn.py}({', '.join(codes)})"
        if not refs and not isinstance(fn.ret, CStruct):
            return Val(call, fn.ret)
        return self.unpack_call(call, fn, refs)

    def struct_argument_codes(self, v: Val, node) -> list:
        codes = []
        for field, dtype, count in v.type.fields:
            part = v.parts[field]
            if count is None:
                codes.append(self.to(part, dtype, node))
            else:
                codes += [part.base, part.offset or "numpy.int64(0)"]
        return codes

    def unpack_call(self, call: str, fn: Function, refs: list) -> Val:
        """A call returning a struct's fields and the references' values: each a temporary,
        the references stored back."""
        ret = fn.ret
        fields = ret.scalar_fields if isinstance(ret, CStruct) else [] if ret is None else [
            ("", ret)]
        temps = [self.temp() for _ in range(len(fields) + len(refs))]
        self.pre.append(f"{self.tuple_target(temps)} = {call}")
        for target, temp in zip(refs, temps[len(fields):]):
            self.pre.append(self.store(target, temp))
        if ret is None:
            return Val("", None)
        if isinstance(ret, CStruct):
            return Val("", ret, parts={f: Val(t, d) for (f, d), t in zip(fields, temps)})
        return Val(temps[0], ret)

    def builtin(self, name: str):
        fn = cmath.handler(name)
        if fn is not None:
            return lambda n, args, node: fn(self, n, args, node)
        if name in ("abs", "labs", "llabs"):
            return self.absolute
        table = (_ATOMICS, _SHUFFLES, _VOTES, _BITS, _BARRIERS, _BARRIER_PREDICATES)
        for kind in table:
            if name in kind or name.rsplit("_", 1)[0] in _ATOMICS and kind is _ATOMICS:
                return getattr(self, {id(_ATOMICS): "atomic", id(_SHUFFLES): "shuffle",
                                      id(_VOTES): "vote", id(_BITS): "bits",
                                      id(_BARRIERS): "barrier",
                                      id(_BARRIER_PREDICATES): "barrier_predicate"}[id(kind)])
        if name in _HALF:
            return self.half
        if cprelude.prelude_name(name) is not None:
            return lambda n, args, node: cprelude.call(self, n, args, node)
        return {"__syncwarp": self.syncwarp, "__activemask": self.activemask,
                "__ldg": self.ldg}.get(name) or self.complex_function(name)

    def half(self, name, args, node) -> Val:
        """cuda_fp16.h's and cuda_bf16.h's conversions (each rounds to nearest even once)."""
        self.nargs(name, args, 1, node)
        src, dst = _HALF[name]
        if dst is None or src is None:
            raise self.refuse(f"{name}() without ml_dtypes (pip install ml_dtypes)", node)
        x = Val(self.to(args[0], src, node), src)
        return Val(self.to(x, dst, node), dst)

    def complex_function(self, name: str):
        """complex.cuh's and cuComplex.h's functions (:mod:`.ccomplex`), or None."""
        fn = ccomplex.handler(name)
        return None if fn is None else lambda n, args, node: fn(self, n, args, node)

    def nargs(self, name, args, n, node) -> None:
        if len(args) not in (n if isinstance(n, tuple) else (n,)):
            raise self.refuse(f"{name}() with {len(args)} argument(s)", node)
        for a in args:
            if a.is_pointer:
                raise self.refuse(f"a pointer given to {name}()", node)

    def float_type(self, t, forced):
        if forced is not None:
            return forced
        if t.kind == "c":
            return t
        if t.kind == "f":
            return F32 if t == F16 else t
        return F64

    def absolute(self, name, args, node) -> Val:
        self.nargs(name, args, 1, node)
        a = args[0]
        if a.type.kind == "c":
            return Val(f"abs({a.code})", real_of(a.type))
        t = I64 if name != "abs" else promote(a.type)
        if t.kind == "f":
            return Val(f"math.fabs({self.to(a, t, node)})", t)
        return Val(f"abs({self.to(a, t, node)})", t)

    def pointer_arg(self, name, v: Val, node) -> tuple[str, str]:
        if not v.is_pointer or v.type.inner:
            raise self.refuse(f"{name}() needs the address of an element (&a[i])", node)
        return v.base, (v.offset or "numpy.int64(0)")

    def atomic(self, name, args, node) -> Val:
        base_name = name if name in _ATOMICS else name.rsplit("_", 1)[0]
        n = 3 if base_name == "atomicCAS" else 2
        if len(args) != n:
            raise self.refuse(f"{name}() with {len(args)} argument(s)", node)
        base, off = self.pointer_arg(name, args[0], node)
        elem = args[0].type.elem
        values = ", ".join(self.to(v, elem, node) for v in args[1:])
        return Val(f"jit.{_ATOMICS[base_name]}({base}, {off}, {values})", elem)

    def shuffle(self, name, args, node) -> Val:
        self.nargs(name, args, (3, 4), node)
        t = promote(args[1].type) if args[1].type.kind in "biu" else args[1].type
        parts = [self.to(args[0], U32, node), self.to(args[1], t, node),
                 self.to(args[2], I32 if name != "__shfl_xor_sync" else I32, node)]
        if len(args) == 4:
            parts.append(self.to(args[3], I32, node))
        return Val(f"jit.{_SHUFFLES[name]}({', '.join(parts)})", t)

    def vote(self, name, args, node) -> Val:
        self.nargs(name, args, 2, node)
        jname, t = _VOTES[name]
        code = f"jit.{jname}({self.to(args[0], U32, node)}, {self.truth(args[1], node)})"
        return Val(f"{ctor(t)}({code})", t)

    def bits(self, name, args, node) -> Val:
        self.nargs(name, args, 1, node)
        jname, t = _BITS[name]
        arg_t = U64 if name.endswith("ll") else U32
        if jname in ("ffs", "clz"):
            arg_t = I64 if name.endswith("ll") else I32
        code = f"jit.{jname}({self.to(args[0], arg_t, node)})"
        result = t if jname == "brev" else I32
        return Val(f"{ctor(result)}({code})", result)

    def barrier(self, name, args, node) -> Val:
        self.nargs(name, args, 0, node)
        return Val(_BARRIERS[name], None)

    def barrier_predicate(self, name, args, node) -> Val:
        self.nargs(name, args, 1, node)
        jname, t = _BARRIER_PREDICATES[name]
        return Val(f"{ctor(t)}(jit.{jname}({self.truth(args[0], node)}))", t)

    def syncwarp(self, name, args, node) -> Val:
        self.nargs(name, args, (0, 1), node)
        mask = self.to(args[0], U32, node) if args else "numpy.uint32(0xFFFFFFFF)"
        return Val(f"jit.syncwarp({mask})", None)

    def activemask(self, name, args, node) -> Val:
        self.nargs(name, args, 0, node)
        return Val("jit.activemask()", U32)

    def ldg(self, name, args, node) -> Val:
        if len(args) != 1:
            raise self.refuse("__ldg() with several arguments", node)
        base, off = self.pointer_arg(name, args[0], node)
        return Val(f"{base}[{off}]", args[0].type.elem)

    def method(self, node) -> Val:
        ref = node.name
        field = ref.field.name
        if ref.type != ".":
            raise self.refuse("->", node)
        obj_node = ref.name
        if type(obj_node).__name__ == "ID" and obj_node.name == "_ind" and field in _IND:
            var = self.lookup(_IND[field])
            if var is not None:
                return var.val()
        obj = self.expr(obj_node)
        if field in ("real", "imag") and not obj.is_pointer and obj.type.kind == "c":
            if node.args is not None and node.args.exprs:
                return ccomplex.set_part(self, obj, field, self.args(node), node)
            return Val(f"{obj.code}.{field}", real_of(obj.type))
        if field in ("size", "shape", "strides") and obj.is_pointer and \
                type(obj_node).__name__ == "ID":
            var = self.lookup(obj_node.name)
            got = getattr(var, field, None) if var is not None else None
            if got is not None:
                return Val(got, I64) if field == "size" else Val(got, Pointer(I64), False, got)
        raise self.refuse(f"the method .{field}()", node)
