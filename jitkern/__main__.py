"""Command line of jitkern: versions and devices (info), a demo, the kernel cache."""

from __future__ import annotations

import argparse
import errno
import os
import sys
import tempfile
import warnings

from jitkern.config import settings

# cuda-python is a metapackage; what jitkern uses are its parts, which install alone
_CUDA_PARTS = ("cuda-bindings", "cuda-core", "cuda-pathfinder")


def _version_of(dist: str) -> str | None:
    import importlib.metadata as md

    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return None


def _versions() -> list[tuple[str, str]]:
    import jitkern

    rows = [("jitkern", f"{jitkern.__version__} ({os.path.dirname(jitkern.__file__)})")]
    meta = _version_of("cuda-python")
    parts = {part: _version_of(part) for part in _CUDA_PARTS}
    if meta is not None:
        rows.append(("cuda-python", meta))
    elif any(parts.values()):
        rows.append(("cuda-python", "its parts, below (the metapackage itself is optional)"))
    else:
        rows.append(("cuda-python", "not installed (pip install cuda-core cuda-bindings)"))
    for part, version in parts.items():
        rows.append((f"  {part}", version or "not installed"))
    rows.append(("numpy", _version_of("numpy") or "not installed"))
    try:
        from jitkern.toolchain import discovery as toolchain

        rows.append(("NVRTC", "{}.{}".format(*toolchain.nvrtc_version())))
        rows.append(("NVRTC archs", " ".join(f"sm_{a}" for a in toolchain.supported_archs())))
    except Exception as exc:  # noqa: BLE001 - report, do not fail
        rows.append(("NVRTC", f"unavailable ({exc})"))
    return rows


def _devices() -> list[str]:
    from jitkern.runtime import driver

    try:
        v = driver.driver_version()
        lines = [f"{'CUDA driver':18s} {v // 1000}.{v % 1000 // 10}"]
        count = driver.device_count()
        if count == 0:
            lines.append(f"{'devices':18s} none (the driver found no GPU)")
        for i in range(count):
            major, minor = driver.compute_capability(i)
            free, total = driver.mem_info(i)
            lines.append(f"device {i:<11d} {driver.device_name(i)}, compute capability "
                         f"{major}.{minor}, {total / 2**30:.1f} GiB ({free / 2**30:.1f} GiB free)")
        return lines
    except Exception as exc:  # noqa: BLE001 - report, do not fail
        return [f"{'CUDA driver':18s} {exc}"]


def folder_state(path: str) -> str:
    """'usable', or why the cache folder cannot be written ('read-only ...', 'unusable ...')."""
    from jitkern.toolchain import cache

    existing = path
    while not os.path.lexists(existing):
        parent = os.path.dirname(existing)
        if parent == existing:
            break
        existing = parent
    if not os.path.isdir(existing):
        return f"unusable: {existing} is not a folder; caching in memory only"
    reason = cache.disabled_reason()
    if reason is not None:
        return f"off: {reason}"
    try:
        fd, probe = tempfile.mkstemp(prefix=".tmp-probe-", dir=existing)
    except OSError as exc:
        kind = "read-only" if exc.errno in (errno.EACCES, errno.EROFS) else "unusable"
        return f"{kind}: {existing}: {exc.strerror or exc}; caching in memory only"
    os.close(fd)
    os.unlink(probe)
    return "usable"


def _cache_lines() -> list[str]:
    from jitkern.toolchain import cache

    usage = cache.disk_usage_by_kind()
    entries = sum(c for c, _s in usage.values())
    size = sum(s for _c, s in usage.values())
    unreadable = cache.unreadable_folders()
    state = folder_state(settings.cache_dir)
    if unreadable:
        state = "unreadable: " + "; ".join(f"{p}: {why}" for p, why in unreadable)
    lines = [f"{'cache folder':18s} {settings.cache_dir} ({state})",
             f"{'cache entries':18s} {entries} ({_mib(size)})"
             + (" counted in the readable folders only" if unreadable else "")]
    for kind, (count, nbytes) in usage.items():
        lines.append(f"  {kind:16s} {count} in {cache.ENTRIES_FOLDER}/{cache.KINDS[kind]}/ "
                     f"({_mib(nbytes)})")
    return lines


def _mib(nbytes: int) -> str:
    """A size for people: 812 B, 40.2 KiB, 3.1 MiB."""
    if nbytes < 1024:
        return f"{nbytes} B"
    if nbytes < 2**20:
        return f"{nbytes / 1024:.1f} KiB"
    return f"{nbytes / 2**20:.1f} MiB"


def cmd_info(_args) -> int:
    with warnings.catch_warnings():  # an unusable cache folder is reported below, once
        warnings.simplefilter("ignore", RuntimeWarning)
        rows = _versions()
    for name, version in rows:
        print(f"{name:18s} {version}")
    for line in (*_devices(), *_cache_lines()):
        print(line)
    return 0


