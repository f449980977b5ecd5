"""Vectorised simulation: every thread of a batch of blocks runs each statement at once.

:mod:`.vecemit` writes the kernel a second time, for
arrays: a value is a NumPy array over the batch's threads (or a scalar every thread
shares), and each block of statements runs under a mask of the threads that take it.
Both sides of a divergent ``if`` run under their masks; a loop runs while any thread
is still in it; ``return``, ``break`` and ``continue`` clear mask bits; a local that
some path leaves unassigned carries a mask of the threads that assigned it (the
per-thread simulator's "read before it is assigned" check); loads, stores and atomics
only touch the threads of the mask, in thread order. Barriers and warp collectives
are answered where every thread reaches them, with the per-thread scheduler's checks
(:mod:`.vecruntime`).

What it cannot run the same way (print, clock64, breakpoint, cooperative groups,
cub, jit.thrust, grid sync and clusters, racecheck, atomics whose order would differ
from the per-thread scheduler's) makes the launch run on the per-thread scheduler
(:mod:`.scheduler`), which stays the reference: :func:`run` picks the path and
records it (``kernel.simulate.last_path``).
"""

from __future__ import annotations

import re

import numpy

from ..errors import InternalError, JitError, KernelArgumentError, KernelAssertionError
from . import emit, scheduler, textures, vecruntime
from .emit import CONTEXT
from .vecemit import VECTOR, NotVectorised, VectorEmitter, VectorProgram

#: "auto": vectorise what can be, else the per-thread scheduler; "threads": always the
#: per-thread scheduler; "vector": vectorise or raise (tests).
MODE = "auto"
#: True: run each vectorisable launch both ways and compare the results bit for bit
#: (the test suite's differential check; the per-thread results are kept).
DIFFERENTIAL = False
#: Threads per batch: blocks are run together up to about this many threads.
BATCH_THREADS = 1 << 17

_T_ATTRS = frozenset(["lane", "shared", "dynamic", "local", "block", "rank"])


class Vectorised:
    """One signature's vectorised Python, or why there is none (``reason``)."""

    def __init__(self, program=None, function=None, namespace=None, reason=None):
        self.program, self.function, self.namespace = program, function, namespace
        self.reason = reason
        # the arguments a launch may write (kept to undo a launch that reruns per thread)
        self.written = ()
        if program is not None:
            every = "*" in program.written
            self.written = tuple(k for k, name in enumerate(program.params)
                                 if every or name in program.written)
        self.source = (
            "\n".join(fn.text for fn in program.functions.values()) if program else ""
        )


def build(parsed, types, mode, cname, py_func) -> Vectorised:
    program = VectorProgram(mode)
    try:
        emitter = VectorEmitter(parsed, types, mode, program, "kernel", cname, VECTOR)
        program.stack.append(py_func)
        emitter.emit()
    except NotVectorised as exc:
        return Vectorised(reason=str(exc))
    except JitError as exc:  # the per-thread build, which succeeded, is the judge
        return Vectorised(reason=f"not vectorised: {exc}")
    reason = _atomic_order(program.atomic_sites)
    if reason:
        return Vectorised(reason=reason)
    namespace = vecruntime.names()
    namespace.update(textures.names())
    namespace["_jk_where"] = _where
    namespace.update(program.constants)
    source = "\n".join(fn.text for fn in program.functions.values())
    reason = _unknown_names(source, namespace)
    if reason:
        return Vectorised(reason=reason)
    for fn in program.functions.values():
        emit.compile_function(fn, namespace)
    return Vectorised(program, namespace[cname], namespace)


def _where(c, a, b):
    if type(c) is not numpy.ndarray:
        return a if c else b
    return numpy.where(c, a, b)


