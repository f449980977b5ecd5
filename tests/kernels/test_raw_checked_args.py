"""Raw kernels' launches checked against the C signature, and structs passed by value,
without a GPU: the kernels compile for sm_90 (NVRTC) and a fake driver records what each
cuLaunchKernel would have received (issue 20 part 2, issue 17 part 4)."""

import dataclasses
import struct
import typing

import numpy as np
import pytest

import jitkern
from jitkern import JitkernError, JitkernOverflowError, KernelArgumentError
from jitkern.runtime import driver
from jitkern.runtime.fakedriver import FakeDriver

double3 = np.dtype({"names": ["x", "y", "z"], "formats": [np.float64] * 3})
float5x5 = np.dtype({"names": ["m"], "formats": [(np.float32, (5, 5))]})
mixed = np.dtype([("c", "i1"), ("d", "f8"), ("i", "i4")], align=True)  # C pads as align=True

STRUCTS = r"""
struct float5x5 { float m[25]; };
struct mixed { char c; double d; int i; };
extern "C" __global__ void structs(const double* lhs, double3 rhs, float5x5 f, mixed m,
                                   double* out) {}
"""


@pytest.fixture
def fake():
    with driver.use(FakeDriver()) as d:
        yield d


class Dev:
    """A device array stand-in (``__cuda_array_interface__``) at a random address: the fake
    driver runs no kernel, so what a test checks is what the launch was given."""

    def __init__(self, rng, dtype, n: int = 4):
        self.ptr = int(rng.integers(1, 1 << 40)) * 256
        self.typestr, self.n = np.dtype(dtype).str, n

    @property
    def __cuda_array_interface__(self):
        return {"data": (self.ptr, False), "shape": (self.n,), "typestr": self.typestr,
                "version": 3}


def ptr(a) -> int:
    return a.__cuda_array_interface__["data"][0]


def raw_kernel(params: str, **kw):
    return jitkern.RawKernel(f'extern "C" __global__ void k({params}) {{}}', "k", **kw)


# ---------------------------------------------------------------------------
# Pointers


def test_an_array_of_another_dtype_is_refused_naming_the_parameter(fake, rng):
    k = raw_kernel("const float* x, float* y, int n")
    x, y = Dev(rng, np.float32, 4), Dev(rng, np.float64, 4)
    with pytest.raises(KernelArgumentError) as info:
        k((1,), (32,), (x, y, 4))
    message = str(info.value)
    assert message.startswith("k: argument 1 (y)"), message
    assert "float*" in message and "float32" in message and "of float64" in message
    assert fake.launches == []


def test_a_dtype_change_after_the_first_launch_is_still_refused(fake, rng):
    k = raw_kernel("const float* x, float* y, int n")
    x = Dev(rng, np.float32, 4)
    n = int(rng.integers(1, 1000))
    k((1,), (32,), (x, x, n))
    k((1,), (32,), (x, x, n))  # the generated launcher
    assert len(fake.launches) == 2
    with pytest.raises(KernelArgumentError, match=r"argument 0 \(x\).*of float64"):
        k((1,), (32,), (Dev(rng, np.float64, 4), x, n))
    assert len(fake.launches) == 2


@pytest.mark.parametrize("ctype", ["void*", "char*", "unsigned char*", "const void*"])
def test_untyped_pointers_take_any_array(fake, rng, ctype):
    k = raw_kernel(f"{ctype} p, int n")
    for dtype in (np.float64, np.int16, np.complex64):
        a = Dev(rng, dtype, 3)
        k((1,), (32,), (a, 3))
        assert fake.launches[-1].words(1) == [ptr(a)]


class Allocation:
    """A device allocation with ``.ptr`` (CuPy's MemoryPointer): untyped memory."""

    __slots__ = ("device_id", "ptr", "size")

    def __init__(self, ptr):
        self.ptr, self.device_id, self.size = ptr, 0, 64


def test_a_device_allocation_is_untyped_and_taken_by_any_pointer(fake, rng):
    k = raw_kernel("float* p")
    memory = Allocation(int(rng.integers(1, 1 << 40)) * 256)
    k((1,), (32,), (memory,))
    assert fake.launches[-1].words(1) == [memory.ptr]


