"""import jitkern needs no GPU and no CUDA libraries, and is cheap."""

import os
import subprocess
import sys
import textwrap


def _run(code: str) -> str:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.getcwd(), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, check=True).stdout


def test_import_loads_no_cuda_module_and_touches_no_device():
    # constructing a kernel of each kind (no compile, no launch) loads no CUDA module either
    out = _run("""
        import sys, jitkern
        jitkern.RawKernel('extern "C" __global__ void k(float* x) {}', "k")
        jitkern.ElementwiseKernel("float32 x", "float32 y", "y = x", "copy")
        jitkern.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "total")
        print(sorted(m for m in sys.modules if m.startswith("cuda")))
        print(sorted(m for m in sys.modules if m.startswith("jitkern.kernels.")))
    """)
    cuda_modules, kernel_modules = out.strip().splitlines()
    assert cuda_modules == "[]"
    # the kernels were really built (their modules are loaded)
    assert "jitkern.kernels.elementwise" in kernel_modules
    assert "jitkern.kernels.reduction" in kernel_modules
    assert "jitkern.kernels.raw" in kernel_modules


def test_import_time_is_small():
    out = _run("""
        import time
        import numpy  # imported by any numeric program anyway
        t = time.perf_counter()
        import jitkern
        print(time.perf_counter() - t)
    """)
    assert float(out) < 0.15


def test_public_names_resolve_to_jitkern_objects_of_that_name():
    out = _run("""
        import jitkern
        for name in jitkern.__all__:
            value = getattr(jitkern, name)
            print(name, getattr(value, "__name__", "?"), getattr(value, "__module__", "?"))
    """)
    rows = [line.split() for line in out.strip().splitlines()]
    import jitkern

    assert [r[0] for r in rows] == list(jitkern.__all__)
    for name, defined_as, module in rows:
        assert defined_as == name, (name, defined_as)
        assert module.startswith("jitkern"), (name, module)


def test_unknown_name_is_an_attribute_error_naming_it():
    import pytest

    import jitkern

    with pytest.raises(AttributeError, match="'no_such_thing'") as info:
        jitkern.no_such_thing  # noqa: B018
    assert isinstance(info.value, jitkern.JitkernError)
