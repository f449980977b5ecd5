"""What ElementwiseKernel and ReductionKernel share on the CPU (:mod:`.elementwise`,
:mod:`.reduction`): their C pieces (preamble, operation, map and reduce expressions...)
parsed as one translation unit whose errors name the piece and its line, their
parameters as the names the pieces read, and the kernels made once per call signature
and kept on the kernel object."""

from __future__ import annotations

import re
from types import SimpleNamespace

import numpy

from ..arrays import asarray
from ..compiler.strings.params import DTYPE_BY_NAME, resolve_placeholders, scalar_dtype
from ..errors import JitkernValueError, StreamCaptureError
from ..runtime import memo
from ..runtime import simulated as simdevice
from .csubset import _BASE, C64, C128, TYPEDEFS, Pointer, Refused, cupy_element, excerpt
from . import cprelude
from .ctemplates import parse
from .preprocess import preprocess
from .ctranslate import _RESERVED, Var, translate_unit
from .translated import copy_back, host_copies

_COMPLEX = re.compile(r"(?:thrust::|cuda::std::)?complex<(float|double)>")


def resolved_type(ctype: str, bound: dict):
    """A parameter-list C type (``float``, ``T``) as a dtype."""
    ctype = " ".join(ctype.split())
    if ctype in bound:
        return bound[ctype]
    if ctype in TYPEDEFS:
        return TYPEDEFS[ctype]
    complex_ = _COMPLEX.fullmatch(ctype.replace(" ", ""))
    if complex_ is not None:  # fuse's reduce_type of a complex reduction
        return C64 if complex_.group(1) == "float" else C128
    key = tuple(sorted(ctype.replace("long long", "long long").split()))
    t = _BASE.get(key)
    if t is None:
        t = DTYPE_BY_NAME.get(ctype)
    if t is None:
        raise JitkernValueError(f"the type {ctype!r} is not one the simulator knows")
    return numpy.dtype(t)


def placeholder_types(bound: dict) -> dict:
    return {k: cupy_element(numpy.dtype(v)) for k, v in bound.items()
            if len(k) and k.isidentifier()}


def c_source(text: str, options: tuple, where: str) -> str:
    """A kernel's C as the C subset reads it: jitkern's own prelude taken out first (it is
    known, not translated: :mod:`.cprelude`), then the C preprocessor run with the kernel's
    ``options`` as NVRTC's would (:mod:`.preprocess`)."""
    return preprocess(cprelude.strip(text), options, where)


class Unit:
    """Parse ``parts`` (``(label, text)``, joined with newlines) as one translation unit,
    preprocessed with the kernel's ``options``; errors name the part and its line."""

    def __init__(self, kernel_name: str, parts, types: dict, options: tuple = ()):
        self.spans = []
        lines = []
        for label, text in parts:
            start = len(lines) + 1
            part_lines = text.split("\n")
            lines.extend(part_lines)
            self.spans.append((start, start + len(part_lines) - 1, label))
        self.lines = lines  # the user's text, for the line an error shows
        self.text = "\n".join(lines)
        self.name = kernel_name
        try:
            self.text = c_source(self.text, options, kernel_name)
            self.ast, _, self.templates = parse(self.text, kernel_name, types)
        except Refused as exc:
            raise Refused(_locate(self, str(exc), getattr(exc, "anchor", None))) from None


def _locate(unit: Unit, message: str, anchor: str | None = None, show: bool = True) -> str:
    """``message`` with the unit's line it names as the user wrote it (the part: preamble,
    operation, ...; its line there), and (``show``) that line shown with a caret."""
    shown = []

    def sub(m):
        n = int(m.group(1))
        for start, end, label in unit.spans:
            if start <= n <= end and label:
                shown[:] = [unit.lines[start - 1:end]]
                return f"{unit.name} {label} line {n - start + 1}"
        shown[:] = [unit.lines]
        return f"{unit.name} line {n}"

    located = re.sub(re.escape(unit.name) + r" line (\d+)", sub, message, count=1)
    return excerpt(located, shown[0], anchor=anchor) if shown and show else located


