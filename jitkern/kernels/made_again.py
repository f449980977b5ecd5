"""A kernel constructor called again with the same arguments: what the first call made.

CuPy code often builds its kernel objects inside the function it calls in a loop
(``RawKernel(code, name)(grid, block, args)``). The memo of builds (runtime/memo.py) already
keeps everything a build produces, so nothing is compiled or loaded again; what remained was
the constructor's own Python work (checking the arguments, parsing parameter strings,
normalising options, keying) and, at the first call, finding the Functions again and
generating a launcher for the new object. A :class:`Made` record, kept in the same memo
under ``("made", kind class, every constructor argument)``, makes all of that one dict
lookup and a copy (kernels/base.py, ``Kernel._again``):

- ``state``: the object's attributes right after the first call's checks and parsing;
- ``functions``: the Functions the first object of the record that launched had loaded;
- ``run``: the generated launcher it installed, bound again for each new object to that
  object's own general path (:meth:`Made.rebound`), so a miss (other argument types,
  a cluster, another device) is handled by the new object as if it had launched before.

A record is made only for a call that checked out, and only where the build reads none of
the user's headers (an edited header must give a new build, which the memo key notices at
each build); it lives and dies with the memo (bounded, cleared by ``clear_memo``, fresh per
driver and cache folder).
"""

from __future__ import annotations

import gc
import types

from ..runtime import memo


class Made:
    """What one constructor call made (see the module doc)."""

    __slots__ = ("state", "functions", "run", "plan", "owned", "inherit")

    def __init__(self, state: dict):
        self.state = state
        self.functions = None  # the Functions of the first object that installed a launcher
        self.run = None  # its launcher; False: not one that can be bound again
        self.plan = None
        self.owned = ()
        self.inherit = {}

    def learn(self, kernel, run, inherit) -> None:
        """Keep ``run``, the launcher ``kernel`` just installed, for the next objects; only a
        launcher whose sole tie to ``kernel`` is bound methods in its globals (each new
        object gets its own), else none (they take their own general path first)."""
        plan = _rebind_plan(kernel, run)
        if plan is None:
            self.run = False
            return
        self.plan, self.run = plan, run
        self.functions = kernel._functions
        self.owned = tuple(kernel._functions.loaded())
        self.inherit = {name: value.copy() for name, value in (inherit or {}).items()}

    def keep(self, **inherit) -> None:
        """Per-object caches every next object starts with (copied; a string kernel's
        runners that are bound to no object, its generated sources), once."""
        if not self.inherit:
            self.inherit = {name: value.copy() if type(value) is dict else value
                            for name, value in inherit.items()}

    def rebound(self, kernel, state: dict):
        """The launcher, bound to ``kernel``'s own methods (put in ``state`` too, as the
        renamed call methods are: kernels/base.py ``_name_as_call``)."""
        methods, own = self.plan
        env = self.run.__globals__.copy()
        for name, func, attr in methods:
            method = env[name] = types.MethodType(func, kernel)
            if attr is not None:
                state[attr] = method
        copies = {}
        for name, f, _attrs in own:
            copy = copies[name] = env[name] = types.FunctionType(f.__code__, env, None,
                                                                 f.__defaults__)
            copy.__kwdefaults__ = f.__kwdefaults__
        for name, _f, attrs in own:  # their attributes: caches (dicts) are the object's own
            namespace = copies[name].__dict__
            for attr, value, copied in attrs:
                namespace[attr] = {} if copied is dict else copies[copied] if copied else value
        return copies[own[0][0]]


def exact(flags) -> bool:
    """Whether the flags are True or False themselves (a call remembered for the memo's
    records of constructor calls: another truthy value is stored as given, the long way)."""
    return all(flag is True or flag is False for flag in flags)


def hashable(key) -> bool:
    try:
        hash(key)
    except TypeError:
        return False
    return True


def remember(key, kernel) -> Made | None:
    """A record of ``kernel``'s constructor call ``key`` (its attributes now), kept in the
    memo; None where the key is not hashable."""
    try:
        hash(key)
    except TypeError:
        return None
    return memo.put(key, Made(dict(kernel.__dict__)))


def _rebind_plan(kernel, run):
    """(bound methods of ``kernel`` in ``run``'s globals: (name, function, attribute name
    in its __dict__ or None), names of the functions its text defined), or None where
    anything else in them reaches ``kernel``."""
    if type(run) is not types.FunctionType or run.__closure__:
        return None
    env = run.__globals__
    methods, own = [], []
    for name, value in env.items():
        if type(value) is types.FunctionType and value.__globals__ is env:
            if value.__closure__ or any(_bound_to(v, kernel) for v in value.__dict__.values()):
                return None  # (its other attributes are the memo's, shared already)
            own.append(name)
        elif type(value) is types.MethodType and value.__self__ is kernel:
            attr = next((k for k, v in kernel.__dict__.items() if v is value), None)
            methods.append((name, value.__func__, attr))
        elif name != "__builtins__" and _reaches(value, kernel):
            return None
    if run not in [env[name] for name in own]:
        return None
    own.sort(key=lambda name: env[name] is not run)  # the launcher first
    names = {id(env[name]): name for name in own}
    return tuple(methods), tuple((name, env[name], _attributes(env[name], names))
                                 for name in own)


def _attributes(f, names: dict) -> tuple:
    """(attribute, value, how a copy gets it) of a generated function: ``dict`` for a cache
    (a new, empty one), the name of another function of the text (its copy), else None (the
    same value)."""
    return tuple((attr, value, dict if type(value) is dict else names.get(id(value)))
                 for attr, value in f.__dict__.items())


def _bound_to(value, kernel) -> bool:
    return value is kernel or getattr(value, "__self__", None) is kernel


def _reaches(value, target, depth: int = 3) -> bool:
    """Whether ``target`` is among what ``value`` refers to, ``depth`` levels down (a
    closure cell, a partial's arguments, a dict's values): what a launcher bound to one
    object would hold of it other than its methods."""
    level = [value]
    for _ in range(depth):
        if any(v is target for v in level):
            return True
        level = [r for v in level if not isinstance(v, (type, types.ModuleType))
                 for r in gc.get_referents(v)]
    return any(v is target for v in level)
