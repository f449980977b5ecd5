"""The spec's ReductionKernel example (l2norm) over several axes, and two outputs at once.

    python examples/reduction_l2norm.py

Needs a CUDA GPU (the simulator, --simulate, runs @rawkernel JIT kernels only; without a
GPU this example says so and stops).
"""

import sys

import numpy as np

import jitkern


def main():
    l2norm = jitkern.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")
    x = jitkern.arange(10, dtype=np.float32).reshape(2, 5)
    print(l2norm(x, axis=1))                    # [ 5.477226 15.9687195]
    print(l2norm(x))                            # full reduction
    print(l2norm(x, axis=0, keepdims=True))

    stats = jitkern.ReductionKernel("T x", "T total, T mean", "x", "a + b",
                                    "total = a; mean = a / N_RED", "0", "sum_and_mean",
                                    preamble="#define N_RED 5")
    total, mean = stats(x, axis=1)              # every output is returned
    print(total, mean)

    # Same bits on every run: no atomics, a fixed order.
    big = jitkern.asarray(np.random.default_rng(0).random(1 << 22, dtype=np.float32))
    assert jitkern.asnumpy(l2norm(big)).tobytes() == jitkern.asnumpy(l2norm(big)).tobytes()


if __name__ == "__main__":
    if "--simulate" in sys.argv[1:]:
        print("the simulator runs @rawkernel JIT kernels, not ReductionKernel: "
              "this example needs a CUDA GPU")
    elif not jitkern.is_available():
        print("this example needs a CUDA GPU and none was found")
    else:
        main()
