"""The disk and memory cache: one mechanism for everything jitkern writes to disk.

Every disk entry, whatever its kind (a kernel binary, the JIT's generated-source
index, generated launch code, the toolchain's remembered facts), is one file
``<dir>/<folder of its kind>/<k[:2]>/<k>.jkc``. Its key is a hash of what decides
the entry *and* of jitkern's identity (its version and a hash of its own source:
the code generators and headers), so an upgrade of jitkern never reads an entry an
older jitkern wrote. The file holds a SHA-256 over its whole content (header and
payload), so a truncated, corrupt or tampered file reads as a miss, never as a
crash, and is replaced by the next write. Writes go to a temporary file in the same
folder and are published with ``os.replace``, so readers in other processes see
either nothing or a whole entry.
"""

from __future__ import annotations

import dataclasses
import errno
import hashlib
import json
import os
import struct
import tempfile
import threading
import warnings

from ..config import VERSION, settings

CACHE_FORMAT_VERSION = 3
_MAGIC = b"JKC3"
_HEADER = struct.Struct("<4s32sI")  # magic, SHA-256 of everything after it, header length

# entry kind -> the folder (under the cache folder) that holds entries of that kind
KINDS = {
    "binary": "kernels",
    "python-code": "python",
    "jit-index": "jit-index",
    "toolchain": "toolchain",
    "autotune": "autotune",  # kernels.autotune: the chosen configuration per GPU model
}
# folders only older jitkern versions wrote; `clear_disk` removes them too
_LEGACY_FOLDERS = ()

_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_GENERATOR_SUFFIXES = (".py", ".cuh", ".h", ".hpp")

_memory: dict[str, object] = {}
_lock = threading.Lock()
_disk_disabled_reason: str | None = None
_identity: tuple[str, str] | None = None
stats = {"memory_hits": 0, "disk_hits": 0, "misses": 0, "corrupt": 0, "compiles": 0}
hits_by_kind = dict.fromkeys(KINDS, 0)  # disk hits of every kind of entry


def generator_identity() -> str:
    """A hash of jitkern's own source files (code generators, launch code, headers).

    Computed once per process, lazily, from each file's path, size and modification time:
    any edit, reinstall or upgrade of the code that writes generated source or binaries
    changes every key. It sits on every fresh process's first launch, so it reads no file
    and walks with ``os.scandir`` (about 0.4 ms; ``os.walk`` with ``relpath`` took 2.5 ms).
    """
    entries: list[str] = []
    _scan(_PACKAGE_ROOT, len(_PACKAGE_ROOT) + 1, entries)
    entries.sort()
    return hashlib.sha256("\0".join(entries).encode()).hexdigest()


def _scan(folder: str, cut: int, out: list) -> None:
    try:
        it = os.scandir(folder)
    except OSError:
        out.append(f"{folder[cut:]}:unreadable")
        return
    with it:
        for entry in it:
            if entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__":
                    _scan(entry.path, cut, out)
            elif entry.name.endswith(_GENERATOR_SUFFIXES):
                try:
                    st = entry.stat()
                    out.append(f"{entry.path[cut:]}:{st.st_size}:{st.st_mtime_ns}")
                except OSError:
                    out.append(f"{entry.path[cut:]}:unreadable")


def identity() -> tuple[str, str]:
    """(jitkern's version, the generator identity): part of every key."""
    global _identity
    if _identity is None:
        _identity = (VERSION, generator_identity())
    return _identity


_warmed = False


def warm_up(then=None) -> None:
    """Compute the generator identity now, once per process, then run ``then()`` (other
    per-process facts every first launch needs, such as the toolchain's).

    The driver's start calls it: importing cuda.bindings, cuInit and the first context
    take tens to hundreds of milliseconds, beside which the identity's directory walk
    (about 0.4 ms) is lost, where it would otherwise sit on a kernel's first launch. (A
    daemon thread overlapping it with the driver's start was measured too: every later
    launch, which releases the GIL in cuLaunchKernel, cost about 0.2 us more.)
    """
    global _warmed
    if not _warmed:
        _warmed = True
        identity()
        if then is not None:
            then()


def make_key(*parts) -> str:
    """SHA-256 over jitkern's identity and the repr of every part that decides the entry."""
    h = hashlib.sha256()
    h.update(f"jitkern-cache-v{CACHE_FORMAT_VERSION}".encode())
    for part in (*identity(), *parts):
        data = part if isinstance(part, bytes) else repr(part).encode()
        h.update(struct.pack("<Q", len(data)))
        h.update(data)
    return h.hexdigest()


def kind_dir(kind: str) -> str:
    return os.path.join(settings.cache_dir, KINDS[kind])


def kernels_dir() -> str:
    return kind_dir("binary")


def _entry_path(key: str, kind: str) -> str:
    return os.path.join(kind_dir(kind), key[:2], key + ".jkc")


def disk_enabled() -> bool:
    return settings.disk_cache and _disk_disabled_reason is None


