"""CuPy-compatible helpers around the compile cache: compile_with_cache, memoize, clear_memo."""

from __future__ import annotations

import functools
import threading

from ..toolchain import cache, nvrtc as compiler
from ..runtime import driver, memo as builds
from ..runtime.module import load
from ..config import settings
from ..errors import JitkernRuntimeError
from ..kernels.base import resolve_arch
from ..kernels.raw import _prepare

_memos: list[dict] = []
_memos_lock = threading.Lock()


def compile_with_cache(source: str, options=(), arch=None, cache_dir=None,
                       prepend_cupy_headers=False, backend: str = "nvrtc",
                       translate_cucomplex: bool = False, enable_cooperative_groups: bool = False,
                       name_expressions=None, log_stream=None, jitify: bool = False):
    """Compile ``source`` (through the cache) and load it on the current device.

    Returns the loaded module; use ``module.function_handle(name)`` or, more
    conveniently, :class:`jitkern.RawModule`. ``cache_dir`` overrides the cache
    folder for this call's disk lookup. ``prepend_cupy_headers`` is accepted
    for compatibility and ignored (jitkern's headers are always on the include path).
    """
    src, opts = _prepare(source, options, translate_cucomplex, jitify, "compile_with_cache", backend)
    target = resolve_arch(arch)
    if cache_dir is not None:
        saved = settings.cache_dir
        settings.cache_dir = cache_dir
        try:
            binary = compiler.compile_source(src, options=opts, name_expressions=name_expressions or (),
                                             arch=target, log_stream=log_stream, backend=backend,
                                             _normalized=True)
        finally:
            settings.cache_dir = saved
    else:
        binary = compiler.compile_source(src, options=opts, name_expressions=name_expressions or (),
                                         arch=target, log_stream=log_stream, backend=backend,
                                         _normalized=True)
    if arch is not None:
        return binary
    return load(binary, driver.current_device_id())


def memoize(for_each_device: bool = False):
    """Cache a function's results by its (hashable) arguments.

    With ``for_each_device=True`` results are kept per current device. Cleared by
    :func:`clear_memo`.
    """

    def decorator(func):
        memo: dict = {}
        with _memos_lock:
            _memos.append(memo)

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            key = (args, tuple(sorted(kwargs.items())))
            if for_each_device:
                key = (driver.current_device_id(), key)
            try:
                return memo[key]
            except KeyError:
                pass
            value = memo[key] = func(*args, **kwargs)
            return value

        wrapper.cache = memo
        return wrapper

    return decorator


def clear_memo() -> None:
    """Forget every :func:`memoize` result, the memo of kernel builds (a kernel object made
    from now on builds again; objects that exist keep what they hold) and the in-memory
    compile cache (docs/cache.md)."""
    with _memos_lock:
        for memo in _memos:
            memo.clear()
    builds.clear()
    cache.clear_memory()


def clear_cache() -> int:
    """Delete everything jitkern wrote to its disk cache (binaries, the JIT's index,
    generated launch code); returns the number of entries removed.

    Raises :class:`jitkern.JitkernRuntimeError` naming each file or folder it could not
    remove (the rest is removed).
    """
    builds.clear()
    cache.clear_memory()
    report = cache.clear_disk()
    if report.failed:
        raise JitkernRuntimeError(_not_removed(report))
    return report.removed


def _not_removed(report) -> str:
    lines = [f"  {path}: {reason}" for path, reason in report.failed]
    return (f"cache clear: removed {report.removed} entries, but could not remove "
            f"{len(report.failed)}:\n" + "\n".join(lines))
