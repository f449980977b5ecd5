"""The compile cache: a dict in memory over content-addressed files on disk.

An entry is one file, ``<dir>/kernels/<k[:2]>/<k>.jkc``, holding a small JSON
header and the binary. The header stores the binary's SHA-256, so a truncated or
corrupt file reads as a miss (and is rewritten), never as a crash. Writes go to a
temporary file in the same folder and are published with ``os.replace``, so
readers in other processes see either nothing or a whole entry.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import tempfile
import threading
import warnings

from ..config import settings

CACHE_FORMAT_VERSION = 2
_MAGIC = b"JKC1"
_HEADER = struct.Struct("<4sI")  # magic, header length

_memory: dict[str, object] = {}
_lock = threading.Lock()
_disk_disabled_reason: str | None = None
stats = {"memory_hits": 0, "disk_hits": 0, "misses": 0, "corrupt": 0, "compiles": 0}


def make_key(*parts) -> str:
    """SHA-256 over the repr of every part that decides the binary."""
    h = hashlib.sha256()
    h.update(f"jitkern-cache-v{CACHE_FORMAT_VERSION}".encode())
    for part in parts:
        data = part if isinstance(part, bytes) else repr(part).encode()
        h.update(struct.pack("<Q", len(data)))
        h.update(data)
    return h.hexdigest()


def kernels_dir() -> str:
    return os.path.join(settings.cache_dir, "kernels")


def _entry_path(key: str) -> str:
    return os.path.join(kernels_dir(), key[:2], key + ".jkc")


def disk_enabled() -> bool:
    return settings.disk_cache and _disk_disabled_reason is None


def _disable_disk(reason: str) -> None:
    global _disk_disabled_reason
    if _disk_disabled_reason is None:
        _disk_disabled_reason = reason
        warnings.warn(
            f"jitkern: kernel cache folder unusable ({reason}); caching in memory only",
            RuntimeWarning,
            stacklevel=4,
        )


def memory_get(key: str):
    value = _memory.get(key)
    if value is not None:
        stats["memory_hits"] += 1
    return value


def memory_put(key: str, value) -> None:
    _memory[key] = value


def clear_memory() -> None:
    _memory.clear()


def disk_get(key: str) -> tuple[dict, bytes] | None:
    """(header, payload) of a valid entry, or None for a miss or a bad entry."""
    if not disk_enabled():
        return None
    path = _entry_path(key)
    try:
        with open(path, "rb") as f:
            blob = f.read()
    except FileNotFoundError:
        return None
    except OSError:
        return None
    entry = _decode(blob, key)
    if entry is None:
        stats["corrupt"] += 1
        return None
    stats["disk_hits"] += 1
    return entry


def _decode(blob: bytes, key: str) -> tuple[dict, bytes] | None:
    if len(blob) < _HEADER.size:
        return None
    magic, hlen = _HEADER.unpack_from(blob)
    if magic != _MAGIC or _HEADER.size + hlen > len(blob):
        return None
    try:
        header = json.loads(blob[_HEADER.size:_HEADER.size + hlen].decode())
    except (UnicodeDecodeError, ValueError):
        return None
    payload = blob[_HEADER.size + hlen:]
    if not isinstance(header, dict) or header.get("key") != key:
        return None
    if header.get("size") != len(payload):
        return None
    if header.get("sha256") != hashlib.sha256(payload).hexdigest():
        return None
    return header, payload


def disk_put(key: str, header: dict, payload: bytes) -> None:
    if not disk_enabled():
        return
    header = dict(header, key=key, size=len(payload), sha256=hashlib.sha256(payload).hexdigest())
    hbytes = json.dumps(header, sort_keys=True).encode()
    blob = _HEADER.pack(_MAGIC, len(hbytes)) + hbytes + payload
    folder = os.path.dirname(_entry_path(key))
    try:
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".jkc", dir=folder)
    except OSError as exc:
        _disable_disk(f"{folder}: {exc.strerror or exc}")
        return
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
        os.replace(tmp, _entry_path(key))
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        _disable_disk(f"{folder}: {exc.strerror or exc}")


def disk_usage() -> tuple[int, int]:
    """(number of entries, total bytes) in the disk cache."""
    count = size = 0
    root = kernels_dir()
    for folder, _dirs, files in os.walk(root):
        for name in files:
            if name.endswith(".jkc") and not name.startswith(".tmp-"):
                count += 1
                try:
                    size += os.path.getsize(os.path.join(folder, name))
                except OSError:
                    pass
    return count, size


def clear_disk() -> int:
    """Delete every entry on disk; returns how many were removed."""
    removed = 0
    root = kernels_dir()
    for folder, _dirs, files in os.walk(root, topdown=False):
        for name in files:
            if name.endswith(".jkc"):
                try:
                    os.unlink(os.path.join(folder, name))
                    removed += 1
                except OSError:
                    pass
        try:
            os.rmdir(folder)
        except OSError:
            pass
    return removed


def reset_disk_state() -> None:
    """Forget an earlier 'folder unusable' verdict (tests, or after fixing the folder)."""
    global _disk_disabled_reason
    _disk_disabled_reason = None
