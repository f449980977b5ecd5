"""Stage 4: the user's kernel object — specialisation, compile, cache, launch.

``@rawkernel()`` returns a :class:`JitKernel`. Its first call with a new
argument-type signature emits CUDA C++ (frontend -> statements -> program),
compiles it through the shared backend, and remembers the loaded
:class:`~jitkern.runtime.module.Function` under a cheap per-call key. Later
calls compute that key, look it up in a dict and launch: no parsing, no string
work.

A small on-disk index maps (file, function, source lines, mode, options,
signature) to the generated source, so the first call in a fresh process skips
parsing and emission and goes straight to the compile cache. Each index entry
records the fingerprint of every global the kernel read; an entry whose globals
changed is ignored.
"""

from __future__ import annotations

import inspect
import linecache
import os
import re
import threading
import types as types_module
import weakref

import numpy

from .. import config
from ..arrays.layout import fits_int32 as _fits_int32  # also read by generated guards
from ..toolchain import nvrtc
from ..runtime import debugcheck
from ..runtime import args as launch_args
from ..runtime import libraries
from ..runtime.graphargs import ArgMap
from ..runtime.launcher import make_jit_runner
from .base import (KernelPartial, LaunchSyntax, build, debug_flag, debug_launched, debug_watch,
                   function_from_bytes, launch_star, main_function_bytes, resolve_arch)
from .jit_args import (  # noqa: F401 - arg_type: the tests' name
    _KEYERS,
    _argument_error,
    _cai_type,
    _dims_getter,
    _extras_function,
    _info_type,
    _key_jitkern,
    _keyer_for,
    _scalar_key,
    arg_type,
)
from .jit_index import Generated, binary_slot, load_index, store_index
from ..runtime.module import check_cluster
from ..config import settings
from ..errors import (
    CompileError,
    JitError,
    JitkernNotImplementedError,
    JitkernRuntimeError,
    JitkernTypeError,
    JitkernValueError,
    JitSyntaxError,
    KernelArgumentError,
)
from ..compiler import frontend, infer
from ..compiler import types as T
from ..compiler.captured import CapturedGlobals
from ..compiler.diagnostics import arch_guard, arch_needs, check_target, compile_message
from ..compiler.program import Program, function_identity


def rawkernel(
    func=None,
    *,
    mode: str = "cuda",
    device: bool = False,
    options=(),
    fast_math: bool = False,
    lineinfo: bool = True,
    debug: bool | None = None,
):
    """Compile a Python function into a CUDA kernel (or a device function).

    Use as ``@rawkernel()`` (or ``@rawkernel``). ``mode`` chooses how Python
    literals are typed: ``'cuda'`` (int32/float32, CuPy's cuda mode) or
    ``'numpy'`` (NumPy 2 promotion, literals weak; ``'python'``, cupyx.jit's name for
    it, is accepted). ``device=True`` makes a
    device function callable from kernels. ``options`` go to NVRTC;
    ``fast_math`` adds ``--use_fast_math``; ``lineinfo`` (on unless ``False``) adds
    ``-lineinfo``: the binary maps instructions to the kernel's Python lines, so
    compute-sanitizer and Nsight Compute name them (no change to the code generated).
    ``debug=True`` (default: ``JITKERN_DEBUG``) builds a bounds-checked kernel compiled with
    ``-lineinfo``: an out-of-bounds access raises :class:`jitkern.KernelAssertionError` at
    the next synchronisation (docs/debug_mode.md).
    """
    mode = infer.check_mode(mode)
    # a bad option is named now, not at the first launch
    owner = "rawkernel" if func is None else f"rawkernel {getattr(func, '__name__', 'kernel')!r}"
    nvrtc.normalize_options(options, owner)
    opts = tuple([options] if isinstance(options, str) else options)
    if fast_math:
        opts += ("--use_fast_math",)

    def wrap(f):
        return JitKernel(f, mode=mode, device=device, options=opts, debug=debug,
                         lineinfo=lineinfo)

    return wrap(func) if func is not None else wrap


