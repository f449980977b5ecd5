"""RawKernel and RawModule: kernels written as CUDA C++ source, or loaded from binaries."""

from __future__ import annotations

import errno
import functools
import hashlib
import os
import re
import weakref

from ..toolchain import nvrtc as compiler
from ..runtime import driver, memo
from ..runtime import simulated as simdevice
from ..toolchain.nvrtc import Binary
from ..toolchain import binary_files
from ..toolchain.cubin import cubin_params, elf_arch, elf_problem
from ..toolchain.inspection import Inspection, inspect_binary, kernel_names
from . import made_again
from .base import Kernel, build, headers_digest, memoized, resolve_arch, simulating
from ..runtime.graphargs import ArgMap
from ..runtime.launch import build_plan
from ..runtime.memory import MemoryPointer
from ..runtime.module import SETTABLE_ATTRIBUTES, Function, load
from ..errors import (
    CompileError,
    CUDAError,
    FunctionNotFoundError,
    JitkernError,
    JitkernFileNotFoundError,
    JitkernNotImplementedError,
    JitkernRuntimeError,
    JitkernTypeError,
    JitkernValueError,
    LaunchError,
)
from ..compiler.strings import c_params as _signature
from ..compiler.strings import cucomplex
from ..toolchain.jitify import jitify_options
from ..toolchain.cache import identity as cache_identity
from ..lazy import lazy_import

# off a cached first launch's path (tests/test_first_call.py): loaded when first used
export = lazy_import("jitkern.toolchain.export")  # only when exporting
_sim_strings = lazy_import("jitkern.sim.raw")  # only when simulating

_BACKENDS = ("nvrtc", "nvcc")


def _prepare(code: str, options, translate_cucomplex: bool, jitify: bool, owner: str | None = None,
             backend: str = "nvrtc"):
    """Apply translate_cucomplex and jitify to (source, options); a bad option names ``owner``."""
    if translate_cucomplex:
        code = cucomplex.translate_cucomplex(code)
    opts = compiler.normalize_options(options, owner, backend)
    if jitify:
        opts = tuple(o for o in jitify_options() if o not in opts) + opts
    return code, opts


def _prepared(code: str, options, translate_cucomplex: bool, jitify: bool, owner: str,
              backend: str):
    """:func:`_prepare`, kept in the memo of builds: a kernel object made again with the same
    code and options reuses the checked options and translated source (a bad option is
    never kept: it raises)."""
    given = options if isinstance(options, str) else tuple(options)
    key = ("prepared", code, given, translate_cucomplex, jitify, backend)
    try:
        hash(key)
    except TypeError:  # an option that is not a str: _prepare names it
        return _prepare(code, options, translate_cucomplex, jitify, owner, backend)
    return memoized(key, lambda: _prepare(code, options, translate_cucomplex, jitify, owner,
                                          backend))


def _set_flags(obj, backend, translate_cucomplex, enable_cooperative_groups, jitify) -> None:
    """The constructor flags RawKernel and RawModule share (RawModule's kernels inherit them)."""
    obj.backend = backend
    obj.translate_cucomplex = translate_cucomplex
    obj.enable_cooperative_groups = enable_cooperative_groups
    obj.jitify = jitify


def _check_flag(check_args) -> bool:
    if not isinstance(check_args, bool):
        raise JitkernTypeError(f"check_args: expected True or False, got {check_args!r}")
    return check_args


#: what a kernel's signature is compiled for where no device says (the simulator's checks)
_NO_DEVICE_ARCH = "sm_90"


def _compiled_params(kernel, binary):
    """The parameters a launch is checked against: the kernel's (or name expression's)
    signature as the compiler compiled it into ``binary`` (compiler/strings/c_params);
    None when ``check_args`` is off or the compiler did not say (sizes from the CUBIN)."""
    if not kernel.check_args or kernel._source is None:
        return None
    return _signature.compiled_params(kernel._source, kernel.name,
                                      binary.signatures.get(kernel.name))


def _check_common(code, name, options, backend):
    if not isinstance(code, str):
        raise JitkernTypeError(f"code: expected CUDA source as a str, got {type(code).__name__}")
    if name is not None and not isinstance(name, str):
        raise JitkernTypeError(f"name: expected a str, got {type(name).__name__}")
    if backend not in _BACKENDS:
        raise JitkernValueError(f"backend: expected one of {_BACKENDS}, got {backend!r}")


