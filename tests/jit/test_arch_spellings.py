"""arch= of a JIT kernel's inspect(): every spelling of one GPU is one target, so one build
(issue 16: the arch is parsed once, into one Arch, which is the cache key)."""

import numpy as np
import pytest

import jitkern
from jitkern import jit
from jitkern.toolchain import cache


@jitkern.rawkernel()
def axpy(a, x, y, n):
    i = jit.grid(1)
    if i < n:
        y[i] = a * x[i] + y[i]


def _args(rng):
    n = int(rng.integers(8, 64))
    x = rng.standard_normal(n).astype(np.float32)
    return np.float32(rng.standard_normal()), x, x.copy(), np.int32(n)


def test_sm_90_spellings_share_one_build(rng):
    args = _args(rng)
    first = axpy.inspect(*args, arch="sm_90")
    lookups = dict(cache.stats)
    for spelling in (90, (9, 0), "90", "SM_90"):
        again = axpy.inspect(*args, arch=spelling)
        assert again.arch == first.arch == "sm_90"
        assert again.cubin == first.cubin
    # served from the kernel's own build: not even a compile-cache lookup
    assert cache.stats == lookups


def test_ptx_and_arch_specific_targets_are_other_builds(rng):
    args = _args(rng)
    assert axpy.inspect(*args, arch="compute_90").arch == "compute_90"
    assert axpy.inspect(*args, arch="sm_90a").arch == "sm_90a"
    with pytest.raises(jitkern.JitkernValueError, match=r"arch: 'sm_9' is not a target"):
        axpy.inspect(*args, arch="sm_9")
