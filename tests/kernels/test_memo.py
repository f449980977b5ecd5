"""The memo of builds (runtime/memo.py; docs/cache.md, "In memory: the memo of builds").

A kernel object made again from the same definition (CuPy code often builds its kernels
inside the function it calls in a loop) reuses what the first one built: nothing is
compiled, read from the disk cache or loaded on the device again. Each input of the key,
changed once, gives a new entry. The simulator keeps its translations in the same memo.

CPU only: the fake driver (runtime/fakedriver.py) records every module load and launch;
NVRTC compiles real binaries into a fresh disk cache per test; ``cache.stats["compiles"]``
counts NVRTC compiles, ``disk_hits``/``memory_hits`` the compile cache's reads, ``memo.stats["builds"]``
the memo's misses that built something.
"""

import os

import numpy as np
import pytest

import jitkern
from jitkern import jit
from jitkern.config import settings
from jitkern.cuda import Device
from jitkern.runtime import driver, memo
from jitkern.runtime.fakedriver import FakeDriver
from jitkern.toolchain import cache

N = 64


def _factor() -> int:
    return int.from_bytes(os.urandom(2), "little") + 2  # a source no earlier test built


def _raw_source(name: str, factor: int, extra: str = "") -> str:
    return (f'{extra}extern "C" __global__ void {name}(float* x, int n) {{\n'
            f"    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            f"    if (i < n) x[i] *= {factor}.0f;\n}}\n")


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """Two fake GPUs (sm_90, sm_80) and a third sm_90, over an empty disk cache."""
    monkeypatch.setattr(settings, "cache_dir", str(tmp_path / "cache"))  # a fresh memo too
    fake = FakeDriver(devices=3, cc=[(9, 0), (8, 0), (9, 0)])
    with driver.use(fake):
        yield fake


def _counts(fake) -> dict:
    reads = cache.stats["disk_hits"] + cache.stats["memory_hits"]
    return {"compiles": cache.stats["compiles"], "cache reads": reads,
            "memo builds": memo.stats["builds"], "loads": len(fake.loads)}


def _grew(before: dict, after: dict) -> dict:
    return {key: after[key] - before[key] for key in before}


# ---------------------------------------------------------------------------
# Each kind, made again inside the calling function: the first object's build serves


def _raw_kind():
    source = _raw_source("memo_raw", _factor())
    return lambda x: jitkern.RawKernel(source, "memo_raw")((1,), (N,), (x, np.int32(N)))


def _module_kind():
    source = _raw_source("memo_module", _factor())

    def call(x):
        kernel = jitkern.RawModule(code=source).get_function("memo_module")
        kernel((1,), (N,), (x, np.int32(N)))

    return call


def _elementwise_kind():
    operation = f"y = x * {_factor()}"
    return lambda x: jitkern.ElementwiseKernel("float32 x", "float32 y", operation,
                                               "memo_ew")(x)


def _reduction_kind():
    mapped = f"x * {_factor()}"
    return lambda x: jitkern.ReductionKernel("float32 x", "float32 y", mapped, "a + b",
                                             "y = a", "0", "memo_red")(x)


def _rawkernel_kind():
    factor = _factor()

    def call(x):
        @jit.rawkernel()
        def memo_jit(x, n):  # decorated again at every call, as cupyx.jit code does
            i = jit.grid(1)
            if i < n:
                x[i] = x[i] * factor

        memo_jit[1, N](x, np.int32(N))

    return call


def _fuse_kind():
    factor = float(_factor())

    def call(x):
        def memo_fused(x):
            return x * factor + 1.0

        return jitkern.fuse(memo_fused)(x)

    return call


KINDS = {"RawKernel": _raw_kind, "RawModule": _module_kind, "ElementwiseKernel":
         _elementwise_kind, "ReductionKernel": _reduction_kind, "rawkernel": _rawkernel_kind,
         "fuse": _fuse_kind}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_kernel_made_again_builds_nothing(fake, kind):
    call = KINDS[kind]()
    x = jitkern.empty(N, np.float32)
    first = _counts(fake)
    call(x)
    built = _grew(first, _counts(fake))
    assert built["compiles"] >= 1 and built["loads"] >= 1  # the first object built and loaded
    handles = {launch.handle for launch in fake.launches}
    launches = len(fake.launches)
    again = _counts(fake)
    for _ in range(3):
        call(x)
    assert _grew(again, _counts(fake)) == {"compiles": 0, "cache reads": 0, "memo builds": 0,
                                          "loads": 0}
    assert len(fake.launches) == launches + 3 * launches  # each call launched, as the first
    assert {launch.handle for launch in fake.launches} == handles  # the first's functions


# ---------------------------------------------------------------------------
# Each part of the key, changed once: a new entry


def _launch_raw(source, name="memo_key", options=(), device=0):
    with Device(device):
        kernel = jitkern.RawKernel(source, name, options=options)
        kernel((1,), (N,), (jitkern.empty(N, np.float32), np.int32(N)))


