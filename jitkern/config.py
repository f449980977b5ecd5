"""Environment settings, read once at import and kept in one explicit object.

Stages never read ``os.environ`` themselves: they read ``jitkern.config.settings``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


def _flag(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    return raw.strip().lower() not in ("0", "false", "no", "off")


def _default_cache_dir() -> str:
    explicit = os.environ.get("JITKERN_CACHE_DIR")
    if explicit:
        return os.path.expanduser(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(xdg, "jitkern")


@dataclass
class Settings:
    cache_dir: str
    disk_cache: bool
    dump_source_on_error: bool
    cuda_home: str | None
    simulate: bool = False  # JITKERN_SIMULATE: run JIT kernels on the CPU (the simulator)
    debug: bool = False  # JITKERN_DEBUG: bounds-checked debug builds of JIT kernels

    @classmethod
    def from_environ(cls) -> "Settings":
        return cls(
            cache_dir=_default_cache_dir(),
            disk_cache=_flag("JITKERN_CACHE", True),
            dump_source_on_error=_flag("JITKERN_DUMP_SOURCE_ON_ERROR", False),
            cuda_home=os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or None,
            simulate=_flag("JITKERN_SIMULATE", False),
            debug=_flag("JITKERN_DEBUG", False),
        )


settings = Settings.from_environ()


def reload() -> Settings:
    """Re-read the environment (tests use this after changing variables)."""
    global settings
    fresh = Settings.from_environ()
    settings.__dict__.update(fresh.__dict__)
    return settings