def _rebuild_kernel(func, mode, device, options, debug=False, source=None) -> "JitKernel":
    if source is not None:
        func = _with_source(func, *source)
    return JitKernel(func, mode=mode, device=device, options=options, debug=debug,
                     lineinfo="-lineinfo" in options)


def _rebuild_from_bytes(blob, *settings) -> "JitKernel":
    """A kernel of a script, its function pickled by value (:func:`main_function_bytes`)."""
    return _rebuild_kernel(function_from_bytes(blob), *settings)


def _source_of(func):
    """(file name, first line, lines) of ``func``'s source, carried in a by-value pickle:
    cloudpickle (Dask, multiprocessing) names rebuilt functions ``<dynamic-code>``."""
    try:
        lines, first = inspect.getsourcelines(func)
    except (OSError, TypeError):
        return None
    return func.__code__.co_filename, first, tuple(lines)


def _with_source(func, filename, first, lines):
    """``func`` reading its source from ``filename``, lines ``first``... (in linecache where
    the file is not there, or is not the same), so the JIT parses it and errors point at it."""
    padded = [""] * (first - 1) + list(lines)
    if linecache.getlines(filename)[first - 1:first - 1 + len(lines)] != list(lines):
        linecache.cache[filename] = (sum(map(len, padded)), None, padded, filename)
    if func.__code__.co_filename != filename:
        func.__code__ = func.__code__.replace(co_filename=filename)
    return func


def _attribute(module: str, qualname: str):
    """``module.qualname`` if that module is loaded and has it, else None."""
    import sys

    obj = sys.modules.get(module)
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    return obj


def _kernel_by_name(module: str, qualname: str) -> "JitKernel":
    import importlib

    importlib.import_module(module)
    kernel = _attribute(module, qualname)
    if not isinstance(kernel, JitKernel):
        raise JitkernTypeError(f"unpickling a jitkern kernel: {module}.{qualname} is not a kernel")
    return kernel


