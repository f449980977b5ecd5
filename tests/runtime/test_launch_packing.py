"""Argument packing into the parameter buffer, checked byte for byte (no GPU)."""

import ctypes
import struct

import numpy as np
import pytest

from jitkern import KernelArgumentError
from jitkern.runtime import launch
from jitkern.runtime import launcher as launcher_module


class FakeArray:
    """A minimal __cuda_array_interface__ producer."""

    def __init__(self, ptr):
        self.ptr = ptr

    @property
    def __cuda_array_interface__(self):
        return {"data": (self.ptr, False), "shape": (1,), "typestr": "<f4", "version": 3}


def packed(plan):
    return [ctypes.string_at(ptr, slot.size) for ptr, slot in
            zip(plan._pointers[: plan.nargs], plan.slots)]


def test_python_scalars_follow_cupy_rules():
    args = (7, 2.5, True, 1 + 2j)
    plan = launch.build_plan(args, None)
    plan.pack(args)
    assert packed(plan) == [struct.pack("<q", 7), struct.pack("<d", 2.5), b"\x01",
                            struct.pack("<dd", 1, 2)]


# NumPy scalar type -> (struct format of its bytes, alignment), written out by hand
_LAYOUT = {
    np.int8: ("b", 1), np.uint8: ("B", 1), np.int16: ("h", 2), np.uint16: ("H", 2),
    np.int32: ("i", 4), np.uint32: ("I", 4), np.int64: ("q", 8), np.uint64: ("Q", 8),
    np.float16: ("e", 2), np.float32: ("f", 4), np.float64: ("d", 8),
    np.complex64: ("ff", 4), np.complex128: ("dd", 8), np.bool_: ("?", 1),
}


@pytest.mark.parametrize("dtype", list(_LAYOUT))
def test_numpy_scalars_keep_their_type(dtype, rng):
    fmt, alignment = _LAYOUT[dtype]
    if fmt in ("ff", "dd"):
        real, imag = rng.standard_normal(2)
        value = dtype(complex(real, imag))
        expected = struct.pack("<" + fmt, float(value.real), float(value.imag))
    elif fmt == "?":
        value = dtype(bool(rng.integers(0, 2)))
        expected = struct.pack("<?", bool(value))
    elif fmt in "efd":
        value = dtype(rng.standard_normal())
        expected = struct.pack("<" + fmt, float(value))
    else:
        value = dtype(rng.integers(1, 100) * (-1 if fmt.islower() else 1))
        expected = struct.pack("<" + fmt, int(value))
    plan = launch.build_plan((value,), None)
    plan.pack((value,))
    assert packed(plan) == [expected]
    assert plan._pointers[0] % alignment == 0  # each parameter aligned to its type


def test_arrays_become_pointers_and_alignment_is_kept(rng):
    ptr = int(rng.integers(1, 2**40)) * 256
    args = (np.int8(3), FakeArray(ptr), np.float32(1.5))
    plan = launch.build_plan(args, None)
    plan.pack(args)
    assert packed(plan) == [b"\x03", struct.pack("<Q", ptr), struct.pack("<f", 1.5)]
    base = plan._pointers[0]
    assert [p - base for p in plan._pointers[:3]] == [0, 8, 16]


def test_structured_scalar_is_packed_raw():
    dt = np.dtype([("n", "<i4"), ("s", "<i8", (2,))], align=True)
    value = np.zeros((), dt)[()]
    value["n"] = 5
    value["s"] = (9, -3)
    plan = launch.build_plan((value,), None)
    plan.pack((value,))
    # int32 n at 0, 4 bytes of padding, int64 s[2] at 8 (align=True, by hand)
    assert packed(plan) == [struct.pack("<i4xqq", 5, 9, -3)]
    assert plan.dtypes == (dt,)


def test_pack_if_same_refuses_other_types():
    plan = launch.build_plan((1, 2.0), None)
    assert plan.pack_if_same((3, 4.0))
    assert not plan.pack_if_same((3, np.float32(4.0)))
    assert not plan.pack_if_same((3,))


def test_int_into_4_byte_parameter_is_range_checked():
    plan = launch.build_plan((1,), [4])
    plan.pack((-123,))
    assert packed(plan) == [struct.pack("<i", -123)]
    with pytest.raises(KernelArgumentError, match="does not fit in a 32-bit int"):
        plan.pack((2**31,))


