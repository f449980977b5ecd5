"""What a raw kernel's compiled C parameter types mean: NumPy dtypes, pointees, struct layouts.

:func:`~.c_params.compiled_params` has each parameter's type from the compiler (and, for a
class, its members' types, offsets and sizes); this module says what a type means, so that
the runtime can check a launch against it (runtime/signature.py): the NumPy dtype of a
builtin type or of one of the number classes kernels use (one table: dtypes' C++
spellings plus C's and CUDA's names and CuPy's classes), whether a pointer takes any array
(``void*``, ``char*``, ``unsigned char*``), and the records (:class:`StructDef`) a struct's
layout is described by. A type this module does not know is ``None`` and is checked by
size only.
"""

from __future__ import annotations

import dataclasses

from ... import dtypes

# A compiled type's spelling -> NumPy dtype name: the builtin types as the mangled name spells
# them (compiler/strings/mangled.py; typedefs such as size_t or cudaTextureObject_t are
# already resolved there), and the number classes by their unqualified names.
# fmt: off
SCALARS: dict[str, str] = {
    **{row.cxx: row.name for row in dtypes.ROWS},
    "char": "int8", "signed char": "int8", "short": "int16", "long": "int64",
    "unsigned long": "uint64", "_Float16": "float16",
    "float16": "float16", "bfloat16": "bfloat16",  # CuPy's classes (cupy/float16.cuh, ...)
}
# fmt: on
SCALARS = {k: v for k, v in SCALARS.items() if v in dtypes.BY_NAME}

#: Pointees that accept an array of any element type.
ANY_POINTEE = frozenset({"void", "char", "unsigned char"})

#: the namespaces a number class may be in: the global one, these, and inline ABI
#: namespaces (``cuda::std::__4::complex``)
_NUMBER_NAMESPACES = frozenset({"std", "cuda", "thrust", "jitkern", "cupy"})


@dataclasses.dataclass(frozen=True)
class Field:
    """One member of a struct: its NumPy dtype name (or a nested struct), how many
    elements (``float m[25]``: 25), and where it sits."""

    name: str
    ctype: str
    dtype: str | None
    struct: "StructDef | None"
    count: int
    offset: int
    size: int
    align: int


@dataclasses.dataclass(frozen=True)
class StructDef:
    """A struct as the compiler laid it out."""

    name: str
    fields: tuple[Field, ...]
    size: int
    align: int


def scalar_dtype(name: str) -> str | None:
    """The dtype name of a builtin type's C spelling (``unsigned long``)."""
    return SCALARS.get(name)


def class_dtype(qualified: str, size: int) -> str | None:
    """The dtype name of a number class (``thrust::complex<double>``, ``__half``, CuPy's
    ``float16``) where the compiler's ``size`` (0: unknown) is the dtype's."""
    *spaces, local = qualified.split("<", 1)[0].split("::")
    if any(s not in _NUMBER_NAMESPACES and not s.startswith("__") for s in spaces):
        return None
    args = qualified[len(qualified.split("<", 1)[0]):]
    dtype = SCALARS.get(local + args.replace(" ", ""))
    row = dtypes.BY_NAME.get(dtype) if dtype is not None else None
    if dtype is None or (size and row is not None and row.itemsize != size):
        return None
    return dtype