def translate(unit: Unit, types: dict, entry_functions: dict):
    """(the Python of the unit's device functions and of each entry, by name)."""
    try:
        tr, sources = translate_unit(unit.ast, unit.name, types, keep=(), special=entry_functions,
                                     locate=lambda n: _locate(unit, f"{unit.name} line {n}", show=False),
                                     templates=unit.templates)
    except Refused as exc:
        raise Refused(_locate(unit, str(exc), getattr(exc, "anchor", None))) from None
    return tr, sources


class StringSim:
    """A string kernel's call on the CPU: its JIT kernels are made once per argument dtypes,
    scalar kinds and ``_ind.get()`` rank, and kept on the kernel object. What the simulator
    reads of the kernel object is its parameters and C pieces, and its own argument rules
    (``_describe_args``, ``_decide_shape(s)``, ``_decide_layout``, ``_result``)."""

    def __init__(self, kernel):
        self._kernel = kernel

    def _arguments(self, args):
        """(host arguments, their copy-backs, the kernel's reading of each (None: a
        scalar), a namespace its shape rules fill, with ``bound``: the placeholders' types)."""
        k = self._kernel
        host, back = host_copies(args, k.name, [p.name for p in k.params])
        arrays = k._describe_args(host, host_ok=True)
        nin = k.nin
        a = SimpleNamespace()
        in_types = [scalar_dtype(v) if arr is None else arr.dtype
                    for v, arr in zip(host[:nin], arrays[:nin])]
        a.bound = resolve_placeholders(k.in_params, k.out_params, in_types,
                                       [arr.dtype for arr in arrays[nin:]],
                                       [arr is None for arr in arrays[:nin]], k.name)
        return host, back, arrays, a

    def _returned(self, outs: list, back: list, a) -> list:
        """The outputs the kernel made: jitkern arrays where an argument was one."""
        copy_back(back)
        if back and not a.out_given:
            if simdevice.capturing():  # its outputs are host arrays, copied to the device
                raise StreamCaptureError(
                    f"{type(self._kernel).__name__} {self._kernel.name!r}: on jitkern's "
                    "simulated device a stream capture records kernels that write arrays "
                    "given to them, and this call allocates its output: pass the output "
                    "array (allocated before or inside the capture) as an argument")
            return [asarray(o) for o in outs]
        return outs

    def build(self, dtypes, scalars, ndim=None):
        cache = self._kernel.__dict__.setdefault("_sim_kernels", {})
        key = (dtypes, scalars, ndim)
        made = cache.get(key)
        if made is None:  # a kernel made again from the same definition: the memo's
            made = cache[key] = memo.translated(
                self._kernel._memo_key(("simulated", key), self._kernel.preamble),
                lambda: self._make(dtypes, scalars, ndim))
        return made


def raw_values(f: numpy.ndarray, v) -> list:
    """A raw array's kernel arguments: its flat elements, size, shape and (C-order, as the
    flat copy has them) byte strides: ``x.size()``, ``x.shape()``, ``x.strides()``."""
    shape = v.shape or (1,)
    strides = numpy.cumprod((1,) + shape[:0:-1])[::-1] * v.dtype.itemsize
    return [f, numpy.int64(v.size), numpy.array(shape, numpy.int64),
            numpy.array(strides, numpy.int64)]


def last_source(k) -> str:
    made = k.__dict__.get("_sim_kernels") or {}
    if not made:
        raise JitkernValueError(f"{k.name}: call kernel.simulate(...) first")
    return list(made.values())[-1].sim_source


def bound_of(params, dtypes) -> dict:
    bound = {}
    for p, dt in zip(params, dtypes):
        if p.placeholder:
            bound[p.placeholder] = dt
    return bound


def py_name(name: str, used: set) -> str:
    py = name if name not in _RESERVED and not name.startswith(("_c_", "_jk")) else name + "_c"
    while py in used:
        py += "_"
    used.add(py)
    return py


def param_var(p, py: str, t, is_scalar: bool, index: str):
    """(the C name's translation, the kernel parameters it takes) of one string-kernel
    parameter: a scalar, a raw pointer with its size, or this thread's element."""
    t = cupy_element(t)
    if is_scalar:
        return Var(py, t), [py]
    if p.raw:  # its size, shape and strides: names no parameter can have (_c_ is reserved)
        more = [f"_c_{py}_size", f"_c_{py}_shape", f"_c_{py}_strides"]
        return Var(py, Pointer(t), size=more[0], shape=more[1], strides=more[2]), [py, *more]
    return Var(f"{py}[{index}]", t), [py]
