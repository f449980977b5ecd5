"""Modules a module needs only off its common path, declared at its top: :func:`lazy_import`.

A fresh process's first launch of a cached kernel loads only what a GPU launch needs
(tests/test_first_call.py, docs/performance.md): the simulator, the exporter, the JIT's
emitter and the compiler's builtin tables load when something first uses them. Rather than
an ``import`` inside each function that needs one of them (a dependency a reader of the
module's header never sees), a module names them once at its top::

    _sim_strings = lazy_import("jitkern.sim.raw")  # only when simulating

and reads ``_sim_strings.ElementwiseSim`` where it needs it: the first attribute read
imports the module (Python's own import: its lock, ``sys.modules``), later reads go
straight to it. tests/test_layering.py reads these declarations as imports, so the layering
rules and the cycle check hold for them as for any other. Not for hot paths: each read
costs an attribute lookup more than a module global.
"""

from __future__ import annotations

import importlib


class LazyModule:
    """Module ``name``, imported on the first attribute read."""

    __slots__ = ("_name", "_module")

    def __init__(self, name: str):
        self._name = name
        self._module = None

    def __getattr__(self, attr: str):
        module = self._module
        if module is None:
            module = self._module = importlib.import_module(self._name)
        return getattr(module, attr)

    def __repr__(self) -> str:
        state = "loaded" if self._module is not None else "not loaded yet"
        return f"<lazy module {self._name!r} ({state})>"


def lazy_import(name: str) -> LazyModule:
    """Module ``name`` (absolute), imported when one of its attributes is first read."""
    return LazyModule(name)
