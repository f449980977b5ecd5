"""Exception classes shared by every stage of jitkern.

User-facing errors subclass the built-in exception a user would naturally catch
(``TypeError``, ``ValueError``, ``MemoryError``), so ``except TypeError`` keeps working.
"""

from __future__ import annotations

import numpy


class JitkernError(Exception):
    """Base class of every error jitkern raises on purpose."""


class CUDAError(JitkernError, RuntimeError):
    """A CUDA driver call failed, or no driver/device is available."""

    def __init__(self, message: str, code: int | None = None):
        super().__init__(message)
        self.code = code


class OutOfMemoryError(CUDAError, MemoryError):
    """A device allocation failed."""

    def __init__(self, size: int, free: int | None, device: int):
        free_txt = "unknown" if free is None else _human_bytes(free)
        super().__init__(
            f"out of memory on device {device}: tried to allocate {_human_bytes(size)} "
            f"({size} bytes); free memory {free_txt}"
        )
        self.size = size
        self.free = free
        self.device = device


class CompileError(JitkernError, RuntimeError):
    """NVRTC (or nvcc) rejected a kernel. ``log`` holds the compiler output."""

    def __init__(self, message: str, *, log: str = "", source: str = "", name: str = "",
                 options: tuple = ()):
        super().__init__(message)
        self.log = log
        self.source = source
        self.name = name
        self.options = tuple(options)


class SimulatorError(CompileError, NotImplementedError):
    """The simulator cannot run this CUDA C: it is outside the C subset the simulator
    translates (docs/debugging.md). The message names the kernel, the line and column, and
    shows the line with a caret; the same source runs on a GPU. A CompileError, and a
    NotImplementedError."""


class LaunchError(JitkernError, ValueError):
    """A launch configuration or its arguments were rejected before launching."""


class KernelArgumentError(LaunchError, TypeError):
    """A kernel argument has the wrong kind, type or count."""


class JitkernTypeError(JitkernError, TypeError):
    """A value of the wrong type was given to jitkern."""


class JitkernValueError(JitkernError, ValueError):
    """A value of the right type but a wrong value was given to jitkern."""


class ParamError(JitkernValueError):
    """A malformed parameter string of an ElementwiseKernel or ReductionKernel (a
    ValueError, as CuPy raises), naming the string, the parameter and its column."""


_AxisError = getattr(getattr(numpy, "exceptions", numpy), "AxisError")  # numpy < 1.25: numpy.


class JitkernAxisError(JitkernError, _AxisError):
    """An axis out of range for an array's dimensions: NumPy's ``AxisError`` (itself both a
    ``ValueError`` and an ``IndexError``), so ``except numpy.exceptions.AxisError`` works."""

    def __init__(self, message: str):
        Exception.__init__(self, message)
        self._message = message

    def __str__(self) -> str:
        return self._message


class JitkernIndexError(JitkernError, IndexError):
    """An index out of range (array indexing, tuple indexing)."""


class JitkernKeyError(JitkernError, KeyError):
    """A name that jitkern looks up by key was not found."""

    def __str__(self) -> str:  # KeyError quotes its argument; ours is a sentence
        return self.args[0] if self.args else ""


class JitkernAttributeError(JitkernError, AttributeError):
    """An attribute jitkern does not have, or one that cannot be set."""


class JitkernOverflowError(JitkernError, OverflowError):
    """A value does not fit the type it must be stored in."""


class JitkernBufferError(JitkernError, BufferError):
    """An array cannot be exported or imported as asked (DLPack, buffer protocol)."""


class JitkernFileNotFoundError(JitkernError, FileNotFoundError):
    """A file jitkern was asked to read does not exist."""


class JitkernNotImplementedError(JitkernError, NotImplementedError):
    """A documented limitation: the feature is not available (the message says what is)."""


class JitkernRuntimeError(JitkernError, RuntimeError):
    """Something went wrong that is not a bad argument (a state the object is not in)."""


class InternalError(JitkernError, RuntimeError):
    """A bug in jitkern itself: the message asks for a report."""


class KernelAssertionError(JitkernError, AssertionError):
    """A check inside a kernel failed (debug mode, the simulator, ``assert`` in JIT code)."""


class JitError(JitkernError):
    """Base class of the errors of the Python-to-CUDA JIT compiler."""


class JitSyntaxError(JitError, SyntaxError):
    """A Python construct the JIT compiler does not support."""

    # SyntaxError formats itself from filename/lineno; we pre-format instead.
    def __str__(self) -> str:
        return self.args[0] if self.args else ""


class JitTypeError(JitError, TypeError):
    """A type mismatch or a wrong use of a builtin in JIT code."""


class JitUnpackError(JitTypeError, ValueError):
    """Unpacking that cannot work in JIT code: a value that is not a tuple (``x, =
    jit.grid(1)``) or a tuple of another length. A ``ValueError`` as in cupyx.jit (and as
    Python says of a wrong count), and a ``TypeError`` as Python says of a non-iterable."""


class JitRecursionError(JitTypeError, ValueError):
    """A device function whose return type cannot be known: it calls itself before any
    ``return`` gives it one. A ``ValueError``, as cupyx.jit raises for recursion."""


class JitNameError(JitError, NameError):
    """An unknown name in JIT code."""


class JitAttributeError(JitError, AttributeError):
    """An attribute a value, an array or a module does not have in JIT code."""


class JitOverflowError(JitError, OverflowError):
    """A constant that does not fit its type (or any type) in JIT code."""


class JitValueError(JitError, ValueError):
    """A value refused at compile time in JIT code (a bad constant argument, say)."""


class JitIndexError(JitError, IndexError):
    """A constant index out of range in JIT code (a tuple index, say)."""


class StreamCaptureError(CUDAError):
    """An operation that cannot be recorded into a CUDA graph was attempted during
    stream capture, or a capture was misused (ended twice, invalidated, ...)."""


def _human_bytes(n: int) -> str:
    step = 1024.0
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < step or unit == "TiB":
            return f"{value:.1f} {unit}" if unit != "B" else f"{int(value)} B"
        value /= step
    return f"{n} B"


class FunctionNotFoundError(LaunchError, AttributeError, RuntimeError):
    """A module has no kernel of the name asked for (``RawModule.get_function``).

    A ``LaunchError`` (so a ``ValueError``) and an ``AttributeError`` (a missing name), and a
    ``RuntimeError`` like the driver error CuPy raises, so every ``except`` a ported program
    uses still catches it.
    """
