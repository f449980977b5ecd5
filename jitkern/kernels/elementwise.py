"""ElementwiseKernel: CuPy's elementwise string kernels, on jitkern's backend.

A call goes: arguments -> a *layout key* (dtypes, shapes, strides, scalar types) ->
a cached :class:`_Launch` (types resolved, broadcast done, dimensions collapsed,
source generated and compiled, grid sized, static launch arguments packed) ->
pointers and scalars filled in and one launch. Only the first call with a new key
does string work.

Code generation picks one of three loop bodies:

* ``vector``: every array contiguous (or a broadcast constant) and aligned: each
  thread moves ``V`` elements with one 16-byte load/store per array, ``U``
  vectors in flight, in a grid-stride loop;
* ``linear``: the same without vectors (misaligned pointers, odd element sizes);
* ``strided``: views and broadcasting: the flat index is unravelled over the
  collapsed shape and each array adds its own byte strides.

Indices are 32-bit whenever the size and every byte offset allow it.
"""

from __future__ import annotations

import numpy

from ..arrays import empty
from ..arrays.core import allocate_like, stream_of
from ..records import is_record_class
from ..toolchain import nvrtc as compiler
from ..runtime import args as launch_args, driver
from ..runtime.args import layout_key, pointer_of, program_library
from ..handles import handle_ctype
from ..toolchain.inspection import Inspection
from .base import (CachedSources, Kernel, debug_flag, debug_launched, debug_options,
                   several_devices, string_signature)
from ..runtime.module import Function, cluster_refused
from ..errors import JitkernTypeError, JitkernValueError, KernelArgumentError
from ..compiler.strings import prelude as _cuda, layout as _layout
from ..runtime import runner as _launcher
from ..runtime.limits import block_size_of
from ..compiler.strings import elementwise as _codegen
from ..compiler.strings import mapping as _mapping
from ..compiler.strings.params import (
    convert_scalar,
    ctype_of,
    param_dtype,
    resolve_placeholders,
    scalar_dtype,
)
from ..lazy import lazy_import

# off a cached first launch's path (tests/test_first_call.py): loaded when first used
export = lazy_import("jitkern.toolchain.export")  # only when exporting
_export_kinds = lazy_import("jitkern.kernels._export_kinds")  # only when exporting
_sim_strings = lazy_import("jitkern.sim.elementwise")  # only when simulating

_INT32_LIMIT = 2**31 - 1
DEFAULT_BLOCK = 256
_VECTOR_BYTES = 16
_MAX_VECTOR = 8
_MAX_GRID_X = (1 << 31) - 1
_UNROLL = _codegen.UNROLL


# Called as hook(value, param, what) on every argument before it is classified (texture
# and surface objects need none: they are scalars whose placeholder binds to their handle
# type, see params.HANDLE_DTYPES).
ARGUMENT_HOOKS: list = []


def check_kernel_name(name) -> str:
    if not isinstance(name, str) or not name.isidentifier() or not name.isascii():
        raise JitkernValueError(f"name: {name!r} is not a valid kernel name (a C identifier)")
    return name


def _check_code(value, what: str) -> str:
    if not isinstance(value, str):
        raise JitkernTypeError(f"{what}: expected CUDA C++ code as a str, got {type(value).__name__}")
    return value


# ---------------------------------------------------------------------------
# Analysis of a call's arguments (pure: also used by inspect() without a GPU).


class _Analysis:
    """What a call's arguments decide: types, shape, layout, variant and source."""

    __slots__ = (
        "array_pos",
        "bound",
        "dtypes",
        "index_type",
        "ndim",
        "out_given",
        "out_shape",
        "raw_contig",
        "raw_dims",
        "scalar_pos",
        "shape",
        "shape_c",
        "size",
        "source",
        "strides_c",
        "variant",
        "vector",
    )


