"""A GPU test of tests/jit/test_trust.py, run by the simulator.

It launches the kernel its GPU twin builds, with NumPy arrays, and checks the same result
against NumPy (on every machine: no GPU needed). test_compat.py's twins run there, through
its ``launch`` fixture.
"""

import importlib.util
import pathlib

import numpy as np

_PATH = pathlib.Path(__file__).resolve().parents[1] / "jit" / "test_trust.py"
_SPEC = importlib.util.spec_from_file_location("test_trust_for_sim", _PATH)
trust = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(trust)


def test_sum_of_600_terms_adds_left_to_right_in_float32(tmp_path, rng):
    k = trust._long_sum_kernel(tmp_path, 600)
    x = rng.standard_normal(600).astype(np.float32)
    y = np.full(1, np.nan, np.float32)
    k.simulate[1, 1](x, y)
    assert y[0] == np.add.accumulate(x, dtype=np.float32)[-1]


# test_trust's other GPU tests have simulated twins in test_sim_semantics.py (a rebound
# global, colliding names) and test_sim_checks.py (an unassigned local is reported).
