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

All entries live under one marked subfolder of the cache folder,
``<JITKERN_CACHE_DIR>/jitkern-entries/`` (a ``CACHEDIR.TAG`` marks it), created with mode
0700; ``clear_disk`` removes only files of jitkern's own name pattern there and leaves
everything else. Entries are opened without following links and without blocking, and
only regular files are read: anything else at an entry's path is a miss. Executable
entries (marshalled launch code) are only read from, and written to, folders and files
owned by this user and writable by no one else (docs/cache.md, "Trust model").
"""

from __future__ import annotations

import dataclasses
import errno
import hashlib
import json
import os
import re
import stat
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
# kinds whose payload is executed in the process (marshalled Python code): trusted only
# from folders and files no other user can write
EXECUTABLE_KINDS = frozenset({"python-code"})
# the marked subfolder of the cache folder that holds every entry; `clear_disk` touches
# nothing outside it (but jitkern's own entries in the older layout, directly under the
# cache folder)
ENTRIES_FOLDER = "jitkern-entries"
MARKER = "CACHEDIR.TAG"
_MARKER_TEXT = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This folder holds jitkern's kernel cache (https://bford.info/cachedir/).\n"
    "# `python -m jitkern cache clear` removes jitkern's entries here and nothing else.\n"
)
_ENTRY_NAME = re.compile(r"[0-9a-f]{64}\.jkc|\.tmp-[A-Za-z0-9_]+\.jkc")
_FANOUT_NAME = re.compile(r"[0-9a-f]{2}")

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


def entries_root() -> str:
    """The marked subfolder of the cache folder that holds every entry."""
    return os.path.join(settings.cache_dir, ENTRIES_FOLDER)


def kind_dir(kind: str) -> str:
    return os.path.join(entries_root(), KINDS[kind])


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
    path = _entry_path(key, kind)
    if kind in EXECUTABLE_KINDS and not _trusted_folders(path):
        return None
    blob = _read_regular(path, kind in EXECUTABLE_KINDS)
    if blob is None:
        return None
    entry = _decode(blob, key, kind)
    if entry is None:
        stats["corrupt"] += 1
        return None
    hits_by_kind[kind] += 1
    if kind == "binary":
        stats["disk_hits"] += 1  # the compile cache's own figure: kernel binaries only
    return entry


_OPEN_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
               | getattr(os, "O_CLOEXEC", 0))


def _read_regular(path: str, executable: bool) -> bytes | None:
    """The bytes of the regular file at ``path``; None for anything else (missing, a link,
    a named pipe, a device, a folder), never blocking on it."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        if exc.errno != errno.ENOENT:
            stats["corrupt"] += 1  # a link (ELOOP), a folder, a FIFO without writer...
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            stats["corrupt"] += 1
            return None
        if executable and _untrusted(path, st) is not None:
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read()
    except OSError:
        return None
    finally:
        os.close(fd)


# -- the trust model: executable entries only from folders only this user can write

_trusted_verdicts: dict[str, bool] = {}
_trust_warned: set[str] = set()


def _untrusted(path: str, st: os.stat_result) -> str | None:
    """Why ``path`` (stat ``st``) must not be trusted with code, or None."""
    uid = os.getuid() if hasattr(os, "getuid") else None
    if uid is not None and st.st_uid not in (uid, 0):  # root's, as SSH accepts
        reason = (f"{path} is owned by user id {st.st_uid}, not by you (user id {uid}); "
                  f"fix: `chown -R {uid} {path}`, or remove it")
    elif st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        reason = (f"{path} is writable by other users (mode {stat.S_IMODE(st.st_mode):04o}); "
                  f"fix: `chmod go-w {path}` (jitkern creates it 0700)")
    else:
        return None
    _warn_untrusted(reason)
    return reason


def _warn_untrusted(reason: str) -> None:
    if reason in _trust_warned:
        return
    _trust_warned.add(reason)
    warnings.warn(
        "jitkern: not using launch code from the disk cache: " + reason + ". Anyone who can "
        "write there could run code in this process; launch code is generated again "
        "(kernel binaries are still cached). See docs/cache.md, 'Trust model'.",
        RuntimeWarning,
        stacklevel=4,
    )


def _trusted_folders(path: str) -> bool:
    """Whether every folder from the entries root down to ``path``'s folder is trusted
    (checked once per folder and process)."""
    root = entries_root()
    folder = os.path.dirname(path)
    chain = []
    while True:
        chain.append(folder)
        if folder == root or len(folder) <= len(root):
            break
        folder = os.path.dirname(folder)
    for folder in reversed(chain):
        verdict = _trusted_verdicts.get(folder)
        if verdict is None:
            try:
                st = os.stat(folder)
            except OSError:
                return True  # not there yet: nothing to read, and disk_put makes it 0700
            verdict = _untrusted(folder, st) is None
            _trusted_verdicts[folder] = verdict
        if not verdict:
            return False
    return True


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
        _make_root()
        for level in (os.path.dirname(folder), folder):  # (makedirs' mode is the leaf's only)
            os.makedirs(level, mode=0o700, exist_ok=True)
        if kind in EXECUTABLE_KINDS and not _trusted_folders(path):
            return
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".jkc", dir=folder)
    except OSError as exc:
        _entry_or_folder_failed(kind, folder, exc)
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
        _entry_or_folder_failed(kind, folder, exc)