def test_jitkern_arrays_are_checked_on_each_call_by_their_dtype(fake, rng):
    k = raw_kernel("const double* x, int n")
    x, x32 = jitkern.empty(4, np.float64), jitkern.empty(4, np.float32)
    n = int(rng.integers(1, 1000))
    k((1,), (32,), (x, n))
    k((1,), (32,), (x, n))  # the generated launcher, which compares x's dtype
    assert [launch.words(1) for launch in fake.launches] == [[ptr(x)]] * 2
    with pytest.raises(KernelArgumentError, match=r"argument 0 \(x\).*of float32"):
        k((1,), (32,), (x32, n))
    assert len(fake.launches) == 2


# ---------------------------------------------------------------------------
# Scalars


INT_TYPES = [("int", np.int32), ("unsigned int", np.uint32), ("short", np.int16),
             ("unsigned char", np.uint8), ("long long", np.int64), ("size_t", np.uint64),
             ("signed char", np.int8), ("unsigned short", np.uint16)]


@pytest.mark.parametrize("ctype,dtype", INT_TYPES)
def test_a_python_int_that_fits_converts_to_the_c_integer(fake, rng, ctype, dtype):
    info = np.iinfo(dtype)
    k = raw_kernel(f"{ctype} v, double* out")
    out = Dev(rng, np.float64, 1)
    for value in (int(info.min), int(info.max), int(rng.integers(info.min, info.max, dtype=dtype))):
        k((1,), (32,), (value, out))
        got = np.frombuffer(fake.launches[-1].raw(0, np.dtype(dtype).itemsize), dtype)[0]
        assert int(got) == value


@pytest.mark.parametrize("ctype,dtype", INT_TYPES)
def test_a_python_int_that_does_not_fit_is_an_overflow_error(fake, rng, ctype, dtype):
    info = np.iinfo(dtype)
    k = raw_kernel(f"{ctype} v, double* out")
    out = Dev(rng, np.float64, 1)
    k((1,), (32,), (0, out))
    k((1,), (32,), (0, out))  # the generated launcher checks the range too
    for value in (int(info.max) + 1, int(info.min) - 1):
        with pytest.raises(JitkernOverflowError) as exc:
            k((1,), (32,), (value, out))
        assert isinstance(exc.value, OverflowError) and isinstance(exc.value, JitkernError)
        message = str(exc.value)
        assert message.startswith("k: argument 0 (v)") and str(value) in message
        assert ctype in message
    assert len(fake.launches) == 2


def test_a_python_float_into_an_int_parameter_is_refused(fake, rng):
    k = raw_kernel("int n, float a")
    value = float(rng.random()) + 0.5
    with pytest.raises(KernelArgumentError) as info:
        k((1,), (32,), (value, 1.0))
    message = str(info.value)
    assert "argument 0 (n)" in message and "int (int32)" in message and "Python float" in message
    assert fake.launches == []


def test_python_numbers_convert_to_floating_parameters(fake, rng):
    k = raw_kernel("float a, double b, float c")
    a, b, n = float(rng.random()), float(rng.random()), int(rng.integers(-1000, 1000))
    k((1,), (32,), (a, b, n))
    launch = fake.launches[-1]
    assert struct.unpack("<f", launch.raw(0, 4))[0] == np.float32(a)
    assert struct.unpack("<d", launch.raw(1, 8))[0] == b
    assert struct.unpack("<f", launch.raw(2, 4))[0] == n


@pytest.mark.parametrize("ctype,value", [("float", np.float64(1.5)), ("double", np.float32(1.5)),
                                         ("int", np.float32(2)), ("bool", np.int8(1))])
def test_a_numpy_scalar_of_another_kind_or_width_is_refused(fake, ctype, value):
    k = raw_kernel(f"{ctype} v")
    with pytest.raises(KernelArgumentError) as info:
        k((1,), (32,), (value,))
    message = str(info.value)
    assert f"argument 0 (v): the kernel expects {ctype}" in message, message
    assert f"numpy.{type(value).__name__}" in message


@pytest.mark.parametrize("ctype,have,want", [("int", np.int64, np.int32),
                                             ("long long", np.int32, np.int64),
                                             ("unsigned short", np.uint64, np.uint16),
                                             ("size_t", np.int16, np.uint64)])
