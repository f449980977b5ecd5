"""Every JIT example runs with --simulate on any machine; without a GPU each says so."""

import importlib.util
import pathlib
import struct
import zlib

import numpy as np
import pytest

from jitkern.config import settings

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
JIT_EXAMPLES = {
    "jit_grid_stride_copy": "copied 65536 float32 twice in the simulator: OK",
    "jit_block_reduction": "relative error",
    "jit_histogram": "bytes matches numpy.bincount",
    "jit_transpose": "transposed a 100x150 matrix: OK",
}


def load(name):
    spec = importlib.util.spec_from_file_location("sim_example_" + name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", sorted(JIT_EXAMPLES))
def test_jit_examples_run_simulated(name, capsys, monkeypatch):
    monkeypatch.setattr(settings, "simulate", settings.simulate)  # restored afterwards
    load(name).main(["--simulate"])
    assert JIT_EXAMPLES[name] in capsys.readouterr().out


def read_png(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    idat = data.index(b"IDAT")
    (length,) = struct.unpack(">I", data[idat - 4 : idat])
    raw = zlib.decompress(data[idat + 4 : idat + 4 + length])
    rows = np.frombuffer(raw, np.uint8).reshape(height, 1 + 3 * width)
    return rows[:, 1:].reshape(height, width, 3)


def test_mandelbrot_simulated_writes_the_image(tmp_path, capsys):
    path = tmp_path / "m.png"
    load("jit_mandelbrot").main(["--simulate", str(path)])
    assert f"wrote {path} (120x80)" in capsys.readouterr().out
    image = read_png(path)
    assert image.shape == (80, 120, 3)
    # the set's interior (escape time = MAX_ITER, t = 1) is black; c = 0 is inside it
    row, col = round(1.0 / (3.0 / 120)), round(2.2 / (3.0 / 120))
    assert (image[row, col] == 0).all()
    assert image.max() > 100  # the outside is coloured


def test_examples_say_they_need_a_gpu(tmp_path, capsys, monkeypatch):
    import jitkern

    monkeypatch.setattr(jitkern, "is_available", lambda: False)
    for name in JIT_EXAMPLES:  # examples/README.md: one line on stderr, exit status 1
        assert load(name).main([]) == 1
        assert "needs a CUDA GPU and none was found" in capsys.readouterr().err
    monkeypatch.chdir(tmp_path)
    assert load("jit_mandelbrot").main([]) == 1
    assert "run it with --simulate (or JITKERN_SIMULATE=1)" in capsys.readouterr().err
    assert not (tmp_path / "mandelbrot.png").exists()


def test_demo_simulate_does_real_work(capsys):
    from jitkern.__main__ import main

    assert main(["demo", "--simulate"]) == 0
    out = capsys.readouterr().out
    assert "[ok] @jit.rawkernel grid_stride_copy (simulated)" in out
    assert "[ok] @jit.rawkernel block_sum" in out and "FAIL" not in out


STRING_EXAMPLES = {
    # the spec's printed results, computed by the simulator from the kernels' C
    "elementwise_squared_diff": "[[25. 16.  9.  4.  1.]\n [ 0.  1.  4.  9. 16.]]",
    "reduction_l2norm": "[ 5.477226  15.9687195]",
}


@pytest.mark.parametrize("name", sorted(STRING_EXAMPLES))
def test_string_kernel_examples_run_simulated(name, capsys, monkeypatch):
    pytest.importorskip("pycparser")
    monkeypatch.setattr(settings, "simulate", True)
    load(name).main(np)
    assert STRING_EXAMPLES[name] in capsys.readouterr().out


def test_complex_kernel_example_runs_simulated(capsys):
    pytest.importorskip("pycparser")
    load("complex_kernel").run_simulated()
    out = capsys.readouterr().out
    assert "spec example      ok (simulated): [5.+10.j 6.+12.j 7.+14.j 8.+16.j 9.+18.j]" in out
    assert "cuComplex.h code  ok (simulated): z * 1j for 8 values" in out
    assert "jitify=True        not simulated: RawKernel 'phase' line 2, column " in out
    assert "the header <type_traits>" in out
