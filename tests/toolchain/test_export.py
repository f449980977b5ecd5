"""Ahead-of-time export (toolchain/export.py, kernels/exported.py): CPU tests.

Compiling for sm_80/sm_90, the files written, manifest and header contents (including the
parameters the JIT appends), loading without a GPU or NVRTC, and refusals.
"""

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import _export_kernels as K
import numpy as np
import pytest
from conftest import has_gpu

import jitkern
from jitkern.toolchain import export
from jitkern.toolchain.cubin import cubin_params
from jitkern.errors import (
    JitkernFileNotFoundError,
    JitkernKeyError,
    JitkernNotImplementedError,
    JitkernTypeError,
    JitkernValueError,
    KernelArgumentError,
)

FATBIN_MAGIC = b"\x50\xed\x55\xba"
LTOIR_MAGIC = b"\xedCN\x7f"


def _jit_examples(n=64):
    x = np.zeros(n, np.float32)
    m = np.zeros((n, 3), np.float32)
    return x, m, np.float32(2), np.zeros(n, np.float32)


def _has_nvfatbin() -> bool:
    try:
        from cuda.bindings import nvfatbin

        nvfatbin.version()
    except Exception:  # noqa: BLE001 - the wheel or its library is missing
        return False
    return True


HAS_NVFATBIN = _has_nvfatbin()
needs_nvfatbin = pytest.mark.skipif(not HAS_NVFATBIN, reason="nvFatbin is not installed")
DEFAULT_FORMAT = "fatbin" if HAS_NVFATBIN else "cubin"


@pytest.fixture(scope="module")
def jit_export(tmp_path_factory):
    base = tmp_path_factory.mktemp("jit") / "scaled_rows"
    return K.scaled_rows.export(
        base, *_jit_examples(), arch=("sm_80", "sm_90"), format=DEFAULT_FORMAT
    )


@needs_nvfatbin
def test_jit_export_writes_fatbin_header_manifest_source(jit_export):
    names = sorted(os.path.basename(f) for f in jit_export.files)
    assert names == ["scaled_rows.cu", "scaled_rows.fatbin", "scaled_rows.h", "scaled_rows.json"]
    folder = os.path.dirname(jit_export.manifest_path)
    with open(os.path.join(folder, "scaled_rows.fatbin"), "rb") as f:
        assert f.read(4) == FATBIN_MAGIC
    manifest = jit_export.manifest
    assert manifest["format"] == "jitkern-export" and manifest["version"] == export.MANIFEST_VERSION
    assert manifest["jitkern_version"] == jitkern.__version__
    assert manifest["archs"] == ["sm_80", "sm_90"]
    assert manifest["binary_format"] == "fatbin"
    with open(jit_export.manifest_path) as f:
        assert json.load(f) == manifest


def test_jit_manifest_lists_user_then_appended_parameters(jit_export):
    (entry,) = jit_export.manifest["entries"]
    assert entry["kind"] == "jit" and entry["symbol"] == "scaled_rows"
    assert entry["signature"] == [
        "array(float32, 1d, C)",
        "array(float32, 2d, strided)",
        "float32",
        "array(float32, 1d, C)",
    ]
    params = entry["params"]
    kinds = [(p["kind"], p.get("arg"), p.get("axis")) for p in params]
    # x, m's pointer, alpha, out; then out.size's shape and m's shape and strides.
    assert kinds[:4] == [
        ("pointer", None, None),
        ("pointer", None, None),
        ("value", None, None),
        ("pointer", None, None),
    ]
    appended = sorted(kinds[4:], key=lambda k: (k[1], k[0], k[2]))
    assert appended == [
        ("shape", 1, 0),
        ("shape", 1, 1),
        ("stride", 1, 0),
        ("stride", 1, 1),
        ("shape", 3, 0),
    ]
    assert [p["size"] for p in params] == [8, 8, 4, 8, 8, 8, 8, 8, 8]
    # offsets follow C's alignment: the float at 16, the pointer after it at 24
    assert [p["offset"] for p in params] == [0, 8, 16, 24, 32, 40, 48, 56, 64]
    assert entry["param_bytes"] == 72
    assert [a["type"] for a in entry["call"]["args"]] == ["array", "array", "scalar", "array"]


