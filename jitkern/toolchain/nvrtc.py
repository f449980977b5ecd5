"""CUDA C++ source -> CUBIN (or PTX) through NVRTC, cached.

``compile_source`` is the one entry point every kernel kind uses. It returns a
:class:`Binary` that can be loaded on a device by :mod:`jitkern.runtime.module` or inspected
without a GPU.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import sys
import threading
import warnings

from ..config import settings
from ..errors import CompileError, JitkernTypeError, JitkernValueError
from . import (cache, discovery as toolchain, includes, nvrtc_options, signatures as _probes,
               skipped_includes)
from .target import Arch, parse as parse_arch
from ..lazy import lazy_import

# off the common path (a compile through NVRTC, or a cache hit): loaded when first used
_cubin = lazy_import("jitkern.toolchain.cubin")  # only when ptxas's report is missing
_shutil = lazy_import("shutil")  # only for nvcc
_subprocess = lazy_import("subprocess")  # only for nvcc
_tempfile = lazy_import("tempfile")  # only for nvcc

DEFAULT_STD = "-std=c++17"
_RDC_OPTIONS = {"-dc": "--relocatable-device-code=true", "-rdc=true": "--relocatable-device-code=true",
                "--relocatable-device-code=true": "--relocatable-device-code=true",
                "-rdc": "--relocatable-device-code=true"}
_ARCH_PREFIXES = ("-arch", "--gpu-architecture")


@dataclasses.dataclass(frozen=True)
class Resources:
    """Per-function resource use reported by ptxas."""

    registers: int
    shared_bytes: int
    local_bytes: int
    spill_stores: int = 0
    spill_loads: int = 0
    const_bytes: int = 0


@dataclasses.dataclass(frozen=True, eq=False)
class Binary:
    """A compiled program: the bytes plus what was decided and reported."""

    data: bytes
    fmt: str  # "cubin" or "ptx"
    arch: int  # e.g. 90
    log: str
    source: str
    options: tuple
    name_expressions: tuple
    lowered_names: dict  # name expression -> mangled symbol
    resources: dict  # symbol -> Resources
    key: str
    from_cache: bool = False
    variant: str = ""  # "a" for sm_90a, "f" for sm_100f (arch- or family-specific)
    #: kernel name or name expression -> the lowered name of its signature probe
    #: (toolchain/signatures.py), for a compile that asked for them
    signatures: dict = dataclasses.field(default_factory=dict)
    # jitify=True: the (line, header) of each #include skipped as not found. Such a binary is
    # cached nowhere: the header may exist at the next compile.
    skipped_includes: tuple = ()

    @property
    def target(self) -> Arch:
        return Arch(self.fmt, self.arch, self.variant)

    @property
    def arch_name(self) -> str:
        """The target as NVRTC spells it: 'sm_90', 'sm_90a', 'compute_90'."""
        return self.target.name

    def lowered(self, name: str) -> str:
        return self.lowered_names.get(name, name)


_compile_locks: dict[str, threading.Lock] = {}
_compile_locks_guard = threading.Lock()


def normalize_options(options, owner: str | None = None, backend: str = "nvrtc") -> tuple[str, ...]:
    """Validate user options and apply jitkern's defaults (C++17, rdc spelling).

    For NVRTC, every option's name is checked against NVRTC's documented set
    (:mod:`.nvrtc_options`), so a misspelt one is refused now, naming ``owner`` (the
    kernel: "RawKernel 'k'"), and a value given as the next string (``"-maxrregcount",
    "32"``) or after a space (``"-I /dir"``) is joined to its option, so the cache key
    and the include folders read one spelling. nvcc's options are its own: only their
    form is checked."""
    where = f"{owner}: options" if owner else "options"
    if isinstance(options, str):
        options = (options,)
    try:
        opts = tuple(options)
    except TypeError:
        raise JitkernTypeError(f"{where}: expected a tuple of str, got {type(options).__name__}") from None
    out = []
    i = 0
    while i < len(opts):
        opt = _checked_form(opts[i], where)
        if backend == "nvrtc":
            opt, i = _nvrtc_option(opts, i, where)
        out.append(_RDC_OPTIONS.get(opt, opt))
        i += 1
    if not any(o.startswith(("-std", "--std")) for o in out):
        out.insert(0, DEFAULT_STD)
    return tuple(out)


def _checked_form(opt, where: str) -> str:
    if not isinstance(opt, str):
        raise JitkernTypeError(f"{where}: every option must be a str, got {type(opt).__name__} ({opt!r})")
    if not opt.startswith("-"):
        raise JitkernValueError(
            f"{where}: {opt!r} is not a compiler option (every option starts with '-', "
            "e.g. '-lineinfo', '--use_fast_math', '-DNAME=1')"
        )
    if opt.startswith(_ARCH_PREFIXES):
        raise JitkernValueError(
            f"{where}: {opt!r} is not accepted; jitkern picks the arch from the device, "
            "or pass arch= to inspect()/compile_source()"
        )
    return opt


def _nvrtc_option(opts: tuple, i: int, where: str) -> tuple[str, int]:
    """(option ``i`` in its one spelling, the index of the last string it used)."""
    name, value = nvrtc_options.split(opts[i])
    row = nvrtc_options.lookup(name)
    if row is None:
        raise JitkernValueError(_unknown_option_message(opts[i], name, where))
    if name in nvrtc_options.REFUSED:
        raise JitkernValueError(f"{where}: {opts[i]!r} is not accepted: "
                                f"{nvrtc_options.REFUSED[name]}")
    if value is None and row.value != "none" and i + 1 < len(opts):
        following = opts[i + 1]
        if isinstance(following, str) and (row.value == "required" or not following.startswith("-")):
            value, i = following, i + 1
    if value is None:
        value = row.default
    if value is None:
        return opts[i], i
    if name in nvrtc_options.GLUED:
        return name + value.strip(), i
    return f"{name}={value}", i


def _unknown_option_message(opt: str, name: str, where: str) -> str:
    close = nvrtc_options.suggestions(name)
    hint = f"did you mean {' or '.join(map(repr, close))}? " if close else ""
    hint = f"{nvrtc_options.advice(name)}; " if nvrtc_options.advice(name) else hint
    return (
        f"{where}: {opt!r} is not an NVRTC option; {hint}NVRTC accepts the options of its "
        "documentation ('Supported Compile Options'), long names with two dashes and short "
        "ones with one (e.g. '--use_fast_math', '-lineinfo', '-maxrregcount=32', '-DNAME=1', "
        f"'-I/path'): the list is in {nvrtc_options.DOCS} and in "
        "jitkern.toolchain.nvrtc_options.NVRTC_OPTIONS"
    )


# Sources jitkern generates carry one of these lines. NVRTC's warnings about jitkern's own
# constructs in them (an argument alias the operation does not use, a hoisted local) are
# not the user's to act on, so NVRTC is told not to report those diagnostics there:
# declared but never referenced, pointless unsigned comparison, set but never used, and
# the same for a local that is never read.
GENERATED_SOURCE_MARKERS = ("// ---- jitkern string-kernel prelude ----", "// jitkern: kernel ")
GENERATED_CODE_SUPPRESSED = (177, 186, 550, 607)


def _generated_code_options(source: str, opts: tuple) -> tuple:
    if not any(marker in source for marker in GENERATED_SOURCE_MARKERS):
        return ()
    option = "-diag-suppress=" + ",".join(map(str, GENERATED_CODE_SUPPRESSED))
    return () if option in opts else (option,)


def is_relocatable(options: tuple) -> bool:
    return "--relocatable-device-code=true" in options


def target_for(arch=None, fmt: str | None = None) -> Arch:
    """The compile target ``arch`` names (target.parse: 'sm_90', 90, (9, 0), an Arch...).

    The toolchain knows no device: a caller building for one passes its Arch
    (``kernels.base.resolve_arch(None)``: the current device's, target.for_device)."""
    if arch is None:
        raise JitkernValueError(
            "arch: compile_source() builds for the arch it is given, and none was given; pass "
            "a target such as 'sm_90', or jitkern.kernels.base.resolve_arch(None) for the "
            "current device (kernel objects do this themselves)")
    return parse_arch(arch, fmt)


def _include_digest() -> str:
    """Identity of jitkern's own headers: every file's name, size and mtime (stat only)."""
    parts = []
    stack = [toolchain.PACKAGE_INCLUDE]
    while stack:
        with os.scandir(stack.pop()) as entries:
            for entry in entries:
                if entry.is_dir():
                    stack.append(entry.path)
                else:
                    st = entry.stat()
                    parts.append(f"{entry.path}:{st.st_size}:{st.st_mtime_ns}")
    parts.sort()
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


_include_hash: str | None = None


def cache_key(source: str, options: tuple, name_expressions: tuple, arch: Arch,
              backend: str, extra_includes: tuple, signatures: bool = False) -> str:
    global _include_hash
    # jitkern's headers can only change what is compiled when the source (or a
    # -include option) includes something; most kernels include nothing, and walking
    # the header folder is a good part of a warm first call.
    headers = "none"
    if "#include" in source or any("include" in o for o in options):
        if _include_hash is None:
            _include_hash = _include_digest()
        headers = _include_hash
    version = toolchain.nvrtc_identity() if backend == "nvrtc" else _nvcc_version()
    # The header folders are not resolved here (cuda-pathfinder costs tens of ms in a
    # fresh process): they follow from CUDA_HOME and from the same Python environment
    # that nvrtc_identity() already describes.
    # The user's own headers (-I folders): their contents, since no identity covers them.
    user_headers = includes.user_headers_digest(source, options, extra_includes)
    probed = ("signatures",) if signatures else ()  # the probes change the binary
    return cache.make_key(source, options, name_expressions, arch.fmt, arch.cc,
                          arch.variant, backend,
                          version, headers, settings.cuda_home, extra_includes, user_headers,
                          *probed)


def compile_source(source: str, *, options=(), name_expressions=(), arch=None, fmt=None,
                   program_name: str = "jitkern_kernel.cu", log_stream=None,
                   backend: str = "nvrtc", extra_include_dirs: tuple = (),
                   signatures: bool = False, _normalized: bool = False) -> Binary:
    """Compile CUDA C++ ``source`` for ``arch`` (default: the current device).

    Cached in memory and on disk under the hash of everything that decides the
    binary. Raises :class:`jitkern.CompileError` with the compiler log.
    ``signatures``: also read each kernel's parameter types as the compiler compiled them
    (``Binary.signatures``, toolchain/signatures.py).
    """
    if not isinstance(source, str):
        raise JitkernTypeError(f"source: expected str, got {type(source).__name__}")
    if backend not in ("nvrtc", "nvcc"):
        raise JitkernValueError(f"backend: expected 'nvrtc' or 'nvcc', got {backend!r}")
    opts = options if _normalized else normalize_options(options, backend=backend)
    opts = opts + _generated_code_options(source, opts)
    names = tuple(name_expressions or ())
    chosen = target_for(arch, fmt)
    key = cache_key(source, opts, names, chosen, backend, tuple(extra_include_dirs), signatures)

    hit = cache.memory_get(key)
    if hit is not None:
        _emit_log(log_stream, hit.log)
        return hit
    with _key_lock(key):
        hit = cache.memory_get(key)
        if hit is not None:
            return hit
        binary = _load_from_disk(key, source, opts, names)
        if binary is None:
            cache.stats["misses"] += 1
            binary = _build(source, opts, names, chosen, program_name, backend,
                            tuple(extra_include_dirs), key, signatures)
            cache.stats["compiles"] += 1
            if binary.skipped_includes:
                _emit_log(log_stream, binary.log)
                return binary
            cache.disk_put(key, _header_of(binary), binary.data)
        cache.memory_put(key, binary)
    _emit_log(log_stream, binary.log)
    return binary


def load_cached(key: str, source: str, options=(), name_expressions=()) -> Binary | None:
    """The binary cached under ``key`` (memory, then disk), or None.

    For callers that remember the key of a binary they compiled before (the JIT's
    on-disk index): this skips computing the key, which needs the toolkit's identity.
    """
    hit = cache.memory_get(key)
    if hit is not None:
        return hit
    opts = normalize_options(options)
    opts = opts + _generated_code_options(source, opts)
    binary = _load_from_disk(key, source, opts, tuple(name_expressions))
    if binary is not None:
        cache.memory_put(key, binary)
    return binary


def _key_lock(key: str) -> threading.Lock:
    with _compile_locks_guard:
        lock = _compile_locks.get(key)
        if lock is None:
            lock = _compile_locks[key] = threading.Lock()
        return lock


def _emit_log(log_stream, log: str) -> None:
    if log_stream is not None and log:
        log_stream.write(log)


def _header_of(binary: Binary) -> dict:
    return {
        "fmt": binary.fmt,
        "arch": binary.arch,
        "variant": binary.variant,
        "log": binary.log,
        "lowered_names": binary.lowered_names,
        "signatures": binary.signatures,
        "resources": {k: dataclasses.asdict(v) for k, v in binary.resources.items()},
    }


def _load_from_disk(key, source, opts, names) -> Binary | None:
    entry = cache.disk_get(key)
    if entry is None:
        return None
    header, payload = entry
    try:
        return Binary(
            data=payload, fmt=header["fmt"], arch=int(header["arch"]), log=header["log"],
            source=source, options=opts, name_expressions=names,
            lowered_names=dict(header["lowered_names"]),
            resources={k: Resources(**v) for k, v in header["resources"].items()},
            key=key, from_cache=True, variant=str(header.get("variant", "")),
            signatures=dict(header.get("signatures", {})),
        )
    except (KeyError, TypeError, ValueError):
        cache.stats["corrupt"] += 1
        return None


def _build(source, opts, names, target, program_name, backend, extra_includes, key,
           signatures: bool = False) -> Binary:
    def compile_with(suffix, exprs):
        if backend == "nvcc":
            data, log = _build_nvcc(source, opts, target, program_name, extra_includes, suffix)
            return data, log, {}, ()
        return _build_nvrtc_jitify(source, opts, names + exprs, target, program_name,
                                   extra_includes, suffix)

    probed = {}
    if signatures:
        headers = [data.decode(errors="replace")
                   for _path, data in includes.user_headers(source, opts, extra_includes)]
        (data, log, lowered, skipped), probed = _probes.build_probed(
            source, names, opts, headers, compile_with, backend == "nvcc")
    else:
        data, log, lowered, skipped = compile_with("", ())
    if is_relocatable(opts) and target.fmt == "cubin":
        data = _link_relocatable(data, f"{target.cc}{target.variant}")
    resources = parse_resources(log)
    if target.fmt == "cubin":
        resources = _with_cubin_resources(resources, data)
    return Binary(data=data, fmt=target.fmt, arch=target.cc, log=_user_log(log), source=source,
                  options=opts, name_expressions=names, lowered_names=lowered,
                  resources=resources, key=key, variant=target.variant,
                  skipped_includes=tuple(skipped), signatures=probed)


def _build_nvrtc_jitify(source, opts, names, target, program_name, extra_includes, suffix=""):
    """_build_nvrtc, and with jitify=True each #include of the source that NVRTC cannot
    open skipped with a warning, as Jitify skips it (toolchain/skipped_includes.py).
    ``suffix``: jitkern's text after the user's (the signature probes)."""
    jitify = f"-I{toolchain.JITIFY_INCLUDE}" in opts
    compiled, skipped, notes = source, [], []
    while True:
        try:
            data, log, lowered = _build_nvrtc(compiled + suffix, opts, names, target,
                                              program_name, extra_includes, user_source=source)
            return data, "\n".join([*notes, log]).strip(), lowered, skipped
        except CompileError as exc:
            found = skipped_includes.skip_missing(compiled, exc.log or "", program_name)
            if not jitify or found is None or len(skipped) >= _MAX_SKIPPED_INCLUDES:
                if compiled is source:
                    raise
                raise make_compile_error(source, exc.log or "", program_name, opts) from None
            compiled, line, name = found
            skipped.append((line, name))
            notes.append(skipped_includes.warning_text(program_name, line, name))
            warnings.warn(notes[-1], UserWarning, stacklevel=2)


_MAX_SKIPPED_INCLUDES = 64


def _with_cubin_resources(resources: dict, data: bytes) -> dict:
    """Fill in kernels ptxas's log did not report, from the CUBIN's own attributes."""
    out = dict(resources)
    for name, found in _cubin.cubin_resources(data).items():
        if name not in out:
            out[name] = Resources(registers=found["registers"],
                                  shared_bytes=found.get("shared_bytes", 0),
                                  local_bytes=found.get("local_bytes", 0))
    return out


# Every kernel is compiled with jitkern/environment.h pre-included: the names every kernel
# sees with no #include (M_PI, CUDART_INF, ...; docs/compat.md, "CuPy's C++ environment").
# Pre-included, not pasted in, so the kernel's source and its line numbers stay the user's.
# Not in the cache key as an option: the header and this line are part of jitkern's identity.
_ENVIRONMENT = f"--pre-include={toolchain.ENVIRONMENT_HEADER}"


def _arch_option(target: Arch) -> str:
    return f"--gpu-architecture={target.name}"


def _build_nvrtc(source, opts, names, target, program_name, extra_includes, user_source=None):
    nvrtc = toolchain.nvrtc_module()
    toolchain.nvrtc_version()
    include_opts = [f"-I{d}" for d in (*extra_includes, *toolchain.include_dirs())]
    full = [_arch_option(target), _ENVIRONMENT, *opts, *include_opts]
    if target.fmt == "cubin":
        full.append("-Xptxas=-v")
    elif target.fmt == "ltoir":  # link-time-optimisable IR, for nvJitLink (ahead-of-time export)
        full.append("-dlto")
    err, prog = nvrtc.nvrtcCreateProgram(source.encode(), program_name.encode(), 0, [], [])
    _nvrtc_check(nvrtc, err, "nvrtcCreateProgram")
    try:
        for name in names:
            (err,) = nvrtc.nvrtcAddNameExpression(prog, name.encode())
            _nvrtc_check(nvrtc, err, f"nvrtcAddNameExpression({name!r})")
        encoded = [o.encode() for o in full]
        (status,) = nvrtc.nvrtcCompileProgram(prog, len(encoded), encoded)
        log = _nvrtc_log(nvrtc, prog)
        if status != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise make_compile_error(user_source or source, log, program_name, opts)
        lowered = {}
        for name in names:
            err, low = nvrtc.nvrtcGetLoweredName(prog, name.encode())
            _nvrtc_check(nvrtc, err, f"nvrtcGetLoweredName({name!r})")
            lowered[name] = low.decode()
        if target.fmt == "cubin":
            err, size = nvrtc.nvrtcGetCUBINSize(prog)
            buf = b" " * size
            (err,) = nvrtc.nvrtcGetCUBIN(prog, buf)
        elif target.fmt == "ltoir":
            err, size = nvrtc.nvrtcGetLTOIRSize(prog)
            buf = b" " * size
            (err,) = nvrtc.nvrtcGetLTOIR(prog, buf)
        else:
            err, size = nvrtc.nvrtcGetPTXSize(prog)
            buf = b" " * size
            (err,) = nvrtc.nvrtcGetPTX(prog, buf)
        _nvrtc_check(nvrtc, err, "nvrtcGet" + target.fmt.upper())
        return bytes(buf), log, lowered
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def _nvrtc_check(nvrtc, err, what):
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        _e, msg = nvrtc.nvrtcGetErrorString(err)
        raise CompileError(f"{what} failed: {msg.decode() if isinstance(msg, bytes) else msg}")


def _nvrtc_log(nvrtc, prog) -> str:
    err, size = nvrtc.nvrtcGetProgramLogSize(prog)
    if size <= 1:
        return ""
    buf = b" " * size
    nvrtc.nvrtcGetProgramLog(prog, buf)
    return buf.rstrip(b"\0").decode(errors="replace")


def _nvcc_path() -> str | None:
    home = settings.cuda_home
    if home:
        candidate = os.path.join(home, "bin", "nvcc")
        if os.path.isfile(candidate):
            return candidate
    return _shutil.which("nvcc")


def _nvcc_version() -> str:
    nvcc = _nvcc_path()
    if nvcc is None:
        return "none"
    out = _subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    return out.strip().splitlines()[-1] if out.strip() else "unknown"


def _build_nvcc(source, opts, target, program_name, extra_includes, suffix=""):
    nvcc = _nvcc_path()
    if nvcc is None:
        raise CompileError("backend='nvcc' needs nvcc, and none was found on the PATH or in CUDA_HOME; "
                           "use backend='nvrtc' (the default), which needs no toolkit")
    nv_opts = [("-rdc=true" if o == "--relocatable-device-code=true" else o) for o in opts]
    with _tempfile.TemporaryDirectory(prefix="jitkern-nvcc-") as tmp:
        src = os.path.join(tmp, os.path.basename(program_name) or "kernel.cu")
        if not src.endswith(".cu"):
            src += ".cu"
        out = os.path.join(tmp, "out." + target.fmt)
        with open(src, "w") as f:
            f.write(source + suffix)
        kind = "-cubin" if target.fmt == "cubin" else "-ptx"
        family = "sm" if target.fmt == "cubin" else "compute"
        arch = f"-arch={family}_{target.cc}{target.variant}"
        incs = [f"-I{d}" for d in (*extra_includes, *toolchain.include_dirs()[:1])]
        cmd = [nvcc, kind, arch, "-Xptxas=-v", _ENVIRONMENT, *nv_opts, *incs, "-o", out, src]
        proc = _subprocess.run(cmd, capture_output=True, text=True)
        log = (proc.stdout + proc.stderr).strip()
        if proc.returncode != 0:
            raise make_compile_error(source, log, program_name, opts)
        with open(out, "rb") as f:
            return f.read(), log


def _link_relocatable(obj: bytes, arch: str) -> bytes:
    """Link relocatable device code with the device runtime (cudadevrt) via nvJitLink."""
    try:
        from cuda.bindings import nvjitlink
    except Exception as exc:
        raise CompileError(f"relocatable device code needs nvJitLink: {exc}") from None
    devrt = toolchain.cudadevrt_path()
    opts = [f"-arch=sm_{arch}"]
    handle = nvjitlink.create(len(opts), opts)
    try:
        try:
            nvjitlink.add_data(handle, nvjitlink.InputType.CUBIN, obj, len(obj), "jitkern_rdc")
            if devrt:
                nvjitlink.add_file(handle, nvjitlink.InputType.LIBRARY, devrt)
            nvjitlink.complete(handle)
        except Exception as exc:
            size = nvjitlink.get_error_log_size(handle)
            log = bytearray(size)
            nvjitlink.get_error_log(handle, log)
            text = bytes(log).rstrip(b"\0").decode(errors="replace")
            raise CompileError(f"nvJitLink failed to link device code: {exc}\n{text}") from None
        size = nvjitlink.get_linked_cubin_size(handle)
        out = bytearray(size)
        nvjitlink.get_linked_cubin(handle, out)
        return bytes(out)
    finally:
        nvjitlink.destroy(handle)


_ENTRY = re.compile(r"Compiling entry function '([^']+)'")
_FUNC_PROPS = re.compile(r"Function properties for (\S+)")
_STACK = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers")
_SMEM = re.compile(r"(\d+) bytes smem")
_CMEM = re.compile(r"(\d+) bytes cmem\[0\]")


def parse_resources(log: str) -> dict:
    """Per-entry-function resource use from ptxas ``-v`` output in ``log``.

    ptxas interleaves "Function properties for X" blocks of device functions (vprintf,
    non-inlined helpers) with those of entry functions, so the stack line is kept for
    the function its properties block names, and the "Used N registers" line belongs
    to the entry function being compiled.
    """
    result: dict[str, Resources] = {}
    entry = None
    props_for = None
    stacks: dict[str, tuple[int, int, int]] = {}
    for line in log.splitlines():
        m = _ENTRY.search(line)
        if m:
            entry = m.group(1)
            continue
        m = _FUNC_PROPS.search(line)
        if m:
            props_for = m.group(1)
            continue
        m = _STACK.search(line)
        if m and props_for is not None:
            stacks[props_for] = tuple(int(g) for g in m.groups())
            continue
        m = _USED.search(line)
        if m and entry is not None:
            smem = _SMEM.search(line)
            cmem = _CMEM.search(line)
            local, spill_st, spill_ld = stacks.get(entry, (0, 0, 0))
            result[entry] = Resources(
                registers=int(m.group(1)), shared_bytes=int(smem.group(1)) if smem else 0,
                local_bytes=local, spill_stores=spill_st, spill_loads=spill_ld,
                const_bytes=int(cmem.group(1)) if cmem else 0,
            )
            entry = None
    # a properties block may follow the "Used" line: fill in the stack use then
    for name, res in list(result.items()):
        if name in stacks and (res.local_bytes, res.spill_stores, res.spill_loads) != stacks[name]:
            result[name] = dataclasses.replace(res, local_bytes=stacks[name][0],
                                               spill_stores=stacks[name][1],
                                               spill_loads=stacks[name][2])
    return result


def _user_log(log: str) -> str:
    """The compiler log without ptxas's resource report (which jitkern parses), jitkern's
    internal array types spelled as the user knows them (a ``raw`` parameter: CArray)."""
    kept = [ln for ln in log.splitlines() if not ln.startswith("ptxas") or "warning" in ln
            or "error" in ln]
    return _INTERNAL_ARRAY.sub(r"CArray<\1>", "\n".join(kept)).strip()


#: ``_jk_dcarray<T, N, contiguous, 32-bit, site>``: a ``raw`` parameter of
#: ElementwiseKernel/ReductionKernel in a debug build, CuPy's ``CArray<T, N, c, i>`` checked.
_INTERNAL_ARRAY = re.compile(r"_jk_dcarray<\s*([^<>]+?)\s*,\s*\d+\s*>")
#: A CArray named as a type in a message: a raw parameter used as something else.
_ARRAY_MISUSE = re.compile(r'"(?:const )?(?:CArray|_jk_dcarray)<')


_MISSING_HEADER = re.compile(r'cannot open source file "([^"]+)"')


def missing_header_hint(log: str, options: tuple) -> str:
    """What to do about a header NVRTC cannot find, for the usual causes."""
    m = _MISSING_HEADER.search(log)
    if m is None:
        return ""
    header = m.group(1)
    shims = toolchain.jitify_headers()
    jitify_on = f"-I{toolchain.JITIFY_INCLUDE}" in options
    if header in shims and not jitify_on:
        return (f"<{header}> is a C++ standard header, and NVRTC ships no standard library: "
                "pass jitify=True (RawKernel, RawModule, compile_with_cache) to use it, or "
                f"include CCCL's <cuda/std/{header}> and write cuda::std:: names")
    if "." not in header:  # spelled like a C++ standard header
        provided = ", ".join(f"<{h}>" for h in shims if "." not in h)
        return (f"<{header}> is not available to NVRTC"
                + (" even with jitify=True, which provides " + provided if jitify_on else
                   "; jitify=True provides " + provided))
    return (f"NVRTC did not find {header!r}: pass its folder as an option, "
            f"options=('-I/path/to/folder',)")


_LOG_LINE = re.compile(r"^(?P<file>[^\s(]+)\((?P<line>\d+)\)?:", re.M)


def make_compile_error(source: str, log: str, program_name: str, options: tuple) -> CompileError:
    """A CompileError whose message shows the log and the source around each named line."""
    lines = source.splitlines()
    wanted = sorted({int(m.group("line")) for m in _LOG_LINE.finditer(log)
                     if os.path.basename(m.group("file")) == os.path.basename(program_name)})
    parts = [f"compiling {program_name} failed:", _user_log(log) or "(no log)"]
    hint = missing_header_hint(log, options)
    if hint:
        parts += ["", hint]
    if _ARRAY_MISUSE.search(log):
        parts += ["", "a `raw` parameter is the whole array (a CArray<T, N>), not one element: "
                  "index it, x[i] (x[_ind.get()] for this thread's element), or read x.size()"]
    if wanted:
        parts.append("")
        parts.append("source:")
        shown: set[int] = set()
        for n in wanted:
            for k in range(max(1, n - 2), min(len(lines), n + 2) + 1):
                if k in shown:
                    continue
                if shown and k - 1 not in shown:
                    parts.append("   ...")
                shown.add(k)
                mark = ">" if k in wanted else " "
                parts.append(f"{mark}{k:5d} | {lines[k - 1]}")
    if settings.dump_source_on_error:
        numbered = "\n".join(f"{i:5d} | {ln}" for i, ln in enumerate(lines, 1))
        sys.stderr.write(f"==== jitkern: full source of {program_name} ====\n{numbered}\n")
    return CompileError("\n".join(parts), log=log, source=source, name=program_name, options=options)
