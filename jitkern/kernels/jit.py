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

import functools
import importlib
import inspect
import linecache
import os
import re
import sys
import threading
import types as types_module
import weakref

from ..config import settings as _settings
from ..toolchain import nvrtc
from ..runtime import debugcheck, memo
from ..runtime import simulated as simdevice
from ..runtime import args as launch_args
from ..runtime.args import KEYERS, key_of, key_reader
from ..runtime.graphargs import ArgMap
from ..runtime.launcher import make_jit_runner
from .base import (Kernel, build, debug_flag, debug_launched, debug_watch, function_from_bytes,
                   launch_star, main_function_bytes, resolve_arch, several_devices)
from .jit_args import arg_type, argument_error, describe_for_bind, layouts
from .jit_index import Generated, binary_slot, load_index, store_index
from ..runtime.module import Function, check_cluster
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
from ..compiler.captured import CapturedGlobals, fingerprints_hold
from ..compiler.diagnostics import arch_guard, arch_needs, check_target, compile_message
from ..compiler.program import Program, function_identity
from ..toolchain.inspection import inspect_binary
from ..lazy import lazy_import

# off a warm first call's path (the on-disk index names the source and the binary:
# tests/test_first_call.py): loaded when first used
_statements = lazy_import("jitkern.compiler.statements")  # the emitter: to generate a kernel
_thrust = lazy_import("jitkern.compiler.builtins.thrust")  # the builtins: only to compile
_sim = lazy_import("jitkern.sim")  # the simulator: only when simulating
export = lazy_import("jitkern.toolchain.export")  # only when exporting
_export_kinds = lazy_import("jitkern.kernels._export_kinds")  # only when exporting


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
    obj = sys.modules.get(module)
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    return obj


def _kernel_by_name(module: str, qualname: str) -> "JitKernel":
    importlib.import_module(module)
    kernel = _attribute(module, qualname)
    if not isinstance(kernel, JitKernel):
        raise JitkernTypeError(f"unpickling a jitkern kernel: {module}.{qualname} is not a kernel")
    return kernel


