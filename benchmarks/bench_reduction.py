"""ReductionKernel figures, side by side with a device-to-device copy in the same run.

    python benchmarks/bench_reduction.py [--quick]

Effective bandwidth = bytes read / median time (CUDA events); the copy's figure
counts bytes read and written. CuPy's ReductionKernel and ``cupy.sum`` (CUB) where
CuPy imports.
"""

from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_elementwise import copy_seconds, cupy_or_none, row, time_gpu

import jitkern

L2 = ("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")


def main(argv) -> None:
    quick = "--quick" in argv
    n = 1 << (24 if quick else 28)
    side = 1 << (12 if quick else 14)
    cp = cupy_or_none()
    copy_bw = 2 * 4 * n / copy_seconds(4 * n) / 1e9
    print(f"device: {jitkern.Device().name}; copy of {4 * n >> 20} MiB: {copy_bw:.1f} GB/s\n")
    print("| case | time (us) | GB/s | of copy | |")
    print("|---|---:|---:|---:|---|")
    print(f"| device-to-device copy | | {copy_bw:8.1f} | 100.0% | |")
    k = jitkern.ReductionKernel(*L2)
    x = jitkern.asarray(np.random.default_rng(0).random(n, dtype=np.float32))
    m = x[: side * side].reshape(side, side)
    cases = [
        ("l2norm, 2^%d float32, full" % int(np.log2(n)), x, None, 4 * n),
        (f"l2norm, ({side},{side}), axis=1", m, 1, 4 * side * side),
        (f"l2norm, ({side},{side}), axis=0", m, 0, 4 * side * side),
    ]
    for name, arr, axis, nbytes in cases:
        print(row(name, nbytes, time_gpu(lambda a=arr, ax=axis: k(a, axis=ax)), copy_bw))
    if cp is not None:
        ck = cp.ReductionKernel(*L2)
        cx = cp.asarray(x)
        cm = cx[: side * side].reshape(side, side)
        for name, arr, axis, nbytes in [
            ("CuPy l2norm, full", cx, None, 4 * n),
            ("CuPy l2norm, axis=1", cm, 1, 4 * side * side),
            ("CuPy l2norm, axis=0", cm, 0, 4 * side * side),
            ("cupy.sum (CUB), full", cx, None, 4 * n),
        ]:
            fn = (
                (lambda a=arr: cp.sum(a))
                if name.startswith("cupy.sum")
                else (lambda a=arr, ax=axis: ck(a, axis=ax))
            )
            print(row(name, nbytes, time_gpu(fn), copy_bw, "CuPy"))


if __name__ == "__main__":
    from needs import require_gpu  # (benchmarks/ is on sys.path: the script's folder)

    require_gpu(__file__)
    main(sys.argv[1:])
