"""A simulated device: a CUDA driver stand-in whose device memory is host memory.

``with jitkern.simulated_device():`` makes :class:`SimulatedDevice` the driver
(through the runtime's one seam, :class:`jitkern.runtime.driver.use`) and turns the
simulator on, so that
jitkern arrays, their copies and fills, CUDA arrays, streams and events work without a
GPU, and every kernel launch runs in the CPU simulator with the arrays seen as NumPy views
of their memory (writes land in place). Outside the block nothing changes.

What it is and is not:

- Memory: jitkern allocates exactly (``JITKERN_EXACT_ALLOC``'s mode, inside the block
  only): each array is a ``cuMemAlloc`` of its bytes, freed when dropped, never cached, so
  an access one byte past an array faults, and an array that outlives the block never
  enters the memory cache of the device used after it. Each allocation is a NumPy byte
  buffer of its own, at an address of its own that is never handed out again in the
  process (each device of each simulated device has a 16 TiB region of addresses; 256-byte
  aligned, a guard gap after each; handles likewise). Copies, fills and views check that every byte
  they touch lies in one live allocation: anything else (past an end, freed memory, a
  host pointer) raises :class:`jitkern.CUDAError` with code 700 (illegal address) naming
  the call and the address, never touching Python's memory. ``capacity`` bytes per device
  (default 1 GiB): a larger total is ``CUDA_ERROR_OUT_OF_MEMORY``, as on a GPU. New memory
  is filled with 0xA5 bytes, so a result that forgot to write shows.
- Work is synchronous: each copy, fill and kernel has finished when its call returns, so
  streams and events are bookkeeping and every stream order holds.
- Kernels: the simulator runs them (``settings.simulate`` is on). Nothing is compiled
  or loaded: ``cuModuleLoadData``, ``cuLaunchKernel`` and graph launches raise
  :class:`jitkern.errors.InternalError`, so a GPU launch path that reaches this device is
  a loud bug, not a silent no-op.
- jitkern's own array kernels (strided copies, dtype conversions, fills; arrays/_kernels.py)
  run from their C source in the simulator, through :meth:`SimulatedDevice.run_array_kernel`.
"""

from __future__ import annotations

import bisect
import contextlib
import ctypes
import functools
import itertools
import time
import types

import numpy

from .. import config
from ..errors import (
    CUDAError,
    InternalError,
    JitkernAttributeError,
    JitkernNotImplementedError,
    JitkernTypeError,
    JitkernValueError,
)
from ..runtime import driver, memory
from ..runtime.fakedriver import FakeDriver
from . import raw
from ..runtime.simulated import ACTIVE
from .texobjects import TextureCalls

#: CUDA_ERROR_ILLEGAL_ADDRESS: what a kernel touching unmapped memory gets on a GPU
ILLEGAL_ADDRESS = 700
_ALIGN = 256
_GUARD = 4096  # unmapped bytes after each allocation: an overrun never lands in the next one
_POISON = 0xA5
_POOL = 0x9000  # device d's default pool handle is _POOL + d (as FakeDriver's)
_REGION_BITS = 44  # 16 TiB of addresses per simulated device, never reused in a process
_REGIONS = itertools.count(1)
_HANDLES = itertools.count(0x5000)

_FORMAT_BYTES = {0x01: 1, 0x02: 2, 0x03: 4, 0x08: 1, 0x09: 2, 0x0A: 4, 0x10: 2, 0x20: 4}