class JitKernel(LaunchSyntax, KernelPartial):
    """A Python function compiled to CUDA on demand, one binary per argument types.

    ``py_func`` is the Python function. The kernel object is a ``functools.partial``
    whose function is the whole launch (see backend.kernel_object for why): the general
    path at first, then the launcher generated for the last argument signature.
    """

    _pickle_hint = "a jitkern kernel cannot be pickled; pickle the Python function instead"

    def _call_name(self) -> str:
        # Python's own call errors name the kernel the user wrote: "fill() missing ...".
        return self.__name__

    def __reduce__(self):
        # Pickled by reference, like a function: as the module attribute the decorator
        # replaced (a script's kernel by value: main_function_bytes), or else as the Python
        # function and the decorator's settings. Unpickled, the on-disk index and the
        # compile cache give the binary back without compiling.
        func = self.py_func
        module, qualname = getattr(func, "__module__", None), getattr(func, "__qualname__", "")
        settings = (self.mode, self.device, self.options, self.debug, _source_of(func))
        if module and _attribute(module, qualname) is self:
            blob = main_function_bytes(module, func)
            if blob is None:
                return _kernel_by_name, (module, qualname)
            return _rebuild_from_bytes, (blob, *settings)
        return _rebuild_kernel, (func, *settings)

    def __init__(self, func, *, mode: str = "cuda", device: bool = False, options=(),
                 debug: bool | None = None, lineinfo: bool = True):
        if not isinstance(func, types_module.FunctionType):
            raise JitkernTypeError(
                f"rawkernel() compiles a Python function written with def (or a lambda), "
                f"got {_describe_callable(func)}; write the kernel as a def and decorate it "
                "with @jitkern.rawkernel()"
            )
        self.py_func = func
        self.mode = mode
        self.device = device
        self.debug = debug_flag(debug, "rawkernel", default_from_env=True)
        self.__name__ = getattr(func, "__name__", "kernel")
        nvrtc.normalize_options(options, f"rawkernel {self.__name__!r}")
        self.options = tuple(options)
        if (lineinfo or self.debug) and "-lineinfo" not in self.options:
            self.options += ("-lineinfo",)  # profilers and compute-sanitizer show Python lines
        self.__doc__ = getattr(func, "__doc__", None)
        self._parsed = None
        self._entries: dict = {}  # per-call key -> _Entry
        self._by_types: dict = {}  # (types, target, debug) -> _Built
        self._lock = threading.Lock()
        self.cached_codes: dict = {}  # signature (tuple of types) -> source
        self._simulator = None  # kernel.simulate, with its builds
        self._set_call(self._launch)

    # -- identity for the frontend and the caches --------------------------

    @property
    def __jit_device__(self):
        if not self.device:
            raise AttributeError("__jit_device__")
        return True

    def __jit_fingerprint__(self) -> str:
        return (
            f"device:{function_identity(self.py_func)}:{frontend.source_digest(self.py_func)}:"
            f"{self.mode}"
        )

    def parsed(self) -> frontend.ParsedFunction:
        if self._parsed is None:
            self._parsed = frontend.parse_function(self.py_func)
        return self._parsed

    @property
    def cached_code(self) -> str:
        """The generated source of the (last) compiled signature."""
        if not self.cached_codes:
            raise JitkernRuntimeError(
                f"{self.__name__} has not been compiled yet; call it or use "
                ".inspect(*args, arch=...)"
            )
        return next(reversed(self.cached_codes.values()))

    def get_lto_ir(self, args):
        """cupyx.jit's experimental LTO-IR export: not available (raises)."""
        raise JitkernNotImplementedError(
            f"{self.__name__}.get_lto_ir: jitkern does not produce LTO IR; the generated CUDA "
            "source is .cached_code (or .inspect(*args, arch=...).source) and the CUBIN "
            ".inspect(*args, arch=...).cubin"
        )

    def __repr__(self) -> str:
        kind = "device function" if self.device else "kernel"
        return f"<jitkern.rawkernel {kind} {self.__name__} (mode={self.mode!r})>"

    # -- launching ---------------------------------------------------------

    # kernel[grid, block](*args): KernelPartial.__getitem__ (kernels.base).

    @property
    def simulate(self):
        """Run on the CPU with the GPU build's semantics and checks (docs/debugging.md):
        ``k.simulate[grid, block](*args)`` or ``k.simulate(grid, block, args, shared_mem=0)``."""
        simulator = self._simulator
        if simulator is None:
            from ..sim import Simulator  # the simulator: loaded when simulating

            simulator = self._simulator = Simulator(self, lambda a: self._arg_types(a, True))
        return simulator

    def bind(self, grid, block, *args, shared_mem: int = 0, stream=None):
        """A launch with ``args`` fixed: ``b()`` launches it again (see
        KernelPartial.bind). While simulate is on (``JITKERN_SIMULATE=1``) it runs in the
        simulator instead: a :class:`~jitkern.sim.BoundSimulation`."""
        if settings.simulate:
            return self.simulate.bind(grid, block, *args, shared_mem=shared_mem, stream=stream)
        return super().bind(grid, block, *args, shared_mem=shared_mem, stream=stream)

    # ``kernel(grid, block, args, shared_mem=0, stream=None)`` calls the partial's function.
    def _launch(self, grid=None, block=None, args=None, shared_mem=0, stream=None, *,
                cluster=None) -> None:
        """The general launch: find (or build) the entry for these arguments, launch, and
        make the entry's generated launcher the kernel's call for the next launch."""
        if block is None or args is None or isinstance(args, (str, bytes)):
            raise KernelArgumentError(
                f"launch {self.__name__} as {self.__name__}[grid, block](*args) or "
                f"{self.__name__}(grid, block, args) with args a tuple"
            )
        if cluster is not None:  # refused before anything is compiled or packed
            check_cluster(self.__name__, grid, cluster, self.allow_nonportable_cluster_size)
        if settings.simulate:  # JITKERN_SIMULATE=1: every JIT launch runs on the CPU
            return self.simulate(grid, block, args, shared_mem, cluster=cluster)
        keyers = _KEYERS
        try:
            key = tuple([(keyers.get(type(a)) or _keyer_for(type(a)))(a) for a in args])
        except KernelArgumentError as exc:  # a host array: name it, as every kernel kind does
            raise _argument_error(exc, args, self) from None
        except (JitkernTypeError, JitkernValueError):  # e.g. a CAI descr: the argument named
            self._arg_types(tuple(args), False)
            raise
        entry = self._entries.get(key)
        if entry is None or not entry.globals.same_objects():
            entry = self._entry_for(tuple(args), key)
        launch_args = tuple(args)
        if entry.extras is not None:
            launch_args = launch_args + entry.extras(launch_args)
        if cluster is not None:  # thread-block clusters (sm_90+): cuLaunchKernelEx
            entry.function.launch_cluster(grid, block, launch_args, shared_mem, stream,
                                          entry.cooperative, cluster,
                                          self.allow_nonportable_cluster_size)
            return
        entry.function.launch(grid, block, launch_args, shared_mem, stream, entry.cooperative)
        if entry.watch is not None:  # debug builds stay on this path: each launch is noted
            debug_launched(entry.watch, stream)
            return
        entry.upgrade()
        if entry.run is None:  # no packing plan to build on (several GPUs, or extras)
            entry.run = make_jit_runner(entry.types, entry.guards, entry.guard_env,
                                        entry.function, entry.extras, entry.cooperative,
                                        self._launch, args, star=launch_star)
        if self.func is not entry.run:
            self._install(entry.run)

    def _install(self, run) -> None:
        """Make ``run`` (a generated GPU launcher) the kernel's call until simulate turns on."""
        self._set_call(run)
        _INSTALLED.add(self)

    def _bind_parts(self, args: tuple):
        """For KernelPartial.bind: the entry's Function and full arguments, and the check
        that a replaced argument keeps this specialisation."""
        key = tuple([(_KEYERS.get(type(a)) or _keyer_for(type(a)))(a) for a in args])
        entry = self._entries.get(key) or self._entry_for(tuple(args), key)

        def refresh(i, value, user_args):
            if (_KEYERS.get(type(value)) or _keyer_for(type(value)))(value) != key[i]:
                raise KernelArgumentError(
                    f"argument {i} of {self.__name__}: the bound launch is specialised for "
                    f"{_describe_for_bind(user_args[i])}, got {_describe_for_bind(value)}; "
                    "bind again for other types")
            new = user_args[:i] + (value,) + user_args[i + 1:]
            return new + entry.extras(new) if entry.extras is not None else new

        full = args + entry.extras(args) if entry.extras is not None else args
        return entry.function, full, entry.cooperative, refresh

    def _entry_for(self, args: tuple, key) -> "_Entry":
        if self.device:
            raise JitkernTypeError(f"{self.__name__} is a device function: call it from a kernel")
        types = self._arg_types(args, allow_host=False)
        try:
            built = self._build(types, arch=None)
        except JitError as exc:
            raise exc.with_traceback(None) from None
        from ..runtime.module import Function

        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry.globals is not built.globals:
                fn = Function(built.binary, built.symbol, display_name=self.__name__)
                fn.owner = weakref.ref(self)
                fn.arg_map = _graph_args(self, key, types, built.plans)
                extras = _extras_function(built.plans)
                guards, guard_env = _guards(args, types)
                global_guards, global_env = built.globals.guards()
                guard_env.update(global_env)
                entry = _Entry(fn, extras, built.cooperative, guards + global_guards, guard_env,
                               self._launch)
                entry.types = tuple(map(type, args))
                entry.globals = built.globals
                if self.debug:
                    entry.watch = debug_watch(f"kernel {self.__name__}", built.sites, built.binary)
                self._entries[key] = entry
        return entry

    # -- inspection ----------------------------------------------------------

    def check_debug(self) -> None:
        """Synchronise the current device and raise KernelAssertionError if a bounds check
        of this debug kernel failed. Any synchronisation does the same for the launches
        made through ``kernel[grid, block](...)``; this one also sees bound launches and
        graph replays."""
        watches = [e.watch for e in list(self._entries.values()) if e.watch is not None]
        if watches:
            debugcheck.check_watches(watches, [debugcheck.synchronize_current()])

    def inspect(self, *args, arch=None):
        """Source, CUBIN and resource use for these arguments, without a GPU when arch is given.

        NumPy arrays stand for device arrays of the same dtype, shape and layout.
        """
        from ..toolchain.inspection import inspect_binary

        types = self._arg_types(args, allow_host=True)
        try:
            built = self._build(types, arch=arch)
        except JitError as exc:
            raise exc.with_traceback(None) from None
        return inspect_binary(built.binary, built.symbol, self.__name__)

    def export(self, path, *args_or_types, arch=("sm_80", "sm_90"), format="fatbin"):
        """Write this kernel, specialised for these arguments (example arrays, NumPy arrays
        standing for device arrays, scalars or Type objects), for ``arch`` as ``format``
        ('fatbin', 'cubin', 'ptx' or 'ltoir'), with a C++ header and a manifest
        (docs/export.md). ``jitkern.load(path)`` launches it again without NVRTC."""
        from ..toolchain import export

        if self.device:
            raise JitkernTypeError(f"{self.__name__} is a device function: export the kernels "
                                   "that call it")
        if self.debug:
            raise JitkernValueError(f"{self.__name__} is a debug build, whose checks report "
                                    "through jitkern at run time; export it with debug=False")
        export.check_format(format)
        types = self._arg_types(args_or_types, allow_host=True)
        try:
            generated = self._generate(types)
        except JitError as exc:
            raise exc.with_traceback(None) from None
        for target in export.normalize_archs(arch):
            check_target(self.__name__, generated.needs, target)
        from . import _export_kinds

        return export.write(path, _export_kinds.jit_spec(self, types, generated), arch, format)

    def emit(self, *types_or_args):
        """The generated CUDA C++ for argument types (Type objects) or example arguments."""
        types = self._arg_types(types_or_args, allow_host=True)
        try:
            return self._generate(types).source
        except JitError as exc:
            raise exc.with_traceback(None) from None

    def _arg_types(self, args, allow_host: bool) -> tuple:
        """The JIT type of each argument (Type objects pass through); a refused argument is
        reported with the parameter it was given for."""
        code = self.py_func.__code__
        params = code.co_varnames[: code.co_argcount]
        names = [*params, *(f"#{k}" for k in range(len(params), len(args)))]
        out = []  # (a wrong count is the emitter's error, with the parameter list)
        for name, a in zip(names, args):
            if isinstance(a, T.Type):
                out.append(a)
                continue
            try:
                out.append(arg_type(a, allow_host))
            except (JitkernTypeError, JitkernValueError) as exc:
                raise KernelArgumentError(
                    f"{self.__name__}() argument {name!r}: {exc}; kernels take device arrays "
                    "and scalars of bool, integer, float (16, 32, 64 bits), bfloat16 and "
                    "complex types, and structs (frozen dataclasses, NamedTuples, numpy.void)"
                ) from None
        return tuple(out)

    # -- building --------------------------------------------------------------

    def _build(self, types: tuple, arch) -> "_Built":
        target = resolve_arch(arch)
        key = (types, target, self.debug)
        built = self._by_types.get(key)
        if built is not None:
            captured = built.globals.current()
            if captured is not None:
                built.globals = captured
                return built
            del self._by_types[key]  # a global changed: compile again
        generated = load_index(self, types)
        binary = None
        if generated is not None:
            binary = _cached_binary(generated, binary_slot(self, generated, target), self.options)
        if generated is None:
            generated = self._generate(types)
        check_target(self.__name__, generated.needs, target.cc)
        if binary is None:
            binary = _compile(generated, self.options, target, arch)
            generated.binaries[binary_slot(self, generated, target)] = binary.key
            store_index(self, types, generated)
        built = _Built(binary, generated.symbol, generated.plans, generated.cooperative)
        built.globals = CapturedGlobals(self.py_func, generated.fingerprints)
        built.sites = generated.sites
        self._by_types[key] = built
        self.cached_codes[types] = generated.source
        return built

    def _generate(self, types: tuple) -> "Generated":
        # the emitter and its builtins: loaded when a kernel is generated, which a warm
        # first call (the on-disk index names the source and the binary) never does
        from ..compiler.statements import FunctionEmitter

        parsed = self.parsed()
        program = Program(self.mode, debug=self.debug)
        symbol = _symbol_name(parsed.name)
        emitter = FunctionEmitter(parsed, types, self.mode, program, "kernel", symbol)
        program.stack.append(self.py_func)
        try:
            code = emitter.emit()
        except RecursionError:
            raise JitSyntaxError(
                f"{parsed.source.filename}:{parsed.source.first_line}: {parsed.qualname!r} "
                "nests expressions too deeply to compile; split the deepest expression over "
                "several statements"
            ) from None
        signature = ", ".join(t.describe() for t in types)
        needs = arch_needs(program)
        header = (
            f"// jitkern: kernel {parsed.qualname} from {parsed.source.filename}\n"
            f"// signature: ({signature}); mode={self.mode}"
            + ("; debug build (bounds-checked)" if self.debug else "")
        ) + arch_guard(needs)
        source = program.assemble(code.code, header)
        plans = [list(p.extras) for p in code.params]
        return Generated(
            source,
            symbol,
            plans,
            program.cooperative,
            program.fingerprints,
            parsed.source.filename,
            {},
            needs,
            tuple(program.debug_sites),
        )


