"""How every kernel kind reads its arguments: the one reader, over one table.

Every layer that looks at an argument asks here, and this module asks the row of
:mod:`.libraries` (the one table of array libraries, jitkern's own ndarray its first row)
that :func:`kind_of` picks for the argument's class, once per class:

==================  ==========================================================
kind                read through
==================  ==========================================================
``jitkern``         the slots behind jitkern.ndarray's properties (``a._ptr``, ...)
``numpy``           nothing: host memory, refused by name
``cupy``            ``a.data.ptr``, ``a.data.device_id``, its plain-slot layout attributes
``torch``           ``t.data_ptr()`` after ``t.is_cuda``, ``t.get_device()``, ``t.stride()``
``cai``             the ``__cuda_array_interface__`` dict, read once per launch
``dlpack``          one DLPack capsule per launch (``__dlpack__``/``__dlpack_device__``)
``allocation``      ``.ptr``/``.device_id`` of a device allocation (CuPy's MemoryPointer)
``struct``          a frozen dataclass or ``typing.NamedTuple``: a C struct by value, its
                    fields read by name into the struct's layout (runtime.signature)
``unknown``         an instance may still carry ``__cuda_array_interface__`` of its own
==================  ==========================================================

Who reads what:

- every kind, first calls: :func:`describe` (an ArrayInfo);
- RawKernel's, the JIT's and bound launches' generated launchers: :func:`pointer_getter`,
  :func:`device_template`, :func:`array_read` (a protocol read once per call), and for a
  checked raw kernel :func:`dtype_read`;
- the string kernels: :func:`is_scalar`, :func:`describe_array` (an :class:`ArrayArg`),
  :func:`layout_key` (their call keys), :func:`fast_read` (their launchers' reads),
  :func:`new_result` (in which library they allocate results);
- the JIT: :func:`key_reader` (its per-call key), :func:`dims_of` (dtype and layout, from
  which it derives each argument's type), :func:`guards` (what its launcher checks to stay
  on a signature) and :func:`derived_params` (the shape/stride parameters it appends).

Scalars and texture/surface handles are packed by value (:mod:`.launch`). A new array
library is one row of :data:`.libraries.LIBRARIES`; a class the table does not know can be
taught with :func:`register_array_type`.

Only the ground and the runtime are imported here; the arrays layer gives the launchers
what they build results with through :func:`register_arrays`.
"""

from __future__ import annotations

import sys

import numpy

from .. import dtypes, records
from ..layout import c_strides, fits_int32
from ..config import settings
from ..errors import InternalError, JitkernRuntimeError, JitkernTypeError, KernelArgumentError
from ..handles import handle_ctype
from ..pyexpr import function_of
from .libraries import (  # noqa: F401 - the table's names the launchers import from here
    CAI_READ as _CAI_READ,
    DLPACK_READ as _DLPACK_READ,
    INSTANCE_CAI_READ as _INSTANCE_CAI_READ,
    BY_KIND,
    ArrayInfo,
    ArrayRead,
    FastRead,
    NewResult,
    _torch_cpu,
    describe,
    dlpack_info,
    fast_cai,
    host_array_message,
    library,
)


def kind_of(cls: type) -> str:
    """The row of :mod:`.libraries` that reads arguments of type ``cls`` (chosen once per type)."""
    return library(cls).kind


# ---------------------------------------------------------------------------
# Pointer and device templates of the launchers (RawKernel, the JIT, bound launches).


_pointer_getters: dict[type, object] = {}
_device_getters: dict[type, object] = {}
_dtype_getters: dict[type, str] = {}
_template_functions: dict[str, object] = {}


def register_array_type(cls: type, pointer, device=None, dtype=None) -> None:
    """Teach launches how to read a device pointer (and device id) from ``cls``, a class
    the table of libraries does not know.

    ``pointer`` and ``device`` are functions of the array, or (faster) Python expression
    templates over ``{a}``, such as ``"{a}.data.ptr"``, which are inlined into the
    generated launchers. ``dtype``, a template, reads the array's NumPy dtype (what a
    checked raw kernel's launcher compares on each call).
    """
    _pointer_getters[cls] = pointer
    if device is not None:
        _device_getters[cls] = device
    if dtype is not None:
        _dtype_getters[cls] = dtype


