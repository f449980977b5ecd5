"""``options=`` is checked against NVRTC's documented option set when a kernel is made
(issue 18): an unknown option is a ValueError naming the kernel and the option, before any
compile; every spelling NVRTC accepts is accepted, and compiles (NVRTC, no GPU)."""

import os
import uuid

import numpy as np
import pytest

import jitkern
from jitkern import jit
from jitkern.toolchain import cache
from jitkern.toolchain.nvrtc_options import GLUED, NVRTC_OPTIONS, lookup, split

SOURCE = 'extern "C" __global__ void k(float* x) { x[threadIdx.x] *= 2.0f; }\n'


def _bogus() -> str:
    return f"--jk-{uuid.uuid4().hex[:10]}"


def _raw_kernel(options):
    return jitkern.RawKernel(SOURCE, "k", options=options)


def _raw_module(options):
    return jitkern.RawModule(code=SOURCE, options=options)


def _elementwise(options):
    return jitkern.ElementwiseKernel("float32 x", "float32 y", "y = x * 2", "twice",
                                     options=options)


def _reduction(options):
    return jitkern.ReductionKernel("float32 x", "float32 y", "x", "a + b", "y = a", "0",
                                   "total", options=options)


def _decorated(options):
    def doubled(x):
        x[jit.threadIdx.x] *= 2

    return jit.rawkernel(doubled, options=options)


def _decorator_factory(options):  # @rawkernel(options=...): refused before the def is seen
    @jit.rawkernel(options=options)
    def doubled(x):
        x[jit.threadIdx.x] *= 2

    return doubled


KINDS = {
    "RawKernel": (_raw_kernel, "RawKernel 'k'"),
    "RawModule": (_raw_module, "RawModule"),
    "ElementwiseKernel": (_elementwise, "ElementwiseKernel 'twice'"),
    "ReductionKernel": (_reduction, "ReductionKernel 'total'"),
    "rawkernel": (_decorated, "rawkernel 'doubled'"),
    "rawkernel()": (_decorator_factory, "rawkernel"),
}


@pytest.mark.parametrize("kind", KINDS)
def test_unknown_option_is_refused_at_construction_naming_kernel_and_option(kind):
    make, label = KINDS[kind]
    bogus = _bogus()
    compiles = cache.stats["compiles"]
    with pytest.raises(ValueError) as info:
        make(("-lineinfo", bogus))
    assert isinstance(info.value, jitkern.JitkernError)
    message = str(info.value)
    assert message.startswith(f"{label}: options: ")
    assert repr(bogus) in message and "is not an NVRTC option" in message
    assert "NVRTC_OPTIONS" in message and "docs/errors.md" in message
    assert cache.stats["compiles"] == compiles  # refused before any compile


@pytest.mark.parametrize("wrong, meant", [
    ("--use-fast-math", "--use_fast_math"), ("-device-debug", "--device-debug"),
    ("--lineinfo", "-lineinfo"), ("--maxregcount=32", "--maxrregcount"),
    ("-Xptax=-v", "-Xptxas"),
])
def test_misspelt_option_names_the_closest_valid_one(wrong, meant):
    with pytest.raises(jitkern.JitkernValueError, match="did you mean") as info:
        _raw_kernel((wrong,))
    assert repr(meant) in str(info.value)


def test_optimisation_level_says_nvrtc_has_none():
    level = f"-O{int.from_bytes(os.urandom(1), 'little') % 4}"
    with pytest.raises(jitkern.JitkernValueError, match="NVRTC has no -O levels") as info:
        _elementwise((level,))
    assert repr(level) in str(info.value) and "-Xptxas=-O3" in str(info.value)


def test_nvcc_backend_options_are_nvccs_own():
    # nvcc has options NVRTC lacks (-O3): with backend='nvcc' only their form is checked
    k = jitkern.RawKernel(SOURCE, "k", options=("-O3",), backend="nvcc")
    assert "-O3" in k.options


