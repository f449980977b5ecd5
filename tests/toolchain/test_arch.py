"""arch: every target NVRTC offers is reachable (sm_XY, sm_XYa, sm_XYf, compute_XY), what it
asks for is what is built, and anything else is refused with the list of what is supported."""

import uuid

import pytest

import jitkern
from jitkern.toolchain import nvrtc as compiler, cubin, discovery as toolchain, target

# wgmma exists only on sm_90a: it compiles for the arch-specific target and not for sm_90
WGMMA = r"""
extern "C" __global__ void fence(float* x) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("wgmma.fence.sync.aligned;");
    x[0] = 1.0f;
#else
    x[0] = 2.0f;
#endif
}
"""


def _src():
    return f'extern "C" __global__ void k(float* x) {{ x[0] = 1; }} // {uuid.uuid4()}'


def _elf_flags_arch(data: bytes) -> int:
    """The SM number a CUBIN's ELF header records (e_flags, bits 8-15 on CUDA 12+ ELFs)."""
    import struct

    (flags,) = struct.unpack_from("<I", data, 0x30)
    return (flags >> 8) & 0xFF


def test_sm_90a_is_an_arch_specific_cubin_not_sm_90():
    k = jitkern.RawKernel(WGMMA, "fence")
    plain = k.inspect(arch="sm_90")
    specific = k.inspect(arch="sm_90a")
    assert plain.arch == "sm_90" and specific.arch == "sm_90a"
    assert specific.cubin[:4] == b"\x7fELF"
    # the arch-specific feature macro is defined only for sm_90a
    assert b"wgmma.fence" in compiler.compile_source(WGMMA, arch="compute_90a").data
    assert b"wgmma.fence" not in compiler.compile_source(WGMMA, arch="compute_90").data
    # the arch-specific build is a different cache entry
    b90 = compiler.compile_source(WGMMA, arch="sm_90")
    b90a = compiler.compile_source(WGMMA, arch="sm_90a")
    assert b90.key != b90a.key and b90a.variant == "a" and b90a.arch == 90


def test_arch_specific_instructions_compile_only_for_the_specific_target():
    src = WGMMA.replace("#if defined(__CUDA_ARCH_FEAT_SM90_ALL)", "#if 1")
    k = jitkern.RawKernel(src, "fence")
    assert k.inspect(arch="sm_90a").cubin[:4] == b"\x7fELF"
    with pytest.raises(jitkern.CompileError, match="wgmma"):
        k.inspect(arch="sm_90")


@pytest.mark.parametrize("arch, fmt, name", [
    ("compute_90", "ptx", "compute_90"),
    ("compute_90a", "ptx", "compute_90a"),
    ("sm_100f", "cubin", "sm_100f"),
    ("sm_100a", "cubin", "sm_100a"),
    ("sm_90", "cubin", "sm_90"),
    (90, "cubin", "sm_90"),
    ((8, 0), "cubin", "sm_80"),
    ("SM_90", "cubin", "sm_90"),
])
def test_named_targets_give_what_they_say(arch, fmt, name):
    info = jitkern.RawKernel(_src(), "k").inspect(arch=arch)
    assert info.arch == name
    if fmt == "ptx":
        assert info.cubin is None and info.ptx is not None
        text = info.ptx.decode()
        assert f".target sm_{name[len('compute_'):]}" in text
        assert info.registers is None  # ptxas has not run
    else:
        assert info.ptx is None and info.cubin[:4] == b"\x7fELF"
        assert info.registers is not None


def test_compute_xy_is_ptx_even_through_compile_source():
    binary = compiler.compile_source(_src(), arch="compute_80")
    assert binary.fmt == "ptx" and b".entry k" in binary.data


@pytest.mark.parametrize("bad", ["sm_9", "sm_1000", "sm_89a", "sm_90f", "sm_35", "compute_9",
                                 "hopper", "sm_90x", "", 9, (9,)])
def test_invalid_arch_lists_what_nvrtc_supports(bad):
    with pytest.raises(jitkern.JitkernValueError) as info:
        jitkern.RawKernel(_src(), "k").inspect(arch=bad)
    message = str(info.value)
    assert message.startswith(f"arch: {bad!r} is not a target")
    for supported in toolchain.supported_archs():
        assert f"sm_{supported}" in message
    assert "sm_90a" in message and "compute_" in message
    assert "please report" not in message
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("bad", [9.0, None.__class__, b"sm_90", True])
def test_arch_of_the_wrong_type(bad):
    with pytest.raises(jitkern.JitkernTypeError, match="arch: expected"):
        target.parse(bad)


def test_parse_arch_table():
    assert target.parse("sm_90a") == target.Arch("cubin", 90, "a")
    assert target.parse("compute_100f") == target.Arch("ptx", 100, "f")
    assert target.parse(" sm_120 ") == target.Arch("cubin", 120, "")
    assert target.parse("sm_90a").cc == 90


def test_device_target_never_picks_ptx_newer_than_the_driver(monkeypatch):
    monkeypatch.setattr(toolchain, "supported_archs", lambda: (80, 90))
    monkeypatch.setattr(toolchain, "remembered_version", lambda: (13, 5))
    assert target.choose_target(90, 13000) == ("cubin", 90)
    assert target.choose_target(89, 13000) == ("cubin", 80)
    with pytest.raises(jitkern.CompileError, match="would not load on driver 13.0"):
        target.choose_target(120, 13000)
    assert target.choose_target(120, 13050) == ("ptx", 90)


def test_arch_specific_cubin_records_its_arch():
    binary = compiler.compile_source(_src(), arch="sm_90a")
    assert _elf_flags_arch(binary.data) == 90
    assert cubin.kernel_names(binary.data) == ["k"]


def test_prefetch_facts_reads_remembered_targets_and_never_loads_nvrtc(monkeypatch):
    from jitkern.toolchain import discovery as toolchain

    toolchain.supported_archs.cache_clear()  # (an earlier test may have asked another cache)
    archs = toolchain.supported_archs()  # remembered in this disk cache from here on
    assert toolchain._toolchain_facts() is not None
    toolchain.supported_archs.cache_clear()

    def no_nvrtc():
        raise AssertionError("prefetch_facts loaded NVRTC")

    monkeypatch.setattr(toolchain, "nvrtc_module", no_nvrtc)
    toolchain.prefetch_facts()
    assert toolchain.supported_archs.cache_info().currsize == 1
    assert toolchain.supported_archs() == archs
    # Nothing remembered: nothing is asked (the first compile asks NVRTC itself).
    toolchain.supported_archs.cache_clear()
    monkeypatch.setattr(toolchain, "_toolchain_facts", lambda: None)
    toolchain.prefetch_facts()
    assert toolchain.supported_archs.cache_info().currsize == 0
    toolchain.supported_archs.cache_clear()


@pytest.mark.parametrize("spelling", ["sm_90", 90, (9, 0), "90", " SM_90 "])
def test_every_spelling_of_sm_90_is_one_target(spelling):
    """One Arch (and so one cache key) whatever spelling names the GPU."""
    parsed = target.parse(spelling)
    assert parsed == target.Arch("cubin", 90, "") and hash(parsed) == hash(target.parse("sm_90"))
    assert parsed.name == "sm_90"
    assert target.parse(spelling, "ptx").name == "compute_90"


def test_an_arch_given_as_arch_is_kept():
    variant = target.parse("sm_90a")
    assert target.parse(variant) is variant
    assert target.parse(variant, "ltoir") == target.Arch("ltoir", 90, "a")
