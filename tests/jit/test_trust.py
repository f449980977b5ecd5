"""Bad outcomes that once compiled silently (issue 9): colliding names, uninitialised
locals, long expressions, globals changed after the first compile."""

import importlib.util
import math
import re
import sys

import numpy as np
import pytest

import jitkern
from jitkern import jit
from jitkern.errors import JitSyntaxError
from jitkern.jit import rawkernel

F32 = np.zeros(4, np.float32)
M2 = np.zeros((3, 5), np.float32)
SCALE = 2.0


def kernel_part(source: str) -> str:
    return source.split("}  // namespace jk\n", 1)[1]


def signature_names(source: str, name: str) -> list[str]:
    head = re.search(rf"void {name}\((.*?)\) {{", source).group(1)
    return [p.split()[-1] for p in head.split(", ")]


# -- generated names never collide with the user's --------------------------------


def test_parameters_named_like_generated_names_do_not_collide():
    @rawkernel()
    def k(x, x_shape0, x_ptr, x_stride1, jk_shape0_x, jk_t1):
        x[0, 0] = x_shape0 + x_ptr + x_stride1 + jk_shape0_x + jk_t1

    source = k.emit(M2, 1.0, 2.0, 3.0, 4.0, 5.0)
    names = signature_names(source, "k")
    assert len(names) == len(set(names)) == 10, names
    # the user's names keep their spelling where they are plain C names
    assert {"x_shape0", "x_ptr", "x_stride1"} <= set(names)
    assert "jk_shape0_x" in names  # the generated shape of x; the user's is mangled
    assert "jkv_jk_shape0_x" in names and "jkv_jk_t1" in names
    k.inspect(M2, 1.0, 2.0, 3.0, 4.0, 5.0, arch="sm_90")  # NVRTC accepts it


def test_locals_named_like_cuda_functions_do_not_hide_them():
    @rawkernel()
    def k(x):
        sqrtf = x[1]
        atomicAdd = x[2]
        x[0] = math.sqrt(sqrtf) + atomicAdd
        jit.atomic_add(x, 3, 1.0)

    text = kernel_part(k.emit(F32))
    assert "jkv_sqrtf = x[1];" in text and "jkv_atomicAdd = x[2];" in text
    assert "sqrtf(jkv_sqrtf)" in text
    k.inspect(F32, arch="sm_90")


def test_device_function_named_like_a_generated_extra():
    @rawkernel(device=True)
    def shape0_x(v):
        return v + 1

    @rawkernel()
    def k(x):
        x[0, 0] = shape0_x(x[0, 1]) + x.shape[0]

    source = k.emit(M2)
    assert "jk_fn_shape0_x(" in source and "long long jk_shape0_x" in source
    k.inspect(M2, arch="sm_90")


def test_unicode_identifiers_compile():
    @rawkernel()
    def noël(x):
        café = x[1] * 2
        x[0] = café

    source = noël.emit(F32)
    code = "\n".join(
        ln for ln in kernel_part(source).splitlines() if not ln.lstrip().startswith(("//", "#line"))
    )
    assert code.isascii(), code
    assert "jkv_caf_ue9_ = (x[1] * 2.0f);" in code
    assert "void jk_kernel_no_ueb_l(float* x)" in code
    noël.inspect(F32, arch="sm_90")


# -- every hoisted local has a defined value ----------------------------------------


def test_local_assigned_on_some_paths_is_zero_initialised():
    @rawkernel()
    def k(x, y, n):
        i = jit.grid(1)
        if i < n:
            v = x[i]
        if i < n:
            y[i] = v

    text = kernel_part(k.emit(F32, F32, 4))
    assert "float v{};" in text and "unsigned int i{};" in text
    assert re.search(r"^\s*float v;", text, re.M) is None
    k.inspect(F32, F32, 4, arch="sm_90")


def test_every_kind_of_hoisted_local_is_initialised():
    @rawkernel()
    def k(x, n):
        t = (x[0], 1)
        for j in range(n):
            x[j] = t[0]
        for c in (1.0, 2.0):
            x[0] += c
        z = 1j
        x[1] = z.real

    text = kernel_part(k.emit(F32, 4))
    decls = [ln.strip() for ln in text.splitlines() if re.match(r"^\s+[\w:<>, ]+ \w+(\{\})?;$", ln)]
    assert decls and all(d.endswith("{};") for d in decls), decls
    k.inspect(F32, 4, arch="sm_90")


# -- expressions of any length ----------------------------------------------------------


def _long_sum_kernel(tmp_path, terms: int):
    path = tmp_path / f"long_sum_{terms}.py"
    path.write_text(
        "from jitkern.jit import rawkernel\n\n\n@rawkernel()\ndef long_sum(x, y):\n    y[0] = "
        + " + ".join(f"x[{i}]" for i in range(terms))
        + "\n"
    )
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 30_000))  # so that Python itself compiles the file
    try:
        spec.loader.exec_module(module)
    except RecursionError:
        pytest.skip(f"this Python cannot compile a {terms}-term expression itself")
    finally:
        sys.setrecursionlimit(limit)
    return module.long_sum


def test_sum_of_5000_terms_emits(tmp_path):
    k = _long_sum_kernel(tmp_path, 5000)
    x = np.zeros(5000, np.float32)
    code = [
        ln for ln in kernel_part(k.emit(x, x)).splitlines() if "y[0] =" in ln and "//" not in ln
    ]
    assert len(code) == 1
    assert code[0].count(" + ") == 4999 and "x[0]" in code[0] and "x[4999]" in code[0]


def test_sum_of_600_terms_compiles(tmp_path):
    k = _long_sum_kernel(tmp_path, 600)
    x = np.zeros(600, np.float32)
    info = k.inspect(x, x, arch="sm_90")
    assert info.cubin[:4] == b"\x7fELF" and info.registers > 0