def test_a_numpy_integer_of_another_width_converts_range_checked(fake, rng, ctype, have, want):
    # CuPy packs a NumPy scalar as its own bytes, so library code passes numpy.int64 indices
    # to int parameters: jitkern converts the value where it fits, and refuses where not
    k = raw_kernel(f"{ctype} v")
    lo, hi = max(np.iinfo(have).min, np.iinfo(want).min), min(np.iinfo(have).max, np.iinfo(want).max)
    for _ in range(2):  # the general path, then the generated launcher
        value = have(rng.integers(lo, hi, endpoint=True))
        k((1,), (32,), (value,))
        got = np.frombuffer(fake.launches[-1].raw(0, want().itemsize), want)[0]
        assert int(got) == int(value)
    if np.iinfo(have).max > np.iinfo(want).max:
        with pytest.raises(OverflowError, match=r"argument 0 \(v\).*does not fit"):
            k((1,), (32,), (have(np.iinfo(want).max) + have(1),))


def test_signedness_of_a_numpy_integer_of_the_right_width_is_taken(fake, rng):
    k = raw_kernel("unsigned int v")
    value = np.int32(rng.integers(0, 2**31 - 1))
    k((1,), (32,), (value,))
    assert np.frombuffer(fake.launches[-1].raw(0, 4), np.int32)[0] == value


def test_an_array_for_a_scalar_and_a_count_mismatch_are_refused(fake, rng):
    k = raw_kernel("const float* x, int n")
    x = Dev(rng, np.float32, 2)
    with pytest.raises(KernelArgumentError, match=r"argument 1 \(n\).*scalar \(int\)"):
        k((1,), (32,), (x, x))
    with pytest.raises(KernelArgumentError, match=r"k takes 2 argument\(s\).*but 3 were given"):
        k((1,), (32,), (x, 1, 2))


# ---------------------------------------------------------------------------
# check_args=False, templates, unparseable signatures


def test_check_args_false_launches_what_it_is_given(fake, rng):
    k = raw_kernel("const float* x, int n", check_args=False)
    x = Dev(rng, np.float64, 2)
    k((1,), (32,), (x, 3))
    assert fake.launches[-1].words(1) == [ptr(x)]
    module = jitkern.RawModule(code='extern "C" __global__ void k(float* x) {}')
    with pytest.raises(KernelArgumentError, match="of float64"):
        module.get_function("k")((1,), (32,), (x,))
    module.get_function("k", check_args=False)((1,), (32,), (x,))
    unchecked = jitkern.RawModule(code='extern "C" __global__ void k(float* x) {}',
                                  check_args=False)
    unchecked.get_function("k")((1,), (32,), (x,))
    assert [launch.words(1) for launch in fake.launches[-2:]] == [[ptr(x)], [ptr(x)]]


def test_check_args_must_be_a_bool():
    with pytest.raises(jitkern.JitkernTypeError, match="check_args"):
        raw_kernel("int n", check_args="no")


TEMPLATE = r"""
template<typename T, int N>
__global__ void scale(const T* x, T* y, T a, int n) {}
"""


def test_name_expression_templates_are_checked_as_instantiated(fake, rng):
    module = jitkern.RawModule(code=TEMPLATE, name_expressions=["scale<double, 2>",
                                                                "scale<float, 4>"])
    k = module.get_function("scale<double, 2>")
    x32, x64 = Dev(rng, np.float32, 4), Dev(rng, np.float64, 4)
    with pytest.raises(KernelArgumentError) as info:
        k((1,), (32,), (x32, x32, 1.0, 4))
    assert "argument 0 (x)" in str(info.value) and "const double*" in str(info.value)
    a = float(rng.random())
    k((1,), (32,), (x64, x64, a, 4))
    assert struct.unpack("<d", fake.launches[-1].raw(2, 8))[0] == a
    f = module.get_function("scale<float, 4>")
    with pytest.raises(KernelArgumentError, match=r"argument 3 \(n\).*Python float"):
        f((1,), (32,), (x32, x32, 1.0, 4.0))
    f((1,), (32,), (x32, x32, a, 4))
    assert struct.unpack("<f", fake.launches[-1].raw(2, 4))[0] == np.float32(a)


MACRO = r"""
#define ARGS const float* x, int n
extern "C" __global__ void k(ARGS) {}
"""


