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

import math
import numbers
import operator
import os

import numpy

from .. import arrays
from ..config import settings
from ..runtime.simulated import host_arrays, host_view
from ..errors import JitkernOverflowError, JitkernTypeError, JitkernValueError
from . import philox

_FLOATS = (numpy.dtype(numpy.float32), numpy.dtype(numpy.float64))
_HOST_DRAW = {"uniform": philox.uniform_host, "normal": philox.normal_host,
              "integers": philox.integers_host}  # fmt: skip


def _entropy() -> int:
    return int.from_bytes(os.urandom(8), "little")


def _seed_value(seed, where: str, bounded: bool) -> int:
    """The 64-bit Philox key of ``seed``: None (entropy from the operating system), an int,
    or an array of ints, each from 0 (NumPy's rule) to 2**64 - 1 (the key's width; with
    ``bounded=False``, as ``default_rng`` takes, a larger int is folded into 64 bits)."""
    if seed is None:
        return _entropy()
    if isinstance(seed, (numbers.Integral, numpy.integer)):
        return _fold([_seed_word(int(seed), where, bounded)])
    if isinstance(seed, (numpy.ndarray, list, tuple)) or hasattr(seed, "__cuda_array_interface__"):
        words = numpy.asarray(arrays.asnumpy(seed))
        if words.dtype.kind not in "biu" and words.size:
            raise JitkernTypeError(f"{where}: an array seed must hold ints, got {words.dtype}")
        return _fold([_seed_word(int(w), where, True) for w in words.ravel()], mix=True)
    raise JitkernTypeError(f"{where}: expected None, an int or an array of ints, got "
                           f"{type(seed).__name__} {seed!r}")  # fmt: skip


def _seed_word(value: int, where: str, bounded: bool) -> int:
    if value < 0 or (bounded and value >= 2**64):
        wanted = "between 0 and 2**64 - 1" if bounded else "a non-negative int"
        raise JitkernValueError(f"{where}: the seed must be {wanted}, got {value}")
    return value


def _fold(values, mix: bool = False) -> int:
    """One int below 2**64 as itself; an array (``mix``) or a larger int by FNV-1a style
    mixing of their 64-bit words."""
    if not mix and len(values) == 1 and values[0] < 2**64:
        return values[0]
    key = 0
    for value in values:
        while True:
            key = ((key ^ (value % 2**64)) * 0x100000001B3) % 2**64
            value >>= 64
            if not value:
                break
    return key


def _shape(size, where: str) -> tuple:
    """``size`` (of ``where``'s call) as a shape: None, an int or a sequence of ints (NumPy's
    errors: a float or a str is a TypeError, a negative dimension a ValueError)."""
    if size is None:
        return ()
    dims = size if isinstance(size, (tuple, list)) else (size,)
    shape = []
    for d in dims:
        if isinstance(d, (bool, numpy.bool_)):
            raise JitkernTypeError(f"{where}: size: an integer is required, got {d!r}")
        try:
            shape.append(operator.index(d))
        except TypeError:
            raise JitkernTypeError(f"{where}: size: {type(d).__name__!r} object cannot be "
                                   f"interpreted as an integer, got {d!r}") from None
    shape = tuple(shape)
    if any(s < 0 for s in shape):
        raise JitkernValueError(f"{where}: size: negative dimensions are not allowed, got {shape}")
    if math.prod(shape) >= 2**63:
        raise JitkernValueError(f"{where}: size: maximum allowed dimension exceeded, got {shape}")
    return shape


def _float_dtype(dtype, where: str) -> numpy.dtype:
    dt = _dtype(dtype, where)
    if dt not in _FLOATS:
        raise JitkernTypeError(f"{where}: dtype must be float32 or float64, got {dt}")
    return dt


def _dtype(dtype, where: str) -> numpy.dtype:
    try:
        return numpy.dtype(dtype)
    except TypeError as exc:
        raise JitkernTypeError(f"{where}: dtype: {exc}") from None


def _integer(value, name: str, where: str) -> int:
    """An integer bound of ``randint``/``integers`` (a float is truncated, as NumPy does)."""
    if isinstance(value, (numbers.Real, numpy.integer, numpy.floating)) and not isinstance(
            value, (bool, numpy.bool_)):
        if not math.isfinite(value):
            raise JitkernValueError(f"{where}: {name} must be finite, got {value}")
        return int(value)
    raise JitkernTypeError(f"{where}: {name} must be an int, got {type(value).__name__} "
                           f"{value!r}")


