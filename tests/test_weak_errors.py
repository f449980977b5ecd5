"""Mistakes outside the JIT compiler are jitkern errors that name the argument, raised where
the mistake is made (construction), not NumPy's or NVRTC's words from deep inside."""

import os
import subprocess
import sys

import numpy as np
import pytest

import jitkern
from jitkern import jit


@pytest.mark.parametrize("args", [(0, 10, 0), (5, 1, 0.0), (3, None, 0)])
def test_arange_with_step_zero_is_a_jitkern_value_error(args):
    with pytest.raises(jitkern.JitkernValueError, match="step must not be zero"):
        jitkern.arange(*args)


def test_arange_of_a_non_number_names_the_argument():
    with pytest.raises(jitkern.JitkernTypeError, match=r"arange: stop must be a real number"):
        jitkern.arange(0, "10")


@pytest.mark.parametrize("axis", [2, -3, (0, 7)])
def test_reduction_axis_out_of_range_is_a_jitkern_axis_error(axis):
    k = jitkern.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "my_total")
    x = np.random.default_rng().standard_normal((3, 4)).astype(np.float32)
    with pytest.raises(jitkern.JitkernAxisError, match="out of bounds") as info:
        k.inspect(x, axis=axis, arch="sm_90")
    assert "my_total" in str(info.value)
    assert isinstance(info.value, np.exceptions.AxisError)  # NumPy's class, still caught so


@jitkern.fuse()
def _summed(x):
    return jitkern.sum(x * 2, axis=4)


def test_fuse_axis_out_of_range_is_a_jitkern_axis_error():
    # the traced kernel's path (the GPU's and the simulator's), not NumPy's own call
    x = np.random.default_rng().standard_normal((3, 4)).astype(np.float32)
    with pytest.raises(jitkern.JitkernAxisError, match="axis 4 is out of bounds"):
        _summed.simulate(x)


@pytest.mark.parametrize("options, error, words", [
    (3, jitkern.JitkernTypeError, "options: expected a tuple of str, got int"),
    ((b"-O3",), jitkern.JitkernTypeError, "every option must be a str"),
    (("O3",), jitkern.JitkernValueError, "'O3' is not a compiler option"),
])
def test_rawkernel_options_are_checked_at_construction(options, error, words):
    with pytest.raises(error, match=words):
        jit.rawkernel(options=options)


def test_raw_kernel_option_without_a_dash_is_named():
    with pytest.raises(jitkern.JitkernValueError, match="'use_fast_math' is not a compiler option"):
        jitkern.RawKernel('extern "C" __global__ void k() {}', "k", options=("use_fast_math",))


@pytest.mark.parametrize("reduce_type, words", [
    ("float32", "NumPy's name: give the C type 'float'"),
    ("flaot", "is not a C type this kernel knows"),
    (object(), "expected a C type name or a NumPy dtype"),
])
def test_unknown_reduce_type_is_named_at_construction(reduce_type, words):
    with pytest.raises(jitkern.JitkernError, match=words) as info:
        jitkern.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "rsum",
                                reduce_type=reduce_type)
    assert "rsum: reduce_type" in str(info.value)


@pytest.mark.parametrize("reduce_type", ["double", "T", "unsigned long long", "my_acc",
                                         np.float64])
def test_known_reduce_types_are_accepted(reduce_type):
    k = jitkern.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "rsum",
                                reduce_type=reduce_type, preamble="typedef double my_acc;")
    x = np.random.default_rng().standard_normal(64).astype(np.float32)
    assert k.inspect(x, arch="sm_90").registers > 0


def test_more_than_cudas_parameter_space_is_a_kernel_argument_error(tmp_path):
    n = 4100  # 4100 float64 scalars: 32,808 bytes, over CUDA's 32,764
    params = ", ".join(f"a{i}" for i in range(n))
    script = tmp_path / "wide.py"
    script.write_text(
        "import numpy as np\nimport jitkern\nfrom jitkern import jit\n\n"
        f"@jit.rawkernel()\ndef wide(out, {params}):\n    out[0] = a0\n\n"
        "try:\n"
        f"    wide.inspect(np.zeros(1), *[np.float64(i) for i in range({n})], arch='sm_90')\n"
        "except jitkern.KernelArgumentError as exc:\n    print('KernelArgumentError:', exc)\n")
    env = dict(os.environ, JITKERN_CACHE_DIR=str(tmp_path / "cache"))
    env["PYTHONPATH"] = os.pathsep.join([os.getcwd(), env.get("PYTHONPATH", "")])
    proc = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "32,808 bytes of parameters, more than CUDA's limit of 32,764" in proc.stdout
    assert "bug in jitkern" not in proc.stdout


def test_a_relative_cache_dir_is_resolved_once(tmp_path):
    code = ("import os, jitkern\nfrom jitkern.config import settings\n"
            "first = settings.cache_dir\nos.chdir(os.path.dirname(os.getcwd()))\n"
            "print(first == settings.cache_dir, os.path.isabs(first), first)\n")
    (tmp_path / "work").mkdir()
    env = dict(os.environ, JITKERN_CACHE_DIR="rel-cache")
    env["PYTHONPATH"] = os.pathsep.join([os.getcwd(), env.get("PYTHONPATH", "")])
    proc = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path / "work",
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    same, absolute, folder = proc.stdout.split()
    assert (same, absolute) == ("True", "True")
    assert folder == str(tmp_path / "work" / "rel-cache")


@pytest.mark.parametrize("fields, argument", [
    (dict(map_expr="x *"), "map_expr 'x *'"),
    (dict(reduce_expr="a + b)"), "reduce_expr 'a + b)'"),
    (dict(post_map_expr="y = a +"), "post_map_expr 'y = a +'"),
    (dict(identity="zero_val"), "identity 'zero_val'"),
])
def test_reduction_c_mistake_names_its_argument_once(fields, argument):
    given = dict(map_expr="x", reduce_expr="a + b", post_map_expr="y = a", identity="0")
    given.update(fields)
    k = jitkern.ReductionKernel("T x", "T y", given["map_expr"], given["reduce_expr"],
                                given["post_map_expr"], given["identity"], "rk_mistake")
    x = np.random.default_rng().standard_normal(64).astype(np.float32)
    with pytest.raises(jitkern.CompileError) as info:
        k.inspect(x, arch="sm_90")
    message = str(info.value)
    assert message.splitlines()[0] == f"rk_mistake: the compiler rejected the C++ in {argument}"
    assert message.count(": error:") == 1  # pasted into several loops, reported once


def test_elementwise_c_mistake_names_the_operation():
    k = jitkern.ElementwiseKernel("float32 x", "float32 y", "y = x +\n  undefined_thing;",
                                  "ew_mistake")
    with pytest.raises(jitkern.CompileError) as info:
        k.inspect(np.zeros(100, np.float32), arch="sm_90")
    message = str(info.value)
    assert message.startswith("ew_mistake: the compiler rejected the C++ in operation "
                              "'y = x + undefined_thing;'")
    assert message.count('identifier "undefined_thing" is undefined') == 1