def _graph_args(kernel, key, types, plans) -> ArgMap:
    """How a graph update re-packs this specialisation's arguments (runtime/graphargs.py):
    each keeps its key, and an array's shape/stride parameters follow it."""
    code = kernel.py_func.__code__
    return ArgMap(code.co_varnames[: code.co_argcount], key=key, keyer=_key_of,
                  described=tuple(t.describe() for t in types), describe=_describe_for_bind,
                  extras=plans, dims=_dims_of, keyer_for=_keyer_of_type)


def _key_of(a):
    return (_KEYERS.get(type(a)) or _keyer_for(type(a)))(a)


def _keyer_of_type(cls: type):
    """The key reader of values of ``cls``, or None where the type is the key (scalars)."""
    keyer = _KEYERS.get(cls) or _keyer_for(cls)
    return None if keyer is _scalar_key else keyer


def _dims_of(a):
    return _dims_getter(type(a))(a)


def _describe_for_bind(a) -> str:
    try:
        return arg_type(a).describe()
    except Exception:  # a value no kernel accepts: its Python type says enough
        return type(a).__name__


#: Kernels whose call is a generated GPU launcher: it skips _launch and so the
#: settings.simulate check, so turning simulate on puts their general launch back.
_INSTALLED: weakref.WeakSet = weakref.WeakSet()


