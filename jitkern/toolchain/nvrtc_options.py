"""The options NVRTC accepts, as data: what ``options=`` of every kernel kind is checked
against when the kernel is made, so a misspelt option is named then, not at the first
compile (or never, where the first compile happens on another machine).

The rows are NVRTC's documented option set ("Supported Compile Options" in nvrtc.h and the
NVRTC guide), as the union over CUDA 11.x to 13.x: an option an older or newer NVRTC
documents is accepted here, and NVRTC itself says whether the installed one knows it. A
false refusal is worse than none, so the table errs on the side of accepting.

NVRTC's spelling rules (checked against NVRTC 13.5): a long name takes two dashes and a
short name one (``--device-debug``/``-G``, never ``-device-debug``); an option that takes
a value takes it after ``=`` or as the next string of the options (``"-maxrregcount",
"32"``); the one-letter ``-D``, ``-U``, ``-I`` also take it glued on or after a space
(``-DX``, ``-D X``, ``-D=X``). Whitespace after an option is ignored.
"""

from __future__ import annotations

from typing import NamedTuple


class NvrtcOption(NamedTuple):
    long: str  # with its two dashes
    short: str | None  # with its dash; None where NVRTC documents no short name
    value: str  # "none" (a flag), "required" or "optional" (``--dopt`` or ``--dopt=on``)
    #: an optional value's meaning when none is given. NVRTC reads the next string as the
    #: value even when it is another option (``--dopt -I...`` fails), so jitkern passes a
    #: bare optional-value option on with this value written out.
    default: str | None = None


_F, _R, _O = "none", "required", "optional"

#: Every option NVRTC documents, as (long name, short name, value).
NVRTC_OPTIONS: tuple[NvrtcOption, ...] = tuple(NvrtcOption(*row) for row in (
    # compilation targets (jitkern refuses these itself: it picks the arch)
    ("--gpu-architecture", "-arch", _R),
    # separate / whole-program compilation
    ("--device-c", "-dc", _F),
    ("--device-w", "-dw", _F),
    ("--relocatable-device-code", "-rdc", _R),
    ("--extensible-whole-program", "-ewp", _F),
    # tile compilation (CUDA 13)
    ("--tile-preview", "-tile-preview", _R),
    ("--enable-tile", "-enable-tile", _F),
    ("--tile-only", "-tile-only", _F),
    ("--simt-only", "-simt-only", _F),
    ("--default-tile", "-default-tile", _F),
    ("--diagnose-implicit-tile-var", "-diagnose-implicit-tile-var", _F),
    # debugging
    ("--device-debug", "-G", _F),
    ("--generate-line-info", "-lineinfo", _F),
    # code generation
    ("--dopt", "-dopt", _O, "on"),
    ("--Ofast-compile", "-Ofc", _R),
    ("--ptxas-options", "-Xptxas", _R),
    ("--maxrregcount", "-maxrregcount", _R),
    ("--ftz", "-ftz", _R),
    ("--prec-sqrt", "-prec-sqrt", _R),
    ("--prec-div", "-prec-div", _R),
    ("--fmad", "-fmad", _R),
    ("--fno-signed-zeros", "-fno-signed-zeros", _F),
    ("--ffinite-math-only", "-ffinite-math-only", _F),
    ("--use_fast_math", "-use_fast_math", _F),
    ("--extra-device-vectorization", "-extra-device-vectorization", _F),
    ("--modify-stack-limit", "-modify-stack-limit", _R),
    ("--dlink-time-opt", "-dlto", _F),
    ("--gen-opt-lto", "-gen-opt-lto", _F),
    ("--optix-ir", "-optix-ir", _F),
    ("--jump-table-density", "-jtd", _R),
    ("--device-stack-protector", "-device-stack-protector", _R),
    ("--no-cache", "-no-cache", _F),
    ("--frandom-seed", "-frandom-seed", _R),
    # preprocessing
    ("--define-macro", "-D", _R),
    ("--undefine-macro", "-U", _R),
    ("--include-path", "-I", _R),
    ("--use-bundled-headers", None, _R),
    ("--pre-include", "-include", _R),
    ("--no-source-include", "-no-source-include", _F),
    # language dialect
    ("--std", "-std", _R),
    ("--builtin-move-forward", "-builtin-move-forward", _R),
    ("--builtin-initializer-list", "-builtin-initializer-list", _R),
    # precompiled headers (CUDA 12.8+)
    ("--pch", "-pch", _F),
    ("--create-pch", "-create-pch", _R),
    ("--use-pch", "-use-pch", _R),
    ("--pch-dir", "-pch-dir", _R),
    ("--pch-verbose", "-pch-verbose", _R),
    ("--pch-messages", "-pch-messages", _R),
    ("--instantiate-templates-in-pch", "-instantiate-templates-in-pch", _R),
    # miscellaneous
    ("--disable-warnings", "-w", _F),
    ("--Wreorder", "-Wreorder", _F),
    ("--Wconversion", "-Wconversion", _F),
    ("--warning-as-error", "-Werror", _R),
    ("--fmax-errors", "-fmax-errors", _R),
    ("--restrict", "-restrict", _F),
    ("--device-as-default-execution-space", "-default-device", _F),
    ("--device-int128", "-device-int128", _F),
    ("--device-float128", "-device-float128", _F),
    ("--optimization-info", "-opt-info", _R),
    ("--version-ident", "-dQ", _R),  # CUDA 11.x
    ("--display-error-number", "-err-no", _F),
    ("--no-display-error-number", "-no-err-no", _F),
    ("--diag-error", "-diag-error", _R),
    ("--diag-suppress", "-diag-suppress", _R),
    ("--diag-warn", "-diag-warn", _R),
    ("--brief-diagnostics", "-brief-diag", _R),
    ("--time", "-time", _R),
    ("--split-compile", "-split-compile", _R),
    ("--fdevice-syntax-only", "-fdevice-syntax-only", _F),
    ("--minimal", "-minimal", _F),
    ("--fdevice-time-trace", "-fdevice-time-trace", _R),
    ("--utf-8", "-utf-8", _F),
))

