"""``jitkern.random``: CuPy's ``cupy.random`` names, drawn on the device by Philox4x32-10.

``rand``, ``randn``, ``random`` (``random_sample``), ``uniform``, ``normal``,
``standard_normal``, ``randint`` and ``seed`` use one global :class:`RandomState`;
``default_rng(seed)`` returns a :class:`Generator` (``random``, ``standard_normal``,
``normal``, ``uniform``, ``integers``). Values are computed by a JIT kernel on the device
(:mod:`jitkern.compat.philox` holds the kernels and the counter scheme). The same seed gives the
same numbers; each call advances the stream. While the simulator is on
(``JITKERN_SIMULATE=1``) the same numbers are computed on the host, as NumPy arrays.

The streams are not CuPy's or NumPy's: a seed gives other numbers than ``cupy.random.seed``
or ``numpy.random.seed`` with the same value. Floating-point draws are float32 or float64
(the default), as in CuPy.
"""

from __future__ import annotations

import numbers
import os

import numpy

from .. import arrays
from ..runtime.simdevice import host_arrays
from ..errors import JitkernTypeError, JitkernValueError
from . import philox

_FLOATS = (numpy.dtype(numpy.float32), numpy.dtype(numpy.float64))
_HOST_DRAW = {"uniform": philox.uniform_host, "normal": philox.normal_host,
              "integers": philox.integers_host}  # fmt: skip


def _entropy() -> int:
    return int.from_bytes(os.urandom(8), "little")


def _seed_value(seed) -> int:
    if seed is None:
        return _entropy()
    if isinstance(seed, (numbers.Integral, numpy.integer)) and not isinstance(seed, bool):
        return int(seed) % 2**64
    if isinstance(seed, (numpy.ndarray, list, tuple)) or hasattr(seed, "__cuda_array_interface__"):
        words = numpy.asarray(arrays.asnumpy(seed)).astype(numpy.uint64).ravel()
        value = 0
        for w in words:  # fold the words into 64 bits (FNV-1a style mixing)
            value = ((value ^ int(w)) * 0x100000001B3) % 2**64
        return value
    raise JitkernTypeError(f"seed: expected None, an int or an array of ints, got "
                           f"{type(seed).__name__}")  # fmt: skip


def _shape(size) -> tuple:
    if size is None:
        return ()
    if isinstance(size, (numbers.Integral, numpy.integer)):
        size = (size,)
    try:
        shape = tuple(int(numpy.int64(s)) for s in size)
    except TypeError:
        raise JitkernTypeError(f"size: expected None, an int or a tuple of ints, got "
                               f"{size!r}") from None  # fmt: skip
    if any(s < 0 for s in shape):
        raise JitkernValueError(f"size: negative dimensions are not allowed, got {shape}")
    return shape


def _float_dtype(dtype, where: str) -> numpy.dtype:
    dt = numpy.dtype(dtype)
    if dt not in _FLOATS:
        raise JitkernTypeError(f"{where}: dtype must be float32 or float64, got {dt}")
    return dt


def _scalar(value, name: str, where: str) -> float:
    if isinstance(value, (numbers.Real, numpy.floating, numpy.integer)):
        return float(value)
    if getattr(value, "size", None) == 1 and getattr(value, "ndim", 1) == 0:
        return float(value)
    raise JitkernTypeError(f"{where}: {name} must be a number, got {type(value).__name__} "
                           "(for an array of parameters, draw standard values and scale them: "
                           "loc + scale * standard_normal(size))")  # fmt: skip


class _Stream:
    """A Philox stream: the key (``seed``) and the blocks drawn so far (``offset``)."""

    __slots__ = ("seed", "offset")

    def __init__(self, seed):
        self.seed = _seed_value(seed)
        self.offset = 0

    def draw(self, kind: str, shape: tuple, dtype: numpy.dtype, a, b):
        n = 1
        for s in shape:
            n *= s
        nblocks = philox.blocks_for(kind, dtype, n)
        offset = self.offset
        self.offset = (offset + nblocks) % 2**64
        if host_arrays():
            return _HOST_DRAW[kind](n, dtype, self.seed, offset, a, b).reshape(shape)
        out = arrays.empty(n, dtype)  # the kernels index the values in one dimension
        if n:
            grid, block = philox.launch_shape(nblocks)
            philox.KERNELS[kind](grid, block, philox.launch_args(kind, out, n, self.seed,
                                                                 offset, a, b))  # fmt: skip
        return out.reshape(shape)

    def normal(self, loc, scale, size, dtype, where: str):
        dt = _float_dtype(dtype, where)
        loc, scale = _scalar(loc, "loc", where), _scalar(scale, "scale", where)
        if scale < 0:
            raise JitkernValueError(f"{where}: scale must be non-negative, got {scale}")
        return self.draw("normal", _shape(size), dt, loc, scale)

    def integers(self, low, high, size, dtype, where: str):
        if high is None:
            low, high = 0, low
        low, high = int(low), int(high)
        if low >= high:
            raise JitkernValueError(f"{where}: low >= high ({low} >= {high})")
        dt = numpy.dtype(dtype)
        if dt.kind not in "iu":
            raise JitkernTypeError(f"{where}: dtype must be an integer type, got {dt}")
        info = numpy.iinfo(dt)
        if low < info.min or high - 1 > info.max:
            raise JitkernValueError(f"{where}: [{low}, {high}) is out of bounds for {dt}")
        if high - low >= 2**64:
            raise JitkernValueError(f"{where}: a range of 2**64 values or more is not supported")
        return self.draw("integers", _shape(size), dt, low, high - low)


