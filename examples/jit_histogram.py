"""A 256-bin histogram of bytes: per-block histograms in shared memory, merged with atomics.

Run: python examples/jit_histogram.py [--simulate]
Needs a CUDA GPU; --simulate runs the same kernel on the CPU (jitkern's simulator) instead.
"""

import sys

import numpy as np

import jitkern
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


def main(argv=None):
    simulate = "--simulate" in (sys.argv[1:] if argv is None else argv)
    if not simulate and not jitkern.is_available():
        print("This example needs a CUDA GPU and none was found; "
              "run it with --simulate to run its kernel on the CPU.")
        return
    n = 100_000 if simulate else 50_000_000
    h = np.random.default_rng().integers(0, 256, n, dtype=np.uint8)
    if simulate:
        bins = np.zeros(BINS, np.uint32)
        histogram.simulate[8, 256](h, bins, n)
    else:
        bins = jitkern.zeros(BINS, np.uint32)
        histogram[132 * 4, 512](jitkern.asarray(h), bins, n)
        bins = bins.get()
    assert (bins == np.bincount(h, minlength=BINS)).all()
    print("histogram of", n, "bytes matches numpy.bincount")


if __name__ == "__main__":
    main()