def test_a_signature_behind_a_macro_is_checked_as_compiled(fake, rng):
    k = jitkern.RawKernel(MACRO, "k")
    x = Dev(rng, np.float32, 2)
    k((1,), (32,), (x, 3))
    assert fake.launches[-1].words(1) == [ptr(x)]
    with pytest.raises(KernelArgumentError, match=r"k takes 2 argument\(s\).*but 1 were given"):
        k((1,), (32,), (x,))
    # the compiler's types, though the source spells them through a macro (names: p0, p1)
    with pytest.raises(KernelArgumentError,
                       match=r"k: argument 0 \(p0\): the kernel expects const float\*, a pointer "
                             r"to float32, got .* of float64"):
        k((1,), (32,), (Dev(rng, np.float64, 2), 3))
    with pytest.raises(KernelArgumentError, match=r"argument 1 \(p1\): the kernel expects int"):
        k((1,), (32,), (x, 1j))


# ---------------------------------------------------------------------------
# Structs by value


def test_numpy_records_are_copied_by_value_with_their_bytes(fake, rng):
    k = jitkern.RawKernel(STRUCTS, "structs")
    lhs, out = Dev(rng, np.float64, 3), Dev(rng, np.float64, 3)
    rhs = rng.random(3).view(double3)
    f = rng.random(25).astype(np.float32).view(float5x5)
    m = np.zeros(1, mixed)
    m["c"], m["d"], m["i"] = rng.integers(-100, 100), rng.random(), rng.integers(-1000, 1000)
    for r, ff, mm in ((rhs, f, m), (rhs[0], f[0], m[0])):  # size-1 arrays, numpy.void
        k((1,), (32,), (lhs, r, ff, mm, out))
        launch = fake.launches[-1]
        assert launch.raw(1, 24) == rhs.tobytes()
        assert launch.raw(2, 100) == f.tobytes()
        assert launch.raw(3, 24) == m.tobytes()
        assert launch.words(5)[4] == ptr(out)


def test_a_numpy_void_is_read_again_on_every_launch(fake, rng):
    k = jitkern.RawKernel(STRUCTS, "structs")
    lhs, out = Dev(rng, np.float64, 3), Dev(rng, np.float64, 3)
    f, m = rng.random(25).astype(np.float32).view(float5x5), np.zeros(1, mixed)
    rhs = rng.random(3).view(double3)
    record = rhs[0]  # a view of rhs: changing rhs changes what it holds
    for _ in range(3):  # the general path, then the generated launcher, twice
        rhs["x"], rhs["y"], rhs["z"] = rng.random(3)
        k((1,), (32,), (lhs, record, f[0], m[0], out))
        assert fake.launches[-1].raw(1, 24) == struct.pack("<3d", *rhs[0].item())
    for _ in range(2):  # a new record each launch
        fresh = rng.random(3).view(double3)[0]
        k((1,), (32,), (lhs, fresh, f[0], m[0], out))
        assert fake.launches[-1].raw(1, 24) == struct.pack("<3d", *fresh.item())


@dataclasses.dataclass(frozen=True)
class Double3:
    x: float
    y: float
    z: float


class Mixed(typing.NamedTuple):
    c: int
    d: float
    i: int


def test_dataclasses_and_namedtuples_pack_as_the_c_struct(fake, rng):
    src = r"""
    struct mixed { char c; double d; int i; };
    extern "C" __global__ void k(double3 v, mixed m, int n) {}
    """
    k = jitkern.RawKernel(src, "k")
    v = Double3(*rng.random(3).tolist())
    m = Mixed(int(rng.integers(-100, 100)), float(rng.random()), int(rng.integers(-99, 99)))
    n = int(rng.integers(0, 100))
    for _ in range(2):  # the general path, then the generated launcher
        k((1,), (32,), (v, m, n))
        launch = fake.launches[-1]
        assert launch.raw(0, 24) == np.array([(v.x, v.y, v.z)], double3).tobytes()
        got = np.frombuffer(launch.raw(1, 24), mixed)[0]  # (NumPy leaves its padding unset)
        assert (int(got["c"]), float(got["d"]), int(got["i"])) == tuple(m)
        assert struct.unpack("<i", launch.raw(2, 4))[0] == n


