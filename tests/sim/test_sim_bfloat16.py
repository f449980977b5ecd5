"""bfloat16 in the simulator: ml_dtypes' bfloat16, computed in float32 and rounded once where
stored (the JIT's rule for half types); a clear refusal where ml_dtypes is not installed."""

import numpy as np
import pytest

from jitkern import jit
from jitkern.errors import JitTypeError
from jitkern.jit import rawkernel
from jitkern.compiler import types as T
from jitkern.compiler.expressions import CompileProblem
from jitkern.sim import emit


@rawkernel()
def axpb(x, y, out, a):
    i = jit.grid(1)
    if i < x.shape[0]:
        out[i] = x[i] * a + y[i]


@rawkernel()
def running(x, out):
    acc = x[0]
    out[0] = acc
    for k in range(1, x.shape[0]):
        acc = acc + x[k]  # a bfloat16 local: rounded at each assignment
        out[k] = acc


def test_bfloat16_computes_in_float32_and_rounds_once_where_stored(rng):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bf = ml_dtypes.bfloat16
    n = int(rng.integers(50, 300))
    x, y = (rng.standard_normal(n).astype(bf) for _ in range(2))
    a = np.float32(rng.standard_normal())
    out = np.full(n, np.nan, bf)
    axpb.simulate[(n + 127) // 128, 128](x, y, out, a)
    once = (x.astype(np.float32) * a + y.astype(np.float32)).astype(bf)
    assert out.dtype == bf
    np.testing.assert_array_equal(out.view(np.uint16), once.view(np.uint16))


def test_a_bfloat16_local_is_rounded_at_each_assignment(rng):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bf = ml_dtypes.bfloat16
    x = (rng.standard_normal(int(rng.integers(20, 80))) * 30).astype(bf)
    out = np.full(x.size, np.nan, bf)
    running.simulate[1, 1](x, out)
    acc, expected = x[0], [x[0]]
    for v in x[1:]:
        acc = bf(np.float32(acc) + np.float32(v))
        expected.append(acc)
    np.testing.assert_array_equal(out.view(np.uint16), np.array(expected, bf).view(np.uint16))


def test_without_ml_dtypes_bfloat16_is_refused_with_what_to_install(monkeypatch):
    monkeypatch.setattr(T, "ml_dtype", lambda name: None)
    with pytest.raises(CompileProblem, match="bfloat16 is simulated with ml_dtypes") as info:
        emit.numpy_type(T.bfloat16)
    assert info.value.hint == "pip install ml_dtypes (NumPy has no such type)"
    assert info.value.cls is JitTypeError


@rawkernel()
def scaled(x, out, a):  # only built below: a simulated build is kept per signature
    i = jit.grid(1)
    if i < x.shape[0]:
        out[i] = x[i] * a


def test_without_ml_dtypes_a_bfloat16_kernel_says_to_install_it(rng, monkeypatch):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = rng.standard_normal(8).astype(ml_dtypes.bfloat16)
    monkeypatch.setattr(T, "ml_dtype", lambda name: None)
    with pytest.raises(
        JitTypeError,
        match=r"(?s)bfloat16 is simulated with ml_dtypes, which is not installed.*"
        r"pip install ml_dtypes",
    ):
        scaled.simulate[1, 8](x, x.copy(), np.float32(2))


BF16 = T.bfloat16_dtype()  # None without ml_dtypes: the test using it is skipped then


@rawkernel()
def shared_and_atomic(x, out):
    s = jit.shared_memory(BF16, 32)
    t = jit.threadIdx.x
    s[t] = x[t]
    jit.syncthreads()
    jit.atomic_add(out, 0, s[31 - t])
    out[1 + t] = s[t] * 2


def test_bfloat16_shared_memory_and_atomics_round_each_store(rng):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bf = ml_dtypes.bfloat16
    x = (rng.standard_normal(32) * 10).astype(bf)
    out = np.zeros(33, bf)
    shared_and_atomic.simulate[1, 32](x, out)
    acc = bf(0)
    for v in x[::-1]:  # threads in order: thread t adds s[31 - t]
        acc = bf(np.float32(acc) + np.float32(v))
    assert out[0].view(np.uint16) == acc.view(np.uint16)
    twice = (x.astype(np.float32) * 2).astype(bf)
    np.testing.assert_array_equal(out[1:].view(np.uint16), twice.view(np.uint16))
