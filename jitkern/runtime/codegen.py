"""Generated Python (launchers, packers), compiled once per text and kept in the cache.

Every kernel kind generates a small Python function per argument signature (see
:mod:`.launcher`, which runs the code objects kept here). ``compile()`` of such a function costs 0.1-0.5 ms, which a kernel's
first call in a fresh process would otherwise pay once or twice even when its binary
is in the disk cache. The code objects are therefore memoised by their text, and kept
on disk next to the kernels (marshalled, keyed by the text and the interpreter's
bytecode version, checksummed like every cache entry), so a later process loads them.
"""

from __future__ import annotations

import importlib.util
import marshal
import threading

from ..toolchain import cache

_memo: dict[tuple[str, str], object] = {}
_lock = threading.Lock()
_BYTECODE = importlib.util.MAGIC_NUMBER.hex()


def compiled(source: str, filename: str):
    """The code object of ``source`` (module mode), from memory, the disk cache or compile()."""
    memo_key = (source, filename)
    code = _memo.get(memo_key)
    if code is not None:
        return code
    key = cache.make_key("generated-python", _BYTECODE, filename, source)
    entry = cache.disk_get(key, "python-code")
    if entry is not None:
        try:
            code = marshal.loads(entry[1])
        except (EOFError, ValueError, TypeError):
            code = None
        if code is not None and getattr(code, "co_filename", None) != filename:
            code = None
    if code is None:
        code = compile(source, filename, "exec")
        cache.disk_put(key, {"filename": filename}, marshal.dumps(code), "python-code")
    with _lock:
        _memo[memo_key] = code
    return code


def launch_source(obj) -> str | None:
    """The Python source of the launcher jitkern generated for ``obj``, or None.

    ``obj`` is a kernel object (RawKernel, ``@rawkernel``, ElementwiseKernel: the launcher
    its call runs now, generated for the last argument signature; None while it is still
    on the general path), a ``kernel[grid, block]`` partial, a bound launch, or a
    generated function. Reading it changes nothing: it is the text that was compiled."""
    fn = getattr(obj, "func", obj)  # kernel objects and bound launches are partials
    return getattr(fn, "launch_source", None)
