"""jitkern.fuse traces the Python function: the recorded graph, result types, generated
kernels (NVRTC, no GPU) and errors on the CPU; device arrays on a GPU, compared with NumPy
(float64 references, tolerances of the result's dtype)."""

import functools
import math
import pickle
import types

import numpy as np
import pytest

import jitkern
from jitkern.kernels.elementwise import ElementwiseKernel
from jitkern.kernels.fuse import UFUNCS, Fused, FuseTraceError, fuse
from jitkern.kernels.reduction import ReductionKernel

# A stand-in for CuPy: fuse reads a module named cupy as NumPy.
cp = types.ModuleType("cupy")


# ---------------------------------------------------------------------------
# functions under test (module level: they pickle by reference)


@fuse()
def squared_diff(x, y):
    return (x - y) * (x - y)


@fuse(kernel_name="sum_of_products")
def sum_of_products(x, y):
    return np.sum(x * y, axis=-1)


@fuse
def magnitude(x, y):
    return np.sqrt(x * x + y * y) * 0.5


def _helper(a, b):
    return np.exp(-a) + b * 2


@fuse
def with_helper(x, y):
    return _helper(x, y) - 1


def _make_closure(k):
    def scaled(x):
        return x * k + np.float32(1)

    return fuse(scaled)


closure = _make_closure(3)
with_lambda = fuse(lambda x, y: (lambda a: a * a)(x) + y)  # noqa: PLC3002


def _impl(x, y, scale=2.0):
    return x * scale + y


@fuse
def wrapper(*args, **kwargs):
    return _impl(*args, **kwargs)


@fuse
def loops_and_ifs(x, n):
    acc = x
    for k in range(3):  # unrolled while tracing
        if k % 2 == 0:
            acc = acc + x * k
        else:
            acc = acc - 1
    if x.ndim == 2:  # a Python value: fine
        acc = acc * 2
    return acc * n


@fuse
def by_getattr(x):
    return getattr(np, "sqrt")(np.abs(x)) + getattr(np, "square")(x)  # noqa: B009


@fuse
def inner(x, y):
    return x * y + 1


@fuse
def outer(x, y):
    return np.sqrt(np.abs(inner(x, y))) + inner(y, x)


@fuse
def written_for_cupy(x, y):
    return cp.where(x > y, cp.exp(x), cp.sqrt(cp.abs(y)))


@fuse
def written_for_jitkern(x, y):
    return jitkern.where(x > y, jitkern.exp(x), jitkern.sqrt(jitkern.abs(y)))


@fuse
def norm_plus(x):
    return np.sqrt(np.sum(x * x) + 10)


@fuse
def centered(x):
    return x - x.sum(axis=1, keepdims=True) / 8


@fuse
def demeaned(x):
    return x - x.mean(axis=1, keepdims=True)


@fuse
def two_outputs(x, y):
    return x + y, x * y


@fuse
def divmod_frexp_modf(x, y):
    q, r = divmod(x, y)
    m, e = np.frexp(x)
    f, i = np.modf(x)
    return q, r, m, e, f, i


@fuse
def add_into(x, y):
    x += y
    x *= 2


@fuse
def assign_all(x, y):
    x[...] = y * 3


@fuse
def write_row(x, y):
    x[1] = y * 2  # views of x are written; x itself is not read again
    x[2] = y


@fuse
def ufunc_out(x, y):
    np.add(x, y, out=x)
    return x


@fuse
def copy_into(x, y):
    np.copyto(x, y + 1)


@fuse
def outer_product(x, y):
    return x[:, None] * y


@fuse
def first_row(x, y):
    return x[0] + y[1:]


@fuse
def with_none(x, y, z):
    if z is None:
        return x * y
    return x * y + z


@fuse
def clip_where(x, lo, hi):
    return np.where(x > 0, np.clip(x, lo, hi), -x)


@fuse
def nan_sums(x):
    return np.nansum(x, axis=0) + np.float16(1)


@fuse
def parts(z):
    return z.real * 2 + z.imag, np.conj(z) * z


@fuse
def complex_order(a, b):
    return np.maximum(a, b), np.minimum(a, b), a < b, a >= b


@fuse
def methods(x):
    return (x.astype(np.float64).copy() + 1).prod(axis=1)


@fuse
def data_dependent_if(x):
    if x > 0:
        return x
    return -x


@fuse
def python_max(x, y):
    return max(x, y)


@fuse
def unsupported(x):
    return np.cumsum(x)


