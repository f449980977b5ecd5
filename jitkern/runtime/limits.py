"""CUDA's launch limits: one check, used by the GPU launch path and by the simulator.

Every launch's grid, block and dynamic shared memory are checked against the limits CUDA
documents for every GPU jitkern supports (compute capability 7.5 and newer: the CUDA C++
Programming Guide's table of technical specifications), before anything is packed,
allocated or simulated, with the same error on both back ends:

* grid: x up to 2**31 - 1, y and z up to 65,535;
* block: x and y up to 1024, z up to 64, and at most 1024 threads in all;
* dynamic shared memory: a non-negative int, up to the device's limit (48 KiB unless the
  kernel's ``max_dynamic_shared_size_bytes`` was raised, up to the device's opt-in
  maximum: 227 KiB on sm_90 and sm_100, less on older GPUs). Where no device is present
  (the simulator) the same documented default and opt-in maximum apply.

The keywords of ``kernel[grid, block](*args, shared_mem=..., stream=...)`` and an
ElementwiseKernel's ``block_size=`` are read here too, for both back ends.

The GPU path checks a grid or block once per new value (its dims are memoised), so a
repeated launch pays nothing; the device's own limits are looked at only when the driver
refuses a launch (``module.diagnose_launch``).
"""

from __future__ import annotations

from ..errors import JitkernValueError, KernelArgumentError, LaunchError

GRID_MAX = (2**31 - 1, 65535, 65535)
BLOCK_MAX = (1024, 1024, 64)
MAX_THREADS_PER_BLOCK = 1024
SHARED_DEFAULT = 48 * 1024  # dynamic shared memory a kernel may use without opting in
SHARED_OPTIN_MAX = 227 * 1024  # the largest opt-in of any GPU (sm_90, sm_100)


def _where(name: str | None) -> str:
    return f"cannot launch {name}: " if name else ""


def check_dims(dims: tuple, what: str, name: str | None = None, value=None) -> None:
    """Refuse a grid (``what='grid'``) or block over CUDA's limits; ``dims`` is (x, y, z)."""
    limits = GRID_MAX if what == "grid" else BLOCK_MAX
    shown = dims if value is None else value
    for axis, n, limit in zip("xyz", dims, limits):
        if n > limit:
            raise LaunchError(
                f"{_where(name)}{what} {axis}={n:,} is over CUDA's limit of {limit:,} "
                f"({what}={shown!r})"
            )
    if what == "block":
        threads = dims[0] * dims[1] * dims[2]
        if threads > MAX_THREADS_PER_BLOCK:
            raise LaunchError(
                f"{_where(name)}block={shown!r} has {threads:,} threads, more than CUDA's "
                f"{MAX_THREADS_PER_BLOCK} per block"
            )


def check_shared_mem(shared_mem, name: str | None = None,
                     limit: int = SHARED_DEFAULT) -> int:
    """``shared_mem`` as an int, refused if it is not a non-negative int or is over ``limit``
    (CUDA's 48 KiB default unless the kernel opted in to more)."""
    if type(shared_mem) is not int:
        if isinstance(shared_mem, bool) or not hasattr(shared_mem, "__index__"):
            raise KernelArgumentError(
                f"{_where(name)}shared_mem: expected a non-negative int (bytes), got "
                f"{shared_mem!r} ({type(shared_mem).__name__})"
            )
        shared_mem = int(shared_mem.__index__())
    if shared_mem < 0:
        raise LaunchError(f"{_where(name)}shared_mem={shared_mem} bytes is negative")
    if shared_mem > limit:
        hint = (f"; raise kernel.max_dynamic_shared_size_bytes (up to {SHARED_OPTIN_MAX:,}) first"
                if shared_mem <= SHARED_OPTIN_MAX
                else f"; no GPU allows more than {SHARED_OPTIN_MAX:,}")
        raise LaunchError(
            f"{_where(name)}shared_mem={shared_mem:,} bytes is over the limit of {limit:,}{hint}"
        )
    return shared_mem


def check_launch(name: str | None, grid3: tuple, block3: tuple, shared_mem,
                 shared_limit: int = SHARED_DEFAULT, grid=None, block=None) -> int:
    """Every static limit of one launch; returns ``shared_mem`` as an int. ``grid`` and
    ``block``: the values as the caller gave them, for the message (as the GPU path says)."""
    check_dims(grid3, "grid", name, grid)
    check_dims(block3, "block", name, block)
    return check_shared_mem(shared_mem, name, shared_limit)


def launch_keywords(name: str, kwargs: dict, shared_mem, stream):
    """(shared_mem, stream) of ``kernel[grid, block, ...](*args, **kwargs)``: only
    ``shared_mem=`` and ``stream=`` are keywords, each given once."""
    unknown = [k for k in kwargs if k not in ("shared_mem", "stream")]
    if unknown:
        raise KernelArgumentError(
            f"{name}[grid, block](...) takes the kernel's arguments by position and "
            f"only shared_mem= and stream= as keywords, got the keyword "
            f"argument{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}"
        )
    given = {"shared_mem": shared_mem != 0, "stream": stream is not None}
    for key in kwargs:
        if given[key]:
            raise KernelArgumentError(
                f"{name}[...](...): {key} is given both in the brackets and as a "
                "keyword; give it once"
            )
    return kwargs.get("shared_mem", shared_mem), kwargs.get("stream", stream)


def block_size_of(block_size, default: int) -> tuple:
    """The block of an ElementwiseKernel call's ``block_size=`` (``default`` for None), on
    the GPU and in the simulator alike."""
    if block_size is None:
        return (default, 1, 1)
    if not isinstance(block_size, int) or not 1 <= block_size <= 1024:
        raise JitkernValueError(f"block_size: expected an int from 1 to 1024, got {block_size!r}")
    return (block_size, 1, 1)
