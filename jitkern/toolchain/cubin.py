"""What a CUBIN says about itself: its kernels, their parameters and resource use.

Read from the ELF without a GPU: the symbol table names the kernels (entry
functions), ``.nv.info.<kernel>`` holds each kernel's parameter layout
(``EIATTR_KPARAM_INFO``: ordinal, offset, size), and ``.nv.info`` its resource use.

The primary source is ptxas's ``-v`` report in the compile log; some NVRTC
builds leave it out of the program log (seen on the GPU machine for kernels whose
compile also printed front-end warnings). The CUBIN always carries the numbers:
``.nv.info`` holds per-function attributes (register count, frame size), and the
static shared memory of a kernel is the size of its ``.nv.shared.<name>`` section
(which, on targets that reserve the first 1 KiB of shared memory, includes it).
"""

from __future__ import annotations

import struct

_EIATTR_FRAME_SIZE = 0x11
_EIATTR_KPARAM_INFO = 0x17
_STT_FUNC = 2
_STO_CUDA_ENTRY = 0x10  # st_other bit of a kernel (an entry function)
_EIATTR_REGCOUNT = 0x2F
_EIFMT_SVAL = 4
_EIFMT_HVAL = 3
_RESERVED_SHARED = 1024


def _sections(data: bytes):
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    secs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names_at = secs[shstrndx][4]

    def name(offset: int) -> str:
        start = names_at + offset
        return data[start:data.index(b"\0", start)].decode()

    return [(name(s[0]), s) for s in secs]