def _host(shape, dtype, rng, low=-2.0, high=2.0):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        lo = 1 if dtype.kind == "u" else -9
        return rng.integers(lo, 10, size=shape).astype(dtype)
    if dtype.kind == "c":
        re = rng.uniform(low, high, shape)
        im = rng.uniform(low, high, shape)
        return (re + 1j * im).astype(dtype)
    return rng.uniform(low, high, shape).astype(dtype)


# ---------------------------------------------------------------------------
# CPU: the NumPy path


def test_numpy_path_runs_the_function():
    x, y = np.arange(10), np.arange(10)[::-1]
    np.testing.assert_array_equal(squared_diff(x, y), [81, 49, 25, 9, 1, 1, 9, 25, 49, 81])
    assert squared_diff(3, 5) == 4  # scalars only: Python and NumPy compute it
    np.testing.assert_array_equal(sum_of_products(np.ones((3, 4)), np.ones((3, 4))), [4, 4, 4])


def test_numpy_path_reads_cupy_as_numpy(rng):
    x, y = _host((3, 4), np.float64, rng), _host((3, 4), np.float64, rng)
    # the reference is written out with NumPy, independently of the fused function
    expected = np.where(x > y, np.exp(x), np.sqrt(np.abs(y)))
    np.testing.assert_array_equal(written_for_cupy(x, y), expected)
    np.testing.assert_array_equal(written_for_jitkern(x, y), expected)
    assert not hasattr(cp, "exp")  # the stand-in module itself is untouched


def test_jitkern_routines_on_host_values(rng):
    x = _host(7, np.float64, rng)
    np.testing.assert_array_equal(jitkern.sqrt(np.abs(x)), np.sqrt(np.abs(x)))
    assert jitkern.maximum(2, 3) == 3
    assert jitkern.sum is jitkern.sum and repr(jitkern.sum) == "<jitkern routine 'sum'>"
    with pytest.raises(AttributeError, match="no attribute 'not_a_routine'"):
        jitkern.not_a_routine  # noqa: B018


# ---------------------------------------------------------------------------
# CPU: the traced graph


F32 = np.ones((4, 8), np.float32)
F64 = np.ones((4, 8), np.float64)


def _ops(fused, *args):
    return [
        line.split(" = ")[1].split(" ")[0]
        for line in fused.graph_for(*args).describe().splitlines()
    ]


def test_trace_records_array_operations_only():
    text = magnitude.graph_for(F32, F32).describe()
    assert text.count("ufunc ('multiply'") == 3 and "ufunc ('sqrt'" in text
    assert text.splitlines()[-1].endswith("-> float32")  # 0.5 is a weak Python float


def test_python_runs_helpers_closures_loops_and_wrappers():
    assert _ops(with_helper, F32, F32).count("ufunc") == 5
    assert "const" in _ops(closure, F32)
    assert _ops(with_lambda, F32, F32).count("ufunc") == 2
    # loops and ifs over Python values are unrolled: 2 + 1 + 2 operations, then * 2 and * n
    assert _ops(loops_and_ifs, F32, 2.0).count("ufunc") == 7
    assert _ops(loops_and_ifs, np.ones(3, np.float32), 2.0).count("ufunc") == 6  # ndim 1
    assert _ops(wrapper, F32, F32).count("ufunc") == 2
    assert _ops(by_getattr, F32).count("ufunc") == 4
    assert _ops(outer, F32, F32).count("ufunc") == 7  # the inner fused function is inlined


def test_cupy_and_jitkern_spellings_record_the_same_operations():
    a = written_for_cupy.graph_for(F32, F32).describe()
    b = written_for_jitkern.graph_for(F32, F32).describe()
    assert a == b and "ufunc ('exp'" in a


@pytest.mark.parametrize(
    "specs",
    [("float32", 2.0), ("int8", 3), ("uint8", -1.5), ("float16", 1j), ("int32", "float16"),
     ("bool", True), ("int64", np.float32(2)), ("complex64", 2.0), ("uint16", "int16"),
     ("float32", np.float64(2)), ("int8", np.int64(3))],
)  # fmt: skip
def test_result_types_follow_numpy2_promotion(specs):
    args = [np.ones((2, 3), s) if isinstance(s, str) else s for s in specs]
    fused = fuse(lambda x, y: x * y + x)
    kernel = fused.kernel_for(*args)
    with np.errstate(all="ignore"):
        expected = (args[0] * args[1] + args[0]).dtype
    assert kernel.out_params[0].dtype == expected


