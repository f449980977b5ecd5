"""``jitkern.load``: kernels exported ahead of time (toolchain.export), launchable again.

A loaded kernel needs the export's manifest and binary, the driver and a GPU: no NVRTC,
no Python source of the kernel. Launch syntax is the original's:

* every entry: ``k(grid, block, args, shared_mem=0, stream=None)`` and
  ``k[grid, block](*args)`` with the parameters as exported (the JIT's entries take the
  user's arguments: each array is expanded into pointer, shapes and strides per the
  manifest, after checking it has the exported dtype, rank and layout);
  ``k.launch(grid, block, args)`` takes the parameter list as the manifest lists it;
* ElementwiseKernel entries: ``k(*inputs[, *outputs], stream=None)`` like the original,
  for C-contiguous arrays of the same size (the export is of the flat loop); their
  parameters are launched directly with ``k.launch(grid, block, args)``.
"""

from __future__ import annotations

import weakref

import numpy

from .. import records
from ..arrays import describe, empty
from ..layout import fits_int32 as _fits_int32
from ..runtime import driver
from ..toolchain.export import binary_for_device, read_manifest
from .base import Kernel
from ..runtime.graphargs import ArgMap
from ..runtime.module import Function
from ..compiler.strings.c_params import Param
from ..errors import (JitkernAttributeError, JitkernKeyError, JitkernOverflowError,
                      JitkernTypeError, JitkernValueError, KernelArgumentError)

_PY_SCALARS = (bool, int, float, complex)


def load(path) -> ExportedModule:
    """Load an export written by ``kernel.export(path, ...)``.

    ``path`` is the manifest (``k.json``) or the path given to ``export``. Returns an
    :class:`ExportedModule`: ``mod["name"]``, ``mod.get_function("name")`` or
    ``mod.name`` give the kernels. Nothing is compiled; the binary is loaded on a
    device at the first launch there.
    """
    folder, manifest = read_manifest(path)
    return ExportedModule(folder, manifest)


class ExportedModule:
    """The kernels of one export (one binary, loaded once per device)."""

    def __init__(self, folder: str, manifest: dict):
        self.folder = folder
        self.manifest = manifest
        self._binaries: dict[int, object] = {}
        self.kernels = {}
        for entry in manifest["entries"]:  # (their common fields are checked by read_manifest)
            cls = _KINDS.get(entry["kind"], ExportedKernel)
            try:
                self.kernels[entry["name"]] = cls(self, entry)
            except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
                what = f"no {exc}" if isinstance(exc, KeyError) else str(exc)
                raise JitkernValueError(
                    f"path: the export in {folder!r}: the {entry['kind']} kernel "
                    f"{entry['name']!r} has a malformed 'call' ({what}); export it again"
                ) from None

    def binary(self, device_id: int):
        """The binary for ``device_id``, chosen by its compute capability (read once per
        capability: GPUs of one arch share it, and so share their kernels' Functions)."""
        major, minor = driver.compute_capability(device_id)
        cc = major * 10 + minor
        binary = self._binaries.get(cc)
        if binary is None:
            binary = self._binaries[cc] = binary_for_device(self.folder, self.manifest, cc)
        return binary

    def get_function(self, name: str) -> ExportedKernel:
        if not isinstance(name, str):
            raise JitkernTypeError(f"name: expected a str, got {type(name).__name__}")
        try:
            return self.kernels[name]
        except KeyError:
            raise JitkernKeyError(
                f"the export has no kernel {name!r}; it has {sorted(self.kernels)}"
            ) from None

    __getitem__ = get_function

    def __getattr__(self, name: str):
        kernels = self.__dict__.get("kernels", {})
        if name in kernels:
            return kernels[name]
        raise JitkernAttributeError(f"the export has no kernel {name!r}; it has {sorted(kernels)}")

    def __iter__(self):
        return iter(self.kernels)

    def __len__(self) -> int:
        return len(self.kernels)

    def __repr__(self) -> str:
        return (
            f"<jitkern.ExportedModule {sorted(self.kernels)} "
            f"({self.manifest['binary_format']}, {', '.join(self.manifest['archs'])})>"
        )