def _changed_once(fake, change) -> dict:
    before = _counts(fake)
    change()
    return _grew(before, _counts(fake))


def test_each_part_of_a_raw_kernels_key_gives_a_new_entry(fake, tmp_path, monkeypatch):
    factor = _factor()
    source = _raw_source("memo_key", factor)
    two = source + _raw_source("memo_other", factor)
    headers = tmp_path / "headers"
    headers.mkdir()
    (headers / "memo_scale.h").write_text("#define MEMO_SCALE 2.0f\n")
    included = _raw_source("memo_key", factor, '#include "memo_scale.h"\n').replace(
        f"{factor}.0f", "MEMO_SCALE")
    include = (f"-I{headers}",)
    for call in (lambda: _launch_raw(source), lambda: _launch_raw(two),
                 lambda: _launch_raw(included, options=include)):
        call()  # the baselines, built once
    baseline = _changed_once(fake, lambda: _launch_raw(source))
    assert baseline == {"compiles": 0, "cache reads": 0, "memo builds": 0, "loads": 0}

    new_source = _changed_once(fake, lambda: _launch_raw(_raw_source("memo_key", factor + 1)))
    new_name = _changed_once(fake, lambda: _launch_raw(two, "memo_other"))
    new_options = _changed_once(fake, lambda: _launch_raw(source, options=("-DMEMO=1",)))
    new_arch = _changed_once(fake, lambda: _launch_raw(source, device=1))  # sm_80
    for grew in (new_source, new_options, new_arch):
        assert grew["compiles"] == 1 and grew["memo builds"] >= 1 and grew["loads"] == 1
    # another kernel of the same source: the same binary (no compile), its own entry
    assert new_name["compiles"] == 0 and new_name["memo builds"] >= 1
    # a device of the same arch: the same binary, loaded there too (no compile, no build)
    same_arch = _changed_once(fake, lambda: _launch_raw(source, device=2))
    assert same_arch == {"compiles": 0, "cache reads": 0, "memo builds": 0, "loads": 1}

    (headers / "memo_scale.h").write_text("#define MEMO_SCALE 3.0f\n")  # an edited header
    edited = _changed_once(fake, lambda: _launch_raw(included, options=include))
    assert edited["compiles"] == 1 and edited["memo builds"] >= 1

    identity = cache.identity()
    monkeypatch.setattr(cache, "identity", lambda: (*identity, "another jitkern"))
    other_jitkern = _changed_once(fake, lambda: _launch_raw(source))
    assert other_jitkern["memo builds"] >= 1 and other_jitkern["loads"] == 1


def test_name_expressions_and_preamble_are_part_of_the_key(fake):
    template = (f"template <typename T> __global__ void memo_t(T* x, int n) {{\n"
                f"    int i = threadIdx.x; if (i < n) x[i] *= {_factor()};\n}}\n")
    x = jitkern.empty(N, np.float32)

    def module_call(names):
        kernel = jitkern.RawModule(code=template, name_expressions=names).get_function(
            "memo_t<float>")
        kernel((1,), (N,), (x, np.int32(N)))

    module_call(["memo_t<float>"])
    again = _changed_once(fake, lambda: module_call(["memo_t<float>"]))
    assert again == {"compiles": 0, "cache reads": 0, "memo builds": 0, "loads": 0}
    more = _changed_once(fake, lambda: module_call(["memo_t<float>", "memo_t<double>"]))
    assert more["compiles"] == 1 and more["memo builds"] >= 1

    def elementwise_call(preamble):
        jitkern.ElementwiseKernel("float32 x", "float32 y", "y = memo_f(x)", "memo_pre",
                                  preamble=preamble)(x)

    factor = _factor()
    elementwise_call(f"__device__ float memo_f(float v) {{ return v * {factor}; }}")
    again = _changed_once(fake, lambda: elementwise_call(
        f"__device__ float memo_f(float v) {{ return v * {factor}; }}"))
    assert again == {"compiles": 0, "cache reads": 0, "memo builds": 0, "loads": 0}
    other = _changed_once(fake, lambda: elementwise_call(
        f"__device__ float memo_f(float v) {{ return v + {factor}; }}"))
    assert other["compiles"] == 1 and other["memo builds"] >= 1


def test_a_rawkernel_of_other_closure_values_is_built_again(fake):
    x = jitkern.empty(N, np.float32)

    def call(factor):
        @jit.rawkernel()
        def memo_closure(x, n):
            i = jit.grid(1)
            if i < n:
                x[i] = x[i] * factor  # the value is baked into the generated source

        memo_closure[1, N](x, np.int32(N))

    base = _factor()
    call(base)
    assert _changed_once(fake, lambda: call(base))["compiles"] == 0
    assert _changed_once(fake, lambda: call(base + 1))["compiles"] == 1


# ---------------------------------------------------------------------------
# Clearing and the bound


