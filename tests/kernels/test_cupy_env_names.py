"""The names every string kernel sees with no #include (docs/compat.md, "CuPy's C++
environment"): the M_* of <math.h> and every CUDART_* of CUDA's <math_constants.h>, in
RawKernel, RawModule, ElementwiseKernel and ReductionKernel.

CPU: each kind compiles a kernel naming every constant, whose static_asserts compare each
literal constant with its value computed in Python (cupy_env_values.py) and its C type;
the values equal CUDA's own header's where that is on the include path. GPU and simulator
(twins): a kernel writes every constant, compared bit for bit with the same values.
"""

import os
import re
import warnings

import numpy as np
import pytest

import jitkern
from jitkern.toolchain import discovery

from cupy_env_values import VALUES, as_float64, c_literal, is_literal

ARCH = "sm_90"
NAMES = sorted(VALUES)
CTYPES = {"float": "float", "double": "double", "unsigned int": "unsigned int"}

_SAME = "template <class A, class B> struct jk_same { enum { v = 0 }; };\n" \
        "template <class A> struct jk_same<A, A> { enum { v = 1 }; };\n"


def _checks() -> str:
    """static_asserts: each literal constant's value, and every constant's C type."""
    lines = [_SAME]
    for name in NAMES:
        ctype = CTYPES[VALUES[name][0]]
        lines.append(f'static_assert(jk_same<decltype({name}), {ctype}>::v, "{name}: type");\n')
        if is_literal(name):
            lines.append(f'static_assert({name} == {c_literal(name)}, "{name}: value");\n')
    return "".join(lines)


def _writes(out: str) -> str:
    return "".join(f"{out}[{k}] = (double){name};\n" for k, name in enumerate(NAMES))


WRITE_ALL = 'extern "C" __global__ void all_names(double* o) {\n' + _writes("o") + "}\n"
RAW = _checks() + WRITE_ALL


def _elementwise():
    return jitkern.ElementwiseKernel(
        "raw float64 x", "raw float64 o", "if (i == 0) {\n" + _writes("o") + "}",
        "all_names_ew", preamble=_checks())


def _reduction():
    # the map expression reads every constant; the static_asserts sit in the preamble
    total = " + ".join(f"(double){name}" for name in NAMES if is_literal(name))
    return jitkern.ReductionKernel(
        "float64 x", "float64 y", f"x * ({total})", "a + b", "y = a", "0",
        "all_names_red", preamble=_checks())


@pytest.mark.parametrize("kind", ["RawKernel", "RawModule", "ElementwiseKernel", "ReductionKernel"])
def test_every_name_compiles_with_its_value_in_each_kind(kind):
    x = np.zeros(4)
    info = {
        "RawKernel": lambda: jitkern.RawKernel(RAW, "all_names").inspect(arch=ARCH),
        "RawModule": lambda: jitkern.RawModule(code=RAW).inspect(arch=ARCH),
        "ElementwiseKernel": lambda: _elementwise().inspect(x, np.zeros(len(NAMES)), size=1,
                                                            arch=ARCH),
        "ReductionKernel": lambda: _reduction().inspect(x, arch=ARCH),
    }[kind]()
    assert info.cubin[:4] == b"\x7fELF"
    # the kernel's source is the user's: the names come from a pre-included header
    assert "#include" not in RAW and "M_PI" in info.source


def _cuda_math_constants():
    for folder in discovery.include_dirs()[1:]:
        path = os.path.join(folder, "math_constants.h")
        if os.path.isfile(path):
            return path
    pytest.skip("CUDA's math_constants.h is not on the include path")


def test_the_constants_equal_cudas_own_header():
    """Each literal CUDART_* constant equals, in value and type, the one CUDA's header gives."""
    with open(_cuda_math_constants()) as f:
        theirs = set(re.findall(r"#define\s+(CUDART_\w+)", f.read()))
    assert theirs == {n for n in NAMES if n.startswith("CUDART_")}, "the same names"
    literal = [n for n in NAMES if n.startswith("CUDART_") and is_literal(n)]
    # CUDA's header first: its guard makes ours (pre-included) ... so undo ours, then compare
    src = ["#undef __MATH_CONSTANTS_H__\n"] + [f"#undef {n}\n" for n in NAMES if n in theirs]
    src.append("#include <math_constants.h>\n")
    src += [f"constexpr auto theirs_{n} = {n};\n" for n in literal]
    src += [f"#undef {n}\n" for n in NAMES if n in theirs]
    src.append("#undef __MATH_CONSTANTS_H__\n#undef CUPY_MATH_CONSTANTS_H\n")
    src.append("#include <cupy/math_constants.h>\n")
    src += [f'static_assert(sizeof(theirs_{n}) == sizeof({n}) && theirs_{n} == {n}, "{n}");\n'
            for n in literal]
    src.append('extern "C" __global__ void k(double* o) { o[0] = CUDART_PI; }\n')
    info = jitkern.RawKernel("".join(src), "k").inspect(arch=ARCH)
    assert info.cubin[:4] == b"\x7fELF"