def _uninstall_launchers() -> None:
    for kernel in list(_INSTALLED):
        kernel._set_call(kernel._launch)
    _INSTALLED.clear()


config.on_simulate.append(_uninstall_launchers)


class _Entry:
    __slots__ = ("function", "extras", "cooperative", "run", "guards", "guard_env", "general",
                 "types", "globals", "watch")

    def __init__(self, function, extras, cooperative, guards, guard_env, general):
        self.function = function
        self.extras = extras
        self.cooperative = cooperative
        self.guards, self.guard_env = guards, guard_env
        self.run = None  # the kernel's call for this signature: (grid, block, args, shm, stream)
        self.general = general
        self.watch = None  # debug builds: the debugcheck.Watch of the binary

    def upgrade(self) -> None:
        """With the Function's packing plan known, make ``run`` one generated function that
        checks the signature, packs and launches (one Python call, not two). With several
        GPUs the plan, and so the launcher, is the one of the device last launched on
        (each is made once and cached on its plan)."""
        if self.extras is not None or (self.guards and not self.types):
            return  # (the generated launcher checks no guards for a kernel without arguments)
        last = self.function.last_plan()
        if last is None:
            return
        state, plan = last
        self.run = self.function.fast_launcher(
            state, plan, self.cooperative, fallback=self.general, positional=True,
            guards=tuple(self.guards), guard_env=self.guard_env, star=launch_star)