def test_jit_header_declares_entry_with_appended_parameters(jit_export):
    folder = os.path.dirname(jit_export.manifest_path)
    header = pathlib.Path(folder, "scaled_rows.h").read_text()
    assert 'extern "C" __global__ void scaled_rows(' in header
    assert "float* x,  // offset 0, 8 bytes" in header
    assert "float alpha,  // offset 16, 4 bytes" in header
    assert "appended by the JIT: argument 1's stride[1] (bytes)" in header
    assert "static constexpr int num_params = 9;" in header
    assert "param_offsets[9] = {0, 8, 16, 24, 32, 40, 48, 56, 64};" in header


def test_header_declaration_matches_the_compiled_definition(jit_export, tmp_path):
    """The header and the exported source compile together: the declaration is the
    definition's (a mismatch is a conflicting extern "C" declaration)."""
    from jitkern.toolchain.nvrtc import compile_source

    folder = os.path.dirname(jit_export.manifest_path)
    header = pathlib.Path(folder, "scaled_rows.h").read_text()
    source = pathlib.Path(folder, "scaled_rows.cu").read_text()
    binary = compile_source(header + "\n" + source, arch="sm_90")
    assert "scaled_rows" in cubin_params(binary.data)
    broken = header.replace("float alpha", "double alpha")
    with pytest.raises(jitkern.CompileError, match='"scaled_rows" has "C" linkage'):
        compile_source(broken + "\n" + source, arch="sm_90")


@pytest.mark.parametrize(
    "fmt, suffixes, magic",
    [
        ("cubin", ["sm_80.cubin", "sm_90.cubin"], b"\x7fELF"),
        ("ptx", ["compute_80.ptx", "compute_90.ptx"], None),
        ("ltoir", ["sm_80.ltoir", "sm_90.ltoir"], LTOIR_MAGIC),
    ],
)
def test_per_arch_formats(tmp_path, fmt, suffixes, magic):
    result = K.scaled_rows.export(tmp_path / "k", *_jit_examples(), format=fmt)
    assert sorted(result.manifest["files"].values()) == [f"k.{s}" for s in suffixes]
    blobs = [(tmp_path / f"k.{s}").read_bytes() for s in suffixes]
    assert blobs[0] != blobs[1]
    for s, blob in zip(suffixes, blobs):
        if magic is not None:
            assert blob.startswith(magic)
        else:
            assert f".target sm_{s.split('_')[1][:2]}".encode() in blob


def test_ltoir_links_without_nvrtc(tmp_path):
    result = K.scaled_rows.export(tmp_path / "k", *_jit_examples(), format="ltoir", arch="sm_90")
    binary = export.binary_for_device(str(tmp_path), result.manifest, 90)
    assert binary.fmt == "cubin" and binary.data.startswith(b"\x7fELF")
    assert "scaled_rows" in cubin_params(binary.data)


def test_binary_choice_per_compute_capability(tmp_path):
    result = K.scaled_rows.export(tmp_path / "k", *_jit_examples(), format="cubin")
    files = result.manifest["files"]
    assert export._pick_file(files, "cubin", 86) == ("sm_80", "k.sm_80.cubin")
    assert export._pick_file(files, "cubin", 90) == ("sm_90", "k.sm_90.cubin")
    with pytest.raises(JitkernValueError, match=r"none of which runs on this GPU \(sm_100\)"):
        export._pick_file(files, "cubin", 100)
    with pytest.raises(JitkernValueError, match=r"sm_75"):
        export._pick_file(files, "cubin", 75)
    ptx = {"compute_80": "a.ptx", "compute_90": "b.ptx"}
    assert export._pick_file(ptx, "ptx", 120) == ("compute_90", "b.ptx")