def _symbol_table(data: bytes, sections) -> list[tuple[str, int, int]]:
    """(name, st_info, st_other) of every symbol, in table order."""
    for _name, s in sections:
        if s[1] == 2:  # SHT_SYMTAB
            strings = sections[s[6]][1][4]
            out = []
            for j in range(s[5] // 24):
                st_name, st_info, st_other = struct.unpack_from("<IBB", data, s[4] + 24 * j)
                start = strings + st_name
                out.append((data[start:data.index(b"\0", start)].decode(), st_info, st_other))
            return out
    return []


def _symbols(data: bytes, sections) -> list[str]:
    return [name for name, _info, _other in _symbol_table(data, sections)]


_EM_CUDA = 190  # e_machine of NVIDIA's CUDA ELF


def elf_problem(data: bytes) -> str | None:
    """Why ``data`` is not a whole CUDA ELF (a CUBIN), or None: the header (64-bit, little
    endian, machine EM_CUDA), the section table inside the file, and a readable symbol table
    (a truncated or corrupt file fails here, not in the driver or on the GPU)."""
    if len(data) < 64 or data[:4] != b"\x7fELF":
        return "it does not start with an ELF header"
    if data[4] != 2 or data[5] != 1:
        return "it is not a 64-bit little-endian ELF"
    (machine,) = struct.unpack_from("<H", data, 0x12)
    if machine != _EM_CUDA:
        return f"its ELF machine is {machine}, not CUDA ({_EM_CUDA}): a host object, not a CUBIN"
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, _shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    if shnum == 0 or shentsize < 64 or shoff + shnum * shentsize > len(data):
        return (f"its section table ({shnum} sections at byte {shoff:,}) lies past the end of "
                f"the file ({len(data):,} bytes): it is truncated")
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    try:
        for i in range(phnum):  # every segment's bytes must be in the file
            at = phoff + i * phentsize
            _t, _f, offset, _v, _p, filesz = struct.unpack_from("<IIQQQQ", data, at)
            if offset + filesz > len(data):
                return (f"a segment ends at byte {offset + filesz:,}, past the end of the file "
                        f"({len(data):,} bytes): it is truncated")
        sections = _sections(data)
        for _name, sec in sections:
            if sec[1] not in (0, 8) and sec[4] + sec[5] > len(data):  # 8: SHT_NOBITS
                return f"a section lies past the end of the file ({len(data):,} bytes): truncated"
        _symbol_table(data, sections)
    except (struct.error, ValueError, IndexError, UnicodeDecodeError):
        return "its sections or symbols cannot be read: it is corrupt or truncated"
    return None


def elf_arch(data: bytes) -> int | None:
    """The SM number the CUBIN is built for (e_flags bits 8-15 on CUDA 12+ ELFs; bits 0-7
    on older ones), or None when the header says nothing plausible."""
    if len(data) < 0x34:
        return None
    (flags,) = struct.unpack_from("<I", data, 0x30)
    for arch in ((flags >> 8) & 0xFF, flags & 0xFF):
        if 30 <= arch <= 200:
            return arch
    return None


def kernel_names(data: bytes) -> list[str] | None:
    """The (mangled) names of the kernels a CUBIN holds; None when it cannot be read."""
    if data[:4] != b"\x7fELF":
        return None
    try:
        return [name for name, info, other in _symbol_table(data, _sections(data))
                if info & 0xF == _STT_FUNC and other & _STO_CUDA_ENTRY]
    except (struct.error, ValueError, IndexError, UnicodeDecodeError):
        return None


def param_layouts(data: bytes) -> dict[str, list[tuple[int, int]]] | None:
    """{kernel: [(offset, size) per parameter, in order]}; None when it cannot be read.

    Read from the CUBIN so that no driver call is made per parameter: asking the
    driver past the last parameter is an API error that compute-sanitizer reports.
    """
    kernels = kernel_names(data)
    if kernels is None:
        return None
    layouts: dict[str, dict[int, tuple[int, int]]] = {k: {} for k in kernels}
    try:
        for name, s in _sections(data):
            kernel = name[len(".nv.info."):] if name.startswith(".nv.info.") else None
            if kernel not in layouts:
                continue
            for attr, value in _attributes(data[s[4]:s[4] + s[5]]):
                if attr == _EIATTR_KPARAM_INFO and len(value) >= 12:
                    _index, ordinal, offset, bits = struct.unpack_from("<IHHI", value)
                    layouts[kernel][ordinal] = (offset, (bits >> 18) & 0x3FFF)
    except (struct.error, ValueError, IndexError, UnicodeDecodeError):
        return None
    out = {}
    for kernel, params in layouts.items():
        if sorted(params) != list(range(len(params))):
            return None  # a gap: not a layout this reader understands
        out[kernel] = [params[i] for i in range(len(params))]
    return out


def _attributes(raw: bytes):
    """(attribute, value bytes) pairs of an .nv.info section."""
    pos = 0
    while pos + 2 <= len(raw):
        fmt, attr = raw[pos], raw[pos + 1]
        if fmt == _EIFMT_SVAL:
            size, = struct.unpack_from("<H", raw, pos + 2)
            yield attr, raw[pos + 4:pos + 4 + size]
            pos += 4 + size
        elif fmt == _EIFMT_HVAL:
            yield attr, raw[pos + 2:pos + 4]
            pos += 4
        else:
            pos += 2


def cubin_resources(data: bytes) -> dict[str, dict]:
    """{kernel: {registers, shared_bytes, local_bytes}} read from a CUBIN's ELF."""
    if data[:4] != b"\x7fELF":
        return {}
    try:
        sections = _sections(data)
        symbols = _symbols(data, sections)
        found: dict[str, dict] = {}
        reserved = any(n.startswith(".nv.shared.reserved") for n, _s in sections)
        for name, s in sections:
            if name == ".nv.info":
                for attr, value in _attributes(data[s[4]:s[4] + s[5]]):
                    if attr in (_EIATTR_REGCOUNT, _EIATTR_FRAME_SIZE) and len(value) == 8:
                        sym, number = struct.unpack("<II", value)
                        key = "registers" if attr == _EIATTR_REGCOUNT else "local_bytes"
                        if sym < len(symbols):
                            found.setdefault(symbols[sym], {})[key] = number
        for name, s in sections:
            if name.startswith(".nv.shared.") and not name.startswith(".nv.shared.reserved"):
                kernel = name[len(".nv.shared."):]
                size = s[5] - (_RESERVED_SHARED if reserved else 0)
                found.setdefault(kernel, {})["shared_bytes"] = max(size, 0)
        return {k: v for k, v in found.items() if "registers" in v}
    except (struct.error, ValueError, IndexError):
        return {}


_EIATTR_KPARAM_INFO = 0x17


def cubin_params(data: bytes) -> dict[str, list[tuple[int, int]]]:
    """{kernel: [(offset, size) per parameter, in order]} read from a CUBIN's ELF.

    Each kernel's ``.nv.info.<kernel>`` section lists its parameters (EIATTR_KPARAM_INFO:
    ordinal, byte offset, and the size in bits 18-31 of the last word). The ahead-of-time
    export writes these into its manifest, so a launcher needs neither a GPU nor a parser
    of C++ to lay out the parameter buffer.
    """
    if data[:4] != b"\x7fELF":
        return {}
    try:
        found: dict[str, list[tuple[int, int]]] = {}
        for name, s in _sections(data):
            if not name.startswith(".nv.info."):
                continue
            params = {}
            for attr, value in _attributes(data[s[4]:s[4] + s[5]]):
                if attr == _EIATTR_KPARAM_INFO and len(value) >= 12:
                    _index, ordinal, offset, flags = struct.unpack_from("<IHHI", value)
                    params[ordinal] = (offset, (flags >> 18) & 0x3FFF)
            found[name[len(".nv.info."):]] = [params[k] for k in sorted(params)]
        return found
    except (struct.error, ValueError, IndexError):
        return {}
