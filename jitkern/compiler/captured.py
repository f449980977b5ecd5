"""Globals a compiled kernel read from Python, and the check that they still hold.

Their values are baked into the generated code, so every cached build (the GPU build of
kernels/jit.py, the simulator's in sim/) is reused only after :meth:`CapturedGlobals.current`
says no global was rebound to a different value; the JIT's on-disk index entries are
reused only when :func:`fingerprints_hold`.
"""

from __future__ import annotations

import types as types_module

from . import frontend
from .program import function_identity

_MISSING = object()


class CapturedGlobals:
    """The objects a compiled kernel (and the device functions it calls) read from Python.

    Their values are baked into the binary. ``same_objects`` (identity, cheap) is checked
    by the general launch path and, as guards, by the generated launchers, so the launch
    after a rebinding of any of them takes the general path, which compiles again when a
    value changed (``same_values``, by fingerprint) and reuses the binary otherwise.
    Modules are not guarded: rebinding ``math`` or ``jit`` is not supported.
    """

    def __init__(self, func, fingerprints: dict):
        self.func = func
        self.fingerprints = fingerprints
        self.records = tuple(_global_records(func, fingerprints, set()))

    def same_objects(self) -> bool:
        for holder, name, value, default in self.records:
            if isinstance(holder, dict):
                if holder.get(name, default) is not value:
                    return False
            elif _cell_value(holder) is not value:
                return False
        return True

    def same_values(self) -> bool:
        return fingerprints_hold(self.func, self.fingerprints)

    def current(self) -> "CapturedGlobals | None":
        """The check every cached build makes before it is reused (the GPU build's and the
        simulator's): this snapshot when no global was rebound; a fresh one when some
        were, to equal values (the same binary serves); None when a value changed (build
        again)."""
        if self.same_objects():
            return self
        if self.same_values():
            return CapturedGlobals(self.func, self.fingerprints)
        return None

    def guards(self) -> tuple[list, dict]:
        """(conditions, names they use) for the generated launchers: one identity test each.
        The names are the same for every snapshot of one kernel (a launcher's text is
        compiled once); the values are bound to each launcher made (runtime/launcher.py)."""
        terms, env = [], {}
        for k, (holder, name, value, default) in enumerate(self.records):
            h, v, d = (f"_jk{c}_{k}" for c in "hvd")
            env[h], env[v], env[d] = holder, value, default
            if isinstance(holder, dict):
                terms.append(f"{h}.get({name!r}, {d}) is {v}")
            else:
                terms.append(f"{h}.cell_contents is {v}")
        return terms, env


def _global_records(func, fingerprints: dict, seen: set):
    """(holder, name, value, default) per guarded global: the holder is the function's
    globals dict (``default`` is what a missing name reads: the builtin, or a sentinel) or
    a closure cell."""
    identity = function_identity(func)
    if identity in seen:
        return
    seen.add(identity)
    code = func.__code__
    for name in fingerprints.get(identity, {}):
        try:
            value = frontend.lookup(func, name)
        except KeyError:
            continue  # gone: same_values says so on the slow path
        if isinstance(value, types_module.ModuleType):
            continue
        if func.__closure__ and name in code.co_freevars:
            yield func.__closure__[code.co_freevars.index(name)], name, value, None
        else:
            default = _MISSING if name in func.__globals__ else value
            yield func.__globals__, name, value, default
        if getattr(value, "device", False) and hasattr(value, "py_func"):
            yield from _global_records(value.py_func, fingerprints, seen)


def _cell_value(cell):
    try:
        return cell.cell_contents
    except ValueError:
        return _MISSING


def fingerprints_hold(func, fingerprints: dict, seen: set | None = None) -> bool:
    """Whether every global ``func`` (and the device functions it calls) read is unchanged."""
    seen = set() if seen is None else seen
    identity = function_identity(func)
    if identity in seen:
        return True
    seen.add(identity)
    for name, expected in fingerprints.get(identity, {}).items():
        try:
            captured = frontend.resolve(func, name)
        except (KeyError, TypeError):
            return False
        if captured.fingerprint != expected:
            return False
        device = captured.value
        if captured.kind == "jit" and hasattr(device, "func") and getattr(device, "device", False):
            if not fingerprints_hold(device.py_func, fingerprints, seen):
                return False
    return True
