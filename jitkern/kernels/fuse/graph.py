"""fuse's recorded graph: nodes, inputs, the graph, and the errors that point at the user's line.

Pure data: :mod:`.trace` builds it, :mod:`.emit` lowers it (to string kernels, which the GPU
and the simulator both run).
"""

from __future__ import annotations

import dataclasses
import linecache
import os
import sys

import numpy

from ...errors import JitkernAttributeError, JitkernIndexError, JitkernTypeError

_HERE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the jitkern package
_NUMPY_DIR = os.path.dirname(numpy.__file__)


class _AtUserLine:
    """``file.py:LINE: message``, the line, and a hint: where in the user's code."""

    def __init__(self, message: str, hint: str = "", location=None):
        filename, lineno = location or user_location()
        self.filename, self.lineno = filename, lineno
        text = linecache.getline(filename, lineno).strip() if filename else ""
        parts = [f"{filename}:{lineno}: {message}" if filename else message]
        if text:
            parts.append(f"    {text}")
        if hint:
            parts.append(hint)
        super().__init__("\n".join(parts))


class FuseTraceError(_AtUserLine, JitkernTypeError):
    """What fuse cannot record, at the user's line: ``file.py:LINE: message``, the line."""


class FuseIndexError(_AtUserLine, JitkernIndexError):
    """An index out of range, or too many indices, for a traced array (as NumPy's)."""


class FuseAttributeError(JitkernAttributeError):
    """An array attribute or method fuse does not record."""


class ReadsWrittenMemory(Exception):
    """Internal, never seen by users: the function reads an argument through a view after
    writing it, which one kernel cannot express; fuse traces it again in memory order
    (:class:`SequentialGraph`)."""


def user_location():
    """(file, line) of the innermost frame outside jitkern and NumPy: the user's code."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith((_HERE, _NUMPY_DIR, "<__array_function__")):
            return filename, frame.f_lineno
        frame = frame.f_back
    return "", 0


# ---------------------------------------------------------------------------
# the graph


@dataclasses.dataclass(eq=False)
class Node:
    op: str  # 'arg' 'const' 'ufunc' 'cast' 'where' 'reduce' 'count' 'view' 'real' 'imag'
    args: tuple
    dtype: numpy.dtype
    ndim: int
    weak: bool = False  # a Python scalar: promotes as NumPy 2 promotes Python numbers
    attrs: tuple = ()
    reduced: bool = False  # depends on a reduction's result

    def __repr__(self) -> str:
        return f"<{self.op} {self.dtype}{' weak' if self.weak else ''} ndim={self.ndim}>"


@dataclasses.dataclass(frozen=True)
class Input:
    """A kernel input: argument ``position`` with the basic-index ``keys`` applied in turn."""

    position: int
    keys: tuple
    scalar: bool

    def value(self, args):
        """This view of the argument: a view even where every index is an int (NumPy
        would give a copy of the element, and a kernel must read and write the memory)."""
        v = args[self.position]
        for key in self.keys:
            v = v[as_view(_thaw(key))]
        return v


def as_view(key):
    """``key`` such that indexing gives a view even where every index is an int."""
    items = key if isinstance(key, tuple) else (key,)
    if any(k is Ellipsis for k in items):
        return key
    return (*items, Ellipsis)


def _freeze(key):
    """A hashable spelling of a basic index (slices are not hashable before Python 3.12)."""
    if isinstance(key, tuple):
        return ("tuple", tuple(_freeze(k) for k in key))
    if isinstance(key, slice):
        return ("slice", key.start, key.stop, key.step)
    if isinstance(key, numpy.integer):
        return int(key)
    return key


def _thaw(key):
    if isinstance(key, tuple) and key and key[0] == "tuple":
        return tuple(_thaw(k) for k in key[1])
    if isinstance(key, tuple) and key and key[0] == "slice":
        return slice(*key[1:])
    return key


@dataclasses.dataclass
class Graph:
    inputs: list  # Input per 'arg' node, in order
    arg_nodes: list  # the 'arg' node of each input
    outputs: tuple  # returned nodes (or plain Python values)
    tuple_result: bool
    writes: dict  # Input (the written view) -> node
    shape_dependent: bool = False  # the function read shapes: a plan serves one set of shapes

    def describe(self) -> str:
        """One line per node: what was recorded (for tests and docs)."""
        names = {}
        lines = []
        for node in self.order():
            name = f"v{len(names)}"
            names[node] = name
            args = ", ".join(names.get(a, "?") for a in node.args)
            attrs = f" {node.attrs}" if node.attrs else ""
            lines.append(f"{name} = {node.op}{attrs}({args}) -> {node.dtype}")
        return "\n".join(lines)

    def order(self) -> list:
        """The nodes the outputs and writes need, each after its operands."""
        seen, out = set(), []

        def visit(node):
            if not isinstance(node, Node) or id(node) in seen:
                return
            seen.add(id(node))
            for a in node.args:
                visit(a)
            out.append(node)

        for node in [*self.outputs, *self.writes.values()]:
            visit(node)
        return out


@dataclasses.dataclass
class SequentialGraph:
    """A trace in memory order, NumPy's own: each write into an argument (or a view of
    one) is a step, run after the ones before it, and each read of argument memory is the
    memory after so many writes. Reads and write targets are *slots*: ``Input``s whose
    position counts on after the arguments, filled per call with the live view or, where a
    later write changes that memory first, a copy taken in time (kernels/fuse/alias.py)."""

    nargs: int
    reads: dict  # slot Input -> (the argument view Input, how many writes came before)
    targets: dict  # slot Input -> the argument view Input it writes
    steps: list  # (target slot Input, node), in the order the function wrote them
    outputs: tuple  # returned nodes (or plain Python values), read after every write
    tuple_result: bool
    shape_dependent: bool = False

    def describe(self) -> str:
        """The steps and the result, one block each (for tests and docs)."""
        parts = []
        for k, (slot, node) in enumerate(self.steps):
            view = self.targets[slot]
            parts.append(f"step {k}: write argument {view.position} {view.keys or ''}\n"
                         + _describe([node]))
        returned = [o for o in self.outputs if isinstance(o, Node)]
        parts.append("result:\n" + _describe(returned))
        return "\n".join(parts)


def _describe(roots) -> str:
    graph = Graph([], [], tuple(roots), False, {})
    return graph.describe()
