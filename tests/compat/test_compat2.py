"""CuPy compatibility, second audit (CPU): jit.thrust's fancy iterators, ``_ind.get()`` in
ElementwiseKernel operations, ReductionKernel's ``identity``/``reduce_type`` values and
``RawModule.get_global(...).to_cupy()``. Generated code, compiles for sm_90, refusals."""

import dataclasses
import importlib
import pathlib
import shutil
import subprocess
import sys
import types

import compat2_kernels as K
import numpy as np
import pytest

import jitkern
from jitkern import jit
from jitkern.runtime.memory import MemoryPointer
from jitkern.errors import JitkernRuntimeError, JitkernValueError, JitTypeError
from jitkern.jit import rawkernel
from jitkern.compiler import types as T
from jitkern.kernels.raw import GlobalPointer

thrust_records = importlib.import_module("jitkern.compiler.builtins.thrust")

needs_nvcc = pytest.mark.skipif(
    shutil.which("nvcc") is None, reason="jit.thrust compiles with nvcc"
)
HERE = pathlib.Path(__file__).name
I32 = np.zeros(8, np.int32)
F32 = np.zeros(8, np.float32)


def body(kernel, *args) -> str:
    source = kernel.emit(*args)
    return source[source.index('extern "C"') :]


# -- 1. jit.thrust.make_counting_iterator / make_constant_iterator -------------------


def test_fancy_iterator_types_are_interned_frozen_and_spelled_in_cpp():
    counting = T.fancy_iterator("counting", T.int32)
    assert counting is T.fancy_iterator("counting", T.int32)
    assert counting is not T.fancy_iterator("constant", T.int32)
    assert counting.ctype == "thrust::counting_iterator<int>"
    assert T.fancy_iterator("constant", T.float64).ctype == "thrust::constant_iterator<double>"
    assert str(counting) == "counting iterator of int32"
    with pytest.raises(dataclasses.FrozenInstanceError, match="kind"):
        counting.kind = "constant"
    with pytest.raises(KeyError, match="discard"):
        T.fancy_iterator("discard", T.int32)


def test_fancy_iterators_are_cupyx_names_in_the_thrust_namespace():
    for name in ("make_counting_iterator", "make_constant_iterator"):
        record = getattr(jit.thrust, name)
        assert record.params == ("x", "i=None") and record.group == "thrust"
        assert record is thrust_records.FANCY_ITERATORS[name]


@rawkernel()
def counting_and_constant(x, y, out, idx):
    n = x.size
    c = jit.thrust.make_counting_iterator(np.int32(3))
    jit.thrust.transform(jit.thrust.seq, c, c + n, y, jit.thrust.negate())
    k = jit.thrust.make_constant_iterator(np.float32(2.5))
    idx[0] = jit.thrust.equal(jit.thrust.seq, x, x + n, k)
    idx[1] = jit.thrust.find(jit.thrust.seq, c, c + n, 5) - c
    out[0] = jit.thrust.reduce(jit.thrust.seq, c, c + n)


def test_fancy_iterators_emit_thrust_iterators_passed_to_the_algorithms():
    src = body(counting_and_constant, F32, I32, np.zeros(2, np.int64), np.zeros(2, np.int64))
    full = counting_and_constant.emit(F32, I32, np.zeros(2, np.int64), np.zeros(2, np.int64))
    assert "#include <thrust/iterator/counting_iterator.h>" in full
    assert "#include <thrust/iterator/constant_iterator.h>" in full
    assert thrust_records.backend_for(full) == "nvcc"
    assert "thrust::counting_iterator<int> c{};" in src  # hoisted like any local
    assert "c = thrust::counting_iterator<int>(3);" in src
    assert "thrust::transform(thrust::seq, c, (c + n), y, thrust::negate<int>());" in src
    assert "k = thrust::constant_iterator<float>(2.5f);" in src
    assert "thrust::equal(thrust::seq, x, (x + n), k)" in src
    # a search over a counting range returns a counting iterator: minus c is an index
    assert "thrust::find(thrust::seq, c, (c + n), 5) - c" in src
    assert "thrust::reduce(thrust::seq, c, (c + n), 0)" in src


def test_a_literal_start_takes_the_modes_literal_type():
    @rawkernel()
    def k(out):
        c = jit.thrust.make_counting_iterator(7)
        out[0] = jit.thrust.reduce(jit.thrust.seq, c, c + 2)

    @rawkernel(mode="numpy")
    def k64(out):
        c = jit.thrust.make_counting_iterator(7)
        out[0] = jit.thrust.reduce(jit.thrust.seq, c, c + 2)

    out = np.zeros(1, np.int64)
    assert "thrust::counting_iterator<int>(7)" in body(k, out)
    assert "thrust::counting_iterator<long long>(7LL)" in body(k64, out)


