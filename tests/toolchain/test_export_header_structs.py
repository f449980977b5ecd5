"""The C++ header of an export declares a struct parameter with the record's exact layout
(issue 20 part 1): a struct of the record's size and alignment with each field at its
NumPy offset, checked by the header's own static_asserts, and here by NVRTC compiling the
header for a named arch (no GPU) with static_asserts derived from NumPy alone."""

import dataclasses
import json

import numpy as np
import pytest

import jitkern
from jitkern import jit
from jitkern.errors import CompileError
from jitkern.toolchain import export as export_module
from jitkern.toolchain import nvrtc


@dataclasses.dataclass(frozen=True)
class Spin:
    up: np.uint16
    weight: np.float32


@dataclasses.dataclass(frozen=True)
class Particle:
    alive: bool
    charge: np.int8
    z: np.complex64
    spin: Spin
    mass: np.float64
    tag: np.int32


@jit.rawkernel()
def weigh(x, p, out):
    i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    if i < x.size:
        out[i] = x[i] * p.mass + p.spin.weight + p.charge + p.z.real


# an ElementwiseKernel record scalar: a subarray field, and a tail NumPy pads
GRID = np.dtype([("origin", "f8"), ("step", "f4", (3,)), ("n", "i2")], align=True)
shift = jitkern.ElementwiseKernel("float64 x, G g", "float64 y",
                                  "y = x * g.step[0] + g.origin + g.n;", name="header_shift")


def c_alignment(dt):
    """C's alignment of a NumPy dtype: a record's is its widest field's, complex<T>'s is
    its size (NumPy says the part's)."""
    dt = dt.base
    if dt.fields is not None:
        return max(c_alignment(f) for f, *_ in dt.fields.values())
    return dt.itemsize if dt.kind == "c" else dt.alignment


def numpy_asserts(name, dt):
    """static_asserts of struct ``name`` (and its nested structs, ``name_field``) against
    NumPy's layout of ``dt``."""
    out = [f"static_assert(sizeof({name}) == {dt.itemsize}, \"size\");",
           f"static_assert(alignof({name}) == {c_alignment(dt)}, \"align\");"]
    for field, (fdt, offset, *_rest) in dt.fields.items():
        out.append(f"static_assert(JITKERN_EXPORT_OFFSETOF({name}, {field}) == {offset}, \"{field}\");")
        if fdt.base.fields is not None:
            out += numpy_asserts(f"{name}_{field}", fdt.base)
    return out


def compile_with(header: str, asserts, probe: str) -> None:
    source = "\n".join([header, "namespace jitkern_export {", *asserts, "}", probe])
    nvrtc.compile_source(source, arch="sm_90", program_name="header_check.cu")


def particle_dtype():
    spin = np.dtype({"names": ["up", "weight"], "formats": ["u2", "f4"], "offsets": [0, 4],
                     "itemsize": 8})
    return np.dtype({"names": ["alive", "charge", "z", "spin", "mass", "tag"],
                     "formats": ["?", "i1", "c8", spin, "f8", "i4"],
                     "offsets": [0, 1, 8, 16, 24, 32], "itemsize": 40})


@pytest.fixture(scope="module")
def weigh_export(tmp_path_factory):
    base = tmp_path_factory.mktemp("header") / "weigh"
    p = Particle(True, np.int8(1), np.complex64(1), Spin(np.uint16(1), np.float32(1)), 1.0,
                 np.int32(1))
    return weigh.export(base, np.zeros(8), p, np.zeros(8), arch=("sm_90",), format="cubin")


def header_of(written) -> str:
    with open(written.manifest_path[:-len(".json")] + ".h") as f:
        return f.read()


def test_the_manifest_records_the_struct_parameter_layout(weigh_export):
    with open(weigh_export.manifest_path) as f:
        param = json.load(f)["entries"][0]["params"][1]
    assert (param["name"], param["kind"], param["size"]) == ("p", "value", 40)
    assert param["align"] == 8
    got = np.lib.format.descr_to_dtype([tuple(e) if isinstance(e[1], str) else
                                        (e[0], [tuple(x) for x in e[1]]) for e in param["record"]])
    want = particle_dtype()
    for field in want.names:
        assert got.fields[field][1] == want.fields[field][1], field
    assert got.itemsize == want.itemsize


def test_the_header_declares_the_jit_struct_as_numpy_lays_it_out(weigh_export, rng):
    header = header_of(weigh_export)
    assert "struct alignas(8) weigh_p {" in header
    assert "jitkern_export::weigh_p p," in header
    assert "opaque<40" not in header  # no longer an opaque block
    scale = float(rng.uniform(1, 2))
    probe = ('extern "C" __global__ void probe(jitkern_export::weigh_p p, double* out) '
             f"{{ out[0] = p.mass * {scale!r} + p.spin.weight + p.z.imag + p.charge; }}")
    compile_with(header, numpy_asserts("weigh_p", particle_dtype()), probe)


def test_the_header_declares_an_elementwise_record_scalar(tmp_path, rng):
    written = shift.export(tmp_path / "shift", np.zeros(16), np.zeros((), GRID)[()],
                           arch=("sm_90",), format="cubin")
    header = header_of(written)
    assert "float step[3];" in header and "struct alignas(8) header_shift_g {" in header
    n = int(rng.integers(1, 100))
    probe = ('extern "C" __global__ void probe(jitkern_export::header_shift_g g, float* out) '
             f"{{ out[0] = g.step[2] + g.n * {n}; }}")
    compile_with(header, numpy_asserts("header_shift_g", GRID), probe)


def test_a_wrong_alignment_in_the_manifest_fails_the_headers_own_check(weigh_export):
    with open(weigh_export.manifest_path) as f:
        manifest = json.load(f)
    manifest["entries"][0]["params"][1]["align"] = 4  # the struct holds a double
    with pytest.raises(CompileError) as info:
        compile_with(export_module.header_text(manifest), [], "")
    assert "weigh_p: the record's alignment" in str(info.value)
