"""Ahead-of-time export: kernels written to disk as binaries, a C++ header and a manifest.

Every kernel kind exports through :func:`write`. A kind only says *what* to compile
(an :class:`ExportSpec`: source, options, name expressions, and per entry the symbol,
what it was built for and how its launch arguments map to the parameters); this module
compiles it for each arch, writes the binary in the asked format, reads each entry's
parameter layout (offset and size of every parameter) out of the CUBIN, and writes

* ``<base>.fatbin`` (cubins of every arch plus the newest arch's PTX, through nvFatbin),
  or ``<base>.sm_XX.cubin`` / ``<base>.compute_XX.ptx`` / ``<base>.sm_XX.ltoir`` per arch;
* ``<base>.h``: each entry's ``extern "C"`` declaration (for nvcc) and its layout as
  constants (for the driver API);
* ``<base>.json``: the manifest, which :func:`read_manifest` validates and
  ``jitkern.load`` turns back into launchable kernels;
* ``<base>.cu``: the CUDA C++ that was compiled, for the record.

Loading needs neither NVRTC nor the Python source: :func:`binary_for_device` picks the
file for a device (an ltoir export is linked by nvJitLink, not NVRTC).
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import json
import os
import re
import tempfile

from .. import dtypes, records
from ..config import VERSION
from . import header_structs
from . import manifest as schema
from ..errors import InternalError, JitkernFileNotFoundError, JitkernTypeError, JitkernValueError
from .cubin import param_layout
from .discovery import nvrtc_version
from .nvrtc import Binary, compile_source
from .target import from_tag, parse_many

MANIFEST_FORMAT = "jitkern-export"
MANIFEST_VERSION = 2  # 2: the SHA-256 of every binary ("sha256")
FORMATS = ("fatbin", "cubin", "ptx", "ltoir")
DEFAULT_ARCHS = ("sm_80", "sm_90")
_SUFFIXES = (".json", ".h", ".cu", ".fatbin", ".cubin", ".ptx", ".ltoir")


@dataclasses.dataclass(frozen=True)
class ExtraParam:
    """A parameter the launcher appends: ``kind`` ('shape'|'stride') of argument ``arg``."""

    kind: str
    arg: int
    axis: int


@dataclasses.dataclass(frozen=True)
class EntrySpec:
    """One kernel of an export, as its kernel kind describes it.

    ``symbol``: the ``extern "C"`` name or a name expression (``"fx3<float>"``).
    ``signature``: what the entry was built for (JSON-able, shown in the manifest).
    ``call``: what the loaded kernel needs to turn arguments into parameters (JSON-able).
    ``extras``: parameters after the first ``len(signature args)`` that the launcher
    appends (the JIT's shapes and strides), in order.
    """

    name: str
    symbol: str
    kind: str
    signature: list
    call: dict = dataclasses.field(default_factory=dict)
    extras: tuple = ()
    cooperative: bool = False


@dataclasses.dataclass(frozen=True)
class ExportSpec:
    source: str
    options: tuple
    entries: tuple
    name_expressions: tuple = ()
    program_name: str = "jitkern_export.cu"
    backend: str = "nvrtc"
    #: ``(C type name, record dtype)`` of the structs passed by value: the manifest records
    #: their layout per parameter, and the header declares it (header_structs)
    records: tuple = ()
    #: ``(source, symbol) -> [Param(name, ctype, pointer)] | None``: the kind's reader of a
    #: kernel's C parameter list (names and C types in the manifest and header); None: the
    #: CUBIN's offsets and sizes only
    param_reader: object = None


@dataclasses.dataclass(frozen=True)
class Exported:
    """What :func:`write` wrote: the manifest's path, every file, and the manifest itself."""

    manifest_path: str
    files: tuple
    manifest: dict


# ---------------------------------------------------------------------------
# arguments


def check_format(fmt) -> str:
    if fmt not in FORMATS:
        raise JitkernValueError(f"format: expected one of {FORMATS}, got {fmt!r}")
    return fmt


def normalize_archs(arch) -> tuple[int, ...]:
    """'sm_90' or ('sm_80', 'sm_90a') -> (80, 90): the compute capabilities, sorted, no
    repeats (what a kernel's arch requirements are checked against)."""
    return tuple(sorted({a.cc for a in parse_many(arch)}))


def export_archs(arch) -> tuple[str, ...]:
    """'sm_90' or ('sm_80', 'sm_90a') -> ('sm_80', 'sm_90a'): the CUBIN targets of an
    export, arch variants kept ('sm_90a': an arch-specific CUBIN, 'sm_100f': a
    family-specific one), sorted by compute capability, no repeats."""
    return tuple(dict.fromkeys(a.sm for a in parse_many(arch)))


def base_path(path) -> str:
    """The export's path without a suffix this module writes (``out/k.json`` -> ``out/k``)."""
    if not isinstance(path, (str, os.PathLike)):
        raise JitkernTypeError(f"path: expected a file path, got {type(path).__name__}")
    path = os.fspath(path)
    for suffix in _SUFFIXES:
        if path.endswith(suffix):
            return path[: -len(suffix)]
    return path


# ---------------------------------------------------------------------------
# writing


def write(path, spec: ExportSpec, arch=DEFAULT_ARCHS, fmt: str = "fatbin") -> Exported:
    """Compile ``spec`` for every arch and write binary, header, manifest and source."""
    fmt = check_format(fmt)
    archs = export_archs(arch)
    if fmt == "ltoir" and spec.backend != "nvrtc":
        raise JitkernValueError("format='ltoir' needs backend='nvrtc' (NVRTC's -dlto)")
    base = base_path(path)
    folder = os.path.dirname(base) or "."
    if not os.path.isdir(folder):
        raise JitkernFileNotFoundError(f"path: the folder {folder!r} does not exist")
    cubins = {a: _compile(spec, a, "cubin") for a in archs}
    lowered = cubins[archs[-1]].lowered_names
    layouts = _layouts(spec, cubins[archs[-1]])
    # Exports to one folder take turns (concurrent writers would pair one's binary with
    # the other's manifest); the manifest is written last, so a reader sees the old
    # export or the new one, and its SHA-256s expose a binary that changed beside it.
    with _folder_lock(folder):
        files, digests = _write_binaries(base, spec, archs, fmt, cubins)
        manifest = _manifest(spec, archs, fmt, files, lowered, layouts)
        manifest["sha256"] = digests
        written = [os.path.join(folder, f) for f in files.values()]
        written.append(_write_text(base + ".h", header_text(manifest)))
        written.append(_write_text(base + ".cu", spec.source))
        written.append(_write_text(base + ".json", json.dumps(manifest, indent=1) + "\n"))
    return Exported(base + ".json", tuple(written), manifest)


class _folder_lock:
    """An exclusive lock on the export's folder (flock on the folder itself, so no lock
    file is left behind); a no-op where flock does not exist."""

    def __init__(self, folder: str):
        self.folder = folder
        self.fd = None

    def __enter__(self):
        try:
            import fcntl  # POSIX only: elsewhere exports are not serialised
        except ImportError:
            return self
        self.fd = os.open(self.folder, os.O_RDONLY)
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        if self.fd is not None:
            os.close(self.fd)  # closing releases the lock


def _compile(spec: ExportSpec, arch: int, fmt: str):
    return compile_source(
        spec.source,
        options=spec.options,
        name_expressions=spec.name_expressions,
        arch=arch,
        fmt=fmt,
        program_name=spec.program_name,
        backend=spec.backend,
        _normalized=True,
    )


def _write_binaries(base, spec, archs, fmt, cubins) -> tuple[dict, dict]:
    """Write the binary file(s); ({'fatbin'|'sm_XX'|'compute_XX': file name},
    {file name: SHA-256})."""
    name = os.path.basename(base)
    if fmt == "fatbin":
        newest = fatbin_ptx_arch(archs)
        ptx = _compile(spec, newest, "ptx").data
        data = make_fatbin([(a[3:], cubins[a].data) for a in archs], (newest[3:], ptx))
        _write_bytes(base + ".fatbin", data)
        return {"fatbin": name + ".fatbin"}, {name + ".fatbin": hashlib.sha256(data).hexdigest()}
    files, digests = {}, {}
    for a in archs:
        if fmt == "cubin":
            tag, data = a, cubins[a].data
        elif fmt == "ptx":
            tag, data = "compute" + a[2:], _compile(spec, a, "ptx").data.rstrip(b"\0")
        else:
            tag, data = a, _compile(spec, a, "ltoir").data
        _write_bytes(f"{base}.{tag}.{fmt}", data)
        files[tag] = f"{name}.{tag}.{fmt}"
        digests[files[tag]] = hashlib.sha256(data).hexdigest()
    return files, digests


def fatbin_ptx_arch(archs) -> str:
    """The arch whose PTX a fatbin carries for newer GPUs: the newest arch without a
    variant (arch-specific PTX, compute_90a, runs on no other GPU), else the newest."""
    plain = [a for a in archs if from_tag(a).variant == ""]
    return (plain or list(archs))[-1]


def make_fatbin(cubins, ptx=None) -> bytes:
    """A fatbin (NVIDIA's container, written by nvFatbin) of ``[(arch, cubin)]`` and an
    optional ``(arch, ptx)`` that newer GPUs compile at load time; an arch is ``90``,
    ``'90'`` or ``'90a'``."""
    try:
        from cuda.bindings import nvfatbin

        handle = nvfatbin.create([], 0)
    except Exception as exc:  # noqa: BLE001 - the wheel, or the library it loads, is missing
        raise JitkernValueError(
            f"format='fatbin' needs nvFatbin ({type(exc).__name__}: {exc}); install it with "
            "`pip install nvidia-nvfatbin`, or export format='cubin' (one file per arch)"
        ) from None
    try:
        for arch, data in cubins:
            nvfatbin.add_cubin(handle, data, len(data), str(arch), f"sm_{arch}")
        if ptx is not None:
            arch, text = ptx
            text = text.rstrip(b"\0") + b"\0"
            nvfatbin.add_ptx(handle, text, len(text), str(arch), f"compute_{arch}", "")
        out = bytearray(nvfatbin.size(handle))
        nvfatbin.get(handle, out)
        return bytes(out)
    finally:
        nvfatbin.destroy(handle)


def _layouts(spec: ExportSpec, binary) -> dict:
    """{entry name: [param dicts]}: names and C types from the source, offsets and sizes
    from the CUBIN (exact, whatever the types)."""
    out, by_name = {}, dict(spec.records)
    for entry in spec.entries:
        symbol = binary.lowered(entry.symbol)
        offsets = param_layout(binary, symbol)
        if offsets is None:
            raise InternalError(f"export: the CUBIN has no kernel {symbol!r} ({entry.name})")
        parsed = (spec.param_reader(spec.source, entry.symbol)
                  if spec.param_reader is not None and "<" not in entry.symbol else None)
        if parsed is not None and len(parsed) != len(offsets):
            parsed = None
        typedefs = {alias: real.strip() for real, alias in _TYPEDEF.findall(spec.source)}
        first_extra = len(offsets) - len(entry.extras)
        params = []
        for i, (offset, size) in enumerate(offsets):
            p = parsed[i] if parsed is not None else None
            param = {
                "name": p.name if p else f"p{i}",
                "ctype": _resolve(p.ctype, typedefs) if p else None,
                "kind": ("pointer" if p.pointer else "value") if p else "unknown",
                "offset": offset,
                "size": size,
            }
            if i >= first_extra:
                extra = entry.extras[i - first_extra]
                param.update(kind=extra.kind, arg=extra.arg, axis=extra.axis)
            elif param["kind"] == "value" and param["ctype"] in by_name:
                record = by_name[param["ctype"]]
                param.update(record=records.record_to_json(record),
                             align=records.c_alignment(record))
            params.append(param)
        out[entry.name] = params
    return out


def _manifest(spec, archs, fmt, files, lowered, layouts) -> dict:
    entries = []
    for entry in spec.entries:
        params = layouts[entry.name]
        end = max((p["offset"] + p["size"] for p in params), default=0)
        entries.append(
            {
                "name": entry.name,
                "symbol": lowered.get(entry.symbol, entry.symbol),
                "kind": entry.kind,
                "signature": entry.signature,
                "cooperative": entry.cooperative,
                "params": params,
                "param_bytes": end,
                "call": entry.call,
            }
        )
    return {
        "format": MANIFEST_FORMAT,
        "version": MANIFEST_VERSION,
        "jitkern_version": VERSION,
        "nvrtc_version": ".".join(map(str, nvrtc_version())),
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "binary_format": fmt,
        "archs": list(archs),
        "files": files,
        **({"fatbin_ptx": "compute" + fatbin_ptx_arch(archs)[2:]} if fmt == "fatbin" else {}),
        "options": list(spec.options),
        "source_sha256": hashlib.sha256(spec.source.encode()).hexdigest(),
        "entries": entries,
    }


def _write_bytes(path: str, data: bytes) -> None:
    """Write ``path`` whole or not at all (a unique temporary name, then a rename)."""
    folder, name = os.path.split(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder or ".")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)  # as open() would have made it (mkstemp makes 0600)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _write_text(path: str, text: str) -> str:
    _write_bytes(path, text.encode())
    return path


