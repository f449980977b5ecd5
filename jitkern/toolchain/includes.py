"""What a compile reads from the user's own header folders, for the cache key.

The compile cache's key covers the source, the options and jitkern's and the toolkit's
headers; a header the kernel includes from a folder the user names (``-I/my/include``,
``--include-path=``, ``-include=``) is none of those, so its *contents* must be hashed
too, or an edited header would keep answering with the old binary.

:func:`user_headers_digest` follows every ``#include`` line of the source, and of each
header it finds, through the folders the compile searches (a quoted include first in
the including header's own folder, then the ``-I`` folders in order), and hashes the
path and bytes of every header found there. Headers found in none of the user's
folders are jitkern's or the toolkit's, keyed elsewhere. Conditional includes are
followed whatever the condition (a superset of what the compile reads), and an
``#include`` of a macro, which cannot be resolved without preprocessing, makes the
digest cover every file under the user's folders.
"""

from __future__ import annotations

import hashlib
import os
import re

from ..errors import JitkernFileNotFoundError

_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*(?:([<"])([^>"\n]+)[>"]|(\S.*))?',
                      re.MULTILINE)
_DIR_PREFIXES = ("--include-path=", "-I=", "-I")
_FILE_PREFIXES = ("--pre-include=", "-include=")
_MAX_FILES = 10_000  # a guard against walking a huge tree named by mistake


def user_include_dirs(options, extra_dirs=()) -> tuple[str, ...]:
    """The folders named by ``-I``/``--include-path`` options, then ``extra_dirs``; a folder
    that does not exist is refused (NVRTC would silently ignore it)."""
    dirs = []
    for opt in options:
        for prefix in _DIR_PREFIXES:
            if opt.startswith(prefix) and len(opt) > len(prefix):
                folder = opt[len(prefix):]
                if not os.path.isdir(folder):
                    raise JitkernFileNotFoundError(
                        f"options: {opt!r} names the include folder {folder!r}, which does not "
                        "exist (or is not a folder)"
                    )
                dirs.append(folder)
                break
    dirs.extend(os.fspath(d) for d in extra_dirs)
    return tuple(dirs)


def _forced_includes(options) -> list[str]:
    out = []
    for opt in options:
        for prefix in _FILE_PREFIXES:
            if opt.startswith(prefix):
                out.append(opt[len(prefix):])
    return out


def user_headers_digest(source: str, options, extra_dirs=()) -> str:
    """A hash of every header from the user's folders this compile can read ("" if none)."""
    dirs = user_include_dirs(options, extra_dirs)
    if not dirs and not _forced_includes(options):
        return ""
    h = hashlib.sha256()
    unresolvable = False
    for path, data in user_headers(source, options, extra_dirs):
        if path is None:
            unresolvable = True
            continue
        h.update(f"{path}\0{len(data)}\0".encode())
        h.update(data)
    if unresolvable:
        h.update(b"every file:")
        h.update(_every_file_digest(dirs).encode())
    return h.hexdigest()


def user_headers(source: str, options, extra_dirs=()):
    """(path, bytes) of every header from the user's folders that ``source`` may include,
    directly or through another; (None, b"") for an ``#include`` of a macro (only the
    preprocessor knows what it names)."""
    dirs = user_include_dirs(options, extra_dirs)
    seen: set[str] = set()
    pending: list[tuple[bytes, str | None]] = [(source.encode(), None)]
    for name in _forced_includes(options):
        pending.append((b'#include "' + name.encode() + b'"\n', None))
    while pending:
        text, here = pending.pop()
        for match in _INCLUDE.finditer(text):
            kind, name = match.group(1), match.group(2)
            if kind is None:
                yield None, b""
                continue
            path = _find(name.decode(errors="replace"), kind == b'"', here, dirs)
            if path is None or path in seen:
                continue
            seen.add(path)
            data = _read(path)
            yield path, data
            pending.append((data, os.path.dirname(path)))


def _find(name: str, quoted: bool, here: str | None, dirs) -> str | None:
    if os.path.isabs(name):
        return os.path.abspath(name) if os.path.isfile(name) else None
    folders = ([here] if quoted and here is not None else []) + list(dirs)
    for folder in folders:
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            return os.path.abspath(path)
    return None


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as exc:
        return f"unreadable: {exc.strerror}".encode()


def _every_file_digest(dirs) -> str:
    h = hashlib.sha256()
    count = 0
    for top in dirs:
        for folder, subdirs, files in os.walk(top):
            subdirs.sort()
            for name in sorted(files):
                path = os.path.join(folder, name)
                h.update(path.encode() + b"\0" + _read(path))
                count += 1
                if count >= _MAX_FILES:
                    return h.hexdigest()
    return h.hexdigest()
