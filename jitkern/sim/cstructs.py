"""C structs, references and byte reinterpretation in the simulator's C subset (see
:mod:`.csubset`).

The JIT has no struct with array fields and no cast of memory to another type, so the
translator takes both apart before the JIT sees them:

- A struct value is its fields, each a value of its own (:attr:`.csubset.Val.parts`): a
  scalar field is a Python variable, an array field an array (a kernel parameter's, passed
  flattened: :func:`struct_argument`). Passing by value passes the fields; a function
  returning a struct returns them as a tuple; ``T{a, b}`` and ``T v = {a, b}`` set them in
  order.
- A reference parameter (``long long& o``) is a variable of the callee that the callee
  returns after its value (a tuple), and the caller stores back where the argument was.
- ``(T*)(p + k)`` on a ``char*`` kernel parameter reads and writes the bytes of ``p`` as a
  ``T``: the kernel is given, per such type, the parameter's bytes viewed as that type at
  every byte offset (a NumPy array of stride 1, :func:`byte_views`), indexed by the byte
  offset, after a check of the address's alignment (the GPU faults on a misaligned one).
"""

from __future__ import annotations

import dataclasses

import numpy

from .. import records
from ..errors import KernelArgumentError
from .csubset import I64, Pointer, Val, Var, ctor

#: The Python names of where a char* parameter points in its allocation's bytes, and of the
#: alignment its address has (mod 256).
START, ADDRESS = "{}__start", "{}__addr"


