"""A kernel constructor called again with the same arguments (kernels/made_again.py): the
new object is a copy of what the first call made, and it is still its own object.

Each test makes the first object, then the same call again, and checks through the public
path what must not be shared or skipped: an argument's error, a different closure value,
JITKERN_DEBUG read at decoration, a subclass's own attributes, the new object's own general
path (its launches after another signature), the generated source it reports. CPU only:
the fake driver (runtime/fakedriver.py) or the simulator.
"""

import os

import numpy as np
import pytest

import jitkern
from jitkern import jit
from jitkern.config import settings
from jitkern.runtime import driver
from jitkern.runtime.fakedriver import FakeDriver

N = 64


def _factor() -> int:
    return int.from_bytes(os.urandom(2), "little") + 2  # a source no earlier test built


def _source(name: str) -> str:
    return (f'extern "C" __global__ void {name}(float* x, int n) {{\n'
            f"    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            f"    if (i < n) x[i] *= {_factor()}.0f;\n}}\n")


@pytest.fixture
def fake(tmp_path, monkeypatch):
    monkeypatch.setattr(settings, "cache_dir", str(tmp_path / "cache"))  # a fresh memo too
    fake = FakeDriver(cc=(9, 0))
    with driver.use(fake):
        yield fake


def test_a_flag_of_another_type_is_checked_again(fake):
    source = _source("again_flag")
    jitkern.RawKernel(source, "again_flag")((1,), (N,), (jitkern.empty(N, np.float32),
                                                        np.int32(N)))
    with pytest.raises(jitkern.JitkernError, match="check_args: expected True or False, got 1"):
        jitkern.RawKernel(source, "again_flag", check_args=1)  # 1 == True, but not a bool
    again = jitkern.RawKernel(source, "again_flag", translate_cucomplex=1)
    assert again.translate_cucomplex == 1 and type(again.translate_cucomplex) is int


def test_a_kernel_made_again_falls_back_to_its_own_general_path(fake):
    source = (f'extern "C" __global__ void again_own(float* x, int n) {{ '
              f"x[0] *= {_factor()}.0f; }}\n")
    f32, f64 = jitkern.empty(N, np.float32), jitkern.empty(N, np.float64)
    first = jitkern.RawKernel(source, "again_own")
    first((1,), (1,), (f32, np.int32(N)))
    second = jitkern.RawKernel(source, "again_own")
    assert second is not first
    launches = len(fake.launches)
    second((1,), (1,), (f32, np.int32(N)))  # straight to the launcher: one launch
    assert len(fake.launches) == launches + 1
    with pytest.raises(jitkern.JitkernError, match="again_own"):  # its own check, naming it
        second((1,), (1,), (f64, np.int32(N)))
    first_call = first.func
    second((1,), (1,), (f32, 7))  # another signature: its own general path installs
    assert len(fake.launches) == launches + 2
    assert first.func is first_call  # the first object's call is untouched
    assert second.func is not first_call


def test_a_subclass_keeps_what_its_init_sets(fake):
    source = _source("again_sub")

    class Tagged(jitkern.RawKernel):
        def __init__(self, code, name, tag):
            self.tag = tag
            super().__init__(code, name)

    assert [Tagged(source, "again_sub", tag).tag for tag in ("a", "b")] == ["a", "b"]


def test_an_elementwise_kernel_made_again_reports_its_source(fake):
    operation = f"y = x * {_factor()}"
    make = lambda: jitkern.ElementwiseKernel("float32 x", "float32 y", operation,  # noqa: E731
                                             "again_ew")
    x = jitkern.empty(N, np.float32)
    first = make()
    first(x)
    second = make()
    second(x)
    assert second.cached_code == first.cached_code and operation in second.cached_code


def _scaled(factor):
    @jit.rawkernel()
    def again_closure(x, n):
        i = jit.grid(1)
        if i < n:
            x[i] = x[i] * factor

    return again_closure


def test_a_rawkernel_decorated_again_reads_its_own_closure(monkeypatch):
    monkeypatch.setattr(settings, "simulate", True)
    rng = np.random.default_rng()
    data = rng.standard_normal(N).astype(np.float32)
    factors = [np.float32(f) for f in rng.uniform(2.0, 9.0, 3)]
    for factor in factors + factors:  # each closure value twice: the second from the memo
        x = data.copy()
        _scaled(factor)[1, N](x, np.int32(N))
        np.testing.assert_allclose(x, data * factor, rtol=1e-6)


def test_a_rawkernel_decorated_again_reads_jitkern_debug_at_decoration(monkeypatch):
    monkeypatch.setattr(settings, "debug", False)
    assert not _scaled(2.0).debug
    monkeypatch.setattr(settings, "debug", True)
    assert _scaled(2.0).debug and "-lineinfo" in _scaled(2.0).options