@needs_nvcc
def test_fancy_rows_compile_for_sm90_with_nvcc_without_a_gpu(rng):
    x, starts = K.fancy_inputs(rng, 4)
    info = K.fancy_rows.inspect(x.ravel(), starts, *K.fancy_outputs(4), K.ROW, arch="sm_90")
    assert info.cubin and info.registers > 0
    assert "thrust::counting_iterator<float>" in info.source


@needs_nvcc
def test_the_other_rows_take_fancy_ranges_and_compile_for_sm90():
    x = np.zeros(8, np.int32)
    args = (x, np.zeros(64, np.int32), np.zeros(11, np.int64))
    src = body(K.more_fancy, *args)
    assert "thrust::gather(thrust::seq, c, (c + n), x, outs);" in src
    # a pair with a counting iterator in it: the JIT's tuple holds both kinds
    assert "jk::Tuple<int*, thrust::counting_iterator<int>>{jk_p.first" in src
    assert "jk::Tuple<thrust::counting_iterator<int>, thrust::counting_iterator<int>>" in src
    assert K.more_fancy.inspect(*args, arch="sm_90").cubin


def _refusal(kernel, *args) -> str:
    with pytest.raises(JitTypeError) as info:
        kernel.emit(*args)
    return str(info.value)


def test_a_fancy_iterator_is_refused_where_the_algorithm_writes():
    @rawkernel()
    def as_output(x):
        c = jit.thrust.make_counting_iterator(np.int32(0))
        jit.thrust.copy(jit.thrust.seq, x, x + 4, c)

    @rawkernel()
    def sorted_in_place(x):
        c = jit.thrust.make_counting_iterator(np.int32(0))
        jit.thrust.sort(jit.thrust.seq, c, c + 4)

    @rawkernel()
    def values_of_sort_by_key(x):
        k = jit.thrust.make_constant_iterator(np.int32(1))
        jit.thrust.sort_by_key(jit.thrust.seq, x, x + 4, k)

    text = _refusal(as_output, I32)
    assert "result is written by thrust.copy" in text
    assert "counting iterator of int32" in text and "read-only" in text
    assert f"{HERE}:" in text and "jit.thrust.copy(jit.thrust.seq, x, x + 4, c)" in text
    text = _refusal(sorted_in_place, I32)
    assert "first is written by thrust.sort" in text
    assert "jit.thrust.sort(jit.thrust.seq, c, c + 4)" in text
    text = _refusal(values_of_sort_by_key, I32)
    assert "values_first is written by thrust.sort_by_key" in text
    assert "constant iterator of int32" in text


def test_a_range_mixing_iterator_kinds_and_mixed_differences_are_refused():
    @rawkernel()
    def mixed_range(x, out):
        c = jit.thrust.make_counting_iterator(np.int32(0))
        out[0] = jit.thrust.count(jit.thrust.seq, c, x + 4, 1)

    @rawkernel()
    def mixed_difference(x, out):
        c = jit.thrust.make_counting_iterator(np.int32(0))
        out[0] = c - x

    @rawkernel()
    def other_element(x, out):
        c = jit.thrust.make_counting_iterator(np.int64(0))
        out[0] = jit.thrust.count(jit.thrust.seq, c, x + 4, 1)

    out = np.zeros(1, np.int64)
    text = _refusal(mixed_range, I32, out)
    assert "last is a pointer to int32, but first is a counting iterator of int32" in text
    text = _refusal(mixed_difference, I32, out)
    assert "cannot subtract a pointer to int32 from a counting iterator of int32" in text
    assert "out[0] = c - x" in text
    text = _refusal(other_element, I32, out)
    assert "last points to int32, but first points to int64" in text


def test_the_index_argument_and_non_real_values_are_refused_as_in_cupyx():
    @rawkernel()
    def with_index(out):
        c = jit.thrust.make_counting_iterator(np.int32(0), 5)
        out[0] = jit.thrust.reduce(jit.thrust.seq, c, c + 2)

    @rawkernel()
    def complex_value(out):
        c = jit.thrust.make_constant_iterator(1j)
        out[0] = jit.thrust.count(jit.thrust.seq, c, c + 2, 1)

    @rawkernel()
    def indexed_twice(out):
        c = jit.thrust.make_counting_iterator(np.int32(0))
        out[0] = c[1, 2]

    out = np.zeros(1, np.int64)
    text = _refusal(with_index, out)
    assert "make_counting_iterator(x, i): the index i is not supported" in text
    assert "it + i" in text
    text = _refusal(complex_value, out)
    assert "thrust.make_constant_iterator: x must be a real number, got 1j" in text
    assert f"{HERE}:" in text and "make_constant_iterator(1j)" in text
    assert "a counting iterator of int32 takes one index" in _refusal(indexed_twice, out)