# ---------------------------------------------------------------------------
# the header

# Parameter types the header names as they are: the element types whose spelling needs no
# header beyond cuda_fp16.h/cuda_bf16.h (complex and the float8 types become opaque bytes),
# and C's own integer spellings.
_PLAIN_TYPES = {
    *(row.cxx for row in dtypes.ROWS if row.kind != "c" and row.name not in dtypes.FLOAT8_NAMES),
    "char",
    "unsigned",
    "long",
    "unsigned long",
    "half",
    "size_t",
    "int8_t",
    "uint8_t",
    "int16_t",
    "uint16_t",
    "int32_t",
    "uint32_t",
    "int64_t",
    "uint64_t",
    "void",
}
_TYPEDEF = re.compile(r"^\s*typedef\s+([\w\s:<>,]+?)\s+(\w+)\s*;", re.MULTILINE)


def header_text(manifest: dict) -> str:
    """The C++ header of an export, from its manifest."""
    digest = hashlib.sha256(json.dumps(manifest["entries"]).encode()).hexdigest()
    guard = "JITKERN_EXPORT_" + digest[:12].upper()
    lines = [
        (
            f"// Written by jitkern {manifest['jitkern_version']} (a kernel's .export()): "
            f"{manifest['binary_format']} for {', '.join(manifest['archs'])}."
        ),
        "// Load the binary with cuModuleLoadData, find each kernel with cuModuleGetFunction(symbol)",
        "// and launch it with cuLaunchKernel: one pointer per parameter, in the order below.",
        f"#ifndef {guard}",
        f"#define {guard}",
        *header_structs.OFFSETOF_LINES,
        "",
        "namespace jitkern_export {",
        "// A parameter passed by value whose type is jitkern's own: its bytes, aligned.",
        "template <unsigned N, unsigned A> struct alignas(A) opaque { unsigned char bytes[N]; };",
        "// A complex<T> field of a struct: two T, aligned to their size (as in kernels).",
        header_structs.COMPLEX_TEMPLATE,
        "// What each parameter is: a pointer, a value, or (appended by the JIT) the shape or",
        "// byte stride of argument param_arg[i] along axis param_axis[i].",
        "enum param_kind { pointer = 0, value = 1, shape = 2, stride = 3, unknown = 4 };",
        "}  // namespace jitkern_export",
        "",
    ]
    structs: set = set()
    for entry in manifest["entries"]:
        lines += _entry_lines(entry, structs)
    lines.append(f"#endif  // {guard}")
    return "\n".join(lines) + "\n"