def _guards(args: tuple, types: tuple) -> tuple[list, dict]:
    """(conditions, names they use): what ``a0, a1, ...`` must meet, beyond each having the
    type of the same argument in ``args``, to have the signature ``types``. The conditions
    may say no to arguments of the same signature, never yes to another."""
    env = {"_fits_int32": _fits_int32}
    terms = []
    for i, (a, t) in enumerate(zip(args, types)):
        if type(a) is numpy.void:  # the launcher packs this record dtype's bytes
            env[f"D{i}"] = a.dtype
            terms.append(f"(a{i}.dtype is D{i} or a{i}.dtype == D{i})")
            continue
        if not isinstance(t, T.Array):
            continue
        keyer = _keyer_for(type(a))
        read = launch_args.array_read(type(a), a)
        if read is not None:  # the launcher has read a{i}_i once (launch.ArrayRead)
            terms += _read_guards(read.kind, i, a, t, env)
        elif keyer is _key_jitkern:
            env[f"D{i}"] = a._dtype
            terms.append(f"a{i}._dtype is D{i}")
            if t.is_pointer_like:
                terms.append(f"a{i}._strides == ({t.dtype.itemsize},)")
            else:
                terms.append(f"len(a{i}._shape) == {t.ndim}")
                if t.index32:
                    terms.append(f"_fits_int32(a{i}._shape, a{i}._strides, {t.dtype.itemsize})")
        elif t.is_pointer_like and _guard_1d(type(a), keyer) is not None:
            # the table's inline check of a 1-D contiguous array of the sample's dtype; a
            # 1-element array it says no to takes the general path, which keys it correctly
            env[f"D{i}"] = a.dtype
            terms += [g.format(a=f"a{i}", D=f"D{i}") for g in _guard_1d(type(a), keyer)]
        else:
            env[f"K{i}"] = keyer
            env[f"V{i}"] = keyer(a)
            terms.append(f"K{i}(a{i}) == V{i}")
    return terms, env


