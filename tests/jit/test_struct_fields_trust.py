"""Structs by value refuse bad field values naming the argument and the field, accept fields
named after C++ keywords (renamed in the generated C++ only), explain why NumPy's aligned
layout of a complex field is not C's, and an export's manifest with a malformed record is
refused when it is loaded (issue 27). Launches without a GPU go through the fake driver,
the runtime's one seam; the simulator runs the same kernels."""

import dataclasses
import json
import re
import typing

import numpy as np
import pytest

import jitkern
from jitkern import jit
from jitkern.errors import JitkernOverflowError, JitkernTypeError, KernelArgumentError
from jitkern.runtime import driver
from jitkern.runtime.fakedriver import FakeDriver
from jitkern.toolchain import nvrtc


@dataclasses.dataclass(frozen=True)
class Pair:
    x: np.float32
    n: np.int32


class PairTuple(typing.NamedTuple):
    x: np.float32
    n: np.int32


@jitkern.rawkernel()
def combine(p, out):
    out[0] = p.x + p.n


class DevArray:
    """A float32 device array stand-in for the fake driver (which runs nothing)."""

    def __init__(self, rng, n=4):
        self.ptr, self.n = int(rng.integers(1, 1 << 30)) * 256, n

    @property
    def __cuda_array_interface__(self):
        return {"data": (self.ptr, False), "shape": (self.n,), "typestr": "<f4",
                "strides": None, "version": 3}


INT32 = "integers from -2147483648 to 2147483647"
BAD_FIELDS = [
    ("a str", lambda c: c("1.5", 1), KernelArgumentError,
     "struct {c}: field 'x' (float32) takes a number, got '1.5' (str)"),
    ("None", lambda c: c(None, 1), KernelArgumentError,
     "struct {c}: field 'x' (float32) takes a number, got None (NoneType)"),
    ("2**70", lambda c: c(1.0, 2**70), JitkernOverflowError,
     f"struct {{c}}: field 'n' (int32) takes {INT32}, got 1180591620717411303424 (int)"),
    ("a float in an int", lambda c: c(1.0, 2.5), KernelArgumentError,
     "struct {c}: field 'n' (int32) takes an int, got 2.5 (float)"),
    ("a wider NumPy int", lambda c: c(1.0, np.int64(2**40)), JitkernOverflowError,
     f"struct {{c}}: field 'n' (int32) takes {INT32}, got np.int64(1099511627776) (int64)"),
]


@pytest.mark.parametrize("cls", [Pair, PairTuple])
@pytest.mark.parametrize("case", BAD_FIELDS, ids=[c[0] for c in BAD_FIELDS])
def test_a_jit_kernel_names_the_argument_and_field_in_the_simulator(case, cls):
    _, make, error, words = case
    out = np.full(1, np.nan, np.float32)
    with pytest.raises(error) as info:
        combine.simulate[1, 1](make(cls), out)
    assert str(info.value) == "combine: argument 0: " + words.format(c=cls.__qualname__)
    assert np.isnan(out[0])  # nothing ran


@pytest.mark.parametrize("case", BAD_FIELDS, ids=[c[0] for c in BAD_FIELDS])
def test_a_jit_kernel_names_the_argument_and_field_at_a_gpu_launch(case, rng):
    _, make, error, words = case
    with driver.use(FakeDriver(cc=(9, 0))) as fake:
        out = DevArray(rng)
        for _ in range(3):  # the general path, then the generated launcher's
            combine[1, 1](Pair(np.float32(rng.standard_normal()), 3), out)
        launched = len(fake.launches)
        with pytest.raises(error) as info:
            combine[1, 1](make(Pair), out)
        assert len(fake.launches) == launched
    assert str(info.value) == "combine: argument 0: " + words.format(c="Pair")


def test_a_jit_kernel_launch_names_a_python_int_that_does_not_fit(rng):
    @jitkern.rawkernel()
    def store(n, out):
        out[0] = n

    with driver.use(FakeDriver(cc=(9, 0))):
        out = DevArray(rng)
        store[1, 1](5, out)
        with pytest.raises(JitkernOverflowError) as info:
            store[1, 1](2**70, out)
    assert str(info.value) == ("store: argument 0: 1180591620717411303424 does not fit the "
                               "parameter's int64")
    with pytest.raises(JitkernOverflowError) as info:
        store.simulate[1, 1](2**70, np.zeros(1))
    assert str(info.value) == ("store: argument 0: 1180591620717411303424 does not fit the "
                               "parameter's int64")


