"""String kernels behave as CuPy's (issue 25, section 3): parameter names CuPy allows, Python
scalars for ``raw`` scalar parameters. Each twin test runs on the GPU ([gpu]) and in the
simulator ([sim]) from one body, against NumPy, with poisoned outputs."""

import numpy as np
import pytest

import jitkern
from jitkern.compiler.strings.params import ParamError

PI = "3.141592653589793"


# -- names: CuPy reserves 'i' in ElementwiseKernel, nothing plain in ReductionKernel ----------


def test_a_window_kernel_may_name_its_length_n(rng, launch):
    n = int(rng.integers(5, 400))
    hann = jitkern.ElementwiseKernel(
        "int64 n", "float64 w", f"w = 0.5 - 0.5 * cos(2.0 * {PI} * i / (n - 1))", "hann_n")
    w = launch.poisoned(n, np.float64)
    out = launch(hann)(n, w)
    assert out is w
    np.testing.assert_allclose(launch.get(w), np.hanning(n), rtol=1e-12, atol=1e-15)


def test_an_array_parameter_may_be_named_n(rng, launch):
    x = rng.standard_normal(int(rng.integers(1, 3000)))
    k = jitkern.ElementwiseKernel("float64 n, raw float64 m", "float64 y",
                                  "y = n * 2.0 + m[_ind.size() - 1 - i]", "named_n")
    y = launch.poisoned(x.shape, np.float64)
    launch(k)(launch.to_device(x), launch.to_device(x), y)
    np.testing.assert_allclose(launch.get(y), x * 2 + x[::-1], rtol=1e-15)