class JitKernel(Kernel):
    """A Python function compiled to CUDA on demand, one binary per argument types.

    ``py_func`` is the Python function. The kernel object is a ``functools.partial``
    whose function is the whole launch (kernels/base.py's Kernel says why): the general
    path at first, then the launcher generated for the last argument signature.
    """

    _pickle_hint = "a jitkern kernel cannot be pickled; pickle the Python function instead"
    _fresh = ("_entries", "_by_types", "cached_codes")
    _made_again = True  # kernels/made_again.py

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
        again = _again_key(type(self), func, mode, device, options, debug, lineinfo)
        if again is not None and self._again(again, py_func=func, __doc__=func.__doc__,
                                             _lock=threading.Lock()):
            return  # the same function decorated again (inside a caller): what it made
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
        source = frontend.source_digest(func) or id(func)  # no source: never shared
        self._identity = (function_identity(func), source, self.mode, self.options,
                          self.debug)
        self._start(again=again)

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
            simulator = self._simulator = _sim.Simulator(self, lambda a: self._arg_types(a, True))
        return simulator

    def _check_call(self, grid, block, args, cluster) -> None:
        """What is refused before anything is specialised, compiled or simulated."""
        if block is None or args is None or isinstance(args, (str, bytes)):
            raise KernelArgumentError(
                f"launch {self.__name__} as {self.__name__}[grid, block](*args) or "
                f"{self.__name__}(grid, block, args) with args a tuple"
            )
        if cluster is not None:
            check_cluster(self.__name__, grid, cluster, self.allow_nonportable_cluster_size)

    def _simulated(self, grid=None, block=None, args=None, shared_mem=0, stream=None, *,
                   cluster=None) -> None:
        self._check_call(grid, block, args, cluster)
        with simdevice.kernel_call(stream, args, self._argument_what):  # JITKERN_SIMULATE
            return self.simulate(grid, block, args, shared_mem, cluster=cluster)

    def _argument_what(self, i: int) -> str:
        """Argument ``i`` as the GPU launch's errors name it: ``k: argument 1 (y)``."""
        code = self.py_func.__code__
        params = code.co_varnames[: code.co_argcount]
        return f"{self.__name__}: argument {i}" + (f" ({params[i]})" if i < len(params) else "")

    # ``kernel(grid, block, args, shared_mem=0, stream=None)`` calls the partial's function.
    def _launch(self, grid=None, block=None, args=None, shared_mem=0, stream=None, *,
                cluster=None) -> None:
        """The general launch: find (or build) the entry for these arguments, launch on the
        current device the binary built for its arch, and make the entry's generated
        launcher the kernel's call for the next launch."""
        self._check_call(grid, block, args, cluster)
        keyers = KEYERS
        try:
            key = tuple([(keyers.get(type(a)) or key_reader(type(a)))(a) for a in args])
        except KernelArgumentError as exc:  # a host array: name it, as every kernel kind does
            raise argument_error(exc, args, self) from None
        except (JitkernTypeError, JitkernValueError):  # e.g. a CAI descr: the argument named
            self._arg_types(tuple(args), False)
            raise
        entry = self._entries.get(key)
        if entry is None or not entry.globals.same_objects():
            entry = self._entry_for(tuple(args), key)
        fn = self._function(entry.build, entry.signature, entry.generated)
        launch_args = tuple(args)
        if entry.extras is not None:
            launch_args = launch_args + entry.extras(launch_args)
        if cluster is not None:  # thread-block clusters (sm_90+): cuLaunchKernelEx
            fn.launch_cluster(grid, block, launch_args, shared_mem, stream, entry.cooperative,
                              cluster, self.allow_nonportable_cluster_size)
            return
        # a new object of a kept definition goes straight to the launcher of the signature
        # its Function last launched (a miss comes back here, on the general path)
        first = (self.func is self._launch and fn.watch is None and entry.extras is None
                 and fn.last_plan() is not None)
        if not first:
            fn.launch(grid, block, launch_args, shared_mem, stream, entry.cooperative)
            if fn.watch is not None:  # debug builds stay on this path: each launch is noted
                debug_launched(fn.watch, stream)
                return None
        run = entry.launcher(fn, self._function, args)
        if self.func is not run:
            self._install(run)
        return run(grid, block, args, shared_mem, stream) if first else None

    def _bind_parts(self, args: tuple):
        """For Kernel.bind: the entry's Function and full arguments, and the check that a
        replaced argument keeps this specialisation."""
        key = tuple([key_of(a) for a in args])
        entry = self._entries.get(key) or self._entry_for(tuple(args), key)

        def refresh(i, value, user_args):
            if key_of(value) != key[i]:
                raise KernelArgumentError(
                    f"argument {i} of {self.__name__}: the bound launch is specialised for "
                    f"{describe_for_bind(user_args[i])}, got {describe_for_bind(value)}; "
                    "bind again for other types")
            new = user_args[:i] + (value,) + user_args[i + 1:]
            return new + entry.extras(new) if entry.extras is not None else new

        full = args + entry.extras(args) if entry.extras is not None else args
        fn = self._function(entry.build, entry.signature, entry.generated)
        return fn, full, entry.cooperative, refresh

    def _entry_for(self, args: tuple, key) -> "_Entry":
        """What a call key needs besides a device's binary: the JIT types, the derived
        shape/stride parameters, the launcher's guards (the table's, and the captured
        globals'), from the generated source (through the memo of builds)."""
        if self.device:
            raise JitkernTypeError(f"{self.__name__} is a device function: call it from a kernel")
        types, guards, arg_env = self._memoized(("entry", key), "",
                                                lambda: self._signature_of(args))
        try:
            generated = self._generated(types, key)
        except JitError as exc:
            raise exc.with_traceback(None) from None
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or not entry.globals.same_objects():
                captured = CapturedGlobals(self.py_func, generated.fingerprints)
                global_guards, global_env = captured.guards()
                guard_env = dict(arg_env, **global_env)
                entry = _Entry(launch_args.derived_params(generated.plans),
                               generated.cooperative, guards + global_guards, guard_env,
                               self._launch)
                entry.types = tuple(map(type, args))
                entry.signature = types  # the JIT types this entry was built for
                entry.generated = generated
                # what its Functions are kept under: a global's new value generates another
                entry.build = (key, generated.source)
                entry.globals = captured
                self._entries[key] = entry
        return entry

    def _signature_of(self, args: tuple) -> tuple:
        """(JIT types, the launcher's guards over the arguments, the names they use) of a
        call key, from sample arguments ``args`` (the same for every key's arguments: kept
        in the memo of builds)."""
        types = self._arg_types(args, allow_host=False)
        guards, env = launch_args.guards(args, layouts(types))
        return types, guards, env

    # -- builds: the generated source, and a device's binary (kernels/base.py) --------

    def _definition(self) -> tuple:
        return self._identity

    def _source_of(self, key) -> str:
        return ""  # the generated source is part of the build's own key (_make_function)

    def _generated(self, types: tuple, call_key=None) -> "Generated":
        """What emission produces for ``types`` (of the arguments of ``call_key``, a cheaper
        key to look up): from the memo of builds when this function's source read the same
        values of every global it captured, else from the on-disk index, else emitted now."""
        key = self._memo_key(("generated", types if call_key is None else call_key), "")
        generated = memo.get(key)
        if generated is None or not fingerprints_hold(self.py_func, generated.fingerprints):
            generated = load_index(self, types) or self._generate(types)
            memo.put(key, generated)
        self.cached_codes[types] = generated.source
        return generated

    def _make_function(self, build, arch, types, generated) -> "Function":
        """The Function of ``build``, (call key, generated source), for ``arch`` (``types``:
        the call's JIT types): the memo keeps it per generated source (a closure of other
        values generates another)."""
        key, source = build
        return self._memoized(("function", build, arch), source,
                              lambda: self._new_function(key, arch, types, generated))

    def _function_for(self, key, arch, *extra):
        fn = self._make_function(key, arch, *extra)
        fn.owners.add(self)
        return fn

    def _new_function(self, key, arch, types, generated) -> "Function":
        try:
            built = self._build(types, arch)
        except JitError as exc:
            raise exc.with_traceback(None) from None
        fn = Function(built.binary, built.symbol, display_name=self.__name__)
        fn.owner = weakref.ref(self)
        fn.arg_map = _graph_args(self, key, types, generated.plans)
        if self.debug:
            fn.watch = debug_watch(f"kernel {self.__name__}", built.sites, built.binary)
        return fn

    def _forget_builds(self) -> None:
        self._entries.clear()
        self._by_types.clear()
        self._simulator = None  # its translations, per argument types

    # -- inspection ----------------------------------------------------------

    def check_debug(self) -> None:
        """Synchronise the current device and raise KernelAssertionError if a bounds check
        of this debug kernel failed. Any synchronisation does the same for the launches
        made through ``kernel[grid, block](...)``; this one also sees bound launches and
        graph replays."""
        watches = [fn.watch for fn in self._functions.loaded() if fn.watch is not None]
        if watches:
            debugcheck.check_watches(watches, [debugcheck.synchronize_current()])

    def inspect(self, *args, arch=None):
        """Source, CUBIN and resource use for these arguments, without a GPU when arch is given.

        NumPy arrays stand for device arrays of the same dtype, shape and layout.
        """
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
        generated = self._generated(types)
        binary = _cached_binary(generated, binary_slot(self, generated, target), self.options)
        check_target(self.__name__, generated.needs, target.cc)
        if binary is None:
            binary = _compile(generated, self.options, target, arch)
            generated.binaries[binary_slot(self, generated, target)] = binary.key
            store_index(self, types, generated)
        built = _Built(binary, generated.symbol, generated.plans, generated.cooperative)
        built.globals = CapturedGlobals(self.py_func, generated.fingerprints)
        built.sites = generated.sites
        self._by_types[key] = built
        return built

    def _generate(self, types: tuple) -> "Generated":
        parsed = self.parsed()
        program = Program(self.mode, debug=self.debug)
        symbol = _symbol_name(parsed.name)
        emitter = _statements.FunctionEmitter(parsed, types, self.mode, program, "kernel", symbol)
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
    return ArgMap(code.co_varnames[: code.co_argcount], key=key, keyer=key_of,
                  described=tuple(t.describe() for t in types), describe=describe_for_bind,
                  extras=plans, dims=_dims_of, keyer_for=_keyer_of_type)


