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

from .. import dtypes, records
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
# a JIT entry's call: its arguments, each by its "type"
_JIT_CALL = {"args": (list, "a list of arguments"), "mode": (str, "a str")}
_JIT_ARG = {"name": (str, "a str"), "type": (str, "a str"), "describe": (str, "a str")}
_JIT_ARG_KINDS = {
    "array": {"dtype": (str, "a dtype name"), "ndim": (int, "an int"),
              "contiguous": (bool, "a bool"), "index32": (bool, "a bool")},
    "scalar": {"dtype": (str, "a dtype name")},
    "struct": {"record": (list, "a record's descr (a list)"), "itemsize": (int, "an int")},
}
_ELEMENTWISE_CALL = {
    "params": (list, "a list of parameters"), "nin": (int, "an int"),
    "index_dtype": (str, "a dtype name"), "block": (int, "an int"),
    "max_size": (int, "an int"), "return_tuple": (bool, "a bool"), "no_return": (bool, "a bool"),
}
_ELEMENTWISE_PARAM = {"name": (str, "a str"), "dtype": (str, "a str"),
                      "is_output": (bool, "a bool"), "scalar": (bool, "a bool")}


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
            what = f"entries[{i}] ({entry['name']}).params[{j}]"
            _check_fields(param, _PARAM, where, what)
            if param["offset"] < 0 or param["size"] <= 0:
                _refuse(where, f"{what}: offset and size must be >= 0 and > 0, got "
                               f"{param['offset']}, {param['size']}")
            if "record" in param:
                _check_record(param["record"], param["size"], where, f"{what}.record")
                align = param.get("align")
                if type(align) is not int or align < 1 or align & (align - 1):
                    _refuse(where, f"{what}.align must be a power of two, got {align!r}")
        _check_call(entry, where, f"entries[{i}] ({entry['name']}).call")


def _check_call(entry: dict, where: str, what: str) -> None:
    """The fields of an entry's ``call`` the loader reads for its kind (a JIT kernel's
    arguments, an elementwise kernel's parameters), each of the type the loader needs."""
    call = entry["call"]
    if entry["kind"] == "jit":
        _check_fields(call, _JIT_CALL, where, what)
        for k, arg in enumerate(call["args"]):
            _check_fields(arg, _JIT_ARG, where, f"{what}.args[{k}]")
            kinds = _JIT_ARG_KINDS.get(arg["type"])
            if kinds is None:
                _refuse(where, f"{what}.args[{k}]'s 'type' must be one of "
                               f"{sorted(_JIT_ARG_KINDS)}, got {arg['type']!r}")
            _check_fields(arg, kinds, where, f"{what}.args[{k}]")
            if arg["type"] == "struct":
                size = entry["params"][k]["size"] if k < len(entry["params"]) else None
                if size is not None and size != arg["itemsize"]:
                    _refuse(where, f"{what}.args[{k}]: a struct of {arg['itemsize']} bytes for "
                                   f"a parameter of {size} bytes")
                _check_record(arg["record"], arg["itemsize"], where, f"{what}.args[{k}].record")
            elif arg["dtype"] not in dtypes.BY_NAME:
                _refuse(where, f"{what}.args[{k}]'s 'dtype' must be a dtype kernels take "
                               f"({', '.join(dtypes.BY_NAME)}), got {arg['dtype']!r}")
    elif entry["kind"] == "elementwise":
        _check_fields(call, _ELEMENTWISE_CALL, where, what)
        for k, param in enumerate(call["params"]):
            _check_fields(param, _ELEMENTWISE_PARAM, where, f"{what}.params[{k}]")
        if not 0 <= call["nin"] <= len(call["params"]) or call["block"] < 1:
            _refuse(where, f"{what}: 'nin' must be 0..{len(call['params'])} and 'block' >= 1, "
                           f"got {call['nin']}, {call['block']}")


def _check_record(descr, size: int, where: str, what: str) -> None:
    """A struct's record layout (NumPy's ``descr`` as JSON): a record dtype of ``size``
    bytes whose every field is a type kernels take (nested records too)."""
    try:
        dtype = records.record_from_json(descr)
    except (TypeError, ValueError, KeyError, IndexError):
        _refuse(where, f"{what} is not a record layout (NumPy's descr, as export writes it): "
                       f"{descr!r}")
    if dtype.fields is None or not dtype.names:
        _refuse(where, f"{what} lays out no fields: {descr!r}")
    if dtype.itemsize != size:
        _refuse(where, f"{what} lays out {dtype.itemsize} bytes, but the argument is {size}")
    for path, _, leaf in records.leaves(dtype):  # V<n>: bytes the export kept opaque
        if leaf.base not in dtypes.ROW_OF and leaf.base.kind != "V":
            _refuse(where, f"{what}: field {path!r} is {leaf}, no type kernels take")


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