SUM_PAIR = jitkern.ElementwiseKernel("P p, float32 v", "float32 y", "y = p.x + p.n + v",
                                     "sum_pair")


@pytest.mark.parametrize("case", BAD_FIELDS[:3], ids=[c[0] for c in BAD_FIELDS[:3]])
def test_an_elementwise_kernel_names_the_argument_and_field(case, rng):
    _, make, _error, words = case
    bad = make(Pair)
    with pytest.raises(JitkernTypeError) as info:
        SUM_PAIR.simulate(bad, np.ones(3, np.float32))
    assert str(info.value) == "sum_pair: argument 'p': " + words.format(c="Pair")
    with driver.use(FakeDriver(cc=(9, 0))):
        out = DevArray(rng, 3)
        with pytest.raises(JitkernTypeError) as info:
            SUM_PAIR(bad, out, out)
    assert str(info.value) == "sum_pair: argument 0: " + words.format(c="Pair")


def test_an_elementwise_kernel_still_converts_a_float_field_as_numpy_does(rng):
    n = float(rng.uniform(-1e3, 1e3))
    got = SUM_PAIR.simulate(Pair(np.float32(0.5), n), np.zeros(2, np.float32))
    np.testing.assert_array_equal(got, np.float32(0.5) + np.int32(int(n)))


# -- fields named after C++ keywords -------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Inner:
    int: np.int32
    new_: np.float32  # taken: the outer rule must not clash with it inside Inner


@dataclasses.dataclass(frozen=True)
class Keywords:
    new: np.float32
    new_: np.float64  # a field already spelled like new's rename: new becomes new__
    inner: Inner
    class_: np.int32
    float: np.float64


@jitkern.rawkernel()
def keyword_sum(p, out):
    i = jit.threadIdx.x
    out[i] = p.new * 3 + p.new_ + p.inner.int + p.inner.new_ + p.class_ + p.float * i


def random_keywords(rng):
    return Keywords(np.float32(rng.standard_normal()), float(rng.standard_normal()),
                    Inner(np.int32(rng.integers(-99, 99)), np.float32(rng.standard_normal())),
                    np.int32(rng.integers(-99, 99)), float(rng.standard_normal()))


def python_keyword_sum(p, i):
    return (float(p.new) * 3 + p.new_ + int(p.inner.int) + float(p.inner.new_)
            + int(p.class_) + p.float * i)


def test_keyword_fields_run_as_python_computes(launch, rng):
    p = random_keywords(rng)
    out = launch.poisoned(8, np.float64)
    launch(keyword_sum)[1, 8](p, out)
    launch.synchronize()
    want = [python_keyword_sum(p, i) for i in range(8)]
    np.testing.assert_allclose(launch.get(out), want, rtol=1e-6)


def test_keyword_fields_are_renamed_in_the_generated_cpp_only(rng):
    p = random_keywords(rng)
    source = keyword_sum.emit(p, np.zeros(8))
    assert re.search(r"float new__;\s*char _jk_pad1\[4\];\s*double new_;", source)
    assert re.search(r"int int_;\s*float new_;", source)  # Inner: only int is renamed
    assert "int class_;" in source and "double float_;" in source
    assert "p.new__ * " in source or "(p.new__" in source
    keyword_sum.inspect(p, np.zeros(8), arch="sm_90")  # NVRTC compiles it (no GPU needed)


KEYWORD_RECORD = np.dtype([("new", "f4"), ("delete", "i4"), ("x", "f8")], align=True)
SCALE_RECORD = jitkern.ElementwiseKernel(
    "R r, float64 v", "float64 y", "y = v * r.new_ + r.delete_ + r.x", "scale_record")