_DEVICE_ATTRIBUTES = {
    "COMPUTE_CAPABILITY_MAJOR": None, "COMPUTE_CAPABILITY_MINOR": None,
    "MAX_THREADS_PER_BLOCK": 1024, "MAX_BLOCK_DIM_X": 1024, "MAX_BLOCK_DIM_Y": 1024,
    "MAX_BLOCK_DIM_Z": 64, "MAX_GRID_DIM_X": 2**31 - 1, "MAX_GRID_DIM_Y": 65535,
    "MAX_GRID_DIM_Z": 65535, "MULTIPROCESSOR_COUNT": 132, "WARP_SIZE": 32,
    "MAX_SHARED_MEMORY_PER_BLOCK": 49152, "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN": 232448,
    "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR": 233472, "MAX_REGISTERS_PER_BLOCK": 65536,
    "MAX_THREADS_PER_MULTIPROCESSOR": 2048, "CLOCK_RATE": 1755000, "COOPERATIVE_LAUNCH": 1,
    "MEMORY_POOLS_SUPPORTED": 1, "UNIFIED_ADDRESSING": 1, "CONCURRENT_MANAGED_ACCESS": 0,
    "TOTAL_CONSTANT_MEMORY": 65536, "L2_CACHE_SIZE": 52428800, "GLOBAL_MEMORY_BUS_WIDTH": 5120,
    "MEMORY_CLOCK_RATE": 2619000, "PCI_BUS_ID": 0, "PCI_DEVICE_ID": 0, "PCI_DOMAIN_ID": 0,
    "INTEGRATED": 0, "CAN_MAP_HOST_MEMORY": 1, "ECC_ENABLED": 0, "TCC_DRIVER": 0,
    "ASYNC_ENGINE_COUNT": 2, "KERNEL_EXEC_TIMEOUT": 0, "COMPUTE_MODE": 0,
    "MAX_PERSISTING_L2_CACHE_SIZE": 0, "CLUSTER_LAUNCH": 1,
    "MAXIMUM_TEXTURE1D_WIDTH": 131072, "MAXIMUM_TEXTURE2D_WIDTH": 131072,
    "MAXIMUM_TEXTURE2D_HEIGHT": 65536, "MAXIMUM_TEXTURE3D_WIDTH": 16384,
    "MAXIMUM_TEXTURE3D_HEIGHT": 16384, "MAXIMUM_TEXTURE3D_DEPTH": 16384,
    "TEXTURE_ALIGNMENT": 512, "TEXTURE_PITCH_ALIGNMENT": 32,
}


class _Attributes:
    """``CUdevice_attribute``: every ``CU_DEVICE_ATTRIBUTE_X`` is the name ``X``."""

    def __getattr__(self, name: str) -> str:
        prefix = "CU_DEVICE_ATTRIBUTE_"
        if not name.startswith(prefix):
            raise JitkernAttributeError(f"CUdevice_attribute has no {name}")
        return name[len(prefix):]


class Allocation:
    """One block of simulated device memory: ``data`` (a uint8 NumPy array) at ``base``."""

    __slots__ = ("base", "data", "device", "live", "pool", "size")

    def __init__(self, base: int, size: int, device: int, pool: bool):
        self.base, self.size, self.device, self.pool = base, size, device, pool
        self.data = numpy.full(size, _POISON, numpy.uint8)
        self.live = True


class CudaArray:
    """A CUDA array (``cuArray3DCreate``): its descriptor and bytes (depth, height, row)."""

    def __init__(self, desc, device: int):
        self.desc = types.SimpleNamespace(
            Width=int(desc.Width), Height=int(desc.Height), Depth=int(desc.Depth),
            Format=int(desc.Format), NumChannels=int(desc.NumChannels), Flags=int(desc.Flags))
        self.device = device
        row = int(desc.Width) * _FORMAT_BYTES[int(desc.Format)] * int(desc.NumChannels)
        self.data = numpy.full((max(int(desc.Depth), 1), max(int(desc.Height), 1), row),
                               _POISON, numpy.uint8)


class ArrayDescriptor:
    """``CUDA_ARRAY3D_DESCRIPTOR``."""

    def __init__(self):
        self.Width = self.Height = self.Depth = self.Format = self.NumChannels = self.Flags = 0


class Memcpy3D:
    """``CUDA_MEMCPY3D``: every field the driver's has, zero until set."""

    _FIELDS = ("XInBytes", "Y", "Z", "LOD", "MemoryType", "Host", "Device", "Array", "Pitch",
               "Height")

    def __init__(self):
        for side in ("src", "dst"):
            for field in self._FIELDS:
                setattr(self, side + field, 0)
        self.WidthInBytes = self.Height = self.Depth = 0


def check_arguments(devices, cc, capacity) -> tuple:
    """``simulated_device()``'s arguments as Python ints, or the error naming the argument,
    what it takes and what it got: ``devices`` >= 1, ``capacity`` >= 1 byte, ``cc`` one
    ``(major, minor)`` pair (major >= 1, minor 0-9, as ``sm_XY`` spells them) or a list of
    one pair per device."""
    devices = _positive_int("devices", devices)
    capacity = _positive_int("capacity", capacity)
    if isinstance(cc, list):
        if len(cc) != devices:
            raise JitkernValueError(
                f"simulated_device(cc=...): a list gives one (major, minor) per device: "
                f"expected {devices}, got {len(cc)}: {cc!r}")
        return devices, [_compute_capability(c) for c in cc], capacity
    return devices, _compute_capability(cc), capacity


