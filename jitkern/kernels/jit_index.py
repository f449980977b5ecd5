"""The JIT's on-disk index: (file, function, source lines, mode, options, signature) ->
what emission produced (:class:`Generated`), so a new process skips parsing and emission.

An entry of the shared disk cache (kind "jit-index"): keyed on jitkern's version and
code-generator identity as well, checksummed, and a bad entry is a miss. Its binaries
are named per target (``Arch.name``) by their compile-cache keys; where the kernel's
options name the user's own header folders (``-I``, ``-include``), the slot also names
the digest of the headers the source reads there (:func:`binary_slot`), so an edited
header is a miss of the slot, not the old binary.
"""

from __future__ import annotations

import json

from ..compiler import frontend
from ..compiler.captured import fingerprints_hold
from ..runtime.debugcheck import Site
from ..toolchain import cache, includes, nvrtc

INDEX_VERSION = 4  # 4: arch requirements stored as data ("needs")


class Generated:
    """What emission produced; all of it is stored in the on-disk index."""

    def __init__(self, source, symbol, plans, cooperative, fingerprints, filename, binaries,
                 needs=(), sites=()):
        self.binaries = binaries  # Arch.name -> compile-cache key of the binary
        self.source = source
        self.symbol = symbol
        self.plans = plans  # per argument: list of ('shape'|'stride', axis)
        self.cooperative = cooperative
        self.fingerprints = fingerprints
        self.filename = filename
        self.needs = tuple(map(tuple, needs))  # (what, span, cc) per use needing a newer GPU
        self.sites = tuple(sites)  # debug builds: debugcheck.Site per checked access


def binary_slot(kernel, generated: Generated, target) -> str:
    """The name ``generated.binaries`` keeps ``target``'s binary under: the target, and the
    digest of every header from the user's folders the source can read (the binary's own
    compile key covered those contents, so an edit must not reach it through the index)."""
    options = nvrtc.normalize_options(kernel.options)
    headers = includes.user_headers_digest(generated.source, options)
    return f"{target.name}+{headers[:32]}" if headers else target.name


def index_key(kernel, types: tuple) -> str | None:
    digest = frontend.source_digest(kernel.py_func)
    if digest is None:
        return None
    parts = (INDEX_VERSION, digest, kernel.mode, kernel.options, tuple(repr(t) for t in types))
    if kernel.debug:  # (kept out of normal keys, so their entries stay valid)
        parts += ("debug",)
    return cache.make_key("jit-index", *parts)


def load_index(kernel, types: tuple) -> Generated | None:
    key = index_key(kernel, types)
    if key is None:
        return None
    entry = cache.disk_get(key, "jit-index")
    if entry is None:
        return None
    generated = _decode_index(entry[1])
    if generated is None:
        cache.stats["corrupt"] += 1  # the next store replaces it
        return None
    if not fingerprints_hold(kernel.py_func, generated.fingerprints):
        return None
    return generated


def _decode_index(payload: bytes) -> Generated | None:
    """The Generated an index entry holds, or None unless every field has its shape."""
    try:
        data = json.loads(payload)
        fields = [data[name] for name in _INDEX_FIELDS]
    except (ValueError, TypeError, KeyError):
        return None
    if not all(check(value) for check, value in zip(_INDEX_FIELDS.values(), fields)):
        return None
    *plain, sites = fields
    try:
        return Generated(*plain, [Site.from_json(site) for site in sites])
    except (TypeError, ValueError):
        return None


def _is_plans(value) -> bool:
    return isinstance(value, list) and all(
        isinstance(p, list) and all(
            isinstance(item, list) and len(item) == 2 and item[0] in ("shape", "stride")
            and isinstance(item[1], int) and not isinstance(item[1], bool) for item in p)
        for p in value)


def _is_need(value) -> bool:
    return (isinstance(value, list) and len(value) == 3 and isinstance(value[0], str)
            and isinstance(value[1], str) and type(value[2]) is int)


def _is_str_map(value, depth: int) -> bool:
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        return False
    if depth == 1:
        return all(isinstance(v, str) for v in value.values())
    return all(_is_str_map(v, depth - 1) for v in value.values())


# field of an index entry (in Generated's argument order) -> its check
_INDEX_FIELDS = {
    "source": lambda v: isinstance(v, str) and bool(v),
    "symbol": lambda v: isinstance(v, str) and v.isidentifier(),
    "plans": _is_plans,
    "cooperative": lambda v: isinstance(v, bool),
    "fingerprints": lambda v: _is_str_map(v, 2),
    "filename": lambda v: isinstance(v, str),
    "binaries": lambda v: _is_str_map(v, 1),
    "needs": lambda v: isinstance(v, list) and all(_is_need(x) for x in v),
    "sites": lambda v: isinstance(v, list) and all(isinstance(x, list) and len(x) == 4 for x in v),
}


def store_index(kernel, types: tuple, generated: Generated) -> None:
    key = index_key(kernel, types)
    if key is None:
        return
    data = {name: getattr(generated, name) for name in _INDEX_FIELDS}
    data["sites"] = [site.to_json() for site in generated.sites]
    cache.disk_put(key, {}, json.dumps(data).encode(), "jit-index")
