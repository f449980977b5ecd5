"""Debug mode for the string kernels (``ElementwiseKernel``/``ReductionKernel(..., debug=True)``).

Their ``raw`` arguments are indexed by hand, so a debug build checks each of those
accesses (``_cuda.DEBUG_PRELUDE``); the check's site is the parameter's position. The
launch stays on the general path and notes each launch with runtime/debugcheck.py, which
raises :class:`jitkern.KernelAssertionError` at the next synchronisation.
"""

from __future__ import annotations

from ..runtime import debugcheck, driver
from ..runtime.device import stream_handle
from ..runtime.module import load
from ..errors import JitkernTypeError, LaunchError


def debug_flag(debug, kind: str) -> bool:
    if not isinstance(debug, bool):
        raise JitkernTypeError(f"{kind}(debug=...): expected True or False, got {debug!r}")
    return debug


def options_for(debug: bool, options: tuple) -> tuple:
    """Debug builds add ``-lineinfo`` (profilers and compute-sanitizer see the source)."""
    return options + ("-lineinfo",) if debug and "-lineinfo" not in options else options


def watch(kernel, fn) -> debugcheck.Watch:
    """The debug record of ``fn``'s binary; site k is parameter k, a raw argument."""
    sites = [debugcheck.Site(None, None, p.name, "raw") for p in kernel.params]
    binary = fn.binary

    def address_of(device_id: int):
        try:
            return load(binary, device_id).get_global(debugcheck.RECORD_NAME)
        except LaunchError:  # no raw access in the kernel: nothing recorded
            return None

    label = f"{type(kernel).__name__} {kernel.name!r}"
    return debugcheck.Watch(label, sites, address_of)


def launched(w: debugcheck.Watch, stream) -> None:
    debugcheck.launched(w, driver.current_device_id(), stream_handle(stream))