def test_numpy_scalar_constants_are_strong():
    fused = fuse(lambda x: x * np.float64(2) + np.int64(1))
    assert fused.kernel_for(F32).out_params[0].dtype == np.float64  # float64 is a float, too
    assert fuse(lambda x: x * 2.0).kernel_for(F32).out_params[0].dtype == np.float32


@pytest.mark.parametrize("name", sorted(UFUNCS))
@pytest.mark.parametrize("dtype", ["float32", "int16", "bool", "complex64", "float16"])
def test_ufunc_types_match_numpy_or_refuse_like_it(name, dtype):
    ufunc = getattr(np, name)
    args = [np.ones((2, 2), dtype)] * ufunc.nin
    try:
        with np.errstate(all="ignore"):
            expected = ufunc(*args)
    except TypeError:
        with pytest.raises(FuseTraceError, match=f"numpy.{ufunc.__name__}"):
            fuse(lambda *a: ufunc(*a)).graph_for(*args)
        return
    expected = expected if isinstance(expected, tuple) else (expected,)
    graph = fuse(lambda *a: ufunc(*a)).graph_for(*args)
    assert tuple(o.dtype for o in graph.outputs) == tuple(e.dtype for e in expected)


@pytest.mark.parametrize(
    "name", ["sum", "prod", "max", "min", "amax", "amin", "all", "any", "nansum", "nanprod"]
)
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "float16", "float32", "complex64"])
def test_reduction_types_match_numpy(name, dtype):
    x = np.ones((3, 4), dtype)
    fused = fuse(lambda x: getattr(np, name)(x, axis=1))
    expected = getattr(np, name)(x, axis=1).dtype
    assert fused.kernel_for(x).out_params[0].dtype == expected
    if name in ("sum", "prod"):
        typed = fuse(lambda x: getattr(np, name)(x, axis=0, dtype=np.float64))
        assert typed.kernel_for(x).out_params[0].dtype == np.float64


# ---------------------------------------------------------------------------
# CPU: kernels, plans, generated source


def test_elementwise_kernel_source_is_one_statement_per_operation():
    kernel = magnitude.kernel_for(F32, F32)
    assert isinstance(kernel, ElementwiseKernel) and kernel.name == "fused_magnitude"
    assert "sqrt(v2)" in kernel.operation and "((float)0.5)" in kernel.operation
    assert kernel.operation.count("const float") == 5


def test_reduction_with_post_map_is_one_kernel():
    kernels = norm_plus.kernels_for(F32)
    assert len(kernels) == 1 and isinstance(kernels[0], ReductionKernel)
    assert "sqrt" in kernels[0].post_map_expr and "(a + ((float)10.0))" in kernels[0].post_map_expr
    assert "jk_fused_map" in kernels[0].map_expr


def test_elementwise_after_a_reduction_with_arguments_runs_a_second_kernel():
    kernels = centered.kernels_for(F32)
    assert [type(k) for k in kernels] == [ReductionKernel, ElementwiseKernel]
    assert kernels[1].name == "fused_centered_post"


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int16", "bool"])
def test_mean_is_a_sum_and_a_division_by_the_count(dtype):
    x = np.ones((3, 4), dtype)
    kernels = demeaned.kernels_for(x)
    assert [type(k) for k in kernels] == [ReductionKernel, ElementwiseKernel]
    with np.errstate(all="ignore"):
        expected = (x - x.mean(axis=1, keepdims=True)).dtype
    assert kernels[1].out_params[0].dtype == expected
    assert kernels[1].in_params[-1].dtype == np.int64  # the count, passed when it runs


def test_sum_of_products_is_one_reduction_kernel():
    (kernel,) = sum_of_products.kernels_for(F32, F32)
    assert kernel.name == "sum_of_products" and kernel.reduce_expr == "a + b"
    assert kernel.identity == "0"


@pytest.mark.parametrize(
    "fused,args",
    [
        (magnitude, (F32, F32)),
        (sum_of_products, (F32, F32)),
        (norm_plus, (F64,)),
        (centered, (F32,)),
        (divmod_frexp_modf, (F64, F64)),
        (add_into, (F32, F32)),
        (outer_product, (np.ones(4, np.float32), np.ones(5, np.float32))),
        (parts, (np.ones((3, 4), np.complex64),)),
        (complex_order, (np.ones(3, np.complex128), np.ones(3, np.complex128))),
        (nan_sums, (np.ones((3, 4), np.float16),)),
        (methods, (np.ones((3, 4), np.int8),)),
    ],
)
def test_inspect_compiles_without_a_gpu(fused, args):
    info = fused.inspect(*args, arch="sm_90")
    assert info.cubin[:4] == b"\x7fELF"
    assert "jitkern" in info.source or "jk::" in info.source


