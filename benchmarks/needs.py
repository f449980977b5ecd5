"""What a benchmark needs, said up front: without it, one line on stderr and exit status 1
(never a traceback from deep inside the first measurement)."""

from __future__ import annotations

import os
import sys


def require_gpu(script: str) -> None:
    """Exit with a message where no CUDA GPU and driver are usable."""
    import jitkern  # public API only: the launch benchmark also times older checkouts

    if jitkern.is_available():
        return
    try:
        jitkern.Device(0).compute_capability
        why = "the CUDA driver found no GPU"
    except Exception as exc:  # noqa: BLE001 - the reason is the message
        why = str(exc).split(":", 1)[0]
    name = os.path.basename(script)
    sys.stderr.write(
        f"{name}: needs a CUDA GPU and the NVIDIA driver ({why}); run it on a machine with "
        "one (benchmarks/bench_simulate.py measures the CPU simulator without a GPU)\n"
    )
    sys.exit(1)
