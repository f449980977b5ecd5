"""Command line: ``python -m jitkern info | demo | cache clear``."""

from __future__ import annotations

import argparse
import sys


def _versions() -> list[tuple[str, str]]:
    import importlib.metadata as md

    import jitkern

    rows = [("jitkern", jitkern.__version__)]
    for dist in ("cuda-python", "cuda-bindings", "cuda-core", "cuda-pathfinder", "numpy"):
        try:
            rows.append((dist, md.version(dist)))
        except md.PackageNotFoundError:
            rows.append((dist, "not installed"))
    try:
        from jitkern.backend import toolchain

        rows.append(("NVRTC", "%d.%d" % toolchain.nvrtc_version()))
        rows.append(("NVRTC archs", " ".join(f"sm_{a}" for a in toolchain.supported_archs())))
    except Exception as exc:  # noqa: BLE001 - report, do not fail
        rows.append(("NVRTC", f"unavailable ({exc})"))
    return rows


def cmd_info(_args) -> int:
    from jitkern.backend import cache, driver
    from jitkern.config import settings

    for name, version in _versions():
        print(f"{name:16s} {version}")
    try:
        v = driver.driver_version()
        print(f"{'CUDA driver':16s} {v // 1000}.{v % 1000 // 10}")
        count = driver.device_count()
        if count == 0:
            print("devices          none (the driver found no GPU)")
        for i in range(count):
            major, minor = driver.compute_capability(i)
            free, total = driver.mem_info(i)
            print(f"device {i:<9d} {driver.device_name(i)}, compute capability {major}.{minor}, "
                  f"{total / 2**30:.1f} GiB ({free / 2**30:.1f} GiB free)")
    except Exception as exc:  # noqa: BLE001
        print(f"{'CUDA driver':16s} {exc}")
    entries, size = cache.disk_usage()
    state = "on" if settings.disk_cache else "off (JITKERN_CACHE=0)"
    print(f"{'cache':16s} {cache.kernels_dir()} ({state}): {entries} entries, {size / 2**20:.1f} MiB")
    return 0


def cmd_cache(args) -> int:
    from jitkern.backend import cache

    if args.action == "clear":
        removed = cache.clear_disk()
        print(f"removed {removed} cached kernel(s) from {cache.kernels_dir()}")
    else:
        entries, size = cache.disk_usage()
        print(f"{cache.kernels_dir()}: {entries} entries, {size / 2**20:.1f} MiB")
    return 0


def cmd_demo(args) -> int:
    from jitkern._demo import run_demo

    return run_demo(arch=args.arch, simulate=args.simulate)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jitkern", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="versions, devices and the kernel cache").set_defaults(func=cmd_info)
    demo = sub.add_parser("demo", help="compile and run example kernels, checked against NumPy")
    demo.add_argument("--arch", default=None,
                      help="without a GPU, the arch to compile for (default sm_90)")
    demo.add_argument("--simulate", action="store_true",
                      help="run the JIT demos on the CPU with jitkern's simulator (no GPU needed)")
    demo.set_defaults(func=cmd_demo)
    cache_p = sub.add_parser("cache", help="show or clear the on-disk kernel cache")
    cache_p.add_argument("action", choices=["clear", "info"])
    cache_p.set_defaults(func=cmd_cache)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
