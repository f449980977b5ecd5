"""CPU: code written for CuPy finds jitkern's names with CuPy's signatures after
``import jitkern as cp`` / ``from jitkern import jit``: constructors, call keywords,
attributes and cupyx.jit's public names (taken from CuPy's documentation)."""

import inspect
import pickle

import numpy as np
import pytest

import jitkern as cp
from jitkern import jit
from jitkern.errors import JitkernError, JitkernNotImplementedError, KernelArgumentError

ADD = (
    'extern "C" __global__ void add(const float* a, float* b) { b[threadIdx.x] += a[threadIdx.x]; }'
)


def test_top_level_names_are_callable():
    for name in (
        "ElementwiseKernel",
        "ReductionKernel",
        "RawKernel",
        "RawModule",
        "fuse",
        "memoize",
        "clear_memo",
    ):
        assert callable(getattr(cp, name)), name


def test_raw_kernel_constructor_and_attributes():
    # cupy.RawKernel(code, name, options=(), backend='nvrtc', translate_cucomplex=False, *,
    #                enable_cooperative_groups=False, jitify=False)
    k = cp.RawKernel(
        ADD, "add", ("-DX=1",), "nvrtc", False, enable_cooperative_groups=False, jitify=False
    )
    assert (k.code, k.name, k.backend, k.enable_cooperative_groups) == (ADD, "add", "nvrtc", False)
    assert "-DX=1" in k.options and k.file_path is None
    assert callable(k.compile) and "log_stream" in inspect.signature(k.compile).parameters
    # k(grid, block, args, *, shared_mem=0) (and stream=, as CuPy's Function takes)
    call = inspect.signature(k.func)
    call.bind((1,), (32,), (), shared_mem=0, stream=None)
    with pytest.raises(TypeError, match="unexpected keyword argument 'shared_memory'"):
        call.bind((1,), (32,), (), shared_memory=0)


def test_raw_module_constructor_and_attributes():
    # cupy.RawModule(code=None, *, path=None, options=(), backend='nvrtc',
    #                translate_cucomplex=False, enable_cooperative_groups=False,
    #                name_expressions=None, jitify=False)
    m = cp.RawModule(
        code=ADD,
        options=(),
        backend="nvrtc",
        translate_cucomplex=False,
        enable_cooperative_groups=False,
        name_expressions=None,
        jitify=False,
    )
    assert (m.code, m.backend, m.file_path, m.name_expressions) == (ADD, "nvrtc", None, ())
    for method in ("compile", "get_function", "get_global"):
        assert callable(getattr(m, method)), method


def test_raw_module_from_a_file_reports_its_path(tmp_path):
    binary = cp.compile_with_cache(ADD, arch="sm_90")
    path = tmp_path / "add.cubin"
    path.write_bytes(binary.data)
    m = cp.RawModule(path=str(path))
    assert m.file_path == str(path) and m.code is None


def test_elementwise_kernel_signature_and_attributes():
    k = cp.ElementwiseKernel(
        "T x, raw float32 w",
        "T y",
        "y = x * w[i]",
        "scale",
        reduce_dims=False,
        preamble="// p",
        no_return=False,
        return_tuple=True,
        options=("-DQ",),
        loop_prep="int q = 0;",
        after_loop="",
    )
    assert (k.name, k.nin, k.nout, k.nargs) == ("scale", 2, 1, 3)
    assert (k.operation, k.preamble, k.reduce_dims) == ("y = x * w[i]", "// p", False)
    assert (k.no_return, k.return_tuple) == (False, True)
    assert k.kwargs == {"options": ("-DQ",), "loop_prep": "int q = 0;"}
    assert [p.name for p in k.params] == ["x", "w", "y"]
    assert [(p.ctype, p.raw, p.is_const) for p in k.in_params] == [
        ("T", False, True),
        ("float", True, True),
    ]
    assert [(p.ctype, p.is_const) for p in k.out_params] == [("T", False)]
    assert k.in_params[1].dtype == np.float32 and k.in_params[0].dtype is None
    # a partial, as RawKernel: its signature is its function's (the general call or the
    # generated entry of the last layout, with the same keywords)
    inspect.signature(k).bind(1, 2, size=None, block_size=128, stream=None)
    with pytest.raises(TypeError, match="unexpected keyword argument 'out'"):
        inspect.signature(k).bind(1, 2, out=None)  # not a CuPy keyword here


def test_reduction_kernel_signature_and_attributes():
    k = cp.ReductionKernel(
        "T x",
        "T y",
        "x * x",
        "a + b",
        "y = sqrt(a)",
        "0",
        "l2",
        reduce_type="double",
        reduce_dims=True,
        preamble="",
        options=(),
    )
    assert (k.name, k.nin, k.nout, k.nargs) == ("l2", 1, 1, 2)
    assert (k.map_expr, k.reduce_expr, k.post_map_expr, k.identity, k.reduce_type) == (
        "x * x",
        "a + b",
        "y = sqrt(a)",
        "0",
        "double",
    )
    assert [p.name for p in k.params] == ["x", "y"]
    inspect.signature(k.__call__).bind(1, out=None, axis=(0,), keepdims=True, stream=None)


def test_string_kernels_refuse_unknown_keywords_by_name():
    with pytest.raises(TypeError, match="type_preamble"):
        cp.ElementwiseKernel("T x", "T y", "y = x", "k", type_preamble="")
    with pytest.raises(TypeError, match="block_size"):
        cp.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "k", block_size=128)