def test_common_plans_take_the_fast_call():
    from jitkern.kernels.fuse.emit import Plan

    assert Plan(magnitude.graph_for(F32, F32), "k").fast is not None
    assert Plan(sum_of_products.graph_for(F32, F32), "k").fast is not None
    # writes whole arguments: called directly (F32, F32 would share memory: memory order)
    assert Plan(add_into.graph_for(F32, F32.copy()), "k").fast is not None
    assert Plan(write_row.graph_for(F32, F32[0].copy()), "k").fast is None  # writes views
    assert Plan(outer_product.graph_for(F32[0], F32[0]), "k").fast is None  # views
    assert Plan(centered.graph_for(F32), "k").fast is None  # two kernels


@pytest.mark.parametrize(
    "fused,args",
    [(magnitude, (F32, F32)), (two_outputs, (F32, 2.0)), (sum_of_products, (F32, F32)),
     (fuse(lambda x: (x.sum(),)), (F32,)), (add_into, (F32.copy(), F32.copy()))],
)  # fmt: skip
def test_fast_call_returns_what_the_general_call_returns(fused, args):
    from jitkern.kernels.fuse.emit import Plan

    plan = Plan(fused.graph_for(*args), "k")
    stage = plan.stages[0]
    base = type(stage.kernel)

    class Recording(base):  # stands for the launch: what it was given, a result per output
        def __call__(self, *values, **options):
            calls.append((values, options))
            if base is ReductionKernel:
                return "reduced"
            return tuple(f"out{j}" for j in range(self.nout))

    calls = []
    stage.kernel = base.__new__(Recording)  # a kernel object may be a partial
    stage.kernel.nout = len(plan.returned)
    fast = plan._fast_runner()
    assert fast is not None
    got_fast = fast(args)
    plan.fast = None
    got_general = plan.run(args)
    assert got_fast == got_general
    assert calls[0][1] == calls[1][1] and len(calls[0][0]) == len(calls[1][0])
    assert all(a is b for a, b in zip(calls[0][0], calls[1][0]))


def test_kernels_are_cached_per_signature_and_cleared():
    fused = fuse(lambda x, y: x + y)
    k1 = fused.kernel_for(F32, 1.0)
    assert fused.kernel_for(np.zeros((9, 9), np.float32), 5.0) is k1  # same dtypes and ndims
    assert fused.kernel_for(F32, 1) is not k1  # int and float scalars differ
    assert fused.kernel_for(F32, np.float32(1)) is not k1
    assert fused.kernel_for(np.ones(3, np.float32), 1.0) is not k1  # ndim
    fused.clear_cache()
    assert fused.kernel_for(F32, 1.0) is not k1


def test_none_arguments_are_part_of_the_signature():
    assert _ops(with_none, F32, F32, None).count("ufunc") == 1
    assert _ops(with_none, F32, F32, F32).count("ufunc") == 2


def test_decorator_forms_and_names():
    def f(x):
        return x + 1

    assert isinstance(fuse(f), Fused) and fuse(f).kernel_name == "fused_f"
    assert fuse(kernel_name="k")(f).kernel_for(F32).name == "k"
    assert fuse(lambda x: x).kernel_name == "fused_lambda"
    with pytest.raises(TypeError, match="fuse"):
        fuse(f, f)


def test_pickle_by_reference_and_by_function():
    back = pickle.loads(pickle.dumps(squared_diff))
    assert back is squared_diff
    rebuilt = pickle.loads(pickle.dumps(fuse(_helper, kernel_name="helper_k")))
    assert isinstance(rebuilt, Fused) and rebuilt.kernel_name == "helper_k"
    assert rebuilt.kernel_for(F32, F32).operation == fuse(_helper).kernel_for(F32, F32).operation


def test_in_place_writes_become_outputs():
    kernel = add_into.kernel_for(F32, F32)
    assert kernel.nout == 1 and "out0 =" in kernel.operation
    graph = write_row.graph_for(F32, np.ones(8, np.float32))
    assert [inp.keys for inp in graph.writes] == [(1,), (2,)]  # the views x[1], x[2]
    with pytest.raises(FuseTraceError, match="cannot cast float64 to int32"):
        fuse(lambda x, y: np.add(x, y, out=x)).graph_for(np.ones(3, np.int32), np.ones(3))