def _read_guards(kind: str, i: int, a, t: T.Array, env: dict) -> list[str]:
    """Guards over ``a{i}_i``, what the launcher read from a protocol-only array: the CAI
    dict (``kind`` "cai") or DLPack's ArrayInfo ("info"). A 1-D contiguous array is checked
    inline (the common case: a few dict reads); any other layout by its JIT type."""
    v = f"a{i}_i"
    if kind == "cai":
        cai = a.__cuda_array_interface__
        env[f"TS{i}"] = cai["typestr"]
        terms = [f"{v}['typestr'] == TS{i}", f"{v}.get('mask') is None"]
        if cai["typestr"][1:2] == "V":  # records of one size: the descr says which
            env[f"DS{i}"] = cai.get("descr")
            terms.append(f"{v}.get('descr') == DS{i}")
        if t.is_pointer_like:
            env[f"ST{i}"] = (None, (t.dtype.itemsize,))
            return terms + [f"len({v}['shape']) == 1", f"{v}.get('strides') in ST{i}"]
        env[f"CT{i}"], env[f"V{i}"] = _cai_type, t
        return terms + [f"CT{i}({v}) is V{i}"]
    env[f"D{i}"] = _dlpack_dtype(a)
    if t.is_pointer_like:
        return [f"{v}.dtype == D{i}", f"{v}.strides == ({t.dtype.itemsize},)"]
    env[f"IT{i}"], env[f"V{i}"] = _info_type, t
    return [f"IT{i}({v}) is V{i}"]


def _dlpack_dtype(a):
    from ..arrays.interop import describe

    return describe(a).dtype


def _guard_1d(cls: type, keyer):
    """The table's ``guard_1d`` templates for ``cls`` (runtime.libraries), where its keys
    come from the same row and the class has every attribute they read; else None."""
    row = libraries.library(cls)
    if row.guard_1d is None or getattr(keyer, "dims", None) is not row.dims:
        return None
    names = {m for g in row.guard_1d for m in re.findall(r"\{a\}\.(\w+)", g)}
    return row.guard_1d if all(hasattr(cls, name) for name in names) else None