def test_raw_module_exports_extern_c_kernels_and_name_expressions(tmp_path):
    mod = jitkern.RawModule(code=K.RAW_SOURCE, name_expressions=["scale3<float>", "scale3<int>"])
    result = mod.export(tmp_path / "mod", arch="sm_90", format="cubin")
    entries = {e["name"]: e for e in result.manifest["entries"]}
    assert sorted(entries) == ["add_scalar", "scale3<float>", "scale3<int>"]
    add = entries["add_scalar"]
    assert [(p["name"], p["ctype"], p["kind"], p["offset"], p["size"]) for p in add["params"]] == [
        ("x", "const double*", "pointer", 0, 8),
        ("c", "double", "value", 8, 8),
        ("y", "double*", "pointer", 16, 8),
        ("n", "long long", "value", 24, 8),
    ]
    scale = entries["scale3<float>"]
    assert scale["symbol"].startswith("_Z") and scale["symbol"] != entries["scale3<int>"]["symbol"]
    assert [(p["offset"], p["size"]) for p in scale["params"]] == [(0, 8), (8, 4)]
    header = (tmp_path / "mod.h").read_text()
    assert f'static constexpr const char* symbol = "{scale["symbol"]}";' in header
    assert "struct scale3_float_ {" in header


def test_raw_kernel_export(tmp_path):
    k = jitkern.RawKernel(K.RAW_SOURCE, "add_scalar")
    result = k.export(tmp_path / "add", arch=("sm_90",), format=DEFAULT_FORMAT)
    (entry,) = result.manifest["entries"]
    assert entry["name"] == "add_scalar" and entry["signature"] == [
        "const double*",
        "double",
        "double*",
        "long long",
    ]


def test_elementwise_export_is_the_flat_loop_per_dtype(tmp_path):
    k = K.saxpy()
    result = k.export(tmp_path / "saxpy", np.float64, "float64", np.float32(2), arch="sm_90")
    source = (tmp_path / "saxpy.cu").read_text()
    assert "linear loop" in source and "_jk_vec<T, " not in source.split('extern "C"')[1]
    assert "typedef double T;" in source
    (entry,) = result.manifest["entries"]
    assert [(p["name"], p["ctype"], p["size"]) for p in entry["params"]] == [
        ("_p_x", "const double*", 8),
        ("_p_y", "const double*", 8),
        ("a", "float", 4),
        ("_p_z", "double*", 8),
        ("_n", "int", 4),
    ]
    assert entry["call"]["nin"] == 3
    assert [p["dtype"] for p in entry["call"]["params"]] == [
        "float64",
        "float64",
        "float32",
        "float64",
    ]


def test_elementwise_raw_parameters_are_refused(tmp_path):
    k = jitkern.ElementwiseKernel("raw T x", "T y", "y = x[i]", "rawcopy")
    with pytest.raises(JitkernNotImplementedError, match=r"raw parameters \(x\)"):
        k.export(tmp_path / "r", np.float32, np.float32)


def test_reduction_export_writes_both_kernels(tmp_path):
    r = K.l2norm()
    result = r.export(tmp_path / "l2", np.zeros((100, 30), np.float32), axis=1, arch="sm_90")
    names = [e["name"] for e in result.manifest["entries"]]
    assert names == ["l2norm_exp", "l2norm_exp_final"]
    sig = result.manifest["entries"][0]["signature"][0]
    assert sig["in_shape"] == [100, 30] and sig["axes"] == [1]
    header = (tmp_path / "l2.h").read_text()
    assert "jitkern_export::opaque<8, 8> _oshape" in header


def test_fused_export_records_where_its_arguments_go(tmp_path):
    x = np.zeros(8, np.float32)
    result = K.fused_axpy.export(tmp_path / "f", x, x, np.float32(2), arch="sm_90")
    (entry,) = result.manifest["entries"]
    call = entry["call"]
    assert entry["kind"] == "elementwise" and entry["name"] == "fused_fused_axpy"
    # the kernel reads (a, x, y); the function takes (x, y, a)
    assert call["positions"] == [2, 0, 1] and call["nargs"] == 3 and call["result"] == "first"
    assert [p["scalar"] for p in call["params"]] == [True, False, False, False]
    loaded = jitkern.load(result.manifest_path)["fused_fused_axpy"]
    with pytest.raises(KernelArgumentError, match=r"takes 3 argument\(s\), got 2"):
        loaded(x, x)


class _HugeDeviceArray:
    """Stands for a device array with more elements than 32-bit indices reach."""

    shape = (1 << 31,)
    strides = (8,)
    dtype = np.dtype(np.float64)