def disabled_reason() -> str | None:
    """Why the disk cache is off for this process (None while it is on)."""
    if not settings.disk_cache:
        return "JITKERN_CACHE=0"
    return _disk_disabled_reason


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


def disk_get(key: str, kind: str = "binary") -> tuple[dict, bytes] | None:
    """(header, payload) of a valid entry, or None for a miss or a bad entry."""
    if not disk_enabled():
        return None
    try:
        with open(_entry_path(key, kind), "rb") as f:
            blob = f.read()
    except OSError:
        return None
    entry = _decode(blob, key, kind)
    if entry is None:
        stats["corrupt"] += 1
        return None
    hits_by_kind[kind] += 1
    if kind == "binary":
        stats["disk_hits"] += 1  # the compile cache's own figure: kernel binaries only
    return entry


def _decode(blob: bytes, key: str, kind: str) -> tuple[dict, bytes] | None:
    if len(blob) < _HEADER.size:
        return None
    magic, digest, hlen = _HEADER.unpack_from(blob)
    if magic != _MAGIC or _HEADER.size + hlen > len(blob):
        return None
    if hashlib.sha256(blob[_HEADER.size - 4:]).digest() != digest:
        return None
    try:
        header = json.loads(blob[_HEADER.size:_HEADER.size + hlen].decode())
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(header, dict) or header.get("key") != key or header.get("kind") != kind:
        return None
    if header.get("jitkern") != list(identity()):
        return None
    return header, blob[_HEADER.size + hlen:]


def encode(key: str, header: dict, payload: bytes, kind: str) -> bytes:
    """The bytes of an entry (``disk_put`` writes them; tests craft entries with it)."""
    header = dict(header, key=key, kind=kind, jitkern=list(identity()))
    hbytes = json.dumps(header, sort_keys=True).encode()
    body = struct.pack("<I", len(hbytes)) + hbytes + payload
    return _MAGIC + hashlib.sha256(body).digest() + body


def disk_put(key: str, header: dict, payload: bytes, kind: str = "binary") -> None:
    if not disk_enabled():
        return
    blob = encode(key, header, payload, kind)
    path = _entry_path(key, kind)
    folder = os.path.dirname(path)
    try:
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".jkc", dir=folder)
    except OSError as exc:
        _disable_disk(f"{folder}: {exc.strerror or exc}")
        return
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
        os.replace(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        _disable_disk(f"{folder}: {exc.strerror or exc}")


def _folders() -> list[str]:
    names = dict.fromkeys((*KINDS.values(), *_LEGACY_FOLDERS))
    return [os.path.join(settings.cache_dir, name) for name in names]


def disk_usage_by_kind() -> dict[str, tuple[int, int]]:
    """{kind: (number of entries, total bytes)} on disk."""
    out = {}
    for kind in KINDS:
        count = size = 0
        for folder, _dirs, files in os.walk(kind_dir(kind)):
            for name in files:
                if name.endswith(".jkc") and not name.startswith(".tmp-"):
                    count += 1
                    try:
                        size += os.path.getsize(os.path.join(folder, name))
                    except OSError:
                        pass
        out[kind] = (count, size)
    return out


def disk_usage() -> tuple[int, int]:
    """(number of entries, total bytes) in the disk cache, all kinds together."""
    usage = disk_usage_by_kind().values()
    return sum(c for c, _s in usage), sum(s for _c, s in usage)


@dataclasses.dataclass
class ClearReport:
    """What :func:`clear_disk` removed, and what it could not remove (path, reason)."""

    removed: int = 0
    failed: list = dataclasses.field(default_factory=list)


def clear_disk() -> ClearReport:
    """Delete every file jitkern wrote under the cache folder (all kinds, every version).

    Only jitkern's own subfolders are touched, so a cache folder shared with other
    files (``JITKERN_CACHE_DIR=~``) loses nothing else.
    """
    report = ClearReport()
    for root in _folders():
        if not os.path.lexists(root):
            continue
        if not os.path.isdir(root) or os.path.islink(root):
            _remove(root, os.unlink, report)
            continue
        for folder, _dirs, files in os.walk(root, topdown=False, onerror=lambda e: _failed(e, report)):
            for name in files:
                _remove(os.path.join(folder, name), os.unlink, report)
            _remove(folder, os.rmdir, report, count=False)
    return report


def _remove(path: str, how, report: ClearReport, count: bool = True) -> None:
    try:
        how(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        if how is os.rmdir and exc.errno == errno.ENOTEMPTY and report.failed:
            return  # a file inside could not be removed, and is reported already
        report.failed.append((path, exc.strerror or str(exc)))
        return
    if count and not os.path.basename(path).startswith(".tmp-"):
        report.removed += 1


def _failed(exc: OSError, report: ClearReport) -> None:
    report.failed.append((getattr(exc, "filename", "?"), exc.strerror or str(exc)))


def reset_disk_state() -> None:
    """Forget an earlier 'folder unusable' verdict (tests, or after fixing the folder)."""
    global _disk_disabled_reason
    _disk_disabled_reason = None