def _atomic_order(sites) -> str | None:
    """Atomics are applied in thread order per statement; a thread that runs several
    whose order matters would see another order than the per-thread scheduler's."""
    sensitive = [
        s for s in sites
        if s["used"] or s["op"] in ("exch", "cas", "inc", "dec")
        or (s["kind"] in "fc" and s["op"] in ("add", "sub"))
    ]
    if not sensitive:
        return None
    if len(sites) == 1 and not sites[0]["loop"] and not sites[0]["device"]:
        return None
    return "atomics whose order decides their results, run more than once per thread"


_NAME = re.compile(r"\b_jk_\w+")
_T_ATTR = re.compile(r"\b_jk_T\.(\w+)")
_CONTEXT_NAMES = frozenset(
    [n.strip() for n in (CONTEXT + ", _jk_m").split(",")]
    + [f"_jk_n{g}{ax}" for g in "bg" for ax in "xyz"]  # set by each launch
)


def _unknown_names(source: str, namespace: dict) -> str | None:
    for name in sorted(set(_NAME.findall(source))):
        if name not in namespace and name not in _CONTEXT_NAMES:
            return f"{name} has no vectorised form"
    for attr in set(_T_ATTR.findall(source)):
        if attr not in _T_ATTRS:
            return f"_jk_T.{attr} has no vectorised form"
    if re.search(r"\b_jk_T\.block\.", source):  # the grid, the cluster
        return "a group other than this_thread_block()"
    if "breakpoint(" in source or "yield" in source:
        return "breakpoint() or a generator"
    return None


# -- running ------------------------------------------------------------------------------


