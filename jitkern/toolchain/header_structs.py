"""The C++ structs an export's header declares for parameters passed by value as records.

A kernel that takes a struct by value (a JIT kernel's dataclass, an ElementwiseKernel's
record scalar) is exported with the record's layout in its manifest (the parameter's
``record``: NumPy's ``descr`` with padding entries, and ``align``: its alignment as a C
struct). The header spells that layout as a struct of the same size, alignment and field
offsets, each checked by a ``static_assert``, so host code that fills the parameter buffer
(or device code that calls the kernel) and the CUBIN agree byte for byte.

Field types are spelled as the export's header spells parameters (:data:`dtypes.ROWS`'
C++ names, ``__half``/``__nv_bfloat16`` from cuda_fp16.h/cuda_bf16.h); complex fields are
``jitkern_export::complex_of<T>`` (two ``T`` aligned to their size, as in kernels) and the
float8 types ``jitkern_export::opaque<1, 1>``.
"""

from __future__ import annotations

import re

import numpy

from .. import dtypes, records

#: The header's offsetof, defined once at its top: the compiler's builtin where it has one
#: (GCC, Clang, NVRTC 13.5+), EDG's own spelling where it does not (NVRTC before 13.5 has no
#: builtin and no <cstddef>), else the standard macro (MSVC).
OFFSETOF_LINES = (
    "#ifndef JITKERN_EXPORT_OFFSETOF",
    "#if defined(__has_builtin)",
    "#if __has_builtin(__builtin_offsetof)",
    "#define JITKERN_EXPORT_OFFSETOF(T, m) __builtin_offsetof(T, m)",
    "#endif",
    "#endif",
    "#endif",
    "#ifndef JITKERN_EXPORT_OFFSETOF",
    "#if defined(__CUDACC_RTC__)",
    "#define JITKERN_EXPORT_OFFSETOF(T, m) __INTADDR__(&(((T*)0)->m))",
    "#else",
    "#include <cstddef>",
    "#define JITKERN_EXPORT_OFFSETOF(T, m) offsetof(T, m)",
    "#endif",
    "#endif",
)

#: Declared once in the header's namespace, beside ``opaque``.
COMPLEX_TEMPLATE = ("template <typename T> struct alignas(2 * sizeof(T)) complex_of "
                    "{ T real; T imag; };")


def _scalar_spelling(dt: numpy.dtype) -> str:
    row = dtypes.ROW_OF.get(dt)
    if row is None or row.name in dtypes.FLOAT8_NAMES:
        return f"opaque<{dt.itemsize}, {max(records.c_alignment(dt), 1)}>"
    if row.kind == "c":
        return f"complex_of<{'float' if row.itemsize == 8 else 'double'}>"
    return row.cxx


def c_identifier(name: str) -> str:
    return re.sub(r"\W", "_", name)


def struct_lines(name: str, dtype: numpy.dtype, align: int, done: set) -> list[str]:
    """The definition of struct ``name`` (nested records first, as ``name_field``) with the
    layout of record ``dtype``, aligned to ``align``, and its static_asserts; nothing for a
    name in ``done`` (which it joins)."""
    if name in done:
        return []
    done.add(name)
    lines, members, pos, pads = [], [], 0, 0
    fields = sorted(dtype.fields.items(), key=lambda item: item[1][1])
    spelled = records.c_members([c_identifier(field) for field, _ in fields])
    for field, (fdt, offset, *_title) in fields:
        if offset > pos:
            members.append(f"  unsigned char _jk_pad{pads}[{offset - pos}];")
            pads += 1
        base, count = fdt.base, int(numpy.prod(fdt.shape)) if fdt.shape else 1
        member = spelled[c_identifier(field)]
        if base.fields is not None:
            spelling = f"{name}_{member}"
            lines += struct_lines(spelling, base, records.c_alignment(base), done)
        else:
            spelling = _scalar_spelling(base)
        members.append(f"  {spelling} {member}{f'[{count}]' if fdt.shape else ''};"
                       f"  // offset {offset}, {fdt}")
        pos = offset + fdt.itemsize
    if dtype.itemsize > pos:
        members.append(f"  unsigned char _jk_tail[{dtype.itemsize - pos}];")
    lines += [f"struct alignas({align}) {name} {{", *members, "};",
              f'static_assert(sizeof({name}) == {dtype.itemsize}, "{name}: NumPy\'s itemsize");',
              f'static_assert(alignof({name}) == {align}, "{name}: the record\'s alignment");']
    lines += [f"static_assert(JITKERN_EXPORT_OFFSETOF({name}, {spelled[c_identifier(field)]}) == "
              f'{offset}, "{name}.{spelled[c_identifier(field)]}: NumPy\'s offset");'
              for field, (_fdt, offset, *_title) in fields]
    return lines


def record_of(param: dict):
    """``(dtype, align)`` of a manifest parameter passed by value as a record, or None."""
    descr = param.get("record")
    if not descr:
        return None
    dtype = records.record_from_json(descr)
    return dtype, int(param.get("align") or records.c_alignment(dtype))
