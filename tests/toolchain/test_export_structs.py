"""Exporting a JIT kernel specialised for a struct argument (issue 20 part 1, a gap of the
first landing): the manifest records the struct's record layout, and a loaded kernel packs a
record, dataclass or NamedTuple of that layout by value and refuses any other, naming the
argument. Launches without a GPU go through the fake driver (driver.use); the GPU test runs
the loaded kernel against NumPy."""

import dataclasses
import json
import typing

import numpy as np
import pytest

import jitkern
from jitkern import jit
from jitkern.errors import KernelArgumentError
from jitkern.runtime import driver
from jitkern.runtime.fakedriver import FakeDriver


@dataclasses.dataclass(frozen=True)
class Affine:
    k: np.float32
    shift: np.int64
    flag: np.int8


class AffineTuple(typing.NamedTuple):
    k: np.float32
    shift: np.int64
    flag: np.int8


@dataclasses.dataclass(frozen=True)
class Narrow:
    k: np.float32
    shift: np.int32
    flag: np.int8


# float32 at 0, int64 at 8, int8 at 16, 7 bytes of padding: 24 bytes
AFFINE = np.dtype([("k", "f4"), ("shift", "i8"), ("flag", "i1")], align=True)


@jit.rawkernel()
def affine(x, a, out):
    i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    if i < x.size:
        out[i] = x[i] * a.k + a.shift + a.flag


class DevArray:
    def __init__(self, rng, n):
        self.ptr, self.n = int(rng.integers(1, 1 << 30)) * 256, n

    @property
    def __cuda_array_interface__(self):
        return {"data": (self.ptr, False), "shape": (self.n,), "typestr": "<f8",
                "strides": None, "version": 3}


def random_affine(rng, cls=Affine):
    return cls(np.float32(rng.standard_normal()), np.int64(rng.integers(-1000, 1000)),
               np.int8(rng.integers(-100, 100)))


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    base = tmp_path_factory.mktemp("structs") / "affine"
    example = np.zeros(16)
    return affine.export(base, example, Affine(np.float32(1), np.int64(0), np.int8(0)),
                         example, arch=("sm_90",), format="cubin")


def test_the_manifest_records_the_struct_layout(exported):
    with open(exported.manifest_path) as f:
        manifest = json.load(f)
    spec = manifest["entries"][0]["call"]["args"][1]
    assert spec["type"] == "struct" and spec["name"] == "a" and spec["itemsize"] == 24
    assert spec["record"] == [["k", "<f4"], ["", "|V4"], ["shift", "<i8"], ["flag", "|i1"],
                              ["", "|V7"]]
    assert spec["class"].endswith("Affine")
    param = manifest["entries"][0]["params"][1]
    assert (param["kind"], param["size"]) == ("value", 24)


@pytest.mark.parametrize("kind", ["dataclass", "namedtuple", "record"])
def test_a_loaded_kernel_packs_each_kind_of_struct_of_the_layout(exported, rng, kind):
    with driver.use(FakeDriver(cc=(9, 0))) as fake:
        k = jitkern.load(exported.manifest_path).affine
        n = int(rng.integers(8, 64))
        x, out = DevArray(rng, n), DevArray(rng, n)
        for _ in range(2):
            a = random_affine(rng, AffineTuple if kind == "namedtuple" else Affine)
            value = a
            if kind == "record":
                value = np.array((a.k, a.shift, a.flag), AFFINE)[()]
            k[1, 64](x, value, out)
            launch = fake.launches[-1]
            assert launch.words(1) == [x.ptr]
            got = np.frombuffer(launch.raw(1, 24), AFFINE)[0]
            assert (got["k"], got["shift"], got["flag"]) == (a.k, a.shift, a.flag)


@pytest.mark.parametrize("bad, words", [
    (Narrow(np.float32(1), np.int32(2), np.int8(3)), "a struct laid out as"),
    (np.zeros((), [("k", "f4"), ("shift", "i8")])[()], "a struct laid out as"),
    (1.5, "builtins.float"),
])
def test_a_loaded_kernel_refuses_another_layout_naming_the_argument(exported, rng, bad, words):
    with driver.use(FakeDriver(cc=(9, 0))) as fake:
        k = jitkern.load(exported.manifest_path).affine
        with pytest.raises(KernelArgumentError) as info:
            k[1, 64](DevArray(rng, 8), bad, DevArray(rng, 8))
        message = str(info.value)
        assert "affine() argument 'a'" in message and "struct Affine" in message
        assert words in message, message
        assert fake.launches == []


@pytest.mark.gpu
def test_gpu_loaded_struct_kernel_matches_numpy(tmp_path, rng):
    n = int(rng.integers(1000, 5000))
    base = tmp_path / "affine"
    written = affine.export(base, np.zeros(n), random_affine(rng), np.zeros(n),
                            arch=("sm_80", "sm_90"), format="cubin")
    k = jitkern.load(written.manifest_path).affine
    host = rng.standard_normal(n)
    for cls in (Affine, AffineTuple):
        a = random_affine(rng, cls)
        out = jitkern.full(n, np.nan, np.float64)
        k[(n + 127) // 128, 128](jitkern.asarray(host), a, out)
        want = host * np.float64(a.k) + a.shift + a.flag
        np.testing.assert_allclose(out.get(), want, rtol=1e-6)
