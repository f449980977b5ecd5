"""Complex numbers in raw kernels: complex.cuh, translate_cucomplex=True and jitify=True.

    python examples/complex_kernel.py [--simulate]

Needs a CUDA GPU: runs each kernel on it and checks it against NumPy. With --simulate (or
JITKERN_SIMULATE=1) it runs them in jitkern's CPU simulator instead, each kernel's
.simulate on NumPy arrays (the spec example, checked against NumPy; the simulator refuses
what is outside its C subset, naming the construct and line). Without a GPU it compiles
them for sm_90 and prints their resource use.
"""

import sys

import numpy as np

import jitkern

SPEC_EXAMPLE = r"""
#include <jitkern/complex.cuh>
extern "C" __global__
void my_func(const complex<float>* x1, const complex<float>* x2,
             complex<float>* y, float a) {
    int tid = blockDim.x * blockIdx.x + threadIdx.x;
    y[tid] = x1[tid] + a * x2[tid];
}
"""

# Code written against cuComplex.h, unchanged.
CUCOMPLEX = r"""
#include <cuComplex.h>
extern "C" __global__ void rotate(cuFloatComplex* z, cuFloatComplex by, int n) {
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < n) z[i] = cuCmulf(z[i], by);
}
"""

# Template code that needs the C++ standard headers.
JITIFY = r"""
#include <type_traits>
#include <jitkern/complex.cuh>
template <typename T>
__device__ complex<T> unit_phase(complex<T> z) {
    static_assert(std::is_floating_point<T>::value, "complex of a floating type");
    return z / abs(z);
}
extern "C" __global__ void phase(const complex<double>* z, complex<double>* out, int n) {
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < n) out[i] = unit_phase(z[i]) * exp(complex<double>(0.0, 0.5));
}
"""

KERNELS = [
    ("spec example", jitkern.RawKernel(SPEC_EXAMPLE, "my_func")),
    ("cuComplex.h code", jitkern.RawKernel(CUCOMPLEX, "rotate", translate_cucomplex=True)),
    ("jitify=True", jitkern.RawKernel(JITIFY, "phase", jitify=True)),
]


def run_on_gpu() -> None:
    x1 = np.arange(25, dtype=np.complex64).reshape(5, 5)
    x2 = 1j * np.arange(25, dtype=np.complex64).reshape(5, 5)
    y = jitkern.zeros((5, 5), dtype=np.complex64)
    KERNELS[0][1]((5,), (5,), (jitkern.asarray(x1), jitkern.asarray(x2), y, np.float32(2.0)))
    assert np.array_equal(y.get(), x1 + 2 * x2)
    print("spec example      ok:", y.get()[1])

    rng = np.random.default_rng()
    n = 1000
    z = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
    d = jitkern.asarray(z)
    KERNELS[1][1](((n + 255) // 256,), (256,), (d, np.complex64(1j), np.int32(n)))
    np.testing.assert_allclose(d.get(), z * 1j, rtol=1e-6)
    print("cuComplex.h code  ok: z * 1j for", n, "values")

    w = z.astype(np.complex128)
    out = jitkern.zeros(n, np.complex128)
    KERNELS[2][1](((n + 255) // 256,), (256,), (jitkern.asarray(w), out, np.int32(n)))
    np.testing.assert_allclose(out.get(), w / np.abs(w) * np.exp(0.5j), rtol=1e-12)
    print("jitify=True       ok: unit phases")


def run_simulated() -> None:
    x1 = np.arange(25, dtype=np.complex64).reshape(5, 5)
    x2 = 1j * np.arange(25, dtype=np.complex64).reshape(5, 5)
    y = np.zeros((5, 5), dtype=np.complex64)
    KERNELS[0][1].simulate((5,), (5,), (x1, x2, y, np.float32(2.0)))
    assert np.array_equal(y, x1 + 2 * x2)
    print("spec example      ok (simulated):", y[1])
    z = (np.arange(8) + 1j).astype(np.complex64)
    want = z * 1j
    KERNELS[1][1].simulate((1,), (8,), (z, np.complex64(1j), np.int32(8)))
    assert np.allclose(z, want)
    print("cuComplex.h code  ok (simulated): z * 1j for", z.size, "values")
    try:  # templates and <type_traits> are outside the simulator's C subset
        KERNELS[2][1].simulate((1,), (8,), (z.astype(np.complex128), z, np.int32(8)))
    except jitkern.CompileError as exc:
        print(f"jitify=True        not simulated: {str(exc).splitlines()[0]}")


def inspect_only(why: str) -> None:
    print(f"{why}: compiling for sm_90 only")
    for title, kernel in KERNELS:
        info = kernel.inspect(arch="sm_90")
        print(
            f"{title:18s} {info.registers} registers, {info.local_bytes} bytes local, "
            f"{len(info.cubin)} bytes of CUBIN"
        )


if __name__ == "__main__":
    if "--simulate" in sys.argv[1:] or jitkern.config.settings.simulate:
        run_simulated()
    elif jitkern.is_available():
        run_on_gpu()
    else:
        inspect_only("this example needs a CUDA GPU and none was found")
