"""Every launch limit CUDA documents is checked before any work, by the simulator and by the
GPU launch path, with the same error (runtime/limits.py)."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from jitkern import jit
from jitkern.errors import KernelArgumentError, LaunchError


@jit.rawkernel()
def _bump(x):
    i = jit.grid(1)
    if i < x.size:
        x[i] = x[i] + 1


def _poisoned(rng):
    return rng.standard_normal(8)


@pytest.mark.parametrize("grid, block, words", [
    ((1, 65536), 1, "grid y=65,536 is over CUDA's limit of 65,535"),
    ((1, 1, 70000), 1, "grid z=70,000 is over CUDA's limit of 65,535"),
    (1, (1025,), "block x=1,025 is over CUDA's limit of 1,024"),
    (1, (1, 1025), "block y=1,025 is over CUDA's limit of 1,024"),
    (1, (1, 1, 65), "block z=65 is over CUDA's limit of 64"),
    (1, (64, 32), "has 2,048 threads, more than CUDA's 1024 per block"),
])
def test_dims_over_cudas_limits_are_refused_before_any_work(launch, rng, grid, block, words):
    x = launch.to_device(_poisoned(rng))
    before = np.array(x.get() if hasattr(x, "get") else x, copy=True)
    with pytest.raises(LaunchError) as info:
        launch(_bump)[grid, block](x)
    assert words in str(info.value) and "_bump" in str(info.value)
    after = x.get() if hasattr(x, "get") else x
    np.testing.assert_array_equal(after, before)  # nothing ran


@pytest.mark.parametrize("shared, error, words", [
    (10**9, LaunchError, "shared_mem=1,000,000,000 bytes is over the limit"),
    (48 * 1024 + 1, LaunchError, "max_dynamic_shared_size_bytes"),
    (1.5, KernelArgumentError, "expected a non-negative int"),
    ("64", KernelArgumentError, "expected a non-negative int"),
])
def test_simulated_shared_memory_over_the_limit_or_not_an_int_is_refused(rng, shared, error,
                                                                         words):
    x = _poisoned(rng)
    before = x.copy()
    with pytest.raises(error, match=words):
        _bump.simulate((1,), (8,), (x,), shared_mem=shared)
    np.testing.assert_array_equal(x, before)


def test_simulated_launch_within_the_limits_runs(rng):
    x = _poisoned(rng)
    want = x + 1
    _bump.simulate[(1, 65535), 8](x[:0])  # the largest grid y, on an empty array
    _bump.simulate((1,), (8,), (x,), shared_mem=48 * 1024)
    np.testing.assert_allclose(x, want, rtol=0, atol=0)


def test_a_grid_of_2_to_the_31_is_refused_before_allocating(tmp_path):
    # A child with little address space: building 2**31 blocks first dies of MemoryError.
    code = textwrap.dedent("""
        import resource, numpy as np
        from jitkern import jit
        from jitkern.errors import LaunchError

        @jit.rawkernel()
        def k(x):
            x[0] = 1

        x = np.zeros(1)
        k.simulate.source(x)  # generate the code before the address space shrinks
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
        try:
            k.simulate[2**31, 1](x)
        except LaunchError as exc:
            print("LaunchError:", exc)
    """)
    env = dict(os.environ, JITKERN_CACHE_DIR=str(tmp_path))
    env["PYTHONPATH"] = os.pathsep.join([os.getcwd(), env.get("PYTHONPATH", "")])
    script = tmp_path / "huge_grid.py"  # the JIT reads kernels from their source file
    script.write_text(code)
    proc = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "grid x=2,147,483,648 is over CUDA's limit of 2,147,483,647" in proc.stdout


@pytest.mark.gpu
def test_gpu_and_simulator_refuse_a_grid_with_the_same_error(rng):
    import jitkern

    x = jitkern.asarray(_poisoned(rng))
    with pytest.raises(LaunchError) as gpu:
        _bump[(1, 65536), 1](x)
    with pytest.raises(LaunchError) as sim:
        _bump.simulate[(1, 65536), 1](x)
    assert str(gpu.value) == str(sim.value)
    with pytest.raises(LaunchError, match="over CUDA's limit of 2,147,483,647"):
        _bump[2**31, 1](x)