class _Built:
    __slots__ = ("binary", "symbol", "plans", "cooperative", "globals", "sites")

    def __init__(self, binary, symbol, plans, cooperative):
        self.binary = binary
        self.symbol = symbol
        self.plans = plans
        self.cooperative = cooperative
        self.sites = ()


def _describe_callable(obj) -> str:
    if isinstance(obj, (types_module.BuiltinFunctionType, types_module.BuiltinMethodType)):
        return f"the builtin {obj.__name__}(), which has no Python source to compile"
    if isinstance(obj, JitKernel):
        return f"{obj!r}, which is compiled already"
    if isinstance(obj, type):
        return f"the class {obj.__name__}"
    return f"a {type(obj).__name__} object"


def _symbol_name(name: str) -> str:
    """The kernel's C symbol: its Python name when that is a plain C name, else a made-up one
    (a reserved, CUDA or non-ASCII name would not compile, or would hide CUDA's function)."""
    from ..compiler.statements import ascii_spelling, generated_name, user_c_name

    if user_c_name(name) == name and not name.startswith("_"):
        return name
    return generated_name("kernel", ascii_spelling(name).lstrip("_"))


# ---------------------------------------------------------------------------
# compile


def _cached_binary(generated: Generated, slot: str, options: tuple):
    """The binary the index names in ``slot`` (jit_index.binary_slot: the target and the
    user's headers), straight from the compile cache.

    This skips compile_source's key computation, which locates the toolkit and loads
    NVRTC (tens of ms in a fresh process): the key was computed from all of that when
    the entry was written. None when the index names no binary or the cache lost it.
    """
    key = generated.binaries.get(slot)
    if key is None:
        return None
    return nvrtc.load_cached(key, generated.source, options)


def _compile(generated: Generated, options: tuple, target, arch):
    """Compile for ``target``; a CompileError says where in the user's Python (``arch``:
    what the user named, for the advice)."""
    def explain(exc: CompileError) -> str:
        return compile_message(exc, generated.source, generated.filename, options, arch)

    from ..compiler.builtins.thrust import backend_for  # the builtins: only to compile

    backend = backend_for(generated.source)
    if backend == "nvcc":
        _require_nvcc(generated.filename)
    try:
        return build(generated.source, options=options, program_name=generated.filename,
                     arch=target, backend=backend, normalized=False, explain=explain)
    except CompileError as exc:
        overflow = _PARAM_OVERFLOW.search(exc.log or str(exc))
        if overflow is not None:  # the arguments' fault, not generated code's
            raise KernelArgumentError(
                f"{os.path.basename(generated.filename)}: the kernel's arguments need "
                f"{int(overflow[1]):,} bytes of parameters, more than CUDA's limit of "
                f"{int(overflow[2]):,}; pass large data "
                "in an array, or fewer/smaller scalar arguments"
            ) from None
        raise


def _require_nvcc(program_name: str) -> None:
    """A kernel that uses jit.thrust compiles with nvcc (NVRTC cannot compile Thrust): say so,
    and how to get one, where no nvcc is found."""
    if nvrtc._nvcc_path() is not None:
        return
    raise CompileError(
        f"{os.path.basename(program_name)}: the kernel uses jit.thrust, and Thrust compiles only "
        "with a CUDA toolkit's nvcc (NVRTC cannot compile it); no nvcc was found on the PATH or "
        "in CUDA_HOME/bin. Install the CUDA toolkit (https://developer.nvidia.com/cuda-downloads, "
        "or `conda install -c nvidia cuda-nvcc`) and put its bin/ on the PATH or set CUDA_HOME; "
        "without one, kernel.simulate runs the kernel on the CPU"
    )


_PARAM_OVERFLOW = re.compile(
    r"parameter space overflowed \((\d+) bytes required, max (\d+) bytes allowed\)")
