"""ONE compile target: :class:`Arch`, parsed once from every spelling users give.

``'sm_90'``, ``90``, ``(9, 0)`` and ``'90'`` are the same :class:`Arch` (so the same
cache key); ``'sm_90a'``/``'sm_100f'`` ask for an arch- or family-specific CUBIN,
``'compute_90'`` for PTX. A parsed Arch is checked against the NVRTC in use. Which GPU
generation brings what lives in :mod:`jitkern.capabilities` (data, not conditionals).

Device rules (:func:`for_device`), kept as data and one function:
- CUBIN for the device's exact ``sm_XY`` when NVRTC knows it;
- else CUBIN for the newest arch NVRTC knows with the same major and a lower minor
  (binary compatible within a major);
- else PTX, and only if the driver is at least as new as NVRTC, because a driver
  rejects PTX of a newer ISA than it knows.
"""

from __future__ import annotations

import dataclasses
import functools
import re

from ..capabilities import VARIANT_MIN_CC
from ..errors import CompileError, JitkernTypeError, JitkernValueError
from . import discovery

FORMATS = ("cubin", "ptx", "ltoir")
_FORMAT_OF_PREFIX = {"sm_": "cubin", "compute_": "ptx"}
_TEXT = re.compile(r"^(?P<prefix>sm_|compute_)?(?P<cc>\d{2,3})(?P<variant>[af]?)$")
_TAG = re.compile(r"^(?P<prefix>sm_|compute_)(?P<cc>\d+)(?P<variant>[af]?)$")
# at one compute capability, the most specific last ('sm_90' < 'sm_100f' < 'sm_90a')
VARIANT_ORDER = {"": 0, "f": 1, "a": 2}


@dataclasses.dataclass(frozen=True)
class Arch:
    """A compile target: output format, compute capability (90 for sm_90), variant."""

    fmt: str  # "cubin", "ptx" or "ltoir"
    cc: int
    variant: str = ""  # "", "a" (arch-specific) or "f" (family-specific)

    @property
    def name(self) -> str:
        """As NVRTC spells it: 'sm_90', 'sm_90a', 'compute_90' (LTO-IR is named as sm_)."""
        return f"{'compute' if self.fmt == 'ptx' else 'sm'}_{self.cc}{self.variant}"

    @property
    def sm(self) -> str:
        """The CUBIN target of the same GPU: 'sm_90a' for compute_90a."""
        return f"sm_{self.cc}{self.variant}"

    def as_format(self, fmt: str | None) -> "Arch":
        """This arch compiled to ``fmt`` instead (None: unchanged)."""
        return self if fmt is None or fmt == self.fmt else dataclasses.replace(self, fmt=fmt)

    def order(self) -> tuple[int, int]:
        return self.cc, VARIANT_ORDER[self.variant]

    def runs_on(self, cc: int) -> bool:
        """Whether this code runs on a GPU of capability ``cc``: 'a' only on that GPU,
        'f' on its family (same major, same or newer minor); a CUBIN on the same major
        and newer, PTX on any newer GPU."""
        if self.variant == "a":
            return cc == self.cc
        if self.variant == "f" or self.fmt == "cubin":
            return cc // 10 == self.cc // 10 and cc >= self.cc
        return cc >= self.cc


def parse(arch, fmt: str | None = None) -> Arch:
    """'sm_90', 'sm_90a', 'sm_100f', 'compute_90' (PTX), '90', 90, (9, 0) or an Arch ->
    Arch, compiled to ``fmt`` when given.

    Checked against the NVRTC in use: an arch it cannot compile for is refused with the
    list of those it can. This is the only parser of a user's arch.
    """
    if isinstance(arch, Arch):
        return arch.as_format(fmt)
    if isinstance(arch, bool) or not isinstance(arch, (int, str, tuple)):
        raise JitkernTypeError(
            f"arch: expected a str such as 'sm_90', an int such as 90 or a tuple such as (9, 0), "
            f"got {type(arch).__name__}"
        )
    if isinstance(arch, tuple):
        ok = len(arch) == 2 and all(isinstance(v, int) and not isinstance(v, bool) for v in arch)
        parsed = Arch("cubin", arch[0] * 10 + arch[1]) if ok else None
    elif isinstance(arch, int):
        parsed = Arch("cubin", arch)
    else:
        m = _TEXT.match(arch.strip().lower())
        parsed = m and Arch(_FORMAT_OF_PREFIX[m["prefix"] or "sm_"], int(m["cc"]), m["variant"])
    if not parsed or not _supported(parsed):
        raise JitkernValueError(f"arch: {arch!r} is not a target {_targets_text()}") from None
    return parsed.as_format(fmt)


