"""cluster= launches without a GPU: a fake driver records what reaches cuLaunchKernelEx, and
every check of the cluster (size, divisibility, the device's compute capability) is made
before anything is packed or launched."""

import ctypes
import struct

import numpy as np
import pytest

from jitkern import ElementwiseKernel, KernelArgumentError, LaunchError, ReductionKernel, jit
from jitkern.runtime import driver, fakedriver, module
from jitkern.kernels.raw import RawKernel

real = pytest.importorskip("cuda.bindings.driver")

RAW_SOURCE = r"""
extern "C" __global__ void scale(float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}"""
CLUSTER_DIM = real.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
COOPERATIVE = real.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_COOPERATIVE
NONPORTABLE = real.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED


class DeviceArray:
    """Stands for a 1-D float32 device array (the pointer is never dereferenced)."""

    def __init__(self, ptr, n):
        self.ptr, self.n = ptr, n

    @property
    def __cuda_array_interface__(self):
        return {"shape": (self.n,), "typestr": "<f4", "data": (self.ptr, False),
                "strides": None, "version": 3}


class FakeDriver(fakedriver.FakeDriver):
    """The driver calls a cluster launch makes, recorded; the types are cuda.bindings'.
    Every kernel's handle is "H"."""

    CUlaunchConfig = real.CUlaunchConfig
    CUlaunchAttribute = real.CUlaunchAttribute
    CUlaunchAttributeID = real.CUlaunchAttributeID
    CUfunction_attribute = real.CUfunction_attribute

    def __init__(self):
        super().__init__(cc=(9, 0))
        self.launches, self.attributes = [], []

    def cuModuleGetFunction(self, module, name):
        return (0, "H")

    def cuLaunchKernelEx(self, config, handle, params, extra):
        attrs = {}
        for attr in list(config.attrs)[: config.numAttrs]:
            if attr.id == CLUSTER_DIM:
                d = attr.value.clusterDim
                attrs["cluster"] = (d.x, d.y, d.z)
            elif attr.id == COOPERATIVE:
                attrs["cooperative"] = attr.value.cooperative
        self.launches.append({
            "handle": handle,
            "grid": (config.gridDimX, config.gridDimY, config.gridDimZ),
            "block": (config.blockDimX, config.blockDimY, config.blockDimZ),
            "shared_mem": config.sharedMemBytes,
            "stream": int(config.hStream),
            "attrs": attrs,
            "params": _read_params(params, self.sizes),
            "extra": extra,
        })
        return (0,)

    def cuFuncSetAttribute(self, handle, attr, value):
        self.attributes.append((handle, attr, value))
        return (0,)


def _read_params(params, sizes):
    out = []
    for i, size in enumerate(sizes):
        slot = ctypes.c_void_p.from_address(params + 8 * i).value
        out.append(ctypes.string_at(slot, size))
    return out


@pytest.fixture
def fake():
    """A fake driver (driver.use): device 0 of compute capability 9.0; Functions load on it
    and read their parameter layout from their CUBIN."""
    d = FakeDriver()
    d.sizes = (8, 4, 4)
    with driver.use(d):
        yield d


@pytest.fixture
def raw(fake):
    k = RawKernel(RAW_SOURCE, "scale")
    return k, k.kernel  # the Function the kernel launches on device 0 (loaded, nothing packed)


def _packed(ptr, a, n):
    return [ptr.to_bytes(8, "little"), struct.pack("<f", a), struct.pack("<i", n)]


def test_raw_kernel_cluster_launch_config(raw, fake, rng):
    k, _fn = raw
    a = np.float32(rng.standard_normal())
    k((8, 2), (64,), (DeviceArray(4096, 512), a, np.int32(512)), shared_mem=256, stream=7,
      cluster=(4, 2, 1))
    (call,) = fake.launches
    assert call["handle"] == "H" and call["extra"] == 0
    assert call["grid"] == (8, 2, 1) and call["block"] == (64, 1, 1)
    assert call["shared_mem"] == 256 and call["stream"] == 7
    assert call["attrs"] == {"cluster": (4, 2, 1)}  # not cooperative
    assert call["params"] == _packed(4096, a, 512)
    assert fake.attributes == []  # portable size: the kernel's attribute is left alone


def test_cooperative_raw_kernel_sets_both_attributes(fake):
    k = RawKernel(RAW_SOURCE, "scale", enable_cooperative_groups=True)
    k(4, 32, (DeviceArray(64, 4), np.float32(2), np.int32(4)), cluster=2)
    (call,) = fake.launches
    assert call["attrs"] == {"cluster": (2, 1, 1), "cooperative": 1}
    assert call["grid"] == (4, 1, 1) and call["stream"] == 0


def _assert_nothing_done(fake, fn):
    assert fake.launches == [] and fake.attributes == []
    assert all(not state.plans for state in fn._states.values())  # nothing packed


@pytest.mark.parametrize(
    ("grid", "cluster", "error", "words"),
    [
        ((6, 2), (4, 1, 1), LaunchError,
         (r"cluster=\(4, 1, 1\) must divide grid=\(6, 2\) "
          r"\(grid x=6 is not a multiple of cluster x=4\)")),
        ((8, 3), (1, 2, 1), LaunchError, r"grid y=3 is not a multiple of cluster y=2"),
        (16, (16, 1, 1), KernelArgumentError,
         (r"cluster=\(16, 1, 1\) has 16 blocks; expected at most 8 blocks per cluster; set "
          r"kernel.allow_nonportable_cluster_size = True for up to 16")),
        (16, (4, 4, 1), KernelArgumentError, r"has 16 blocks; expected at most 8"),
        (4, (0, 1, 1), KernelArgumentError, r"cluster: every dimension must be at least 1"),
        (4, (2, -1), KernelArgumentError, r"cluster: every dimension must be at least 1"),
        (4, "2", KernelArgumentError, r"cluster: expected an int or a tuple"),
    ],
)
def test_bad_clusters_are_refused_before_packing(raw, fake, grid, cluster, error, words):
    k, fn = raw
    with pytest.raises(error, match=words) as info:
        k(grid, 32, (DeviceArray(64, 4), np.float32(2), np.int32(4)), cluster=cluster)
    assert "cluster" in str(info.value)
    _assert_nothing_done(fake, fn)