# Spellings NVRTC accepts (checked against NVRTC 13.5), as (options given, options jitkern
# passes on). Values given as the next string are joined to their option.
VALID = [
    (("--device-c",), None), (("-dc",), ("--relocatable-device-code=true",)), (("--device-w",), None), (("-dw",), None),
    (("--relocatable-device-code=false",), None), (("-rdc=false",), None),
    (("-rdc", "false"), ("-rdc=false",)),
    (("--extensible-whole-program",), None), (("-ewp",), None),
    (("--device-debug",), None), (("-G",), None),
    (("--generate-line-info",), None), (("-lineinfo",), None),
    (("--dopt",), ("--dopt=on",)), (("-dopt",), ("-dopt=on",)), (("--dopt=on",), None),
    (("-dopt=on",), None), (("--dopt", "on"), ("--dopt=on",)), (("-dopt", "on"), ("-dopt=on",)),
    (("--dopt", "-lineinfo"), ("--dopt=on", "-lineinfo")),  # NVRTC would read -lineinfo as the value
    (("--Ofast-compile=0",), None), (("-Ofc=mid",), None), (("-Ofc", "max"), ("-Ofc=max",)),
    (("--ptxas-options=-v",), None), (("--ptxas-options", "-v"), ("--ptxas-options=-v",)),
    (("-Xptxas=-v",), None), (("-Xptxas", "-O3"), ("-Xptxas=-O3",)),
    (("--maxrregcount=32",), None), (("-maxrregcount=40",), None),
    (("-maxrregcount", "48"), ("-maxrregcount=48",)),
    (("--maxrregcount", "64"), ("--maxrregcount=64",)),
    (("--ftz=true",), None), (("-ftz=false",), None), (("-ftz", "true"), ("-ftz=true",)),
    (("--prec-sqrt=false",), None), (("-prec-sqrt=true",), None),
    (("--prec-div=false",), None), (("-prec-div=true",), None),
    (("--fmad=false",), None), (("-fmad=true",), None),
    (("--fno-signed-zeros",), None), (("-fno-signed-zeros",), None),
    (("--ffinite-math-only",), None), (("-ffinite-math-only",), None),
    (("--use_fast_math",), None), (("-use_fast_math",), None),
    (("--extra-device-vectorization",), None), (("-extra-device-vectorization",), None),
    (("--modify-stack-limit=false",), None), (("-modify-stack-limit=true",), None),
    (("--jump-table-density=50",), None), (("-jtd=20",), None),
    (("--device-stack-protector=true",), None), (("-device-stack-protector=false",), None),
    (("--no-cache",), None), (("-no-cache",), None),
    (("--frandom-seed=12",), None), (("-frandom-seed=7",), None),
    (("--define-macro=JK_A",), None), (("--define-macro=JK_A=3",), None),
    (("--define-macro", "JK_A"), ("--define-macro=JK_A",)),
    (("-DJK_A",), None), (("-DJK_A=2",), None), (("-D=JK_A",), ("-DJK_A",)),
    (("-D JK_A",), ("-DJK_A",)), (("-D", "JK_A"), ("-DJK_A",)),
    (("--undefine-macro=JK_B",), None), (("-UJK_B",), None), (("-U JK_B",), ("-UJK_B",)),
    (("-U", "JK_B"), ("-UJK_B",)),
    (("--no-source-include",), None), (("-no-source-include",), None),
    (("--std=c++17",), None), (("-std=c++14",), None), (("-std=c++20",), None),
    (("--builtin-move-forward=true",), None), (("-builtin-move-forward=false",), None),
    (("--builtin-initializer-list=true",), None), (("-builtin-initializer-list=false",), None),
    (("--pch",), None), (("-pch",), None),
    (("--pch-verbose=false",), None), (("-pch-messages=false",), None),
    (("--instantiate-templates-in-pch=false",), None),
    (("--disable-warnings",), None), (("-w",), None),
    (("--Wreorder",), None), (("-Wreorder",), None),
    (("--Wconversion",), None), (("-Wconversion",), None),
    (("--warning-as-error=all-warnings",), None), (("-Werror=reorder",), None),
    (("-Werror", "all-warnings"), ("-Werror=all-warnings",)),
    (("--fmax-errors=3",), None), (("-fmax-errors=5",), None),
    (("--device-as-default-execution-space",), None), (("-default-device",), None),
    (("--device-int128",), None), (("-device-int128",), None),
    (("--optimization-info=inline",), None), (("-opt-info=inline",), None),
    (("--display-error-number",), None), (("-err-no",), None),
    (("--no-display-error-number",), None), (("-no-err-no",), None),
    (("--diag-error=177",), None), (("-diag-suppress=177,550",), None),
    (("--diag-warn=177",), None), (("-diag-warn=550",), None),
    (("--brief-diagnostics=true",), None), (("-brief-diag=false",), None),
    (("--split-compile=0",), None), (("-split-compile=2",), None),
    (("--minimal",), None), (("-minimal",), None),
    (("-w ",), None), (("--gen-opt-lto",), None),
]


def _ids(case):
    return " ".join(case) if isinstance(case, tuple) else None


@pytest.mark.parametrize("given, passed", VALID, ids=[_ids(c[0]) for c in VALID])
def test_every_spelling_nvrtc_accepts_is_accepted(given, passed):
    k = jitkern.RawKernel(SOURCE, "k", options=given)
    expected = given if passed is None else passed
    assert k.options[-len(expected):] == tuple(expected)


# options NVRTC refuses together (or warns of, which -Werror makes an error)
_EXCLUSIVE = {"--display-error-number": "err-no", "--no-display-error-number": "err-no",
              "--device-c": "rdc", "--device-w": "rdc", "--relocatable-device-code": "rdc",
              "--extensible-whole-program": "rdc",
              "--disable-warnings": "warnings", "--warning-as-error": "warnings"}


def _groups_without_repeats():
    """VALID in groups where no option appears twice (NVRTC warns of a redefinition, and
    -Werror makes that an error): one NVRTC compile per group, not per spelling."""
    groups: list[tuple[set, list]] = []
    for given, _ in VALID:
        long = lookup(split(given[0])[0]).long
        row = _EXCLUSIVE.get(long, long)
        for names, options in groups:
            if row not in names:
                break
        else:
            names, options = set(), []
            groups.append((names, options))
        names.add(row)
        options.extend(given)
    return [tuple(options) for _, options in groups]


