"""ReductionKernel: CuPy's reduction string kernels, deterministic, on jitkern's backend.

The input space (broadcast shape of the non-raw inputs) splits into output axes
and reduced axes; each side is collapsed separately. The strategy follows the
collapsed layout:

* ``row``: the reduced axes are innermost (contiguous rows) or nothing better
  applies: a thread (rows of at most 16 elements), a warp (up to 4096) or a block
  per output row, 16-byte vector loads when rows are contiguous and aligned;
* ``col``: the reduced axes are outermost and the output axis is contiguous:
  32 output columns per block, 8 rows of threads walking the reduced axis,
  coalesced loads, a shared-memory tree across the rows;
* either is split over ``gridDim.y`` blocks when there are too few output rows
  to fill the device; ``<name>_final`` then folds the partials (fixed order).

The order of every combination depends on the shape and device only, so two runs
give the same bits.
"""

from __future__ import annotations


import numpy

from ..arrays.core import allocate, allocate_like, stream_of
from ..toolchain import nvrtc as compiler
from ..runtime import args as launch_args, driver
from ..handles import handle_ctype
from ..toolchain.inspection import Inspection
from ..runtime.module import Function, cluster_refused
from ..errors import JitkernTypeError, JitkernValueError, KernelArgumentError
from ..compiler.strings import prelude as _cuda, layout as _layout
from ._reduction_args import (  # noqa: F401 - normalize_axis: fuse's and the tests' name
    _check_shifted_arguments,
    _checked_reduce_type,
    normalize_axis,
)
from .base import (CachedSources, Kernel, debug_flag, debug_launched, debug_options,
                   several_devices, string_signature)
