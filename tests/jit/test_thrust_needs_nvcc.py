"""A jit.thrust kernel where no nvcc exists: the error says that Thrust needs a CUDA toolkit's
nvcc and how to get one, not "use backend='nvrtc'" nor "a bug in jitkern"."""

import numpy as np
import pytest

import jitkern
from jitkern import jit
from jitkern.config import settings


@jit.rawkernel()
def _sorted_copy(x, out):
    if jit.grid(1) == 0:
        jit.thrust.sort(jit.thrust.seq, x.begin(), x.end())
        out[0] = x[0]


def test_thrust_without_nvcc_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no nvcc anywhere
    monkeypatch.setattr(settings, "cuda_home", str(tmp_path))
    x = np.random.default_rng().standard_normal(16)
    with pytest.raises(jitkern.CompileError) as info:
        _sorted_copy.inspect(x, np.zeros(1), arch="sm_90")
    message = str(info.value)
    assert "Thrust compiles only with a CUDA toolkit's nvcc" in message
    assert "cuda-downloads" in message and "CUDA_HOME" in message
    assert "backend='nvrtc'" not in message and "bug in jitkern" not in message