def test_loaded_elementwise_refuses_sizes_past_32_bit_indices(tmp_path, monkeypatch):
    from jitkern.kernels import exported

    result = K.saxpy().export(
        tmp_path / "s", np.float64, np.float64, np.float32(2), arch="sm_90", format="cubin"
    )
    loaded = jitkern.load(result.manifest_path).saxpy_exp
    monkeypatch.setattr(exported, "describe", lambda a: a)  # no GPU: the array describes itself
    huge = _HugeDeviceArray()
    with pytest.raises(KernelArgumentError, match=r"2147483648 elements is over the 1073709055"):
        loaded(huge, huge, 1.0)


def test_fused_reductions_are_not_exported_yet(tmp_path):
    with pytest.raises(
        JitkernNotImplementedError, match=r"one elementwise kernel.*ReductionKernel"
    ):
        K.fused_sum_of_squares.export(tmp_path / "g", np.zeros(8, np.float32))


# ---------------------------------------------------------------------------
# load


def test_load_round_trip_builds_kernels_without_gpu(jit_export):
    mod = jitkern.load(jit_export.manifest_path)
    k = mod["scaled_rows"]
    assert mod.scaled_rows is k and mod.get_function("scaled_rows") is k
    assert list(mod) == ["scaled_rows"]
    assert k.signature == jit_export.manifest["entries"][0]["signature"]
    assert [p["name"] for p in k.params][:4] == ["x", "jk_ptr_m", "alpha", "out"]
    same = jitkern.load(jit_export.manifest_path[: -len(".json")])  # the base path works too
    assert list(same) == ["scaled_rows"]
    with pytest.raises(JitkernKeyError, match=r"no kernel 'nope'.*\['scaled_rows'\]"):
        mod["nope"]


def test_loaded_jit_kernel_checks_arguments_before_the_gpu(jit_export):
    k = jitkern.load(jit_export.manifest_path).scaled_rows
    with pytest.raises(KernelArgumentError, match=r"takes 4 arguments \(x, m, alpha, out\), got 3"):
        k(1, 32, (1, 2, 3))
    with pytest.raises(
        KernelArgumentError, match=r"argument 'x'.*array\(float32, 1d, C\).*scalar 1"
    ):
        k[1, 32](1, 2, 3, 4)


def test_loaded_jit_kernel_refuses_other_scalar_dtypes(jit_export):
    k = jitkern.load(jit_export.manifest_path).scaled_rows
    spec = k._args[2]
    with pytest.raises(KernelArgumentError, match=r"'alpha'.*exported for float32.*numpy.float64"):
        k._scalar(np.float64(1), spec)
    assert k._scalar(2.5, spec) == np.float32(2.5) and type(k._scalar(2.5, spec)) is np.float32


_NO_NVRTC = textwrap.dedent("""
    import sys
    sys.modules["cuda.bindings.nvrtc"] = None  # importing NVRTC now fails
    import jitkern
    from jitkern.toolchain import discovery as toolchain
    def refuse(*a, **k):
        raise AssertionError("NVRTC was touched")
    toolchain.nvrtc_module = refuse
    mod = jitkern.load(sys.argv[1])
    k = mod["scaled_rows"]
    try:
        k(1, 32, (1.0, 2.0, 3.0, 4.0))
    except jitkern.KernelArgumentError as exc:
        print("ARGS", exc)
    try:
        k.launch(1, 32, (0, 0, 1.0, 0, 1, 1, 1, 1, 1))
    except jitkern.CUDAError as exc:
        print("NOGPU", exc)
    print("MODULES", "cuda.bindings.nvrtc" in sys.modules and sys.modules["cuda.bindings.nvrtc"] is not None)
""")