class ExportedKernel(Kernel):
    """One exported kernel: ``k(grid, block, args, shared_mem=0, stream=None)``.

    No simulator (a loaded binary runs on a GPU whatever the simulate switch says) and no
    memo of builds (nothing is built: the export's binary for each device's compute
    capability is loaded, once per device)."""

    _pickle_hint = "a loaded kernel cannot be pickled; pickle the export's path"
    _kind = "exported"

    def __init__(self, module: ExportedModule, entry: dict):
        self.module = module
        self.entry = entry
        self.name = entry["name"]
        self.symbol = entry["symbol"]
        self.kind = entry["kind"]
        self.signature = entry["signature"]
        self.params = tuple(entry["params"])
        self.cooperative = bool(entry.get("cooperative", False))
        self._checked = _params_for_checks(self.params)
        self._launch = self._call_of_entry()
        self._start(binary_of=module.binary)

    def _call_of_entry(self):
        """The entry's call: the parameter list as the manifest lists it."""
        return self.launch

    def _function_for(self, key, binary) -> Function:
        fn = Function(binary, self.symbol, display_name=self.name, params=self._checked)
        fn.owner, fn.arg_map = weakref.ref(self), ArgMap.for_c(self._checked)  # graph updates
        fn.owners.add(self)
        return fn


    def launch(self, grid, block, args, shared_mem: int = 0, stream=None, cluster=None) -> None:
        """Launch with ``args`` given parameter by parameter, as the manifest lists them
        (``cluster=(x, y, z)``: in thread-block clusters, sm_90+)."""
        _launch(
            self._function(),
            grid,
            block,
            _as_tuple(args, self.name),
            shared_mem,
            stream,
            self.cooperative,
            cluster,
            self.allow_nonportable_cluster_size,
        )

    def _launch_label(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"<jitkern exported {self.kind} kernel {self.name!r}>"


def _launch(fn, grid, block, args, shared_mem, stream, cooperative, cluster,
            nonportable=False) -> None:
    if cluster is None:
        fn.launch(grid, block, args, shared_mem, stream, cooperative)
    else:
        fn.launch_cluster(grid, block, args, shared_mem, stream, cooperative, cluster,
                          nonportable)


def _as_tuple(args, name: str) -> tuple:
    if type(args) is tuple:
        return args
    if isinstance(args, list):
        return tuple(args)
    raise KernelArgumentError(
        f"{name}: args must be a tuple of kernel arguments, got {type(args).__name__}"
    )


def _params_for_checks(params) -> tuple | None:
    """Param records for the launch's pointer/scalar check, when every kind is known."""
    out = []
    for p in params:
        if p["kind"] == "unknown" or p["ctype"] is None:
            return None
        out.append(Param(p["name"], p["ctype"], p["kind"] == "pointer"))
    return tuple(out)


# ---------------------------------------------------------------------------
# JIT entries: the user's arguments, checked and expanded


class ExportedJitKernel(ExportedKernel):
    """A ``@jitkern.rawkernel`` exported for one signature: takes the Python function's
    arguments; arrays are checked against the signature and expanded per the manifest."""

    def __init__(self, module: ExportedModule, entry: dict):
        super().__init__(module, entry)
        self._args = entry["call"]["args"]
        self._extras = [p for p in self.params if p["kind"] in ("shape", "stride")]
        self._records: dict = {}  # struct argument name -> its record dtype

    def _call_of_entry(self):
        return self._call

    def _call(self, grid, block, args, shared_mem: int = 0, stream=None, cluster=None) -> None:
        """The original's launch: the Python function's arguments (``launch`` takes the
        expanded parameter list instead)."""
        args = _as_tuple(args, self.name)
        if len(args) != len(self._args):
            names = ", ".join(a["name"] for a in self._args)
            raise KernelArgumentError(
                f"{self.name}() takes {len(self._args)} arguments ({names}), got {len(args)}"
            )
        values, dims = [], {}
        for i, (value, spec) in enumerate(zip(args, self._args)):
            if spec["type"] == "array":
                dims[i] = self._check_array(value, spec)
                values.append(value)
            elif spec["type"] == "struct":
                values.append(self._struct(value, spec))
            else:
                values.append(self._scalar(value, spec))
        for p in self._extras:
            shape, strides = dims[p["arg"]]
            values.append(
                numpy.int64(shape[p["axis"]] if p["kind"] == "shape" else strides[p["axis"]])
            )
        _launch(
            self._function(),
            grid,
            block,
            tuple(values),
            shared_mem,
            stream,
            self.cooperative,
            cluster,
            self.allow_nonportable_cluster_size,
        )

    def _check_array(self, value, spec) -> tuple:
        what = f"{self.name}() argument {spec['name']!r}"
        if isinstance(value, (*_PY_SCALARS, numpy.generic)):
            raise KernelArgumentError(
                f"{what}: the export takes an array ({spec['describe']}), got a scalar {value!r}"
            )
        info = describe(value)
        dtype = numpy.dtype(info.dtype) if not isinstance(info.dtype, str) else info.dtype
        if str(dtype) != spec["dtype"] or len(info.shape) != spec["ndim"]:
            raise KernelArgumentError(
                f"{what}: the kernel was exported for {spec['describe']}, got a "
                f"{len(info.shape)}-d {dtype} array; export a signature for it"
            )
        if (
            spec["contiguous"]
            and spec["ndim"] == 1
            and not (info.shape[0] <= 1 or info.strides[0] == numpy.dtype(dtype).itemsize)
        ):
            raise KernelArgumentError(
                f"{what}: the kernel was exported for a contiguous array "
                f"({spec['describe']}), got strides {info.strides}"
            )
        if spec["index32"] and not _fits_int32(
            info.shape, info.strides, numpy.dtype(dtype).itemsize
        ):
            raise KernelArgumentError(
                f"{what}: the kernel was exported with 32-bit indices, and "
                "this array spans 2 GiB or more; export it with such an array"
            )
        return info.shape, info.strides

    def _struct(self, value, spec) -> numpy.void:
        """A struct argument as the ``numpy.void`` of the exported record: a record of that
        layout, or a frozen dataclass / NamedTuple laid out the same way."""
        want = self._records.get(spec["name"])
        if want is None:
            want = self._records[spec["name"]] = records.record_from_json(spec["record"])
        cls = type(value)
        if cls is numpy.void:
            have = value.dtype
        elif records.is_record_class(cls):
            have = records.record_dtype(cls)
        else:
            have = None
        if have is None or have != want:
            got = (f"{type(value).__module__}.{type(value).__qualname__}" if have is None
                   else f"a struct laid out as {have}")
            raise KernelArgumentError(
                f"{self.name}() argument {spec['name']!r}: the kernel was exported for "
                f"{spec['describe']} laid out as {want}, got {got}; pass a record of that "
                "layout or export a signature for it")
        try:
            return value if cls is numpy.void else records.as_void(value)
        except (JitkernTypeError, JitkernOverflowError) as exc:  # names the field
            raise type(exc)(f"{self.name}() argument {spec['name']!r}: {exc}") from None

    def _scalar(self, value, spec):
        dtype = numpy.dtype(spec["dtype"])
        if type(value) in _PY_SCALARS:
            return dtype.type(value)
        if isinstance(value, numpy.generic) and value.dtype == dtype:
            return value
        raise KernelArgumentError(
            f"{self.name}() argument {spec['name']!r}: the kernel was exported for {dtype}, got "
            f"{type(value).__module__}.{type(value).__name__}; pass a Python number or "
            f"numpy.{dtype}, or export a signature for it"
        )


# ---------------------------------------------------------------------------
# ElementwiseKernel entries: the original's call, on the flat loop


class ExportedElementwiseKernel(ExportedKernel):
    """An ElementwiseKernel exported for one dtype signature: ``k(*inputs[, *outputs])``."""

    def __init__(self, module: ExportedModule, entry: dict):
        super().__init__(module, entry)
        call = entry["call"]
        self._specs = call["params"]
        self.nin = call["nin"]
        self.nout = len(self._specs) - self.nin
        self._index = numpy.dtype(call["index_dtype"])
        self._block = int(call["block"])
        self._max_size = int(call["max_size"])
        self._return_tuple = bool(call["return_tuple"])
        self._no_return = bool(call["no_return"])
        self._positions = call.get("positions")  # a fused function's: its arguments, in order
        self._nargs = call.get("nargs")
        self._first = call.get("result") == "first"

    def _call_of_entry(self):
        return self._fused_call if self.entry["call"].get("positions") is not None else self._call

    def _fused_call(self, *args, stream=None):
        """A ``jitkern.fuse`` function's call: its arguments, its kernel's result."""
        if len(args) != self._nargs:
            raise KernelArgumentError(
                f"{self.name}: the fused function takes {self._nargs} argument(s), got {len(args)}"
            )
        outs = self._call(*[args[p] for p in self._positions], stream=stream)
        return outs[0] if self._first else outs

    def _call(self, *args, stream=None):
        if len(args) not in (self.nin, self.nin + self.nout):
            raise KernelArgumentError(
                f"{self.name}: takes {self.nin} input(s) and optionally {self.nout} output(s) "
                f"({', '.join(s['name'] for s in self._specs)}); got {len(args)} argument(s)"
            )
        shape = None
        values = []
        for value, spec in zip(args, self._specs):
            if spec["scalar"]:
                values.append(_convert(value, spec, self.name))
                continue
            shape = self._check_array(value, spec, shape)
            values.append(value)
        if shape is None:
            raise KernelArgumentError(f"{self.name}: give at least one array argument")
        n = int(numpy.prod(shape, dtype=numpy.int64))
        if n > self._max_size:
            raise KernelArgumentError(
                f"{self.name}: {n} elements is over the {self._max_size} this export's 32-bit "
                "indices reach; split the call"
            )
        outs = list(args[self.nin :])
        if len(args) == self.nin:
            outs = [empty(shape, spec["dtype"]) for spec in self._specs[self.nin :]]
            values += outs
        if n:
            block = min(self._block, n)  # as CuPy: one thread per element, no idle ones
            grid = max(1, min(-(-n // block), (1 << 31) - 1))
            self._function().launch(
                grid, block, (*values, self._index.type(n)), 0, stream, False
            )
        if self._no_return:
            return None
        return tuple(outs) if self._return_tuple or self.nout != 1 else outs[0]

    def _check_array(self, value, spec, shape):
        what = f"{self.name}: {'output' if spec['is_output'] else 'input'} {spec['name']!r}"
        if isinstance(value, (*_PY_SCALARS, numpy.generic)):
            raise KernelArgumentError(
                f"{what}: expected an array of {spec['dtype']}, got {value!r}"
            )
        info = describe(value)
        if str(info.dtype) != spec["dtype"]:
            raise KernelArgumentError(
                f"{what}: the kernel was exported for {spec['dtype']}, got "
                f"{info.dtype}; export a signature for it"
            )
        if not _c_contiguous(info.shape, info.strides, numpy.dtype(info.dtype).itemsize):
            raise KernelArgumentError(
                f"{what}: an exported elementwise kernel runs the flat "
                "loop: pass C-contiguous arrays"
            )
        if shape is not None and tuple(info.shape) != tuple(shape):
            raise KernelArgumentError(
                f"{what}: shape {tuple(info.shape)} differs from {tuple(shape)}; "
                "an exported elementwise kernel does not broadcast"
            )
        return tuple(info.shape)


def _c_contiguous(shape, strides, itemsize) -> bool:
    expected = itemsize
    for n, s in zip(reversed(shape), reversed(strides)):
        if n > 1 and s != expected:
            return False
        expected *= n
    return True


def _convert(value, spec, name):
    dtype = numpy.dtype(spec["dtype"])
    if type(value) in _PY_SCALARS or (
        isinstance(value, numpy.generic) and numpy.can_cast(value.dtype, dtype, "same_kind")
    ):
        return dtype.type(value)
    raise KernelArgumentError(
        f"{name}: input {spec['name']!r} was exported as {dtype}, got "
        f"{value!r} ({type(value).__name__})"
    )


_KINDS = {"jit": ExportedJitKernel, "elementwise": ExportedElementwiseKernel}

__all__ = ["ExportedKernel", "ExportedModule", "load"]