def test_float_into_4_byte_parameter_becomes_float32():
    plan = launch.build_plan((1.5,), [4])
    plan.pack((1.5,))
    assert packed(plan) == [struct.pack("<f", 1.5)]


def test_wrong_count_and_size_are_refused():
    with pytest.raises(KernelArgumentError, match="takes 2 argument"):
        launch.build_plan((1, 2, 3), [8, 8])
    with pytest.raises(KernelArgumentError, match="argument 1: the kernel parameter is 8 bytes"):
        launch.build_plan((1, np.float32(1)), [8, 8])


def test_host_numpy_array_is_refused_with_hint():
    with pytest.raises(TypeError, match=r"jitkern\.asarray"):
        launch.build_plan((np.zeros(3),), None)


def test_unknown_object_is_refused():
    with pytest.raises(TypeError, match="cannot pass a builtins.str"):
        launch.build_plan(("text",), None)


def test_pointer_and_scalar_kinds_checked_against_source_params():
    from jitkern.compiler.strings.c_params import Param

    params = [Param("x", "const float*", True), Param("n", "int", False)]
    with pytest.raises(KernelArgumentError, match=r"argument 0 \(x\).*pointer \(const float\*\)"):
        launch.build_plan((1.0, 3), [8, 4], params)
    with pytest.raises(KernelArgumentError, match=r"argument 1 \(n\).*scalar \(int\)"):
        launch.build_plan((FakeArray(256), FakeArray(512)), None, params)
    # a raw int address is accepted for a pointer (as CuPy does)
    launch.build_plan((4096, 3), [8, 4], params)


@pytest.mark.parametrize("value,expected", [(5, (5, 1, 1)), ((5,), (5, 1, 1)), ((2, 3), (2, 3, 1)),
                                            ((2, 3, 4), (2, 3, 4)), (np.int64(7), (7, 1, 1))])
def test_dim3(value, expected):
    assert launch.dim3(value, "grid") == expected


@pytest.mark.parametrize("value", [0, (1, 0), (1, 2, 3, 4), 1.5, "x", (1.0,), -1])
def test_dim3_refuses(value):
    with pytest.raises(KernelArgumentError, match="grid"):
        launch.dim3(value, "grid")


# ---------------------------------------------------------------------------
# The generated whole-launch function, driven with a recording stand-in for cuLaunchKernel.


class Recorder:
    """Stands in for cuLaunchKernel: records each launch's dims, stream and packed bytes."""

    __name__ = "cuLaunchKernel"

    def __init__(self, plan, err=0):
        self.plan, self.err, self.calls = plan, err, []

    def __call__(self, handle, gx, gy, gz, bx, by, bz, shared_mem, stream, params, extra):
        assert params == self.plan.params_ptr and extra == 0
        self.calls.append(((gx, gy, gz), (bx, by, bz), shared_mem, stream, packed(self.plan)))
        return (self.err,)


def _fast(args, **kwargs):
    plan = launch.build_plan(args, None)
    rec = Recorder(plan)
    dims = {(2,): (2, 1, 1), (64,): (64, 1, 1), (3,): (3, 1, 1), 7: (7, 1, 1)}
    slow_calls = []

    def slow(*a, **k):
        slow_calls.append((a, k))
        return "slow"

    run = _bound(launch.make_fast_launcher(plan, rec, "handle", dims, [0], None, fallback=True,
                                           **kwargs), slow)
    return run, rec, slow_calls


def _bound(launcher, fallback=None):
    """The run function of a generated launcher, bound to ``fallback`` (a kernel object's
    general path: kernels bind their own)."""
    return launcher_module.bind_fast_launcher(launcher, fallback)


def test_fast_launcher_packs_and_launches(rng):
    ptrs = [int(v) * 256 for v in rng.integers(1, 2**30, 2)]
    value = np.float32(rng.standard_normal())
    run, rec, slow = _fast((FakeArray(ptrs[0]), FakeArray(ptrs[1]), value))
    assert run((2,), (64,), (FakeArray(ptrs[1]), FakeArray(ptrs[0]), value)) is None
    assert not slow
    (grid, block, shm, stream, data), = rec.calls
    assert (grid, block, shm, stream) == ((2, 1, 1), (64, 1, 1), 0, 0)
    assert data == [struct.pack("<Q", ptrs[1]), struct.pack("<Q", ptrs[0]), value.tobytes()]


