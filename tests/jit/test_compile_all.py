"""Every test and example kernel compiles with NVRTC for sm_80 and sm_90 (no GPU needed)."""

import numpy as np
import pytest

import test_jit_gpu as g  # noqa: E402  (tests/jit is on sys.path under pytest)

f32 = np.zeros(8, np.float32)
f64 = np.zeros(8, np.float64)
i32 = np.zeros(8, np.int32)
i64 = np.zeros(8, np.int64)
b1 = np.zeros(8, np.bool_)
m2 = np.zeros((4, 6), np.float32)
c64 = np.zeros(8, np.complex64)

CASES = {
    "elementwise_copy": (g.elementwise_copy, (f32, f32, np.uint32(8))),
    "sqdiff_f16": (g.sqdiff, (np.zeros(8, np.float16),) * 3 + (8,)),
    "sqdiff_u8": (g.sqdiff, (np.zeros(8, np.uint8),) * 3 + (8,)),
    "divmod_i8": (g.divmod_kernel, (np.zeros(8, np.int8),) * 4 + (f64, 8)),
    "divmod_u32": (g.divmod_kernel, (np.zeros(8, np.uint32),) * 4 + (f64, 8)),
    "divmod_f32": (g.divmod_kernel, (f32,) * 5 + (8,)),
    "int_division_by_zero": (g.int_division_by_zero, (i32, i32)),
    "power": (g.power_kernel, (i64, i64, i64, f32, f32)),
    "control_flow": (g.control_flow, (f32, f32, b1, i64, 8)),
    "math_f32": (g.math_kernel, (f32,) * 9 + (b1, 8)),
    "math_f64": (g.math_kernel, (f64,) * 9 + (b1, 8)),
    "transpose": (g.transpose_kernel, (m2, m2.T.copy())),
    "row_sums": (g.row_sums, (np.zeros((4, 6)), f64)),
    "row_sums_view": (g.row_sums, (np.zeros((4, 6))[::2, ::-3], f64)),
    "strided_copy": (g.strided_copy, (f32[::2], f32, 4)),
    "block_sum": (g.block_sum, (f32, f32, 8)),
    "histogram_u64": (g.histogram, (i32, np.zeros(8, np.uint64), 8)),
    "histogram_i64": (g.histogram, (i32, i64, 8)),
    "loop_semantics": (g.loop_variable_semantics, (i64, 10, 0, 1)),
    "atomics": (g.atomics_zoo, (i32, np.zeros((5, 8), np.int32), f64, f64)),
    "votes": (g.votes, (i32, np.zeros((9, 8), np.int64))),
    "grid_sync": (g.grid_sync_kernel, (i64, i64, 8)),
    "cub": (g.cub_reduce, (f32, f32, f32)),
    "complex": (g.complex_kernel, (c64, c64, c64, f32)),
    "printer": (g.printer, (f32, 3)),
    "add_one": (g.add_one, (f32, f32, 8)),
    "misc": (g.misc_builtins, (f64, f64, i64, np.zeros(8, np.float16))),
    "groups": (
        g.groups_and_tiles,
        (f32, np.zeros((7, 8), np.float32), f32, b1, np.zeros(1, np.float16)),
    ),
    "half_math": (g.half_math, (np.zeros(8, np.float16),) * 2),
}


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_kernel_compiles(name, arch):
    kernel, args = CASES[name]
    result = kernel.inspect(*args, arch=arch)
    assert result.cubin and result.registers is not None
    assert result.arch == arch
    assert "#line" in result.source


def test_cooperative_kernels_are_marked():
    g.grid_sync_kernel.inspect(i64, i64, 8, arch="sm_90")
    built = next(iter(g.grid_sync_kernel._by_types.values()))
    assert built.cooperative
    g.add_one.inspect(f32, f32, 8, arch="sm_90")
    assert not next(iter(g.add_one._by_types.values())).cooperative


def _example(name):
    import importlib.util
    import os

    path = os.path.join(os.path.dirname(__file__), "..", "..", "examples", name + ".py")
    spec = importlib.util.spec_from_file_location("example_" + name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


u8 = np.zeros(8, np.uint8)
EXAMPLES = {
    "jit_grid_stride_copy": lambda m: (m.elementwise_copy, (f32, f32, np.uint32(8))),
    "jit_block_reduction": lambda m: (m.block_sum, (f32, f32, 8)),
    "jit_histogram": lambda m: (m.histogram, (u8, np.zeros(256, np.uint32), 8)),
    "jit_transpose": lambda m: (m.transpose, (m2, m2.T.copy())),
    "jit_mandelbrot": lambda m: (
        m.mandelbrot,
        (np.zeros((4, 4, 3), np.uint8), -2.0, -1.0, 0.01, 100),
    ),
}


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_kernels_compile(name, arch):
    kernel, args = EXAMPLES[name](_example(name))
    assert kernel.inspect(*args, arch=arch).cubin