def launch(vec: Vectorised, grid, block, args, shared_mem: int) -> None:
    """Run the vectorised kernel over the whole grid, a batch of blocks at a time."""
    g, b = scheduler.dims3(grid, "grid"), scheduler.dims3(block, "block")
    size = b[0] * b[1] * b[2]
    if size > 1024:
        raise KernelArgumentError(f"block: at most 1024 threads per block, got {b}")
    namespace = vec.namespace
    for ax, n in zip("xyz", b):
        namespace[f"_jk_nb{ax}"] = numpy.uint32(n)
    for ax, n in zip("xyz", g):
        namespace[f"_jk_ng{ax}"] = numpy.uint32(n)
    blocks = [(x, y, z) for z in range(g[2]) for y in range(g[1]) for x in range(g[0])]
    per = max(1, BATCH_THREADS // size)
    fn, shared = vec.function, vec.program.shared
    args = tuple(args)
    with numpy.errstate(all="ignore"):
        try:
            for start in range(0, len(blocks), per):
                batch = vecruntime.Batch(blocks[start : start + per], b, shared, shared_mem)
                vecruntime.BATCH[0] = batch
                live = numpy.ones(batch.n, bool)
                fn(batch, batch.tx, batch.ty, batch.tz, batch.bx, batch.by, batch.bz, live, *args)
        except KernelAssertionError as exc:
            raise exc.with_traceback(scheduler._user_frames(exc.__traceback__)) from None
        finally:
            vecruntime.BATCH[0] = None


def run(kernel, simulated, grid, block, host, shared_mem: int, racecheck: bool, cluster) -> None:
    """Run a simulated launch: vectorised where it can be (see the module docstring),
    else on the per-thread scheduler. Records the path in ``kernel.simulate.last_path``."""
    vec, reason = _vectorised(simulated, racecheck, cluster)
    if MODE == "vector" and vec is None:
        raise NotVectorised(reason)
    if vec is None:
        kernel.__dict__["_simulate_path"] = ("threads", reason)
        _threads(simulated, grid, block, host, shared_mem, racecheck, cluster)
        return
    kernel.__dict__["_simulate_path"] = ("vector", None)
    if DIFFERENTIAL:
        _differential(kernel, vec, simulated, grid, block, host, shared_mem)
        return
    arrays = [host[k] for k in vec.written if isinstance(host[k], numpy.ndarray)]
    saved = vecruntime.snapshot(arrays)
    try:
        launch(vec, grid, block, host, shared_mem)
    except KernelArgumentError:
        raise
    except Exception as exc:  # noqa: BLE001 - see below
        # an error the checks found (rerun per thread: its exact thread, message and the
        # writes of the threads before it), a race, or a gap in the vectorised path
        vecruntime.restore(saved)
        if isinstance(exc, vecruntime.Race):
            why = str(exc)
        elif isinstance(exc, KernelAssertionError):
            why = "a check failed: rerun per thread for its place and the writes before it"
        else:
            why = f"the vectorised run failed: {exc!r}"
        kernel.__dict__["_simulate_path"] = ("threads", why)
        _threads(simulated, grid, block, host, shared_mem, racecheck, cluster)


def _threads(simulated, grid, block, host, shared_mem, racecheck, cluster) -> None:
    scheduler.launch(simulated.function, simulated.generator, simulated.program,
                     simulated.namespace, grid, block, host, shared_mem, racecheck, cluster)


def _vectorised(simulated, racecheck, cluster):
    if MODE == "threads":
        return None, "the per-thread scheduler was asked for"
    if racecheck:
        return None, "racecheck=True runs on the per-thread scheduler"
    if cluster is not None or simulated.program.cooperative:
        return None, "clusters and grid sync run on the per-thread scheduler"
    vec = simulated.__dict__.get("vectorised")
    if vec is None:
        vec = simulated.vectorised = build(*simulated.emit_args)
    return (vec if vec.function is not None else None), vec.reason


def _differential(kernel, vec, simulated, grid, block, host, shared_mem) -> None:
    """Both paths on copies of the arguments; the per-thread one is the reference."""
    arrays = [k for k, a in enumerate(host) if isinstance(a, numpy.ndarray)]
    mine = vecruntime.aliased_copies(host, arrays)
    want = None
    try:
        _threads(simulated, grid, block, host, shared_mem, False, None)
    except Exception as exc:  # noqa: BLE001 - compared below, then raised
        want = exc
    got = None
    try:
        launch(vec, grid, block, mine, shared_mem)
    except Exception as exc:  # noqa: BLE001 - compared below
        got = exc
    name = kernel.__name__
    if isinstance(got, vecruntime.Race):
        if want is not None:
            raise want
        return  # a racing kernel: the per-thread order decides (run() runs it per thread)
    if (want is None) != (got is None) or (want is not None and type(want) is not type(got)):
        raise InternalError(
            f"{name}: the vectorised simulation raised {got!r}, the per-thread one {want!r}"
        ) from (got or want)
    if want is not None:
        raise want
    for k in arrays:
        a, b = host[k], mine[k]
        if a.tobytes() != b.tobytes():
            bad = numpy.flatnonzero(_value_bytes(a) != _value_bytes(b))
            if not bad.size:
                continue
            raise InternalError(
                f"{name}: argument {k} differs between the vectorised and the per-thread "
                f"simulation (first differing byte {int(bad[0])}: "
                f"{a.reshape(-1)[int(bad[0]) // a.itemsize]!r} per thread, "
                f"{b.reshape(-1)[int(bad[0]) // b.itemsize]!r} vectorised)"
            )


def _value_bytes(a):
    """The bytes of ``a``'s elements that hold values: NumPy copies a record with a sub-array
    field field by field, leaving its padding as the new memory had it."""
    rows = numpy.ascontiguousarray(a).reshape(-1).view(numpy.uint8).reshape(-1, a.itemsize)
    if a.dtype.fields is None:
        return rows.reshape(-1)
    used = numpy.zeros(a.itemsize, bool)
    _mark_fields(a.dtype, 0, used)
    return numpy.where(used, rows, 0).reshape(-1)


def _mark_fields(dtype, offset, used) -> None:
    if dtype.fields is None:
        used[offset:offset + dtype.itemsize] = True
        return
    for field, at, *_ in dtype.fields.values():
        _mark_fields(field, offset + at, used)


__all__ = ["MODE", "DIFFERENTIAL", "NotVectorised", "VectorEmitter", "build", "run"]