def _entry_lines(entry: dict, structs: set) -> list[str]:
    params = entry["params"]
    name = _c_name(entry["name"])
    decl = [
        f"    {_c_param(p, i, name)}{',' if i + 1 < len(params) else ''}{_param_note(p)}"
        for i, p in enumerate(params)
    ]
    offsets = ", ".join(str(p["offset"]) for p in params) or "0"
    sizes = ", ".join(str(p["size"]) for p in params) or "0"
    kinds = ", ".join(p["kind"] for p in params) or "unknown"
    args = ", ".join(str(p.get("arg", -1)) for p in params) or "-1"
    axes = ", ".join(str(p.get("axis", -1)) for p in params) or "-1"
    lines = _struct_lines(name, params, structs) + [
        f"// {entry['name']} ({entry['kind']}), built for: {_describe_signature(entry['signature'])}",
    ]
    if "<" not in entry["name"]:
        lines += [
            "#ifdef __CUDACC__",
            f'extern "C" __global__ void {entry["symbol"]}(',
            *decl,
            ");",
            "#endif",
        ]
    else:
        lines += ["// (a template instance: its C symbol is the mangled name below)"]
        lines += ["// " + d.strip() for d in decl]
    n = max(len(params), 1)
    lines += [
        "namespace jitkern_export {",
        f"struct {name} {{",
        f'  static constexpr const char* symbol = "{entry["symbol"]}";',
        f"  static constexpr int num_params = {len(params)};",
        f"  static constexpr unsigned param_offsets[{n}] = {{{offsets}}};",
        f"  static constexpr unsigned param_sizes[{n}] = {{{sizes}}};",
        f"  static constexpr unsigned param_bytes = {entry['param_bytes']};",
        f"  static constexpr param_kind param_kinds[{n}] = {{{kinds}}};",
        f"  static constexpr int param_arg[{n}] = {{{args}}};",
        f"  static constexpr int param_axis[{n}] = {{{axes}}};",
        f"  static constexpr bool cooperative = {'true' if entry['cooperative'] else 'false'};",
        "};",
        "}  // namespace jitkern_export",
        "",
    ]
    return lines