def _as_function(getter, env=None):
    """A getter given as a template, as a function of the array (made once per template);
    ``env``: the helpers the template names (``{dp}``, ``{cpu}`` for torch's)."""
    if not isinstance(getter, str):
        return getter
    if env:  # the row's helpers for this class: made for it (pointer_of keeps it per class)
        names = {name: f"_{name}" for name in env}
        return function_of("a", getter.format(a="a", **names),
                           {f"_{name}": value for name, value in env.items()})
    fn = _template_functions.get(getter)
    if fn is None:
        fn = _template_functions[getter] = function_of("a", getter.format(a="a"))
    return fn


def array_read(cls: type, value=None) -> ArrayRead | None:
    """The :class:`ArrayRead` for arguments of type ``cls`` (``value``, a sample, decides for
    a class without either protocol whose instances carry their own CAI), or None for
    arrays read through a per-type pointer getter."""
    getter = pointer_getter(cls)
    row = library(cls)
    if getter is not None and getter is row.pointer and row.launch_read is not None:
        return row.launch_read
    if (getter is None and value is not None and not issubclass(cls, numpy.ndarray)
            and hasattr(value, "__cuda_array_interface__")):
        return _INSTANCE_CAI_READ
    return None


def pointer_getter(cls: type):
    """The function (or template over ``{a}``) that reads a device pointer from an instance
    of ``cls``, or None (a host array, or a class whose instances may carry their own CAI)."""
    getter = _pointer_getters.get(cls)
    if getter is not None:
        return getter
    row = library(cls)
    if row.pointer is None:
        return None
    if row.launch_read is not None and row.kind == "dlpack":  # read per call, by capsule
        return row.pointer if hasattr(cls, "__dlpack_device__") else None
    _pointer_getters[cls] = row.pointer
    if row.device is not None:
        _device_getters[cls] = row.device
    return row.pointer


def pointer_env(cls: type) -> dict:
    """The helpers the pointer template of ``cls`` names (``{cpu}`` for torch's)."""
    env = library(cls).env
    return env(cls) if env is not None else {}


def device_getter(cls: type):
    """A function reading the device id of an instance of ``cls``, or None."""
    return _as_function(_device_getters.get(cls))


def device_template(cls: type) -> str | None:
    """The device getter of ``cls`` as an expression template over ``{a}``, or None."""
    getter = _device_getters.get(cls)
    if getter is None:
        return None
    return getter if isinstance(getter, str) else None


_pointer_functions: dict[type, object] = {}


def pointer_of(obj) -> int:
    """The device address of ``obj``'s first element (the string kernels' general path)."""
    fn = _pointer_functions.get(type(obj))
    if fn is None:
        getter = pointer_getter(type(obj))
        fn = _as_function(getter, pointer_env(type(obj))) \
            if getter is not None and array_read(type(obj)) is None else (lambda a: describe(a).ptr)
        _pointer_functions[type(obj)] = fn
    return fn(obj)


class _ArrayHooks:
    """What the arrays layer (above the runtime) gives the launchers when it is imported:
    ``ndarray`` (jitkern's array class, whose outputs the string kernels' launchers build
    inline), ``pin_stream`` and ``stream_of`` (arrays.core)."""

    ndarray = pin_stream = stream_of = None


ARRAYS = _ArrayHooks()


def register_arrays(**hooks) -> None:
    """Set :data:`ARRAYS` fields (called by arrays.core at import)."""
    for name, value in hooks.items():
        if not hasattr(_ArrayHooks, name):
            raise InternalError(f"runtime.args has no array hook {name!r}: please report this")
        setattr(ARRAYS, name, value)


