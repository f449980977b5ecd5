"""Bound launches: one launch of a kernel with its arguments packed once.

``kernel.bind(grid, block, *args)`` (kernels/base.py) asks the kernel's Function
(:meth:`~.module.Function.bind`) for a :class:`BoundLaunch`, whose call is a generated
function around ``cuLaunchKernel`` with every value fixed (runtime/launcher.py).
"""

from __future__ import annotations

import functools
import struct

import numpy

from ..errors import JitkernIndexError, JitkernTypeError, KernelArgumentError
from .launch import _describe_arg, _layout, _scalar_slot, slot_for
from .launcher import CODE_NAMES, make_bound_runner, make_slot_packer
from .signature import check_replacement


class BoundLaunch(functools.partial):
    """One kernel launch with its arguments packed once: ``b()`` launches it again.

    Made by ``kernel.bind(grid, block, *args, shared_mem=0, stream=None)`` on a
    RawKernel or a ``@jitkern.rawkernel`` kernel. The call is a generated function
    around ``cuLaunchKernel`` with every value fixed (a partial, like the kernel
    objects: see kernels/base.py's Kernel), so it costs about what a bare, pre-packed
    ``cuLaunchKernel`` costs. ``b.set_arg(i, value)`` (or ``b.args[i] = value``)
    re-packs argument ``i`` alone, after checking that ``value`` packs to the same
    type as the bound one (an array for an array, a float64 for a float64, ...; for a
    JIT kernel also the same specialisation: dtype, ndim, layout). The bound launch
    keeps its arguments alive; it has its own parameter buffer, so other launches of
    the kernel do not disturb it.
    """

    def __new__(cls, function, state, plan, args, dims, shared_mem, stream, cooperative,
                user_count, refresh):
        run = make_bound_runner(function, state, plan, dims, shared_mem, stream, cooperative)
        self = super().__new__(cls, run)
        self.function, self.grid, self.block = function, dims[0], dims[1]
        self.shared_mem, self.stream, self.cooperative = shared_mem, stream, cooperative
        self._state, self._plan, self._args = state, plan, list(args)
        self._user_count, self._refresh = user_count, refresh
        self._offsets = _layout(plan.slots)[1]
        self._packers: dict = {}
        return self

    @property
    def args(self) -> "_BoundArgs":
        """The bound arguments: ``b.args[i]`` reads one, ``b.args[i] = v`` is ``set_arg``."""
        return _BoundArgs(self)

    def set_arg(self, index: int, value) -> None:
        """Replace argument ``index`` and re-pack its slot (and, for a JIT kernel, the
        shape/stride parameters derived from it); the next call launches with it."""
        n = self._user_count
        if type(index) is not int or not -n <= index < n:
            raise JitkernIndexError(
                f"set_arg: argument index {index!r} is out of range; {self.function.name} "
                f"takes {n} argument(s)")
        index %= n
        if self._refresh is None:
            check_replacement(value, index, self.function.params, self.function.name)
            self._write(index, value)
            return
        full = self._refresh(index, value, tuple(self._args[:n]))
        for j in range(len(full)):
            if j == index or (j >= n and full[j] != self._args[j]):
                self._write(j, full[j])

    def _write(self, j: int, value) -> None:
        try:
            self._packer(j, value)(value)
        except struct.error as exc:
            old = self._args[j]
            self._packer(j, old)(old)  # pack_into clears the slot before it fails
            raise KernelArgumentError(
                f"{self._what(j)}: {value!r} does not fit the bound slot, "
                f"{_slot_kind(self._plan.slots[j])} ({exc})") from None
        self._args[j] = value

    def _packer(self, j: int, value):
        pack = self._packers.get((j, type(value)))
        if pack is None:
            pack = self._packers[(j, type(value))] = self._slot_packer(j, value)
        return pack

    def _slot_packer(self, j: int, value):
        """``pack(value)`` writing one argument into the bound buffer, after checking
        that a value of this type packs like the bound one."""
        old = self._plan.slots[j]
        sizes = self._state.param_sizes
        if type(value) is numpy.void:
            new = _scalar_slot(value.dtype, f"argument {j}")
        else:
            try:
                new = slot_for(type(value), j, sizes[j] if sizes is not None else None, value)
            except KernelArgumentError as exc:
                raise KernelArgumentError(f"{self._what(j)}: {exc}") from None
        if new.codes != old.codes or _is_pointer(new) != _is_pointer(old):
            raise KernelArgumentError(
                f"{self._what(j)}: the bound launch has {_slot_kind(old)} there, got "
                f"{_describe_arg(value)} ({_slot_kind(new)}); pass a value of the bound type")
        return make_slot_packer(new, self._plan._buffer, self._offsets[j])

    def _what(self, j: int) -> str:
        params = self.function.params
        if params is not None and j < len(params):
            return f"argument {j} ({params[j].name}) of {self.function.name}"
        return f"argument {j} of {self.function.name}"

    def __reduce__(self):
        raise JitkernTypeError("a bound launch cannot be pickled; bind the kernel again")

    def __eq__(self, other):
        return self is other

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return (f"<jitkern.BoundLaunch {self.function.name} grid={self.grid} block={self.block} "
                f"args={len(self._args[:self._user_count])}>")


class _BoundArgs:
    """``b.args``: indexable view of a bound launch's user arguments."""

    __slots__ = ("_bound",)

    def __init__(self, bound: BoundLaunch):
        self._bound = bound

    def __len__(self) -> int:
        return self._bound._user_count

    def __getitem__(self, index):
        return self._bound._args[: self._bound._user_count][index]

    def __setitem__(self, index, value) -> None:
        self._bound.set_arg(index, value)

    def __iter__(self):
        return iter(self._bound._args[: self._bound._user_count])

    def __repr__(self) -> str:
        return repr(self._bound._args[: self._bound._user_count])


def _is_pointer(slot) -> bool:
    return slot.codes == "Q" and slot.expr != "{a}"


def _slot_kind(slot) -> str:
    if _is_pointer(slot):
        return "a device pointer (an array)"
    name = CODE_NAMES.get(slot.codes)
    if name is None:
        return f"a {slot.size}-byte structured scalar"
    return f"{'an' if name[0] in 'iu' else 'a'} {name} scalar"