# ---------------------------------------------------------------------------
# CPU: errors at the user's line


def _line_of(fn, text):
    import inspect

    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if text in line)


def test_data_dependent_if_names_the_line():
    with pytest.raises(FuseTraceError) as info:
        data_dependent_if.graph_for(F32)
    assert isinstance(info.value, TypeError) and isinstance(info.value, jitkern.JitkernTypeError)
    line = _line_of(data_dependent_if.__wrapped__, "if x > 0")
    assert info.value.filename == __file__ and info.value.lineno == line
    text = str(info.value)
    assert text.startswith(f"{__file__}:{line}: the truth value of an array")
    assert "if x > 0:" in text and "numpy.where" in text


def test_python_max_on_arrays_is_refused_at_its_line():
    with pytest.raises(FuseTraceError) as info:
        python_max.graph_for(F32, F32)
    assert info.value.lineno == _line_of(python_max.__wrapped__, "return max(x, y)")


def test_unsupported_routine_names_it_and_the_alternatives():
    with pytest.raises(FuseTraceError) as info:
        unsupported.graph_for(F32)
    text = str(info.value)
    assert "numpy.cumsum is not supported" in text and "where" in text and "sum" in text
    assert info.value.lineno == _line_of(unsupported.__wrapped__, "np.cumsum")


def test_other_refusals():
    with pytest.raises(FuseTraceError, match="boolean subtract"):
        fuse(lambda x: x - x).graph_for(np.ones(3, bool))
    with pytest.raises(FuseTraceError, match="float\\(\\)"):
        fuse(lambda x: math.sqrt(x)).graph_for(F32)
    with pytest.raises(FuseTraceError, match="x\\[mask\\]"):
        fuse(lambda x: x[x > 0]).graph_for(F32)
    with pytest.raises(FuseTraceError, match="where\\(condition\\)"):
        fuse(lambda x: np.where(x)).graph_for(F32)


# ---------------------------------------------------------------------------
# GPU: against NumPy, float64 references


_TOL = {"e": (2e-3, 2e-3), "f": (2e-6, 2e-6), "d": (1e-12, 1e-13), "F": (1e-5, 1e-5),
        "D": (1e-12, 1e-12)}  # fmt: skip
# Discontinuous results: computed in the argument's own precision (as NumPy does), exactly.
_NATIVE = {"floor_divide", "remainder", "mod", "fmod", "divmod", "floor", "ceil", "trunc", "rint",
           "sign", "modf", "frexp", "heaviside", "nextafter", "spacing"}  # fmt: skip


def _wide(a):
    if a is None:
        return a
    a = np.asarray(a) if not isinstance(a, (int, float, complex, bool)) else a
    if isinstance(a, np.ndarray) and a.dtype.kind in "fc":
        return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
    if isinstance(a, np.generic) and a.dtype.kind in "fc":
        return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
    return a


def _check(fused, *host, native=False, tol=None, wrap=None, launch=None):
    """Run ``fused`` on device copies of ``host`` (made by ``wrap``, or by ``launch``, which
    also picks the GPU or the simulator); compare dtype and shape with NumPy on the
    same arguments, and values with NumPy on float64 arguments (at the result dtype's
    tolerance), or exactly where ``native`` (integer results always)."""
    wrap = launch.to_device if launch is not None else wrap or jitkern.asarray
    device = [wrap(a) if isinstance(a, np.ndarray) else a for a in host]
    with np.errstate(all="ignore"):
        same = fused(*host)
        wide = fused(*[_wide(a) for a in host])
    got = launch(fused)(*device) if launch is not None else fused(*device)
    same, wide, got = (v if isinstance(v, tuple) else (v,) for v in (same, wide, got))
    assert len(got) == len(same)
    for g, s, w in zip(got, same, wide):
        g, s = jitkern.asnumpy(g), np.asarray(s)
        assert g.dtype == s.dtype and g.shape == s.shape, (g.dtype, s.dtype, g.shape, s.shape)
        if s.dtype.kind in "biu" or native:
            rtol, atol = (0, 0) if s.dtype.kind in "biu" else _TOL[s.dtype.char]
            np.testing.assert_allclose(g, s, rtol=rtol, atol=atol, equal_nan=True)
        else:
            rtol, atol = tol or _TOL[s.dtype.char]
            np.testing.assert_allclose(g, np.asarray(w), rtol=rtol, atol=atol, equal_nan=True)
    return got


