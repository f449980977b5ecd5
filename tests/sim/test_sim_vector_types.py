"""CUDA's vector types (``float4``, ``make_double3``, ``int2``...) in the simulator's C subset.

Real kernels build small vectors as locals and take them by value; before, every such kernel
was refused ("the vector type 'double3' is outside the C subset"). Each stem and width is
built with its ``make_`` function from fresh random values, its components combined, and the
result compared with NumPy's arithmetic in the component type; by-value parameters come
from NumPy records, as on a GPU."""

import numpy as np
import pytest

import jitkern

STEMS = {"char": np.int8, "uchar": np.uint8, "short": np.int16, "ushort": np.uint16,
         "int": np.int32, "uint": np.uint32, "long": np.int64, "ulong": np.uint64,
         "longlong": np.int64, "ulonglong": np.uint64, "float": np.float32,
         "double": np.float64}
C_TYPES = {"char": "signed char", "uchar": "unsigned char", "short": "short",
           "ushort": "unsigned short", "int": "int", "uint": "unsigned int", "long": "long",
           "ulong": "unsigned long", "longlong": "long long",
           "ulonglong": "unsigned long long", "float": "float", "double": "double"}


@pytest.mark.parametrize("width", [1, 2, 3, 4])
@pytest.mark.parametrize("stem", sorted(STEMS))
def test_make_and_components_match_numpy(stem, width, rng):
    dt, c = np.dtype(STEMS[stem]), C_TYPES[stem]
    fields = "xyzw"[:width]
    high = 10 if dt.kind in "iu" else 1
    values = (rng.integers(0, high, width) if dt.kind in "iu"
              else rng.standard_normal(width)).astype(dt)
    args = ", ".join(f"v[{i}]" for i in range(width))
    # each component doubled in place, then written out: members read and written
    body = "".join(f"  w.{f} = w.{f} + w.{f};\n  out[{i}] = w.{f};\n" for i, f in enumerate(fields))
    source = (f'extern "C" __global__ void k(const {c}* v, {c}* out) {{\n'
              f"  {stem}{width} w = make_{stem}{width}({args});\n{body}}}\n")
    out = np.full(width, 99, dt)
    jitkern.RawKernel(source, "k").simulate((1,), (1,), (values, out))
    np.testing.assert_array_equal(out, (values + values).astype(dt))


def test_vectors_by_value_from_records(rng):
    source = r'''
    extern "C" __global__ void k(double3 v, float2 f, double* out) {
      double3 w = make_double3(v.x * 2.0, v.y, v.z - f.x);
      out[0] = w.x + w.y * w.z + (double)(f.x * f.y);
    }'''
    v = np.zeros((), np.dtype([("x", "f8"), ("y", "f8"), ("z", "f8")]))
    f = np.zeros((), np.dtype([("x", "f4"), ("y", "f4")], align=True))
    (vx, vy, vz), (fx, fy) = rng.standard_normal(3), rng.standard_normal(2).astype(np.float32)
    v["x"], v["y"], v["z"], f["x"], f["y"] = vx, vy, vz, fx, fy
    out = np.full(1, np.nan)
    jitkern.RawKernel(source, "k").simulate((1,), (1,), (v[()], f[()], out))
    want = vx * 2.0 + vy * (vz - np.float64(fx)) + np.float64(fx * fy)
    np.testing.assert_allclose(out[0], want, rtol=1e-15)


def test_an_elementwise_operation_uses_a_vector_local(rng):
    k = jitkern.ElementwiseKernel(
        "float32 x, float32 y", "float32 z",
        "float2 p = make_float2(x, y); float2 q = make_float2(p.y, -p.x);"
        " z = p.x * q.x + p.y * q.y + q.x;", "vec_local")
    x, y = rng.standard_normal(1000).astype(np.float32), rng.standard_normal(1000).astype(np.float32)
    z = np.full(1000, np.nan, np.float32)
    k.simulate(x, y, z)
    np.testing.assert_allclose(z, (x * y + y * -x + y).astype(np.float32), rtol=1e-6, atol=1e-6)
