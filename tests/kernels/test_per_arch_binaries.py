"""Every kernel kind loads, on each GPU, the binary built for that GPU's arch (issue 28).

The kernel base owns the per-device, per-arch cache of Functions (kernels/base.py over
runtime/functions.py), so no kind can load one device's binary on another: before it, a
``@rawkernel`` launched on an sm_90 and then an sm_80 device loaded the sm_90 CUBIN on
both (``{0: [90], 1: [90]}``), which a real driver refuses.

CPU only: the fake driver (runtime/fakedriver.py) stands for two GPUs of compute capability
9.0 and 8.0 and records the image of every module load; NVRTC builds real CUBINs, whose ELF
header says their arch. Each kind is launched on device 0, 1, 0, 1 (the second visit runs
the generated launcher): each device must load exactly one image of the kernel, its own."""

import os

import numpy as np
import pytest

import jitkern
from jitkern import jit
from jitkern.cuda import Device
from jitkern.runtime import driver
from jitkern.runtime.fakedriver import FakeDriver
from jitkern.toolchain import cubin

CCS = [(9, 0), (8, 0)]  # device 0 an H100's, device 1 an A100's
WANTED = {0: [90], 1: [80]}


class NamedDevices(FakeDriver):
    """The fake, with the device names autotune's choices are kept under."""

    def cuDeviceGetName(self, size, device):
        return (0, f"Fake GPU {int(device)}".encode().ljust(size, b"\0"))


def _factor() -> int:
    return int.from_bytes(os.urandom(2), "little") + 2  # a fresh source: nothing cached


def _loads_by_device(fake, symbol):
    """device -> arch of each module holding ``symbol`` loaded there."""
    out: dict[int, list[int]] = {}
    for device, image in fake.loads:
        names = cubin.kernel_names(image) or []
        if any(name == symbol or name.startswith(symbol) for name in names):
            out.setdefault(device, []).append(cubin.elf_arch(image))
    return out


def _on_each_device(launch):
    for device in (0, 1, 0, 1):  # each device twice: the second launch is the fast path
        with Device(device):
            launch()


def _raw_source(name: str, factor: int) -> str:
    return (f'extern "C" __global__ void {name}(float* x, int n) {{\n'
            f"    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            f"    if (i < n) x[i] *= {factor}.0f;\n}}\n")


def _jit():
    factor = _factor()

    @jit.rawkernel()
    def jit_arch(x, n):
        i = jit.grid(1)
        if i < n:
            x[i] = x[i] * factor

    return lambda x: jit_arch[1, 32](x, np.int32(x.size)), "jit_arch"


def _raw():
    kernel = jitkern.RawKernel(_raw_source("raw_arch", _factor()), "raw_arch")
    return lambda x: kernel((1,), (32,), (x, np.int32(x.size))), "raw_arch"


def _raw_module():
    module = jitkern.RawModule(code=_raw_source("module_arch", _factor()))

    def launch(x):
        module.get_function("module_arch")((1,), (32,), (x, np.int32(x.size)))

    return launch, "module_arch"


def _elementwise():
    kernel = jitkern.ElementwiseKernel("float32 x", "float32 y", f"y = x * {_factor()}",
                                       "ew_arch")
    return lambda x: kernel(x), "ew_arch"


def _reduction():
    kernel = jitkern.ReductionKernel("float32 x", "float32 y", f"x * {_factor()}", "a + b",
                                     "y = a", "0", "red_arch")
    return lambda x: kernel(x), "red_arch"


def _fused():
    factor = float(_factor())
    fused = jitkern.fuse(lambda x: x * factor + 1.0, kernel_name="fused_arch")
    return lambda x: fused(x), "fused_arch"


def _exported(tmp_path):
    name = "exported_arch"
    source = _raw_source(name, _factor())
    jitkern.RawKernel(source, name).export(tmp_path / "k", arch=("sm_80", "sm_90"),
                                           format="cubin")
    kernel = jitkern.load(tmp_path / "k.json")[name]
    return lambda x: kernel((1,), (32,), (x, np.int32(x.size))), name


