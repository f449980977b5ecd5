"""The ufunc table as JIT builtins (jitkern/compiler/builtins/ufuncs.py): ``numpy.<name>`` in a
kernel where the JIT has no math row of that name, ``ufunc.<name>`` for every row. Each row's
CUDA compiles for sm_90 in every loop it has (NVRTC, no GPU needed), its simulation is NumPy's
loop, and on a GPU its results match NumPy's."""

import linecache
import math

import numpy as np
import pytest

import jitkern
from jitkern import jit
from jitkern.errors import JitkernTypeError, JitTypeError
from jitkern.compiler import builtins as B
from jitkern.compiler import types as T
from jitkern.compiler.builtins import ufuncs

_DTYPES = [np.dtype(c) for c in "?bBhHiIqQefdFD"]


def _rows_for(dt):
    """(name, number of results) of every row with a loop for two (or one) ``dt``."""
    out = []
    for name, row in sorted(ufuncs.UFUNC_ROWS.items()):
        try:
            ufuncs.resolve(row, [T.scalar_from_dtype(dt)] * row.nin)
        except JitkernTypeError:
            continue
        out.append((name, len(row.templates)))
    return out


def _every_row_kernel(dt):
    """A kernel storing ``ufunc.<name>(x[i], y[i])`` (each result) of every row taking
    ``dt``, one output array per result; and the (name, result) of each output."""
    rows, lines, outputs = _rows_for(dt), [], []
    for name, nout in rows:
        nin = ufuncs.UFUNC_ROWS[name].nin
        call = f"ufunc.{name}({', '.join(['x[i]', 'y[i]'][:nin])})"
        for j in range(nout):
            lines.append(f"        out{len(outputs)}[i] = {call}" + (f"[{j}]" if nout > 1 else ""))
            outputs.append((name, j))
    params = ", ".join(["x", "y", *(f"out{k}" for k in range(len(outputs))), "n"])
    source = (
        f"def every_row({params}):\n"
        "    for i in range(jit.grid(1), n, jit.gridsize(1)):\n" + "\n".join(lines) + "\n"
    )
    return _define(source, "every_row"), outputs


def _define(source: str, name: str):
    """The ``@jit.rawkernel(mode='numpy')`` kernel ``name`` of ``source`` (registered with
    linecache, so the JIT reads it as a file's)."""
    filename = f"<test_ufunc_rows {name} #{len(linecache.cache)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"numpy": np, "math": math, "jit": jit, "ufunc": jit.ufunc}
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - the source above
    return jit.rawkernel(mode="numpy")(namespace[name])


def _loop(name, dt):
    row = ufuncs.UFUNC_ROWS[name]
    return ufuncs.resolve(row, [T.scalar_from_dtype(dt)] * row.nin)


def _outputs(outputs, dt, n):
    """One poisoned output per result: NaN, or 99 (True for bool)."""
    out = []
    for name, j in outputs:
        t = _loop(name, dt)[ufuncs.UFUNC_ROWS[name].nin + j]
        out.append(np.full(n, np.nan if t.kind in "fc" else 99, t))
    return out


@pytest.mark.parametrize("dt", _DTYPES, ids=str)
def test_every_row_compiles_for_sm_90_in_every_loop(dt):
    kernel, outputs = _every_row_kernel(dt)
    x = np.zeros(4, dt)
    info = kernel.inspect(x, x, *_outputs(outputs, dt, 4), np.int64(4), arch="sm_90")
    assert info.arch == "sm_90" and info.cubin[:4] == b"\x7fELF"
    assert info.source.count("// out") == len(outputs) == sum(n for _, n in _rows_for(dt))
    if any(name in ("gcd", "logaddexp", "heaviside") for name, _ in outputs):
        assert "namespace jkf {" in info.source  # the rows' helpers, once
        assert info.source.count("namespace jkf {") == 1 + (dt.kind == "c")


def test_numpy_names_the_jit_lacks_are_the_ufunc_rows_and_its_own_rows_stay():
    assert B.PY_FUNCTIONS[np.gcd] is ufuncs.UFUNC_RECORDS["gcd"]
    assert B.PY_FUNCTIONS[np.logaddexp] is ufuncs.UFUNC_RECORDS["logaddexp"]
    assert B.PY_FUNCTIONS[np.sqrt].name == "math.sqrt"
    assert B.PY_FUNCTIONS[np.square].name == "numpy.square"
    assert jit.ufunc.gcd is ufuncs.UFUNC_RECORDS["gcd"]


@jitkern.rawkernel()
def _numpy_names(a, b, h, g, lse, hv, q, r):
    i = jit.grid(1)
    if i < a.size:
        g[i] = np.gcd(a[i], b[i])
        q[i], r[i] = np.divmod(a[i], b[i])
        lse[i] = np.logaddexp(h[i], np.float32(0.5))
        hv[i] = jit.ufunc.heaviside(h[i], h[i])


