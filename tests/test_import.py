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
    out = _run("""
        import sys, jitkern
        jitkern.RawKernel, jitkern.ElementwiseKernel if False else None
        print(sorted(m for m in sys.modules if m.startswith("cuda")))
    """)
    assert out.strip() == "[]"


def test_import_time_is_small():
    out = _run("""
        import time
        import numpy  # imported by any numeric program anyway
        t = time.perf_counter()
        import jitkern
        print(time.perf_counter() - t)
    """)
    assert float(out) < 0.15


def test_public_names_resolve():
    out = _run("""
        import jitkern
        for name in ["RawKernel", "RawModule", "Device", "Stream", "Event", "compile_with_cache",
                     "memoize", "clear_memo", "CUDAError", "CompileError"]:
            getattr(jitkern, name)
        print("ok")
    """)
    assert out.strip() == "ok"