def _autotuned(tmp_path):
    name = "tuned_arch"
    kernel = jitkern.RawKernel(_raw_source(name, _factor()), name)

    def timer(trial):
        trial()
        return float(trial.config.block)  # the smaller block "wins": no GPU timing here

    tuned = jitkern.autotune(kernel, configs=[jitkern.Config(block=32), jitkern.Config(block=64)],
                             grid=lambda config, x, n: 1, timer=timer)
    return lambda x: tuned(x, np.int32(x.size)), name


KINDS = {"rawkernel": _jit, "RawKernel": _raw, "RawModule": _raw_module,
         "ElementwiseKernel": _elementwise, "ReductionKernel": _reduction, "fuse": _fused}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_each_device_loads_its_own_arch(kind):
    fake = FakeDriver(devices=2, cc=CCS)
    with driver.use(fake):
        launch, symbol = KINDS[kind]()
        _on_each_device(lambda: launch(jitkern.empty(64, np.float32)))
    assert _loads_by_device(fake, symbol) == WANTED


def test_exported_kernel_loads_each_devices_binary(tmp_path):
    fake = FakeDriver(devices=2, cc=CCS)
    with driver.use(fake):
        launch, symbol = _exported(tmp_path)
        _on_each_device(lambda: launch(jitkern.empty(64, np.float32)))
    assert _loads_by_device(fake, symbol) == WANTED


def test_autotuned_kernel_loads_each_devices_binary(tmp_path, monkeypatch):
    monkeypatch.setattr(jitkern.config.settings, "cache_dir", str(tmp_path / "cache"))
    fake = NamedDevices(devices=2, cc=CCS)
    with driver.use(fake):
        launch, symbol = _autotuned(tmp_path)
        _on_each_device(lambda: launch(jitkern.empty(64, np.float32)))
    assert _loads_by_device(fake, symbol) == WANTED


def test_a_jit_kernel_launches_each_devices_own_function():
    # the bug the base fixed: the same argument key on two archs is two binaries, two
    # Functions, and each device's launches use its own module's function handle
    fake = FakeDriver(devices=2, cc=CCS)
    with driver.use(fake):
        launch, symbol = _jit()
        _on_each_device(lambda: launch(jitkern.empty(64, np.float32)))
    handles = [launch.handle for launch in fake.launches if fake.functions[launch.handle] == symbol]
    assert len(handles) == 4 and handles[0] == handles[2] and handles[1] == handles[3]
    assert handles[0] != handles[1]


# ---------------------------------------------------------------------------
# The driver in use: a kernel object made under one driver (driver.use, the test seam)
# launches through the next one swapped in, its generated launcher and Functions dropped
# with the old driver (kernels/base.py: Kernel._drop_loaded). Before, a RawKernel kept
# launching through the first driver it saw.


def _launches_of(fake, symbol) -> int:
    return sum(1 for launch in fake.launches
               if fake.functions[launch.handle].startswith(symbol))


def _swap_kinds(tmp_path):
    return {**{kind: make for kind, make in KINDS.items()},
            "exported": lambda: _exported(tmp_path), "autotune": lambda: _autotuned(tmp_path)}


@pytest.mark.parametrize("kind", sorted(KINDS) + ["autotune", "exported"])
def test_a_kernel_launches_through_the_driver_swapped_in(kind, tmp_path, monkeypatch):
    monkeypatch.setattr(jitkern.config.settings, "cache_dir", str(tmp_path / "cache"))
    first, second = NamedDevices(), NamedDevices()
    with driver.use(first):
        launch, symbol = _swap_kinds(tmp_path)[kind]()
        for _ in range(2):  # the general path, then the generated launcher it installed
            launch(jitkern.empty(64, np.float32))
    before = _launches_of(first, symbol)  # autotune's trials are launches too
    assert before >= 2
    with driver.use(second):
        for _ in range(2):
            launch(jitkern.empty(64, np.float32))
    assert _launches_of(first, symbol) == before, "a launch went to the driver swapped out"
    assert _launches_of(second, symbol) == 2
    assert any(symbol in (cubin.kernel_names(image) or [""])[0] for _, image in second.loads)
