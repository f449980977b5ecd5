"""A launch that fails because an earlier kernel faulted (CUDA_ERROR_ILLEGAL_ADDRESS is
sticky: every later call of the context fails) says so, and does not blame the launch's
own configuration. Before, the launch path asked the lost context for the kernel's limits,
got nonsense back, and raised "block=(256, 1, 1) has 256 threads, more than the -1 this
kernel allows per block" -- sending the user after a block size that was fine.

CPU only: the fake driver (runtime/fakedriver.py) answers every launch after the first
with the fault, and every attribute query with an error, as a lost context does."""

import numpy as np
import pytest

import jitkern
from jitkern import jit
from jitkern.runtime import driver
from jitkern.runtime.fakedriver import FakeDriver

ILLEGAL_ADDRESS = 700


class FaultedAfterFirst(FakeDriver):
    """Launches succeed until ``fault()``; then launches and attribute queries fail."""

    faulted = False

    def fault(self):
        self.faulted = True

    def cuLaunchKernel(self, *args):
        return (ILLEGAL_ADDRESS,) if self.faulted else super().cuLaunchKernel(*args)

    def cuLaunchCooperativeKernel(self, *args):
        return ((ILLEGAL_ADDRESS,) if self.faulted
                else super().cuLaunchCooperativeKernel(*args))

    def cuFuncGetAttribute(self, attr, handle):
        return (ILLEGAL_ADDRESS, -1) if self.faulted else (0, 1024)


def _raw(scale):
    k = jitkern.RawKernel(
        'extern "C" __global__ void scaled(float* x, int n) {'
        " int i = blockIdx.x * blockDim.x + threadIdx.x;"
        f" if (i < n) x[i] *= {scale}.0f; }}", "scaled")
    return lambda x: k((1,), (256,), (x, np.int32(x.size)))


def _jit(scale):
    @jit.rawkernel()
    def scaled(x, n):
        i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
        if i < n:
            x[i] *= scale
    return lambda x: scaled[1, 256](x, np.int32(x.size))


@pytest.mark.parametrize("make", [_raw, _jit], ids=["RawKernel", "rawkernel"])
@pytest.mark.parametrize("launches_before", [1, 3], ids=["general-path", "fast-path"])
def test_a_launch_after_a_fault_names_the_fault_not_the_block(make, launches_before, rng):
    fake = FaultedAfterFirst(cc=(9, 0))
    with driver.use(fake):
        run = make(int(rng.integers(2, 1 << 20)))  # a fresh source: nothing memoised
        x = jitkern.empty(256, np.float32)
        for _ in range(launches_before):  # the first launch, then the generated launcher's
            run(x)
        fake.fault()
        with pytest.raises(jitkern.CUDAError) as info:
            run(x)
    message = str(info.value)
    assert info.value.code == ILLEGAL_ADDRESS
    assert "a kernel launched before this call faulted" in message
    assert "more than the" not in message and "threads" not in message.split("(")[0]
    assert not isinstance(info.value, jitkern.LaunchError)