def test_clear_memo_and_clear_cache_behave_as_documented(fake):
    source = _raw_source("memo_clear", _factor())
    x = jitkern.empty(N, np.float32)
    kernel = jitkern.RawKernel(source, "memo_clear")
    kernel((1,), (N,), (x, np.int32(N)))
    # kernel.clear_memo(): its next call builds again, from the compile cache (the module
    # stays loaded on the device: runtime/module.py keeps loaded modules by binary)
    kernel.clear_memo()
    cleared = _changed_once(fake, lambda: kernel((1,), (N,), (x, np.int32(N))))
    assert cleared["compiles"] == 0 and cleared["memo builds"] >= 1
    assert cleared["cache reads"] == 1
    # jitkern.clear_memo(): a new object builds again, from the disk cache
    jitkern.clear_memo()
    again = _changed_once(fake, lambda: _launch_raw(source, "memo_clear"))
    assert again["compiles"] == 0 and again["memo builds"] >= 1 and again["cache reads"] == 1
    # jitkern.clear_cache(): the memo and the disk cache: compiled again
    jitkern.clear_cache()
    fresh = _changed_once(fake, lambda: _launch_raw(source, "memo_clear"))
    assert fresh["compiles"] == 1 and fresh["memo builds"] >= 1


def test_the_memo_keeps_at_most_its_bound(fake, monkeypatch):
    monkeypatch.setattr(settings, "memo_size", 4)
    sources = [_raw_source(f"memo_lru{k}", _factor()) for k in range(6)]
    evictions = memo.stats["evictions"]
    for k, source in enumerate(sources):
        _launch_raw(source, f"memo_lru{k}")
    assert memo.size() <= 4 and memo.stats["evictions"] > evictions
    # the newest is still kept; the oldest was dropped: built again, from the disk cache
    assert _changed_once(fake, lambda: _launch_raw(sources[-1], "memo_lru5"))["memo builds"] == 0
    oldest = _changed_once(fake, lambda: _launch_raw(sources[0], "memo_lru0"))
    assert oldest["compiles"] == 0 and oldest["memo builds"] >= 1
    monkeypatch.setattr(settings, "memo_size", 0)  # off: nothing kept
    jitkern.clear_memo()
    _launch_raw(sources[1], "memo_lru1")
    assert memo.size() == 0


# ---------------------------------------------------------------------------
# The simulator: a kernel made again runs the first one's translation


def _poisoned(rng):
    return rng.standard_normal(N).astype(np.float32), np.full(N, np.nan, np.float32)


def test_the_simulator_translates_a_kernel_made_again_once(rng):
    factor = _factor()
    source = (f'extern "C" __global__ void memo_sim(const float* x, float* y, int n) {{\n'
              f"    int i = threadIdx.x; if (i < n) y[i] = x[i] * {factor}.0f;\n}}\n")
    operation = f"y = x * {factor}"
    for _ in range(3):
        x, y = _poisoned(rng)
        builds = memo.stats["builds"]
        jitkern.RawKernel(source, "memo_sim").simulate[1, N](x, y, np.int32(N))
        np.testing.assert_array_equal(y, x * np.float32(factor))
        z = jitkern.ElementwiseKernel("float32 x", "float32 y", operation, "memo_sim_ew"
                                      ).simulate(x)
        np.testing.assert_array_equal(z, x * np.float32(factor))
        if _ > 0:  # made again: translated by the first object
            assert memo.stats["builds"] == builds


def test_a_simulated_rawkernel_reads_its_own_closure(rng):
    def make(factor):
        @jit.rawkernel()
        def memo_sim_closure(x, y, n):
            i = jit.grid(1)
            if i < n:
                y[i] = x[i] * factor

        return memo_sim_closure

    for factor in (2.0, 2.0, 3.0, 2.0):  # a kept translation serves only its own values
        x, y = _poisoned(rng)
        make(factor).simulate[1, N](x, y, np.int32(N))
        np.testing.assert_array_equal(y, x * np.float32(factor))


# ---------------------------------------------------------------------------
# On the device (and on the simulated device): kernels made again compute, building nothing


def test_kernels_made_again_compute_and_build_nothing(on_device, rng):
    factor = _factor()
    source = (f'extern "C" __global__ void memo_dev(const float* x, float* y, int n) {{\n'
              f"    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
              f"    if (i < n) y[i] = x[i] * {factor}.0f;\n}}\n")
    operation = f"y = x * {factor + 1}"
    for call in range(3):
        x = rng.standard_normal(N).astype(np.float32)
        d_x, d_y = jitkern.asarray(x), jitkern.asarray(np.full(N, np.nan, np.float32))
        builds, compiles = memo.stats["builds"], cache.stats["compiles"]
        jitkern.RawKernel(source, "memo_dev")((1,), (N,), (d_x, d_y, np.int32(N)))
        np.testing.assert_array_equal(d_y.get(), x * np.float32(factor))
        z = jitkern.ElementwiseKernel("float32 x", "float32 y", operation, "memo_dev_ew")(d_x)
        np.testing.assert_array_equal(z.get(), x * np.float32(factor + 1))
        if call:  # made again: the first objects' builds (or translations) serve
            assert memo.stats["builds"] == builds and cache.stats["compiles"] == compiles