def _keyer_of_type(cls: type):
    """The key reader of values of ``cls``, or None where the type is the key (scalars)."""
    return None if launch_args.scalar_keyed(cls) else (KEYERS.get(cls) or key_reader(cls))


def _dims_of(a):
    return launch_args.dims_of(a)[2:]


def _again_key(cls, func, mode, device, options, debug, lineinfo) -> tuple | None:
    """The memo's key of a decoration (kernels/base.py ``Kernel._again``): the function's
    code object, qualified name, globals and the objects its closure holds, by identity (the
    record keeps the first function, so none of them is freed and its id reused), and the
    decorator's settings (``debug=None`` reads JITKERN_DEBUG now). None for anything but a
    plain function (refused the long way) or an empty closure cell."""
    if type(func) is not types_module.FunctionType or type(debug) not in (bool, type(None)):
        return None
    cells = func.__closure__
    try:
        held = tuple([id(cell.cell_contents) for cell in cells]) if cells else ()
    except ValueError:  # a cell not yet filled
        return None
    return ("made", cls, id(func.__code__), func.__qualname__, id(func.__globals__), held,
            func.__defaults__, mode, device, device.__class__, options,
            _settings.debug if debug is None else debug, lineinfo, lineinfo.__class__)


class _Entry:
    """One call key's specialisation: its JIT types, derived parameters, guards, and the
    generated launcher made from a device's packing plan (the kernel's call for it)."""

    __slots__ = ("extras", "cooperative", "run", "guards", "guard_env", "general", "types",
                 "signature", "generated", "build", "globals")

    def __init__(self, extras, cooperative, guards, guard_env, general):
        self.extras = extras
        self.cooperative = cooperative
        self.guards, self.guard_env = guards, guard_env
        self.run = None  # the kernel's call for this signature: (grid, block, args, shm, stream)
        self.general = general

    def launcher(self, fn, function_of, samples):
        """The generated launcher after a launch of ``fn`` (the current device's Function):
        one generated function that checks the signature, packs and launches, made from
        ``fn``'s packing plan (on several GPUs, the one of the device last launched on:
        each is made once and cached on its plan); else, for signatures with derived
        parameters (or no plan), a generated check in front of the Function's own path,
        which on several GPUs asks ``function_of`` (the kernel's) for each device's Function."""
        last = fn.last_plan()
        if self.extras is None and last is not None and (self.types or not self.guards):
            state, plan = last
            self.run = fn.fast_launcher(
                state, plan, self.cooperative, fallback=self.general, positional=True,
                guards=tuple(self.guards), guard_env=self.guard_env, star=launch_star)
        elif self.run is None:
            current = fn if not several_devices() else functools.partial(
                function_of, self.build, self.signature, self.generated)
            self.run = make_jit_runner(self.types, self.guards, self.guard_env, current,
                                       self.extras, self.cooperative, self.general, samples,
                                       star=launch_star)
        return self.run


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
    if _statements.user_c_name(name) == name and not name.startswith("_"):
        return name
    return _statements.generated_name("kernel", _statements.ascii_spelling(name).lstrip("_"))


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

    backend = _thrust.backend_for(generated.source)
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