@pytest.mark.skipif(has_gpu(), reason="the no-GPU refusal is checked where there is no GPU")
def test_load_without_nvrtc_refuses_only_for_want_of_a_gpu(jit_export, tmp_path):
    script = tmp_path / "no_nvrtc.py"
    script.write_text(_NO_NVRTC)
    repo = os.path.dirname(os.path.dirname(jitkern.__file__))
    env = dict(os.environ, PYTHONPATH=repo)
    proc = subprocess.run(
        [sys.executable, str(script), jit_export.manifest_path],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "ARGS" in proc.stdout and "takes an array" in proc.stdout
    assert "NOGPU" in proc.stdout and "driver" in proc.stdout.split("NOGPU", 1)[1]
    assert "NVRTC was touched" not in proc.stdout + proc.stderr
    assert "MODULES False" in proc.stdout


# ---------------------------------------------------------------------------
# refusals


def test_bad_format_and_arch_are_refused(tmp_path):
    args = _jit_examples()
    with pytest.raises(
        JitkernValueError,
        match=r"format: expected one of \('fatbin', 'cubin', 'ptx', 'ltoir'\), got 'elf'",
    ):
        K.scaled_rows.export(tmp_path / "k", *args, format="elf")
    with pytest.raises(JitkernValueError, match=r"arch: name at least one"):
        K.scaled_rows.export(tmp_path / "k", *args, arch=())
    with pytest.raises(JitkernValueError, match=r"arch: 'hopper' is not a target NVRTC"):
        K.scaled_rows.export(tmp_path / "k", *args, arch="hopper")
    with pytest.raises(JitkernTypeError, match=r"arch: expected 'sm_XY' or a tuple"):
        K.scaled_rows.export(tmp_path / "k", *args, arch=9.0)
    assert not list(tmp_path.iterdir())


def test_bad_paths_and_arguments_are_refused(tmp_path):
    args = _jit_examples()
    with pytest.raises(JitkernFileNotFoundError, match=r"the folder .*missing.* does not exist"):
        K.scaled_rows.export(tmp_path / "missing" / "k", *args)
    with pytest.raises(JitkernTypeError, match=r"path: expected a file path, got int"):
        K.scaled_rows.export(3, *args)
    with pytest.raises(JitkernTypeError, match=r"twice is a device function"):
        K.twice.export(tmp_path / "t", np.float32(1))
    debug = jitkern.rawkernel(debug=True)(K.scaled_rows.py_func)
    with pytest.raises(JitkernValueError, match=r"debug build.*debug=False"):
        debug.export(tmp_path / "d", *args)
    with pytest.raises(KernelArgumentError, match=r"argument 'x'"):
        K.scaled_rows.export(tmp_path / "k", "not an array", *args[1:])
    (tmp_path / "prog.cubin").write_bytes(jitkern.RawKernel(K.RAW_SOURCE, "add_scalar")
                                          .inspect(arch="sm_90").cubin)
    from_file = jitkern.RawModule(path=str(tmp_path / "prog.cubin"))
    with pytest.raises(JitkernValueError, match=r"loaded from .*prog.cubin.*code="):
        from_file.export(tmp_path / "again")


def test_load_refuses_what_is_not_an_export(tmp_path, jit_export):
    with pytest.raises(JitkernFileNotFoundError, match=r"no export manifest at .*nothing.json"):
        jitkern.load(tmp_path / "nothing")
    (tmp_path / "other.json").write_text('{"format": "something"}')
    with pytest.raises(JitkernValueError, match=r"not a jitkern export manifest"):
        jitkern.load(tmp_path / "other.json")
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(JitkernValueError, match=r"not a readable JSON manifest"):
        jitkern.load(tmp_path / "broken.json")
    manifest = dict(jit_export.manifest, version=99)
    (tmp_path / "future.json").write_text(json.dumps(manifest))
    with pytest.raises(JitkernValueError,
                       match=rf"manifest version 99.*reads version {export.MANIFEST_VERSION}"):
        jitkern.load(tmp_path / "future.json")
    manifest = dict(jit_export.manifest, binary_format="elf")
    (tmp_path / "fmt.json").write_text(json.dumps(manifest))
    with pytest.raises(JitkernValueError, match=r"binary_format 'elf'"):
        jitkern.load(tmp_path / "fmt.json")
    (tmp_path / "lost.json").write_text(json.dumps(jit_export.manifest))
    with pytest.raises(
        JitkernFileNotFoundError, match=r"binary 'scaled_rows\.(fatbin|sm_80\.cubin)' is missing"
    ):
        jitkern.load(tmp_path / "lost.json")


def test_fatbin_without_nvfatbin_says_what_to_install(tmp_path, monkeypatch):
    import cuda.bindings

    monkeypatch.setitem(sys.modules, "cuda.bindings.nvfatbin", None)
    monkeypatch.delattr(cuda.bindings, "nvfatbin", raising=False)
    with pytest.raises(
        JitkernValueError, match=r"needs nvFatbin.*pip install nvidia-nvfatbin.*cubin"
    ):
        K.scaled_rows.export(tmp_path / "k", *_jit_examples(), arch="sm_90")


def test_cubin_params_reads_offsets_of_any_type():
    from jitkern.toolchain.nvrtc import compile_source

    src = (
        "struct S { double a; char b; };\n"
        'extern "C" __global__ void k(float* x, char c, S s, int n, short h, float4 v) '
        "{ if (n) x[0] = c + s.a + h + v.x; }"
    )
    params = cubin_params(compile_source(src, arch="sm_80").data)["k"]
    assert params == [(0, 8), (8, 1), (16, 16), (32, 4), (36, 2), (48, 16)]


# ---------------------------------------------------------------------------
# GPU: exported, loaded, launched, compared with NumPy


def _poisoned(shape, dtype):
    out = jitkern.empty(shape, dtype)
    out.fill(np.nan if np.dtype(dtype).kind == "f" else -7)
    return out


@pytest.mark.gpu
@pytest.mark.parametrize("fmt", ["fatbin", "cubin", "ptx", "ltoir"])
def test_gpu_jit_export_load_launch(tmp_path, rng, fmt):
    n = 1000
    x = rng.standard_normal(n).astype(np.float32)
    m = rng.standard_normal((n, 3)).astype(np.float32)
    result = K.scaled_rows.export(
        tmp_path / "k", *_jit_examples(), arch=("sm_80", "sm_90"), format=fmt
    )
    k = jitkern.load(result.manifest_path).scaled_rows
    out = _poisoned(n, np.float32)
    k((n + 127) // 128, 128, (jitkern.asarray(x), jitkern.asarray(m), 1.5, out))
    # float32 on the GPU (a fused multiply-add) against a float64 reference
    want = 1.5 * x.astype(np.float64) + m[:, 1]
    np.testing.assert_allclose(out.get(), want, rtol=1e-6, atol=1e-6)
    # a strided view of a bigger array, through the [grid, block] syntax
    big = jitkern.asarray(rng.standard_normal((n, 6)).astype(np.float32))
    view = big[:, ::2]
    out2 = _poisoned(n, np.float32)
    k[(n + 127) // 128, 128](jitkern.asarray(x), view, np.float32(-2), out2)
    want = -2 * x.astype(np.float64) + big.get()[:, 2]
    np.testing.assert_allclose(out2.get(), want, rtol=1e-6, atol=1e-6)
    with pytest.raises(
        KernelArgumentError, match=r"exported for array\(float32, 2d, strided\).*float64"
    ):
        k(1, 32, (jitkern.asarray(x), jitkern.asarray(m.astype(np.float64)), 1.0, out))


@pytest.mark.gpu
def test_gpu_raw_module_export_load_launch(tmp_path, rng):
    mod = jitkern.RawModule(code=K.RAW_SOURCE, name_expressions=["scale3<float>"])
    path = mod.export(tmp_path / "mod", format="fatbin").manifest_path
    loaded = jitkern.load(path)
    n = 777
    x = rng.standard_normal(n)
    y = _poisoned(n, np.float64)
    loaded.add_scalar((n + 255) // 256, 256, (jitkern.asarray(x), 0.25, y, n))
    np.testing.assert_array_equal(y.get(), x + 0.25)
    f = rng.standard_normal(n).astype(np.float32)
    fd = jitkern.asarray(f)
    loaded["scale3<float>"][(n + 255) // 256, 256](fd, np.int32(n))
    np.testing.assert_array_equal(fd.get(), f * np.float32(3))
    with pytest.raises(KernelArgumentError, match=r"\(x\).*expects a pointer"):
        loaded.add_scalar(1, 32, (1.0, 0.25, y, n))


@pytest.mark.gpu
def test_gpu_elementwise_export_load_call(tmp_path, rng):
    k = K.saxpy()
    path = k.export(tmp_path / "saxpy", np.float64, np.float64, np.float32(2)).manifest_path
    loaded = jitkern.load(path).saxpy_exp
    x, y = rng.standard_normal((2, 33, 17))
    z = loaded(jitkern.asarray(x), jitkern.asarray(y), 0.5)
    # the GPU may fuse a * x + y: float64-level tolerance, absolute near cancellation
    np.testing.assert_allclose(z.get(), 0.5 * x + y, rtol=1e-14, atol=1e-14)
    out = _poisoned((33, 17), np.float64)
    assert loaded(jitkern.asarray(x), jitkern.asarray(y), 3.0, out) is out
    np.testing.assert_allclose(out.get(), 3.0 * x + y, rtol=1e-14, atol=1e-14)
    with pytest.raises(KernelArgumentError, match=r"does not broadcast"):
        loaded(jitkern.asarray(x), jitkern.asarray(y[:1]), 3.0)


@pytest.mark.gpu
def test_gpu_fused_export_load_call(tmp_path, rng):
    x32 = np.zeros(4, np.float32)
    path = K.fused_axpy.export(tmp_path / "f", x32, x32, np.float32(1)).manifest_path
    loaded = jitkern.load(path)["fused_fused_axpy"]
    x, y = rng.standard_normal((2, 500)).astype(np.float32)
    got = loaded(jitkern.asarray(x), jitkern.asarray(y), 1.5).get()
    want = 1.5 * x.astype(np.float64) + y.astype(np.float64) ** 2
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.gpu
def test_gpu_reduction_export_load_launch(tmp_path, rng):
    """The loaded row-reduction kernel, launched with its parameter list (one block per
    output row, no split), gives NumPy's result."""
    r = K.l2norm()
    rows, cols = 64, 300
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    result = r.export(tmp_path / "l2", x, axis=1)
    loaded = jitkern.load(result.manifest_path).l2norm_exp
    out = _poisoned(rows, np.float32)

    def shape_arg(values, size):
        raw = np.zeros(size // 8, np.int64)
        raw[: len(values)] = values
        return np.void(raw.tobytes())

    sizes = {p["name"]: p["size"] for p in loaded.params}
    args = (
        jitkern.asarray(x),
        out,
        0,
        np.int32(rows),
        np.int32(cols),
        np.int32(cols),
        shape_arg([rows], sizes["_oshape"]),
        shape_arg([cols], sizes["_rshape"]),
        shape_arg([cols * 4], sizes["_is_x"]),
        shape_arg([4], sizes["_rs_x"]),
        shape_arg([4], sizes["_os_y"]),
    )
    loaded.launch((rows, 1), 256, args)
    np.testing.assert_allclose(out.get(), np.sqrt((x.astype(np.float64) ** 2).sum(1)), rtol=1e-5)


_LAUNCH_NO_NVRTC = textwrap.dedent("""
    import sys
    sys.modules["cuda.bindings.nvrtc"] = None
    import numpy as np
    import jitkern
    from jitkern.toolchain import discovery as toolchain
    def refuse(*a, **k):
        raise AssertionError("NVRTC was touched")
    toolchain.nvrtc_module = refuse
    k = jitkern.load(sys.argv[1]).scaled_rows
    n = 300
    x = np.arange(n, dtype=np.float32)
    m = np.arange(3 * n, dtype=np.float32).reshape(n, 3)
    out = jitkern.asarray(np.full(n, np.nan, np.float32))  # a copy: no kernel compiled
    k(3, 128, (jitkern.asarray(x), jitkern.asarray(m), 2.0, out))
    ok = np.array_equal(out.get(), 2 * x + m[:, 1])
    print("RESULT", ok, "nvrtc imported:", sys.modules.get("cuda.bindings.nvrtc") is not None)
""")


@pytest.mark.gpu
def test_gpu_load_and_launch_without_nvrtc(jit_export, tmp_path):
    script = tmp_path / "launch.py"
    script.write_text(_LAUNCH_NO_NVRTC)
    repo = os.path.dirname(os.path.dirname(jitkern.__file__))
    env = dict(os.environ, PYTHONPATH=repo, JITKERN_CACHE_DIR=str(tmp_path / "empty-cache"))
    proc = subprocess.run(
        [sys.executable, str(script), jit_export.manifest_path],
        capture_output=True,
        text=True,
        env=env,
        timeout=200,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "RESULT True nvrtc imported: False" in proc.stdout
