"""Environment settings, read once at import and kept in one explicit object.

Stages never read ``os.environ`` themselves: they read ``jitkern.config.settings``.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

from .errors import JitkernValueError

VERSION = "0.1.0"  # jitkern's version (``jitkern.__version__``); part of every cache key
# jitkern's own CUDA headers (jitkern/..., and CuPy's names cupy/...): first on NVRTC's include
# path (toolchain/discovery.py); the string kernels' C++ environment reads them too.
PACKAGE_INCLUDE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "include")

_FLAG_VALUES = {"1": True, "true": True, "yes": True, "on": True,
                "0": False, "false": False, "no": False, "off": False}


def _flag(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    value = _FLAG_VALUES.get(raw.strip().lower())
    if value is None:
        allowed = ", ".join(repr(v) for v in _FLAG_VALUES)
        raise JitkernValueError(
            f"environment variable {name}={raw!r}: expected one of {allowed} (or unset)"
        )
    return value


#: JITKERN_RESULTS: the library of the arrays a kernel with no array arguments returns
#: (docs/arrays.md, "Results follow the inputs"); 'auto' is the program's: CuPy's where it is
#: imported, else PyTorch's where it is, else jitkern's.
RESULTS = ("auto", "jitkern", "cupy", "torch")


def _choice(name: str, value: str, allowed: tuple) -> str:
    if value not in allowed:
        raise JitkernValueError(
            f"{name}: expected one of {', '.join(map(repr, allowed))}, got {value!r}")
    return value


def _results_from_environ() -> str:
    raw = os.environ.get("JITKERN_RESULTS", "").strip().lower() or "auto"
    return _choice(f"environment variable JITKERN_RESULTS={raw!r}", raw, RESULTS)


def _default_cache_dir() -> str:
    explicit = os.environ.get("JITKERN_CACHE_DIR")
    if explicit:  # a relative folder is resolved once, here: a later os.chdir does not move it
        return os.path.abspath(os.path.expanduser(explicit))
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(xdg, "jitkern")


#: Run when ``settings.simulate`` turns on: the JIT puts back the general launch of every
#: kernel whose generated GPU launcher (which checks nothing else) was installed.
on_simulate: list = []


@dataclass
class Settings:
    cache_dir: str
    disk_cache: bool
    dump_source_on_error: bool
    cuda_home: str | None
    simulate: bool = False  # JITKERN_SIMULATE: run JIT kernels on the CPU (the simulator)
    debug: bool = False  # JITKERN_DEBUG: bounds-checked debug builds of JIT kernels
    exact_alloc: bool = False  # JITKERN_EXACT_ALLOC: every allocation its own exact cuMemAlloc
    results: str = "auto"  # JITKERN_RESULTS: what a kernel with no array arguments returns

    def __setattr__(self, name, value):
        if name == "results":
            value = _choice("jitkern.config.settings.results", value, RESULTS)
        object.__setattr__(self, name, value)
        if name == "simulate" and value:
            for callback in on_simulate:
                callback()

    @classmethod
    def from_environ(cls) -> "Settings":
        return cls(
            cache_dir=_default_cache_dir(),
            disk_cache=_flag("JITKERN_CACHE", True),
            dump_source_on_error=_flag("JITKERN_DUMP_SOURCE_ON_ERROR", False),
            cuda_home=os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or None,
            simulate=_flag("JITKERN_SIMULATE", False),
            debug=_flag("JITKERN_DEBUG", False),
            exact_alloc=_flag("JITKERN_EXACT_ALLOC", False),
            results=_results_from_environ(),
        )


def _running_the_cli() -> bool:
    """Whether this process is ``python -m jitkern`` or the ``jitkern`` script, whose user
    wants a bad variable's message and exit status 2, not a traceback."""
    argv = getattr(sys, "orig_argv", sys.argv)
    if "-m" in argv[:-1] and argv[argv.index("-m") + 1] == "jitkern":
        return True
    return os.path.basename(sys.argv[0] if sys.argv else "") == "jitkern"


try:
    settings = Settings.from_environ()
except JitkernValueError as _exc:
    if not _running_the_cli():
        raise
    sys.stderr.write(f"jitkern: {_exc}\n")
    raise SystemExit(2) from None


def reload() -> Settings:
    """Re-read the environment (tests use this after changing variables)."""
    fresh = Settings.from_environ()
    for name, value in fresh.__dict__.items():
        setattr(settings, name, value)
    return settings