def test_sum_of_600_terms_on_gpu(tmp_path, rng, launch):
    k = _long_sum_kernel(tmp_path, 600)
    x = rng.standard_normal(600).astype(np.float32)
    y = launch.to_device(np.full(1, np.nan, np.float32))
    launch(k)[1, 1](launch.to_device(x), y)
    expected = np.add.accumulate(x, dtype=np.float32)[-1]  # left to right, in float32
    assert launch.get(y)[0] == expected


@pytest.mark.skipif(
    sys.version_info[:2] != (3, 11),
    reason="ast's depth limit follows sys.getrecursionlimit() on Python 3.11 only",
)
def test_too_deep_for_python_is_a_clear_error(monkeypatch, tmp_path):
    k = _long_sum_kernel(tmp_path, 5000)
    from jitkern.compiler import frontend

    monkeypatch.setattr(frontend, "_PARSE_RECURSION_LIMIT", 1)  # parse at the default limit
    with pytest.raises(JitSyntaxError) as info:
        k.emit(np.zeros(5000, np.float32), np.zeros(1, np.float32))
    message = str(info.value)
    assert "long_sum_5000.py:4:" in message and "nests too deeply" in message
    assert "split the expression" in message


# -- globals are read at compile time; a rebinding is noticed ---------------------------


def test_changed_global_compiles_again():
    global SCALE

    @rawkernel()
    def k(x):
        x[0] = x[1] * SCALE

    old = SCALE
    try:
        SCALE = 2.0
        first = k.inspect(F32, arch="sm_90").source
        assert "(x[1] * 2.0f)" in first
        SCALE = 3.5
        second = k.inspect(F32, arch="sm_90").source
        assert "(x[1] * 3.5f)" in second and k.cached_code == second
    finally:
        SCALE = old


def test_changed_closure_variable_compiles_again():
    def make():
        factor = 4

        @rawkernel()
        def k(x):
            x[0] = x[1] * factor

        def set_factor(v):
            nonlocal factor
            factor = v

        return k, set_factor

    k, set_factor = make()
    assert "(x[1] * 4.0f)" in k.inspect(F32, arch="sm_90").source
    set_factor(7)
    assert "(x[1] * 7.0f)" in k.inspect(F32, arch="sm_90").source


def test_global_read_by_a_device_function_is_guarded_too():
    from jitkern.compiler.captured import CapturedGlobals

    @rawkernel(device=True)
    def scaled(v):
        return v * SCALE

    @rawkernel()
    def k(x):
        x[0] = scaled(x[1])

    built = k._build((jitkern.kernels.jit.arg_type(F32, allow_host=True),), arch="sm_90")
    assert isinstance(built.globals, CapturedGlobals)
    names = {name for _holder, name, _value, _default in built.globals.records}
    assert names == {"scaled", "SCALE"}
    terms, env = built.globals.guards()
    assert len(terms) == 2 and all(" is " in t for t in terms)
    assert all(eval(t, {}, env) for t in terms)  # the guards hold as compiled
    global SCALE
    old = SCALE
    try:
        SCALE = 9.0
        assert not built.globals.same_objects() and not built.globals.same_values()
        assert not all(eval(t, {}, env) for t in terms)
    finally:
        SCALE = old


def test_changed_global_is_used_at_the_next_launch(rng, launch):
    global SCALE

    @rawkernel()
    def k(x, y):
        i = jit.grid(1)
        if i < x.size:
            y[i] = x[i] * SCALE

    x = rng.standard_normal(64).astype(np.float32)
    dx = launch.to_device(x)
    old = SCALE
    try:
        for scale in (2.0, 2.0, 3.0, 3.0, 0.5):
            SCALE = scale
            y = launch.to_device(np.full(64, np.nan, np.float32))
            launch(k)[1, 64](dx, y)
            np.testing.assert_array_equal(launch.get(y), x * np.float32(scale))
    finally:
        SCALE = old


@pytest.mark.gpu
def test_partially_assigned_local_reads_zero(rng):
    @rawkernel()
    def k(x, y, n):
        i = jit.grid(1)
        if i < n:
            if x[i] > 0:
                v = x[i]
            y[i] = v

    x = rng.standard_normal(200).astype(np.float32)
    y = jitkern.asarray(np.full(200, np.nan, np.float32))
    k[2, 128](jitkern.asarray(x), y, 200)
    np.testing.assert_array_equal(y.get(), np.where(x > 0, x, 0).astype(np.float32))


def test_colliding_and_unicode_names_run(rng, launch):
    @rawkernel()
    def k(x, x_shape0, x_ptr, jk_t1):
        café = x[1, 2]
        x[0, 0] = x_shape0 + 10 * x_ptr + 100 * jk_t1 + café + x.shape[1]

    host = rng.standard_normal((3, 5)).astype(np.float64)
    x = launch.to_device(host)
    launch(k)[1, 1](x, 1.0, 2.0, 3.0)
    expected = host.copy()
    expected[0, 0] = 1.0 + 20.0 + 300.0 + host[1, 2] + 5
    np.testing.assert_array_equal(launch.get(x), expected)


@pytest.mark.gpu
def test_call_errors_after_the_first_launch_name_the_kernel():
    @rawkernel()
    def fill(x):
        x[0] = 1.0

    x = jitkern.asarray(np.zeros(4, np.float32))
    fill[1, 1](x)
    fill(1, 1, (x,))  # the generated launcher is now the kernel's call
    with pytest.raises(TypeError) as info:
        fill(x)
    message = str(info.value)
    assert message.startswith("fill()") and "run" not in message and "_launch" not in message