class ElementwiseKernel(CachedSources, Kernel):
    """A user-defined elementwise kernel, with CuPy's semantics.

    ``ElementwiseKernel(in_params, out_params, operation, name='kernel', reduce_dims=True,
    preamble='', no_return=False, return_tuple=False, loop_prep='', after_loop='',
    options=())``

    ``in_params``/``out_params`` are comma-separated ``[raw] TYPE NAME`` lists; ``TYPE``
    is a NumPy dtype name or a one-letter type placeholder resolved from the
    arguments (outputs first). ``operation`` is CUDA C++ run once per element, with
    every non-raw parameter bound to its element, ``i`` the flat index and
    ``_ind.size()`` the number of elements. Call it as ``kernel(*inputs)`` or
    ``kernel(*inputs, *outputs)``; arrays broadcast like NumPy's. Keywords: ``size``
    (the element count, when every argument is raw), ``stream`` and ``block_size``.
    """

    # A Kernel (kernels/base.py), as RawKernel: calling the kernel calls _launch at first,
    # then the generated entry of the last call layout (runtime/launcher.py), which checks
    # the layout itself and falls back to _launch.
    _kind = "elementwise"
    _made_again = True  # kernels/made_again.py
    _fresh = ("_runners", "_sources")

    def __init__(
        self,
        in_params,
        out_params,
        operation,
        name="kernel",
        reduce_dims=True,
        preamble="",
        no_return=False,
        return_tuple=False,
        loop_prep="",
        after_loop="",
        options=(),
        debug=False,
        **kwargs,
    ):
        again = ("made", type(self), in_params, out_params, operation, name, reduce_dims,
                 preamble, no_return, return_tuple, loop_prep, after_loop, options, debug,
                 debug.__class__)
        if not kwargs and self._again(again):  # the same call as before: what it made
            return
        self.name = check_kernel_name(name)
        self.in_params, self.out_params = string_signature(
            "ElementwiseKernel", self.name, in_params, out_params, kwargs, need_input=False)
        self.params = self.in_params + self.out_params
        self.nin = len(self.in_params)
        self.nout = len(self.out_params)
        self.nargs = self.nin + self.nout
        self.operation = _check_code(operation, "operation")
        self.preamble = _check_code(preamble, "preamble")
        self.loop_prep = _check_code(loop_prep, "loop_prep")
        self.after_loop = _check_code(after_loop, "after_loop")
        self.reduce_dims = bool(reduce_dims)
        self.no_return = bool(no_return)
        self.return_tuple = bool(return_tuple)
        self.debug = debug_flag(debug, "ElementwiseKernel")
        self.options = debug_options(
            self.debug, compiler.normalize_options(options, f"ElementwiseKernel {self.name!r}"))
        self._given_options = tuple(options)
        self._runners: dict = {}
        self._sources: dict = {}  # (dtypes, variant) -> source
        # self._functions: generated source -> a Function per device
        self._start(again=None if kwargs else again)

    @property
    def kwargs(self) -> dict:
        """CuPy's ``kwargs``: the optional keywords given (options, loop_prep, after_loop)."""
        given = {"options": self._given_options, "loop_prep": self.loop_prep, "after_loop": self.after_loop}
        return {k: v for k, v in given.items() if v}

    # -- the call ----------------------------------------------------------------
    def _launch(self, *args, size=None, stream=None, block_size=None, cluster=None):
        """Run the kernel; returns the output array(s) (``None`` with ``no_return``).
        ``cluster=`` is refused: the kernel sizes its own grid."""
        if cluster is not None:
            raise cluster_refused("ElementwiseKernel", self.name)
        key = _call_key(args, size, block_size)
        run = self._runners.get(key) if key is not None else None
        if run is None:
            run = self._runner(args, size, block_size, key)
        entry = getattr(run, "entry", None)
        if entry is not None and size is None and block_size is None:
            # the next call with this layout goes straight to it (and a new object of this
            # constructor call's first: its source is reported as this one's)
            self._install(entry, inherit={"_sources": self._sources})
        return run(args, stream)

    def _simulated(self, *args, size=None, stream=None, block_size=None, cluster=None):
        with self._on_simulator(stream, args):  # JITKERN_SIMULATE=1: the C on the CPU
            return self.simulate(*args, size=size, stream=stream, block_size=block_size,
                                 cluster=cluster)

    def _forget_builds(self) -> None:
        self._runners.clear()
        self.__dict__.pop("_sim_kernels", None)  # the simulator's translations

    @property
    def simulate(self):
        """``kernel.simulate(*args, size=None)``: the call on the CPU in jitkern's simulator
        (docs/debugging.md), with NumPy arrays; returns NumPy arrays."""
        return _sim_strings.ElementwiseSim(self)

    def _runner(self, args, size, block_size, key):
        """The function that runs calls shaped like ``args`` (built once per call key: its
        launch and generated text are kept in the memo of builds, for every object of this
        definition; each binds its own general path)."""
        def build():
            return self._launch_of(args, size, block_size)

        if key is None:
            launch, launcher = build()
        else:
            parts = ("runner", key, driver.current_device_id())
            launch, launcher = self._memoized(parts, "", build)
        self._remember(launch.analysis)
        run = launch.general
        if launcher is not None:
            run = _launcher.bind_runner(launcher, self._launch)
            run.launch = launch
        if key is not None:
            self._runners[key] = run
        return run

    def _launch_of(self, args, size, block_size):
        """(the decided launch, its generated launcher or None) of calls shaped like ``args``."""
        arrays = self._describe_args(args, host_ok=False)
        launch = _Launch(self, self._analyze(args, arrays, size), arrays, block_size)
        launcher = None
        if not launch.zero and not self.debug:
            launcher = _direct_runner(self, launch, len(args) == self.nargs, args)
        return launch, launcher

    def _definition(self) -> tuple:
        key = self.__dict__.get("_definition_key")
        if key is None:  # (made once: a kernel's definition does not change)
            key = self._definition_key = (
                _names(self.in_params), _names(self.out_params), self.operation, self.name,
                self.reduce_dims, self.preamble, self.no_return, self.return_tuple,
                self.loop_prep, self.after_loop, self.options, self.debug)
        return key

    def _result(self, outs):
        if self.no_return:
            return None
        if self.nout == 1 and not self.return_tuple:
            return outs[0]
        return tuple(outs)

    # -- analysis ------------------------------------------------------------------
    def _describe_args(self, args, host_ok: bool) -> list:
        if len(args) not in (self.nin, self.nargs):
            raise KernelArgumentError(
                f"{self.name}: takes {self.nin} input(s) ({_names(self.in_params)}) and optionally "
                f"{self.nout} output(s) ({_names(self.out_params)}); got {len(args)} argument(s)"
            )
        described = []
        for k, value in enumerate(args):
            p = self.params[k]
            what = f"{self.name}: {'output' if p.is_output else 'input'} {p.name!r}"
            for hook in ARGUMENT_HOOKS:
                hook(value, p, what)
            if launch_args.is_scalar(value):
                if p.is_output:
                    raise KernelArgumentError(
                        f"{what}: outputs must be arrays, got a scalar {value!r}"
                    )
                described.append(None)  # a scalar, raw or not, as in CuPy
            else:
                described.append(launch_args.describe_array(value, what, host_ok=host_ok))
        return described

    def _analyze(self, args, arrays, size) -> _Analysis:
        a = _Analysis()
        nin = self.nin
        a.out_given = len(args) == self.nargs
        in_types = [
            scalar_dtype(v) if arr is None else arr.dtype
            for v, arr in zip(args[:nin], arrays[:nin])
        ]
        out_types = [arr.dtype for arr in arrays[nin:]]
        a.bound = resolve_placeholders(
            self.in_params,
            self.out_params,
            in_types,
            out_types,
            [arr is None for arr in arrays[:nin]],
            self.name,
        )
        a.dtypes = tuple(param_dtype(p, a.bound) for p in self.params)
        for dt in a.dtypes:
            ctype_of(dt)
        a.array_pos = tuple(k for k, arr in enumerate(arrays) if arr is not None)
        a.scalar_pos = tuple(k for k, arr in enumerate(arrays) if arr is None)
        self._decide_shape(a, arrays, size)
        self._decide_layout(a, arrays)
        a.source = self._source(a)
        return a

    def _decide_shape(self, a, arrays, size) -> None:
        mapped = [arr for p, arr in zip(self.params, arrays) if arr is not None and not p.raw]
        has_raw = any(p.raw for p in self.params)
        if size is not None:
            if mapped:
                raise JitkernValueError(
                    f"{self.name}: size= is only for kernels whose arrays are all "
                    "raw; here the size comes from the non-raw array arguments"
                )
            if not isinstance(size, (int, numpy.integer)) or isinstance(size, bool) or size < 0:
                raise JitkernValueError(f"{self.name}: size= must be a non-negative int, got {size!r}")
            a.shape = (int(size),)
        elif not mapped and has_raw:
            raise JitkernValueError(
                f"{self.name}: every array argument is raw, so the loop size is "
                "unknown: pass size=N"
            )
        else:
            a.shape = self._broadcast(arrays)
        if a.out_given:
            for p, arr in zip(self.out_params, arrays[self.nin :]):
                if not p.raw and arr.shape != a.shape:
                    raise JitkernValueError(
                        f"{self.name}: output {p.name!r} has shape {arr.shape}, but "
                        f"the arguments broadcast to {a.shape}"
                    )
        a.size = int(numpy.prod(a.shape, dtype=numpy.int64)) if a.shape else 1
        a.out_shape = a.shape

    def _broadcast(self, arrays) -> tuple:
        """The loop shape: the inputs broadcast together, then with each output (an
        output may give the inputs a larger shape, as in CuPy); a mismatch names the
        output and both shapes."""
        ins = [arr.shape for p, arr in zip(self.in_params, arrays) if arr is not None and not p.raw]
        shape = _layout.broadcast_shape(ins, self.name)
        for p, arr in zip(self.out_params, arrays[self.nin :]):
            if p.raw:
                continue
            try:
                shape = _layout.broadcast_shape([shape, arr.shape], self.name)
            except JitkernValueError:
                raise JitkernValueError(
                    f"{self.name}: output {p.name!r} has shape {arr.shape}, which does not "
                    f"broadcast with the inputs' shape {shape}"
                ) from None
        return shape

    def _decide_layout(self, a, arrays) -> None:
        strides_list, sizes, outputs = [], [], []
        for k, p in enumerate(self.params):
            arr = arrays[k] if k < len(arrays) else None
            if p.raw:
                continue
            if p.is_output and arr is None:
                strides = _layout.c_strides(a.shape, a.dtypes[k].itemsize)
            elif arr is None:
                continue
            else:
                strides = _layout.broadcast_strides(arr.shape, arr.strides, a.shape)
            strides_list.append(strides)
            sizes.append(a.dtypes[k].itemsize)
            outputs.append(p.is_output)
        shape_c, strides_c = _layout.collapse(a.shape, strides_list, keep=not self.reduce_dims)
        a.shape_c, a.strides_c = shape_c, strides_c
        a.ndim = len(shape_c)
        linear = (
            a.ndim <= 1
            and self.reduce_dims
            and all(
                not st or st[0] in (0, isz) or shape_c[0] == 1 for st, isz in zip(strides_c, sizes)
            )
        )
        extent = max((_layout.max_extent(shape_c, st) for st in strides_c), default=0)
        vector = 1
        if linear:
            # The narrowest array moves 16 bytes per vector (wider ones 32 or 64, as two
            # or four 16-byte accesses): mixed dtypes (float32 in, float64 out) keep
            # every load and store 16 bytes wide.
            walking = [isz for st, isz in zip(strides_c, sizes) if st and st[0] != 0]
            narrowest = min(walking, default=0)
            # A vector of V elements is one aligned load of V * itemsize bytes: a power of
            # two for every array (a 24-byte record moves element by element).
            if narrowest and all(_power_of_two(isz) for isz in walking):
                vector = min(_VECTOR_BYTES // narrowest, _MAX_VECTOR, 64 // max(walking))
                vector = vector if vector >= 2 else 1
        a.vector = vector
        a.variant = ("vector" if vector > 1 else "linear") if linear else "strided"
        if a.variant == "strided" and self.reduce_dims:
            a.vector = _inner_vector(shape_c, strides_c, sizes, outputs)
            if a.vector > 1:
                a.variant = "strided_vector"
        if _mapping.per_thread_reason(self):  # CuPy's one element per thread (mapping.py)
            a.variant, a.vector = ("linear" if a.variant == "vector" else "strided"
                                   if a.variant == "strided_vector" else a.variant), 1
        # The grid covers the whole size (see _grid_size), so a grid-stride step can carry
        # an index up to about twice the size before the loop ends.
        a.index_type = (
            "int" if 2 * a.size + (1 << 16) <= _INT32_LIMIT and extent <= _INT32_LIMIT
            else "long long"
        )
        a.raw_dims = {}
        a.raw_contig = {}
        for k, p in enumerate(self.params):
            if not p.raw:
                continue
            if k < len(arrays) and arrays[k] is not None:
                a.raw_dims[k] = (arrays[k].shape, arrays[k].strides)
                a.raw_contig[k] = arrays[k].c_contiguous
            elif k in a.scalar_pos:  # a raw scalar is a scalar
                continue
            else:  # a raw output we allocate
                a.raw_dims[k] = (a.shape, _layout.c_strides(a.shape, a.dtypes[k].itemsize))
                a.raw_contig[k] = True

    # -- code generation ------------------------------------------------------------
    def _source(self, a: _Analysis) -> str:
        return _codegen.generate(self, a)

    def _remember(self, a: _Analysis) -> None:
        key = (dtype_names(a.dtypes), a.variant, a.ndim, a.index_type)
        self._sources[key] = a.source

    def __reduce__(self):
        """Pickles as its definition; unpickled, it compiles through the cache."""
        return _rebuild, (type(self), {
            "in_params": _names(self.in_params), "out_params": _names(self.out_params),
            "operation": self.operation, "name": self.name, "reduce_dims": self.reduce_dims,
            "preamble": self.preamble, "no_return": self.no_return,
            "return_tuple": self.return_tuple, "loop_prep": self.loop_prep,
            "after_loop": self.after_loop, "options": self._given_options, "debug": self.debug})

    # -- introspection ----------------------------------------------------------------
    def inspect(self, *args, arch=None, size=None, **kwargs) -> Inspection:
        """Source, CUBIN and resource use of the variant ``self(*args)`` would run.

        NumPy arrays stand for device arrays of their dtype, shape and strides (assumed
        16-byte aligned); with ``arch`` (e.g. ``"sm_90"``) no GPU is needed.
        """
        if kwargs:
            raise JitkernTypeError(f"inspect: unexpected keyword argument(s) {', '.join(kwargs)}")
        arrays = self._describe_args(args, host_ok=True)
        a = self._analyze(args, arrays, size)
        return self._inspect_analysis(a, arch)


    def export(self, path, *args_or_dtypes, arch=("sm_80", "sm_90"), format="fatbin"):
        """Write the kernel for these argument dtypes (example arguments, or a dtype per
        array argument) for ``arch`` as ``format``, with a header and a manifest
        (docs/export.md); ``jitkern.load(path)`` calls it like this kernel, on
        C-contiguous arrays of one shape."""
        export.check_format(format)
        return export.write(path, _export_kinds.elementwise_spec(self, args_or_dtypes), arch,
                            format)


def _inner_vector(shape, strides_list, sizes, outputs) -> int:
    """Elements per 16-byte vector along the innermost dimension, or 1 when it does not apply.

    Applies when every array walks the innermost dimension contiguously or not at all
    (a broadcast row or column), outputs contiguously, and every other stride keeps
    vectors aligned.
    """
    if len(shape) < 2:
        return 1
    walking = [isz for st, isz in zip(strides_list, sizes) if st[-1] != 0]
    if not walking or not all(_power_of_two(isz) for isz in walking):
        return 1
    v = min(_VECTOR_BYTES // max(walking), _MAX_VECTOR)
    if v < 2 or shape[-1] % v:
        return 1
    for st, isz, is_out in zip(strides_list, sizes, outputs):
        if st[-1] not in (0, isz) or (is_out and st[-1] != isz):
            return 1
        if st[-1] and any(x % (v * isz) for x in st[:-1]):
            return 1
    return v


def dtype_names(dtypes: tuple) -> tuple:
    """Each dtype's name (what ``cached_codes`` keys read), made once per dtype tuple."""
    names = _dtype_names.get(dtypes)
    if names is None:
        names = _dtype_names[dtypes] = tuple(dt.name for dt in dtypes)
    return names


_dtype_names: dict = {}


def _power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def _names(params) -> str:
    return ", ".join(p.spelling for p in params)


def _rebuild(cls, kwargs: dict):
    """Unpickling a string kernel: make it again from its definition."""
    return cls(**kwargs)


# ---------------------------------------------------------------------------
# The call key and the cached launch (the hot path).


def _call_key(args, size, block_size):
    """A hashable key of everything in ``args`` that decides the launch except pointers
    (None when an argument is not an array or scalar: the slow path names it)."""
    key = [size, block_size]
    for value in args:
        cls = type(value)
        if cls is numpy.void:  # records: the dtype decides the type
            key.append(value.dtype)
        elif cls in _SCALAR_TYPES or isinstance(value, numpy.generic) or handle_ctype(cls):
            key.append(cls)
        else:
            try:
                key.append(layout_key(value))
            except TypeError:
                if not is_record_class(cls):
                    return None
                key.append(cls)  # a frozen dataclass / NamedTuple: a record scalar
    if all(type(k) is type for k in key[2:]):  # scalars only (each keyed by its class):
        key.append(program_library())  # the results are the program's library's arrays
    if several_devices():
        key.append(driver.current_device_id())
    return tuple(key)


def _direct_runner(kernel, launch, out_given: bool, first_args):
    """The generated hot path for ``launch`` on the current device."""
    a = launch.analysis
    kinds, dynamic = [], []
    for k, p in enumerate(kernel.params):
        if k in a.scalar_pos:
            kinds.append(("scalar", a.dtypes[k]))
            dynamic.append(_launcher.scalar_slot(k, a.dtypes[k]))
            continue
        if p.is_output and not out_given:
            kinds.append(("alloc", launch.out_alloc[k - kernel.nin]))
        else:
            kinds.append(("array", None))
        dynamic.append((f"p{k}", "Q"))
    outs = [f"a{kernel.nin + j}" for j in range(kernel.nout)]
    if kernel.no_return:
        result = "None"
    elif kernel.nout == 1 and not kernel.return_tuple:
        result = outs[0]
    else:
        result = "(" + ", ".join(outs) + ",)"
    aligned = [k for k, p in enumerate(kernel.params) if not p.raw and k not in a.scalar_pos]
    step = _launcher.Step(launch.fn, launch.grid, launch.block, dynamic,
                          (launch.n_arg, *launch.static))
    return _launcher.make_runner(
        convert=convert_scalar,
        kernel_name=kernel.name,
        device_id=driver.current_device_id(),
        kinds=kinds,
        steps=[step],
        result=result,
        slow=launch.general,
        align_mask=launch.align_mask,
        aligned=aligned,
        first_args=first_args,
        multi_device=several_devices(),
        entry=("size", "block_size", "cluster"),
    )


_SCALAR_TYPES = frozenset((bool, int, float, complex))


class _Launch:
    """Everything decided for one call key: function, grid, packed static arguments."""

    __slots__ = (
        "_arrays",
        "align_mask",
        "analysis",
        "block",
        "fallback",
        "general",
        "fn",
        "grid",
        "kernel",
        "n_arg",
        "out_alloc",
        "scalar_types",
        "slots",
        "static",
        "zero",
    )

    def __init__(self, kernel: ElementwiseKernel, a: _Analysis, arrays, block_size):
        self.kernel = kernel
        self.analysis = a
        kernel._remember(a)
        self.zero = a.size == 0
        self.out_alloc = (
            None
            if a.out_given
            else [
                (a.out_shape if not p.raw else a.shape, a.dtypes[kernel.nin + j])
                for j, p in enumerate(kernel.out_params)
            ]
        )
        self.scalar_types = {k: a.dtypes[k] for k in a.scalar_pos}
        self.fallback = None
        self.general = _general_run(self)
        self.align_mask = 0
        self._arrays = None
        if a.vector > 1:
            widest = max(
                a.dtypes[k].itemsize
                for k in range(len(kernel.params))
                if not kernel.params[k].raw and k not in a.scalar_pos
            )
            self.align_mask = a.vector * widest - 1
            self._arrays = arrays
        if self.zero:
            return
        self.fn = kernel._function(a.source)
        self.block, self.grid = _launch_dims(kernel, a, block_size)
        self.n_arg = numpy.int32(a.size) if a.index_type == "int" else numpy.int64(a.size)
        self.static = _static_args(kernel, a)

    def run(self, args, stream):
        kernel = self.kernel
        nin = kernel.nin
        if self.out_alloc is not None:
            on = stream_of(stream)
            outs = [allocate_like(args, shape, dt, on) for shape, dt in self.out_alloc]
            values = list(args) + outs
        else:
            outs = list(args[nin:])
            values = list(args)
        if self.zero:
            return outs
        packed = []
        scalar_types = self.scalar_types
        params = kernel.params
        for k, v in enumerate(values):
            dt = scalar_types.get(k)
            if dt is None:
                packed.append(_pointer(v))
            elif type(v) is dt.type:
                packed.append(v)
            else:
                packed.append(convert_scalar(v, dt, params[k].name, kernel.name))
        if self.align_mask:
            mask = self.align_mask
            for k, p in enumerate(params):
                if k not in scalar_types and not p.raw and packed[k] & mask:
                    return self._misaligned().finish(packed, outs, stream)
        return self.finish(packed, outs, stream)

    def finish(self, packed, outs, stream):
        packed.append(self.n_arg)
        packed.extend(self.static)
        fn = self.fn
        if several_devices():  # the general path may run on another device than the first
            fn = self.kernel._function(self.analysis.source)
        fn.launch(self.grid, self.block, tuple(packed), 0, stream)
        if fn.watch is not None:
            debug_launched(fn.watch, stream)
        return outs

    def _misaligned(self) -> _Launch:
        if self.fallback is None:
            kernel = self.kernel
            a = self.analysis
            b = _Analysis()
            for slot in _Analysis.__slots__:
                setattr(b, slot, getattr(a, slot))
            b.variant = "strided" if a.variant == "strided_vector" else "linear"
            b.vector = 1
            b.source = kernel._source(b)
            self.fallback = _Launch(kernel, b, self._arrays, self.block[0])
        return self.fallback


def _general_run(launch: _Launch):
    """``run(args, stream)`` of ``launch`` on the general path (no generated code): the
    decided launch, then the kernel's result."""
    result = launch.kernel._result

    def general(call_args, stream):
        return result(launch.run(call_args, stream))

    return general


_pointer = pointer_of
_empty = empty


def _block_size(block_size) -> tuple:
    return block_size_of(block_size, DEFAULT_BLOCK)


def _launch_dims(kernel: ElementwiseKernel, a: _Analysis, block_size) -> tuple:
    """(block, grid): CuPy's exactly where the operation could tell (mapping.py)."""
    if _mapping.per_thread_reason(kernel):
        grid, block = _mapping.cupy_dims(a.size, block_size_of(block_size, _mapping.CUPY_BLOCK)[0])
        return (block, 1, 1), (grid, 1, 1)
    block = _block_size(block_size)
    return block, _grid_size(a, block)


def _grid_size(a: _Analysis, block: tuple) -> tuple:
    """Enough blocks for one pass over the data: each thread handles its vector(s) once.

    A grid of one resident wave that strides over the data reached 95-97% of the copy's
    bandwidth on an H200; covering the data reaches 101-103%, since a finished block's
    place is taken by a new one whose loads are all issued at once (the loop's next loads
    must wait for its stores: they might alias). The grid-stride loop stays, for grids
    over the hardware limit.
    """
    per_thread = a.vector * (_UNROLL if a.variant == "vector" else 1)
    needed = -(-a.size // (block[0] * per_thread))
    return (max(1, min(needed, _MAX_GRID_X)), 1, 1)


def _static_args(kernel: ElementwiseKernel, a: _Analysis) -> tuple:
    """Launch arguments fixed by the layout: shape/strides structs and raw array dims."""
    static = []
    if a.variant == "strided":
        static.append(_cuda.int64_struct(a.shape_c))
        for st in a.strides_c:
            static.append(_cuda.int64_struct(st))
    elif a.variant == "strided_vector":  # the innermost dimension counted in vectors
        v = a.vector
        static.append(_cuda.int64_struct(a.shape_c[:-1] + (a.shape_c[-1] // v,)))
        for st in a.strides_c:
            static.append(_cuda.int64_struct(st[:-1] + (st[-1] * v,)))
    for k in sorted(a.raw_dims):
        shape, strides = a.raw_dims[k]
        static.append(_cuda.dims_struct(shape, strides))
    return tuple(static)


__all__ = ["ElementwiseKernel"]