def cmd_cache(args) -> int:
    from jitkern.toolchain import cache

    if args.action != "clear":
        for line in _cache_lines():
            print(line)
        return 0
    report = cache.clear_disk()
    print(f"removed {report.removed} cache entries from {settings.cache_dir}")
    if report.left:
        print(f"left {len(report.left)} files and folders jitkern did not write:")
        for path in report.left[:20]:
            print(f"  {path}")
        if len(report.left) > 20:
            print(f"  ... and {len(report.left) - 20} more")
    if not report.failed:
        return 0
    print(f"could not remove {len(report.failed)}:", file=sys.stderr)
    for path, reason in report.failed:
        print(f"  {path}: {reason}", file=sys.stderr)
    return 1


def cmd_demo(args) -> int:
    from jitkern.cli.demo import run_demo

    return run_demo(arch=args.arch, simulate=args.simulate, full=args.full, prog=args.prog)


def not_a_package() -> str | None:
    """Why ``import jitkern`` gave something other than the jitkern package: a ``jitkern/``
    folder without ``__init__.py`` in the current folder (a clone's root, say) that Python
    imports as a namespace package ahead of an editable install; None when it is the
    package."""
    import jitkern

    if getattr(jitkern, "__file__", None):
        return None
    where = ", ".join(getattr(jitkern, "__path__", None) or []) or "a folder"
    return (f"error: 'import jitkern' found {where}, a jitkern/ folder that is not the jitkern "
            "package (it has no __init__.py: a clone's root?), ahead of the installed jitkern; "
            "run from another folder, or from inside the clone")


def shadowed_install() -> str | None:
    """The installed jitkern hidden by a ``jitkern/`` folder in the current folder, if any."""
    import jitkern

    if not getattr(jitkern, "__file__", None):
        return None  # not the package at all: not_a_package() says so
    here = os.path.realpath(os.path.dirname(os.path.dirname(os.path.abspath(jitkern.__file__))))
    cwd = os.path.realpath(os.getcwd())
    if here != cwd:
        return None
    saved = sys.path[:]
    sys.path[:] = [p for p in sys.path if p not in ("", ".") and os.path.realpath(p) != cwd]
    try:
        for finder in sys.meta_path:
            try:
                spec = finder.find_spec("jitkern", None)
            except Exception:  # noqa: BLE001, S112 - a finder that cannot answer
                continue
            origin = spec and spec.origin
            if origin and os.path.realpath(os.path.dirname(os.path.dirname(origin))) != cwd:
                return os.path.dirname(origin)
    finally:
        sys.path[:] = saved
    return None


def _prog() -> str:
    """How the command was run: ``jitkern`` (the console script) or ``python -m jitkern``."""
    name = os.path.splitext(os.path.basename(sys.argv[0] if sys.argv else ""))[0]
    return "jitkern" if name == "jitkern" else "python -m jitkern"


def _parser() -> argparse.ArgumentParser:
    import jitkern

    parser = argparse.ArgumentParser(
        prog=_prog(),
        description="jitkern: CUDA kernels from Python, compiled with NVRTC.")
    parser.set_defaults(prog=parser.prog)
    parser.add_argument("--version", action="version", version=f"jitkern {jitkern.__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    info = sub.add_parser("info", help="show versions, devices and the kernel cache",
                          description="Show versions, devices and the kernel cache.")
    info.set_defaults(func=cmd_info)
    demo = sub.add_parser("demo", help="compile and run example kernels, checked against NumPy",
                          description="Compile and run example kernels of every kind, checked "
                                      "against NumPy (without a GPU: show their CUDA).")
    demo.add_argument("--arch", default=None,
                      help="without a GPU, the arch to compile for (default sm_90)")
    demo.add_argument("--simulate", action="store_true",
                      help="run the demos of every kernel kind on the CPU with jitkern's simulator (no GPU needed)")
    demo.add_argument("--full", action="store_true",
                      help="without a GPU, show all the generated CUDA (the string kernels' "
                           "prelude included), not only each kernel as written")
    demo.set_defaults(func=cmd_demo)
    cache_p = sub.add_parser("cache", help="show or clear the on-disk kernel cache",
                             description="Show the on-disk cache (folder, entries by kind, "
                                         "size), or clear everything jitkern wrote there.")
    cache_p.add_argument("action", nargs="?", choices=["info", "clear"], default="info",
                         help="info (the default): show the cache; clear: remove its entries")
    cache_p.set_defaults(func=cmd_cache)
    return parser


def main(argv=None) -> int:
    problem = not_a_package()
    if problem is not None:
        print(problem, file=sys.stderr)
        return 2
    hidden = shadowed_install()
    if hidden is not None:
        import jitkern

        print(f"note: running the jitkern in {os.path.dirname(jitkern.__file__)} (a jitkern/ "
              f"folder in the current folder), which shadows the installed one in {hidden}; "
              "run from another folder to use the installed jitkern", file=sys.stderr)
    args = _parser().parse_args(argv)
    try:
        status = args.func(args)
        sys.stdout.flush()  # a reader that went away (| head) is found here, not at exit
    except BrokenPipeError:
        # the output's reader stopped reading: not an error of the command; point stdout at
        # /dev/null so Python's exit does not fail flushing it again (Python's docs, "Note on
        # SIGPIPE"), and exit as a program the pipe's SIGPIPE ended does
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 128 + 13
    return status


if __name__ == "__main__":
    sys.exit(main())
