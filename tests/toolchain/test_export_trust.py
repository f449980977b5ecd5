"""Exports cannot be turned against the loader: a malformed manifest is a typed error naming
the field, binaries stay inside the export's folder and match the SHA-256 the manifest
records, and writers (even concurrent ones) never leave a manifest paired with another
export's binary."""

import hashlib
import json
import os
import subprocess
import sys
import textwrap
import uuid

import pytest

import jitkern
from jitkern.errors import JitkernError, JitkernFileNotFoundError, JitkernValueError


def _source(value: int) -> str:
    return ('extern "C" __global__ void add_k(const float* x, float* y, int n) {\n'
            '  int i = blockIdx.x * blockDim.x + threadIdx.x;\n'
            f'  if (i < n) y[i] = x[i] + {value}.0f;\n}}\n')


@pytest.fixture
def exported(tmp_path):
    value = int.from_bytes(os.urandom(2), "little")
    k = jitkern.RawKernel(_source(value), "add_k")
    result = k.export(tmp_path / "k", arch=("sm_80", "sm_90"), format="cubin")
    return tmp_path, result


def _rewrite(folder, manifest, name="bad"):
    path = folder / f"{name}.json"
    path.write_text(json.dumps(manifest))
    return path


def _without(d: dict, key: str) -> dict:
    return {k: v for k, v in d.items() if k != key}


@pytest.mark.parametrize("change, words", [
    (lambda m: _without(m, "entries"), "has no 'entries'"),
    (lambda m: dict(m, entries={"add_k": 1}), "'entries' must be a list"),
    (lambda m: dict(m, entries=[_without(m["entries"][0], "name")]), "entries[0] has no 'name'"),
    (lambda m: dict(m, entries=["add_k"]), "entries[0] must be an object"),
    (lambda m: dict(m, files=["k.sm_80.cubin"]), "'files' must be an object"),
    (lambda m: dict(m, files={"sm_80": 7}), "files['sm_80'] must be a file name"),
    (lambda m: _without(m, "sha256"), "has no 'sha256'"),
    (lambda m: dict(m, entries=[dict(m["entries"][0], params=[{"name": "x"}])]),
     "params[0] has no 'kind'"),
    (lambda m: dict(m, entries=[dict(m["entries"][0], params=[
        dict(m["entries"][0]["params"][0], offset="0")])]), "'offset' must be an int"),
    (lambda m: dict(m, entries=[m["entries"][0], m["entries"][0]]), "a second kernel named"),
])
def test_malformed_manifest_is_a_typed_error_naming_the_field(exported, change, words):
    folder, result = exported
    path = _rewrite(folder, change(json.loads(json.dumps(result.manifest))))
    with pytest.raises(JitkernValueError) as info:
        jitkern.load(path)
    assert words in str(info.value) and str(path) in str(info.value)
    assert isinstance(info.value, ValueError) and isinstance(info.value, JitkernError)


@pytest.mark.parametrize("name", ["../outside.cubin", "/etc/hostname", "sub/k.cubin", ".."])
def test_binary_paths_stay_in_the_export_folder(exported, name):
    folder, result = exported
    outside = folder.parent / "outside.cubin"
    outside.write_bytes((folder / "k.sm_80.cubin").read_bytes())
    manifest = json.loads(json.dumps(result.manifest))
    manifest["files"]["sm_80"] = name
    manifest["sha256"][name] = manifest["sha256"]["k.sm_80.cubin"]
    with pytest.raises(JitkernValueError, match="not a plain file name in the export's folder"):
        jitkern.load(_rewrite(folder, manifest))
    outside.unlink()


def test_a_link_out_of_the_folder_is_refused(exported):
    folder, result = exported
    outside = folder.parent / f"outside-{uuid.uuid4().hex[:6]}.cubin"
    outside.write_bytes((folder / "k.sm_80.cubin").read_bytes())
    os.unlink(folder / "k.sm_80.cubin")
    os.symlink(outside, folder / "k.sm_80.cubin")
    with pytest.raises(JitkernValueError, match="link that leads out of the export's folder"):
        jitkern.load(folder / "k.json")
    outside.unlink()


def test_another_kernels_binary_under_the_same_name_is_refused(exported, tmp_path_factory):
    folder, result = exported
    # the same kernel name and signature, another body, exported elsewhere
    other_value = int(result.manifest["sha256"]["k.sm_90.cubin"][:4], 16) + 70000
    other = jitkern.RawKernel(_source(other_value), "add_k")
    elsewhere = tmp_path_factory.mktemp("other")
    other.export(elsewhere / "k", arch=("sm_80", "sm_90"), format="cubin")
    (folder / "k.sm_90.cubin").write_bytes((elsewhere / "k.sm_90.cubin").read_bytes())
    with pytest.raises(JitkernValueError, match=r"'k\.sm_90\.cubin' does not match the manifest"):
        jitkern.load(folder / "k.json")


def test_a_missing_binary_is_named(exported):
    folder, _result = exported
    os.unlink(folder / "k.sm_90.cubin")
    with pytest.raises(JitkernFileNotFoundError, match=r"binary 'k\.sm_90\.cubin' is missing"):
        jitkern.load(folder / "k.json")


def test_manifest_records_the_sha256_of_every_binary(exported):
    folder, result = exported
    on_disk = json.loads((folder / "k.json").read_text())
    assert sorted(on_disk["sha256"]) == sorted(on_disk["files"].values())
    for name, digest in on_disk["sha256"].items():
        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == digest
    assert sorted(jitkern.load(folder / "k.json")) == ["add_k"]


def test_concurrent_exports_to_one_path_are_safe(tmp_path):
    values = [int.from_bytes(os.urandom(2), "little") + 1000 * i for i in range(4)]
    script = textwrap.dedent("""
        import sys, jitkern
        value = int(sys.argv[1])
        src = (\'extern "C" __global__ void add_k(const float* x, float* y, int n) {\\n\'
               \'  int i = blockIdx.x * blockDim.x + threadIdx.x;\\n\'
               f\'  if (i < n) y[i] = x[i] + {value}.0f;\\n}}\\n\')
        kernel = jitkern.RawKernel(src, "add_k")
        for _ in range(15):  # compiled once; the writes then race the other processes'
            kernel.export(sys.argv[2], arch=("sm_80", "sm_90"), format="cubin")
    """)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.getcwd(), env.get("PYTHONPATH", "")])
    procs = [subprocess.Popen([sys.executable, "-c", script, str(v), str(tmp_path / "k")],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for v in values]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0] * len(procs), [o[1] for o in outs]
    assert sorted(os.listdir(tmp_path)) == sorted(
        ["k.json", "k.h", "k.cu", "k.sm_80.cubin", "k.sm_90.cubin"])  # no temporary left
    module = jitkern.load(tmp_path / "k.json")  # binaries match the manifest's SHA-256s
    manifest = module.manifest
    source = (tmp_path / "k.cu").read_text()
    assert hashlib.sha256(source.encode()).hexdigest() == manifest["source_sha256"]
    assert any(f"+ {v}.0f" in source for v in values)
