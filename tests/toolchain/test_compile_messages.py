"""What NVRTC's failures and warnings look like to the user of a string kernel."""

import io
import uuid

import numpy as np
import pytest

import jitkern
from jitkern.toolchain import nvrtc as compiler

TRAITS = """#include <type_traits>
extern "C" __global__ void k(float* x) { x[0] = std::is_same<float, float>::value; } // %s
"""


def test_standard_header_without_jitify_suggests_it():
    k = jitkern.RawKernel(TRAITS % uuid.uuid4(), "k")
    with pytest.raises(jitkern.CompileError) as info:
        k.inspect(arch="sm_90")
    message = str(info.value)
    assert 'cannot open source file "type_traits"' in message
    assert "pass jitify=True" in message and "<cuda/std/type_traits>" in message
    assert "please report" not in message
    # and the suggestion works
    fixed = jitkern.RawKernel(TRAITS % uuid.uuid4(), "k", jitify=True).inspect(arch="sm_90")
    assert fixed.registers is not None


def test_header_jitify_does_not_provide_is_skipped_as_jitify_does():
    with pytest.warns(UserWarning, match="unordered_map: file not found; jitify=True skips"):
        info = jitkern.RawKernel('#include <unordered_map>\nextern "C" __global__ void k() {}',
                                 "k", jitify=True).inspect(arch="sm_90")
    assert info.cubin[:4] == b"\x7fELF"


def test_header_jitify_does_not_provide_in_a_users_header_says_what_it_does(tmp_path):
    (tmp_path / "uses_map.h").write_text("#include <unordered_map>\n")
    with pytest.raises(jitkern.CompileError) as info:
        jitkern.RawKernel('#include "uses_map.h"\nextern "C" __global__ void k() {}', "k",
                          options=(f"-I{tmp_path}",), jitify=True).inspect(arch="sm_90")
    message = str(info.value)
    assert "<unordered_map> is not available to NVRTC even with jitify=True" in message
    assert "<type_traits>" in message and "please report" not in message


def test_own_header_not_found_suggests_an_include_folder():
    with pytest.raises(jitkern.CompileError, match=r"options=\('-I/path/to/folder',\)"):
        jitkern.RawKernel('#include "mine.h"\nextern "C" __global__ void k() {}',
                          "k").inspect(arch="sm_90")


@pytest.mark.parametrize("build", [
    lambda: jitkern.ElementwiseKernel(
        "float32 x, float32 y", "float32 z", "z = x", f"unused_{uuid.uuid4().hex[:8]}"
    ).inspect(np.zeros(3, np.float32), np.zeros(3, np.float32), arch="sm_90"),
    lambda: jitkern.ElementwiseKernel(
        "T x", "T z", "z = x > 0 ? x : -x", f"absu_{uuid.uuid4().hex[:8]}"
    ).inspect(np.zeros(3, np.uint32), arch="sm_90"),
])
def test_warnings_about_jitkern_generated_code_are_not_shown(build):
    info = build()
    assert "#177-D" not in info.log and "warning" not in info.log
    assert any(o.startswith("-diag-suppress=") for o in info.options)


def test_warnings_about_the_users_own_code_are_kept():
    src = f'extern "C" __global__ void k(float* x) {{ int unused; x[0] = 1; }} // {uuid.uuid4()}'
    log = io.StringIO()
    compiler.compile_source(src, arch="sm_90", log_stream=log)
    assert "#177-D" in log.getvalue() and "unused" in log.getvalue()


def test_marker_decides_the_suppression():
    plain = 'extern "C" __global__ void k() {}'
    assert compiler._generated_code_options(plain, ()) == ()
    generated = "// ---- jitkern string-kernel prelude ----\n" + plain
    (option,) = compiler._generated_code_options(generated, ())
    assert option.startswith("-diag-suppress=") and "177" in option


JIT_MODULE = '''
from jitkern import jit


@jit.rawkernel()
def copy_first(x, y):
    i = jit.threadIdx.x  # set and never used: fine in Python
    y[0] = x[0]
'''


def test_jit_kernels_show_no_warnings_about_their_generated_cuda(tmp_path, monkeypatch):
    import importlib

    (tmp_path / "jk_warn_mod.py").write_text(JIT_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("jk_warn_mod")
    x = np.zeros(4, np.float32)
    info = mod.copy_first.inspect(x, x, arch="sm_90")
    assert "warning" not in info.log
    assert any(o.startswith("-diag-suppress=") for o in info.options)
