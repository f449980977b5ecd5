"""What a compiled kernel looks like, without a GPU: source, CUBIN, log, resources."""

from __future__ import annotations

import dataclasses
import re

from . import cubin

_PTX_ENTRY = re.compile(rb"\.entry\s+([A-Za-z_$][\w$]*)")


@dataclasses.dataclass(frozen=True)
class Inspection:
    """The result of ``kernel.inspect(...)``.

    ``registers``/``shared_bytes``/``local_bytes`` come from ptxas's report
    (None for PTX output, which ptxas has not seen).
    """

    name: str
    source: str
    cubin: bytes | None
    ptx: bytes | None
    log: str
    arch: str
    registers: int | None
    shared_bytes: int | None
    local_bytes: int | None
    spill_stores: int | None
    spill_loads: int | None
    options: tuple

    def __str__(self) -> str:
        return (f"{self.name} for {self.arch}: {self.registers} registers, "
                f"{self.shared_bytes} B static shared, {self.local_bytes} B local (stack), "
                f"{self.spill_stores} B spill stores")


def inspect_binary(binary, symbol: str, name: str | None = None) -> Inspection:
    """An :class:`Inspection` of kernel ``symbol`` (a name expression or mangled name)."""
    lowered = binary.lowered(symbol)
    res = binary.resources.get(lowered)
    return Inspection(
        name=name or symbol,
        source=binary.source,
        cubin=binary.data if binary.fmt == "cubin" else None,
        ptx=binary.data if binary.fmt == "ptx" else None,
        log=binary.log,
        arch=binary.arch_name,
        registers=res.registers if res else None,
        shared_bytes=res.shared_bytes if res else None,
        local_bytes=res.local_bytes if res else None,
        spill_stores=res.spill_stores if res else None,
        spill_loads=res.spill_loads if res else None,
        options=binary.options,
    )


def kernel_names(binary) -> list[str] | None:
    """The (mangled) kernel names a compiled binary holds; None when it cannot tell
    (a fatbin, or a binary it cannot read)."""
    if binary.fmt == "cubin":
        return cubin.kernel_names(binary.data)
    if binary.fmt == "ptx":
        return [m.decode() for m in _PTX_ENTRY.findall(binary.data)]
    return None
