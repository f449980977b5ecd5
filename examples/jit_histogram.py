"""A 256-bin histogram of bytes: per-block histograms in shared memory, merged with atomics.

Run: python examples/jit_histogram.py [--simulate]
Needs a CUDA GPU; --simulate (or JITKERN_SIMULATE=1) runs the same program on jitkern's
simulated device instead (examples/README.md).
"""

import sys

import numpy as np

import jitkern
from gpu_or_simulated import main as example_main, simulated
from jitkern import jit

BINS = 256


@jitkern.rawkernel()
def histogram(data, bins, n):
    local = jit.shared_memory(np.uint32, BINS)
    for b in range(jit.threadIdx.x, BINS, jit.blockDim.x):
        local[b] = 0
    jit.syncthreads()
    for i in range(jit.grid(1), n, jit.gridsize(1)):
        jit.atomic_add(local, data[i], 1)  # shared-memory atomics: cheap
    jit.syncthreads()
    for b in range(jit.threadIdx.x, BINS, jit.blockDim.x):
        if local[b] > 0:
            jit.atomic_add(bins, b, local[b])  # one global atomic per bin and block


def main(argv=None) -> int:
    return example_main(run, sys.argv[1:] if argv is None else argv, "jit_histogram.py")


def run():
    n = 100_000 if simulated() else 50_000_000
    h = np.random.default_rng().integers(0, 256, n, dtype=np.uint8)
    bins = jitkern.zeros(BINS, np.uint32)
    if simulated():
        histogram[8, 256](jitkern.asarray(h), bins, n)
    else:
        histogram[132 * 4, 512](jitkern.asarray(h), bins, n)
    assert (bins.get() == np.bincount(h, minlength=BINS)).all()
    print("histogram of", n, "bytes matches numpy.bincount")


if __name__ == "__main__":
    sys.exit(main())