def test_reduction_parameters_may_be_named_i_and_n(rng, launch):
    rows, cols = (int(v) for v in rng.integers(1, 300, 2))
    x, y = rng.standard_normal((2, rows, cols))
    dot = jitkern.ReductionKernel("float64 i, float64 n", "float64 s", "i * n", "a + b",
                                  "s = a", "0", "dot_in")
    s = launch.poisoned(rows, np.float64)
    launch(dot)(launch.to_device(x), launch.to_device(y), s, axis=1)
    np.testing.assert_allclose(launch.get(s), (x * y).sum(axis=1), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("params, name, why", [
    ("float32 i", "'i'", "element's index"),
    ("float32 x, float32 _ind", "'_ind'", "starting with '_'"),
    ("float32 _k", "'_k'", "starting with '_'"),
])
def test_elementwise_refuses_the_names_cupy_reserves(params, name, why):
    with pytest.raises(ParamError) as info:
        jitkern.ElementwiseKernel(params, "float32 y", "y = 0", "reserved")
    assert isinstance(info.value, ValueError) and isinstance(info.value, jitkern.JitkernError)
    assert f"{name} is reserved" in str(info.value) and why in str(info.value)
    assert f"in_params {params!r}" in str(info.value)


def test_reduction_refuses_underscore_names_but_not_i():
    with pytest.raises(ParamError, match="'_s' is reserved"):
        jitkern.ReductionKernel("float32 _s", "float32 y", "_s", "a + b", "y = a", "0", "r")
    k = jitkern.ReductionKernel("float32 i", "float32 y", "i", "a + b", "y = a", "0", "r_i")
    assert [p.name for p in k.in_params] == ["i"]


# -- raw scalar parameters take Python and NumPy scalars, converted to their declared type ----


def test_raw_scalars_take_python_scalars(rng, launch):
    x = rng.standard_normal(int(rng.integers(1, 5000))).astype(np.float32)
    k = jitkern.ElementwiseKernel("T x, raw T a, raw int32 k", "T y", "y = x * a + k", "raw_sc")
    d = launch.to_device(x)
    draws = [(float(rng.standard_normal()), int(rng.integers(-50, 50))) for _ in range(2)]
    draws.append((np.float32(rng.standard_normal()), np.int32(rng.integers(-50, 50))))
    for a, k0 in draws:  # the general path, the generated one, NumPy scalars
        y = launch.poisoned(x.shape, np.float32)
        launch(k)(d, a, k0, y)
        # float64 reference; the GPU may contract x * a + k into one FMA (one rounding)
        a32, k32 = np.float64(np.float32(a)), np.float64(np.float32(k0))
        want = x.astype(np.float64) * a32 + k32
        bound = 2.0**-22 * (np.abs(x * a32) + abs(k32))
        assert np.all(np.abs(launch.get(y) - want) <= bound), (a, k0)


def test_raw_scalar_sets_the_length_of_an_all_raw_kernel(rng, launch):
    n = int(rng.integers(1, 2000))
    x = rng.standard_normal(n)
    rev = jitkern.ElementwiseKernel("raw T x, raw int64 m", "raw T y", "y[i] = x[m - 1 - i]",
                                    "raw_rev")
    y = launch.poisoned(n, np.float64)
    launch(rev)(launch.to_device(x), np.int64(n), y, size=n)
    np.testing.assert_array_equal(launch.get(y), x[::-1])


def test_reduction_raw_scalar_weight(rng, launch):
    x = rng.standard_normal((int(rng.integers(1, 50)), int(rng.integers(1, 700))))
    w = float(rng.standard_normal())
    k = jitkern.ReductionKernel("T x, raw T w", "T y", "x * w", "a + b", "y = a", "0", "rw_red")
    y = launch.poisoned(x.shape[0], np.float64)
    launch(k)(launch.to_device(x), w, y, axis=1)
    np.testing.assert_allclose(launch.get(y), (x * w).sum(axis=1), rtol=1e-12, atol=1e-12)


def test_a_raw_scalar_out_of_its_type_is_refused_naming_it():
    k = jitkern.ElementwiseKernel("T x, raw int8 k", "T y", "y = x + k", "raw_int8")
    with pytest.raises(TypeError) as info:
        k.simulate(np.zeros(4, np.float32), 300)
    assert "'k'" in str(info.value) and "300" in str(info.value)


# -- one element per thread where an operation could tell (compiler/strings/mapping.py) -------


def cupy_threads(n: int, block_size: int = 128) -> tuple[int, int]:
    """(blocks, threads per block) CuPy's linear_launch gives n elements."""
    block = min(block_size, n)
    return -(-n // block), block


def test_a_loop_prep_variable_changed_by_the_operation_starts_fresh_per_element(rng, launch):
    # CuPy runs one element per thread, so each element sees loop_prep's value; several
    # elements per thread would alternate 0, 1, 0, 1, ...
    n = int(rng.integers(*launch.pick((2, 100_000), (8193, 20_000))))  # past 64 blocks of 128
    flip = jitkern.ElementwiseKernel("T x", "T y", "y = x + flip; flip = 1 - flip;", "flip_lp",
                                     loop_prep="int flip = 0;")
    x = rng.standard_normal(n).astype(np.float32)
    y = launch.poisoned(n, np.float32)
    launch(flip)(launch.to_device(x), y)
    np.testing.assert_array_equal(launch.get(y), x)


#: element counts below one block, and past the 64 blocks of 128 threads the simulator's
#: grid-stride launches stop at (where several elements would share a thread)
SIZES = {"small": (1, 128), "large": (8193, 20_000)}


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("block_size", [None, 32, 100, 1024])
def test_after_loop_runs_once_per_thread_of_cupys_launch(rng, launch, block_size, size):
    n = int(rng.integers(*SIZES[size]))
    count = jitkern.ElementwiseKernel(
        # the counters are raw *outputs*: a raw input is const, as in CuPy (atomicAdd on
        # it does not compile there either)
        "T x", "T y, raw int32 threads, raw int32 seen", "y = x * 2; atomicAdd(&seen[0], 1);",
        "count_threads", loop_prep="atomicAdd(&threads[0], 1);",
        after_loop="atomicAdd(&threads[1], 1);")
    x = rng.standard_normal(n)
    threads, seen = launch.zeros(2, np.int32), launch.zeros(1, np.int32)
    y = launch.poisoned(n, np.float64)
    launch(count)(launch.to_device(x), y, threads, seen, block_size=block_size)
    blocks, per_block = cupy_threads(n, block_size or 128)
    assert launch.get(threads).tolist() == [blocks * per_block] * 2
    assert launch.get(seen).tolist() == [n]
    np.testing.assert_array_equal(launch.get(y), x * 2)


@pytest.mark.parametrize("size", SIZES)
def test_an_operation_reading_thread_indices_sees_cupys_threads(rng, launch, size):
    n = int(rng.integers(*SIZES[size]))
    geo = jitkern.ElementwiseKernel(
        "T x", "int64 off, int64 bdim, int64 bid",
        "off = (long long)(blockIdx.x * blockDim.x + threadIdx.x) - i; bdim = blockDim.x;"
        " bid = blockIdx.x;", "thread_geo")
    outs = [launch.full(n, -7, np.int64) for _ in range(3)]
    launch(geo)(launch.to_device(np.zeros(n, np.float32)), *outs)
    off, bdim, bid = (launch.get(o) for o in outs)
    _blocks, per_block = cupy_threads(n)
    np.testing.assert_array_equal(off, np.zeros(n, np.int64))
    np.testing.assert_array_equal(bdim, np.full(n, per_block))
    np.testing.assert_array_equal(bid, np.arange(n) // per_block)


def _loop_line(kernel, *args) -> str:
    source = kernel.inspect(*args, arch="sm_90").source
    return next(line for line in source.splitlines() if "jitkern ElementwiseKernel" in line)


@pytest.mark.parametrize("kwargs, reason", [
    (dict(loop_prep="double w = 0;"), "it has loop_prep"),
    (dict(after_loop="if (_ind.size() < 0) return;"), "it has after_loop"),
    (dict(operation="y = x + threadIdx.x"), "its operation names threadIdx"),
    (dict(operation="y = x + __shfl_xor_sync(0xffffffff, x, 1)"),
     "its operation names __shfl_xor_sync"),
    (dict(operation="static int k = 0; y = x + k"), "its operation declares a static variable"),
    (dict(preamble="__device__ float last = 0;", operation="y = x + last; last = x"),
     "its preamble declares a __device__ variable"),
    (dict(preamble="__device__ float shift() { return blockDim.x; }",
          operation="y = x + shift()"), "its preamble names blockDim"),
])
def test_operations_that_could_tell_get_one_element_per_thread(kwargs, reason):
    kwargs.setdefault("operation", "y = x")
    k = jitkern.ElementwiseKernel("float32 x", "float32 y", name="per_thread", **kwargs)
    line = _loop_line(k, np.zeros(1000, np.float32))
    assert "linear loop" in line and f"one element per thread, as in CuPy, since {reason}" in line


@pytest.mark.parametrize("kwargs", [
    dict(),
    dict(loop_prep="  // nothing here\n ;"),
    dict(operation="y = x; // threadIdx would matter only if it were code"),
    dict(preamble="__device__ __forceinline__ float twice(float v) { return v + v; }\n"
                  "__device__ const float table[2] = {1, 2};\n__constant__ float c[4];\n"
                  "struct S { __device__ float& operator[](int k); };",
         operation="y = twice(x) + table[0]"),
])
def test_operations_that_cannot_tell_keep_the_vector_loop(kwargs):
    kwargs.setdefault("operation", "y = x")
    k = jitkern.ElementwiseKernel("float32 x", "float32 y", name="vectorised", **kwargs)
    line = _loop_line(k, np.zeros(1000, np.float32))
    assert "vector loop" in line and "one element per thread" not in line
    # a 2-d row broadcast keeps its strided vectors too
    line = _loop_line(k, np.zeros((64, 32), np.float32)[:, :16])
    assert "strided_vector loop" in line


def test_launches_use_cupys_grid_and_block(rng):
    from jitkern.runtime import driver
    from jitkern.runtime.fakedriver import FakeDriver

    window = jitkern.ElementwiseKernel("T x", "T y", "y = x * k; k = -k;", "fake_grid",
                                       loop_prep="T k = 1;")
    plain = jitkern.ElementwiseKernel("T x", "T y", "y = x * 2", "fake_plain")
    with driver.use(FakeDriver()) as fake:
        for _ in range(4):
            n = int(rng.integers(1, 1 << 20))
            block_size = int(rng.integers(1, 1025))
            x = jitkern.empty(n, np.float32)
            for given in (None, block_size):
                window(x, block_size=given)
                blocks, per_block = cupy_threads(n, given or 128)
                assert fake.launches[-1].grid == (blocks, 1, 1)
                assert fake.launches[-1].block == (per_block, 1, 1)
            plain(x)  # four float32 per thread: a quarter of the threads
            assert fake.launches[-1].block == (256, 1, 1)
            assert fake.launches[-1].grid == (max(1, -(-n // 1024)), 1, 1)


def test_an_exported_kernel_keeps_cupys_grid(tmp_path, rng):
    from jitkern.runtime import driver
    from jitkern.runtime.fakedriver import FakeDriver

    k = jitkern.ElementwiseKernel("T x", "T y", "y = x * k; k = -k;", "export_grid",
                                  loop_prep="T k = 1;")
    result = k.export(tmp_path / "grid", np.float32, np.float32, arch="sm_90", format="cubin")
    assert result.manifest["entries"][0]["call"]["block"] == 128
    with driver.use(FakeDriver()) as fake:
        loaded = jitkern.load(result.manifest_path).export_grid
        for n in (int(rng.integers(1, 128)), int(rng.integers(128, 1 << 20))):
            x = jitkern.empty(n, np.float32)
            loaded(x, jitkern.empty(n, np.float32))
            blocks, per_block = cupy_threads(n)
            assert (fake.launches[-1].grid, fake.launches[-1].block) == (
                (blocks, 1, 1), (per_block, 1, 1))
