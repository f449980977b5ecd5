"""How a kernel's user arguments become its parameters when a graph node is updated.

A kernel kind that allows graph updates (``RawKernel``/``RawModule`` kernels, exported
kernels, ``@jitkern.rawkernel`` kernels) gives each of its :class:`~.module.Function`\\ s an
:class:`ArgMap` (``function.arg_map``); :mod:`.graphnodes` finds it on a node's function
and asks it to check and pack the new values into the node's parameter copy. The checks
are a launch's (the one argument table, :mod:`.launch`), plus, for a JIT kernel, that
each value keeps the specialisation the node's binary was compiled for. See
docs/graphs.md, "Updating a captured graph".
"""

from __future__ import annotations

import ctypes

from ..errors import JitkernOverflowError, KernelArgumentError, LaunchError
from .launch import _checked_slot, dim3
from .launcher import make_slot_packer
from .limits import SHARED_OPTIN_MAX, check_dims, check_shared_mem
from .signature import _param_dtype, check_pointer, typed


class ArgMap:
    """The user arguments of one compiled kernel, for graph updates.

    ``names``: the user's argument names (the C parameter names of a RawKernel, the
    Python ones of a JIT kernel), or None when unknown (a template instantiated by name:
    arguments are then given by position). ``params``: the parsed C parameters, for the
    pointer/scalar check. For a JIT kernel, ``key``/``keyer`` are the per-argument
    specialisation keys the node's binary was compiled for and the function reading one
    from a value, ``described`` says each key in words and ``describe(value)`` a value's;
    ``extras`` lists, per user argument, the (kind, axis) shape/stride parameters appended
    after the user's, read from an array by ``dims(value) -> (shape, strides)``.
    ``keyer_for(cls)``, if given, is ``keyer`` resolved for values of type ``cls`` once (a
    hot path's), or None when the type itself is the key.
    """

    def __init__(self, names=None, params=None, *, key=None, keyer=None, described=None,
                 describe=None, extras=None, dims=None, keyer_for=None):
        self.names = tuple(names) if names is not None else None
        self.params = params
        self.key, self.keyer, self.described, self.describe = key, keyer, described, describe
        self.keyer_for = keyer_for
        self.extras, self.dims = extras, dims

    def pointee(self, i: int):
        """The element dtype C parameter ``i`` points to, where the launch checks it (a
        typed pointer that is not void*/char*), else None."""
        params = self.params
        if self.key is not None or params is None or i >= len(params):
            return None
        param = params[i]
        if not typed(param) or not param.pointer or param.any_pointee:
            return None
        return _param_dtype(param)

    @classmethod
    def for_c(cls, params) -> "ArgMap":
        """The map of a C kernel: user arguments are its parameters, one for one."""
        return cls([p.name for p in params] if params is not None else None, params)

    def count(self, sizes) -> int:
        """How many arguments the user gives (the parameters, less derived ones)."""
        return len(self.names) if self.names is not None else len(sizes)

    # -- from the user's call to {user index: value} ------------------------------------
    def changes(self, label: str, count: int, args: tuple, named: dict) -> dict:
        """The user arguments an update replaces: all of them by position, or some by name."""
        if args and named:
            raise KernelArgumentError(
                f"{label}: give every argument by position or some by name, not both "
                f"(got {len(args)} positional and {', '.join(named)} by name)")
        if args:
            if len(args) != count:
                raise KernelArgumentError(
                    f"{label}: the kernel takes {count} argument(s){self._listed()}, but "
                    f"{len(args)} were given; give all of them, or some by name")
            return dict(enumerate(args))
        out = {}
        for name, value in named.items():
            if self.names is None or name not in self.names:
                known = (f"its arguments are {', '.join(self.names)}" if self.names is not None
                         else "its argument names are unknown (a template kernel): give every "
                              "argument by position")
                raise KernelArgumentError(f"{label}: no argument named {name!r}; {known}")
            out[self.names.index(name)] = value
        return out

    def _listed(self) -> str:
        return f" ({', '.join(self.names)})" if self.names is not None else ""

    def what(self, label: str, i: int) -> str:
        name = f" ({self.names[i]})" if self.names is not None and i < len(self.names) else ""
        return f"{label}: argument {i}{name}"

    # -- {user index: value} to parameter slots ------------------------------------------
    def slots(self, label: str, count: int, i: int, value) -> list[tuple[int, object]]:
        """(parameter index, value) pairs that replacing user argument ``i`` writes: the
        argument itself and, for a JIT kernel's array, its shape/stride parameters."""
        if self.key is not None:
            self._check_specialisation(label, i, value)
        elif self.params is not None and i < len(self.params):
            try:  # a C pointer's element type, as a launch checks it (runtime.signature)
                check_pointer(value, i, self.params[i])
            except KernelArgumentError as exc:
                raise KernelArgumentError(
                    self._reworded(label, len(self.params), i, str(exc))) from None
        pairs = [(i, value)]
        if not self.extras or not self.extras[i]:
            return pairs
        first = count + sum(len(items) for items in self.extras[:i])
        shape, strides = self.dims(value)
        for k, (kind, axis) in enumerate(self.extras[i]):
            pairs.append((first + k, int(shape[axis] if kind == "shape" else strides[axis])))
        return pairs

    def _check_specialisation(self, label: str, i: int, value) -> None:
        try:
            got = self.keyer(value)
        except KernelArgumentError as exc:  # a host array, or a value no kernel takes
            raise KernelArgumentError(f"{self.what(label, i)}: {exc}") from None
        if got != self.key[i]:
            raise KernelArgumentError(
                f"{self.what(label, i)}: the node's kernel was compiled for "
                f"{self.described[i]}, got {self.describe(value)}; that needs another "
                "compiled kernel (another specialisation), which a graph update cannot swap "
                "in: capture the graph again with the new types")

    # -- writing ---------------------------------------------------------------------
    def write(self, label: str, count: int, packers: dict, raw, offsets, sizes, pairs,
              saved: bytes) -> None:
        """Pack every (parameter index, value) into ``raw`` (a ctypes buffer laid out at
        ``offsets``), or, if one is refused, none: the buffer is restored to ``saved``.
        ``packers`` caches one packer per (parameter, value type), checked when made."""
        try:
            for j, value in pairs:
                cls = type(value)
                pack = packers.get((j, cls))
                if pack is None:
                    pack = self._packer(label, count, j, value, raw, offsets, sizes)
                    if cls.__name__ != "void":  # a structured scalar: checked each time
                        packers[(j, cls)] = pack
                try:
                    pack(value)
                except KernelArgumentError as exc:  # a 4-byte int out of range
                    raise KernelArgumentError(self._reworded(label, count, j, str(exc))) from None
                except JitkernOverflowError as exc:  # a checked C integer's range: the node
                    message = str(exc)               # is named, not the kernel
                    at = message.find(f"argument {j} (")
                    raise JitkernOverflowError(
                        self._reworded(label, count, j, message[max(at, 0):])) from None
        except BaseException:
            ctypes.memmove(raw, saved, len(saved))
            raise

    def _packer(self, label: str, count: int, j: int, value, raw, offsets, sizes):
        params = self.params if j < count else None
        try:
            slot = _checked_slot(value, j, sizes, params)
        except KernelArgumentError as exc:
            raise KernelArgumentError(self._reworded(label, count, j, str(exc))) from None
        return make_slot_packer(slot, raw, offsets[j])

    def _reworded(self, label: str, count: int, j: int, message: str) -> str:
        head = f"argument {j}"
        if message.startswith(head):
            message = message[len(head):].lstrip(": ")
            if message.startswith("(") and ")" in message:  # build_plan's own "(name)"
                message = message.split(")", 1)[1].lstrip(": ")
        if j >= count:
            return f"{label}: a shape/stride parameter ({j}): {message}"
        return f"{self.what(label, j)}: {message}"

    @staticmethod
    def launch_dims(label: str, grid, block, shared_mem):
        return launch_dims(label, grid, block, shared_mem)


def launch_dims(label: str, grid, block, shared_mem):
    """The new grid, block (each (x, y, z) or None) and shared memory (or None) of an
    update, checked against CUDA's limits as a launch's are."""
    try:
        if grid is not None:
            value, grid = grid, dim3(grid, "grid")
            check_dims(grid, "grid", None, value)
        if block is not None:
            value, block = block, dim3(block, "block")
            check_dims(block, "block", None, value)
        if shared_mem is not None:
            shared_mem = check_shared_mem(shared_mem, None, limit=SHARED_OPTIN_MAX)
    except LaunchError as exc:  # KernelArgumentError too: the same class, named
        raise type(exc)(f"{label}: {exc}") from None
    return grid, block, shared_mem