def _range(low: float, high: float, where: str) -> float:
    """``high - low``, which must be finite (NumPy's OverflowError otherwise)."""
    if not math.isfinite(high - low):
        raise JitkernOverflowError(f"{where}: the range high - low = {high - low} exceeds valid "
                                   f"bounds (low={low}, high={high})")
    return high - low


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

    def __init__(self, seed, where: str = "seed", bounded: bool = True):
        self.seed = _seed_value(seed, where, bounded)
        self.offset = 0

    def draw(self, kind: str, shape: tuple, dtype: numpy.dtype, a, b):
        n = 1
        for s in shape:
            n *= s
        nblocks = philox.blocks_for(kind, dtype, n)
        offset = self.offset
        self.offset = (offset + nblocks) % 2**64
        if settings.simulate:  # the kernels' numbers from their NumPy twin (bit-identical),
            out = None if host_arrays() else arrays.empty(n, dtype)  # a simulated device's,
            into = None if out is None else host_view(out)  # written in place
            host = _HOST_DRAW[kind](n, dtype, self.seed, offset, a, b, into)
            return (host if out is None else out).reshape(shape)
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
        return self.draw("normal", _shape(size, where), dt, loc, scale)

    def integers(self, low, high, size, dtype, where: str):
        if high is None:
            low, high = 0, low
        low, high = _integer(low, "low", where), _integer(high, "high", where)
        if low >= high:
            raise JitkernValueError(f"{where}: low >= high ({low} >= {high})")
        dt = _dtype(dtype, where)
        if dt.kind not in "iu":
            raise JitkernTypeError(f"{where}: dtype must be an integer type, got {dt}")
        info = numpy.iinfo(dt)
        if low < info.min or high - 1 > info.max:
            raise JitkernValueError(f"{where}: [{low}, {high}) is out of bounds for {dt}")
        if high - low >= 2**64:
            raise JitkernValueError(f"{where}: a range of 2**64 values or more is not supported")
        return self.draw("integers", _shape(size, where), dt, low, high - low)


class RandomState:
    """CuPy's ``cupy.random.RandomState``: a Philox4x32-10 stream on the device.

    ``RandomState(seed=None)``; ``seed=None`` takes 64 bits from the operating system.
    """

    def __init__(self, seed=None):
        self._stream = _Stream(seed, "RandomState")

    def seed(self, seed=None) -> None:
        """Start the stream again from ``seed`` (None: from the operating system; an int
        from 0 to 2**64 - 1, or an array of them)."""
        self._stream = _Stream(seed, "seed")

    def random_sample(self, size=None, dtype=float):
        """Uniform values in [0, 1) of ``size`` (float32 or float64)."""
        dt = _float_dtype(dtype, "random_sample")
        return self._stream.draw("uniform", _shape(size, "random_sample"), dt, 0.0, 1.0)

    random = random_sample

    def rand(self, *size, dtype=float):
        """``random_sample(size)`` with the shape given as separate ints."""
        dt = _float_dtype(dtype, "rand")
        return self._stream.draw("uniform", _shape(size, "rand"), dt, 0.0, 1.0)

    def uniform(self, low=0.0, high=1.0, size=None, dtype=float):
        """Uniform values in [low, high)."""
        dt = _float_dtype(dtype, "uniform")
        low, high = _scalar(low, "low", "uniform"), _scalar(high, "high", "uniform")
        return self._stream.draw("uniform", _shape(size, "uniform"), dt, low,
                                 _range(low, high, "uniform"))

    def standard_normal(self, size=None, dtype=float):
        """Normal values of mean 0 and standard deviation 1."""
        dt = _float_dtype(dtype, "standard_normal")
        return self._stream.draw("normal", _shape(size, "standard_normal"), dt, 0.0, 1.0)

    def randn(self, *size, dtype=float):
        """``standard_normal(size)`` with the shape given as separate ints."""
        dt = _float_dtype(dtype, "randn")
        return self._stream.draw("normal", _shape(size, "randn"), dt, 0.0, 1.0)

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
        self._stream = _Stream(seed, "default_rng", bounded=False)

    def random(self, size=None, dtype=numpy.float64, out=None):
        """Uniform values in [0, 1)."""
        dt = _float_dtype(dtype, "Generator.random")
        shape = _out_shape(size, out, "Generator.random")
        return _into(out, self._stream.draw("uniform", shape, dt, 0.0, 1.0))

    def uniform(self, low=0.0, high=1.0, size=None, dtype=numpy.float64):
        """Uniform values in [low, high)."""
        dt = _float_dtype(dtype, "Generator.uniform")
        low = _scalar(low, "low", "Generator.uniform")
        high = _scalar(high, "high", "Generator.uniform")
        return self._stream.draw("uniform", _shape(size, "Generator.uniform"), dt, low,
                                 _range(low, high, "Generator.uniform"))

    def standard_normal(self, size=None, dtype=numpy.float64, out=None):
        """Normal values of mean 0 and standard deviation 1."""
        dt = _float_dtype(dtype, "Generator.standard_normal")
        shape = _out_shape(size, out, "Generator.standard_normal")
        return _into(out, self._stream.draw("normal", shape, dt, 0.0, 1.0))

    def normal(self, loc=0.0, scale=1.0, size=None, dtype=numpy.float64):
        """Normal values of mean ``loc`` and standard deviation ``scale``."""
        return self._stream.normal(loc, scale, size, dtype, "Generator.normal")

    def integers(self, low, high=None, size=None, dtype=numpy.int64, endpoint=False):
        """Integers in [low, high) (``endpoint=True``: [low, high]); [0, low) when ``high``
        is None."""
        if high is None:
            low, high = 0, low
        if endpoint:
            high = _integer(high, "high", "Generator.integers") + 1
        return self._stream.integers(low, high, size, dtype, "Generator.integers")


def _out_shape(size, out, where: str) -> tuple:
    if out is None:
        return _shape(size, where)
    if size is not None and _shape(size, where) != tuple(out.shape):
        raise JitkernValueError(
            f"{where}: size {_shape(size, where)} does not match out's shape {out.shape}")
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
