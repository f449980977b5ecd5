"""fuse as CuPy's fuse records it (issue 17): several reductions in one function, functions
that return None, traced arrays' shape/size/clip/round, indexing of any rank, and CuPy's own
routines (cupy.sin, cupy.where, cupy.sum(axis=...), cupy.nansum, ...) inside the function.

Each body runs on the GPU with jitkern arrays and in the simulator with NumPy arrays."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import jitkern

F32_TOL = dict(rtol=2e-5, atol=2e-5)


def _f32(rng, shape):
    return rng.standard_normal(shape).astype(np.float32)


@jitkern.fuse()
def sum_plus_max(x, y):
    return x.sum() + y.max()


@jitkern.fuse()
def centred_sum_of_squares(x):
    d = x - x.mean()
    return (d * d).sum()


@jitkern.fuse()
def two_axes(x):
    return x.sum(axis=0), x.max(axis=1)


@jitkern.fuse()
def chained(x, y):
    m = x.mean(axis=1, keepdims=True)
    d = (x - m) * y
    return (d * d).sum(axis=1) + x.min()


@jitkern.fuse()
def one_reduction(x):
    return (x * x).sum()


@pytest.mark.parametrize("fn, ref", [
    (sum_plus_max, lambda x, y: x.sum() + y.max()),
    (centred_sum_of_squares, lambda x, y: ((x - x.mean()) ** 2).sum()),
    (two_axes, lambda x, y: (x.sum(axis=0), x.max(axis=1))),
    (chained, lambda x, y: (((x - x.mean(1, keepdims=True)) * y) ** 2).sum(1) + x.min()),
], ids=["sum+max", "centred", "two-axes", "chained"])
def test_several_reductions_in_one_function(launch, rng, fn, ref):
    x, y = _f32(rng, (37, 29)), _f32(rng, (37, 29))
    got = launch(fn)(launch.to_device(x), launch.to_device(y)) if fn in (sum_plus_max, chained) \
        else launch(fn)(launch.to_device(x))
    want = ref(x.astype(np.float64), y.astype(np.float64))
    got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    for g, w in zip(got, want):
        np.testing.assert_allclose(launch.get(g), w, rtol=1e-4, atol=1e-4)


def test_reductions_run_as_one_kernel_each_and_one_reduction_stays_one_kernel():
    x = np.zeros((8, 4), np.float32)
    assert len(one_reduction.kernels_for(x)) == 1
    assert len(sum_plus_max.kernels_for(x, x)) == 3  # two reductions, then their sum
    assert len(centred_sum_of_squares.kernels_for(x)) == 2


def test_a_function_returning_none_returns_none_after_its_writes(launch, rng):
    @jitkern.fuse()
    def scale_into(x, out):
        out[...] = x * 3

    @jitkern.fuse()
    def nothing(x):
        x + 1

    x = _f32(rng, (5, 6))
    out = launch.poisoned((5, 6), np.float32)
    assert launch(scale_into)(launch.to_device(x), out) is None
    np.testing.assert_allclose(launch.get(out), x * 3, **F32_TOL)
    assert launch(nothing)(launch.to_device(x)) is None


def test_shape_and_size_are_this_calls_and_each_shape_gets_its_kernel(launch, rng):
    @jitkern.fuse()
    def by_shape(x):
        return x * x.shape[0] + x.size

    for shape in [(3, 4), (5, 2), (3, 4)]:
        x = _f32(rng, shape)
        got = launch.get(launch(by_shape)(launch.to_device(x)))
        np.testing.assert_allclose(got, x * shape[0] + x.size, rtol=1e-5)


def test_array_methods_clip_and_round(launch, rng):
    @jitkern.fuse()
    def methods(x):
        return x.clip(-0.5, 0.5) + (x * 4).round() + x.clip(min=0)

    x = _f32(rng, (64,))
    want = np.clip(x, -0.5, 0.5) + np.round(x * 4) + np.clip(x, 0, None)
    np.testing.assert_allclose(launch.get(launch(methods)(launch.to_device(x))), want, **F32_TOL)


def test_indexing_arrays_of_any_rank(launch, rng):
    @jitkern.fuse()
    def pick(x):
        return x[1, 2] + x[0, -1, :, 3:4] * x[2, 0, 1, 5]

    x = _f32(rng, (3, 4, 5, 6))
    want = x[1, 2] + x[0, -1, :, 3:4] * x[2, 0, 1, 5]
    np.testing.assert_allclose(launch.get(launch(pick)(launch.to_device(x))), want, **F32_TOL)


@pytest.mark.parametrize("key, words", [
    ((3,), "index 3 is out of bounds for axis 0 with size 3"),
    ((0, 0, 0, 0, 0), "too many indices"),
    ((0, 9), "index 9 is out of bounds for axis 1 with size 4"),
])
def test_index_out_of_range_or_too_many_is_an_index_error_at_trace_time(key, words):
    fn = jitkern.fuse(lambda x: x[key] * 2)
    with pytest.raises(IndexError, match=words) as info:
        fn.graph_for(np.zeros((3, 4, 5, 6), np.float32))
    assert isinstance(info.value, jitkern.JitkernError)
    assert "shape (3, 4, 5, 6)" in str(info.value) and "x[key] * 2" in str(info.value)


def _cupy():
    cupy = pytest.importorskip("cupy")
    return cupy


def test_cupy_routines_inside_a_fused_function_against_numpy(launch, rng):
    cupy = _cupy()

    @jitkern.fuse()
    def uses_cupy(x, y):
        a = cupy.sin(x) + cupy.where(x > 0, x, y) * cupy.abs(y)
        b = cupy.around(a) + cupy.real(a) + cupy.clip(a, -0.5, 0.5)
        return cupy.sum(b, axis=1), cupy.nansum(x), cupy.all(x > -100), cupy.any(y > 100)

    x, y = _f32(rng, (9, 13)), _f32(rng, (9, 13))
    got = launch(uses_cupy)(launch.to_device(x), launch.to_device(y))
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    a = np.sin(x64) + np.where(x64 > 0, x64, y64) * np.abs(y64)
    b = np.around(a) + a + np.clip(a, -0.5, 0.5)
    np.testing.assert_allclose(launch.get(got[0]), b.sum(axis=1), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(launch.get(got[1]), x64.sum(), rtol=1e-4, atol=1e-4)
    assert launch.get(got[2]) == np.True_ and launch.get(got[3]) == np.False_


@pytest.mark.gpu
def test_cupy_arrays_and_cupy_routines_in_a_fused_function(rng):
    cupy = _cupy()

    @jitkern.fuse()
    def normalise(x):
        return (x - cupy.mean(x, axis=0)) / cupy.sqrt(cupy.sum(x * x, axis=0))

    x = _f32(rng, (100, 7))
    got = normalise(cupy.asarray(x))
    x64 = x.astype(np.float64)
    want = (x64 - x64.mean(axis=0)) / np.sqrt((x64 * x64).sum(axis=0))
    np.testing.assert_allclose(cupy.asnumpy(cupy.asarray(got)), want, rtol=1e-4, atol=1e-5)


def test_cupy_is_never_imported_by_fuse(tmp_path):
    script = textwrap.dedent("""
        import sys
        import numpy as np
        import jitkern

        @jitkern.fuse()
        def f(x):
            return (x * 2).sum() + x.max()

        x = np.arange(10, dtype=np.float32)
        print(float(f.simulate(x)), "cupy" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(float(np.arange(10).sum() * 2 + 9)), "False"]


