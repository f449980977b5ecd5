"""``x.attr``: members of modules and jit namespaces, array attributes and value
methods (:class:`AttributesMixin` of the expression emitter).
"""

from __future__ import annotations

import numpy

from ...errors import JitAttributeError
from .. import builtins as B
from .. import frontend
from .. import types as T
from ..values import Const, Value
from .common import _ARRAY_ATTRS, ArrayDims, BoundMethod, _describe_const, _is_module, _methods_hint
from ..structs import SUB_ARRAY
from .spelling import problem


class AttributesMixin:
    """``x.attr`` for the expression emitter."""

    # -- attributes -------------------------------------------------------

    def expr_Attribute(self, node):
        base = self.expr(node.value)
        if isinstance(base, Const):
            return self.const_attribute(base.value, node.attr)
        return self.value_attribute(base, node.attr)

    def const_attribute(self, obj, attr: str):
        if isinstance(obj, B.Namespace):
            if attr not in obj.members:
                raise problem(
                    f"jit.{obj.name} has no member {attr!r}",
                    f"members: {', '.join(sorted(obj.members))}",
                    JitAttributeError,
                )
            member = obj.members[attr]
            return (
                self.call_builtin(member, [])
                if getattr(member, "attribute", False)
                else Const(member)
            )
        if isinstance(obj, B.CubClass) and attr == "TempStorage":
            return Const(B.CubStorage(obj))
        if _is_module(obj) and frontend.is_jit_names(obj):
            if not hasattr(obj, attr):
                raise problem(f"jitkern.jit has no member {attr!r}", "", JitAttributeError)
            value = getattr(obj, attr)
            if isinstance(value, B.Builtin) and value.attribute:
                return self.call_builtin(value, [])
            return Const(value)
        if _is_module(obj) and obj.__name__ in frontend.ARRAY_MODULES and hasattr(numpy, attr):
            obj = numpy  # cupy.float32, cupy.sqrt ... read as NumPy's, as in cupyx.jit
        if (
            _is_module(obj)
            or isinstance(obj, numpy.dtype)
            or (isinstance(obj, type) and issubclass(obj, numpy.generic))
            or isinstance(obj, (bool, int, float, complex, numpy.generic))
        ):
            try:
                value = getattr(obj, attr)
            except AttributeError:
                raise problem(
                    f"{_describe_const(obj)} has no attribute {attr!r}", "", JitAttributeError
                ) from None
            try:
                frontend.capture(value)
            except TypeError as exc:
                raise problem(f"{_describe_const(obj)}.{attr}: {exc}") from None
            return Const(value)
        raise problem(f"{_describe_const(obj)} has no attribute {attr!r} in kernels")

    def value_attribute(self, base: Value, attr: str):
        t = base.type
        if isinstance(t, T.Array):
            return self.array_attribute(base, attr)
        if isinstance(t, T.Struct):
            return self.struct_field(base, attr)
        family = "scalar" if isinstance(t, T.Scalar) else getattr(t, "family", None)
        if isinstance(t, T.Scalar) and attr == "dtype":
            return Const(t.dtype)
        record = B.VALUE_METHODS.get((family, attr))
        if record is None:
            raise problem(
                f"a value of type {t} has no attribute {attr!r}",
                _methods_hint(family),
                JitAttributeError,
            )
        if record.attribute:
            return self.call_builtin(record, [base])
        return BoundMethod(record, base)

    def struct_field(self, base: Value, attr: str) -> Value:
        """``p.attr`` of a struct: assignable where ``p`` is (an array element, a local)."""
        t = base.type
        field_type = t.field(attr)
        if field_type is None:
            raise problem(
                f"{t.describe()} has no field {attr!r}",
                f"its fields: {', '.join(name for name, _ in t.fields)}",
                JitAttributeError,
            )
        if isinstance(field_type, T.Opaque) and field_type.family == SUB_ARRAY:
            raise problem(
                f"{t.describe()} field {attr!r} is a sub-array ({field_type.cname}), which JIT "
                "kernels do not read yet",
                "use one field per element, or an ElementwiseKernel",
            )
        return Value(self.render_field(base.code, attr, t.member(attr)), field_type,
                     lvalue=base.lvalue)

    def render_field(self, code: str, attr: str, member: str = "") -> str:
        """The back end's spelling of field ``attr`` (C++ member ``member``) of the struct
        ``code``."""
        return self.spelling.field(self, code, attr, member)

    def array_attribute(self, base: Value, attr: str):
        t = base.type
        method = B.VALUE_METHODS.get(("array", attr))
        if method is not None:  # x.begin() / x.end(): iterators for jit.thrust
            return BoundMethod(method, base)
        if attr not in _ARRAY_ATTRS:
            raise problem(
                f"arrays have no attribute {attr!r} in kernels",
                f"available: {', '.join(_ARRAY_ATTRS)}",
                JitAttributeError,
            )
        if attr == "ndim":
            return Const(t.ndim)
        if attr == "dtype":
            if isinstance(t.dtype, T.Struct):  # an array of structs: its record dtype
                return Const(t.dtype.dtype)
            if t.dtype.name in T.ML_DTYPE_NAMES:
                return Const(t.dtype.dtype)
            return Const(numpy.dtype(t.dtype.name))
        if attr == "itemsize":
            return Const(t.dtype.itemsize)
        if attr in ("shape", "strides"):
            return ArrayDims(base, attr)
        if attr == "size":
            parts = [self.array_shape(base, k) for k in range(t.ndim)]
            return Value("(" + " * ".join(parts or [self.literal(1, T.int64)]) + ")", T.int64)
        size = self.array_attribute(base, "size")
        return Value(f"({size.code} * {self.literal(t.dtype.itemsize, T.int64)})", T.int64)

    def array_shape(self, item, k: int) -> str:
        """C++ for ``item.shape[k]`` (an int64)."""
        t = item.type
        if not isinstance(t, T.Array):
            raise problem(f"len() and .shape need an array, got {t}")
        if not 0 <= k < t.ndim:
            raise problem(f"axis {k} is out of range for a {t.ndim}-d array")
        # a 1-D contiguous array's length is a kernel parameter (its rule and error)
        extent = self.pointer_array_extent(item, "shape", k) if t.is_pointer_like else None
        return self.render_dim(item, "shape", k, extent)

    def array_stride(self, item, k: int) -> str:
        """C++ for ``item.strides[k]`` (an int64, in bytes)."""
        t = item.type
        if not 0 <= k < t.ndim:
            raise problem(f"axis {k} is out of range for a {t.ndim}-d array")
        extent = f"{t.dtype.itemsize}LL" if t.is_pointer_like else None
        return self.render_dim(item, "strides", k, extent)

    def render_dim(self, item: Value, attr: str, k: int, known: str | None) -> str:
        """``item.shape[k]`` or ``item.strides[k]`` (``attr``) of a checked axis, as an
        int64; ``known``: the value where the C++ build passes or knows it."""
        return self.spelling.dim(self, item, attr, k, known)
