"""``jitkern.ndarray``: a strided view of device memory.

An array is a handful of slots: shape, byte strides, dtype, the address of its
first element, the :class:`~jitkern.runtime.memory.MemoryPointer` that keeps the
allocation alive, the array it views (``base``), its device and the stream its
data was last written on. Construction does no validation beyond what the
caller has not already done, so ``jitkern.empty`` in a loop costs a few
microseconds.

Stream order: every operation runs on the current stream (or ``stream=``). When
that differs from the stream the array was last written on, the operation's
stream first waits for that one (an event), so arrays made on one stream can
be read on another without a manual synchronization.
"""

from __future__ import annotations

import numbers
import operator
import weakref

import numpy

from ..runtime import driver, memory
from ..runtime.device import Device, Stream, get_current_stream, stream_handle
from ..runtime.driver import check, drv
from ..runtime.args import register_arrays
from ..errors import JitkernBufferError, JitkernTypeError, JitkernValueError
from .. import dtypes, layout
from . import _dlpack, _kernels, interop
from ..runtime.context import LEGACY, PER_THREAD, current_device_id, on_device, order_after
from .operators import ArrayOperators

_new = object.__new__

# Gaps between the elements of a strided view that a host read may copy along
# with them (beyond this, the view is gathered on the device first).
_SPAN_SLACK = 4
_SPAN_SMALL = 1 << 16


class DevicePointer:
    """``ndarray.data``: the address of an array's first element (``ptr``) and the
    allocation it lies in (``mem``)."""

    __slots__ = ("mem", "ptr")

    def __init__(self, ptr: int, mem):
        self.ptr = ptr
        self.mem = mem

    @property
    def device_id(self) -> int:
        return self.mem.device_id

    def __int__(self) -> int:
        return self.ptr

    def __repr__(self) -> str:
        return f"<jitkern.DevicePointer 0x{self.ptr:x} in {self.mem!r}>"


_FLAG_KEYS = {"C_CONTIGUOUS": "c_contiguous", "C": "c_contiguous", "F_CONTIGUOUS": "f_contiguous",
              "F": "f_contiguous", "OWNDATA": "owndata"}


class Flags:
    """Contiguity and ownership flags of an array (NumPy's ``flags`` subset)."""

    __slots__ = ("c_contiguous", "f_contiguous", "owndata")

    def __init__(self, c: bool, f: bool, own: bool):
        self.c_contiguous, self.f_contiguous, self.owndata = c, f, own

    def __getitem__(self, key: str) -> bool:
        return getattr(self, _FLAG_KEYS[key.upper()])

    def __repr__(self) -> str:
        return (f"  C_CONTIGUOUS : {self.c_contiguous}\n  F_CONTIGUOUS : {self.f_contiguous}\n"
                f"  OWNDATA : {self.owndata}")


def make(shape, strides, dtype, ptr, mem, base, device_id, stream, size) -> ndarray:
    """An ndarray from trusted parts (no checks: the allocation hot path)."""
    a = _new(ndarray)
    a._shape = shape
    a._strides = strides
    a._dtype = dtype
    a._ptr = ptr
    a._mem = mem
    a._base = base
    a._device_id = device_id
    a._stream = stream
    a._size = size
    return a


def stream_of(stream) -> Stream:
    """The :class:`Stream` an operation runs on: ``stream=`` as given, else the current one."""
    if stream is None:
        return get_current_stream()
    if isinstance(stream, Stream):
        return stream
    return Stream.from_external(stream)


# A free is ordered on the stream the memory was allocated on, so that stream's
# handle has to stay valid until the free: each allocation on a stream other than
# the legacy default one holds its Stream object until the MemoryPointer is gone
# (weakref callbacks run after MemoryPointer.__del__ has queued the free).
_pins: set = set()


def pin_stream(mem, stream: Stream) -> None:
    _pins.add(weakref.ref(mem, lambda ref, _stream=stream: _pins.discard(ref)))


_MAX_BYTES = 2**63 - 1  # the largest size a CUDA allocation (a signed 64-bit offset) can have