def test_fuse_forms_and_attributes():
    def f(x, y):
        return x + y

    for fused in (cp.fuse(f), cp.fuse()(f), cp.fuse(kernel_name="plus")(f)):
        assert fused.func is f and callable(fused.clear_cache)
    assert cp.fuse(f).name == "f" and cp.fuse(kernel_name="plus")(f).name == "plus"
    x = np.arange(5.0)
    np.testing.assert_array_equal(cp.fuse(f)(x, x), x + x)


def test_memoize_and_clear_memo():
    calls = []

    @cp.memoize(for_each_device=False)
    def twice(v):
        calls.append(v)
        return 2 * v

    assert (twice(3), twice(3), twice(4)) == (6, 6, 8) and calls == [3, 4]
    cp.clear_memo()
    assert twice(3) == 6 and calls == [3, 4, 3]


CUPYX_JIT_NAMES = (
    "atomic_add",
    "atomic_and",
    "atomic_cas",
    "atomic_dec",
    "atomic_exch",
    "atomic_inc",
    "atomic_max",
    "atomic_min",
    "atomic_or",
    "atomic_sub",
    "atomic_xor",
    "blockDim",
    "blockIdx",
    "cg",
    "cub",
    "grid",
    "gridDim",
    "gridsize",
    "laneid",
    "range",
    "rawkernel",
    "shared_memory",
    "shfl_down_sync",
    "shfl_sync",
    "shfl_up_sync",
    "shfl_xor_sync",
    "syncthreads",
    "syncwarp",
    "threadIdx",
    "thrust",
    "warpsize",
)


def test_every_cupyx_jit_name_exists():
    missing = [n for n in CUPYX_JIT_NAMES if not hasattr(jit, n)]
    assert missing == []
    for member in ("memcpy_async", "sync", "this_grid", "this_thread_block", "wait", "wait_prior"):
        assert hasattr(jit.cg, member), member
    for member in ("BlockReduce", "WarpReduce", "Sum", "Max", "Min"):
        assert hasattr(jit.cub, member), member
    for member in (
        "device",
        "seq",
        "sort",
        "sort_by_key",
        "stable_sort",
        "count",
        "find",
        "fill",
        "sequence",
        "reduce",
        "inclusive_scan",
        "exclusive_scan",
        "equal",
        "lower_bound",
        "upper_bound",
        "binary_search",
    ):
        assert hasattr(jit.thrust, member), member


def test_jit_builtin_parameters_follow_cupyx_jit():
    assert jit.shared_memory.params[:3] == ("dtype", "size=None", "alignment=None")
    assert jit.syncwarp.params == ("mask=0xffffffff",)
    assert jit.range.params[-1] == "unroll=None"
    assert jit.atomic_add.params == ("array", "index", "value")
    assert jit.shfl_sync.params[-1].startswith("width")
    assert jit.cg.memcpy_async.params[-1] == "aligned_size=None"


def _copy(x, y, n):
    i = jit.threadIdx.x
    if i < n:
        y[i] = x[i]


def test_rawkernel_keywords_and_kernel_object():
    for mode in ("cuda", "python", "numpy"):
        k = jit.rawkernel(mode=mode, device=False)(_copy)
        assert callable(k) and k.mode in ("cuda", "numpy")
    k = jit.rawkernel()(_copy)
    assert k.cached_codes == {}
    info = k.inspect(np.zeros(4, np.float32), np.zeros(4, np.float32), np.int32(4), arch="sm_90")
    assert "y[i] = x[i]" in info.source
    with pytest.raises(NotImplementedError, match="get_lto_ir") as err:
        k.get_lto_ir((np.zeros(4, np.float32),))
    assert isinstance(err.value, JitkernNotImplementedError)


def test_numba_style_keywords_other_than_shared_mem_and_stream_are_refused():
    k = jit.rawkernel()(_copy)
    with pytest.raises(KernelArgumentError, match="keyword argument 'block'"):
        k[1, 32](1, 2, 3, block=32)
    with pytest.raises(KernelArgumentError, match="shared_mem is given both"):
        k[1, 32, 64](1, 2, 3, shared_mem=128)
    with pytest.raises(KernelArgumentError, match="stream is given both"):
        k[1, 32, 0, 0](1, 2, 3, stream=0)


def test_kernels_pickle_with_their_cupy_attributes():
    k = cp.ElementwiseKernel("T x", "T y", "y = x", "ident", options=("-DA",))
    back = pickle.loads(pickle.dumps(k))
    assert (back.name, back.kwargs, back.nargs) == ("ident", {"options": ("-DA",)}, 2)
    r = pickle.loads(pickle.dumps(cp.RawKernel(ADD, "add", (), "nvrtc", False)))
    assert (r.name, r.file_path, r.translate_cucomplex) == ("add", None, False)
    assert isinstance(KernelArgumentError("x"), JitkernError)


def test_ind_get_is_refused_outside_the_operation_and_ind_size_compiles():
    # _ind.get() in the operation is covered by tests/compat/test_compat2.py
    k = cp.ElementwiseKernel("T x", "T y", "y = x", "row_index", loop_prep="(void)_ind.get()[0];")
    with pytest.raises(cp.CompileError) as info:
        k.inspect(np.zeros((2, 3), np.float32), arch="sm_90")
    assert "_ind.get() works in the operation only" in str(info.value)
    assert "flat C-order index" in str(info.value)
    ok = cp.ElementwiseKernel("T x", "T y", "y = x + _ind.size()", "plus_size")
    assert "_ind.size()" in ok.inspect(np.zeros((2, 3), np.float32), arch="sm_90").source