def test_spec_examples(rng, launch):
    x, y = _host((50, 40), np.float32, rng), _host((50, 40), np.float32, rng)
    _check(squared_diff, x, y, launch=launch)
    scale = float(np.abs(x * y).sum(axis=-1).max())
    _check(sum_of_products, x, y, tol=(0, 8e-7 * scale), launch=launch)
    _check(magnitude, x, y, launch=launch)
    xd, yd = _host((64, 33), np.float64, rng), _host((64, 33), np.float64, rng)
    _check(magnitude, xd, yd, launch=launch)
    _check(sum_of_products, xd, yd, tol=(1e-12, 1e-12), launch=launch)


def test_python_constructs(rng, launch):
    x, y = _host((16, 9), np.float32, rng), _host((16, 9), np.float32, rng)
    for fused in (with_helper, closure, with_lambda, wrapper, by_getattr, outer):
        args = (x,) if fused in (closure, by_getattr) else (x, y)
        _check(fused, *args, launch=launch)
    _check(loops_and_ifs, x, 1.5, launch=launch)
    _check(loops_and_ifs, x[0], 2, launch=launch)
    _check(written_for_cupy, x, y, launch=launch)
    _check(written_for_jitkern, x.astype(np.float64), y.astype(np.float64), launch=launch)


def _all_ufuncs(dtype):
    names = []
    for name, row in sorted(UFUNCS.items()):
        try:
            getattr(np, name)(*[np.ones(2, dtype)] * row.nin)
        except TypeError:
            continue
        names.append(name)

    def run(x, y):
        out = []
        for name in names:
            r = getattr(np, name)(*(x, y)[: UFUNCS[name].nin])
            out.extend(r if isinstance(r, tuple) else (r,))
        return tuple(out)

    outputs = []
    for name in names:
        outputs += [name] * len(UFUNCS[name].templates)
    return run, outputs


@pytest.mark.parametrize(
    "dtype", ["float32", "float64", "float16", "int32", "int8", "uint8", "bool", "complex64",
              "complex128"])  # fmt: skip
def test_every_ufunc_against_numpy(rng, dtype, launch):
    run, names = _all_ufuncs(dtype)
    x, y = _host(300, dtype, rng), _host(300, dtype, rng, 0.25, 2.0)
    if np.dtype(dtype).kind in "iu":
        y = rng.integers(1, 6, 300).astype(dtype)  # no x // 0, no negative powers
        x[x == 0] = 1  # NumPy's integer reciprocal(0) is undefined (INT_MIN on x86)
    fused = fuse(run)
    device = launch(fused)(launch.to_device(x), launch.to_device(y))
    with np.errstate(all="ignore"):
        same = run(x, y)
        wide = run(_wide(x), _wide(y))
    failures = []
    for name, g, s, w in zip(names, device, same, wide):
        g, s, w = launch.get(g), np.asarray(s), np.asarray(w)
        try:
            assert g.dtype == s.dtype, (g.dtype, s.dtype)
            if s.dtype.kind in "biu" or name in _NATIVE or w.dtype.kind in "biu":
                rtol, atol = (0, 0) if s.dtype.kind in "biu" else _TOL[s.dtype.char]
                np.testing.assert_allclose(g, s, rtol=rtol, atol=atol, equal_nan=True)
            else:
                rtol, atol = _TOL[s.dtype.char]
                np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
        except AssertionError as exc:
            failures.append(f"{name}: {str(exc)[:400]}")
    assert not failures, "\n".join(failures)


def test_where_clip_copyto_and_scalars(rng, launch):
    x = _host((40, 7), np.float32, rng)
    _check(clip_where, x, -0.5, 0.75, launch=launch)
    _check(clip_where, x.astype(np.float64), np.float32(-1), 1, launch=launch)
    # int8 stays int8
    _check(fuse(lambda x, s: x * s - 1), _host(100, np.int8, rng), 3, launch=launch)
    # weak float
    _check(fuse(lambda x, s: x * s - 1), _host(100, np.float16, rng), 2.5, launch=launch)
    # true divide -> float64
    _check(fuse(lambda x, s: x / s), _host(100, np.int16, rng), 4, launch=launch)
    dst = _host(64, np.float32, rng)
    src = _host(64, np.float32, rng)
    d = launch.to_device(dst)
    assert launch(copy_into)(d, launch.to_device(src)) is None
    np.testing.assert_allclose(launch.get(d), src.astype(np.float64) + 1, rtol=2e-7)


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "amax", "amin", "all", "any",
                                  "nansum", "nanprod"])  # fmt: skip