def allocate(shape: tuple, dtype: numpy.dtype, order: str = "C", device_id: int | None = None,
             stream: Stream | None = None) -> ndarray:
    """A new uninitialised array (``shape`` and ``dtype`` already normalised)."""
    size = layout.size_of(shape)
    itemsize = dtype.itemsize
    if size * itemsize > _MAX_BYTES:
        raise JitkernValueError(
            f"shape {shape}: {size} elements of {dtype.name} ({itemsize} bytes each) need "
            f"{size * itemsize} bytes, more than any device can address (at most 2**63 - 1 bytes)"
        )
    if device_id is None:
        device_id = current_device_id()
    if stream is None:
        stream = get_current_stream()
    mem = memory.malloc(size * itemsize, device_id, stream.ptr)
    if stream.ptr:
        pin_stream(mem, stream)
    if order == "F":
        strides = layout.f_strides(shape, itemsize)
    else:
        strides = layout.c_strides(shape, itemsize)
    return make(shape, strides, dtype, mem.ptr, mem, None, device_id, stream, size)


def allocate_like(args, shape: tuple, dtype: numpy.dtype, stream: Stream):
    """A kernel's new output in the library of its array ``args`` (the general path of
    what the generated launchers inline): CuPy's or PyTorch's allocator for their arrays
    (interop.new_result), else :func:`allocate`."""
    results = interop.new_result(args)
    lib_dtype = results.dtype(dtype) if results is not None else None
    if lib_dtype is None:
        return allocate(shape, dtype, stream=stream)
    return results.new(shape, lib_dtype, stream, current_device_id())


def from_info(info: interop.ArrayInfo) -> ndarray:
    """An ndarray viewing a foreign GPU array (no copy; keeps ``info.owner`` alive)."""
    dtype = info.dtype
    if isinstance(dtype, str):
        raise JitkernTypeError(f"dtype {dtype} needs the ml_dtypes package to be used by jitkern")
    dtypes.check_supported(dtype)
    lo, hi = layout.span(info.shape, info.strides, dtype.itemsize)
    stream = get_current_stream()
    mem = memory.MemoryPointer(info.ptr + lo, hi - lo, info.device_id, stream.ptr,
                               owner=info.owner)
    return make(tuple(info.shape), tuple(info.strides), dtype, info.ptr, mem, info.owner,
                info.device_id, stream, layout.size_of(info.shape))


def _is_scalar(value) -> bool:
    return isinstance(value, (numbers.Number, numpy.generic, bool)) or (
        isinstance(value, numpy.ndarray) and value.ndim == 0)