def test_an_elementwise_kernel_reads_keyword_fields_by_their_cpp_names(rng):
    r = np.zeros((), KEYWORD_RECORD)
    r["new"], r["delete"], r["x"] = rng.standard_normal(), rng.integers(-9, 9), rng.random()
    v = rng.standard_normal(5)
    got = SCALE_RECORD.simulate(r[()], v)
    np.testing.assert_allclose(got, v * np.float32(r["new"]) + r["delete"] + r["x"], rtol=1e-12)
    assert "new_" in SCALE_RECORD.inspect(r[()], v, arch="sm_90").source


def test_a_raw_kernel_maps_keyword_fields_onto_the_sources_cpp_names(rng):
    k = jitkern.RawKernel(r"""
struct I { int int_; float new_; };
struct K { float new__; double new_; I inner; int class_; double float_; };
extern "C" __global__ void keywords(K p, float* out) { out[0] = p.new__; }
""", "keywords")
    p = random_keywords(rng)
    with driver.use(FakeDriver(cc=(9, 0))) as fake:
        k((1,), (1,), (p, DevArray(rng)))
        raw = fake.launches[-1].raw(0, 40)
    want = np.zeros((), jitkern.records.record_dtype(Keywords))
    want["new"], want["new_"], want["class_"], want["float"] = p.new, p.new_, p.class_, p.float
    want["inner"]["int"], want["inner"]["new_"] = p.inner.int, p.inner.new_
    assert raw == want.tobytes()


def test_an_exports_header_declares_keyword_fields_by_their_cpp_names(tmp_path, rng):
    p = random_keywords(rng)
    written = keyword_sum.export(tmp_path / "kw", p, np.zeros(8), arch=("sm_90",),
                                 format="cubin")
    with open(written.manifest_path[:-len(".json")] + ".h") as f:
        header = f.read()
    assert "float new__;" in header and "JITKERN_EXPORT_OFFSETOF(keyword_sum_p, new__) == 0" in header
    probe = ('extern "C" __global__ void probe(jitkern_export::keyword_sum_p p, double* o) '
             "{ o[0] = p.new__ + p.new_ + p.inner.int_ + p.class_ + p.float_; }")
    nvrtc.compile_source(header + "\n" + probe, arch="sm_90", program_name="kw_probe.cu")


# -- a complex field in NumPy's aligned layout -------------------------------------------------


@jitkern.rawkernel()
def complex_field(p, out):
    out[0] = p.z.real * 2 + p.z.imag + p.a


def test_a_complex_field_in_numpys_aligned_layout_is_refused_with_the_true_reason(rng):
    numpy_aligned = np.dtype([("a", "i1"), ("z", "c8")], align=True)  # z at 4, C puts it at 8
    with pytest.raises(KernelArgumentError) as info:
        complex_field.simulate[1, 1](np.zeros((), numpy_aligned)[()], np.zeros(1))
    message = str(info.value)
    assert message.startswith("complex_field() argument 'p': structured dtype")
    assert "field 'z' is at offset 4, not a multiple of its alignment 8 in C" in message
    assert "NumPy's align=True aligns a complex field to its parts, C's complex<T> to its whole" \
           in message
    assert "make the dtype with align=True" not in message  # it was made so: no such advice
    advice = re.search(r"give the fields C's offsets, numpy\.dtype\((\{.*?\})\)", message)
    c_layout = np.dtype(eval(advice.group(1)))  # noqa: S307 - the dict the message prints
    assert c_layout.fields["z"][1] == 8 and c_layout.itemsize == 16
    r = np.zeros((), c_layout)
    r["a"], r["z"] = rng.integers(-9, 9), complex(*rng.standard_normal(2))
    out = np.full(1, np.nan)
    complex_field.simulate[1, 1](r[()], out)  # the advice is a layout kernels take
    z = complex(r["z"])
    np.testing.assert_allclose(out[0], np.float32(z.real) * 2 + np.float32(z.imag) + int(r["a"]),
                               rtol=1e-6)