@dataclasses.dataclass(frozen=True)
class CStruct:
    """A C struct: ``fields`` ``((name, dtype, count or None), ...)`` (count: an array
    field's length), laid out as C does with at least ``align``."""

    name: str
    fields: tuple
    align: int = 1

    @property
    def offsets(self) -> dict:
        out, at = {}, 0
        for name, dtype, _count in self.fields:
            a = records.c_alignment(dtype)  # C's: complex<float> is aligned to 8, not 4
            at = -(-at // a) * a
            out[name] = at
            at += dtype.itemsize * (_count or 1)
        return out

    @property
    def alignment(self) -> int:
        return max([self.align] + [records.c_alignment(d) for _, d, _ in self.fields])

    @property
    def itemsize(self) -> int:
        last, dtype, count = self.fields[-1]
        end = self.offsets[last] + dtype.itemsize * (count or 1)
        return -(-end // self.alignment) * self.alignment

    @property
    def scalar_fields(self) -> list:
        return [(name, dtype) for name, dtype, count in self.fields if count is None]


@dataclasses.dataclass(frozen=True)
class Ref:
    """A reference parameter's type (``T&``; ``const T&`` passes a value)."""

    elem: object
    const: bool = False


def struct_argument(a, t: CStruct, what: str) -> list:
    """A struct argument (a ``numpy.void`` of a record dtype with the C struct's fields at
    the C offsets, or a frozen dataclass or ``typing.NamedTuple`` with its fields' names, as
    the GPU launch takes them) as the translated kernel's parameters: one per field, array
    fields as 1-D arrays (copies: the struct is passed by value)."""
    if records.is_record_class(type(a)):
        return _fields_argument(a, t, what)
    if not isinstance(a, numpy.void) or a.dtype.fields is None:
        raise KernelArgumentError(
            f"{what}: the kernel expects struct {t.name} (by value), got {type(a).__name__}; "
            "pass a numpy.void of a record dtype with its fields (numpy.zeros((), dt)[()]), "
            "or a frozen dataclass or NamedTuple with them")
    offsets = t.offsets
    out = []
    for name, dtype, count in t.fields:
        got = a.dtype.fields.get(name)
        shape = () if count is None else (count,)
        if got is None or got[1] != offsets[name] or got[0].base != dtype or (
                got[0].shape != shape):
            have = "missing" if got is None else f"{got[0]} at byte {got[1]}"
            raise KernelArgumentError(
                f"{what}: struct {t.name} has the field {name!r} ({dtype}"
                f"{'[%d]' % count if count else ''} at byte {offsets[name]}); the record "
                f"passed has it {have}")
        if count is None:
            out.append(dtype.type(a[name]))
        else:
            out.append(numpy.array(a[name], dtype).reshape(-1))
    if a.dtype.itemsize != t.itemsize:
        raise KernelArgumentError(
            f"{what}: struct {t.name} is {t.itemsize} bytes, the record passed "
            f"{a.dtype.itemsize}")
    return out


def _fields_argument(a, t: CStruct, what: str) -> list:
    """A dataclass or NamedTuple: each of the C struct's fields read by its name and
    converted to the field's C type (a float for an integer field is refused, as the GPU
    launch refuses it)."""
    out = []
    for name, dtype, count in t.fields:
        if not hasattr(a, name):
            raise KernelArgumentError(
                f"{what}: struct {t.name} has the field {name!r}; the "
                f"{type(a).__qualname__} passed has none")
        value = numpy.asarray(getattr(a, name))
        shape = () if count is None else (count,)
        narrowing = value.dtype.kind in "fc" and dtype.kind in "biu"
        if value.shape != shape or narrowing:
            raise KernelArgumentError(
                f"{what}: field {name!r} of struct {t.name} is {dtype}"
                f"{'[%d]' % count if count else ''}; the {type(a).__qualname__} passed has "
                f"{getattr(a, name)!r}")
        out.append(dtype.type(value[()]) if count is None else value.astype(dtype).reshape(-1))
    return out


def byte_views(views: list, host: list) -> list:
    """The extra arguments of a kernel that reinterprets char* parameters: per (parameter
    index, dtype) in ``views`` the bytes of the parameter's allocation (the NumPy array that
    owns its memory) as that dtype at each byte offset; then per such parameter where its
    pointer is in those bytes, and its address's alignment (mod 256). A pointer may so move
    below where it points, within its allocation, as on the GPU."""
    out, where = [], {}
    for index, dtype in views:
        if index not in where:
            where[index] = _allocation(host[index])
        raw = where[index][0]
        n = max(0, raw.size - dtype.itemsize + 1)
        out.append(numpy.ndarray((n,), dtype, buffer=raw, strides=(1,)) if n else
                   numpy.zeros(0, dtype))
    for index, (_raw, start) in where.items():
        out.append(numpy.int64(start))
        out.append(numpy.int64(_address(host[index]) % 256))
    return out


def _allocation(a) -> tuple:
    """(the bytes of the allocation ``a`` is in, where ``a`` starts in them)."""
    root = a
    while isinstance(root.base, numpy.ndarray):
        root = root.base
    if not root.flags.c_contiguous or root.size == 0:
        return _bytes_of(a), 0
    raw = numpy.ndarray((root.nbytes,), numpy.uint8, buffer=root)
    return raw, _address(a) - _address(root)


def _address(a) -> int:
    return a.__array_interface__["data"][0]


def _bytes_of(a) -> numpy.ndarray:
    flat = a.reshape(-1)
    return flat.view(numpy.uint8) if flat.dtype != numpy.uint8 else flat


def view_name(param_py: str, dtype) -> str:
    return f"{param_py}__as_{dtype.name}"


class Structs:
    """The struct, reference and byte-view half of the translator (mixed into
    :class:`.ctranslate.Translator`)."""

    # -- struct definitions ---------------------------------------------------------
    def define_struct(self, node) -> CStruct:
        """A top-level ``struct NAME { ... };`` (the preprocessor spells ``__align__(N)`` as
        a first field ``char __jk_align_N``)."""
        align, fields = 1, []
        for decl in node.decls or []:
            if decl.name and decl.name.startswith("__jk_align_"):
                align = int(decl.name[len("__jk_align_"):])
                continue
            t, dims = self.decl_type(decl.type)
            if isinstance(t, (Pointer, CStruct, Ref)) or t is None:
                raise self.refuse(f"the field {decl.name!r} of struct {node.name} (only numbers "
                                  "and arrays of numbers)", decl)
            if dims is not None and (len(dims) > 1 or dims[0] is None):
                raise self.refuse(f"the field {decl.name!r} (only one-dimensional arrays)", decl)
            fields.append((decl.name, t, None if dims is None else dims[0]))
        if not fields:
            raise self.refuse(f"the empty struct {node.name}", node)
        if node.name in self.structs:
            raise self.refuse(f"a second definition of struct {node.name}", node)
        s = self.structs[node.name] = CStruct(node.name, tuple(fields), align)
        return s

    def struct_named(self, name: str, node) -> CStruct:
        s = self.structs.get(self.struct_alias.get(name, name))
        if s is None:
            raise self.refuse(f"the struct {name} (not defined before this use)", node)
        return s

    def typedef(self, ext) -> None:
        """A top-level ``typedef T name;``."""
        inner = ext.type.type if type(ext.type).__name__ == "TypeDecl" else None
        if type(inner).__name__ == "Struct":
            if inner.decls is not None:
                self.define_struct(inner)
            self.struct_alias[ext.name] = inner.name
            return
        t, dims = self.decl_type(ext.type)
        if dims is not None or isinstance(t, (Pointer, Ref)) or t is None:
            raise self.refuse(f"the typedef {ext.name} (only of numbers and structs)", ext)
        if isinstance(t, CStruct):
            self.struct_alias[ext.name] = t.name
        else:
            self.types[ext.name] = t

    # -- struct values ------------------------------------------------------------
    def struct_var(self, name: str, t: CStruct, node, kernel_param=False, params=None):
        """Variables for the fields of struct ``name`` (a local, or a parameter whose
        Python parameters are appended to ``params``)."""
        parts = {}
        for field, dtype, count in t.fields:
            py = self.fresh(f"{name}_{field}")
            if count is None:
                parts[field] = Var(py, dtype)
                if params is not None:
                    params.append(py)
                continue
            if params is None:
                raise self.refuse(f"a struct local with an array field ({field})", node)
            offset = None if kernel_param else self.fresh(py + "_o")
            params.extend([py] if kernel_param else [py, offset])
            self.struct_arrays.add(py)
            parts[field] = Var(py, Pointer(dtype), offset)
        return Var("", t, parts=parts)

    def struct_local(self, node, t: CStruct) -> None:
        var = self.struct_var(node.name, t, node)
        if node.init is None:
            values = {f: Val(f"{ctor(d)}(0)", d) for f, d in t.scalar_fields}
        elif type(node.init).__name__ == "InitList":
            values = self.struct_init(t, node.init.exprs, node).parts
        else:
            values = self.struct_value(self.expr(node.init), t, node).parts
        self.flush()
        for field, part in var.parts.items():
            self.emit(f"{part.py} = {self.to(values[field], part.type, node)}")
        self.declare(node.name, var)

    def struct_init(self, t: CStruct, exprs, node) -> Val:
        """``T{a, b}`` / ``= {a, b}``: the fields in order, the rest zero."""
        scalars = t.scalar_fields
        if len(scalars) != len(t.fields):
            raise self.refuse(f"a brace initializer of struct {t.name}, which has array fields",
                              node)
        if len(exprs) > len(scalars):
            raise self.refuse(f"{len(exprs)} initializers for struct {t.name} of "
                              f"{len(scalars)} fields", node)
        parts = {}
        for k, (field, dtype) in enumerate(scalars):
            if k < len(exprs):
                v = self.expr(exprs[k])
                code = self.to(v, dtype, exprs[k])
            else:
                code = f"{ctor(dtype)}(0)"
            name = self.temp()
            self.pre.append(f"{name} = {code}")
            parts[field] = Val(name, dtype)
        return Val("", t, parts=parts)

    def struct_value(self, v: Val, t: CStruct, node) -> Val:
        if v.type != t:
            what = v.type.name if isinstance(v.type, CStruct) else "a non-struct value"
            raise self.refuse(f"{what} where struct {t.name} is expected", node)
        return v

    def e_CompoundLiteral(self, node) -> Val:
        t, dims = self.decl_type(node.type.type)
        if not isinstance(t, CStruct) or dims is not None:
            raise self.refuse("a compound literal that is not a struct", node)
        return self.struct_init(t, node.init.exprs or [], node)

    def names_struct(self, node) -> bool:
        """Whether ``node`` (the left of ``.``) is a struct: a variable, a call or a literal
        (found without translating it, which may have side effects)."""
        kind = type(node).__name__
        if kind == "ID":
            var = self.lookup(node.name)
            return var is not None and getattr(var, "parts", None) is not None
        if kind == "FuncCall" and type(node.name).__name__ == "ID":
            fn = self.functions.get(node.name.name)
            return fn is not None and isinstance(fn.ret, CStruct)
        return kind == "CompoundLiteral"

    def field_of(self, base: Val, name: str, node) -> Val:
        if name not in base.parts:
            listed = ", ".join(base.parts)
            raise self.refuse(f"field {name!r}, which struct {base.type.name} has not (its "
                              f"fields: {listed})", node)
        return base.parts[name]

    def assign_struct(self, node, target: Val, rhs: Val) -> Val:
        if node.op != "=":
            raise self.refuse(f"{node.op} on a struct", node)
        self.struct_value(rhs, target.type, node)
        if len(target.type.scalar_fields) != len(target.type.fields):
            raise self.refuse(f"an assignment of struct {target.type.name}, which has array "
                              "fields", node)
        for field, dtype in target.type.scalar_fields:
            part = target.parts[field]
            if not part.lvalue:
                raise self.refuse("an assignment to a struct that is not a variable", node)
            self.pre.append(self.store(part, self.to(rhs.parts[field], dtype, node)))
        return target

    def check_writable(self, target: Val, node) -> None:
        """An array field of a struct parameter is the caller's (or every thread's) memory: a
        write to it would not stay in this copy of the struct."""
        if target.base is not None and target.base in self.struct_arrays:
            raise self.refuse("a write to an array field of a struct parameter (copy it to a "
                              "local array first)", node)

    def tuple_target(self, names: list) -> str:
        return names[0] if len(names) == 1 else "(" + ", ".join(names) + ")"

    # -- byte reinterpretation --------------------------------------------------
    def byte_cast(self, v: Val, t: Pointer, node) -> Val:
        """``(T*)(p + k)`` with ``p`` a char* kernel parameter: a pointer to ``T`` at byte
        ``k`` of ``p``'s memory."""
        if v.type.elem.itemsize != 1 or v.type.elem.kind not in "iu" or (
                v.base not in self.char_params):
            raise self.refuse("a cast to a pointer type (only a char* kernel parameter's bytes "
                              "may be read as another type)", node)
        if isinstance(t.elem, CStruct) and len(t.elem.scalar_fields) != len(t.elem.fields):
            raise self.refuse(f"a pointer to struct {t.elem.name}, which has array fields", node)
        return Val(v.base, Pointer(t.elem, view=v.base), False, v.base, v.offset)

    def view_element(self, p: Val, idx: Val, node) -> Val:
        """``p[idx]`` of a pointer into a char* parameter's bytes: the element (a struct's
        fields) at that byte offset, its alignment checked first."""
        elem = p.type.elem
        size = elem.itemsize
        step = f"({self.to(idx, I64, node)} * numpy.int64({size}))"
        off = step if p.offset is None else f"({p.offset} + {step})"
        name = self.temp()
        self.pre.append(f"{name} = {START.format(p.type.view)} + {off}")
        align = elem.alignment
        param = self.c_names.get(p.type.view, p.type.view)
        self.pre.append(
            f"assert ({ADDRESS.format(p.type.view)} - {START.format(p.type.view)} + {name}) "
            f"% {align} == 0, "
            f"'misaligned address: {param} + a byte offset that is not a multiple of {align} "
            f"read or written as a {elem.name} ({size} bytes, aligned to {align}); the GPU "
            "faults there (cudaErrorMisalignedAddress)'")
        if not isinstance(elem, CStruct):
            return Val(f"{self.view(p.type.view, elem)}[{name}]", elem, True, None, None)
        offsets = elem.offsets
        parts = {f: Val(f"{self.view(p.type.view, d)}[({name} + numpy.int64({offsets[f]}))]",
                        d, True) for f, d in elem.scalar_fields}
        return Val("", elem, True, parts=parts)

    def view(self, param_py: str, dtype) -> str:
        self.views.setdefault((param_py, numpy.dtype(dtype)), None)
        return view_name(param_py, numpy.dtype(dtype))
