"""A binary file a user gives (``RawModule(path=...)``): which GPUs can load it, and what to
say when the driver cannot.

jitkern never builds such a file again: a CUBIN is loaded as it is, a fatbin lets the driver
pick its image, and a PTX file is the user's to load as it is (the driver compiles it for
the GPU: jitkern's own rule of never loading PTX newer than the driver is for PTX jitkern
writes). A CUBIN or PTX built for a GPU the device is not is refused before loading, naming
both; a PTX the driver cannot read (an ISA newer than it knows) is explained after it says so.
"""

from __future__ import annotations

import os
import re

from .target import Arch

_PTX_VERSION = re.compile(rb"^[ \t]*\.version[ \t]+(\d+)\.(\d+)", re.M)
_PTX_TARGET = re.compile(rb"^[ \t]*\.target[ \t]+(?:sm|compute)_(\d+)([af]?)", re.M)
_HEADER_BYTES = 16384  # .version and .target come before any code

#: The first CUDA release of each PTX ISA version, for the hint when a driver refuses PTX (the
#: driver decides; a version missing here is only not named).
_PTX_ISA_CUDA = {
    (7, 0): "11.0", (7, 1): "11.1", (7, 2): "11.2", (7, 3): "11.3", (7, 4): "11.4",
    (7, 5): "11.5", (7, 6): "11.6", (7, 7): "11.7", (7, 8): "11.8", (8, 0): "12.0",
    (8, 1): "12.1", (8, 2): "12.2", (8, 3): "12.3", (8, 4): "12.4", (8, 5): "12.5",
    (8, 6): "12.7", (8, 7): "12.8", (8, 8): "12.9", (9, 0): "13.0",
}
CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222
CUDA_ERROR_NO_BINARY_FOR_GPU = 209


def ptx_version(data: bytes) -> tuple[int, int] | None:
    """The PTX ISA version of a PTX text (``.version 8.7``), or None."""
    found = _PTX_VERSION.search(data[:_HEADER_BYTES])
    return (int(found.group(1)), int(found.group(2))) if found else None


def ptx_target(data: bytes) -> Arch | None:
    """The GPU a PTX text is written for (``.target sm_90a``), as a PTX Arch, or None."""
    found = _PTX_TARGET.search(data[:_HEADER_BYTES])
    return Arch("ptx", int(found.group(1)), found.group(2).decode()) if found else None


def built_for(binary) -> Arch | None:
    """What a loaded file is built for: the CUBIN's arch, the PTX's target; None for a
    fatbin (the driver picks one of its images) or a header that does not say."""
    if binary.fmt == "cubin":
        return Arch("cubin", binary.arch, binary.variant) if binary.arch else None
    if binary.fmt == "ptx":
        return ptx_target(binary.data)
    return None


def refusal(binary, path, capability: tuple[int, int], device_id: int) -> str | None:
    """Why device ``device_id`` (compute capability ``capability``) cannot run the file at
    ``path``, or None when it may (the driver has the last word)."""
    arch = built_for(binary)
    cc = capability[0] * 10 + capability[1]
    if arch is None or arch.runs_on(cc):
        return None
    rule = ("a CUBIN runs only on GPUs of its major version with the same or a newer minor"
            if arch.fmt == "cubin" and not arch.variant else
            f"code for {arch.sm} runs only on that GPU" if arch.variant == "a" else
            f"code for {arch.sm} runs only on its family, from that GPU on"
            if arch.variant == "f" else "PTX runs on its target GPU and newer ones")
    what = "a CUBIN" if arch.fmt == "cubin" else "PTX"
    return (f"path={os.fspath(path)!r} holds {what} for {arch.sm}, which device {device_id} "
            f"(compute capability {capability[0]}.{capability[1]}) cannot run: {rule}; build "
            f"the file for this GPU, or give the source (RawModule(code=...))")


def load_failure(binary, path, error_code: int, driver_version: int, message: str) -> str:
    """The message for a file the driver refused to load (``message``: the driver's words)."""
    text = f"path={os.fspath(path)!r}: the driver could not load this {binary.fmt} file: {message}"
    if binary.fmt != "ptx" or error_code != CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
        return text
    driver = f"{driver_version // 1000}.{driver_version % 1000 // 10}"
    version = ptx_version(binary.data)
    if version is None:
        return text + f". The driver (CUDA {driver}) compiles PTX itself"
    since = _PTX_ISA_CUDA.get(version)
    newer = f", which needs a CUDA {since} driver or newer" if since else ""
    return (f"{text}. The file is PTX ISA {version[0]}.{version[1]}{newer}; the driver is CUDA "
            f"{driver}, and a driver compiles only the PTX versions it knows. Update the "
            f"driver, write the PTX with a CUDA toolkit no newer than the driver, or give a "
            f"CUBIN for this GPU")
