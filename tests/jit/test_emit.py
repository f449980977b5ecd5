"""Golden tests: the CUDA C++ emitted for each construct (no GPU, no NVRTC)."""

import math

import numpy as np

from jitkern import jit
from jitkern.jit import rawkernel
from jitkern.compiler import types as T

F32 = np.zeros(4, np.float32)
F64 = np.zeros(4, np.float64)
I32 = np.zeros(4, np.int32)
M2 = np.zeros((3, 5), np.float32)


def kernel_text(kernel, *args) -> str:
    """The emitted kernel and device functions (without the shared prelude)."""
    source = kernel.emit(*args)
    return source.split("}  // namespace jk\n", 1)[1]


def code_lines(text: str) -> list[str]:
    return [
        ln.strip()
        for ln in text.splitlines()
        if ln.strip() and not ln.lstrip().startswith(("//", "#line"))
    ]


def test_spec_copy_kernel_golden():
    @rawkernel()
    def copy(x, y, size):
        tid = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
        ntid = jit.gridDim.x * jit.blockDim.x
        for i in range(tid, size, ntid):
            y[i] = x[i]

    assert code_lines(kernel_text(copy, F32, F32, np.uint32(4))) == [
        'extern "C" __global__ void copy(float* x, float* y, unsigned int size) {',
        "unsigned int tid{};",
        "unsigned int ntid{};",
        "unsigned int i{};",
        "tid = ((blockIdx.x * blockDim.x) + threadIdx.x);",
        "ntid = (gridDim.x * blockDim.x);",
        "{",
        "const unsigned int jk_stop1 = size;",
        "const unsigned int jk_step2 = ntid;",
        "for (unsigned int jk_it3 = tid; jk_it3 < jk_stop1; jk_it3 += jk_step2) {",
        "i = jk_it3;",
        "y[i] = x[i];",
        "}",
        "}",
        "}",
    ]


def test_line_directives_and_comments():
    @rawkernel()
    def k(x):
        x[0] = 1.0

    text = kernel_text(k, F32)
    lines = text.splitlines()
    comment = lines.index("    // x[0] = 1.0")
    assert lines[comment + 1] == f'#line {k.py_func.__code__.co_firstlineno + 2} "{__file__}"'
    assert lines[comment + 2] == "    x[0] = 1.0f;"


def test_python_division_semantics_emit_helpers():
    @rawkernel()
    def k(a, b, out):
        out[0] = a[0] // b[0]
        out[1] = a[0] % b[0]
        out[2] = a[0] / b[0]

    lines = code_lines(kernel_text(k, I32, I32, F64))
    assert "out[0] = ((double)(jk::floordiv(a[0], b[0])));" in lines
    assert "out[1] = ((double)(jk::mod(a[0], b[0])));" in lines
    assert "out[2] = (((double)(a[0])) / ((double)(b[0])));" in lines


def test_unsigned_division_uses_unsigned_helpers():
    @rawkernel()
    def k(a, out):
        out[0] = a[0] // 3
        out[1] = a[0] % 3

    lines = code_lines(kernel_text(k, np.zeros(2, np.uint32), np.zeros(2, np.uint32)))
    assert "out[0] = jk::ufloordiv(a[0], 3u);" in lines
    assert "out[1] = jk::umod(a[0], 3u);" in lines


def test_square_is_a_multiplication_and_pow_keeps_int():
    @rawkernel()
    def k(a, b, out):
        out[0] = a[0] ** 2
        out[1] = b[0] ** b[1]
        out[2] = a[0] ** 0.5

    lines = code_lines(kernel_text(k, F32, I32, F32))
    assert "out[0] = jk::pow2(a[0]);" in lines
    assert "out[1] = ((float)(jk::ipow(b[0], b[1])));" in lines
    assert "out[2] = powf(a[0], 0.5f);" in lines


def test_constant_folding():
    @rawkernel()
    def k(x):
        x[0] = (2 + 3) * 4 // 3 - 2**3 + math.pi

    assert "x[0] = 1.1415926f;" in kernel_text(k, F32)