def _resolve(ctype: str, typedefs: dict) -> str:
    """``const T*`` -> ``const float*`` for the source's own typedefs (ElementwiseKernel's T)."""
    return re.sub(r"\b\w+\b", lambda m: typedefs.get(m.group(0), m.group(0)), ctype)


def _c_name(name: str) -> str:
    return re.sub(r"\W", "_", name)


def _struct_name(entry_name: str, p: dict) -> str:
    return f"{entry_name}_{_c_name(p['name'])}"


def _struct_lines(entry_name: str, params, structs: set) -> list[str]:
    """The structs of the entry's by-value record parameters, in the header's namespace."""
    lines = []
    for p in params:
        record = header_structs.record_of(p)
        if record is not None:
            lines += [f"// {p['name']} of {entry_name}: the record {p['ctype']}"]
            lines += header_structs.struct_lines(_struct_name(entry_name, p), *record, structs)
    return ["namespace jitkern_export {", *lines, "}  // namespace jitkern_export", ""
            ] if lines else []


def _c_param(p: dict, index: int, entry_name: str = "") -> str:
    ctype = p["ctype"]
    if p.get("record") and entry_name:
        return f"jitkern_export::{_struct_name(entry_name, p)} {p['name']}"
    if ctype is not None:
        base = ctype.replace("const ", "").replace("*", "").strip()
        if base in _PLAIN_TYPES:
            return f"{ctype} {p['name']}"
        if ctype.endswith("*"):
            return f"void* {p['name']}"
    align = _alignment(p)
    return f"jitkern_export::opaque<{p['size']}, {align}> {p['name']}"