def test_docs_table_lists_the_fancy_iterators():
    text = (pathlib.Path(__file__).parents[2] / "docs" / "jit.md").read_text()
    assert "| thrust | `thrust.make_counting_iterator(x, i=None)` |" in text
    assert "| thrust | `thrust.make_constant_iterator(x, i=None)` |" in text


# -- 2. _ind.get() in ElementwiseKernel operations ---------------------------------------


def _source(kernel, *arrays):
    return kernel.inspect(*arrays, arch="sm_90")


def test_ind_get_indexes_the_full_shape_with_reduce_dims_false():
    k = jitkern.ElementwiseKernel(
        "T x",
        "T y",
        "y = x + _ind.get()[0] * 100 + _ind.get()[1] * 10 + _ind.get()[2] + _ind.ndim",
        "ind3",
        reduce_dims=False,
    )
    info = _source(k, np.zeros((2, 3, 4), np.float32))
    assert "strided loop, 3-d after collapsing" in info.source
    assert "const _jk_ind_at<int, 3, 1> _ind(_n, i, _shape.v);" in info.source
    assert info.cubin and info.local_bytes == 0  # the index array stays in registers


def test_ind_get_follows_the_collapsed_shape_as_in_cupy():
    k = jitkern.ElementwiseKernel("T x", "T y", "y = x + _ind.get()[0]", "ind_flat")
    src = _source(k, np.zeros((4, 8), np.float32)).source  # C-contiguous: one dimension
    assert "vector loop, 1-d after collapsing" in src
    assert src.count("const _jk_ind_at<int, 1, 1> _ind(_n, i, nullptr);") == 2  # + the tail
    row = jitkern.ElementwiseKernel("T x, T b", "T y", "y = x + b + _ind.get()[1]", "ind_row")
    src = _source(row, np.zeros((8, 64), np.float32), np.zeros(64, np.float32)).source
    assert "strided_vector loop, 2-d after collapsing" in src
    # the innermost extent is counted in vectors of 4 floats there
    assert "const _jk_ind_at<int, 2, 4> _ind(_n, i, _shape.v);" in src
    strided = jitkern.ElementwiseKernel("T x", "T y", "y = x + _ind.get()[1]", "ind_t")
    src = _source(strided, np.zeros((6, 5), np.float32).T).source
    assert "const _jk_ind_at<int, 2, 1> _ind(_n, i, _shape.v);" in src


def test_ind_get_indexes_a_raw_array_of_the_same_rank():
    k = jitkern.ElementwiseKernel(
        "T x, raw T w", "T y", "y = x + w[_ind.get()]", "ind_raw", reduce_dims=False
    )
    info = _source(k, np.zeros((3, 5), np.float64), np.zeros((3, 5), np.float64))
    assert "w[_ind.get()]" in info.source and info.cubin


def test_a_kernel_without_ind_in_its_operation_has_no_per_element_indexer():
    k = jitkern.ElementwiseKernel("T x", "T y", "y = x * 2", "no_ind")
    for shape in ((64,), (8, 8)):
        src = _source(k, np.zeros(shape, np.float32)).source
        assert "_jk_ind_at<" not in src.split("// jitkern ElementwiseKernel")[1]


def test_an_operation_may_declare_its_own_ind_and_other_names_do_not_count():
    own = jitkern.ElementwiseKernel("T x", "T y", "int _ind = 3; y = x + _ind", "own_ind")
    info = _source(own, np.zeros(64, np.float32))
    assert info.cubin and "_jk_ind_at<int, 1, 1> _ind(_n, i, nullptr); (void)_ind; {" in info.source
    other = jitkern.ElementwiseKernel("T x", "T y", "int _index = 3; y = x + _index", "idx_name")
    src = _source(other, np.zeros(64, np.float32)).source
    assert "_jk_ind_at<" not in src.split("// jitkern ElementwiseKernel")[1]


def test_ind_get_outside_the_operation_is_refused_with_a_message():
    k = jitkern.ElementwiseKernel(
        "T x", "T y", "y = x", "ind_after", after_loop="(void)_ind.get()[0];"
    )
    with pytest.raises(jitkern.CompileError) as info:
        _source(k, np.zeros(4, np.float32))
    assert "_ind.get() works in the operation only" in str(info.value)


