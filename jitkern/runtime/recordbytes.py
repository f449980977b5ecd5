"""Structs by value at launch: the bytes of a record argument, at the cost of its fields.

A launcher writes every argument with one ``struct.pack_into``; a struct by value is one
``"<n>s"`` (or the codes of its fields) in that format. Two ways to the bytes cost less
than NumPy's own:

- a ``numpy.void``: ``tobytes()`` costs about 0.2 us and ``bytes()`` 0.35 us (a buffer
  export per call). :class:`VoidBytes` keeps a ``uint8`` view over the memory of the record
  it was last given twice running, and reads that view (``ndarray.tobytes`` of a few bytes:
  about 0.04 us) while the same object comes back. The view is over the record's own
  memory (a record of an array is a view of the array), so a record changed between
  launches is read as it is now. The launcher holds that record (and the array it is a
  view of) until it is given another one.
- a frozen dataclass or ``typing.NamedTuple`` for a record parameter of a string kernel:
  :func:`record_read` reads each field inline into one precompiled ``struct.Struct``'s
  ``pack``, instead of building a ``numpy.void`` per call.

This module holds :data:`STRUCT_CODES`, the one table from a NumPy dtype to the struct
codes of its value in a parameter buffer (:mod:`.launcher` re-exports it).
"""

from __future__ import annotations

import struct

import numpy

from .. import records

#: NumPy dtype char -> the struct codes of its value in a parameter buffer: the one table
#: (the packers, the string kernels' launchers and a bound launch's slot names read it).
STRUCT_CODES = {
    "b": "b", "B": "B", "h": "h", "H": "H", "i": "i", "I": "I", "l": "q", "L": "Q",
    "q": "q", "Q": "Q", "e": "e", "f": "f", "d": "d", "?": "?", "F": "ff", "D": "dd",
}


class VoidBytes:
    """``bytes`` of the ``numpy.void`` records one launcher slot is given (see the module doc).

    ``live`` is ``(record, uint8 view of its memory)``, replaced as one tuple so a thread
    never reads one record's view for another; :data:`VOID_EXPR` reads it inline and calls
    the object only for a record other than ``live``'s. With ``dtype``, a record of another
    dtype raises ``struct.error`` (a generated launcher's miss: its general path keys plans
    on the dtype), so a launcher need not compare the dtype of the record it holds."""

    __slots__ = ("dtype", "live", "seen")

    def __init__(self, dtype: numpy.dtype | None = None):
        self.dtype = dtype
        self.live = (None, None)
        self.seen = None  # the last record read by tobytes(): a view pays off the second time

    def __call__(self, record) -> bytes:
        want = self.dtype
        if want is not None and record.dtype is not want and record.dtype != want:
            raise struct.error(f"a record of dtype {record.dtype} for a slot of {want}")
        if record is not self.seen:
            self.seen = record
            return record.tobytes()
        self.seen = None
        try:
            view = numpy.frombuffer(record, numpy.uint8)
        except (TypeError, ValueError):  # no buffer of its memory: NumPy's copy each time
            return record.tobytes()
        self.live = (record, view)
        return view.tobytes()


#: A slot's expression for a numpy.void argument ``{a}`` (``{vb}``: its VoidBytes). The
#: walrus keeps the one ``live`` tuple read, so the identity test and the view agree.
VOID_EXPR = "({a}_v[1].tobytes() if {a} is ({a}_v := {vb}.live)[0] else {vb}({a}))"


def void_slot_env(dtype: numpy.dtype | None = None) -> dict:
    """The helpers :data:`VOID_EXPR` names (one VoidBytes per slot)."""
    return {"vb": VoidBytes(dtype)}


def record_fields(dtype: numpy.dtype, subject: str = "{a}"):
    """``(codes, exprs, bad)`` of a record dtype: the struct codes of its fields in offset
    order with pad bytes (``"<"`` not included), the Python expressions reading each value
    from ``subject`` (``{a}.pos.x``; ``.real``/``.imag`` for complex), and the path and
    dtype of the first field a struct code cannot write (None when all can)."""
    codes, exprs, pos = [], [], 0
    for path, offset, dt in records.leaves(dtype):
        code = STRUCT_CODES.get(dt.char)
        if code is None:
            return None, None, (path, dt)
        if offset > pos:
            codes.append(f"{offset - pos}x")
        codes.append(code)
        expr = f"{subject}.{path}"
        exprs += [f"{expr}.real", f"{expr}.imag"] if dt.kind == "c" else [expr]
        pos = offset + dt.itemsize
    if dtype.itemsize > pos:
        codes.append(f"{dtype.itemsize - pos}x")
    return "".join(codes), exprs, None


_PACK_ERRORS = (struct.error, AttributeError, TypeError, OverflowError)


def record_read(k: int, first, env: dict) -> list[str]:
    """The statements of a string kernel's runner (runner.make_runner) setting ``s{k}`` to
    the bytes of record argument ``a{k}`` (``first``: the one its layout was made for): a
    numpy.void through a VoidBytes; a dataclass/NamedTuple's fields read inline into one
    precompiled ``Struct.pack`` (a value it does not take goes to the general conversion);
    anything else through the runner's general conversion (``_conv``, to ``_d{k}``)."""
    if type(first) is numpy.void:
        env[f"_vb{k}"] = VoidBytes()
        return [f"s{k} = " + VOID_EXPR.format(a=f"a{k}", vb=f"_vb{k}")]
    convert, dtype, kernel = env["_conv"], env[f"_d{k}"], env["_name"]

    def slow(value):
        return convert(value, dtype, f"argument {k}", kernel).tobytes()

    env[f"_rb{k}"] = slow
    codes, exprs, bad = (record_fields(records.record_dtype(type(first)), f"a{k}")
                         if records.is_record_class(type(first)) else (None, None, True))
    if bad is not None:
        return [f"s{k} = _rb{k}(a{k})"]
    env[f"_pk{k}"], env["_pk_errors"] = struct.Struct("<" + codes).pack, _PACK_ERRORS
    return ["try:", f"    s{k} = _pk{k}({', '.join(exprs)})",
            "except _pk_errors:  # the general conversion converts it as NumPy does, or says why",
            f"    s{k} = _rb{k}(a{k})"]
