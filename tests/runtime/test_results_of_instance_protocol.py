"""An object that carries ``__cuda_array_interface__`` on the instance (its class says nothing)
is an array argument: a kernel given only such arrays returns jitkern arrays, as it does for
any protocol object (docs/arrays.md, "Results follow the inputs").

Before, such an argument counted as "no array at all", so the kernel returned the program's
library's arrays: CuPy's wherever the program had imported CuPy (the allocating launch rows of
benchmarks/bench_launch.py then timed CuPy's allocator). CPU only: the fake driver stands
for the GPU (no array is read)."""

import jitkern
from jitkern.config import settings
from jitkern.runtime import driver
from jitkern.runtime.fakedriver import FakeDriver


class Carrier:
    """The protocol set on the instance, over a jitkern array's memory."""

    def __init__(self, base):
        self.base = base
        self.__cuda_array_interface__ = base.__cuda_array_interface__


def test_instance_protocol_arguments_give_jitkern_results(monkeypatch):
    monkeypatch.setattr(settings, "results", "cupy")  # the program's library: not followed
    k = jitkern.ElementwiseKernel("float64 x, float64 y", "float64 z", "z = x * y + 1.0",
                                  "carried_fma")
    with driver.use(FakeDriver(cc=(9, 0))):  # the GPU's launch path; nothing runs
        x, y = Carrier(jitkern.empty(300)), Carrier(jitkern.empty(300))
        for _ in range(3):  # the general path, then the generated launcher's
            z = k(x, y)
            assert type(z) is jitkern.ndarray and z.shape == (300,)