def test_an_unaligned_dtype_still_gets_the_align_true_advice():
    packed = np.dtype([("a", "i1"), ("z", "f8")])
    with pytest.raises(KernelArgumentError) as info:
        complex_field.simulate[1, 1](np.zeros((), packed)[()], np.zeros(1))
    assert "field 'z' is at offset 1, not a multiple of its alignment 8 in C; make the dtype " \
           "with align=True" in str(info.value)
    with pytest.raises(JitkernTypeError) as info:
        SCALE_RECORD.inspect(np.zeros((), packed)[()], np.zeros(2), arch="sm_90")
    assert "field 'z' is at offset 1" in str(info.value)
    assert "make the dtype with align=True" in str(info.value)


# -- an export's manifest: a struct's record is checked when it is loaded ----------------------


@pytest.fixture(scope="module")
def pair_export(tmp_path_factory):
    base = tmp_path_factory.mktemp("pair") / "combine"
    return combine.export(base, Pair(np.float32(1), np.int32(2)), np.zeros(1, np.float32),
                          arch=("sm_90",), format="cubin")


def _rewritten(written, tmp_path, change):
    with open(written.manifest_path) as f:
        manifest = json.load(f)
    change(manifest["entries"][0])
    folder = written.manifest_path.rsplit("/", 1)[0]
    path = f"{folder}/bad_{abs(hash(str(manifest)))}.json"
    with open(path, "w") as f:
        json.dump(manifest, f)
    return path


def _arg(entry):
    return entry["call"]["args"][0]


MALFORMED = [
    ("a str for the record", lambda e: _arg(e).update(record="float x; int n;"),
     "call.args[0]'s 'record' must be a record's descr (a list), got str"),
    ("an unknown type", lambda e: _arg(e).update(record=[["x", "<f4"], ["n", "zz"]]),
     "call.args[0].record is not a record layout"),
    ("a shorter record", lambda e: _arg(e).update(record=[["x", "<f4"]]),
     "call.args[0].record lays out 4 bytes, but the argument is 8"),
    ("an object field", lambda e: _arg(e).update(record=[["x", "|O"]], itemsize=8),
     "call.args[0].record: field 'x' is object, no type kernels take"),
    ("no fields", lambda e: _arg(e).update(record=[["", "|V8"]]),
     "call.args[0].record"),
    ("a size unlike the parameter's", lambda e: _arg(e).update(itemsize=16),
     "call.args[0]: a struct of 16 bytes for a parameter of 8 bytes"),
    ("no itemsize", lambda e: _arg(e).pop("itemsize"), "call.args[0] has no 'itemsize'"),
    ("an unknown argument type", lambda e: _arg(e).update(type="record"),
     "call.args[0]'s 'type' must be one of ['array', 'scalar', 'struct'], got 'record'"),
    ("a param's record", lambda e: e["params"][0].update(record=[["x", "<f8"], ["y", "<f8"]]),
     "params[0].record lays out 16 bytes, but the argument is 8"),
    ("a param's alignment", lambda e: e["params"][0].update(align=3),
     "params[0].align must be a power of two, got 3"),
    ("an array's dtype", lambda e: e["call"]["args"][1].update(dtype="float33"),
     "call.args[1]'s 'dtype' must be a dtype kernels take"),
]


@pytest.mark.parametrize("case", MALFORMED, ids=[c[0] for c in MALFORMED])
def test_a_malformed_struct_record_is_refused_when_the_export_is_loaded(pair_export, tmp_path,
                                                                        case):
    _, change, words = case
    path = _rewritten(pair_export, tmp_path, change)
    with pytest.raises(jitkern.JitkernValueError) as info:
        jitkern.load(path)
    assert words in str(info.value) and path in str(info.value)
    assert "entries[0] (combine)" in str(info.value)


def test_the_unchanged_export_loads_and_names_a_bad_field_at_its_launch(pair_export, rng):
    loaded = jitkern.load(pair_export.manifest_path).combine
    with driver.use(FakeDriver(cc=(9, 0))):
        loaded[1, 1](Pair(np.float32(1.5), np.int32(2)), DevArray(rng))
        with pytest.raises(JitkernOverflowError) as info:
            loaded[1, 1](Pair(np.float32(1.5), 2**40), DevArray(rng))
    assert str(info.value) == ("combine() argument 'p': struct Pair: field 'n' (int32) takes "
                               f"{INT32}, got 1099511627776 (int)")