def _positive_int(what: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, numpy.integer)):
        raise JitkernTypeError(
            f"simulated_device({what}=...): expected an int >= 1, got {type(value).__name__} "
            f"{value!r}")
    if value < 1:
        raise JitkernValueError(f"simulated_device({what}=...): expected an int >= 1, got {value}")
    return int(value)


def _compute_capability(cc) -> tuple[int, int]:
    if not isinstance(cc, tuple):
        raise JitkernTypeError(
            f"simulated_device(cc=...): expected a (major, minor) tuple of ints such as (9, 0), "
            f"or a list of one per device, got {type(cc).__name__} {cc!r}")
    if len(cc) != 2:
        raise JitkernValueError(
            f"simulated_device(cc=...): expected a (major, minor) pair such as (9, 0), got "
            f"{len(cc)} value(s): {cc!r}")
    for v in cc:
        if isinstance(v, bool) or not isinstance(v, (int, numpy.integer)):
            raise JitkernTypeError(
                f"simulated_device(cc=...): major and minor are ints, got {type(v).__name__} "
                f"{v!r} in {cc!r}")
    major, minor = int(cc[0]), int(cc[1])
    if major < 1 or not 0 <= minor <= 9:
        raise JitkernValueError(
            f"simulated_device(cc=...): expected a major >= 1 and a minor from 0 to 9 (sm_90 is "
            f"(9, 0)), got {cc!r}")
    return major, minor