# ---------------------------------------------------------------------------
# The string kernels (ElementwiseKernel, ReductionKernel): scalars or arrays, each array's
# layout, their call keys, their launchers' reads and their results' library.

_PY_SCALARS = (bool, int, float, complex)


class ArrayArg:
    """A device array argument, reduced to what code generation and launch need."""

    __slots__ = ("device_id", "dtype", "host", "ptr", "shape", "strides")

    def __init__(self, dtype, shape, strides, ptr, device_id, host=False):
        self.dtype = numpy.dtype(dtype) if not isinstance(dtype, numpy.dtype) else dtype
        self.shape = tuple(int(s) for s in shape)
        self.strides = tuple(int(s) for s in strides)
        self.ptr = int(ptr)
        self.device_id = device_id
        self.host = host

    @property
    def size(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def c_contiguous(self) -> bool:
        return self.strides == c_strides(self.shape, self.dtype.itemsize) or self.size <= 1


def is_scalar(value) -> bool:
    """Passed by value: Python and NumPy scalars, texture/surface objects (their handle),
    frozen dataclasses and NamedTuples (a record)."""
    return (type(value) in _PY_SCALARS or isinstance(value, numpy.generic)
            or handle_ctype(type(value)) is not None or records.is_record_class(type(value)))


def describe_array(value, what: str, *, host_ok: bool = False) -> ArrayArg:
    """An :class:`ArrayArg` for a jitkern/CUDA array (or a NumPy array when ``host_ok``)."""
    if isinstance(value, numpy.ndarray):
        if not host_ok:
            raise KernelArgumentError(f"{what}: " + host_array_message("numpy.ndarray"))
        return ArrayArg(value.dtype, value.shape, value.strides, value.ctypes.data, None, True)
    try:
        info = describe(value)
    except TypeError as exc:
        raise KernelArgumentError(
            f"{what}: expected a GPU array (jitkern.ndarray or any CUDA array) or a scalar, got "
            f"{type(value).__module__}.{type(value).__qualname__} ({exc})"
        ) from None
    return ArrayArg(info.dtype, info.shape, info.strides, info.ptr, info.device_id)


def _fast_generic(obj) -> FastRead:
    # Anything else (JAX, Numba, DLPack-only objects): one describe() per call, shared by
    # the layout check and the pointer.
    info = describe(obj)
    consts = {"L": (info.dtype, info.shape, info.strides), "desc": describe}
    return FastRead("{a}_i = {c}desc({a})", ("({a}_i.dtype, {a}_i.shape, {a}_i.strides) != {c}L",),
                    "{a}_i.ptr", "{a}_i.device_id", consts)


def fast_read(obj) -> FastRead:
    """How a generated launcher reads arrays like ``obj`` once it has checked that the
    argument's type is ``type(obj)``: its row's ``fast_read`` (jitkern's slots, CuPy's and
    torch's attributes, the CAI dict), else one describe() per call."""
    row = library(type(obj))
    if row.describe is None or row.kind == "unknown":
        if isinstance(getattr(obj, "__cuda_array_interface__", None), dict):
            return fast_cai(obj, instance=True)  # the dict set on the instance itself
    return (row.fast_read or _fast_generic)(obj)


def _key_generic(obj):
    info = describe(obj)
    return (type(obj), info.dtype, info.shape, info.strides)


_key_readers: dict[type, object] = {}


def layout_key(obj):
    """A hashable key of ``obj``'s type, dtype, shape and strides (not its pointer), read
    through its row's cheapest attributes. Raises TypeError for non-arrays."""
    reader = _key_readers.get(type(obj))
    if reader is None:
        row = library(type(obj))
        if row.kind == "numpy":
            return describe(obj)  # raises: host memory
        if row.describe is None or row.kind == "unknown":  # an instance's own protocol
            return _key_generic(obj)
        reader = _key_readers[type(obj)] = row.layout_key or _key_generic
    return reader(obj)


_results_of_type: dict[type, object] = {}


def _results_of(value):
    """The NewResult of ``value``'s library, or None (jitkern arrays, other protocols,
    scalars): chosen once per type."""
    cls = type(value)
    try:
        return _results_of_type[cls]
    except KeyError:
        pass
    make = library(cls).results
    results = _results_of_type[cls] = make() if make is not None else None
    return results


def new_result(values) -> NewResult | None:
    """How a kernel whose arguments are ``values`` allocates its results: CuPy's arrays if
    any is a CuPy array, else PyTorch's tensors if any is a tensor; None for jitkern arrays
    (jitkern arrays, JAX, Numba and other protocol objects). With no array among ``values``,
    the program's library (:func:`program_library`)."""
    best, arrays = None, False
    for value in values:
        results = _results_of(value)
        if results is not None and (best is None or results.rank < best.rank):
            best = results
        arrays = arrays or _is_array(value)
    if not arrays:
        return _program_results()
    return best


_ARRAY_KINDS = frozenset(("jitkern", "cupy", "torch", "cai", "dlpack", "allocation"))


def _is_array(value) -> bool:
    """Whether ``value`` is an array argument: of an array library's type, or an object
    whose class says nothing but which carries a protocol itself (set on the instance)."""
    kind = library(type(value)).kind
    if kind in _ARRAY_KINDS:
        return True
    return kind == "unknown" and (hasattr(value, "__cuda_array_interface__")
                                  or hasattr(value, "__dlpack__"))


def program_library() -> str:
    """The library whose arrays a kernel with no array arguments returns: ``settings.results``
    (JITKERN_RESULTS), where 'auto' is CuPy's when the program has imported CuPy, else
    PyTorch's when it has imported PyTorch, else jitkern's ('cupy', 'torch' or 'jitkern')."""
    chosen = settings.results
    if chosen != "auto":
        return chosen
    modules = sys.modules
    return "cupy" if "cupy" in modules else "torch" if "torch" in modules else "jitkern"


def _program_results() -> NewResult | None:
    library_name = program_library()
    if library_name == "jitkern":
        return None
    try:
        return BY_KIND[library_name].results()
    except ImportError as exc:
        raise JitkernRuntimeError(
            f"a kernel with no array arguments returns {library_name} arrays "
            f"(jitkern.config.settings.results / JITKERN_RESULTS = {settings.results!r}), but "
            f"{library_name} cannot be imported: {exc}") from None


# ---------------------------------------------------------------------------
# The JIT: a per-call key per argument (equal for arguments of one JIT type), each array's
# dtype and layout (from which the JIT derives its type), the checks its launcher makes to
# stay on a signature, and the shape/stride parameters it appends: all from the table's
# ``dims``, ``key``, ``guard_1d``/``guard_nd`` columns.


def array_key(dtype, itemsize, shape, strides) -> tuple:
    """What decides an array's JIT type besides its dtype: a 1-D array's contiguity, or
    the rank and whether every byte offset fits in 32 bits."""
    if len(shape) == 1:
        return (dtype, strides[0] == itemsize or shape[0] <= 1)
    return (dtype, len(shape), fits_int32(shape, strides, itemsize))


def dims_of(a):
    """``(dtype, itemsize, shape, byte strides)`` of array argument ``a``, read through its
    row (a protocol array through its dict or one describe())."""
    return dims_reader(type(a))(a)


_dims_readers: dict[type, object] = {}


def dims_reader(cls: type):
    """The function ``a -> (dtype, itemsize, shape, strides)`` for arrays of type ``cls``."""
    reader = _dims_readers.get(cls)
    if reader is None:
        row = library(cls)
        if row.dims is not None:
            reader = row.dims
        elif row.kind in ("cai", "unknown"):
            reader = _dims_cai
        else:
            reader = _dims_described
        _dims_readers[cls] = reader
    return reader


def _dims_described(a):
    info = describe(a)  # DLPack: one capsule (the floor of a DLPack-only argument)
    dtype = info.dtype
    return dtype, dtype.itemsize, tuple(info.shape), tuple(info.strides)


def _dims_cai(a):
    cai = getattr(a, "__cuda_array_interface__", None)
    if cai is None:  # an instance without one: the general reader says why
        return _dims_described(a)
    dtype, itemsize, _ = _typestr_dtype(cai)
    shape, strides = tuple(cai["shape"]), cai.get("strides")
    strides = c_strides(shape, itemsize) if strides is None else tuple(strides)
    return dtype, itemsize, shape, strides


_typestrs: dict = {}  # CAI typestr -> (dtype, itemsize, the key of a contiguous 1-D array)
_descrs: dict = {}  # (typestr, repr(descr)) -> the same, for records


def _typestr_dtype(cai: dict) -> tuple:
    """(dtype, itemsize, key of a contiguous 1-D array) of a CAI dict's typestr; records are
    kept per (typestr, descr): the descr is a list, so its text is the key."""
    typestr = cai["typestr"]
    known = _typestrs.get(typestr)
    if known is not None:
        return known
    if typestr[1:2] == "V":
        key = (typestr, repr(cai.get("descr")))
        known = _descrs.get(key)
        if known is None:
            dtype = records.dtype_from_cai(cai)
            known = _descrs[key] = (dtype, dtype.itemsize, (dtype, True))
        return known
    dtype = dtypes.from_typestr(typestr)
    known = _typestrs[typestr] = (dtype, dtype.itemsize, (dtype, True))
    return known


def cai_key(cai: dict) -> tuple:
    """:func:`array_key` of a ``__cuda_array_interface__`` dict, read without describe():
    no ArrayInfo and no driver query of the pointer's device (the first launch's
    describe() validated the array)."""
    dtype, itemsize, vector = _typestr_dtype(cai)
    shape, strides = cai["shape"], cai.get("strides")
    if len(shape) == 1 and (strides is None or strides[0] == itemsize):
        return vector  # the common case, a contiguous 1-D array: no tuples built
    shape = tuple(shape)
    strides = c_strides(shape, itemsize) if strides is None else tuple(strides)
    return array_key(dtype, itemsize, shape, strides)


def info_key(info) -> tuple:
    """:func:`array_key` of an ArrayInfo (what a DLPack argument's launcher read)."""
    return array_key(info.dtype, info.dtype.itemsize, info.shape, info.strides)


def _scalar_key(a):
    return type(a)


def _key_void(a):
    """A structured scalar: every record dtype has the one type numpy.void."""
    return (numpy.void, a.dtype)


def _key_cai(a):
    cai = a.__cuda_array_interface__
    return (type(a), cai.get("mask") is not None, cai_key(cai))


def _key_described(a):
    if hasattr(a, "__cuda_array_interface__"):  # an instance-level attribute
        return _key_cai(a)
    return (type(a),) + array_key(*_dims_described(a))


def _dims_key(dims):
    """The per-call key of a row's arrays read through its ``dims`` column."""
    def key(a):
        return (type(a),) + array_key(*dims(a))

    key.dims = dims
    return key


#: class -> its per-call key reader (the JIT's launch path reads one dict per argument)
KEYERS: dict = {t: _scalar_key for t in (bool, int, float, complex)}


def key_reader(cls: type):
    """The JIT's per-call key reader of arguments of type ``cls``: NumPy scalars and struct
    classes by type, records by dtype, arrays through their row (its ``key``, else its
    ``dims``), protocol arrays through their dict or one describe()."""
    if issubclass(cls, (numpy.bool_, numpy.number)) or records.is_record_class(cls):
        keyer = _scalar_key  # a struct class: its type says its layout
    elif cls is numpy.void:
        keyer = _key_void
    else:
        row = library(cls)
        if row.key is not None:
            keyer = row.key
        elif row.dims is not None:
            keyer = _dims_key(row.dims)
        elif row.kind == "cai":
            keyer = _key_cai  # the dict's fields
        else:
            keyer = _key_described
    KEYERS[cls] = keyer
    return keyer


def key_of(a):
    """The JIT's per-call key of argument ``a``."""
    return (KEYERS.get(type(a)) or key_reader(type(a)))(a)


def scalar_keyed(cls: type) -> bool:
    """Whether the class of an argument is its whole key (a scalar, a struct class)."""
    return (KEYERS.get(cls) or key_reader(cls)) is _scalar_key


def guards(args: tuple, layouts: tuple) -> tuple[list, dict]:
    """(conditions, names they use): what ``a0, a1, ...`` must meet, beyond each having the
    type of the same argument in ``args``, to keep the JIT's signature. ``layouts[i]`` is
    None for a scalar, else ``(pointer_like, ndim, index32, itemsize)`` of array ``i``'s JIT
    type. The conditions may say no to arguments of the same signature, never yes to another."""
    env = {"_fits_int32": fits_int32}
    terms = []
    for i, (a, layout) in enumerate(zip(args, layouts)):
        if type(a) is numpy.void:  # the launcher packs this record dtype's bytes
            env[f"D{i}"] = a.dtype
            terms.append(f"(a{i}.dtype is D{i} or a{i}.dtype == D{i})")
        elif layout is not None:
            terms += _array_guards(i, a, layout, env)
    return terms, env


def _array_guards(i: int, a, layout, env: dict) -> list[str]:
    pointer_like, ndim, index32, itemsize = layout
    cls = type(a)
    keyer = KEYERS.get(cls) or key_reader(cls)
    read = array_read(cls, a)
    if read is not None:  # the launcher has read a{i}_i once (an ArrayRead)
        return _read_guards(read.kind, i, a, pointer_like, itemsize, env)
    row = library(cls)
    fields = {"a": f"a{i}", "D": f"D{i}", "n": itemsize, "ndim": ndim}
    templates = _row_templates(cls, row, keyer, pointer_like, index32)
    if templates is not None:
        # the table's inline checks; a 1-element array one says no to takes the general
        # path, which keys it correctly
        env[f"D{i}"] = dims_reader(cls)(a)[0]
        return [t.format(**fields) for t in templates]
    env[f"K{i}"], env[f"V{i}"] = keyer, keyer(a)
    return [f"K{i}(a{i}) == V{i}"]


def _row_templates(cls: type, row, keyer, pointer_like: bool, index32: bool):
    """The row's inline guard templates for this layout, where its keys come from the same
    row and the class has every attribute they read; else None (decided once per class
    and layout)."""
    key = (cls, pointer_like, index32)
    try:
        return _templates[key]
    except KeyError:
        pass
    templates = _templates[key] = _choose_templates(cls, row, keyer, pointer_like, index32)
    return templates


_templates: dict = {}


def _choose_templates(cls: type, row, keyer, pointer_like: bool, index32: bool):
    if row.dims is None or (keyer is not row.key and getattr(keyer, "dims", None) is not row.dims):
        return None
    if pointer_like:
        templates = row.guard_1d
    elif row.guard_nd is not None:
        templates = row.guard_nd + ((row.guard_fits,) if index32 and row.guard_fits else ())
    else:
        return None
    if templates is None:
        return None
    names = {m for t in templates for m in _attributes(t)}
    return templates if all(hasattr(cls, name) for name in names) else None


def _attributes(template: str) -> list[str]:
    out, start = [], 0
    while (k := template.find("{a}.", start)) >= 0:
        j = k + 4
        while j < len(template) and (template[j].isalnum() or template[j] == "_"):
            j += 1
        out.append(template[k + 4:j])
        start = j
    return out


def _read_guards(kind: str, i: int, a, pointer_like: bool, itemsize: int, env: dict) -> list:
    """Guards over ``a{i}_i``, what the launcher read from a protocol-only array: the CAI
    dict (``kind`` "cai") or DLPack's ArrayInfo ("info"). A 1-D contiguous array is checked
    inline (the common case: a few dict reads); any other layout by its key."""
    v = f"a{i}_i"
    if kind == "cai":
        cai = a.__cuda_array_interface__
        env[f"TS{i}"] = cai["typestr"]
        terms = [f"{v}['typestr'] == TS{i}", f"{v}.get('mask') is None"]
        if cai["typestr"][1:2] == "V":  # records of one size: the descr says which
            env[f"DS{i}"] = cai.get("descr")
            terms.append(f"{v}.get('descr') == DS{i}")
        if pointer_like:
            env[f"ST{i}"] = (None, (itemsize,))
            return terms + [f"len({v}['shape']) == 1", f"{v}.get('strides') in ST{i}"]
        env[f"CK{i}"], env[f"V{i}"] = cai_key, cai_key(cai)
        return terms + [f"CK{i}({v}) == V{i}"]
    info = describe(a)
    env[f"D{i}"] = info.dtype
    if pointer_like:
        return [f"{v}.dtype == D{i}", f"{v}.strides == ({itemsize},)"]
    env[f"IK{i}"], env[f"V{i}"] = info_key, info_key(info)
    return [f"IK{i}({v}) == V{i}"]


def derived_params(plans):
    """The function appending shape/stride parameters after the user's arguments
    (``plans[i]``: ``(kind, axis)`` pairs of argument ``i``), or None when there are none."""
    wanted = [(i, tuple(p)) for i, p in enumerate(plans) if p]
    if not wanted:
        return None

    def extras(args):
        out = []
        for i, items in wanted:
            _dtype, _itemsize, shape, strides = dims_of(args[i])
            for kind, axis in items:
                out.append(shape[axis] if kind == "shape" else strides[axis])
        return tuple(out)

    return extras


# ---------------------------------------------------------------------------
# The dtype column: what an array argument holds, read once on the miss path
# (dtype_of) and compared on every call by a checked launcher (dtype_read).


def dtype_of(a):
    """The NumPy dtype of array (or NumPy scalar) argument ``a``; None where it has none
    (a device allocation, an object no reader knows)."""
    if isinstance(a, (numpy.ndarray, numpy.generic)):
        return a.dtype
    cls = type(a)
    kind = kind_of(cls)
    if kind in ("allocation", "struct"):
        return None
    try:
        if cls in _dtype_getters or kind in ("cupy", "jitkern"):
            return dtype_read(cls, a)[1]
        read = array_read(cls, a)
        if read is not None and read.kind == "cai":  # no driver call: the dict says it
            return _cai_dtype(a.__cuda_array_interface__)
        return describe(a).dtype
    except (KernelArgumentError, AttributeError, TypeError, ValueError, KeyError):
        return None


def _cai_dtype(cai: dict) -> numpy.dtype:
    """The typestr's dtype; for records (a void typestr), the record its descr lists."""
    if cai["typestr"][1:2] == "V" and cai.get("descr"):
        try:
            return records.dtype_from_cai(cai)
        except JitkernTypeError:  # padding only, or not a C layout: the records' size only
            pass
    return numpy.dtype(cai["typestr"])


#: ArrayRead kind -> template over ``{a}_i`` (what the launcher's ArrayRead bound) that
#: reads a value equal to the sample's when the dtype is the same; its sample value's reader.
#: (A library's own read is its row's ``dtype`` column in :mod:`.libraries`.)
_READ_DTYPES = {
    "cai": ("{a}_i['typestr']", lambda a: a.__cuda_array_interface__["typestr"]),
    "info": ("{a}_i.dtype", lambda a: dlpack_info(a).dtype),
}


def dtype_read(cls: type, value) -> tuple[str, object] | None:
    """(template over ``{a}``, the value it reads from ``value``) that tells, on each call,
    whether an argument of type ``cls`` still has ``value``'s dtype; None where no cheap
    read exists."""
    getter = _dtype_getters.get(cls)
    if getter is not None:
        return getter, _as_function(getter)(value)
    read = array_read(cls, value)
    if read is not None:
        template, sample = _READ_DTYPES[read.kind]
        return template, sample(value)
    template = library(cls).dtype
    if template is None:
        return None
    return template, _as_function(template)(value)
