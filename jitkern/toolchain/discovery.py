"""Where the compiler and headers are, and what the NVRTC in use can target.

Which binary to build for a device, and every parse of a user's arch: target.py.
"""

from __future__ import annotations

import functools
import json
import os

from ..config import PACKAGE_INCLUDE, settings
from ..errors import CompileError
from . import cache

# jitify=True puts this folder first on the include path (see compiler/strings/jitify.py)
JITIFY_INCLUDE = os.path.join(PACKAGE_INCLUDE, "jitkern", "jitify")
# Pre-included in every compile: the names every kernel sees (M_PI, CUDART_*...)
ENVIRONMENT_HEADER = os.path.join(PACKAGE_INCLUDE, "jitkern", "environment.h")


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