@pytest.mark.parametrize("axis,keepdims", [(None, False), (0, True), ((0, 2), False)])
def test_reductions(rng, name, axis, keepdims, launch):
    reduce = getattr(np, name)
    fused = fuse(lambda x, y: reduce(x * y - 1, axis=axis, keepdims=keepdims))
    x = 1 + rng.random((6, 7, 9)) / 2
    y = 1.5 + rng.random((7, 9)) / 2  # x * y - 1 in [0.5, 2]: products stay finite
    x[0, 0, 0] = np.nan if name.startswith("nan") else x[0, 0, 0]
    _check(fused, x, y, tol=(1e-11, 1e-11), launch=launch)  # float64: float64 tolerances
    _check(fused, x.astype(np.float32), y.astype(np.float32), tol=(2e-5, 1e-5), launch=launch)
    _check(fused, (x * 3).astype(np.int16), (y * 2).astype(np.int16), launch=launch)


def test_reduction_dtype_keyword_and_methods(rng, launch):
    x = _host((5, 300), np.int8, rng)
    _check(fuse(lambda x: np.sum(x, axis=1, dtype=np.float64) + 0.5), x, launch=launch)
    _check(fuse(lambda x: x.sum(axis=0, dtype=np.int16)), x, launch=launch)
    _check(methods, x, launch=launch)
    f = _host((5, 300), np.float32, rng)
    for method in ("sum", "prod", "max", "min", "all", "any"):
        fused = fuse(lambda x, m=method: getattr(x + 1, m)(axis=1))
        _check(fused, f, tol=(2e-5, 1e-6), launch=launch)
    half = _host((4, 2000), np.float16, rng)
    got = launch.get(launch(sum_of_products)(launch.to_device(half), launch.to_device(half)))
    exact = (half.astype(np.float64) ** 2).sum(-1)
    assert got.dtype == np.float16
    np.testing.assert_allclose(got, exact, rtol=2e-3)  # accumulated in float, not half


def test_max_min_propagate_nan(rng, launch):
    x = _host((16, 40), np.float64, rng)
    x[3, 7] = np.nan
    for name in ("max", "min"):
        for axis in (None, 0, 1):
            _check(fuse(lambda x, n=name, a=axis: getattr(np, n)(x, axis=a)), x, launch=launch)


def test_complex_parts_and_ordering(rng, launch):
    z = _host((30, 4), np.complex128, rng)
    _check(parts, z, launch=launch)
    _check(parts, z.astype(np.complex64), launch=launch)
    a, b = _host(200, np.complex128, rng), _host(200, np.complex128, rng)
    b[::3] = a[::3].real + 1j * b[::3].imag  # equal real parts: the imaginary parts decide
    _check(complex_order, a, b, launch=launch)
    _check(fuse(lambda z: np.max(z, axis=0)), z, launch=launch)
    _check(fuse(lambda z: np.min(z)), z, launch=launch)


def test_elementwise_after_reduction(rng, launch):
    x = _host(1000, np.float64, rng)
    _check(norm_plus, x, tol=(1e-12, 1e-12), launch=launch)
    m = _host((12, 8), np.float32, rng)
    _check(centered, m, tol=(2e-6, 2e-6), launch=launch)
    _check(fuse(lambda x: (x * 2, x.max())), m, launch=launch)
    _check(demeaned, m.astype(np.float64), tol=(1e-12, 1e-13), launch=launch)
    _check(demeaned, m, tol=(2e-6, 2e-6), launch=launch)
    _check(demeaned, _host((12, 8), np.int16, rng), tol=(1e-12, 1e-12), launch=launch)
    _check(fuse(lambda x: np.mean(x * 2, axis=0)), m.astype(np.float64), tol=(1e-12, 1e-13), launch=launch)


def test_several_outputs(rng, launch):
    x, y = _host((20, 5), np.float64, rng), _host((20, 5), np.float64, rng, 0.5, 2)
    _check(two_outputs, x, y, launch=launch)
    _check(divmod_frexp_modf, x, y, native=True, launch=launch)
    xi, yi = _host(100, np.int32, rng), rng.integers(1, 9, 100).astype(np.int32)
    _check(divmod_frexp_modf.__wrapped__ and fuse(lambda x, y: divmod(x, y)), xi, -yi, launch=launch)