def test_compile_time_if_on_dtype():
    @rawkernel()
    def k(x):
        if x.dtype == np.float32:
            x[0] = 1
        else:
            x[0] = 2

    text = kernel_text(k, F32)
    assert "x[0] = 1.0f;" in text and "x[0] = 2" not in text and "if (" not in text


def test_chained_comparison_and_boolean_ops():
    @rawkernel()
    def k(x, n):
        i = jit.threadIdx.x
        if 0 < i < n and not x[i] > 0 or i == 7:
            x[i] = 0

    lines = code_lines(kernel_text(k, F32, 4))
    assert (
        "if (((((0u < i) && (((long long)(i)) < n)) && (!(x[i] > 0.0f))) || (i == 7u))) {" in lines
    )


def test_elif_chain():
    @rawkernel()
    def k(x):
        if x[0] > 1:
            x[1] = 1
        elif x[0] > 0:
            x[1] = 2
        else:
            x[1] = 3

    lines = code_lines(kernel_text(k, F32))
    assert "} else if ((x[0] > 0.0f)) {" in lines and "} else {" in lines


def test_multi_dimensional_arrays_use_byte_strides_and_int32_index():
    @rawkernel()
    def k(m):
        m[1, 2] = m.shape[0] + m.strides[1]

    text = kernel_text(k, M2)
    assert (
        "void k(float* jk_ptr_m, long long jk_shape0_m, long long jk_shape1_m, "
        "long long jk_stride0_m, long long jk_stride1_m)" in text
    )
    assert (
        "const jk::Array<float, 2, int> m = {jk_ptr_m, {(int)jk_shape0_m, (int)jk_shape1_m}, "
        "{(int)jk_stride0_m, (int)jk_stride1_m}};" in text
    )
    assert "(*(float*)((char*)m.ptr + (int)(1) * m.strides[0] + (int)(2) * m.strides[1]))" in text


def test_large_arrays_use_64_bit_offsets():
    @rawkernel()
    def k(m):
        m[1, 2] = 0

    big = T.array(T.float32, 2, False, False)
    assert "jk::Array<float, 2, long long>" in k.emit(
        big,
    )


def test_shape_of_1d_array_becomes_an_extra_parameter():
    @rawkernel()
    def k(x):
        for i in range(len(x)):
            x[i] = x.size

    text = kernel_text(k, F32)
    assert "void k(float* x, long long jk_shape0_x)" in text
    built = k._generate((T.array(T.float32, 1, True, False),))
    assert built.plans == [[("shape", 0)]]


def test_shared_memory_static_and_dynamic():
    @rawkernel()
    def k(x):
        s = jit.shared_memory(np.float32, 64)
        d = jit.shared_memory(np.int32, None)
        s[jit.threadIdx.x] = x[0]
        d[0] = 1

    text = kernel_text(k, F32)
    assert "__shared__ float jk_smem[64];" in text
    assert "extern __shared__ __align__(16) unsigned char jk_dynamic_smem[];" in text
    assert "d = reinterpret_cast<int*>(jk_dynamic_smem);" in text


def test_atomics_and_shuffles():
    @rawkernel()
    def k(x, c):
        old = jit.atomic_add(x, 0, 1.0)
        jit.atomic_add(c, 1, 1)
        x[1] = jit.shfl_down_sync(0xFFFFFFFF, old, 1) + old

    lines = code_lines(kernel_text(k, F32, np.zeros(2, np.int64)))
    assert "old = atomicAdd(&x[0], 1.0f);" in lines
    assert "((long long)atomicAdd((unsigned long long*)&c[1], (unsigned long long)(1LL)));" in lines
    assert "x[1] = (__shfl_down_sync(4294967295u, old, 1, 32) + old);" in lines


def test_print_becomes_printf_with_formats():
    @rawkernel()
    def k(x, n):
        print("x =", x[0], "n:", n, "100%", True, x[0] > 0)

    text = kernel_text(k, F32, np.uint8(1))
    assert (
        'printf("x = %g n: %u 100%% True %s\\n", (double)(x[0]), (unsigned int)(n), '
        '(((x[0] > 0.0f)) ? "True" : "False"));'
    ) in text