class ndarray(ArrayOperators):
    """An N-dimensional array in GPU memory (NumPy/CuPy-like, basic indexing only).

    ``ndarray(shape, dtype=float, memptr=None, strides=None, order='C')`` allocates on
    the current device, or views ``memptr`` (a ``data`` pointer of another array, or
    a :class:`~jitkern.runtime.memory.MemoryPointer`) when given. Use
    :func:`jitkern.empty`, :func:`jitkern.asarray` and friends in normal code.
    """

    __slots__ = (
        "__weakref__",
        "_base",
        "_device_id",
        "_dtype",
        "_mem",
        "_ptr",
        "_shape",
        "_size",
        "_stream",
        "_strides",
    )
    #: read as the "jitkern" row of runtime/libraries.py's table (through the slots above)
    __jitkern_array__ = True

    def __init__(self, shape, dtype=float, memptr=None, strides=None, order="C"):
        shape = layout.normalize_shape(shape)
        dt = dtypes.normalize(dtype)
        if order not in ("C", "F"):
            raise JitkernValueError(f"order: expected 'C' or 'F', got {order!r}")
        if memptr is None:
            src = allocate(shape, dt, order)
            memptr = DevicePointer(src._ptr, src._mem)
        mem = getattr(memptr, "mem", memptr)
        if strides is None:
            strides = (layout.f_strides if order == "F" else layout.c_strides)(shape, dt.itemsize)
        self._shape = shape
        self._strides = tuple(int(s) for s in strides)
        self._dtype = dt
        self._ptr = int(memptr.ptr)
        self._mem = mem
        self._base = None
        self._device_id = mem.device_id
        self._stream = get_current_stream()
        self._size = layout.size_of(shape)

    # -- attributes -------------------------------------------------------
    @property
    def shape(self) -> tuple:
        return self._shape

    @property
    def strides(self) -> tuple:
        """Bytes to step in each dimension."""
        return self._strides

    @property
    def dtype(self) -> numpy.dtype:
        return self._dtype

    @property
    def size(self) -> int:
        return self._size

    @property
    def ndim(self) -> int:
        return len(self._shape)

    @property
    def itemsize(self) -> int:
        return self._dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self._size * self._dtype.itemsize

    @property
    def data(self) -> DevicePointer:
        """The first element's address (``data.ptr``) and its allocation (``data.mem``)."""
        return DevicePointer(self._ptr, self._mem)

    @property
    def ptr(self) -> int:
        """The device address of the first element (same as ``data.ptr``)."""
        return self._ptr

    @property
    def base(self):
        """The array (or foreign object) whose memory this one views; None if it owns it."""
        return self._base

    @property
    def device(self) -> Device:
        return Device(self._device_id)

    @property
    def stream(self) -> int:
        """Handle of the stream this array's data was last written on by jitkern."""
        return self._stream.ptr

    @property
    def flags(self) -> Flags:
        isz = self._dtype.itemsize
        return Flags(layout.is_c_contiguous(self._shape, self._strides, isz),
                     layout.is_f_contiguous(self._shape, self._strides, isz), self._base is None)

    def _c_contiguous(self) -> bool:
        return layout.is_c_contiguous(self._shape, self._strides, self._dtype.itemsize)

    def _f_contiguous(self) -> bool:
        return layout.is_f_contiguous(self._shape, self._strides, self._dtype.itemsize)

    @property
    def T(self) -> ndarray:
        return self.transpose()

    def __len__(self) -> int:
        if not self._shape:
            raise JitkernTypeError("len() of unsized object")
        return self._shape[0]

    def __iter__(self):
        if not self._shape:
            raise JitkernTypeError("iteration over a 0-d array")
        return (self[i] for i in range(self._shape[0]))

    # -- views ------------------------------------------------------------
    def _view(self, shape, strides, offset: int = 0) -> ndarray:
        return make(shape, strides, self._dtype, self._ptr + offset, self._mem,
                    self._base if self._base is not None else self, self._device_id,
                    self._stream, layout.size_of(shape))

    def __getitem__(self, key) -> ndarray:
        shape, strides, offset = layout.index(self._shape, self._strides, key)
        return self._view(shape, strides, offset)

    def view(self, dtype=None) -> ndarray:
        """A view of the same memory (with another dtype of the same item size)."""
        if dtype is None:
            return self._view(self._shape, self._strides)
        dt = dtypes.normalize(dtype)
        if dt.itemsize != self._dtype.itemsize:
            raise JitkernValueError("view(dtype) needs a dtype of the same item size "
                             f"({self._dtype} is {self._dtype.itemsize} bytes, {dt} is {dt.itemsize})")
        out = self._view(self._shape, self._strides)
        out._dtype = dt
        return out

    def transpose(self, *axes) -> ndarray:
        perm = layout.transpose_axes(len(self._shape), axes)
        return self._view(tuple(self._shape[i] for i in perm), tuple(self._strides[i] for i in perm))

    def swapaxes(self, axis1: int, axis2: int) -> ndarray:
        ndim = len(self._shape)
        axis1 = layout.normalize_axis(axis1, ndim, "axis1")
        axis2 = layout.normalize_axis(axis2, ndim, "axis2")
        perm = list(range(ndim))
        perm[axis1], perm[axis2] = perm[axis2], perm[axis1]
        return self.transpose(*perm)

    def reshape(self, *shape, order: str = "C") -> ndarray:
        """A view with a new shape where the layout allows one, else a copy (as NumPy)."""
        if len(shape) == 1 and not isinstance(shape[0], (int, numpy.integer)):
            shape = tuple(shape[0])
        newshape = layout.resolve_shape(self._size, shape)
        if order == "F":
            return self.transpose().reshape(newshape[::-1]).transpose()
        if order != "C":
            raise JitkernValueError(f"order: expected 'C' or 'F', got {order!r}")
        strides = layout.reshape_strides(self._shape, self._strides, self._dtype.itemsize,
                                         newshape)
        if strides is None:
            return self.copy().reshape(newshape)
        return self._view(newshape, strides)

    def ravel(self, order: str = "C") -> ndarray:
        """A 1-D view when the array is contiguous in ``order``, else a 1-D copy (as NumPy)."""
        return self.reshape((self._size,), order=order)

    def flatten(self, order: str = "C") -> ndarray:
        """A 1-D copy."""
        return self.copy(order=order).reshape((self._size,), order=order)

    def squeeze(self, axis=None) -> ndarray:
        ndim = len(self._shape)
        if axis is None:
            keep = [i for i, n in enumerate(self._shape) if n != 1]
        else:
            axes = {layout.normalize_axis(a, ndim)
                    for a in (axis if isinstance(axis, (tuple, list)) else (axis,))}
            if any(self._shape[a] != 1 for a in axes):
                raise JitkernValueError("cannot select an axis to squeeze out which has size not equal to one")
            keep = [i for i in range(ndim) if i not in axes]
        return self._view(tuple(self._shape[i] for i in keep), tuple(self._strides[i] for i in keep))

    @property
    def real(self) -> ndarray:
        if self._dtype.kind != "c":
            return self
        out = self._view(self._shape, self._strides)
        out._dtype = numpy.dtype(f"f{self._dtype.itemsize // 2}")
        return out

    @property
    def imag(self) -> ndarray:
        if self._dtype.kind != "c":
            raise JitkernTypeError("imag of a real array is not a view; use jitkern.zeros_like(a)")
        half = self._dtype.itemsize // 2
        out = self._view(self._shape, self._strides, half)
        out._dtype = numpy.dtype(f"f{half}")
        return out

    # -- host transfers ---------------------------------------------------
    def get(self, stream=None, order: str = "C") -> numpy.ndarray:
        """A NumPy copy of the array (waits for the copy to finish)."""
        host = numpy.empty(self._shape, self._dtype, order=order)
        if not self._size:
            return host
        st = stream_of(stream)
        s = st.ptr
        with on_device(self._device_id):
            order_after(s, self._stream.ptr, self._device_id)
            if (order == "C" and self._c_contiguous()) or (order == "F" and self._f_contiguous()):
                memory.memcpy_dtoh(_flat(host), self._ptr, self.nbytes, s)
            elif self._span_is_small():
                host[...] = self._read_span(s)
            else:
                dense = self.copy(order=order, stream=st)
                memory.memcpy_dtoh(_flat(host), dense._ptr, self.nbytes, s)
        return host

    def _span_is_small(self) -> bool:
        lo, hi = layout.span(self._shape, self._strides, self._dtype.itemsize)
        return hi - lo <= _SPAN_SLACK * self.nbytes + _SPAN_SMALL

    def _read_span(self, s: int) -> numpy.ndarray:
        """The bytes the view touches, copied whole, seen on the host with the view's strides."""
        lo, hi = layout.span(self._shape, self._strides, self._dtype.itemsize)
        buf = numpy.empty(hi - lo, numpy.uint8)
        memory.memcpy_dtoh(buf, self._ptr + lo, hi - lo, s)
        return numpy.ndarray(self._shape, self._dtype, buffer=buf, offset=-lo,
                             strides=self._strides)

    def set(self, arr, stream=None) -> None:
        """Copy host data into this array (same shape; cast to this dtype as NumPy does)."""
        host = numpy.asarray(arr)
        if host.shape != self._shape:
            raise JitkernValueError(f"set: shape mismatch, array is {self._shape}, data is {host.shape}")
        self._upload(host, stream_of(stream))

    def _upload(self, host: numpy.ndarray, st: Stream) -> None:
        """Write host data of this array's shape (cast to this dtype as NumPy does)."""
        if not self._size:
            return
        s = st.ptr
        with on_device(self._device_id):
            dense = "C" if self._c_contiguous() else ("F" if self._f_contiguous() else None)
            if dense is not None:
                host = numpy.asarray(host, dtype=self._dtype, order=dense)
                order_after(s, self._stream.ptr, self._device_id)
                memory.memcpy_htod(self._ptr, _flat(host), self.nbytes, s)
                self._stream = st
                return
            tmp = allocate(self._shape, self._dtype, stream=st)
            tmp._upload(host, st)
            _copy_into(self, tmp, st)

    def __array__(self, dtype=None, copy=None):
        if copy is False:
            raise JitkernValueError("a jitkern.ndarray lives on the GPU; NumPy needs a copy "
                             "(use .get() or numpy.asarray(a))")
        host = self.get()
        return host if dtype is None else host.astype(dtype, copy=False)

    def tolist(self):
        return self.get().tolist()

    def item(self):
        if self._size != 1:
            raise JitkernValueError("can only convert an array of size 1 to a Python scalar")
        return self.get().item()

    def __bool__(self) -> bool:
        if self._size != 1:
            raise JitkernValueError("The truth value of an array with more than one element is "
                             "ambiguous. Use a.any() or a.all() on the host")
        return bool(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __float__(self) -> float:
        return float(self.item())

    def __complex__(self) -> complex:
        return complex(self.item())

    def __index__(self) -> int:
        if self._shape or self._dtype.kind not in "iu":
            raise JitkernTypeError("only integer scalar arrays can be converted to a scalar index")
        return operator.index(self.item())

    def __repr__(self) -> str:
        return repr(self.get())

    def __str__(self) -> str:
        return str(self.get())

    # -- device copies ----------------------------------------------------
    def copy(self, order: str = "C", stream=None) -> ndarray:
        """A new array with the same contents (C order unless ``order='F'``/``'K'``)."""
        st = stream_of(stream)
        with on_device(self._device_id):
            out = allocate(self._shape, self._dtype, _resolve_order(self, order),
                           self._device_id, st)
            _copy_into(out, self, st)
        return out

    def astype(self, dtype, order: str = "K", casting=None, copy: bool = True,
               stream=None) -> ndarray:
        """This array converted to ``dtype`` (as NumPy's unsafe casts; complex to real keeps
        the real part). Returns ``self`` when nothing changes and ``copy=False``.
        ``casting`` is accepted for NumPy compatibility and not checked."""
        dt = dtypes.normalize(dtype)
        if dt == self._dtype and not copy:
            return self
        st = stream_of(stream)
        with on_device(self._device_id):
            out = allocate(self._shape, dt, _resolve_order(self, order), self._device_id, st)
            _copy_into(out, self, st)
        return out

    def fill(self, value, stream=None) -> None:
        """Set every element to ``value`` (cast to this dtype as NumPy does)."""
        raw = numpy.asarray(value, dtype=self._dtype).tobytes()
        st = stream_of(stream)
        s = st.ptr
        if self._size:
            with on_device(self._device_id):
                order_after(s, self._stream.ptr, self._device_id)
                _fill(self, raw, s)
                self._stream = st

    def __setitem__(self, key, value) -> None:
        target = self if key is Ellipsis else self[key]
        if _is_scalar(value):
            target.fill(value)
            return
        st = get_current_stream()
        if isinstance(value, ndarray):
            src = value
        elif _on_gpu(value):
            src = from_info(interop.describe(value))
        else:
            target._upload(_host_value(value, target), st)
            return
        shape = target._shape
        strides = layout.broadcast_strides(src._shape, src._strides, shape)
        with on_device(target._device_id):
            _copy_into(target, src._view(shape, strides), st)

    # -- interop ----------------------------------------------------------
    @property
    def __cuda_array_interface__(self) -> dict:
        if self._dtype.kind == "V" and self._dtype.fields is None:  # bfloat16, float8: no typestr
            raise JitkernTypeError(f"{self._dtype.name} has no __cuda_array_interface__ typestr; "
                            "share it through DLPack (__dlpack__) instead")
        typestr = self._dtype.str
        stream = self._stream.ptr
        return {
            "shape": self._shape,
            "typestr": typestr,
            "descr": self._dtype.descr if self._dtype.fields is not None else [("", typestr)],
            "data": (self._ptr if self._size else 0, False),
            "strides": None if self._c_contiguous() else self._strides,
            "version": 3,
            "stream": LEGACY if stream == 0 else stream,
        }

    def __dlpack_device__(self) -> tuple[int, int]:
        return (_dlpack.KDL_CUDA, self._device_id)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule of this array (array API standard, DLPack 1.0 when asked).

        ``stream`` is the consumer's: None or 1 the legacy default stream, 2 the
        per-thread default, -1 no synchronization, else a stream handle; the
        consumer's stream is made to wait for this array's last writes.
        ``dl_device=(kDLCPU, 0)`` exports a host copy.
        """
        versioned = max_version is not None and max_version[0] >= 1
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            return self._dlpack_to(tuple(dl_device), copy, max_version)
        source = self
        if copy:
            source = self.copy()
        if stream != -1:
            consumer = _consumer_stream(stream)
            with on_device(self._device_id):
                order_after(consumer, source._stream.ptr, self._device_id)
        isz = self._dtype.itemsize
        code, bits = dtypes.to_dlpack(self._dtype)
        return _dlpack.make_capsule(
            source._ptr, source._shape, [st // isz for st in source._strides], code, bits,
            _dlpack.KDL_CUDA, self._device_id, source, versioned=versioned,
            copied=bool(copy))

    def _dlpack_to(self, dl_device, copy, max_version):
        if dl_device[0] != _dlpack.KDL_CPU:
            raise JitkernBufferError(f"cannot export a jitkern array on CUDA device {self._device_id} "
                              f"to DLPack device {dl_device}")
        if copy is False:
            raise JitkernBufferError("exporting a GPU array to the CPU needs a copy (copy=False given)")
        host = self.get()
        if max_version is None:
            return host.__dlpack__()
        return host.__dlpack__(max_version=max_version)


# what the generated launchers build ndarrays with (how they read one is the "jitkern" row
# of runtime/libraries.py's table: its slots, which __jitkern_array__ points it to)
register_arrays(ndarray=ndarray, pin_stream=pin_stream, stream_of=stream_of)


def _consumer_stream(stream) -> int:
    if stream is None or stream == LEGACY:
        return LEGACY
    if stream == 0:
        raise JitkernValueError("__dlpack__: stream=0 is ambiguous for CUDA; use 1 for the legacy "
                         "default stream or 2 for the per-thread default stream")
    if stream == PER_THREAD:
        return PER_THREAD
    return stream_handle(stream)


def _resolve_order(a: ndarray, order: str) -> str:
    if order in ("C", "F"):
        return order
    if order in ("K", "A") and a._f_contiguous() and not a._c_contiguous():
        return "F"
    if order in ("K", "A", None):
        return "C"
    raise JitkernValueError(f"order: expected 'C', 'F', 'A' or 'K', got {order!r}")


def _host_value(value, target: ndarray) -> numpy.ndarray:
    host = numpy.asarray(value, dtype=target._dtype)
    if host.shape != target._shape:
        host = numpy.broadcast_to(host, target._shape)
        if host.strides != layout.c_strides(host.shape, host.itemsize):
            host = numpy.ascontiguousarray(host)
    return host


def _on_gpu(value) -> bool:
    if hasattr(value, "__cuda_array_interface__"):
        return True
    device = getattr(value, "__dlpack_device__", None)
    return device is not None and device()[0] != _dlpack.KDL_CPU


def _flat(host: numpy.ndarray) -> numpy.ndarray:
    """A 1-D view of a C- or F-contiguous host array, in memory order (a plain buffer)."""
    return host.ravel(order="K")


def _same_layout(a: ndarray, b: ndarray) -> bool:
    return a._ptr == b._ptr and a._strides == b._strides and a._dtype == b._dtype


def _overlaps(dst: ndarray, src: ndarray) -> bool:
    """Whether the bytes the two arrays touch intersect (also for two foreign wraps of the
    same memory, which do not share a MemoryPointer)."""
    isz_d, isz_s = dst._dtype.itemsize, src._dtype.itemsize
    lo_d, hi_d = layout.span(dst._shape, dst._strides, isz_d)
    lo_s, hi_s = layout.span(src._shape, src._strides, isz_s)
    return layout.ranges_overlap((dst._ptr + lo_d, dst._ptr + hi_d),
                                 (src._ptr + lo_s, src._ptr + hi_s))


def _copy_into(dst: ndarray, src: ndarray, st: Stream) -> None:
    """``dst[...] = src`` on stream ``st`` (shapes equal; src may have zero strides).

    The current device must be ``dst``'s.
    """
    if not dst._size:
        return
    s = st.ptr
    if src._device_id != dst._device_id:
        src = _to_device(src, dst._device_id, st)
    elif _overlaps(dst, src):
        if _same_layout(dst, src):
            return
        src = src.copy(stream=st)
    order_after(s, dst._stream.ptr, dst._device_id)
    order_after(s, src._stream.ptr, dst._device_id)
    dst._stream = st
    if dst._dtype == src._dtype:
        isz = dst._dtype.itemsize
        dense = ((layout.is_c_contiguous(dst._shape, dst._strides, isz)
                  and layout.is_c_contiguous(src._shape, src._strides, isz))
                 or (layout.is_f_contiguous(dst._shape, dst._strides, isz)
                     and layout.is_f_contiguous(src._shape, src._strides, isz)))
        if dense:
            memory.memcpy_dtod(dst._ptr, src._ptr, dst.nbytes, s)
            return
    _kernels.copy(dst._ptr, dst._strides, src._ptr, src._strides, dst._shape, src._dtype,
                  dst._dtype, s)


def _to_device(src: ndarray, device_id: int, st: Stream) -> ndarray:
    """A C-contiguous copy of ``src`` on ``device_id`` (a peer copy through the driver)."""
    with on_device(src._device_id):
        if not src._c_contiguous():
            src = src.copy()
        # The copy below runs on the destination's stream: let the source's writes land first.
        check(drv().cuStreamSynchronize(src._stream.ptr), "cuStreamSynchronize")
    out = allocate(src._shape, src._dtype, device_id=device_id, stream=st)
    # Pool memory is not mapped on other devices: a plain cuMemcpy between them is refused.
    check(drv().cuMemcpyPeerAsync(out._ptr, driver.primary_context(device_id), src._ptr,
                                  driver.primary_context(src._device_id), src.nbytes, st.ptr),
          "cuMemcpyPeerAsync")
    return out


def _memset_width(raw: bytes, ptr: int) -> int:
    """1, 2 or 4 when ``raw`` repeats a unit of that size (and ``ptr`` is aligned), else 0."""
    for width in (4, 2, 1):
        if len(raw) % width or ptr % width:
            continue
        unit = raw[:width]
        if unit * (len(raw) // width) == raw:
            return width
    return 0


def _fill(a: ndarray, raw: bytes, s: int) -> None:
    isz = len(raw)
    dense = a._c_contiguous() or a._f_contiguous()
    width = _memset_width(raw, a._ptr) if dense else 0
    d = drv()
    if width == 4:
        check(d.cuMemsetD32Async(a._ptr, int.from_bytes(raw[:4], "little"), a.nbytes // 4, s),
              "cuMemsetD32Async")
    elif width == 2:
        check(d.cuMemsetD16Async(a._ptr, int.from_bytes(raw[:2], "little"), a.nbytes // 2, s),
              "cuMemsetD16Async")
    elif width == 1:
        memory.memset_d8(a._ptr, raw[0], a.nbytes, s)
    else:
        if dense:  # one dense run of items, in memory order
            strides = (isz,)
            shape = (a._size,)
            ptr = a._ptr + layout.span(a._shape, a._strides, isz)[0]
        else:
            shape, strides, ptr = a._shape, a._strides, a._ptr
        _kernels.fill(ptr, strides, shape, raw, s)