def test_an_unsupported_cupy_routine_names_it(rng):
    cupy = _cupy()
    fn = jitkern.fuse(lambda x: cupy.sinc(x))
    with pytest.raises(TypeError, match="cupy.sinc is not supported") as info:
        fn.graph_for(_f32(rng, (4,)))
    assert isinstance(info.value, jitkern.JitkernError)


def test_a_fused_function_is_a_kernel_object_like_the_others():
    """issue 16: Fused sits on the Kernel base (compared by identity, hashable, no launch
    configuration), keeps CuPy's ``func`` and ``name``, and runs its kernels as before."""
    def scaled_sum(x, y):
        return x * 2 + y

    fused, again = jitkern.fuse(scaled_sum), jitkern.fuse(kernel_name="named")(scaled_sum)
    assert fused.func is scaled_sum and (fused.name, again.name) == ("scaled_sum", "named")
    assert fused == fused and fused != again and {fused: 1, again: 2}[again] == 2
    with pytest.raises(TypeError, match=r"call it as scaled_sum\(\*args\)") as info:
        fused[1, 32]
    assert isinstance(info.value, jitkern.JitkernError)
    x, y = np.random.default_rng().standard_normal((2, 17))
    np.testing.assert_allclose(fused(x, y), x * 2 + y, rtol=1e-15)  # NumPy arrays: NumPy runs it