def test_fast_launcher_dims_follow_each_call():
    # The last (grid, block) objects are remembered; another object must not reuse them.
    run, rec, _slow = _fast((1,))
    grid, block = (2,), (64,)
    run(grid, block, (5,))
    run(grid, block, (6,))
    run((3,), block, (7,))
    run(7, block, (8,))
    run(grid, block, (9,))
    assert [c[0] for c in rec.calls] == [(2, 1, 1), (2, 1, 1), (3, 1, 1), (7, 1, 1), (2, 1, 1)]
    assert [c[4][0] for c in rec.calls] == [struct.pack("<q", v) for v in (5, 6, 7, 8, 9)]


def test_fast_launcher_misses_go_to_the_fallback():
    run, rec, slow = _fast((1, 2.0), guards=("a0 > 0",))
    assert run((2,), (64,), (1, 2)) == "slow"  # int where a float was
    assert run((2,), (64,), (1,)) == "slow"  # wrong count
    assert run((5,), (64,), (1, 2.0)) == "slow"  # dims never validated
    assert run((2,), (64,), (-1, 2.0)) == "slow"  # guard fails
    assert run((2,), (64,), (1, 2.0), shared_mem=16) is None
    assert not rec.calls[:-1] and len(rec.calls) == 1 and rec.calls[0][2] == 16
    assert [k for _a, k in slow] == [{"shared_mem": 0, "stream": None}] * 4


def test_fast_launcher_streams():
    streams = [0]
    plan = launch.build_plan((1,), None)
    rec = Recorder(plan)
    run = _bound(launch.make_fast_launcher(
        plan, rec, "h", {(1,): (1, 1, 1)}, streams, None,
        stream_of=lambda s: s * 10, current_stream=lambda: 99))
    assert run((1,), (1,), (1,), 0, None) and rec.calls[-1][3] == 0
    assert run((1,), (1,), (1,), 0, 4) and rec.calls[-1][3] == 40
    streams[0] = 1  # some thread entered `with stream:`: ask for the current one
    assert run((1,), (1,), (1,), 0, None) and rec.calls[-1][3] == 99


def test_fast_launcher_reports_driver_errors():
    plan = launch.build_plan((1,), None)
    rec = Recorder(plan, err=700)
    failures = []
    run = _bound(launch.make_fast_launcher(
        plan, rec, "h", {(1,): (1, 1, 1)}, [0], lambda *a: failures.append(a)))
    assert run((1,), (1,), (1,), 8, None)
    assert failures == [(700, (1, 1, 1), (1, 1, 1), 8, 0)]


class DeviceArray:
    __slots__ = ("_p", "_dev")

    def __init__(self, ptr, dev):
        self._p, self._dev = ptr, dev


launch.register_array_type(DeviceArray, "{a}._p", "{a}._dev")


def test_fast_launcher_checks_context_and_array_devices():
    # With several GPUs: the current context must be the launcher's, and every array on
    # its device; anything else is a miss for the general path to sort out.
    current = ["ctx1"]
    args = (DeviceArray(256, 1), 2.0, DeviceArray(512, 1))
    plan = launch.build_plan(args, None)
    rec = Recorder(plan)
    run = _bound(launch.make_fast_launcher(
        plan, rec, "h", {(1,): (1, 1, 1)}, [0], None, fallback=True,
        device=(1, "ctx1", lambda: (0, current[0]))), lambda *a, **k: "slow")
    assert run((1,), (1,), args) is None and len(rec.calls) == 1
    assert run((1,), (1,), (DeviceArray(256, 0), 2.0, DeviceArray(512, 1))) == "slow"
    assert run((1,), (1,), (DeviceArray(256, 1), 2.0, DeviceArray(512, 0))) == "slow"
    current[0] = "ctx0"
    assert run((1,), (1,), args) == "slow"
    assert len(rec.calls) == 1
    # The general path's device check reads the same template.
    assert launch.device_getter(DeviceArray)(DeviceArray(0, 3)) == 3
