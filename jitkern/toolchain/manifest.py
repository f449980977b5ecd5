"""The export manifest's schema, and the checks that keep a manifest from being turned
against the loader.

A manifest is data from disk, possibly from someone else: every field ``jitkern.load``
reads is checked here for presence and type before any of it is used, so a malformed
manifest is a :class:`jitkern.JitkernValueError` naming the manifest and the field, never a
``KeyError`` from deep inside. Binary files must be plain names inside the export's folder
(no ``../x``, no absolute path, no link leading out) and must match the SHA-256 the
manifest records for them.
"""

from __future__ import annotations

import hashlib
import os
import re

from ..errors import JitkernFileNotFoundError, JitkernValueError

_HEX64 = re.compile(r"[0-9a-f]{64}")

# field -> (accepted types, what to say): the top level, then every entry and parameter
_TOP = {
    "binary_format": (str, "a str"),
    "archs": (list, "a list of arch tags"),
    "files": (dict, "an object {tag: file name}"),
    "sha256": (dict, "an object {file name: SHA-256}"),
    "entries": (list, "a list of entries"),
}
_ENTRY = {
    "name": (str, "a str"),
    "symbol": (str, "a str"),
    "kind": (str, "a str"),
    "signature": (list, "a list"),
    "params": (list, "a list of parameters"),
    "call": (dict, "an object"),
}
_PARAM = {
    "name": (str, "a str"),
    "kind": (str, "a str"),
    "offset": (int, "an int"),
    "size": (int, "an int"),
}


def _refuse(where: str, message: str) -> None:
    raise JitkernValueError(f"path: {where}: {message}; export it again") from None


def _check_fields(obj, fields: dict, where: str, what: str) -> None:
    if not isinstance(obj, dict):
        _refuse(where, f"{what} must be an object, got {type(obj).__name__}")
    for name, (types, said) in fields.items():
        if name not in obj:
            _refuse(where, f"{what} has no {name!r}")
        value = obj[name]
        if not isinstance(value, types) or (types is int and isinstance(value, bool)):
            _refuse(where, f"{what}'s {name!r} must be {said}, got {type(value).__name__}")


def validate(manifest: dict, manifest_path: str) -> None:
    """Check every field the loader reads (presence, type, plain-name files, one SHA-256 per
    file); raises JitkernValueError naming the manifest and the field."""
    where = repr(manifest_path)
    _check_fields(manifest, _TOP, where, "the manifest")
    if not all(isinstance(a, str) for a in manifest["archs"]):
        _refuse(where, "the manifest's 'archs' must be a list of str")
    for tag, name in manifest["files"].items():
        if not isinstance(name, str):
            _refuse(where, f"files[{tag!r}] must be a file name, got {type(name).__name__}")
        check_file_name(name, where)
        digest = manifest["sha256"].get(name)
        if not isinstance(digest, str) or not _HEX64.fullmatch(digest):
            _refuse(where, f"the manifest records no SHA-256 for the binary {name!r}")
    names = set()
    for i, entry in enumerate(manifest["entries"]):
        _check_fields(entry, _ENTRY, where, f"entries[{i}]")
        if entry["name"] in names:
            _refuse(where, f"entries[{i}]: a second kernel named {entry['name']!r}")
        names.add(entry["name"])
        for j, param in enumerate(entry["params"]):
            _check_fields(param, _PARAM, where, f"entries[{i}] ({entry['name']}).params[{j}]")
            if param["offset"] < 0 or param["size"] <= 0:
                _refuse(where, f"entries[{i}] ({entry['name']}).params[{j}]: offset and size "
                               f"must be >= 0 and > 0, got {param['offset']}, {param['size']}")


def check_file_name(name: str, where: str) -> None:
    """A binary's name must be a plain file name: the export's folder holds it."""
    if (not name or name in (".", "..") or os.path.isabs(name) or "/" in name or "\\" in name
            or os.sep in name or (os.altsep and os.altsep in name) or "\0" in name):
        _refuse(where, f"the binary {name!r} is not a plain file name in the export's folder")


def confined_path(folder: str, name: str, where: str) -> str:
    """The path of binary ``name`` in ``folder``, refused if a link leads it outside."""
    check_file_name(name, where)
    path = os.path.join(folder, name)
    real_folder = os.path.realpath(folder)
    if os.path.commonpath([real_folder, os.path.realpath(path)]) != real_folder:
        _refuse(where, f"the binary {name!r} is a link that leads out of the export's folder")
    return path


def read_binary(folder: str, manifest: dict, name: str, where: str) -> bytes:
    """The bytes of binary ``name``, checked against the manifest's SHA-256."""
    path = confined_path(folder, name, where)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise JitkernFileNotFoundError(
            f"path: the export's binary {name!r} is missing from {folder!r}"
        ) from None
    except OSError as exc:
        _refuse(where, f"the binary {name!r} cannot be read ({exc.strerror or exc})")
    expected = manifest["sha256"][name]
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected:
        _refuse(where, f"the binary {name!r} does not match the manifest (SHA-256 "
                       f"{actual[:16]}..., recorded {expected[:16]}...): it was changed or "
                       "replaced after the export was written")
    return data