def _alignment(p: dict) -> int:
    align = 1
    while align < 16 and align * 2 <= p["size"] and p["offset"] % (align * 2) == 0:
        align *= 2
    return align


def _param_note(p: dict) -> str:
    note = f"  // offset {p['offset']}, {p['size']} bytes"
    if p["kind"] in ("shape", "stride"):
        unit = " (bytes)" if p["kind"] == "stride" else ""
        note += f"; appended by the JIT: argument {p['arg']}'s {p['kind']}[{p['axis']}]{unit}"
    elif (
        p["ctype"] is not None
        and p["kind"] == "value"
        and _c_param(p, 0).startswith("jitkern_export")
    ):
        note += f"; jitkern's {p['ctype']}"
    return note


def _describe_signature(signature) -> str:
    if isinstance(signature, list):
        return (
            "("
            + ", ".join(
                str(s.get("describe", s)) if isinstance(s, dict) else str(s) for s in signature
            )
            + ")"
        )
    return str(signature)


# ---------------------------------------------------------------------------
# reading


def read_manifest(path) -> tuple[str, dict]:
    """(folder, manifest) of an export, validated; ``path`` is the manifest or its base."""
    base = base_path(path)
    manifest_path = base + ".json"
    if not os.path.exists(manifest_path):
        raise JitkernFileNotFoundError(f"path: no export manifest at {manifest_path!r}")
    try:
        with open(manifest_path, encoding="utf-8") as f:
            manifest = json.load(f)
    except (OSError, ValueError) as exc:
        raise JitkernValueError(
            f"path: {manifest_path!r} is not a readable JSON manifest ({exc})"
        ) from None
    if not isinstance(manifest, dict) or manifest.get("format") != MANIFEST_FORMAT:
        raise JitkernValueError(
            f"path: {manifest_path!r} is not a jitkern export manifest "
            f'(no "format": "{MANIFEST_FORMAT}")'
        )
    version = manifest.get("version")
    if version != MANIFEST_VERSION:
        raise JitkernValueError(
            f"path: {manifest_path!r} is manifest version {version!r}; this "
            f"jitkern reads version {MANIFEST_VERSION}: export it again"
        )
    fmt = manifest.get("binary_format")
    if fmt not in FORMATS:
        raise JitkernValueError(
            f"path: {manifest_path!r} names binary_format {fmt!r}; expected one of {FORMATS}"
        )
    schema.validate(manifest, manifest_path)
    folder = os.path.dirname(manifest_path) or "."
    for file in manifest["files"].values():
        schema.read_binary(folder, manifest, file, repr(manifest_path))
    return folder, manifest