@pytest.mark.parametrize("options", _groups_without_repeats())
def test_accepted_spellings_compile_with_nvrtc(options):
    k = jitkern.RawKernel(f"// {uuid.uuid4()}\n" + SOURCE, "k", options=options)
    assert k.inspect(arch="sm_90").cubin[:4] == b"\x7fELF"


@pytest.mark.parametrize("spelling", ["-I{d}", "-I {d}", "-I={d}", "--include-path={d}",
                                      ("-I", "{d}"), ("--include-path", "{d}")])
def test_include_folder_in_every_spelling_reaches_nvrtc_and_the_key(tmp_path, spelling):
    value = int.from_bytes(os.urandom(2), "little")
    (tmp_path / "jk_value.h").write_text(f"#define JK_VALUE {value}\n")
    src = (f'// {uuid.uuid4()}\n#include "jk_value.h"\n'
           'extern "C" __global__ void k(int* x) { x[0] = JK_VALUE; }\n')
    parts = (spelling,) if isinstance(spelling, str) else spelling
    options = tuple(p.format(d=tmp_path) for p in parts)
    info = jitkern.RawKernel(src, "k", options=options).inspect(arch="sm_90")
    assert info.cubin[:4] == b"\x7fELF"
    (tmp_path / "jk_value.h").write_text(f"#define JK_VALUE {value + 1}\n")
    again = jitkern.RawKernel(src, "k", options=options).inspect(arch="sm_90")
    assert again.cubin != info.cubin  # the header's contents are in the key in every spelling


def test_pre_include_given_as_two_strings_is_joined(tmp_path):
    value = int.from_bytes(os.urandom(2), "little")
    (tmp_path / "jk_pre.h").write_text(f"#define JK_PRE {value}\n")
    src = f'// {uuid.uuid4()}\nextern "C" __global__ void k(int* x) {{ x[0] = JK_PRE; }}\n'
    k = jitkern.RawKernel(src, "k", options=(f"-I{tmp_path}", "-include", "jk_pre.h"))
    assert k.options[-1] == "-include=jk_pre.h"
    assert k.inspect(arch="sm_90").cubin[:4] == b"\x7fELF"


def test_every_row_has_long_and_short_spellings_that_are_accepted():
    for row in NVRTC_OPTIONS:
        for name in filter(None, (row.long, row.short)):
            if name in ("-arch", "--gpu-architecture", "--restrict", "-restrict"):
                continue  # refused on purpose (jitkern picks the arch; --restrict: below)
            option = name if row.value != "required" else f"{name}=1"
            spelled = {"-dc": "--relocatable-device-code=true"}.get(option, option)
            if row.default is not None:
                spelled = f"{name}={row.default}"
            if name in GLUED:
                spelled = f"{name}1"
            assert _raw_module((option,)).options[-1] == spelled
    assert len(NVRTC_OPTIONS) > 60


def test_jit_kernel_options_given_as_two_strings_compile():
    n = int.from_bytes(os.urandom(1), "little") % 16 + 24

    @jit.rawkernel(options=("-maxrregcount", str(n)))
    def scaled(x):
        x[jit.threadIdx.x] *= 3

    info = scaled.inspect(np.zeros(4, np.float32), arch="sm_90")
    assert f"-maxrregcount={n}" in info.options
    assert info.registers is not None and info.registers <= n


def test_module_from_a_file_names_an_unknown_option_too(tmp_path):
    path = tmp_path / "k.cubin"
    path.write_bytes(jitkern.RawKernel(SOURCE, "k").inspect(arch="sm_90").cubin)
    bogus = _bogus()
    with pytest.raises(jitkern.JitkernValueError, match="RawModule: options: ") as info:
        jitkern.RawModule(path=str(path), options=(bogus,))
    assert repr(bogus) in str(info.value)


@pytest.mark.parametrize("spelling", ["--restrict", "-restrict"])
def test_restrict_is_refused_because_nvrtc_keeps_it_for_later_compiles(spelling):
    with pytest.raises(jitkern.JitkernValueError, match="every later compile") as info:
        _raw_kernel((spelling,))
    assert "__restrict__" in str(info.value) and repr(spelling) in str(info.value)


def test_a_kernel_compiled_after_a_restrict_request_is_not_restrict():
    # NVRTC 13.5, given --restrict once, compiles every later program of the process with
    # restrict pointers (non-coherent loads): the request must never reach it
    def source():
        return (f"// {uuid.uuid4()}\n" 'extern "C" __global__ void k(const float* x, float* y)'
                " { y[threadIdx.x] = x[0]; }\n")

    with pytest.raises(jitkern.JitkernValueError, match="every later compile"):
        jitkern.RawKernel(source(), "k", options=("--restrict",)).inspect(arch="compute_90")
    ptx = jitkern.RawModule(code=source()).inspect(arch="compute_90").ptx.decode()
    assert "ld.global.nc" not in ptx