def test_a_kernel_calling_numpy_ufuncs_simulated_matches_numpy(rng):
    n = 40
    a = rng.integers(-50, 50, n).astype(np.int16)
    b = rng.integers(1, 9, n).astype(np.int16) * rng.choice([-1, 1], n).astype(np.int16)
    h = rng.normal(0, 2, n).astype(np.float32)
    h[:3] = [0.0, np.nan, -np.inf]
    g, q, r = (np.full(n, 99, np.int16) for _ in range(3))
    lse, hv = np.full(n, np.nan, np.float32), np.full(n, 7, np.float32)
    _numpy_names.simulate[1, 64](a, b, h, g, lse, hv, q, r)
    np.testing.assert_array_equal(g, np.gcd(a, b))
    np.testing.assert_array_equal(q, a // b)
    np.testing.assert_array_equal(r, a % b)
    with np.errstate(invalid="ignore"):  # NaN in, NaN out
        np.testing.assert_array_equal(lse, np.logaddexp(h, np.float32(0.5)))
        np.testing.assert_array_equal(hv, np.heaviside(h, h))


def test_a_loop_numpy_lacks_is_refused_at_the_users_line():
    @jitkern.rawkernel()
    def bad(x, out):
        out[0] = np.gcd(x[0], x[1])

    x = np.ones(2, np.float32)
    with pytest.raises(JitTypeError, match=r"gcd.*float32") as info:
        bad.simulate[1, 1](x, x)
    assert "test_ufunc_rows.py" in str(info.value)


# -- on a GPU: each row's CUDA against NumPy -------------------------------------------------

#: Rows whose float results are correctly rounded (or exact) in CUDA and NumPy alike.
_EXACT = frozenset(
    "add subtract multiply divide true_divide negative positive absolute fabs sqrt square "
    "floor ceil trunc rint copysign nextafter fmod maximum minimum fmax fmin equal not_equal "
    "less less_equal greater greater_equal logical_and logical_or logical_xor logical_not "
    "isnan isinf isfinite signbit sign conjugate conj heaviside ldexp frexp modf".split()
)
_RTOL = {"e": 4e-3, "f": 4e-6, "d": 1e-13, "F": 4e-6, "D": 1e-13}
#: Of _EXACT, the rows exact for complex loops too: sums, negation, selections and tests.
#: CUDA's complex absolute value (hypot), quotient (scaled), sign (z / |z|), sqrt and
#: products (contracted to FMAs) are within a few ulp of NumPy's, not equal.
_EXACT_COMPLEX = frozenset(
    "add subtract negative positive conjugate conj maximum minimum fmax fmin equal not_equal "
    "logical_and logical_or logical_xor logical_not isnan isinf isfinite".split()
)


def _gpu_values(dt, rng, n, second):
    if dt.kind == "b":
        return rng.random(n) < 0.5
    if dt.kind in "iu":  # a second operand of 1..12: no division by zero, shifts in range
        lo = 1 if second else (0 if dt.kind == "u" else -12)
        return rng.integers(lo, 13, n).astype(dt)
    v = rng.uniform(-2.5, 2.5, n)
    if dt.kind == "c":
        z = np.empty(n, dt)
        z.real, z.imag = v, rng.uniform(-2.5, 2.5, n)
        return z
    return v.astype(dt)


@pytest.mark.parametrize("dt", _DTYPES, ids=str)
def test_every_row_on_the_gpu_matches_numpy(dt, rng, launch):
    kernel, outputs = _every_row_kernel(dt)
    n = launch.pick(256, 64)
    x, y = _gpu_values(dt, rng, n, False), _gpu_values(dt, rng, n, True)
    outs = [launch.to_device(o) for o in _outputs(outputs, dt, n)]
    grid = launch.pick(4, 1)  # more threads than values: the guard is exercised too
    launch(kernel)[grid, 128](launch.to_device(x), launch.to_device(y), *outs, np.int64(n))
    for (name, j), out in zip(outputs, outs):
        row = ufuncs.UFUNC_ROWS[name]
        with np.errstate(all="ignore"):
            want = getattr(np, name)(*[x, y][: row.nin], signature=_loop(name, dt))
        want = want[j] if isinstance(want, tuple) else want
        if name == "reciprocal" and dt.kind in "iu":  # the kernel's (CuPy's) 1 / 0 is 0
            want = np.where(x == 0, 0, want).astype(want.dtype)
        got = launch.get(out)
        assert got.dtype == want.dtype, name
        exact = name in _EXACT and (dt.kind != "c" or name in _EXACT_COMPLEX)
        if got.dtype.kind in "biu" or exact:
            np.testing.assert_array_equal(got, want, err_msg=f"numpy.{name} on {dt}")
        else:
            rtol = _RTOL[_loop(name, dt)[0].char]
            finite = np.abs(want[np.isfinite(want)])  # (an inf in want made atol inf)
            scale = float(finite.max()) if finite.size else 1.0
            np.testing.assert_allclose(
                got, want, rtol=rtol, atol=rtol * scale, err_msg=f"numpy.{name} on {dt}"
            )