def test_cluster_launch_refused_below_sm90_checked_once_per_device(raw, fake, monkeypatch):
    k, fn = raw
    asked = []

    def capability(device_id):
        asked.append(device_id)
        return (8, 6)

    monkeypatch.setattr(module.driver, "compute_capability", capability)
    for _ in range(2):
        with pytest.raises(LaunchError, match=r"scale: cluster= needs a GPU of compute "
                           r"capability 9.0 or newer .*device 0 is 8.6 \(sm_86\)"):
            k(4, 32, (DeviceArray(64, 4), np.float32(2), np.int32(4)), cluster=(2, 1, 1))
    assert asked == [0]  # read once, then cached
    _assert_nothing_done(fake, fn)
    # a plain launch is not refused: it goes on to cuLaunchKernel
    k(4, 32, (DeviceArray(64, 4), np.float32(2), np.int32(4)))
    (plain,) = fake.launches
    assert plain.grid == (4, 1, 1) and plain.raw(2, 4) == struct.pack("<i", 4)


def test_nonportable_cluster_sizes_are_opt_in(raw, fake):
    k, _fn = raw
    args = (DeviceArray(64, 4), np.float32(2), np.int32(4))
    k.allow_nonportable_cluster_size = True
    k(32, 32, args, cluster=(16, 1, 1))
    k((8, 4), 32, args, cluster=(4, 4, 1))
    assert [c["attrs"]["cluster"] for c in fake.launches] == [(16, 1, 1), (4, 4, 1)]
    assert fake.attributes == [("H", NONPORTABLE, 1)]  # set once per device
    with pytest.raises(KernelArgumentError, match=r"has 32 blocks; expected at most 16 blocks "
                       r"per cluster$"):
        k(32, 32, args, cluster=(32, 1, 1))
    assert len(fake.launches) == 2


@jit.rawkernel()
def jit_scale(x, a, n):
    i = jit.grid(1)
    if i < n:
        x[i] = x[i] * a


@pytest.fixture
def jit_kernel(fake, monkeypatch):
    """jit_scale compiled for sm_90 whatever the (absent) device."""
    from jitkern.runtime import driver as _drv_module

    monkeypatch.setattr(_drv_module, "current_device_id", lambda: 0)  # an sm_90 device
    monkeypatch.setattr(_drv_module, "compute_capability", lambda device_id: (9, 0))
    monkeypatch.setattr(_drv_module, "driver_version", lambda: 13000)
    jit_scale._entries.clear()
    yield jit_scale
    jit_scale._entries.clear()


def test_jit_kernel_cluster_launch_config(jit_kernel, fake, rng):
    a = np.float32(rng.standard_normal())
    jit_kernel((4, 4), 128, (DeviceArray(8192, 2048), a, np.int32(2048)), shared_mem=64,
               cluster=(2, 4))
    (call,) = fake.launches
    assert call["grid"] == (4, 4, 1) and call["block"] == (128, 1, 1)
    assert call["shared_mem"] == 64 and call["stream"] == 0
    assert call["attrs"] == {"cluster": (2, 4, 1)}
    assert call["params"] == _packed(8192, a, 2048)


def test_jit_kernel_bad_cluster_refused_before_compiling(jit_kernel, fake):
    with pytest.raises(LaunchError, match=r"jit_scale: cluster=\(3, 1, 1\) must divide grid=8"):
        jit_kernel(8, 128, (DeviceArray(64, 16), np.float32(1), np.int32(16)), cluster=(3, 1, 1))
    with pytest.raises(KernelArgumentError, match=r"jit_scale: cluster=9 has 9 blocks"):
        jit_kernel(9, 128, (DeviceArray(64, 16), np.float32(1), np.int32(16)), cluster=9)
    assert not jit_kernel._entries and fake.launches == []  # nothing built, nothing launched


def test_jit_kernel_nonportable_cluster(jit_kernel, fake, monkeypatch):
    monkeypatch.setattr(jit_kernel, "allow_nonportable_cluster_size", True, raising=False)
    jit_kernel(12, 32, (DeviceArray(64, 16), np.float32(1), np.int32(16)), cluster=12)
    assert fake.launches[0]["attrs"] == {"cluster": (12, 1, 1)}
    assert fake.attributes == [("H", NONPORTABLE, 1)]


def test_elementwise_and_reduction_refuse_cluster():
    copy = ElementwiseKernel("T x", "T y", "y = x", "copy_for_cluster")
    with pytest.raises(KernelArgumentError, match=r"copy_for_cluster: cluster= is not accepted "
                       r"by ElementwiseKernel: it picks its own grid"):
        copy(np.zeros(4, np.float32), cluster=(2, 1, 1))
    total = ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "sum_for_cluster")
    with pytest.raises(KernelArgumentError, match=r"sum_for_cluster: cluster= is not accepted "
                       r"by ReductionKernel"):
        total(np.zeros(4, np.float32), cluster=2)
