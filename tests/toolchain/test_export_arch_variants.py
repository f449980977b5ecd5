"""Export keeps arch variants: 'sm_90a' is an arch-specific CUBIN (wgmma, setmaxnreg...),
recorded as such in the manifest and loaded only on the GPU it was built for."""

import json

import pytest

import jitkern
from jitkern.toolchain import export
from jitkern.toolchain.nvrtc import compile_source
from jitkern.errors import JitkernValueError

SOURCE = r"""
extern "C" __global__ void axpy(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}"""


def _has_nvfatbin() -> bool:
    try:
        from cuda.bindings import nvfatbin

        nvfatbin.version()
    except Exception:  # noqa: BLE001 - the wheel or its library is missing
        return False
    return True


needs_nvfatbin = pytest.mark.skipif(not _has_nvfatbin(), reason="nvFatbin is not installed")


def test_export_archs_keep_variants_sorted():
    assert export.export_archs(("sm_90a", "sm_80", "sm_90", "sm_90a")) == (
        "sm_80", "sm_90", "sm_90a")
    assert export.export_archs("sm_90a") == ("sm_90a",)
    assert export.normalize_archs(("sm_90a", "sm_80")) == (80, 90)  # what checks compare


def test_cubin_export_writes_the_arch_specific_cubin(tmp_path):
    k = jitkern.RawKernel(SOURCE, "axpy")
    result = k.export(tmp_path / "k", arch=("sm_80", "sm_90a"), format="cubin")
    manifest = json.loads((tmp_path / "k.json").read_text())
    assert manifest["archs"] == ["sm_80", "sm_90a"] == result.manifest["archs"]
    assert manifest["files"] == {"sm_80": "k.sm_80.cubin", "sm_90a": "k.sm_90a.cubin"}
    written = (tmp_path / "k.sm_90a.cubin").read_bytes()
    assert written == compile_source(SOURCE, arch="sm_90a").data
    assert written != compile_source(SOURCE, arch="sm_90").data  # not collapsed to sm_90
    assert "cubin for sm_80, sm_90a" in (tmp_path / "k.h").read_text().split("\n")[0]


def test_ptx_export_targets_the_variant(tmp_path):
    k = jitkern.RawKernel(SOURCE, "axpy")
    k.export(tmp_path / "k", arch="sm_90a", format="ptx")
    assert b".target sm_90a" in (tmp_path / "k.compute_90a.ptx").read_bytes()


@needs_nvfatbin
def test_fatbin_carries_portable_ptx_and_refuses_other_gpus(tmp_path):
    k = jitkern.RawKernel(SOURCE, "axpy")
    mixed = k.export(tmp_path / "mixed", arch=("sm_80", "sm_90a"))
    assert mixed.manifest["archs"] == ["sm_80", "sm_90a"]
    assert mixed.manifest["fatbin_ptx"] == "compute_80"  # runs on newer GPUs after a JIT step
    only = k.export(tmp_path / "only", arch="sm_90a")
    assert only.manifest["fatbin_ptx"] == "compute_90a"
    binary = export.binary_for_device(str(tmp_path), only.manifest, 90)
    assert binary.data == (tmp_path / "only.fatbin").read_bytes()
    for cc in (89, 100, 120):
        with pytest.raises(JitkernValueError, match=rf"holds CUBINs for sm_90a and PTX for "
                           rf"compute_90a, none of which runs on this GPU \(sm_{cc}\)"):
            export.binary_for_device(str(tmp_path), only.manifest, cc)
    assert export.binary_for_device(str(tmp_path), mixed.manifest, 120).fmt == "fatbin"


def test_loading_picks_a_variant_only_on_its_gpu():
    files = {"sm_80": "k.sm_80.cubin", "sm_90": "k.sm_90.cubin", "sm_90a": "k.sm_90a.cubin"}
    assert export._pick_file(files, "cubin", 90) == ("sm_90a", "k.sm_90a.cubin")
    assert export._pick_file(files, "cubin", 86) == ("sm_80", "k.sm_80.cubin")
    only = {"sm_80": "k.sm_80.cubin", "sm_90a": "k.sm_90a.cubin"}
    with pytest.raises(JitkernValueError, match=r"cubin for sm_80, sm_90a, none of which runs "
                       r"on this GPU \(sm_100\)"):
        export._pick_file(only, "cubin", 100)
    ptx = {"compute_80": "a.ptx", "compute_90a": "b.ptx"}
    assert export._pick_file(ptx, "ptx", 90) == ("compute_90a", "b.ptx")
    assert export._pick_file(ptx, "ptx", 120) == ("compute_80", "a.ptx")  # 90a is not portable
    family = {"sm_100f": "f.cubin"}
    assert export._pick_file(family, "cubin", 103) == ("sm_100f", "f.cubin")
    with pytest.raises(JitkernValueError, match=r"sm_120"):
        export._pick_file(family, "cubin", 120)


def test_unreadable_arch_tag_in_a_manifest_is_refused():
    with pytest.raises(JitkernValueError, match=r"arch 'sm_9x'"):
        export._pick_file({"sm_9x": "k.cubin"}, "cubin", 90)
