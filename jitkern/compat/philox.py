"""Philox4x32-10 (Salmon et al., SC'11, the Random123 generator) and the draws
``jitkern.random`` makes from it, as JIT kernels (the device) and as NumPy (the host).

The counter scheme. A stream is a 64-bit key (the seed) and a 64-bit offset (blocks
drawn so far). Block ``b`` of a draw is Philox4x32-10 of the counter
``(lo32(offset + b), hi32(offset + b), c2, c3)`` (``c2 = c3 = 0`` for ``jitkern.random``)
under the key ``(lo32(seed), hi32(seed))``: four 32-bit words. A draw of ``n`` values takes
``ceil(n / per_block)`` blocks and advances the offset by that many, so each call gives new
numbers and the same seed gives the same numbers, on the GPU and on the host.

What a block gives (element ``j`` of a draw lives in block ``j // per_block``):

- float32 uniform, 4 per block: word ``w`` -> ``(w >> 8) * 2**-24`` in [0, 1);
- float64 uniform, 2 per block: words ``(a, b)`` -> ``((a >> 5) * 2**26 + (b >> 6)) * 2**-53``;
- normal, a Box-Muller pair per two uniforms (float32: 2 pairs per block from single words;
  float64: 1 pair from the two double uniforms), ``u1`` taken in (0, 1] so its log is finite,
  computed in float64 and rounded to the dtype: ``sqrt(-2 log u1) * (cos, sin)(2 pi u2)``;
- integers in ``[low, low + span)``, 2 per block: words ``(a, b)`` -> ``low + (b * 2**32 + a)
  % span`` (a bias below ``span / 2**64``).

Uniform values and integers are bit-identical on the GPU and on the host; normal values
may differ in the last bits (CUDA's and NumPy's ``log``/``cos`` round differently).
"""

from __future__ import annotations

import concurrent.futures
import math
import os

import numpy

from .. import jit
from ..jit import rawkernel

M0, M1 = numpy.uint32(0xD2511F53), numpy.uint32(0xCD9E8D57)
W0, W1 = numpy.uint32(0x9E3779B9), numpy.uint32(0xBB67AE85)
ROUNDS = 10
_MASK = numpy.uint64(0xFFFFFFFF)
_SHIFT = numpy.uint64(32)

#: values each block gives, per (draw kind, dtype char)
PER_BLOCK = {("uniform", "f"): 4, ("uniform", "d"): 2, ("normal", "f"): 4, ("normal", "d"): 2,
             ("integers", ""): 2, ("words", ""): 4}  # fmt: skip