class RawKernel(Kernel):
    """A kernel from CUDA C++ source, compiled on first use and cached.

    ``k(grid, block, args, shared_mem=0, stream=None)`` launches it. ``grid`` and
    ``block`` are ints or 1-3 tuples, ``args`` a tuple of GPU arrays and scalars
    (Python ``int`` -> ``long long``, ``float`` -> ``double``, ``bool`` -> ``bool``,
    ``complex`` -> ``complex<double>``, NumPy scalars keep their type).

    Each launch is checked against the kernel's C signature, once per argument
    signature (docs/raw_kernels.md, "Checked arguments"): the count, pointer or value,
    the element type of each array, the kind and width of each scalar, and structs by
    value. ``check_args=False`` turns the source-based checks off (the parameter sizes
    the CUBIN reports are still checked).
    """

    _kind = "raw"
    _made_again = True  # kernels/made_again.py
    _star_by_keyword = True  # its call takes shared_mem and stream as keywords only

    # translate_cucomplex may be given by position, as CuPy's signature allows.
    def __init__(self, code: str, name: str, options=(), backend: str = "nvrtc",
                 translate_cucomplex: bool = False, *, enable_cooperative_groups: bool = False,
                 jitify: bool = False, check_args: bool = True):
        again = ("made", type(self), code, name, options, backend, translate_cucomplex,
                 enable_cooperative_groups, jitify, check_args, translate_cucomplex.__class__,
                 enable_cooperative_groups.__class__, jitify.__class__, check_args.__class__)
        if self._again(again):  # the same call as before: what it made, at once
            return
        _check_common(code, name, options, backend)
        if not name:
            raise JitkernValueError("name: the kernel's name is required")
        self.code = code
        self.name = name
        _set_flags(self, backend, translate_cucomplex, enable_cooperative_groups, jitify)
        self.check_args = _check_flag(check_args)
        self._source, self.options = _prepared(code, options, translate_cucomplex, jitify,
                                               f"RawKernel {name!r}", backend)
        self._module = None  # the RawModule this kernel came from, if any
        self._start(again=again if made_again.exact(again[6:10]) else None)

    @classmethod
    def _from_module(cls, module: "RawModule", name: str, check_args=None) -> "RawKernel":
        self = cls.__new__(cls)
        self.check_args = module.check_args if check_args is None else _check_flag(check_args)
        self.code = module.code
        self.name = name
        _set_flags(self, module.backend, module.translate_cucomplex,
                   module.enable_cooperative_groups, module.jitify)
        self.options = module.options
        self._source = module._source
        self._module = module
        again = module._again_key
        self._start(again=("made", cls, "module", again, name)
                    if again is not None and check_args is None else None)
        return self

    # -- builds (kernels/base.py: per device and arch, through the memo) --------
    def _definition(self) -> tuple:
        module = self._module
        if module is not None and module._file_binary is not None:  # RawModule(path=...)
            return (module._file_binary.key, self.name, self.check_args)
        names = module.name_expressions if module is not None else ()
        return (self._source, self.name, self.options, self.backend, names, self.check_args)

    def _binary(self, arch=None, log_stream=None, device=False) -> Binary:
        module = self._module
        if module is not None:
            return module._binary(arch, log_stream, device)
        return build(self._source, options=self.options, arch=arch,
                     program_name=f"{self.name}.cu", log_stream=log_stream, backend=self.backend,
                     signatures=self.check_args)

    def _make_function(self, key, arch) -> Function:
        binary = self._binary(arch, device=True)
        params = _compiled_params(self, binary)
        fn = Function(binary, self.name, display_name=self.name, params=params)
        fn.owner, fn.arg_map = weakref.ref(self), ArgMap.for_c(params)  # graph updates
        return fn

    @property
    def _params(self):
        """The signature launches are checked against: the loaded function's, else (the
        simulator, no device) as compiled for sm_90; None where it cannot be known."""
        loaded = self._functions.loaded()
        return loaded[-1].params if loaded else self._no_device_params

    @functools.cached_property
    def _no_device_params(self):
        if not self.check_args or self._source is None:
            return None
        try:
            return _compiled_params(self, self._binary(_NO_DEVICE_ARCH))
        except JitkernError:  # no NVRTC, or code only the simulator runs: not checked
            return None

    def compile(self, log_stream=None) -> None:
        """Compile (and load on the current device) now; write the compiler log to ``log_stream``."""
        self._binary(resolve_arch(None), log_stream, device=True)
        self._function()

    # -- launch -----------------------------------------------------------
    # ``k(grid, block, args, shared_mem=0, stream=None)`` calls the partial's function:
    def _launch(self, grid, block, args, *, shared_mem: int = 0, stream=None,
                cluster=None) -> None:
        """The general launch; afterwards the call goes straight to the generated launcher
        of this argument signature (single-GPU machines only: no device check there).
        ``cluster=(x, y, z)`` launches in thread-block clusters (sm_90+)."""
        fn = self._function()
        if cluster is not None:
            fn.launch_cluster(grid, block, args, shared_mem, stream,
                              self.enable_cooperative_groups, cluster,
                              self.allow_nonportable_cluster_size)
            return None
        first = self.func is self._launch and fn.last_plan() is not None
        if not first:  # (a new object of a kept definition: its launcher first, below)
            fn.launch(grid, block, args, shared_mem, stream, self.enable_cooperative_groups)
        last = fn.last_plan()
        if last is not None:
            state, plan = last
            run = fn.fast_launcher(state, plan, self.enable_cooperative_groups,
                                   fallback=self._launch, guards=plan.guards,
                                   guard_env=plan.guard_env)
            self._install(run)
            if first:  # the launcher of the signature last launched: a miss comes back here
                return run(grid, block, args, shared_mem=shared_mem, stream=stream)
        return None

    def _forget_builds(self) -> None:
        self.__dict__.pop("_sim_modules", None)  # the simulator's translations

    def _simulated(self, grid, block, args, *, shared_mem: int = 0, stream=None, cluster=None):
        with self._on_simulator(stream, args):  # JITKERN_SIMULATE=1
            return self.simulate(grid, block, args, shared_mem, stream)

    def _simulated_bind(self, grid, block, args, shared_mem, stream):
        return _sim_strings.BoundRaw(self, grid, block, args, shared_mem)

    def _argument_what(self, i: int) -> str:
        """Argument ``i`` as the GPU launch names it: ``k: argument 1 (y)`` (the name as
        the source spells it, where it says)."""
        params = (_signature.kernel_params(self._source, self.name)
                  if self._source is not None else None) or ()
        return f"{self.name}: argument {i}" + (f" ({params[i].name})" if i < len(params) else "")

    @property
    def simulate(self):
        """Run on the CPU in jitkern's simulator (docs/debugging.md):
        ``k.simulate[grid, block](*args)`` or ``k.simulate(grid, block, args,
        shared_mem=0)``, with NumPy arrays. The C is translated into a JIT kernel; what
        is outside the simulator's C subset is refused, naming the construct and line."""
        return _sim_strings.RawSimulator(self)

    def _bind_parts(self, args: tuple):
        """For Kernel.bind: the argument count and kinds are checked against the
        compiled signature first (no GPU needed for that error)."""
        fn = self._function() if driver.is_available() else None
        params = fn.params if fn is not None else self._params
        if params is not None:
            build_plan(args, None, params, self.name)
        return fn or self._function(), args, self.enable_cooperative_groups, None

    @property
    def kernel(self) -> Function:
        """The loaded :class:`jitkern.runtime.module.Function` on the current device."""
        return self._function()

    @property
    def file_path(self):
        """The binary file the kernel's module was loaded from (``RawModule(path=...)``), else None."""
        return self._module.path if self._module is not None else None

    # -- attributes -------------------------------------------------------
    @property
    def attributes(self) -> dict:
        """The kernel's attributes on the current device (CuPy's names). On a simulated
        device, what a GPU of its compute capability reports, read from the kernel compiled
        for that arch (NVRTC, no GPU needed; docs/debugging.md)."""
        if simdevice.active() is not None:
            return self._simulated_attributes()
        return self._function().attributes()

    def _simulated_attributes(self) -> dict:
        """The attributes of the kernel compiled for the simulated device's arch: ptxas's
        registers and static shared, constant and local bytes; the threads per block its
        registers allow (65536 per block, allocated 256 per warp, at most 1024); the
        settable ones as set (by default the 48 KiB a launch may use less the static shared
        memory, and -1: no carveout preference)."""
        major, minor = driver.compute_capability(driver.current_device_id())
        binary = self._binary((major, minor))
        res = binary.resources.get(binary.lowered(self.name))
        if res is None:  # (a module from a file, or PTX: no ptxas report)
            regs = static = local = const = -1
            threads = 1024
        else:
            regs, static, local, const = (res.registers, res.shared_bytes, res.local_bytes,
                                          res.const_bytes)
            per_warp = -(-max(regs, 1) * 32 // 256) * 256
            threads = min(1024, 65536 // per_warp * 32)
        opt_in = self.__dict__.get("_shared_opt_in")
        return {"max_threads_per_block": threads, "shared_size_bytes": static,
                "const_size_bytes": const, "local_size_bytes": local, "num_regs": regs,
                "ptx_version": major * 10 + minor, "binary_version": major * 10 + minor,
                "cache_mode_ca": 0,
                "max_dynamic_shared_size_bytes": (49152 - max(static, 0) if opt_in is None
                                                  else int(opt_in)),
                "preferred_shared_memory_carveout": self.__dict__.get("_carveout", -1)}

    def inspect(self, arch=None) -> Inspection:
        """Source, CUBIN (or PTX) and resource use, compiled for ``arch``.

        ``arch`` is any target the installed NVRTC supports: ``'sm_90'`` (CUBIN),
        ``'sm_90a'``/``'sm_100f'`` (arch- or family-specific CUBIN), ``'compute_90'``
        (PTX), ``90`` or ``(9, 0)``. No GPU is needed when it is given. Raises
        FunctionNotFoundError (a ValueError) when the compiled code holds no kernel of
        this name, listing those it does hold.
        """
        binary = self._binary(arch)
        check_kernel_name(binary, self.name, self._module)
        return inspect_binary(binary, self.name)

    def export(self, path, *, arch=("sm_80", "sm_90"), format="fatbin"):
        """Write this kernel for ``arch`` as ``format`` ('fatbin', 'cubin', 'ptx', 'ltoir'),
        with a C++ header and a manifest (docs/export.md); ``jitkern.load(path)`` launches
        it again without NVRTC. A kernel of a RawModule exports with the module's source."""
        module = self._module
        names = module.name_expressions if module is not None else ()
        entry = _export_entry(self.name, self._source, self.enable_cooperative_groups)
        return export.write(path, _export_spec(self, (entry,), names), arch, format)

    def __repr__(self) -> str:
        return f"<jitkern.RawKernel {self.name!r}>"

    def __reduce__(self):
        return _reduce_kernel(self)


def _attribute_property(attr: str):
    def getter(self):
        if simdevice.active() is not None:
            return self._simulated_attributes()[attr]
        return self._function().get_attribute(attr)

    def setter(self, value):
        if attr == "max_dynamic_shared_size_bytes":
            # kernel.simulate's limit too (runtime.limits: the opt-in of any GPU at most):
            # where launches run in the simulator, or no GPU is there, that is all it sets
            self._shared_opt_in = value
            if simulating() or simdevice.active() is not None or not driver.is_available():
                return
        elif simdevice.active() is not None:  # the carveout: a preference, kept to be read
            if isinstance(value, bool) or not isinstance(value, int) or not -1 <= value <= 100:
                raise JitkernValueError(
                    f"{self.name}: preferred_shared_memory_carveout: expected an int from -1 "
                    f"(no preference) to 100 (percent), got {value!r}")
            self._carveout = int(value)
            return
        self._function().set_attribute(attr, value)

    doc = f"The kernel's ``{attr}`` attribute on the current device."
    if attr in SETTABLE_ATTRIBUTES:
        return property(getter, setter, doc=doc + " Settable.")
    return property(getter, doc=doc)


for _attr in ("max_threads_per_block", "shared_size_bytes", "const_size_bytes",
              "local_size_bytes", "num_regs", "ptx_version", "binary_version", "cache_mode_ca",
              "max_dynamic_shared_size_bytes", "preferred_shared_memory_carveout"):
    setattr(RawKernel, _attr, _attribute_property(_attr))


_ELF = b"\x7fELF"
_FATBIN = b"\x50\xed\x55\xba"


def _binary_from_file(path: str) -> Binary:
    if not isinstance(path, (str, os.PathLike)):
        raise JitkernTypeError(f"path: expected a file path, got {type(path).__name__}")
    path = os.fspath(path)
    if not os.path.isfile(path):
        # OSError's (errno, message, filename) form: str() ends with the path.
        raise JitkernFileNotFoundError(errno.ENOENT, "RawModule(path=...): no such file (expected "
                                       "a .cubin, .fatbin or .ptx file)", path)
    with open(path, "rb") as f:
        data = f.read()
    arch = 0
    if data.startswith(_ELF):
        fmt = "cubin"
        problem = elf_problem(data)
        if problem is not None:
            raise JitkernValueError(f"path: {path!r} is not a usable CUBIN: {problem}")
        arch = elf_arch(data) or 0
    elif data.startswith(_FATBIN):
        fmt = "fatbin"
    elif b".version" in data[:4096] and b".target" in data[:8192]:
        fmt = "ptx"
    else:
        raise JitkernValueError(f"path: {path!r} is not a CUDA binary (expected a .cubin, .fatbin or .ptx file)")
    return Binary(data=data, fmt=fmt, arch=arch, log="", source="", options=(), name_expressions=(),
                  lowered_names={}, resources={}, key="file:" + hashlib.sha256(data).hexdigest())


def _check_file_arch(binary: Binary, path, arch) -> None:
    """``inspect(arch=...)`` of a module loaded from a file: a binary is not recompiled, so an
    arch other than the file's is refused rather than ignored."""
    target = compiler.target_for(arch, None)
    wanted = target.name
    if binary.fmt == "cubin" and binary.arch and target.fmt == "cubin" \
            and (target.cc, target.variant) == (binary.arch, ""):
        return
    held = f"a CUBIN for sm_{binary.arch}" if binary.fmt == "cubin" else f"a {binary.fmt} file"
    raise JitkernValueError(
        f"arch: this module was loaded from path={os.fspath(path)!r}, {held}; a binary file is "
        f"not compiled again, so arch={arch!r} ({wanted}) cannot be honoured: call inspect() "
        "without arch, or build the module from code= for another arch"
    )


def check_kernel_name(binary: Binary, name: str, module=None) -> None:
    """Refuse ``name`` unless the compiled ``binary`` holds that kernel.

    Read from the binary's own symbols (no GPU): the error lists the kernels it does
    hold, and for a template points at ``RawModule(name_expressions=...)``.
    """
    found = kernel_names(binary)
    symbol = binary.lowered(name)
    if found is None or symbol in found:
        return
    where = "this module" if module is not None else "this code"
    listed = ", ".join(map(repr, available_kernels(binary))) if found else "no kernels at all"
    message = f"name: {where} has no kernel {name!r}; it holds {listed}"
    hint = _name_hint(binary, name, found, module)
    raise FunctionNotFoundError(message + (f". {hint}" if hint else ""))


def _name_hint(binary: Binary, name: str, found: list, module) -> str:
    """What to do instead, for the usual reasons a kernel name is not in the binary."""
    base = name.split("<", 1)[0].strip()
    templated = "<" in name or re.search(r"template\s*<[^{;]*>\s*(__global__|\w+\s+__global__)"
                                         r"[^{;]*\b" + re.escape(base) + r"\s*\(", binary.source)
    if templated:
        example = name if "<" in name else f"{base}<float>"
        if module is not None:
            return (f"A template kernel exists only once instantiated: add {example!r} to "
                    f"this RawModule's name_expressions (now {list(module.name_expressions)})")
        return (f"A template kernel exists only once instantiated: use "
                f"RawModule(code=..., name_expressions=[{example!r}]).get_function({example!r})")
    mangled = [k for k in found if k.startswith("_Z") and f"{len(base)}{base}" in k]
    if mangled:
        return (f"{mangled[0]!r} looks like {name!r} with C++ name mangling: declare the "
                f'kernel extern "C", or name it through RawModule(name_expressions=[...])')
    if not found:
        return ('A kernel is a function declared extern "C" __global__ void '
                f"{base}(...) in the code")
    return ""


def _kernel_to_inspect(module: "RawModule", name: str) -> RawKernel:
    """A kernel of ``module`` on a machine without a GPU: it can be inspected (with
    ``arch=``) but not launched; the name is checked against the binary by inspect()."""
    return RawKernel._from_module(module, name)


class RawModule:
    """A CUDA module from source (``code=``) or from a .cubin/.ptx/.fatbin file (``path=``).

    ``get_function(name)`` returns a :class:`RawKernel`; template kernels are named by
    the expressions given in ``name_expressions`` (e.g. ``"fx3<float>"``).
    """

    def __init__(self, code: str | None = None, path=None, options=(), backend: str = "nvrtc",
                 translate_cucomplex: bool = False, enable_cooperative_groups: bool = False,
                 name_expressions=None, jitify: bool = False, *, check_args: bool = True):
        again = ("made", RawModule, code, path, options, backend, translate_cucomplex,
                 enable_cooperative_groups, name_expressions, jitify, check_args,
                 translate_cucomplex.__class__, enable_cooperative_groups.__class__,
                 jitify.__class__, check_args.__class__, cache_identity())
        if path is None and self._again(again):
            return
        if (code is None) == (path is None):
            raise JitkernTypeError("RawModule: give exactly one of code= (CUDA source) or path= (a binary file)")
        if code is not None:
            _check_common(code, None, options, backend)
        self.code = code
        self.path = path
        _set_flags(self, backend, translate_cucomplex, enable_cooperative_groups, jitify)
        self.check_args = _check_flag(check_args)
        if name_expressions is not None:
            if isinstance(name_expressions, str) or not all(isinstance(n, str) for n in name_expressions):
                raise JitkernTypeError("name_expressions: expected a sequence of str, e.g. ['fx3<float>']")
        self.name_expressions = tuple(name_expressions or ())
        if backend == "nvcc" and self.name_expressions:
            raise JitkernValueError(
                "RawModule: name_expressions needs backend='nvrtc' (NVRTC lowers the template "
                "names to the mangled symbols; nvcc cannot); use the default backend, or give "
                "the instantiations extern \"C\" wrappers")
        if code is not None:
            self._source, self.options = _prepared(code, options, translate_cucomplex, jitify,
                                                   "RawModule", backend)
            self._file_binary = None
        else:
            compiler.normalize_options(options, "RawModule", backend)  # named even if unused
            self._source, self.options = None, tuple(options)
            self._file_binary = _binary_from_file(path)
        self._kernels: dict = {}  # name (and (name, check_args) off the module's) -> kernel
        self._again_key = None  # a module from code: its constructor call, remembered
        if (code is not None and made_again.exact(again[6:8] + again[9:11])
                and made_again.hashable(again)):
            self._again_key = again
            memo.put(again, dict(self.__dict__))

    def _again(self, key) -> bool:
        """Whether this module is a copy of the memo's record of the same constructor call
        (as a kernel's: kernels/base.py ``Kernel._again``), with kernels of its own."""
        try:
            state = memo.get(key)
        except TypeError:  # an unhashable argument: the long way
            return False
        if state is None:
            return False
        self.__dict__.update(state)
        self._kernels = {}
        return True

    def _kernel_again(self, name: str) -> RawKernel | None:
        """The kernel ``name`` of a module made again, from the memo's record of the same
        get_function of the same module call, where that one is loaded on this device."""
        if self._again_key is None:
            return None
        kernel = RawKernel.__new__(RawKernel)
        if not kernel._again(("made", RawKernel, "module", self._again_key, name), _module=self):
            return None
        if kernel._functions.current(None) is None:  # not on this device yet: the long way
            return None
        self._kernels[name] = kernel
        return kernel

    def _binary(self, arch=None, log_stream=None, device=False) -> Binary:
        """The module's binary for ``arch``; ``device``: for loading on the current device
        (a file is loaded as it is, when that GPU can run it: toolchain/binary_files.py)."""
        if self._file_binary is not None:
            if device:
                device_id = driver.current_device_id()
                refused = binary_files.refusal(self._file_binary, self.path,
                                               driver.compute_capability(device_id), device_id)
                if refused:
                    raise LaunchError(refused)
            elif arch is not None:
                _check_file_arch(self._file_binary, self.path, arch)
            return self._file_binary
        if log_stream is not None:  # the log is written by a compile (or a cache hit)
            return self._build(arch, log_stream)
        target = resolve_arch(arch)
        key = ("raw-module", self._source, self.options, self.name_expressions, self.backend,
               target, headers_digest(self.options, self._source))
        return memoized(key, lambda: self._build(target, None))

    def _build(self, arch, log_stream) -> Binary:
        return build(self._source, options=self.options, name_expressions=self.name_expressions,
                     arch=arch, program_name="raw_module.cu", log_stream=log_stream,
                     backend=self.backend, signatures=True)

    def compile(self, log_stream=None) -> None:
        self._binary(None, log_stream)

    def get_function(self, name: str, *, check_args: bool | None = None) -> RawKernel:
        """The kernel ``name`` (compiles and loads the module on the current device).

        A name the module does not have raises :class:`jitkern.FunctionNotFoundError` (a
        ``ValueError``, ``AttributeError`` and ``RuntimeError``) naming the kernels it has.
        ``check_args`` (default: the module's) checks launches against the kernel's C
        signature; a template of ``name_expressions`` is checked as instantiated.
        """
        if not isinstance(name, str):
            raise JitkernTypeError(f"name: expected a str, got {type(name).__name__}")
        if check_args is not None and _check_flag(check_args) != self.check_args:
            return self._unchecked(name, check_args)
        kernel = self._kernels.get(name)
        if kernel is None and simdevice.active() is not None:
            return _kernel_to_inspect(self, name)  # nothing compiled: the simulator runs the C
        if kernel is None and not driver.is_available():
            binary = self._binary_to_check_names()
            if binary is not None:
                check_kernel_name(binary, name, self)  # as documented, without a GPU too
            return _kernel_to_inspect(self, name)
        if kernel is None:
            kernel = self._kernel_again(name)
        if kernel is None:
            binary = self._binary(device=True)  # a file this GPU cannot run: refused here
            if "<" in name and name not in binary.lowered_names:
                raise JitkernValueError(f"{name!r} is not one of this module's name_expressions "
                                 f"{list(self.name_expressions)}; add it there to instantiate it")
            kernel = RawKernel._from_module(self, name)
            try:
                kernel._function()
            except CUDAError as exc:
                if self._file_binary is None:
                    raise
                raise LaunchError(binary_files.load_failure(  # the driver refused the file
                    binary, self.path, exc.code, driver.driver_version(), str(exc))) from None
            except LaunchError:
                raise missing_function_error(binary, name) from None
            self._kernels[name] = kernel
        return kernel

    def _unchecked(self, name: str, check_args: bool) -> RawKernel:
        """get_function with the other check_args than the module's: a kernel of its own,
        kept apart from the module's cached one."""
        key = (name, check_args)
        kernel = self._kernels.get(key)
        if kernel is None:
            self.get_function(name)  # the name is checked (and the module loaded) as usual
            kernel = self._kernels[key] = RawKernel._from_module(self, name, check_args)
        return kernel

    def _binary_to_check_names(self) -> Binary | None:
        """Without a GPU: the binary whose symbols say which kernels the module has (the
        file's, or the code compiled for sm_90 as inspect() would), or None where the code
        does not compile for it (inspect(arch=...) then checks the name)."""
        if self._file_binary is not None:
            return self._file_binary
        try:
            return self._binary(_NO_DEVICE_ARCH)
        except (CompileError, JitkernValueError):
            return None

    def get_texref(self, name: str):
        """CuPy's texture-reference lookup: the API was removed in CUDA 12 (raises)."""
        raise JitkernNotImplementedError(f"RawModule.get_texref({name!r}): the texture reference "
                                         "API (texture<...> globals, TextureReference) was "
                                         "removed in CUDA 12; pass a jitkern.compat.texture."
                                         "TextureObject as a cudaTextureObject_t argument instead")

    def __reduce__(self):
        return _reduce_module(self)

    def get_global(self, name: str) -> GlobalPointer:
        """A pointer to the module's global variable ``name`` (``__device__``/``__constant__``).

        Wrap it as an array with ``jitkern.ndarray(shape, dtype, memptr=...)`` to write it,
        or as a CuPy array with ``cupy.ndarray(shape, dtype, memptr=ptr.to_cupy())``.
        """
        binary = self._binary()
        device_id = driver.current_device_id()
        mod = load(binary, device_id)
        ptr, size = mod.get_global(binary.lowered(name))
        return GlobalPointer(ptr, size, device_id, 0, owner=mod)

    get_global_var = get_global

    @property
    def file_path(self):
        """The binary file given as ``path=``, or None for a module compiled from ``code``."""
        return self.path

    @property
    def module(self):
        """The module loaded on the current device (compiles it first when needed)."""
        return load(self._binary(), driver.current_device_id())

    def inspect(self, arch=None) -> Inspection:
        binary = self._binary(arch)
        return inspect_binary(binary, "", name="raw_module")

    def export(self, path, *, arch=("sm_80", "sm_90"), format="fatbin"):
        """Write every kernel of the module (its ``extern "C"`` kernels and its
        name_expressions) for ``arch`` as ``format``, with a C++ header and a manifest
        (docs/export.md); ``jitkern.load(path)`` launches them without NVRTC."""
        if self._source is None:
            raise JitkernValueError(f"export: this RawModule was loaded from {self.path!r}, a "
                                    "binary; export needs a module built from source (code=)")
        export.check_format(format)
        first = export.normalize_archs(arch)[0]
        found = cubin_params(self._binary(first).data)
        names = [s for s in sorted(found) if not s.startswith("_Z")] + list(self.name_expressions)
        entries = tuple(_export_entry(n, self._source, self.enable_cooperative_groups)
                        for n in names)
        return export.write(path, _export_spec(self, entries, self.name_expressions), arch, format)

    def __repr__(self) -> str:
        origin = f"path={self.path!r}" if self.path is not None else "code=..."
        return f"<jitkern.RawModule {origin}>"


# ---------------------------------------------------------------------------
# A missing kernel, and pickling (kept apart from the rest: small and self-contained).


class GlobalPointer(MemoryPointer):
    """A module global's address (``RawModule.get_global``); the module stays loaded while
    the pointer (or an array viewing it) lives."""

    __slots__ = ()

    def to_cupy(self):
        """The same memory as a ``cupy.cuda.MemoryPointer`` (CuPy's ``get_global`` result), so
        ``cupy.ndarray(shape, dtype, memptr=ptr.to_cupy())`` works; needs CuPy installed."""
        try:
            import cupy  # only here: jitkern never needs CuPy
        except ImportError:
            raise JitkernRuntimeError(
                "GlobalPointer.to_cupy(): CuPy is not installed; view the global with "
                "jitkern.ndarray(shape, dtype, memptr=ptr) instead") from None
        mem = cupy.cuda.UnownedMemory(self.ptr, self.size, self, self.device_id)
        return cupy.cuda.MemoryPointer(mem, 0)


def available_kernels(binary: Binary) -> list[str]:
    """The kernels ``binary`` defines, by the names ``get_function`` takes."""
    symbols = kernel_names(binary)  # the binary's own symbol table (CUBIN) or .entry lines (PTX)
    if symbols is None:  # a fatbin: what ptxas reported
        symbols = list(binary.resources)
    by_symbol = {low: expr for expr, low in binary.lowered_names.items()}
    return sorted(by_symbol.get(s, s) for s in symbols)


def missing_function_error(binary: Binary, name: str) -> FunctionNotFoundError:
    """The error for ``get_function(name)`` on a module without that kernel."""
    names = available_kernels(binary)
    listed = ", ".join(repr(n) for n in names) if names else "none found"
    hint = ("" if "<" in name else
            "; kernels are found by name only when declared extern \"C\" (a template needs "
            "name_expressions)")
    return FunctionNotFoundError(
        f"RawModule.get_function: no kernel named {name!r} in the module; it has: {listed}{hint}")


def _rebuild_kernel(kwargs: dict) -> RawKernel:
    return RawKernel(**kwargs)


def _kernel_of_module(module: RawModule, name: str, check_args: bool | None = None
                      ) -> RawKernel:
    if check_args is not None and check_args != module.check_args:
        return module._kernels.get((name, check_args)) or RawKernel._from_module(
            module, name, check_args)
    kernel = module._kernels.get(name)
    if kernel is None:
        kernel = module._kernels[name] = RawKernel._from_module(module, name)
    return kernel


def _rebuild_module(kwargs: dict) -> RawModule:
    return RawModule(**kwargs)


def _reduce_kernel(kernel: RawKernel):
    """Pickle a RawKernel as what made it: its code and options (or its module and name).
    Unpickled, it compiles through the cache, which already holds its binary."""
    if kernel._module is not None:
        return _kernel_of_module, (kernel._module, kernel.name, kernel.check_args)
    return _rebuild_kernel, ({
        "code": kernel.code, "name": kernel.name, "options": kernel.options,
        "backend": kernel.backend, "translate_cucomplex": kernel.translate_cucomplex,
        "enable_cooperative_groups": kernel.enable_cooperative_groups,
        "jitify": kernel.jitify, "check_args": kernel.check_args},)


def _reduce_module(module: RawModule):
    return _rebuild_module, ({
        "code": module.code, "path": module.path, "options": module.options,
        "backend": module.backend, "translate_cucomplex": module.translate_cucomplex,
        "enable_cooperative_groups": module.enable_cooperative_groups,
        "name_expressions": list(module.name_expressions) or None, "jitify": module.jitify,
        "check_args": module.check_args},)


def _export_entry(name: str, source: str, cooperative: bool):
    params = _signature.kernel_params(source, name) if "<" not in name else None
    signature = [p.ctype for p in params] if params is not None else [name]
    return export.EntrySpec(name=name, symbol=name, kind="raw", signature=signature,
                            cooperative=cooperative)


def _export_spec(obj, entries: tuple, name_expressions: tuple):
    return export.ExportSpec(source=obj._source, options=obj.options, entries=entries,
                             name_expressions=tuple(name_expressions),
                             program_name="raw_module.cu", backend=obj.backend,
                             param_reader=_signature.kernel_params)