# -- 3. ReductionKernel.identity and .reduce_type ----------------------------------------


def test_identity_and_reduce_type_show_cupys_values_when_not_given():
    k = jitkern.ReductionKernel("T x", "T y", "x", "max(a, b)", "y = a", None, "kmax")
    assert k.identity == "" and k.reduce_type == "T"
    typed = jitkern.ReductionKernel("float32 x", "float32 y", "x", "a + b", "y = a", 0, "ksum")
    assert typed.identity == "0" and typed.reduce_type == "float"
    given = jitkern.ReductionKernel(
        "T x", "T y", "x", "a + b", "y = a", "0", "kd", reduce_type=np.float64
    )
    assert given.reduce_type == "double"
    assert (
        jitkern.ReductionKernel(
            "T x", "T y", "x", "a + b", "y = a", "0", "ks", reduce_type="float"
        ).reduce_type
        == "float"
    )


def test_an_empty_identity_keeps_the_accumulator_that_starts_from_the_first_element():
    x = np.zeros((16, 24), np.float32)
    for identity in (None, ""):
        k = jitkern.ReductionKernel("T x", "T y", "x", "max(a, b)", "y = a", identity, "kmax")
        src = k.inspect(x, axis=1, arch="sm_90").source
        assert "_type_reduce v; int has;" in src and "_type_reduce()" not in src
    with_zero = jitkern.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "ksum")
    assert "_s.v = _type_reduce((0));" in with_zero.inspect(x, axis=1, arch="sm_90").source


def test_zero_size_reduction_without_identity_is_refused_for_none_and_empty():
    for identity in (None, ""):
        k = jitkern.ReductionKernel("T x", "T y", "x", "max(a, b)", "y = a", identity, "kmax")
        with pytest.raises(JitkernValueError, match="zero-size reduction with no identity"):
            k.inspect(np.zeros((3, 0), np.float32), axis=1, arch="sm_90")


def test_unpickled_kernel_keeps_cupys_values():
    import pickle

    k = jitkern.ReductionKernel("T x", "T y", "x", "max(a, b)", "y = a", None, "kmax")
    back = pickle.loads(pickle.dumps(k))
    assert (back.identity, back.reduce_type) == ("", "T")
    src = back.inspect(np.zeros((4, 4), np.float32), axis=1, arch="sm_90").source
    assert "int has;" in src


# -- 4. RawModule.get_global(...).to_cupy() ----------------------------------------------


def test_global_pointer_is_a_memory_pointer_that_keeps_its_owner():
    owner = object()
    p = GlobalPointer(0x1000, 16, 0, 0, owner=owner)
    assert isinstance(p, MemoryPointer) and int(p) == 0x1000 and p.size == 16
    assert not hasattr(p, "__dict__")  # slots, like MemoryPointer


def test_to_cupy_wraps_the_global_in_cupys_unowned_memory(monkeypatch):
    calls = {}

    class UnownedMemory:
        def __init__(self, ptr, size, owner, device_id=-1):
            calls["memory"] = (ptr, size, owner, device_id)

    class CupyPointer:
        def __init__(self, mem, offset):
            calls["pointer"] = (mem, offset)

    fake = types.ModuleType("cupy")
    fake.cuda = types.SimpleNamespace(UnownedMemory=UnownedMemory, MemoryPointer=CupyPointer)
    monkeypatch.setitem(sys.modules, "cupy", fake)
    p = GlobalPointer(0x2000, 32, 1, 0, owner=object())
    result = p.to_cupy()
    assert isinstance(result, CupyPointer)
    assert calls["memory"] == (0x2000, 32, p, 1)  # the pointer (and so the module) stays alive
    assert calls["pointer"][1] == 0 and isinstance(calls["pointer"][0], UnownedMemory)


def test_to_cupy_without_cupy_says_what_to_use_instead(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy raises ImportError
    with pytest.raises(JitkernRuntimeError) as info:
        GlobalPointer(0x2000, 32, 0, 0, owner=object()).to_cupy()
    assert "CuPy is not installed" in str(info.value)
    assert "jitkern.ndarray(shape, dtype, memptr=ptr)" in str(info.value)


def test_import_jitkern_does_not_import_cupy():
    code = "import sys, jitkern, jitkern.kernels.raw; print('cupy' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=pathlib.Path(__file__).parents[2],
    )
    assert out.stdout.strip() == "False"