def _make_root() -> None:
    """The cache folder and its marked entries subfolder, created 0700 where missing."""
    root = entries_root()
    if os.path.isdir(root):
        return
    os.makedirs(settings.cache_dir, mode=0o700, exist_ok=True)
    try:
        os.mkdir(root, 0o700)
    except FileExistsError:
        pass
    marker = os.path.join(root, MARKER)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=root)
    with os.fdopen(fd, "w") as f:
        f.write(_MARKER_TEXT)
    os.replace(tmp, marker)


def _entry_or_folder_failed(kind: str, folder: str, exc: OSError) -> None:
    """A write failed: if the kind's folder itself is unusable, the disk cache goes off for
    this process; a failure confined to one entry (something else at its path, its fan-out
    folder a file) only loses that entry."""
    top = kind_dir(kind)
    if os.path.isdir(top) and os.access(top, os.W_OK | os.X_OK):
        stats["unwritable"] = stats.get("unwritable", 0) + 1
        return
    _disable_disk(f"{folder}: {exc.strerror or exc}")


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


def unreadable_folders() -> list[tuple[str, str]]:
    """(folder, reason) for the entries folder and each kind's folder that exists but
    cannot be listed (its entries can be neither counted nor read)."""
    out = []
    for folder in (entries_root(), *(kind_dir(kind) for kind in KINDS)):
        if not os.path.isdir(folder):
            continue
        try:
            with os.scandir(folder):
                pass
        except OSError as exc:
            out.append((folder, exc.strerror or str(exc)))
    return out


def disk_usage() -> tuple[int, int]:
    """(number of entries, total bytes) in the disk cache, all kinds together."""
    usage = disk_usage_by_kind().values()
    return sum(c for c, _s in usage), sum(s for _c, s in usage)


@dataclasses.dataclass
class ClearReport:
    """What :func:`clear_disk` removed, what it could not remove (path, reason), and what
    it left because jitkern did not write it (paths)."""

    removed: int = 0
    failed: list = dataclasses.field(default_factory=list)
    left: list = dataclasses.field(default_factory=list)


def clear_disk() -> ClearReport:
    """Delete every entry jitkern wrote (all kinds, every version), and nothing else.

    Only files of jitkern's own name pattern (``<2 hex>/<64 hex>.jkc`` and its temporary
    files) in the marked subfolder, and in the older layout's kind folders directly under
    the cache folder, are removed, then the folders this empties. Anything else (a cache
    folder shared with other files, ``JITKERN_CACHE_DIR=~``) is left and listed in
    ``report.left``; links are never followed.
    """
    report = ClearReport()
    root = entries_root()
    if _is_real_dir(root):
        if os.path.lexists(os.path.join(root, MARKER)):
            _clear_tree(root, report, marker=True)
        else:
            report.left.append(root)  # not marked as jitkern's: not ours to empty
    for name in dict.fromkeys(KINDS.values()):  # the layout before the marked subfolder
        legacy = os.path.join(settings.cache_dir, name)
        if _is_real_dir(legacy):
            _clear_kind_folder(legacy, report, legacy_check=True)
    return report


def _is_real_dir(path: str) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _clear_tree(root: str, report: ClearReport, marker: bool) -> None:
    try:
        names = os.listdir(root)
    except OSError as exc:
        report.failed.append((root, exc.strerror or str(exc)))
        return
    for name in names:
        path = os.path.join(root, name)
        if name in KINDS.values() and _is_real_dir(path):
            _clear_kind_folder(path, report, legacy_check=False)
        elif name != MARKER and not (name.startswith(".tmp-") and _is_regular(path)):
            report.left.append(path)
        elif name != MARKER:
            _remove(path, os.unlink, report, count=False)
    if marker and not _listdir(root, ignore=MARKER):
        _remove(os.path.join(root, MARKER), os.unlink, report, count=False)
        _remove(root, os.rmdir, report, count=False)


def _clear_kind_folder(folder: str, report: ClearReport, legacy_check: bool) -> None:
    for fan in _listdir(folder):
        sub = os.path.join(folder, fan)
        if not (_FANOUT_NAME.fullmatch(fan) and _is_real_dir(sub)):
            report.left.append(sub)
            continue
        for name in _listdir(sub):
            path = os.path.join(sub, name)
            if (_ENTRY_NAME.fullmatch(name) and _is_regular(path)
                    and (not legacy_check or _starts_with_magic(path))):
                _remove(path, os.unlink, report)
            else:
                report.left.append(path)
        if not _listdir(sub):
            _remove(sub, os.rmdir, report, count=False)
    if not _listdir(folder):
        _remove(folder, os.rmdir, report, count=False)


def _listdir(folder: str, ignore: str | None = None) -> list[str]:
    try:
        return [n for n in os.listdir(folder) if n != ignore]
    except OSError:
        return []


def _is_regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _starts_with_magic(path: str) -> bool:
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError:
        return False
    try:
        return os.read(fd, 3) == b"JKC"
    finally:
        os.close(fd)


def _remove(path: str, how, report: ClearReport, count: bool = True) -> None:
    try:
        how(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        report.failed.append((path, exc.strerror or str(exc)))
        return
    if count and not os.path.basename(path).startswith(".tmp-"):
        report.removed += 1


def reset_disk_state() -> None:
    """Forget an earlier 'folder unusable' verdict (tests, or after fixing the folder)."""
    global _disk_disabled_reason
    _disk_disabled_reason = None
    _trusted_verdicts.clear()
    _trust_warned.clear()