def binary_for_device(folder: str, manifest: dict, cc: int):
    """The :class:`~.nvrtc.Binary` to load on a device of compute capability ``cc``.

    fatbin: the file (the driver picks the cubin); cubin: the exact arch, else the newest
    of the same major below it; ptx: the newest at or below ``cc``; ltoir: the newest at or
    below ``cc``, linked for ``cc`` by nvJitLink. NVRTC is never involved.
    """
    fmt = manifest["binary_format"]
    files = manifest["files"]
    if fmt == "fatbin":
        _check_fatbin(manifest, cc)
        name = files["fatbin"]
    else:
        _tag, name = _pick_file(files, fmt, cc)
    data = schema.read_binary(folder, manifest, name, repr(os.path.join(folder, "manifest")))
    load_fmt = fmt
    if fmt == "ltoir":
        data, load_fmt = link_ltoir(data, cc), "cubin"
    key = "export:" + hashlib.sha256(data).hexdigest()
    return Binary(
        data=data,
        fmt=load_fmt,
        arch=cc,
        log="",
        source="",
        options=(),
        name_expressions=(),
        lowered_names={},
        resources={},
        key=key,
    )


def _pick_file(files: dict, fmt: str, cc: int) -> tuple[str, str]:
    """(tag, file) for a GPU of capability ``cc``: the newest that runs there, and at one
    compute capability the most specific (sm_90a before sm_90 on an sm_90 GPU)."""
    parsed = {tag: from_tag(tag).as_format(fmt) for tag in files}
    usable = [tag for tag, a in parsed.items() if a.runs_on(cc)]
    if not usable:
        held = ", ".join(sorted(files, key=lambda t: parsed[t].order()))
        raise JitkernValueError(
            f"the export holds {fmt} for {held}, none of which runs "
            f"on this GPU (sm_{cc}); export again with arch=(..., 'sm_{cc}')"
        )
    tag = max(usable, key=lambda t: parsed[t].order())
    return tag, files[tag]


def _check_fatbin(manifest: dict, cc: int) -> None:
    """Refuse a fatbin none of whose CUBINs nor its PTX runs on sm_``cc`` (the driver's own
    error would not say why)."""
    archs = manifest["archs"]
    ptx = manifest.get("fatbin_ptx") or "compute" + fatbin_ptx_arch(archs)[2:]
    if from_tag(ptx).runs_on(cc):
        return
    if any(from_tag(a).runs_on(cc) for a in archs):
        return
    raise JitkernValueError(
        f"the export's fatbin holds CUBINs for {', '.join(archs)} and PTX for "
        f"{ptx}, none of which runs on this GPU (sm_{cc}); export again with "
        f"arch=(..., 'sm_{cc}')"
    )


def link_ltoir(data: bytes, cc: int) -> bytes:
    """LTO-IR -> CUBIN for ``sm_cc`` with nvJitLink (no NVRTC)."""
    try:
        from cuda.bindings import nvjitlink
    except ImportError as exc:
        raise JitkernValueError(f"loading an ltoir export needs nvJitLink: {exc}") from None
    opts = [f"-arch=sm_{cc}", "-lto"]
    handle = nvjitlink.create(len(opts), opts)
    try:
        nvjitlink.add_data(handle, nvjitlink.InputType.LTOIR, data, len(data), "jitkern_export")
        nvjitlink.complete(handle)
        out = bytearray(nvjitlink.get_linked_cubin_size(handle))
        nvjitlink.get_linked_cubin(handle, out)
        return bytes(out)
    finally:
        nvjitlink.destroy(handle)
