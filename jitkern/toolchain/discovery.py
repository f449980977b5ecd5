"""Where the compiler and headers are, and which binary to build for a device.

Target rules (kept as data and one function, not scattered through callers):
- CUBIN for the device's exact ``sm_XY`` when NVRTC knows it;
- else CUBIN for the newest arch NVRTC knows with the same major and a lower
  minor (binary compatible within a major);
- else PTX, and only if the driver is at least as new as NVRTC, because a
  driver rejects PTX of a newer ISA than it knows.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import re

from ..config import settings
from ..errors import CompileError, JitkernTypeError, JitkernValueError
from . import cache

PACKAGE_INCLUDE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "include")
# jitify=True puts this folder first on the include path (see compiler/strings/jitify.py)
JITIFY_INCLUDE = os.path.join(PACKAGE_INCLUDE, "jitkern", "jitify")


@functools.lru_cache(maxsize=None)
def jitify_headers() -> tuple[str, ...]:
    """The standard header names ``jitify=True`` provides (``type_traits``, ``limits.h``...)."""
    try:
        return tuple(sorted(n for n in os.listdir(JITIFY_INCLUDE) if not n.startswith("__")))
    except OSError:
        return ()


@functools.lru_cache(maxsize=None)
def nvrtc_module():
    try:
        from cuda.bindings import nvrtc
    except Exception as exc:
        raise CompileError(f"NVRTC is not available: cannot import cuda.bindings.nvrtc ({exc})") from None
    return nvrtc


@functools.lru_cache(maxsize=None)
def nvrtc_version() -> tuple[int, int]:
    nvrtc = nvrtc_module()
    try:
        err, major, minor = nvrtc.nvrtcVersion()
    except Exception as exc:
        raise CompileError(
            f"NVRTC library not found ({exc}); install it with "
            "pip install 'cuda-toolkit[nvrtc]==13.*' or set CUDA_HOME"
        ) from None
    return int(major), int(minor)


_NVRTC_LIB_NAMES = ("libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so", "nvrtc64_130_0.dll",
                    "nvrtc64_120_0.dll")


@functools.lru_cache(maxsize=None)
def nvrtc_identity() -> tuple:
    """A cheap identity of the installed NVRTC, for cache keys: (path, size, mtime) of each
    NVRTC library jitkern could load, found with a few ``stat`` calls.

    Loading NVRTC just to ask its version costs about 100 ms, which would dominate the
    first launch of a kernel already in the disk cache. Any reinstall or upgrade of
    NVRTC changes this identity. Where no library file is found this way, it falls
    back to the real version.
    """
    import sys

    folders = []
    if settings.cuda_home:
        folders += [os.path.join(settings.cuda_home, sub) for sub in ("lib64", "lib", "bin")]
    for entry in sys.path:
        wheels = os.path.join(entry, "nvidia") if entry else ""
        if wheels and os.path.isdir(wheels):
            folders += [os.path.join(wheels, sub, "lib") for sub in ("cu13", "cu12")]
            folders.append(os.path.join(wheels, "cuda_nvrtc", "lib"))
    folders += ["/usr/local/cuda/lib64", "/usr/lib/x86_64-linux-gnu"]
    found = []
    for folder in folders:
        for name in _NVRTC_LIB_NAMES:
            path = os.path.join(folder, name)
            try:
                st = os.stat(path)
            except OSError:
                continue
            found.append((path, st.st_size, st.st_mtime_ns))
    if not found:
        return ("version", nvrtc_version())
    return tuple(sorted(set(found)))


@functools.lru_cache(maxsize=None)
def supported_archs() -> tuple[int, ...]:
    """Compute capabilities NVRTC can emit CUBIN for, e.g. (75, 80, ..., 120).

    Asking NVRTC means loading it (50-100 ms in a fresh process), which a launch of a
    kernel already in the disk cache would otherwise pay just to pick its target; so
    the answer is remembered in the disk cache under NVRTC's file identity.
    """
    remembered = _toolchain_facts()
    if remembered is not None:
        return tuple(remembered["archs"])
    nvrtc = nvrtc_module()
    version = nvrtc_version()
    err, archs = nvrtc.nvrtcGetSupportedArchs()
    archs = tuple(int(a) for a in archs)
    _remember_toolchain_facts({"archs": list(archs), "version": list(version)})
    return archs


def prefetch_facts() -> None:
    """Find NVRTC's file identity and, when the disk cache remembers them, the targets it
    supports (run at the driver's start: see cache.warm_up). NVRTC itself
    is never loaded here: where nothing is remembered, the first compile asks it."""
    if nvrtc_identity()[0] != "version" and _toolchain_facts() is not None:
        supported_archs()


def _facts_key() -> str:
    return cache.make_key("toolchain-facts", nvrtc_identity())


def _toolchain_facts() -> dict | None:
    if nvrtc_identity()[0] == "version":
        return None
    entry = cache.disk_get(_facts_key(), "toolchain")
    if entry is None:
        return None
    try:
        facts = json.loads(entry[1])
        archs, version = facts["archs"], facts["version"]
    except (ValueError, TypeError, KeyError):
        return None
    ints = all(isinstance(a, int) for a in (*archs, *version))
    if isinstance(archs, list) and isinstance(version, list) and len(version) == 2 and ints:
        return facts
    return None


def _remember_toolchain_facts(facts: dict) -> None:
    cache.disk_put(_facts_key(), {}, json.dumps(facts).encode(), "toolchain")


def remembered_version() -> tuple[int, int]:
    """NVRTC's version, from the remembered facts when possible (no library load)."""
    facts = _toolchain_facts()
    if facts is not None:
        return tuple(facts["version"])
    return nvrtc_version()


# What an ``arch`` string asks for. The prefix picks the output format; the suffix
# picks an arch-specific ('a': this exact GPU, e.g. wgmma on sm_90a) or family-specific
# ('f', CUDA 12.9+) CUBIN, which NVRTC offers from the compute capability listed here.
_FORMAT_OF_PREFIX = {"sm_": "cubin", "compute_": "ptx"}
_VARIANT_MIN_CC = {"": 0, "a": 90, "f": 100}
_ARCH_TEXT = re.compile(r"^(?P<prefix>sm_|compute_)?(?P<cc>\d{2,3})(?P<variant>[af]?)$")


@dataclasses.dataclass(frozen=True)
class Arch:
    """A compile target named by the user: format, compute capability, variant suffix."""

    fmt: str  # "cubin" or "ptx"
    cc: int  # 90 for sm_90
    variant: str = ""  # "", "a" or "f"


def parse_arch(arch) -> Arch:
    """'sm_90', 'sm_90a', 'sm_100f', 'compute_90' (PTX), '90', 90, (9, 0) -> Arch.

    Checked against the NVRTC in use: an arch it cannot compile for is refused with
    the list of those it can.
    """
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
        m = _ARCH_TEXT.match(arch.strip().lower())
        parsed = m and Arch(_FORMAT_OF_PREFIX[m["prefix"] or "sm_"], int(m["cc"]), m["variant"])
    if not parsed or not _supported(parsed):
        raise JitkernValueError(f"arch: {arch!r} is not a target {_targets_text()}") from None
    return parsed


def _supported(arch: Arch) -> bool:
    return arch.cc in supported_archs() and arch.cc >= _VARIANT_MIN_CC[arch.variant]


def _targets_text() -> str:
    archs = supported_archs()
    major, minor = remembered_version()
    plain = ", ".join(f"sm_{a}" for a in archs)
    specific = ", ".join(f"sm_{a}{v}" for a in archs for v in ("a", "f")
                         if v and a >= _VARIANT_MIN_CC[v])
    return (f"NVRTC {major}.{minor} compiles for: {plain}; arch-specific CUBIN: {specific}; "
            f"PTX: compute_XY for any of those (e.g. 'compute_{archs[-1]}')")


def normalize_arch(arch) -> int:
    """The compute capability an ``arch`` names: 'sm_90a' -> 90 (validated as parse_arch)."""
    return parse_arch(arch).cc


def choose_target(cc: int, driver_version: int | None = None) -> tuple[str, int]:
    """Pick (format, arch) for a device of compute capability ``cc``.

    ``driver_version`` is the driver's CUDA version (e.g. 13000) and only matters
    when PTX is the last resort.
    """
    archs = supported_archs()
    if cc in archs:
        return "cubin", cc
    same_major = [a for a in archs if a // 10 == cc // 10 and a < cc]
    if same_major:
        return "cubin", max(same_major)
    older = [a for a in archs if a < cc]
    if not older:
        raise CompileError(
            f"NVRTC {'.'.join(map(str, remembered_version()))} cannot target compute capability "
            f"{cc // 10}.{cc % 10} (it knows {', '.join(map(str, archs))})"
        )
    major, minor = remembered_version()
    if driver_version is not None and driver_version < major * 1000 + minor * 10:
        raise CompileError(
            f"device sm_{cc} is newer than NVRTC {major}.{minor} knows, and PTX from this NVRTC "
            f"would not load on driver {driver_version // 1000}.{driver_version % 1000 // 10}; "
            "install an NVRTC that knows this GPU"
        )
    return "ptx", max(older)


def _located(libname: str) -> str | None:
    try:
        from cuda import pathfinder
    except Exception:
        return None
    locate = getattr(pathfinder, "locate_nvidia_header_directory", None)
    if locate is not None:
        try:
            found = locate(libname)
        except Exception:
            found = None
        if found is not None:
            return getattr(found, "abs_path", found)
    find = getattr(pathfinder, "find_nvidia_header_directory", None)
    if find is not None:
        try:
            return find(libname)
        except Exception:
            return None
    return None


@functools.lru_cache(maxsize=None)
def include_dirs() -> tuple[str, ...]:
    """Include folders for NVRTC: jitkern's headers, the CUDA headers, CCCL.

    ``CUDA_HOME``/``CUDA_PATH``, when set and holding ``cuda_runtime.h``, replaces the
    pip wheels entirely: mixing two CUDA versions' headers (or two CCCLs) breaks in
    confusing ways, so the folders come from one installation only.
    """
    home_dirs = _cuda_home_include_dirs()
    cuda_dirs = home_dirs if home_dirs else _wheel_include_dirs()
    dirs = [PACKAGE_INCLUDE]
    for path in cuda_dirs:
        if path not in dirs:
            dirs.append(path)
    return tuple(dirs)


def _with_cccl(folders: list[str]) -> list[str]:
    out = []
    for path in folders:
        out.append(path)
        cccl = os.path.join(path, "cccl")
        if os.path.isdir(os.path.join(cccl, "cuda")):
            out.append(cccl)
    return out


def _cuda_home_include_dirs() -> list[str]:
    home = settings.cuda_home
    if not home:
        return []
    folders = [os.path.join(home, sub) for sub in
               ("include", os.path.join("targets", "x86_64-linux", "include"))]
    folders = [f for f in folders if os.path.isfile(os.path.join(f, "cuda_runtime.h"))]
    return _with_cccl(folders[:1])


def _wheel_include_dirs() -> list[str]:
    folders = []
    for lib in ("cudart", "cccl"):
        path = _located(lib)
        if path and os.path.isdir(path) and path not in folders:
            folders.append(path)
    return _with_cccl(folders)


@functools.lru_cache(maxsize=None)
def cudadevrt_path() -> str | None:
    """Path of ``libcudadevrt.a`` (needed to link relocatable device code)."""
    home = settings.cuda_home
    if home:
        for sub in ("lib64", "lib", os.path.join("targets", "x86_64-linux", "lib")):
            path = os.path.join(home, sub, "libcudadevrt.a")
            if os.path.isfile(path):
                return path
    try:
        from cuda import pathfinder
        found = pathfinder.locate_static_lib("cudadevrt")
        return getattr(found, "abs_path", None)
    except Exception:
        return None