from ..runtime import runner as _launcher
from ..compiler.strings import reduction as _codegen
from .elementwise import (
    _call_key,
    _check_code,
    _names,
    _pointer,
    _rebuild,
    check_kernel_name,
    dtype_names,
)
from ..compiler.strings.params import (
    CTYPES,
    ParamError,
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
_sim_reduction = lazy_import("jitkern.sim.reduction")  # only when simulating

_INT32_LIMIT = 2**31 - 1
_VECTOR_BYTES = 16
_THREAD_ROW_MAX = 16
_WARP_ROW_MAX = 4096
_ROW_BLOCK = 256
_COL_BLOCK_Y = 8
_MIN_PER_THREAD = 16
_BYTE = numpy.dtype(numpy.uint8)  # elements each thread should reduce before a split pays


class _Analysis:
    __slots__ = (
        "axes",
        "block_y",
        "bound",
        "dtypes",
        "final_shape",
        "group",
        "in_ostrides",
        "in_rstrides",
        "in_shape",
        "index_type",
        "keep_shape",
        "keepdims",
        "oshape",
        "out_given",
        "out_nd",
        "out_shape",
        "out_size",
        "out_strides",
        "raw_contig",
        "raw_dims",
        "red_nd",
        "red_size",
        "reduce_type",
        "rshape",
        "scalar_pos",
        "source",
        "strategy",
        "vector",
    )


class ReductionKernel(CachedSources, Kernel):
    """A user-defined reduction kernel, with CuPy's semantics and deterministic results.

    ``ReductionKernel(in_params, out_params, map_expr, reduce_expr, post_map_expr,
    identity, name='reduce_kernel', reduce_type=None, reduce_dims=True, preamble='',
    options=())``

    Each input element is mapped by ``map_expr``, mapped values are combined with
    ``reduce_expr`` (operands ``a`` and ``b``, starting from ``identity``), and
    ``post_map_expr`` writes the outputs from the reduced value ``a``.
    ``k(*inputs, out=None, axis=None, keepdims=False, stream=None)``; with several
    outputs all are returned as a tuple.
    """

    _kind = "reduction"
    _made_again = True  # kernels/made_again.py
    _fresh = ("_runners", "_sources")

    def __init__(
        self,
        in_params,
        out_params,
        map_expr,
        reduce_expr,
        post_map_expr="",
        identity=None,
        name="reduce_kernel",
        reduce_type=None,
        reduce_dims=True,
        preamble="",
        options=(),
        debug=False,
        **kwargs,
    ):
        again = ("made", type(self), in_params, out_params, map_expr, reduce_expr,
                 post_map_expr, identity, name, reduce_type, reduce_dims, preamble, options,
                 debug, identity.__class__, reduce_type.__class__, debug.__class__)
        if not kwargs and self._again(again):  # the same call as before: what it made
            return
        self.name = check_kernel_name(name)
        self.in_params, self.out_params = string_signature(
            "ReductionKernel", self.name, in_params, out_params, kwargs, need_input=True)
        for p in self.out_params:
            if p.raw:
                raise ParamError(
                    f"out_params {out_params!r}: output {p.name!r} cannot be raw in a reduction"
                )
            if p.name in ("a", "b"):
                raise ParamError(
                    f"out_params {out_params!r}: {p.name!r} is the reduced value in "
                    "post_map_expr; give the output another name"
                )
        self.params = self.in_params + self.out_params
        self.nin, self.nout = len(self.in_params), len(self.out_params)
        self.nargs = self.nin + self.nout
        self.map_expr = _check_code(map_expr, "map_expr")
        self.reduce_expr = _check_code(reduce_expr, "reduce_expr")
        # An empty post_map_expr writes the reduced value to every output.
        self.post_map_expr = _check_code(post_map_expr, "post_map_expr") or "; ".join(
            f"{p.name} = a" for p in self.out_params
        )
        _check_shifted_arguments(self, identity, name)
        # CuPy's values: identity None is '' (no identity: the accumulator starts from the
        # first element), reduce_type None is the first output's C type ('T' for a placeholder).
        self.identity = "" if identity is None else str(identity)
        reduce_type = _checked_reduce_type(reduce_type, self.params, preamble, name)
        self.reduce_type = reduce_type or self.out_params[0].ctype
        self.reduce_dims = bool(reduce_dims)
        self.preamble = _check_code(preamble, "preamble")
        self.debug = debug_flag(debug, "ReductionKernel")
        self.options = debug_options(
            self.debug, compiler.normalize_options(options, f"ReductionKernel {self.name!r}"))
        self._runners: dict = {}
        self._guarded = None  # (axis, keepdims, guarded runner) of the last layout
        self._sources: dict = {}
        # self._functions: (source, symbol) -> a Function per device
        self._start(again=None if kwargs else again)

    def __reduce__(self):
        """Pickles as its definition; unpickled, it compiles through the cache."""
        return _rebuild, (type(self), {
            "in_params": _names(self.in_params), "out_params": _names(self.out_params),
            "map_expr": self.map_expr, "reduce_expr": self.reduce_expr,
            "post_map_expr": self.post_map_expr, "identity": self.identity, "name": self.name,
            "reduce_type": self.reduce_type, "reduce_dims": self.reduce_dims,
            "preamble": self.preamble, "options": self.options, "debug": self.debug})

    # -- the call ----------------------------------------------------------------
    # ``k(*args, ...)`` calls the partial's function (see kernels/base.py): this one.
    def _launch(self, *args, out=None, axis=None, keepdims=False, stream=None, cluster=None):
        """Reduce; returns the output (a tuple of all outputs when there are several).
        ``cluster=`` is refused: the kernel sizes its own grid."""
        if cluster is not None:
            raise cluster_refused("ReductionKernel", self.name)
        if out is not None:
            args = args + (out if isinstance(out, tuple) else (out,))
        guarded = self._guarded
        if guarded is not None and keepdims is guarded[1] and (
            axis is guarded[0] or (type(axis) is tuple and axis == guarded[0])
        ):
            result = guarded[2](args, stream)
            if result is not _launcher.MISS:
                return result
        if type(axis) is list:
            axis = tuple(axis)
        key = _call_key(args, axis, keepdims)
        run = self._runners.get(key) if key is not None else None
        if run is None:
            run = self._runner(args, axis, keepdims, key)
        guarded = getattr(run, "guarded", None)
        if guarded is not None:
            self._guarded = (axis, keepdims, guarded)
            made = self.__dict__.get("_made")
            if made is not None:  # its runners are bound to no object: the next one's too
                made.keep(_guarded=self._guarded, _runners=self._runners,
                          _sources=self._sources)
        entry = getattr(run, "entry", None)  # (made for axis=None, keepdims=False only)
        if entry is not None and out is None:
            self._install(entry)  # the next call with this layout goes straight to it
        return run(args, stream)

    def _simulated(self, *args, out=None, axis=None, keepdims=False, stream=None, cluster=None):
        with self._on_simulator(stream, args if out is None else (*args, out)):  # the C, CPU
            return self.simulate(*args, out=out, axis=axis, keepdims=keepdims, stream=stream,
                                 cluster=cluster)

    def _forget_builds(self) -> None:
        self._runners.clear()
        self._guarded = None
        self.__dict__.pop("_sim_kernels", None)  # the simulator's translations

    @property
    def simulate(self):
        """``kernel.simulate(*args, axis=None, keepdims=False)``: the reduction on the CPU
        in jitkern's simulator (docs/debugging.md), with NumPy arrays."""
        return _sim_reduction.ReductionSim(self)

    def _runner(self, args, axis, keepdims, key):
        """The function that runs calls shaped like ``args`` (built once per call key: its
        launch and generated text are kept in the memo of builds, for every object of this
        definition)."""
        def build():
            launch = _Launch(self, self._analyze(args, self._describe_args(args, False), axis,
                                                 keepdims))
            # debug launches stay on the checked path
            # the whole call (run.entry) where the call has the default keywords
            entry = axis is None and keepdims is False
            return launch, (launch.runner(args, entry) if not launch.empty and not self.debug
                            else None)

        if key is None:
            launch, launcher = build()
        else:
            launch, launcher = self._memoized(("runner", key, driver.current_device_id()), "",
                                              build)
        self._remember(launch.a)
        run = (_launcher.bind_runner(launcher, self._launch) if launcher is not None
               else launch.general)
        if key is not None:
            self._runners[key] = run
        return run

    def _definition(self) -> tuple:
        key = self.__dict__.get("_definition_key")
        if key is None:  # (made once: a kernel's definition does not change)
            key = self._definition_key = (
                _names(self.in_params), _names(self.out_params), self.map_expr,
                self.reduce_expr, self.post_map_expr, self.identity, self.name,
                self.reduce_type, self.reduce_dims, self.preamble, self.options, self.debug)
        return key

    def _result(self, outs):
        return outs[0] if self.nout == 1 else tuple(outs)

    def _describe_args(self, args, host_ok: bool) -> list:
        if len(args) not in (self.nin, self.nin + self.nout):
            raise KernelArgumentError(
                f"{self.name}: takes {self.nin} input(s) ({_names(self.in_params)}) and optionally "
                f"{self.nout} output(s) ({_names(self.out_params)}) (or out=); got {len(args)}"
            )
        described = []
        for k, value in enumerate(args):
            p = self.params[k]
            what = f"{self.name}: {'output' if p.is_output else 'input'} {p.name!r}"
            if handle_ctype(type(value)) is not None:
                raise KernelArgumentError(
                    f"{what}: texture memory is not supported in ReductionKernel (as in CuPy); "
                    "read the texture in an ElementwiseKernel or RawKernel instead")
            if launch_args.is_scalar(value):
                if p.is_output:  # a raw input scalar is a scalar, as in CuPy
                    raise KernelArgumentError(f"{what}: expected an array, got a scalar {value!r}")
                described.append(None)
            else:
                described.append(launch_args.describe_array(value, what, host_ok=host_ok))
        return described

    # -- analysis ------------------------------------------------------------------
    def _analyze(self, args, arrays, axis, keepdims) -> _Analysis:
        a = _Analysis()
        nin = self.nin
        a.out_given = len(args) > nin
        in_types = [
            scalar_dtype(v) if arr is None else arr.dtype
            for v, arr in zip(args[:nin], arrays[:nin])
        ]
        a.bound = resolve_placeholders(
            self.in_params,
            self.out_params,
            in_types,
            [arr.dtype for arr in arrays[nin:]],
            [arr is None for arr in arrays[:nin]],
            self.name,
        )
        a.dtypes = tuple(param_dtype(p, a.bound) for p in self.params)
        for dt in a.dtypes:
            ctype_of(dt)
        a.reduce_type = self.reduce_type
        a.scalar_pos = tuple(k for k, arr in enumerate(arrays[:nin]) if arr is None)
        self._decide_shapes(a, arrays, axis, keepdims)
        self._decide_layout(a, arrays)
        self._decide_strategy(a)
        a.source = _codegen.generate(self, a)
        return a

    def _decide_shapes(self, a, arrays, axis, keepdims) -> None:
        mapped = [arr for p, arr in zip(self.in_params, arrays) if arr is not None and not p.raw]
        raws = [arr for p, arr in zip(self.in_params, arrays) if arr is not None and p.raw]
        if mapped:
            a.in_shape = _layout.broadcast_shape([arr.shape for arr in mapped], self.name)
        elif raws:
            raise JitkernValueError(
                f"{self.name}: every input array is raw; the reduction needs at least "
                "one non-raw input array to decide its shape"
            )
        else:
            a.in_shape = ()
        ndim = len(a.in_shape)
        a.axes = normalize_axis(axis, ndim, self.name)
        if raws and a.axes != tuple(range(len(a.axes))):
            raise JitkernValueError(
                f"{self.name}: with raw arguments the reduced axes must lead "
                f"(axis=0, (0, 1), ...); got axis={axis!r}"
            )
        a.out_shape = tuple(s for d, s in enumerate(a.in_shape) if d not in a.axes)
        a.keep_shape = tuple(1 if d in a.axes else s for d, s in enumerate(a.in_shape))
        if not isinstance(keepdims, (bool, numpy.bool_)):
            raise JitkernTypeError(
                f"{self.name}: keepdims must be True or False, got {keepdims!r}"
            )
        a.keepdims = bool(keepdims)
        final = a.final_shape = a.keep_shape if keepdims else a.out_shape
        a.out_size = int(numpy.prod(a.out_shape, dtype=numpy.int64))
        a.red_size = int(numpy.prod([a.in_shape[d] for d in a.axes], dtype=numpy.int64))
        for p, arr in zip(self.out_params, arrays[self.nin :]):
            if arr.shape != final:
                raise JitkernValueError(
                    f"{self.name}: output {p.name!r} has shape {arr.shape}, but the "
                    f"result has shape {final}"
                )
        if a.red_size == 0 and a.out_size > 0 and not self.identity:
            raise JitkernValueError(
                f"{self.name}: zero-size reduction with no identity: the kernel has "
                "no identity value to give the empty reduction"
            )
        a.raw_dims, a.raw_contig = {}, {}
        for k, p in enumerate(self.in_params):
            if p.raw and arrays[k] is not None:
                a.raw_dims[k] = (arrays[k].shape, arrays[k].strides)
                a.raw_contig[k] = arrays[k].c_contiguous

    def _decide_layout(self, a, arrays) -> None:
        out_axes = [d for d in range(len(a.in_shape)) if d not in a.axes]
        in_strides = []
        for k, p in enumerate(self.in_params):
            if p.raw or arrays[k] is None:
                continue
            in_strides.append(
                _layout.broadcast_strides(arrays[k].shape, arrays[k].strides, a.in_shape)
            )
        out_strides = []
        for j in range(self.nout):
            arr = arrays[self.nin + j] if self.nin + j < len(arrays) else None
            isz = a.dtypes[self.nin + j].itemsize
            if arr is None:
                st = _layout.c_strides(a.out_shape, isz)
            elif a.keepdims:  # drop the kept length-1 axes
                st = tuple(arr.strides[d] for d in out_axes)
            else:
                st = arr.strides
            out_strides.append(st)
        oshape = tuple(a.in_shape[d] for d in out_axes)
        rshape = tuple(a.in_shape[d] for d in a.axes)
        keep = not self.reduce_dims
        a.oshape, ost = _layout.collapse(
            oshape, [tuple(st[d] for d in out_axes) for st in in_strides] + out_strides, keep=keep
        )
        a.rshape, rst = _layout.collapse(
            rshape, [tuple(st[d] for d in a.axes) for st in in_strides], keep=keep
        )
        n_in = len(in_strides)
        a.in_ostrides, a.out_strides, a.in_rstrides = ost[:n_in], ost[n_in:], rst
        a.out_nd, a.red_nd = len(a.oshape), len(a.rshape)
        extent = max(
            [
                _layout.max_extent(shape, st)
                for shape, group in (
                    (oshape, [tuple(st[d] for d in out_axes) for st in in_strides]),
                    (rshape, [tuple(st[d] for d in a.axes) for st in in_strides]),
                )
                for st in group
            ]
            + [_layout.max_extent(a.oshape, st) for st in a.out_strides]
            + [0]
        )
        total = a.out_size * max(a.red_size, 1)
        a.index_type = (
            "int"
            if (total + (1 << 26) <= _INT32_LIMIT and 2 * extent <= _INT32_LIMIT)
            else "long long"
        )

    def _decide_strategy(self, a) -> None:
        sizes = [
            a.dtypes[k].itemsize
            for k, p in enumerate(self.in_params)
            if not p.raw and k not in a.scalar_pos
        ]
        inner_red = a.red_nd >= 1 and all(
            st[-1] in (0, isz) for st, isz in zip(a.in_rstrides, sizes)
        )
        inner_out = a.out_nd >= 1 and all(
            st[-1] in (0, isz) for st, isz in zip(a.in_ostrides, sizes)
        )
        a.vector, a.block_y = 1, _COL_BLOCK_Y
        if a.out_size > 1 and not inner_red and inner_out and a.red_size > 1:
            a.strategy, a.group = "col", 32
            return
        a.strategy = "row"
        if a.out_size == 1 or a.red_size > _WARP_ROW_MAX:
            a.group = 0  # the whole block
        elif a.red_size > _THREAD_ROW_MAX:
            a.group = 32
        else:
            a.group = 1
        if a.group != 1 and sizes and a.red_nd >= 1 and all(
            st[-1] == isz for st, isz in zip(a.in_rstrides, sizes)
        ):
            v = _VECTOR_BYTES // max(sizes)
            # Several reduced dimensions (axis=(0, 2)): vectors along the innermost one,
            # which must hold whole vectors, every other step keeping them aligned.
            if v >= 2 and (
                a.red_nd == 1
                or (
                    a.rshape[-1] % v == 0
                    and all(
                        x % (v * isz) == 0
                        for st, isz in zip(a.in_rstrides, sizes)
                        for x in st[:-1]
                    )
                )
            ):
                a.vector = v

    # -- introspection ----------------------------------------------------------------
    def _remember(self, a) -> None:
        key = (
            dtype_names(a.dtypes),
            a.strategy,
            a.group,
            a.vector,
            a.out_nd,
            a.red_nd,
            a.index_type,
        )
        self._sources[key] = a.source

    def _function(self, source: str, symbol: str) -> Function:
        """``symbol`` of ``source`` for the current device (built for its arch, loaded there)."""
        return super()._function((source, symbol))

    def inspect(self, *args, arch=None, axis=None, keepdims=False, out=None) -> Inspection:
        """Source, CUBIN and resources of the main kernel ``self(*args, axis=...)`` would run.

        NumPy arrays stand for device arrays; with ``arch`` no GPU is needed.
        """
        if out is not None:
            args = args + (out if isinstance(out, tuple) else (out,))
        arrays = self._describe_args(args, host_ok=True)
        a = self._analyze(args, arrays, axis, keepdims)
        return self._inspect_analysis(a, arch)


    def export(self, path, *args_or_dtypes, axis=None, keepdims=False, arch=("sm_80", "sm_90"),
               format="fatbin"):
        """Write the kernels ``self(*args, axis=...)`` would run for these example arguments
        (NumPy arrays stand for device arrays; a dtype for a 1-D array) for ``arch`` as
        ``format``, with a header and a manifest (docs/export.md)."""
        export.check_format(format)
        return export.write(path, _export_kinds.reduction_spec(self, args_or_dtypes, axis, keepdims),
                            arch, format)


class _Launch:
    """A reduction call decided once: functions, grid, static arguments, temp buffer size."""

    def __init__(self, kernel: ReductionKernel, a: _Analysis):
        self.kernel, self.a = kernel, a
        kernel._remember(a)
        self.empty = a.out_size == 0
        if self.empty:
            return
        self.fn = kernel._function(a.source, kernel.name)
        self.final = None
        self._configure()
        self.scalar_types = {k: a.dtypes[k] for k in a.scalar_pos}
        self.vector_mask = 0
        if a.vector > 1:
            widest = max(
                a.dtypes[k].itemsize
                for k, p in enumerate(kernel.in_params)
                if not p.raw and k not in a.scalar_pos
            )
            self.vector_mask = a.vector * widest - 1
            self.fallback = None

    def _configure(self) -> None:
        a = self.a
        device_id = driver.current_device_id()
        red = max(a.red_size, 1)
        if a.strategy == "col":
            self.block = (32, a.block_y, 1)
            gx = -(-a.out_size // 32)
            max_split = max(1, red // (a.block_y * _MIN_PER_THREAD))
            target = self._resident_blocks(device_id)
            splits = max(1, min(target // gx, max_split, 65535))
        else:
            if a.group == 0:
                self.block = (_ROW_BLOCK, 1, 1)
                gx = a.out_size
            elif a.group == 32:
                self.block = (_ROW_BLOCK, 1, 1)
                gx = -(-a.out_size // (_ROW_BLOCK // 32))
            else:
                self.block = (_ROW_BLOCK, 1, 1)
                gx = -(-a.out_size // _ROW_BLOCK)
            per_row = self.block[0] if a.group == 0 else max(a.group, 1)
            max_split = max(1, red // (per_row * _MIN_PER_THREAD * max(a.vector, 1)))
            target = self._resident_blocks(device_id)
            # Whole waves: a split grid of one resident wave (a full reduction: exactly
            # the blocks the device holds at once) leaves no partial last wave.
            splits = max(1, min(round(target / gx) if gx < target else 1, max_split, 65535))
        chunk = -(-red // splits)
        if a.vector > 1:
            chunk = -(-chunk // a.vector) * a.vector
        splits = -(-red // chunk)
        self.grid = (gx, splits, 1)
        self.splits = splits
        it = numpy.int32 if a.index_type == "int" else numpy.int64
        self.sizes = (it(a.out_size), it(a.red_size), it(chunk))
        self.static = self._static()
        if splits > 1:
            self.final = self.kernel._function(a.source, self.kernel.name + "_final")
            self.final_grid = (-(-a.out_size // 8), 1, 1)
            self.partial_bytes = self._acc_size() * a.out_size * splits

    def _resident_blocks(self, device_id: int) -> int:
        """Blocks of the main kernel the device runs at once (its occupancy x SMs)."""
        sms = driver.device_attribute(device_id, "multiprocessor_count")
        threads = self.block[0] * self.block[1]
        try:
            per_sm = self.fn.occupancy_max_active_blocks(threads, 0, device_id)
        except Exception:  # noqa: BLE001 - an estimate is enough here
            per_sm = 0
        return sms * (per_sm if per_sm > 0 else max(1, 2048 // threads))

    def _acc_size(self) -> int:
        a = self.a
        # sizeof(_jk_acc): the reduce type, plus an int flag when there is no identity.
        rt = a.reduce_type
        size = _reduce_type_size(rt, a)
        if not self.kernel.identity:
            size = (-(-size // 4) * 4) + 4
            align = max(4, min(size, 16))
            size = -(-size // align) * align
        return max(size, 16) * 2  # generous: user-defined reduce types may be padded

    def _static(self) -> tuple:
        a = self.a
        rshape, rstrides = a.rshape, a.in_rstrides
        if a.vector > 1 and a.red_nd > 1:  # the reduced space counted in vectors
            v = a.vector
            rshape = rshape[:-1] + (rshape[-1] // v,)
            rstrides = [r[:-1] + (r[-1] * v,) for r in rstrides]
        st = [_cuda.int64_struct(a.oshape), _cuda.int64_struct(rshape)]
        for o, r in zip(a.in_ostrides, rstrides):
            st += [_cuda.int64_struct(o), _cuda.int64_struct(r)]
        st += [_cuda.int64_struct(s) for s in a.out_strides]
        for k in sorted(a.raw_dims):
            st.append(_cuda.dims_struct(*a.raw_dims[k]))
        return tuple(st)

    def run(self, args, stream):
        kernel, a = self.kernel, self.a
        nin = kernel.nin
        if len(args) > nin:
            outs = list(args[nin:])
        else:
            on = stream_of(stream)
            outs = [
                allocate_like(args, a.final_shape, a.dtypes[nin + j], on)
                for j in range(kernel.nout)
            ]
        if self.empty:
            return outs
        packed = []
        for k in range(nin):
            v = args[k]
            dt = self.scalar_types.get(k)
            if dt is None:
                packed.append(_pointer(v))
            elif type(v) is dt.type:
                packed.append(v)
            else:
                packed.append(convert_scalar(v, dt, kernel.in_params[k].name, kernel.name))
        out_ptrs = [_pointer(o) for o in outs]
        if self.vector_mask and self._misaligned(packed):
            return self._fallback().launch_with(packed, out_ptrs, outs, stream)
        return self.launch_with(packed, out_ptrs, outs, stream)

    def general(self, call_args, stream):
        """The call on the general path (no generated code): this launch, then the result."""
        return self.kernel._result(self.run(call_args, stream))

    def runner(self, first_args, entry: bool = False):
        """The generated hot path of this call layout on the current device (a Launcher);
        with ``entry``, also the kernel object's whole call for it (``run.entry``: a call
        with other keywords than the defaults goes to the general path)."""
        if self.vector_mask and any(x & self.vector_mask for st in self.a.in_ostrides for x in st):
            return self._fallback().runner(first_args, entry)  # misaligned by layout
        kernel, a = self.kernel, self.a
        nin = kernel.nin
        out_given = len(first_args) > nin
        kinds, dynamic = [], []
        for k in range(nin):
            if k in a.scalar_pos:
                kinds.append(("scalar", a.dtypes[k]))
                dynamic.append(_launcher.scalar_slot(k, a.dtypes[k]))
            else:
                kinds.append(("array", None))
                dynamic.append((f"p{k}", "Q"))
        for j in range(kernel.nout):
            dt = a.dtypes[nin + j]
            kinds.append(("array", None) if out_given else ("alloc", (a.final_shape, dt)))
        out_slots = [(f"p{nin + j}", "Q") for j in range(kernel.nout)]
        split = self.splits > 1
        main = _launcher.Step(
            self.fn,
            self.grid,
            self.block,
            dynamic + out_slots + [("q0" if split else "0", "Q")],
            (*self.sizes, *self.static),
        )
        steps = [main]
        if split:
            n_in = len(a.in_ostrides)
            out_structs = self.static[2 + 2 * n_in : 2 + 2 * n_in + kernel.nout]
            steps.append(
                _launcher.Step(
                    self.final,
                    self.final_grid,
                    (256, 1, 1),
                    [("q0", "Q")] + out_slots
                    + [_launcher.scalar_slot(k, a.dtypes[k]) for k in sorted(a.scalar_pos)],
                    (self.sizes[0], numpy.int32(self.splits), self.static[0], *out_structs),
                )
            )
        outs = [f"a{nin + j}" for j in range(kernel.nout)]
        result = outs[0] if kernel.nout == 1 else "(" + ", ".join(outs) + ",)"
        aligned = [
            k for k, p in enumerate(kernel.in_params) if not p.raw and k not in a.scalar_pos
        ]
        return _launcher.make_runner(
            convert=convert_scalar,
            kernel_name=kernel.name,
            device_id=driver.current_device_id(),
            kinds=kinds,
            steps=steps,
            result=result,
            slow=self.general,
            temps=(self.partial_bytes,) if split else (),
            align_mask=self.vector_mask,
            aligned=aligned if self.vector_mask else (),
            first_args=first_args,
            multi_device=several_devices(),
            entry={"out": None, "axis": None, "keepdims": False, "cluster": None}
            if entry else None,
        )

    def _misaligned(self, packed) -> bool:
        kernel, a, mask = self.kernel, self.a, self.vector_mask
        for k, p in enumerate(kernel.in_params):
            if not p.raw and k not in a.scalar_pos and packed[k] & mask:
                return True
        return any(x & mask for st in a.in_ostrides for x in st)

    def _fallback(self) -> _Launch:
        if self.fallback is None:
            b = _Analysis()
            for slot in _Analysis.__slots__:
                setattr(b, slot, getattr(self.a, slot))
            b.vector = 1
            b.source = _codegen.generate(self.kernel, b)
            self.fallback = _Launch(self.kernel, b)
        return self.fallback

    def launch_with(self, packed, out_ptrs, outs, stream):
        partial, partial_ptr = None, 0
        if self.splits > 1:
            partial = allocate((self.partial_bytes,), _BYTE, stream=stream_of(stream))
            partial_ptr = _pointer(partial)
        args = (*packed, *out_ptrs, partial_ptr, *self.sizes, *self.static)
        fn, final = self.fn, self.final
        if several_devices():  # the general path may run on another device than the first
            fn = self.kernel._function(self.a.source, self.kernel.name)
            if final is not None:
                final = self.kernel._function(self.a.source, self.kernel.name + "_final")
        fn.launch(self.grid, self.block, args, 0, stream)
        if partial is not None:
            fargs = (
                partial_ptr,
                *out_ptrs,
                *(packed[k] for k in sorted(self.a.scalar_pos)),  # post_map_expr's
                self.sizes[0],
                numpy.int32(self.splits),
                self.static[0],
                *self.static[
                    2 + 2 * len(self.a.in_ostrides) : 2
                    + 2 * len(self.a.in_ostrides)
                    + self.kernel.nout
                ],
            )
            final.launch(self.final_grid, (256, 1, 1), fargs, 0, stream)
        if fn.watch is not None:  # a debug build
            debug_launched(fn.watch, stream)
        return outs


def _reduce_type_size(rt: str, a) -> int:
    for dt, ct in ((d, ctype_of(d)) for d in set(a.dtypes)):
        if rt == ct:
            return dt.itemsize
    for letter, dt in a.bound.items():
        if rt == letter:
            return dt.itemsize
    by_name = {ct: numpy.dtype(dt).itemsize for dt, ct in CTYPES.items()}
    return by_name.get(rt, 64)


__all__ = ["ReductionKernel", "normalize_axis"]