#: Options NVRTC accepts that jitkern refuses, and why. NVRTC 13.5 keeps ``--restrict`` for
#: every later compile in the process: each kernel compiled after one that used it reads its
#: pointers as restrict (non-coherent loads), and is cached under a key without the option.
REFUSED = {
    name: "NVRTC applies it to every later compile in the process, not only this kernel's "
          "(so other kernels, and the cache, would get restrict pointers); write __restrict__ "
          "on this kernel's pointer parameters instead"
    for name in ("--restrict", "-restrict")
}

#: The one-letter options that also take their value glued on or after a space.
GLUED = ("-D", "-U", "-I")

#: Where the table is explained to users (named in the error).
DOCS = "docs/errors.md, 'Compiler options'"

_BY_NAME: dict[str, NvrtcOption] = {}
for _row in NVRTC_OPTIONS:
    _BY_NAME[_row.long] = _row
    if _row.short is not None:
        _BY_NAME[_row.short] = _row


def lookup(name: str) -> NvrtcOption | None:
    """The row of an option name as written (``--ftz``, ``-ftz``), or None."""
    return _BY_NAME.get(name)


def split(option: str) -> tuple[str, str | None]:
    """(name, value) of one option string: ``-ftz=true`` -> ('-ftz', 'true'); ``-DX=1`` ->
    ('-D', 'X=1'); ``-lineinfo`` -> ('-lineinfo', None)."""
    option = option.rstrip()
    for glued in GLUED:
        if option.startswith(glued) and len(option) > len(glued) and option not in _BY_NAME:
            rest = option[len(glued):]
            return glued, rest.lstrip(" =") if rest[0] in " =" else rest
    name, eq, value = option.partition("=")
    return name, (value if eq else None)


#: What to say of options other compilers have and NVRTC does not (name prefix -> advice).
ADVICE = {
    "-O": "NVRTC has no -O levels (device code is optimised unless -G is given); "
          "'-Xptxas=-O3' sets ptxas's level",
    "-g": "NVRTC's debug information is '-G' (or '-lineinfo' for line numbers only)",
}


def suggestions(name: str, n: int = 3) -> list[str]:
    """The valid option names closest to ``name`` (for the error)."""
    import difflib  # only to suggest a spelling for an option NVRTC does not know

    return difflib.get_close_matches(name, list(_BY_NAME), n=n, cutoff=0.6)


def advice(name: str) -> str | None:
    for prefix, text in ADVICE.items():
        if name == prefix or (name.startswith(prefix) and name[len(prefix):].isdigit()):
            return text
    return None