def test_print_sep_and_end():
    @rawkernel()
    def k(x, n):
        print(x[0], n, "50%", sep=", ", end="|\n")
        print(n, end="")

    text = kernel_text(k, F32, np.int32(1))
    assert 'printf("%g, %d, 50%%|\\n", (double)(x[0]), (int)(n));' in text
    assert 'printf("%d", (int)(n));' in text


def test_assert_becomes_device_assert():
    @rawkernel()
    def k(x):
        assert x[0] > 0, "must be positive"

    text = kernel_text(k, F32)
    assert 'if (!(x[0] > 0.0f)) { __assertfail("must be positive", ' in text


def test_device_function_specialised_per_argument_types():
    @rawkernel(device=True)
    def twice(v):
        return v + v

    @rawkernel()
    def k(x, y):
        x[0] = twice(x[1])
        y[0] = twice(y[1])

    text = kernel_text(k, F32, I32)
    assert "__device__ __forceinline__ float jk_fn_twice(float v) {" in text
    assert "__device__ __forceinline__ int jk_fn_twice_2(int v) {" in text


def test_tuple_unpacking_evaluates_right_side_first():
    @rawkernel()
    def k(x):
        a = x[0]
        b = x[1]
        a, b = b, a
        x[0] = a

    lines = code_lines(kernel_text(k, F32))
    # the right side is materialised first, so the swap is correct
    i = lines.index("const jk::Tuple<float, float> jk_t1 = jk::Tuple<float, float>{b, {a, {}}};")
    assert lines[i + 1 : i + 3] == ["a = jk_t1.head;", "b = jk_t1.tail.head;"]


def test_casts_and_numpy_scalar_types():
    @rawkernel()
    def k(x, h):
        x[0] = np.float32(x[1]) + x.dtype.type(2) + float(h[0]) + int(x[2])
        h[1] = x[0]

    text = kernel_text(k, np.zeros(3, np.float64), np.zeros(3, np.float16))
    assert "__half2float(h[0])" in text and "h[1] = __float2half(((float)(x[0])));" in text


def test_loop_over_constant_tuple_is_unrolled():
    @rawkernel()
    def k(x):
        v = x[0]
        for off in (16, 8, 4):
            v += off
        x[0] = v

    text = kernel_text(k, F32)
    assert "const int jk_values1[3] = {16, 8, 4};" in text and "#pragma unroll" in text


def test_numpy_mode_types_literals_weakly():
    @rawkernel(mode="numpy")
    def k(x, y):
        s = 0.0
        s += x[0] * 2.0
        y[0] = s

    lines = code_lines(kernel_text(k, F32, F64))
    assert "double s{};" in lines and "s = (s + ((double)((x[0LL] * 2.0f))));" in lines


def test_cooperative_groups_and_cub_emission():
    @rawkernel()
    def k(x):
        g = jit.cg.this_grid()
        g.sync()
        WR = jit.cub.WarpReduce[np.float32]
        tmp = jit.shared_memory(WR.TempStorage, 1)
        x[0] = WR(tmp[0]).Sum(x[1])

    source = k.emit(F32)
    assert "#include <cooperative_groups.h>" in source
    assert "#include <cub/warp/warp_reduce.cuh>" in source
    assert "auto g = cooperative_groups::this_grid();" in source
    assert "tmp = jk_smem;" in source
    assert "x[0] = cub::WarpReduce<float>(tmp[0]).Sum(x[1]);" in source


square_lambda = rawkernel(device=True)(lambda v: v * v)


def test_device_function_from_a_lambda():
    @rawkernel()
    def k(x):
        x[0] = square_lambda(x[1])

    text = kernel_text(k, F32)
    assert "__device__ __forceinline__ float jk_fn_lambda_(float v) {" in text
    assert "x[0] = jk_fn_lambda_(x[1]);" in text


def test_kernel_named_like_a_cpp_keyword_gets_a_safe_symbol():
    def new(x):
        x[0] = 1

    k = rawkernel()(new)
    assert 'extern "C" __global__ void jk_kernel_new(float* x)' in k.emit(F32)