def test_including_cudas_header_too_gives_no_redefinition_warning():
    src = ('#include <math_constants.h>\n#include <cupy/math_constants.h>\n'
           'extern "C" __global__ void k(double* o) { o[0] = CUDART_PI + M_PI; }\n')
    _cuda_math_constants()
    info = jitkern.RawKernel(src, "k").inspect(arch=ARCH)
    assert "redefinition" not in info.log


def test_a_kernel_can_leave_the_names_out():
    """-DJITKERN_NO_DEFAULT_NAMES: a kernel that declares M_PI itself compiles."""
    src = ('const double M_PI = 3.0;\n'
           'extern "C" __global__ void k(double* o) { o[0] = M_PI; }\n')
    with pytest.raises(jitkern.CompileError, match="M_PI"):
        jitkern.RawKernel(src, "k").inspect(arch=ARCH)
    info = jitkern.RawKernel(src, "k", options=("-DJITKERN_NO_DEFAULT_NAMES",)).inspect(arch=ARCH)
    assert info.cubin[:4] == b"\x7fELF"


def test_a_kernels_own_define_wins():
    """A kernel's #define of a name, with other digits, is its value (NVRTC warns in the log)."""
    src = ('#define M_E 2.5\n'
           'static_assert(M_E == 2.5, "the kernel\'s M_E");\n'
           'extern "C" __global__ void k(double* o) { o[0] = M_E; }\n')
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing surfaces as a Python warning
        info = jitkern.RawKernel(src, "k").inspect(arch=ARCH)
    assert "M_E" in info.log and "redefinition" in info.log


def _expected():
    return np.array([as_float64(n) for n in NAMES])


def test_every_name_has_its_value_at_run_time(launch):
    k = jitkern.RawKernel(WRITE_ALL, "all_names")  # (the simulator reads no static_assert)
    out = launch.poisoned(len(NAMES), np.float64)
    launch(k)((1,), (1,), (out,))
    got, want = launch.get(out), _expected()
    np.testing.assert_array_equal(got, want)
    # the sign of each zero and NaN too (CUDART_NAN has its sign bit set, CUDART_NAN_F not)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    assert np.isnan(got[NAMES.index("CUDART_NAN")]) and np.signbit(got[NAMES.index("CUDART_NAN")])


def test_an_elementwise_kernel_computes_with_the_names(launch, rng):
    k = jitkern.ElementwiseKernel(
        "float64 x", "float64 y", "y = x * M_PI + M_SQRT1_2 * CUDART_SQRT_2PI - (double)CUDART_PI_F",
        "with_names")
    x = rng.standard_normal(launch.pick(gpu=10_000, sim=50))
    out = launch.poisoned(x.size, np.float64)
    launch(k)(launch.to_device(x), out)
    want = x * as_float64("M_PI") + as_float64("M_SQRT1_2") * as_float64("CUDART_SQRT_2PI") \
        - as_float64("CUDART_PI_F")
    np.testing.assert_allclose(launch.get(out), want, rtol=1e-15, atol=1e-15)


def test_the_names_with_the_nvcc_backend_too():
    import shutil

    if shutil.which("nvcc") is None and not os.environ.get("CUDA_HOME"):
        pytest.skip("no nvcc")
    src = _checks() + WRITE_ALL
    info = jitkern.RawKernel(src, "all_names", backend="nvcc").inspect(arch=ARCH)
    assert info.cubin[:4] == b"\x7fELF"


def test_jit_locals_named_like_the_macros_are_the_users(launch, rng):
    """A JIT kernel's local named M_E or CUDART_PI is the user's variable, not the macro."""
    from jitkern import jit

    @jit.rawkernel()
    def scaled(x, y):
        M_E = x[1]
        CUDART_PI = x[0]
        y[0] = M_E * CUDART_PI

    x = rng.standard_normal(2)
    y = launch.poisoned(1, np.float64)
    launch(scaled)((1,), (1,), (launch.to_device(x), y))
    np.testing.assert_array_equal(launch.get(y), [x[1] * x[0]])