class RandomState:
    """CuPy's ``cupy.random.RandomState``: a Philox4x32-10 stream on the device.

    ``RandomState(seed=None)``; ``seed=None`` takes 64 bits from the operating system.
    """

    def __init__(self, seed=None):
        self._stream = _Stream(seed)

    def seed(self, seed=None) -> None:
        """Start the stream again from ``seed`` (None: from the operating system)."""
        self._stream = _Stream(seed)

    def random_sample(self, size=None, dtype=float):
        """Uniform values in [0, 1) of ``size`` (float32 or float64)."""
        dt = _float_dtype(dtype, "random_sample")
        return self._stream.draw("uniform", _shape(size), dt, 0.0, 1.0)

    random = random_sample

    def rand(self, *size, dtype=float):
        """``random_sample(size)`` with the shape given as separate ints."""
        return self.random_sample(size, dtype)

    def uniform(self, low=0.0, high=1.0, size=None, dtype=float):
        """Uniform values in [low, high)."""
        dt = _float_dtype(dtype, "uniform")
        low, high = _scalar(low, "low", "uniform"), _scalar(high, "high", "uniform")
        return self._stream.draw("uniform", _shape(size), dt, low, high - low)

    def standard_normal(self, size=None, dtype=float):
        """Normal values of mean 0 and standard deviation 1."""
        dt = _float_dtype(dtype, "standard_normal")
        return self._stream.draw("normal", _shape(size), dt, 0.0, 1.0)

    def randn(self, *size, dtype=float):
        """``standard_normal(size)`` with the shape given as separate ints."""
        return self.standard_normal(size, dtype)

    def normal(self, loc=0.0, scale=1.0, size=None, dtype=float):
        """Normal values of mean ``loc`` and standard deviation ``scale``."""
        return self._stream.normal(loc, scale, size, dtype, "normal")

    def randint(self, low, high=None, size=None, dtype=int):
        """Integers in [low, high) (in [0, low) when ``high`` is None)."""
        return self._stream.integers(low, high, size, dtype, "randint")


class Generator:
    """NumPy's ``numpy.random.Generator`` methods over a Philox4x32-10 stream on the device
    (``jitkern.random.default_rng(seed)``)."""

    def __init__(self, seed=None):
        self._stream = _Stream(seed)

    def random(self, size=None, dtype=numpy.float64, out=None):
        """Uniform values in [0, 1)."""
        dt = _float_dtype(dtype, "Generator.random")
        return _into(out, self._stream.draw("uniform", _out_shape(size, out), dt, 0.0, 1.0))

    def uniform(self, low=0.0, high=1.0, size=None, dtype=numpy.float64):
        """Uniform values in [low, high)."""
        dt = _float_dtype(dtype, "Generator.uniform")
        low = _scalar(low, "low", "Generator.uniform")
        high = _scalar(high, "high", "Generator.uniform")
        return self._stream.draw("uniform", _shape(size), dt, low, high - low)

    def standard_normal(self, size=None, dtype=numpy.float64, out=None):
        """Normal values of mean 0 and standard deviation 1."""
        dt = _float_dtype(dtype, "Generator.standard_normal")
        return _into(out, self._stream.draw("normal", _out_shape(size, out), dt, 0.0, 1.0))

    def normal(self, loc=0.0, scale=1.0, size=None, dtype=numpy.float64):
        """Normal values of mean ``loc`` and standard deviation ``scale``."""
        return self._stream.normal(loc, scale, size, dtype, "Generator.normal")

    def integers(self, low, high=None, size=None, dtype=numpy.int64, endpoint=False):
        """Integers in [low, high) (``endpoint=True``: [low, high]); [0, low) when ``high``
        is None."""
        if high is None:
            low, high = 0, low
        high = int(high) + 1 if endpoint else high
        return self._stream.integers(low, high, size, dtype, "Generator.integers")


def _out_shape(size, out) -> tuple:
    if out is None:
        return _shape(size)
    if size is not None and _shape(size) != tuple(out.shape):
        raise JitkernValueError(f"size {_shape(size)} does not match out's shape {out.shape}")
    return tuple(out.shape)


def _into(out, values):
    if out is None:
        return values
    out[...] = values
    return out


def default_rng(seed=None) -> Generator:
    """A :class:`Generator` seeded with ``seed`` (None: from the operating system)."""
    return Generator(seed)


_global = RandomState()


def get_random_state() -> RandomState:
    """The global :class:`RandomState` behind ``jitkern.random.rand`` and friends."""
    return _global


def seed(seed=None) -> None:
    """Seed the global stream (None: from the operating system)."""
    _global.seed(seed)


def rand(*size, dtype=float):
    """Uniform values in [0, 1) of shape ``size``."""
    return _global.rand(*size, dtype=dtype)


def randn(*size, dtype=float):
    """Standard normal values of shape ``size``."""
    return _global.randn(*size, dtype=dtype)


def random_sample(size=None, dtype=float):
    """Uniform values in [0, 1)."""
    return _global.random_sample(size, dtype)


random = ranf = sample = random_sample


def uniform(low=0.0, high=1.0, size=None, dtype=float):
    """Uniform values in [low, high)."""
    return _global.uniform(low, high, size, dtype)


def standard_normal(size=None, dtype=float):
    """Standard normal values."""
    return _global.standard_normal(size, dtype)


def normal(loc=0.0, scale=1.0, size=None, dtype=float):
    """Normal values of mean ``loc`` and standard deviation ``scale``."""
    return _global.normal(loc, scale, size, dtype)


def randint(low, high=None, size=None, dtype=int):
    """Integers in [low, high) (in [0, low) when ``high`` is None)."""
    return _global.randint(low, high, size, dtype)


__all__ = [
    "Generator", "RandomState", "default_rng", "get_random_state", "normal", "rand", "randint",
    "randn", "random", "random_sample", "ranf", "sample", "seed", "standard_normal", "uniform",
]  # fmt: skip