def parse_many(arch) -> tuple[Arch, ...]:
    """'sm_90' or ('sm_80', 'sm_90a') -> their Arches, sorted, no repeats (an export's)."""
    items = (arch,) if isinstance(arch, (str, int, Arch)) else arch
    try:
        items = tuple(items)
    except TypeError:
        raise JitkernTypeError(
            f"arch: expected 'sm_XY' or a tuple of them, got {type(arch).__name__}"
        ) from None
    if not items:
        raise JitkernValueError(
            "arch: name at least one architecture, e.g. arch=('sm_80', 'sm_90')"
        )
    return tuple(sorted({parse(item) for item in items}, key=Arch.order))


def from_tag(tag: str) -> Arch:
    """An Arch an export's manifest names ('sm_90a', 'compute_90'), not checked against
    NVRTC (loading an export needs none)."""
    m = _TAG.match(tag)
    if m is None:
        raise JitkernValueError(f"the export names an arch {tag!r} this jitkern does not read")
    return Arch(_FORMAT_OF_PREFIX[m["prefix"]], int(m["cc"]), m["variant"])


def _supported(arch: Arch) -> bool:
    return arch.cc in discovery.supported_archs() and arch.cc >= VARIANT_MIN_CC[arch.variant]


def _targets_text() -> str:
    archs = discovery.supported_archs()
    major, minor = discovery.remembered_version()
    plain = ", ".join(f"sm_{a}" for a in archs)
    specific = ", ".join(f"sm_{a}{v}" for a in archs for v in ("a", "f")
                         if v and a >= VARIANT_MIN_CC[v])
    return (f"NVRTC {major}.{minor} compiles for: {plain}; arch-specific CUBIN: {specific}; "
            f"PTX: compute_XY for any of those (e.g. 'compute_{archs[-1]}')")


def choose_target(cc: int, driver_version: int | None = None) -> tuple[str, int]:
    """Pick (format, arch) for a device of compute capability ``cc`` (see the module's
    rules). ``driver_version`` is the driver's CUDA version (e.g. 13000) and only
    matters when PTX is the last resort."""
    archs = discovery.supported_archs()
    if cc in archs:
        return "cubin", cc
    same_major = [a for a in archs if a // 10 == cc // 10 and a < cc]
    if same_major:
        return "cubin", max(same_major)
    older = [a for a in archs if a < cc]
    if not older:
        raise CompileError(
            f"NVRTC {'.'.join(map(str, discovery.remembered_version()))} cannot target "
            f"compute capability {cc // 10}.{cc % 10} (it knows {', '.join(map(str, archs))})"
        )
    major, minor = discovery.remembered_version()
    if driver_version is not None and driver_version < major * 1000 + minor * 10:
        raise CompileError(
            f"device sm_{cc} is newer than NVRTC {major}.{minor} knows, and PTX from this NVRTC "
            f"would not load on driver {driver_version // 1000}.{driver_version % 1000 // 10}; "
            "install an NVRTC that knows this GPU"
        )
    return "ptx", max(older)


@functools.lru_cache(maxsize=None)
def for_device(capability: tuple[int, int], driver_version: int | None = None) -> Arch:
    """The Arch to build for a device of compute capability ``(major, minor)``: CUBIN
    where NVRTC can, never PTX newer than the driver. Remembered per device kind."""
    fmt, cc = choose_target(capability[0] * 10 + capability[1], driver_version)
    return Arch(fmt, cc)
