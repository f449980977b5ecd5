"""The process-wide memo of kernel builds: a kernel object built again costs almost nothing.

Much CuPy code builds its kernel objects inside the function it calls in a loop
(``RawKernel(code, name)(grid, block, args)``). Each new object would otherwise pay what
a first build pays: the compile cache's key (the toolkit's identity, the user's headers),
parsing the kernel's C parameters, loading the module on the device, reading the
parameter layout from the CUBIN, packing plans and generated launch code. The memo keeps
what a build produced under a key of everything that decides it, so a second object with
the same definition reuses it all.

A key is a tuple the kernel kinds make (kernels/base.py, ``Kernel._memoized``): the kind,
the source, the kernel's name, the options, name expressions, preamble and whatever else
the kind reads, the Arch built for, jitkern's version identity (the one the disk cache
keys on) and the digest of the user's headers the options name (``-I`` folders,
``-include`` files). What is stored is the kind's to say: a
:class:`~.module.Function` (which keeps, per device, its loaded module, function handle,
parameter layout, packing plans and the generated launchers made from them), a parsed
parameter list, normalised options, a simulator's translated kernel (:func:`translated`,
under its own keys: ``key -> built object`` is all the memo knows).

The memo is a least-recently-used map of at most ``settings.memo_size`` entries (1024
unless ``JITKERN_MEMO_SIZE`` says otherwise; 0 turns it off), so a program that makes endless
distinct kernels holds a bounded number of builds. :func:`clear` empties it
(``jitkern.clear_memo()`` and ``jitkern.clear_cache()`` call it; a kernel object's
``clear_memo()`` drops its own entries). Nothing here touches the disk.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from .. import config
from ..config import settings
from ..errors import JitkernValueError
from . import driver


_entries: OrderedDict = OrderedDict()
# Builds hold modules loaded through the driver: a fresh memo under driver.use(fake)
driver.resets(globals(), _entries=OrderedDict)
_lock = threading.RLock()
#: hits, builds (misses that built) and evictions since the process started (tests, reports)
stats = {"hits": 0, "builds": 0, "evictions": 0}


def get(key):
    """The build kept under ``key`` (now the most recently used), or None."""
    value = _entries.get(key)
    if value is not None:
        stats["hits"] += 1
        try:
            _entries.move_to_end(key)
        except KeyError:  # evicted by another thread in between: still a valid build
            pass
    return value


def put(key, value):
    """Keep ``value`` under ``key``, evicting the least recently used beyond the bound;
    returns ``value``."""
    bound = settings.memo_size
    if bound <= 0:
        return value
    with _lock:
        _entries[key] = value
        _entries.move_to_end(key)
        while len(_entries) > bound:
            _entries.popitem(last=False)
            stats["evictions"] += 1
    return value


def built(key, build):
    """The build under ``key``, made by ``build()`` on a miss (and kept). Two threads
    missing at once may both build; the first kept wins, and both get that one."""
    value = get(key)
    if value is not None:
        return value
    value = build()
    stats["builds"] += 1
    with _lock:
        kept = _entries.get(key)
        if kept is not None:
            return kept
        return put(key, value)


def translated(key: tuple, translate, valid=None):
    """A simulator's translation of a kernel (the Python it runs for a CUDA C source, or for
    a JIT kernel's argument types), kept in the memo under ``("translated", *key)``:
    ``key`` is everything that decides it (the kind, the source or definition, the name,
    the options, the bound types). A kernel object made again then runs what the first one
    translated. ``valid(kept)`` False (a global the translation read has changed since):
    translated again, and that kept instead."""
    key = ("translated", *key)
    kept = get(key)
    if kept is not None and (valid is None or valid(kept)):
        return kept
    value = translate()
    stats["builds"] += 1
    return put(key, value)


def forget(match) -> int:
    """Drop every entry whose key ``match(key)`` says; returns how many."""
    with _lock:
        dropped = [key for key in _entries if match(key)]
        for key in dropped:
            del _entries[key]
    return len(dropped)


def clear() -> None:
    """Forget every build (the next kernel object of each definition builds again, from the
    compile cache: nothing is compiled that the cache holds)."""
    with _lock:
        _entries.clear()


config.on_cache_change.append(clear)  # another cache folder: its own builds


def resize(size: int) -> None:
    """Keep at most ``size`` entries from now on (0: keep nothing; ``settings.memo_size``)."""
    if type(size) is not int or size < 0:
        raise JitkernValueError(f"memo size: expected a non-negative int, got {size!r}")
    with _lock:
        settings.memo_size = size
        while len(_entries) > size:
            _entries.popitem(last=False)
            stats["evictions"] += 1


def size() -> int:
    """How many builds are kept now."""
    return len(_entries)