def test_a_record_of_the_wrong_size_is_refused_naming_the_parameter(fake, rng):
    k = jitkern.RawKernel(STRUCTS, "structs")
    lhs = Dev(rng, np.float64, 3)
    small = np.zeros(1, np.dtype({"names": ["m"], "formats": [(np.float32, (4, 6))]}))
    with pytest.raises(KernelArgumentError) as info:
        k((1,), (32,), (lhs, np.zeros(1, double3), small, np.zeros(1, mixed), lhs))
    message = str(info.value)
    assert message.startswith("structs: argument 2 (f)"), message
    assert "float5x5" in message and "m[24]" in message
    assert fake.launches == []


def test_a_record_whose_fields_disagree_names_the_field(fake, rng):
    k = jitkern.RawKernel(STRUCTS, "structs")
    lhs = Dev(rng, np.float64, 3)
    packed = np.zeros(1, [("c", "i1"), ("d", "f8"), ("i", "i4")])  # no C padding
    with pytest.raises(KernelArgumentError) as info:
        k((1,), (32,), (lhs, np.zeros(1, double3), np.zeros(1, float5x5), packed, lhs))
    message = str(info.value)
    assert "argument 3 (m)" in message and "field d (double at offset 8)" in message
    assert "'d' (float64 at offset 1)" in message


def test_a_record_is_checked_field_by_field_though_a_macro_spells_the_signature(fake):
    src = r"""
    #define PARAMS double3 v, int n
    extern "C" __global__ void k(PARAMS) {}
    """
    k = jitkern.RawKernel(src, "k")
    v = np.zeros(1, double3)
    k((1,), (32,), (v, 1))
    assert fake.launches[-1].raw(0, 24) == v.tobytes()
    wrong = np.zeros(1, [("x", "f8"), ("y", "f8")])
    with pytest.raises(KernelArgumentError, match=r"struct double3 \(24 bytes\).*fields end "
                                                  r"before the struct's field z"):
        k((1,), (32,), (wrong, 1))


def test_host_arrays_that_are_not_one_record_keep_the_host_memory_error(fake, rng):
    k = jitkern.RawKernel(STRUCTS, "structs")
    lhs = Dev(rng, np.float64, 3)
    args = [lhs, np.zeros(1, double3), np.zeros(1, float5x5), np.zeros(1, mixed), lhs]
    k((1,), (32,), tuple(args))
    for bad in (np.zeros(2, double3), np.zeros(1, np.float64), np.zeros(3)):
        args[1] = bad
        with pytest.raises(KernelArgumentError, match="lives in host memory"):
            k((1,), (32,), tuple(args))
    assert len(fake.launches) == 1


def test_a_dataclass_with_a_missing_field_or_a_float_for_an_int_is_refused(fake):
    src = 'struct mixed { char c; double d; int i; };\n' \
          'extern "C" __global__ void k(mixed m) {}'
    k = jitkern.RawKernel(src, "k")

    @dataclasses.dataclass(frozen=True)
    class TwoFields:
        c: int
        d: float

    with pytest.raises(KernelArgumentError, match=r"argument 0 \(m\).*field i \(int\)"):
        k((1,), (32,), (TwoFields(1, 2.0),))
    with pytest.raises(KernelArgumentError, match=r"field c of mixed to be char"):
        k((1,), (32,), (Mixed(1.5, 2.0, 3),))
    assert fake.launches == []


@pytest.mark.parametrize("bad, kind", [("text", "str"), (None, "NoneType"), (1 << 40, "int")])
def test_a_field_of_the_wrong_kind_at_a_later_launch_names_the_field(fake, rng, bad, kind):
    src = 'struct mixed { char c; double d; int i; };\n' \
          'extern "C" __global__ void k(mixed m) {}'
    k = jitkern.RawKernel(src, "k")
    good = Mixed(int(rng.integers(-100, 100)), float(rng.random()), int(rng.integers(-99, 99)))
    for _ in range(3):  # the general path, then the generated launcher
        k((1,), (32,), (good,))
    for _ in range(2):  # the generated launcher misses; the general path names the field
        with pytest.raises(KernelArgumentError) as info:
            k((1,), (32,), (good._replace(i=bad),))
        message = str(info.value)
        assert message.startswith("k: argument 0 (m)"), message
        assert "field i of mixed to be int (int32)" in message and f"({kind})" in message
    assert len(fake.launches) == 3
    k((1,), (32,), (good,))  # and the kernel launches again
    got = np.frombuffer(fake.launches[-1].raw(0, 24), mixed)[0]
    assert (int(got["c"]), float(got["d"]), int(got["i"])) == tuple(good)