def blocks_for(kind: str, dtype, n: int) -> int:
    char = numpy.dtype(dtype).char if kind in ("uniform", "normal") else ""
    per = PER_BLOCK[(kind, char)]
    return -(-n // per)


# ---------------------------------------------------------------------------
# host (NumPy, vectorised over blocks, a chunk of blocks at a time)
#
# The same arithmetic as the kernels below, element for element, so a draw is bit-identical
# to the simulated kernel's (tests/compat check it). Fast enough to stand in for the kernel
# while simulating: the state is four uint32 arrays and each round's two 32x32->64-bit
# products are written into uint64 buffers whose halves (a little-endian view) are the next
# words, so a round is two multiplies and four XORs; and a draw runs CHUNK blocks at a time,
# so every array of a chunk stays in the CPU's cache.

#: blocks per chunk of a host draw (a test seam: a small one makes small draws span chunks)
CHUNK = 1 << 14
#: threads a large host draw shares its chunks among (at most the CPUs)
MAX_THREADS = 4
_U32, _U64 = numpy.uint32, numpy.uint64


def philox_host(c0, c1, c2, c3, k0: int, k1: int):
    """Philox4x32-10 of each counter ``(c0[i], c1[i], c2[i], c3[i])`` (uint32 arrays or scalars)
    under the key ``(k0, k1)``: four uint32 arrays."""
    c = numpy.broadcast_arrays(*[numpy.asarray(numpy.asarray(v, numpy.uint64) & _MASK, _U32)
                                 for v in (c0, c1, c2, c3)])
    shape = c[0].shape
    words = _rounds(*(v.reshape(-1) for v in c), int(k0), int(k1))
    return tuple(numpy.ascontiguousarray(w).reshape(shape) for w in words)


def _rounds(c0, c1, c2, c3, k0: int, k1: int) -> tuple:
    """The ten rounds on uint32 arrays of one length (``c2``/``c3`` may be scalars): four
    uint32 arrays, two of them strided views of a product buffer."""
    m = len(c0)
    products = [numpy.empty(m, _U64) for _ in range(4)]  # two per round, alternating
    for r in range(ROUNDS):
        p0, p1 = products[2 * (r & 1)], products[2 * (r & 1) + 1]
        numpy.multiply(c0, _U64(M0), out=p0)
        numpy.multiply(c2, _U64(M1), out=p1)
        half0, half1 = p0.view(_U32).reshape(m, 2), p1.view(_U32).reshape(m, 2)  # (lo, hi)
        c0 = numpy.bitwise_xor(half1[:, 1], c1)
        c0 ^= _U32((k0 + r * int(W0)) & 0xFFFFFFFF)
        c2 = numpy.bitwise_xor(half0[:, 1], c3)
        c2 ^= _U32((k1 + r * int(W1)) & 0xFFFFFFFF)
        c1, c3 = half1[:, 0], half0[:, 0]  # read before this buffer is written again
    return c0, c1, c2, c3


def _chunk_words(start: int, m: int, seed: int, offset: int, c2: int = 0, c3: int = 0):
    """The words w0..w3 (uint32 arrays of ``m``) of blocks ``start..start+m-1`` of a draw."""
    ctr = numpy.arange(m, dtype=_U64)
    ctr += _U64((offset + start) % 2**64)  # wraps as the kernels' uint64 counter does
    halves = ctr.view(_U32).reshape(m, 2)
    return _rounds(halves[:, 0], halves[:, 1], _U32(c2), _U32(c3), seed & 0xFFFFFFFF, seed >> 32)


def _each_chunk(nblocks: int, work) -> None:
    """``work(start, m)`` for each chunk of ``nblocks`` blocks; on several threads when
    there are several chunks and CPUs (NumPy's loops release the GIL; each chunk writes its
    own rows, so the values do not depend on how the chunks are shared out)."""
    starts = range(0, nblocks, CHUNK)
    workers = min(MAX_THREADS, os.cpu_count() or 1, len(starts))
    if workers <= 1:
        for start in starts:
            work(start, min(CHUNK, nblocks - start))
        return
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:  # per call: fork-safe
        for done in [pool.submit(work, st, min(CHUNK, nblocks - st)) for st in starts]:
            done.result()


def _host_draw(n: int, per: int, dtype, seed: int, offset: int, fill, out=None):
    """``n`` values of ``dtype``, ``per`` per block, chunk by chunk: ``fill(words, rows)``
    writes each chunk's, element for element what the kernel computes, into ``rows[:, j]``
    (``rows``: a view of ``out``, a contiguous array of ``n``, except for a last block that
    ``n`` cuts short)."""
    out = numpy.empty(n, dtype) if out is None else out
    flat = out.reshape(-1)

    def work(start: int, m: int) -> None:
        words = _chunk_words(start, m, seed, offset)
        if (start + m) * per <= n:
            fill(words, flat[start * per:(start + m) * per].reshape(m, per))
        else:
            rows = numpy.empty((m, per), dtype)
            fill(words, rows)
            flat[start * per:] = rows.reshape(-1)[:n - start * per]

    _each_chunk(-(-n // per), work)
    return out


def words_host(nblocks: int, seed: int, offset: int, c2: int = 0, c3: int = 0) -> numpy.ndarray:
    """The raw words of ``nblocks`` blocks, block after block (uint32, ``4 * nblocks``)."""
    out = numpy.empty((nblocks, 4), _U32)

    def work(start: int, m: int) -> None:
        out[start:start + m] = numpy.stack(_chunk_words(start, m, seed, offset, c2, c3), axis=1)

    _each_chunk(nblocks, work)
    return out.reshape(-1)


# The conversions, each a sequence of NumPy operations in the kernel's order (in place where
# the kernel's expression allows: every operation rounds once, as the kernel's does).


def _u24(w) -> numpy.ndarray:
    u = (w >> numpy.uint32(8)).astype(numpy.float64)
    u *= 2.0**-24
    return u


def _u53(a, b) -> numpy.ndarray:
    u = (a >> numpy.uint32(5)).astype(numpy.float64)
    u *= 67108864.0
    u += (b >> numpy.uint32(6)).astype(numpy.float64)
    u *= 2.0**-53
    return u


def _box_muller(u1, u2) -> tuple:
    """``sqrt(-2 log(1 - u1)) * (cos, sin)(2 pi u2)``; ``u1`` and ``u2`` are overwritten."""
    r = numpy.subtract(1.0, u1, out=u1)
    numpy.log(r, out=r)
    r *= -2.0
    numpy.sqrt(r, out=r)
    t = numpy.multiply(2.0 * math.pi, u2, out=u2)
    z0 = numpy.cos(t)
    z0 *= r
    r *= numpy.sin(t, out=t)
    return z0, r


def _scaled(z, loc: float, scale: float, into) -> None:
    """``into[...] = loc + scale * z`` (rounded to ``into``'s dtype once, at the end)."""
    if scale != 1.0:  # (z * 1.0 is z, bit for bit)
        z *= scale
    numpy.add(z, loc, out=into)  # (+ 0.0 is not: it turns -0.0 into 0.0, as the kernel does)


def uniform_host(n: int, dtype, seed: int, offset: int, low: float, scale: float, out=None):
    """``n`` values ``low + scale * u``, ``u`` uniform in [0, 1), of ``dtype`` (into ``out``,
    a contiguous array of ``n``, when given)."""
    dtype = numpy.dtype(dtype)
    lo, sc = dtype.type(low), dtype.type(scale)

    def fill(w, rows):
        if dtype.char == "f":  # float32 arithmetic, as the kernel's
            for j in range(4):
                numpy.add(lo, sc * _u24(w[j]).astype(dtype), out=rows[:, j])
        else:
            for j in range(2):
                _scaled(_u53(w[2 * j], w[2 * j + 1]), lo, sc, rows[:, j])

    return _host_draw(n, PER_BLOCK[("uniform", dtype.char)], dtype, seed, offset, fill, out)


def normal_host(n: int, dtype, seed: int, offset: int, loc: float, scale: float, out=None):
    """``n`` normal values of mean ``loc`` and standard deviation ``scale`` (into ``out``)."""
    dtype = numpy.dtype(dtype)

    def fill(w, rows):
        if dtype.char == "f":
            pairs = (_box_muller(_u24(w[0]), _u24(w[1])), _box_muller(_u24(w[2]), _u24(w[3])))
            zs = (*pairs[0], *pairs[1])
        else:
            zs = _box_muller(_u53(w[0], w[1]), _u53(w[2], w[3]))
        for j, z in enumerate(zs):
            _scaled(z, loc, scale, rows[:, j])

    return _host_draw(n, PER_BLOCK[("normal", dtype.char)], dtype, seed, offset, fill, out)


def integers_host(n: int, dtype, seed: int, offset: int, low: int, span: int, out=None):
    """``n`` integers uniform in ``[low, low + span)``, of ``dtype`` (into ``out``)."""
    base, span = numpy.uint64(low % 2**64), numpy.uint64(span)

    def fill(w, rows):  # wraps to low + v in the dtype, as the kernel's cast does
        for j in range(2):
            rows[:, j] = (_join(w[2 * j], w[2 * j + 1]) % span + base).astype(rows.dtype)

    return _host_draw(n, 2, numpy.dtype(dtype), seed, offset, fill, out)


def _join(lo, hi) -> numpy.ndarray:
    return (hi.astype(numpy.uint64) << _SHIFT) | lo.astype(numpy.uint64)


# ---------------------------------------------------------------------------
# device (JIT kernels, one thread per block with a grid-stride loop)


@rawkernel(device=True)
def philox(c0, c1, c2, c3, k0, k1):
    """Philox4x32-10 of the counter ``(c0, c1, c2, c3)`` under the key ``(k0, k1)``."""
    for r in range(ROUNDS):
        if r > 0:
            k0 = numpy.uint32(k0 + W0)
            k1 = numpy.uint32(k1 + W1)
        p0 = numpy.uint64(M0) * numpy.uint64(c0)
        p1 = numpy.uint64(M1) * numpy.uint64(c2)
        n0 = numpy.uint32(p1 >> numpy.uint64(32)) ^ c1 ^ k0
        n2 = numpy.uint32(p0 >> numpy.uint64(32)) ^ c3 ^ k1
        c0 = n0
        c1 = numpy.uint32(p1)
        c2 = n2
        c3 = numpy.uint32(p0)
    return c0, c1, c2, c3


@rawkernel(device=True)
def block_words(b, k0, k1, offset, c2, c3):
    """The four words of block ``b`` of a draw at ``offset``."""
    ctr = offset + numpy.uint64(b)
    return philox(numpy.uint32(ctr), numpy.uint32(ctr >> numpy.uint64(32)), c2, c3, k0, k1)


@rawkernel(device=True)
def u24(w):
    return numpy.float64(w >> numpy.uint32(8)) * 5.9604644775390625e-08


@rawkernel(device=True)
def u53(a, b):
    hi = numpy.float64(a >> numpy.uint32(5))
    lo = numpy.float64(b >> numpy.uint32(6))
    return (hi * 67108864.0 + lo) * 1.1102230246251565e-16


@rawkernel()
def words_kernel(out, nblocks, k0, k1, offset, c2, c3):
    """``out[4*b : 4*b + 4]``: the words of block ``b`` (``out`` uint32, ``4 * nblocks``)."""
    start = jit.grid(1)
    step = jit.gridsize(1)
    for b in range(start, nblocks, step):
        w0, w1, w2, w3 = block_words(b, k0, k1, offset, c2, c3)
        out[4 * b] = w0
        out[4 * b + 1] = w1
        out[4 * b + 2] = w2
        out[4 * b + 3] = w3


@rawkernel()
def uniform_kernel(out, n, nblocks, k0, k1, offset, low, scale):
    """``out[j] = low + scale * u_j`` (``out`` float32: 4 per block; float64: 2)."""
    start = jit.grid(1)
    step = jit.gridsize(1)
    zero = numpy.uint32(0)
    for b in range(start, nblocks, step):
        w0, w1, w2, w3 = block_words(b, k0, k1, offset, zero, zero)
        if out.dtype == numpy.float32:
            j = 4 * b
            lo = numpy.float32(low)
            sc = numpy.float32(scale)
            if j < n:
                out[j] = lo + sc * numpy.float32(u24(w0))
            if j + 1 < n:
                out[j + 1] = lo + sc * numpy.float32(u24(w1))
            if j + 2 < n:
                out[j + 2] = lo + sc * numpy.float32(u24(w2))
            if j + 3 < n:
                out[j + 3] = lo + sc * numpy.float32(u24(w3))
        else:
            j = 2 * b
            if j < n:
                out[j] = low + scale * u53(w0, w1)
            if j + 1 < n:
                out[j + 1] = low + scale * u53(w2, w3)


@rawkernel(device=True)
def box_muller(u1, u2):
    r = math.sqrt(-2.0 * math.log(u1))
    t = 6.283185307179586 * u2
    return r * math.cos(t), r * math.sin(t)


@rawkernel()
def normal_kernel(out, n, nblocks, k0, k1, offset, loc, scale):
    """``out[j] = loc + scale * z_j``, ``z`` standard normal (Box-Muller in float64)."""
    start = jit.grid(1)
    step = jit.gridsize(1)
    zero = numpy.uint32(0)
    for b in range(start, nblocks, step):
        w0, w1, w2, w3 = block_words(b, k0, k1, offset, zero, zero)
        if out.dtype == numpy.float32:
            j = 4 * b
            z0, z1 = box_muller(1.0 - u24(w0), u24(w1))
            z2, z3 = box_muller(1.0 - u24(w2), u24(w3))
            if j < n:
                out[j] = loc + scale * z0
            if j + 1 < n:
                out[j + 1] = loc + scale * z1
            if j + 2 < n:
                out[j + 2] = loc + scale * z2
            if j + 3 < n:
                out[j + 3] = loc + scale * z3
        else:
            j = 2 * b
            z0, z1 = box_muller(1.0 - u53(w0, w1), u53(w2, w3))
            if j < n:
                out[j] = loc + scale * z0
            if j + 1 < n:
                out[j + 1] = loc + scale * z1


@rawkernel()
def integers_kernel(out, n, nblocks, k0, k1, offset, low, span):
    """``out[j] = low + r_j % span`` (64-bit words ``r``, wrapping into ``out``'s dtype)."""
    start = jit.grid(1)
    step = jit.gridsize(1)
    zero = numpy.uint32(0)
    for b in range(start, nblocks, step):
        w0, w1, w2, w3 = block_words(b, k0, k1, offset, zero, zero)
        j = 2 * b
        r0 = (numpy.uint64(w1) << numpy.uint64(32)) | numpy.uint64(w0)
        r1 = (numpy.uint64(w3) << numpy.uint64(32)) | numpy.uint64(w2)
        if j < n:
            out[j] = out.dtype.type(r0 % span + low)
        if j + 1 < n:
            out[j + 1] = out.dtype.type(r1 % span + low)


KERNELS = {"words": words_kernel, "uniform": uniform_kernel, "normal": normal_kernel,
           "integers": integers_kernel}  # fmt: skip


def launch_args(kind: str, out, n: int, seed: int, offset: int, a, b) -> tuple:
    """The arguments of ``KERNELS[kind]`` for a draw of ``n`` values into ``out``."""
    nblocks = blocks_for(kind, out.dtype, n)
    key = (numpy.uint32(seed & 0xFFFFFFFF), numpy.uint32(seed >> 32))
    head = (out, numpy.int64(n), numpy.int64(nblocks), *key, numpy.uint64(offset))
    if kind == "integers":
        return (*head, numpy.uint64(a % 2**64), numpy.uint64(b))
    return (*head, numpy.float64(a), numpy.float64(b))


def launch_shape(nblocks: int) -> tuple:
    """Grid and block for ``nblocks`` Philox blocks (a grid-stride loop covers the rest)."""
    threads = 256
    return (max(1, min(-(-nblocks // threads), 4096)), threads)


__all__ = ["KERNELS", "PER_BLOCK", "blocks_for", "launch_args", "launch_shape", "philox",
           "philox_host", "words_host"]  # fmt: skip
