"""A Mandelbrot image computed by a JIT kernel with complex numbers, written to a PNG.

Run: python examples/jit_mandelbrot.py [--simulate] [--out out.png]
Needs a CUDA GPU; --simulate (or JITKERN_SIMULATE=1) computes a smaller image on jitkern's
simulated device (examples/README.md).
Without --out the PNG goes to the system's temporary folder (never into the current folder).
The PNG is written with zlib and struct only (no imaging library needed).
"""

import argparse
import os
import struct
import sys
import tempfile
import zlib

import numpy as np

import jitkern
from gpu_or_simulated import NEEDS_GPU, device, simulated
from jitkern import jit

MAX_ITER = 200


@jitkern.rawkernel(device=True)
def escape_time(c, max_iter):
    z = c
    for k in range(max_iter):
        if z.real * z.real + z.imag * z.imag > 4.0:
            return k
        z = z * z + c
    return max_iter


@jitkern.rawkernel()
def mandelbrot(image, x0, y0, scale, max_iter):
    x, y = jit.grid(2)
    height, width, _channels = image.shape
    if x < width and y < height:
        c = complex(x0 + x * scale, y0 + y * scale)
        n = escape_time(c, max_iter)
        t = n / max_iter
        # a smooth blue-gold palette
        image[y, x, 0] = np.uint8(255 * min(1.0, 9 * (1 - t) * t * t * t))
        image[y, x, 1] = np.uint8(255 * min(1.0, 15 * (1 - t) * (1 - t) * t * t))
        image[y, x, 2] = np.uint8(255 * min(1.0, 8.5 * (1 - t) * (1 - t) * (1 - t) * t))


def write_png(path: str, rgb: np.ndarray) -> None:
    height, width, _ = rgb.shape
    raw = b"".join(b"\x00" + rgb[row].tobytes() for row in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    with open(path, "wb") as f:
        f.write(
            b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(raw, 6))
            + chunk(b"IEND", b"")
        )


def main(argv=None):
    parser = argparse.ArgumentParser(description="A Mandelbrot image from a JIT kernel, as a PNG.")
    parser.add_argument("--simulate", action="store_true",
                        help="compute a smaller image on jitkern's simulated device")
    parser.add_argument("--out", help="the PNG to write (default: mandelbrot.png in the "
                                      "system's temporary folder)")
    parser.add_argument("legacy_out", nargs="?", help=argparse.SUPPRESS)  # the old spelling
    args_ns = parser.parse_args(sys.argv[1:] if argv is None else argv)
    path = args_ns.out or args_ns.legacy_out or os.path.join(tempfile.gettempdir(),
                                                             "mandelbrot.png")
    on = device(["--simulate"] if args_ns.simulate else [], "jit_mandelbrot.py")
    if on is None:
        return NEEDS_GPU  # and no PNG written
    with on:
        width, height = (120, 80) if simulated() else (1200, 800)
        scale = 3.0 / width
        grid = ((width + 15) // 16, (height + 15) // 16)
        image = jitkern.zeros((height, width, 3), np.uint8)
        mandelbrot[grid, (16, 16)](image, -2.2, -1.0, scale, MAX_ITER)
        write_png(path, image.get())
    print(f"wrote {path} ({width}x{height})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