class SimulatedDevice(TextureCalls, FakeDriver):
    """The driver stand-in of :func:`simulated_device` (see the module doc).

    ``devices``: how many devices; ``cc``: their compute capability (FakeDriver's rules);
    ``capacity``: bytes of memory per device. ``allocations`` maps each live allocation's
    base address to its :class:`Allocation`."""

    CUresult = types.SimpleNamespace(
        CUDA_SUCCESS=0, CUDA_ERROR_INVALID_VALUE=1, CUDA_ERROR_OUT_OF_MEMORY=2,
        CUDA_ERROR_NO_DEVICE=100, CUDA_ERROR_INVALID_CONTEXT=201, CUDA_ERROR_INVALID_HANDLE=400,
        CUDA_ERROR_NOT_FOUND=500, CUDA_ERROR_NOT_READY=600, CUDA_ERROR_ILLEGAL_ADDRESS=700,
        CUDA_ERROR_LAUNCH_FAILED=719, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED=900,
        CUDA_ERROR_STREAM_CAPTURE_INVALIDATED=901)
    CUdevice_attribute = _Attributes()
    CUmemorytype = types.SimpleNamespace(CU_MEMORYTYPE_HOST=1, CU_MEMORYTYPE_DEVICE=2,
                                         CU_MEMORYTYPE_ARRAY=3, CU_MEMORYTYPE_UNIFIED=4)
    CUmemPool_attribute = types.SimpleNamespace(
        CU_MEMPOOL_ATTR_RELEASE_THRESHOLD=4, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT=5,
        CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH=6, CU_MEMPOOL_ATTR_USED_MEM_CURRENT=7,
        CU_MEMPOOL_ATTR_USED_MEM_HIGH=8)
    CUevent_flags = types.SimpleNamespace(CU_EVENT_DEFAULT=0, CU_EVENT_BLOCKING_SYNC=1,
                                          CU_EVENT_DISABLE_TIMING=2)
    CUarray_format = types.SimpleNamespace(
        CU_AD_FORMAT_UNSIGNED_INT8=0x01, CU_AD_FORMAT_UNSIGNED_INT16=0x02,
        CU_AD_FORMAT_UNSIGNED_INT32=0x03, CU_AD_FORMAT_SIGNED_INT8=0x08,
        CU_AD_FORMAT_SIGNED_INT16=0x09, CU_AD_FORMAT_SIGNED_INT32=0x0A,
        CU_AD_FORMAT_HALF=0x10, CU_AD_FORMAT_FLOAT=0x20)
    CUDA_ARRAY3D_DESCRIPTOR = ArrayDescriptor
    CUDA_MEMCPY3D = Memcpy3D

    def __init__(self, devices: int = 1, cc=(9, 0), capacity: int = 1 << 30):
        devices, cc, capacity = check_arguments(devices, cc, capacity)
        super().__init__(devices=devices, cc=cc)
        self.capacity = capacity
        self.allocations: dict[int, Allocation] = {}
        self._bases: list[int] = []  # sorted: live and freed allocations alike
        self._blocks: dict[int, Allocation] = {}  # base -> block, freed ones kept (messages)
        # each device of each SimulatedDevice made in this process gets an address region of
        # its own: an array that outlives its block and is freed later (by the garbage
        # collector, inside another block) names no allocation of the device then in use
        self._next = [next(_REGIONS) << _REGION_BITS for _ in range(max(devices, 1))]
        self.used = [0] * max(devices, 1)
        self.arrays: dict[int, CudaArray] = {}
        self.events: dict[int, list] = {}  # event -> [flags, time recorded or None]
        self.streams: set[int] = set()
        self._ctx_stack: list[int] = []
        self._ids = _HANDLES  # (the same for handles: streams, events, CUDA arrays)

    # -- devices and contexts
    def cuDeviceGetAttribute(self, attr, dev):
        cc = self.ccs[int(dev)]
        if attr == "COMPUTE_CAPABILITY_MAJOR":
            return (0, cc[0])
        if attr == "COMPUTE_CAPABILITY_MINOR":
            return (0, cc[1])
        value = _DEVICE_ATTRIBUTES.get(attr)
        return (0, value) if value is not None else (1, 0)

    def cuDeviceGetName(self, length, dev):
        return (0, b"jitkern simulated device\0")

    def cuDeviceTotalMem(self, dev):
        return (0, self.capacity)

    def cuCtxPushCurrent(self, ctx):
        self._ctx_stack.append(self.current)
        self.current = int(ctx)
        return (0,)

    def cuCtxPopCurrent(self):
        popped = self.current
        self.current = self._ctx_stack.pop() if self._ctx_stack else 0
        return (0, popped)

    def _current_device(self):
        return None if self.current == 0 else self.current - 0xC0

    # -- memory
    def _allocate(self, size: int, device: int, pool: bool):
        size = int(size)
        if size <= 0:
            return (self.CUresult.CUDA_ERROR_INVALID_VALUE, 0)
        if self.used[device] + size > self.capacity:
            return (self.CUresult.CUDA_ERROR_OUT_OF_MEMORY, 0)
        base = self._next[device]
        self._next[device] = base + -(-(size + _GUARD) // _ALIGN) * _ALIGN
        block = Allocation(base, size, device, pool)
        self.allocations[base] = self._blocks[base] = block
        if self._bases and base < self._bases[-1]:  # another device's addresses are higher
            bisect.insort(self._bases, base)
        else:
            self._bases.append(base)
        self.used[device] += size
        return (0, base)

    def cuMemAlloc(self, size):
        device = self._current_device()
        if device is None:
            return (self.CUresult.CUDA_ERROR_INVALID_CONTEXT, 0)
        return self._allocate(size, device, pool=False)

    def cuMemAllocFromPoolAsync(self, size, pool, stream):
        return self._allocate(size, int(pool) - _POOL, pool=True)

    def cuMemFree(self, ptr):
        block = self.allocations.pop(int(ptr), None)
        if block is None:
            return (self.CUresult.CUDA_ERROR_INVALID_VALUE,)
        block.live = False
        block.data = None  # the bytes go; the address is never handed out again
        self.used[block.device] -= block.size
        return (0,)

    def cuMemFreeAsync(self, ptr, stream):
        return self.cuMemFree(ptr)

    def cuMemGetInfo(self):
        device = self._current_device() or 0
        return (0, self.capacity - self.used[device], self.capacity)

    def cuMemPoolGetAttribute(self, pool, attr):
        device = int(pool) - _POOL
        return (0, self.used[device])

    def cuMemPoolTrimTo(self, pool, keep):
        return (0,)

    def cuMemRetainAllocationHandle(self, ptr):
        return (self.CUresult.CUDA_ERROR_INVALID_VALUE, None)

    def cuPointerGetAttribute(self, attr, ptr):
        block = self._block_at(int(ptr))
        if block is None or not block.live:
            return (self.CUresult.CUDA_ERROR_INVALID_VALUE, 0)
        a = self.CUpointer_attribute
        values = {a.CU_POINTER_ATTRIBUTE_MEMORY_TYPE: 2,
                  a.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: block.device,
                  a.CU_POINTER_ATTRIBUTE_CONTEXT: 0 if block.pool else self.context(block.device),
                  a.CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE: _POOL + block.device if block.pool else 0}
        return (0, values[attr]) if attr in values else (self.CUresult.CUDA_ERROR_INVALID_VALUE, 0)

    def pointer_device(self, ptr: int) -> int:
        block = self._block_at(int(ptr))
        return block.device if block is not None else 0

    def _block_at(self, ptr: int):
        """The allocation (live or freed) whose bytes or guard gap hold ``ptr``, else None."""
        i = bisect.bisect_right(self._bases, ptr) - 1
        if i < 0:
            return None
        block = self._blocks[self._bases[i]]
        return block if ptr < block.base + block.size + _GUARD else None

    def view(self, ptr: int, nbytes: int, what: str = "an access") -> numpy.ndarray:
        """The ``nbytes`` bytes at device address ``ptr`` as a writable uint8 NumPy view; a
        :class:`jitkern.CUDAError` (code 700) if they are not all in one live allocation."""
        ptr, nbytes = int(ptr), int(nbytes)
        block = self._block_at(ptr)
        if block is None or not block.live or ptr + nbytes > block.base + block.size:
            raise CUDAError(self._fault(what, ptr, nbytes, block), ILLEGAL_ADDRESS)
        offset = ptr - block.base
        return block.data[offset:offset + nbytes]

    def view_to_end(self, ptr: int, what: str = "an access") -> numpy.ndarray:
        """The bytes from ``ptr`` to the end of its allocation (a kernel's ``char*``)."""
        block = self._block_at(int(ptr))
        if block is None or not block.live or int(ptr) >= block.base + block.size:
            raise CUDAError(self._fault(what, int(ptr), 1, block), ILLEGAL_ADDRESS)
        return block.data[int(ptr) - block.base:]

    @staticmethod
    def _fault(what: str, ptr: int, nbytes: int, block) -> str:
        where = f"{what} of {nbytes} byte(s) at 0x{ptr:x} on the simulated device"
        if block is None:
            why = "is in no allocation"
        elif not block.live:
            why = (f"is in the allocation at 0x{block.base:x} ({block.size} bytes), which "
                   "was freed")
        else:
            end = block.base + block.size
            why = (f"runs {ptr + nbytes - end} byte(s) past the end of the allocation at "
                   f"0x{block.base:x} ({block.size} bytes)")
        return f"illegal address: {where} {why} (a GPU would fault here)"

    # -- copies and fills (synchronous: the stream argument is bookkeeping)
    @staticmethod
    def _host(buffer, nbytes: int) -> numpy.ndarray:
        """``nbytes`` of host memory: an address (int) or a buffer-protocol object."""
        if isinstance(buffer, (int, numpy.integer)):
            if not buffer:
                raise CUDAError("a copy from or to host address 0 on the simulated device",
                                ILLEGAL_ADDRESS)
            raw = (ctypes.c_uint8 * nbytes).from_address(int(buffer))
            return numpy.frombuffer(raw, numpy.uint8, nbytes)
        flat = numpy.frombuffer(buffer, numpy.uint8) if not isinstance(buffer, numpy.ndarray) \
            else buffer.reshape(-1).view(numpy.uint8)
        if flat.size < nbytes:
            raise JitkernValueError(f"a host buffer of {flat.size} bytes, {nbytes} to copy")
        return flat[:nbytes]

    def _host_copy_captured(self, stream) -> bool:
        # a copy from or to pageable host memory cannot be captured: on a GPU it is
        # cudaErrorStreamCaptureUnsupported, and the capture is invalidated
        if not self.is_capturing(int(stream)):
            return False
        self._capturing[int(stream)] = None  # the capture is invalidated
        return True

    def cuStreamIsCapturing(self, stream):
        work = self._capturing.get(int(stream), ())
        return (0, 0 if work == () else 2 if work is None else 1)

    def cuStreamEndCapture(self, stream):
        if self._capturing.get(int(stream), ()) is None:
            del self._capturing[int(stream)]
            return (self.CUresult.CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, None)
        return super().cuStreamEndCapture(stream)

    def cuMemcpyHtoDAsync(self, dst, src, nbytes, stream=0):
        if self._host_copy_captured(stream):
            return (self.CUresult.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,)
        self.view(dst, nbytes, "cuMemcpyHtoD's write")[:] = self._host(src, nbytes)
        return (0,)

    def cuMemcpyDtoHAsync(self, dst, src, nbytes, stream=0):
        if self._host_copy_captured(stream):
            return (self.CUresult.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,)
        host = self._host(dst, nbytes)
        if not host.flags.writeable:
            raise JitkernValueError("cuMemcpyDtoH into a read-only host buffer")
        host[:] = self.view(src, nbytes, "cuMemcpyDtoH's read")
        return (0,)

    def cuMemcpyDtoDAsync(self, dst, src, nbytes, stream=0):
        if self.capture(stream, functools.partial(self.cuMemcpyDtoDAsync, dst, src, nbytes)):
            return (0,)
        source = self.view(src, nbytes, "cuMemcpyDtoD's read").copy()  # they may overlap
        self.view(dst, nbytes, "cuMemcpyDtoD's write")[:] = source
        return (0,)

    def cuMemcpyAsync(self, dst, src, nbytes, stream=0):
        return self.cuMemcpyDtoDAsync(dst, src, nbytes, stream)

    def cuMemcpyPeerAsync(self, dst, dst_ctx, src, src_ctx, nbytes, stream=0):
        return self.cuMemcpyDtoDAsync(dst, src, nbytes, stream)

    def cuMemcpyHtoD(self, dst, src, nbytes):
        return self.cuMemcpyHtoDAsync(dst, src, nbytes)

    def cuMemcpyDtoH(self, dst, src, nbytes):
        return self.cuMemcpyDtoHAsync(dst, src, nbytes)

    def cuMemcpyDtoD(self, dst, src, nbytes):
        return self.cuMemcpyDtoDAsync(dst, src, nbytes)

    def cuMemcpy(self, dst, src, nbytes):
        return self.cuMemcpyDtoDAsync(dst, src, nbytes)

    def _memset(self, width: int, dst, value, count, call: str):
        target = self.view(dst, int(count) * width, call).view(f"<u{width}")
        target[:] = int(value) & ((1 << 8 * width) - 1)
        return (0,)

    def cuMemsetD8Async(self, dst, value, count, stream=0):
        return self._memset_on(stream, 1, dst, value, count, "cuMemsetD8")

    def cuMemsetD16Async(self, dst, value, count, stream=0):
        return self._memset_on(stream, 2, dst, value, count, "cuMemsetD16")

    def cuMemsetD32Async(self, dst, value, count, stream=0):
        return self._memset_on(stream, 4, dst, value, count, "cuMemsetD32")

    def _memset_on(self, stream, width: int, dst, value, count, call: str):
        if self.capture(stream, functools.partial(self._memset, width, dst, value, count, call)):
            return (0,)
        return self._memset(width, dst, value, count, call)

    def cuMemsetD8(self, dst, value, count):
        return self._memset(1, dst, value, count, "cuMemsetD8")

    def cuMemsetD16(self, dst, value, count):
        return self._memset(2, dst, value, count, "cuMemsetD16")

    def cuMemsetD32(self, dst, value, count):
        return self._memset(4, dst, value, count, "cuMemsetD32")

    # -- CUDA arrays
    def cuArray3DCreate(self, desc):
        if int(desc.Format) not in _FORMAT_BYTES or int(desc.NumChannels) not in (1, 2, 4):
            return (self.CUresult.CUDA_ERROR_INVALID_VALUE, None)
        handle = next(self._ids)
        self.arrays[handle] = CudaArray(desc, self._current_device() or 0)
        return (0, handle)

    def cuArray3DGetDescriptor(self, handle):
        array = self.arrays.get(int(handle))
        if array is None:
            return (self.CUresult.CUDA_ERROR_INVALID_HANDLE, None)
        desc = ArrayDescriptor()
        desc.__dict__.update(vars(array.desc))
        return (0, desc)

    def cuArrayDestroy(self, handle):
        return (0,) if self.arrays.pop(int(handle), None) is not None \
            else (self.CUresult.CUDA_ERROR_INVALID_HANDLE,)

    def cuMemcpy3D(self, m):
        width, height, depth = int(m.WidthInBytes), max(int(m.Height), 1), max(int(m.Depth), 1)
        source = self._side(m, "src", width, height, depth, "cuMemcpy3D's read")
        target = self._side(m, "dst", width, height, depth, "cuMemcpy3D's write")
        target[...] = source.copy()
        return (0,)

    def cuMemcpy3DAsync(self, m, stream):
        return self.cuMemcpy3D(m)

    def _side(self, m, side: str, width: int, height: int, depth: int, what: str):
        """One side of a 3-D copy as a (depth, height, width) uint8 view."""
        kind = int(getattr(m, side + "MemoryType"))
        x, y, z = (int(getattr(m, side + f)) for f in ("XInBytes", "Y", "Z"))
        if kind == self.CUmemorytype.CU_MEMORYTYPE_ARRAY:
            array = self.arrays.get(int(getattr(m, side + "Array")))
            if array is None:
                raise CUDAError(f"{what}: no CUDA array {getattr(m, side + 'Array')!r}", 400)
            data = array.data
            if z + depth > data.shape[0] or y + height > data.shape[1] or x + width > data.shape[2]:
                raise CUDAError(f"{what}: the copy's extent lies outside the CUDA array", 1)
            return data[z:z + depth, y:y + height, x:x + width]
        pitch = int(getattr(m, side + "Pitch")) or width
        rows = int(getattr(m, side + "Height")) or height
        start = x + (y + z * rows) * pitch
        span = ((depth - 1) * rows + height - 1) * pitch + width
        if kind == self.CUmemorytype.CU_MEMORYTYPE_HOST:
            flat = self._host(int(getattr(m, side + "Host")) + start, span)
        else:
            flat = self.view(int(getattr(m, side + "Device")) + start, span, what)
        return numpy.lib.stride_tricks.as_strided(
            flat, (depth, height, width), (rows * pitch, pitch, 1))

    # -- streams and events
    def cuStreamCreateWithPriority(self, flags, priority):
        handle = next(self._ids)
        self.streams.add(handle)
        return (0, handle)

    def cuStreamCreate(self, flags):
        return self.cuStreamCreateWithPriority(flags, 0)

    def cuStreamDestroy(self, stream):
        self.streams.discard(int(stream))
        return (0,)

    def cuStreamQuery(self, stream):
        return (0,)

    def cuStreamWaitEvent(self, stream, event, flags):
        return (0,)

    def cuEventCreate(self, flags):
        handle = next(self._ids)
        self.events[handle] = [int(flags), None]
        return (0, handle)

    def cuEventRecord(self, event, stream):
        record = self.events.get(int(event))
        if record is None:
            return (self.CUresult.CUDA_ERROR_INVALID_HANDLE,)
        record[1] = time.perf_counter()
        return (0,)

    def cuEventRecordWithFlags(self, event, stream, flags):
        return self.cuEventRecord(event, stream)

    def cuEventSynchronize(self, event):
        return (0,)

    def cuEventQuery(self, event):
        return (0,)

    def cuEventDestroy(self, event):
        self.events.pop(int(event), None)
        return (0,)

    def cuEventElapsedTime(self, start, end):
        a, b = self.events.get(int(start)), self.events.get(int(end))
        if a is None or b is None or (a[0] | b[0]) & 2:
            return (self.CUresult.CUDA_ERROR_INVALID_HANDLE, 0.0)
        if a[1] is None or b[1] is None:
            return (self.CUresult.CUDA_ERROR_NOT_READY, 0.0)
        return (0, (b[1] - a[1]) * 1000.0)

    def cuGetErrorName(self, err):
        names = {v: k for k, v in vars(self.CUresult).items()}
        return (0, names.get(int(err), f"CUDA_ERROR_{int(err)}").encode())

    def cuGetErrorString(self, err):
        return (0, b"simulated device error")

    # -- stream capture: a capturing stream's work is recorded, and replayed in order by
    # cuGraphLaunch (work is synchronous here, so a graph is the list of it)
    def capturing(self) -> bool:
        """Whether any stream is capturing."""
        return bool(self._capturing)

    def is_capturing(self, stream: int) -> bool:
        return int(stream) in self._capturing

    def capture(self, stream: int, run) -> bool:
        """Record ``run`` (work ready to run: a kernel's, a copy) into ``stream``'s capture
        instead of running it: True; False where ``stream`` is not capturing."""
        if int(stream) not in self._capturing:
            return False
        work = self._capturing[int(stream)]
        if work is not None:  # (None: the capture was invalidated; its end says so)
            work.append(run)
        return True

    def cuGraphInstantiate(self, graph, flags):
        handle = next(self._ids)
        self.execs[handle] = list(self.graphs[int(graph)])
        return (0, handle)

    def cuGraphLaunch(self, graph_exec, stream):
        work = self.execs.get(int(graph_exec))
        if work is None:
            return (self.CUresult.CUDA_ERROR_INVALID_HANDLE,)
        if not self.capture(stream, functools.partial(_replay, work)):  # a graph in a graph
            _replay(work)
        return (0,)

    def cuGraphExecDestroy(self, graph_exec):
        self.execs.pop(int(graph_exec), None)
        return (0,)

    def cuGraphDestroy(self, graph):
        self.graphs.pop(int(graph), None)
        return (0,)

    def _no_nodes(self, *args):
        raise JitkernNotImplementedError(
            "a graph's nodes (Graph.update, Graph.kernel_nodes, new arguments for a captured "
            "launch) are not modelled by jitkern's simulated device, which records a capture's "
            "work and replays it as it was captured: capture again with the new arguments, or "
            "run this on a GPU")

    cuGraphGetNodes = cuGraphNodeGetType = cuGraphNodeGetDependencies = _no_nodes
    cuGraphKernelNodeGetParams = cuGraphExecKernelNodeSetParams = _no_nodes

    # -- nothing compiled runs here: kernels go to the simulator
    def _refuse(self, what: str):
        raise InternalError(
            f"{what} reached jitkern's simulated device: every kernel launched on it must run "
            "in the simulator (settings.simulate), so a GPU launch path was taken where it "
            "must not be; please report this")

    def cuModuleLoadData(self, data):
        self._refuse("cuModuleLoadData (loading a compiled module)")

    def cuLaunchKernel(self, *args):
        self._refuse("cuLaunchKernel (a compiled kernel's launch)")

    def cuLaunchCooperativeKernel(self, *args):
        self._refuse("cuLaunchCooperativeKernel (a compiled kernel's launch)")

    # -- jitkern's array kernels (arrays/_kernels.py) in the simulator
    def run_array_kernel(self, source: str, symbol: str, grid: int, block: int, args) -> None:
        """Run ``symbol`` of CUDA C ``source`` in the simulator: each int argument is a
        device pointer, given as the bytes from it to the end of its allocation (a uint8
        view: the kernel's ``char*``); the others (the layout struct, a fill value) as
        they are. The runtime finds it through the driver seam (``driver.source_runner``):
        it cannot import the simulator."""
        values = tuple(self.view_to_end(a, f"{symbol}'s pointer argument")
                       if isinstance(a, int) else a for a in args)
        raw.run_source(source, symbol, (grid,), (block,), values)

    def host_view(self, ptr: int, shape, strides, dtype) -> numpy.ndarray:
        """The array at ``ptr`` as a NumPy view of this device's memory (zero-copy)."""
        dtype = numpy.dtype(dtype)
        if not all(shape):
            return numpy.empty(shape, dtype)
        lo = sum((n - 1) * s for n, s in zip(shape, strides) if s < 0)
        hi = sum((n - 1) * s for n, s in zip(shape, strides) if s > 0) + dtype.itemsize
        raw = self.view(int(ptr) + lo, hi - lo, "a kernel argument's memory")
        return numpy.ndarray(shape, dtype, buffer=raw, offset=-lo, strides=strides)


def _replay(work: list) -> None:
    for run in work:
        run()


@contextlib.contextmanager
def simulated_device(devices: int = 1, cc=(9, 0), capacity: int = 1 << 30):
    """Run the block on a simulated device (see the module doc): jitkern arrays live in host
    memory and every kernel runs in the CPU simulator. Yields the :class:`SimulatedDevice`.
    ``capacity``: bytes of memory per device. ``JITKERN_SIMULATE=1`` runs the whole program
    so (:func:`enter_for_process`)."""
    device = SimulatedDevice(devices=devices, cc=cc, capacity=capacity)
    was_simulating = config.settings.simulate
    ACTIVE.append(device)  # before the swap: the runtime's derived state reads active()
    was_exact = config.settings.exact_alloc
    try:
        with driver.use(device):
            config.settings.simulate = True
            memory.set_exact(True)
            try:
                yield device
            finally:
                memory.set_exact(was_exact)
                config.settings.simulate = was_simulating
    finally:
        ACTIVE.remove(device)


def enter_for_process() -> SimulatedDevice:
    """``JITKERN_SIMULATE=1``: the process's driver is a simulated device of one sm_90 GPU
    with 1 GiB, entered as :func:`simulated_device` enters one and never left (the driver
    calls this on its first start instead of loading CUDA's)."""
    device = SimulatedDevice()
    ACTIVE.insert(0, device)  # under any simulated_device() block entered since
    driver.use(device).__enter__()
    config.settings.simulate = True
    memory.set_exact(True)
    return device