def test_in_place_updates(rng, launch):
    x, y = _host((10, 6), np.float32, rng), _host((10, 6), np.float32, rng)
    for fused, expected in (
        (add_into, (x.astype(np.float64) + y) * 2),
        (assign_all, y.astype(np.float64) * 3),
    ):
        d = launch.poisoned(x.shape, np.float32)  # poisoned, then overwritten
        d[...] = x
        assert launch(fused)(d, launch.to_device(y)) is None
        np.testing.assert_allclose(launch.get(d), expected, rtol=2e-7, atol=1e-7)
    d = launch.to_device(x)
    assert launch(write_row)(d, launch.to_device(y[0])) is None
    expected = x.astype(np.float64)
    expected[1] = y[0].astype(np.float64) * 2
    expected[2] = y[0]
    np.testing.assert_allclose(launch.get(d), expected, rtol=2e-7, atol=1e-7)
    d = launch.to_device(x)
    r = launch(ufunc_out)(d, launch.to_device(y))
    np.testing.assert_allclose(launch.get(d), x.astype(np.float64) + y, rtol=2e-7)
    np.testing.assert_array_equal(launch.get(r), launch.get(d))


def test_indexing_arguments(rng, launch):
    x, y = _host(7, np.float64, rng), _host((5, 7), np.float64, rng)
    _check(outer_product, x, y[0], launch=launch)
    _check(first_row, y, y, launch=launch)
    _check(fuse(lambda x: x[::2, 1:] + x[1::2, :-1]), _host((6, 5), np.float32, rng), launch=launch)


def test_none_arguments_and_numpy_scalars(rng, launch):
    x, y = _host(50, np.float32, rng), _host(50, np.float32, rng)
    _check(with_none, x, y, None, launch=launch)
    # NumPy 2: x * y stays float32 and only the sum is float64 (the scalar is strong), so the
    # reference is NumPy on the same dtypes, at float64's tolerance; a float32 sum would fail.
    _check(with_none, x, y, np.float64(0.25), native=True, launch=launch)
    _check(with_none, x, y, x, launch=launch)


def test_jitkern_routines_on_device(rng, launch):
    x = _host((8, 9), np.float64, rng)
    d = launch.to_device(x)
    np.testing.assert_allclose(
        launch.get(launch(jitkern.sqrt)(launch(jitkern.abs)(d))), np.sqrt(np.abs(x)), rtol=1e-15
    )
    np.testing.assert_allclose(launch.get(launch(jitkern.sum)(d, axis=1)), x.sum(axis=1),
                               rtol=1e-12)  # fmt: skip


@pytest.mark.gpu
def test_second_call_does_not_trace_or_compile(rng, monkeypatch):
    from jitkern.toolchain import nvrtc as compiler
    from jitkern.kernels.fuse import trace as _fuse_trace

    calls = {"compile": 0, "trace": 0}

    def counting(name, real):
        def wrapper(*args, **kwargs):
            calls[name] += 1
            return real(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(compiler, "compile_source", counting("compile", compiler.compile_source))
    monkeypatch.setattr(_fuse_trace, "trace", counting("trace", _fuse_trace.trace))
    fused = fuse(lambda x, y: x * y + 1)
    x = _host(100, np.float64, rng)
    d = jitkern.asarray(x)
    fused(d, 2.0)
    first = dict(calls)
    assert first["trace"] == 1 and first["compile"] >= 1
    for value in (3.0, -1.5):
        np.testing.assert_allclose(
            jitkern.asnumpy(fused(d, value)), x * value + 1, rtol=1e-15, atol=1e-15
        )
    assert calls == first


@pytest.mark.gpu
def test_cupy_and_torch_arrays(rng):
    x, y = _host((20, 30), np.float32, rng), _host((20, 30), np.float32, rng)
    cupy = pytest.importorskip("cupy")
    _check(magnitude, x, y, wrap=cupy.asarray)
    _check(written_for_cupy, x, y, wrap=cupy.asarray)
    torch = pytest.importorskip("torch")
    _check(magnitude, x, y, wrap=lambda a: torch.from_numpy(a).cuda())


def test_functools_partial_of_a_fused_function_is_traced():
    p = functools.partial(wrapper, scale=3.0)
    assert _ops(fuse(lambda x, y: p(x, y)), F32, F32).count("ufunc") == 2
