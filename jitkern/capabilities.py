"""What each GPU generation adds, as data: one row per capability jitkern checks.

A ground module (it imports nothing of jitkern) because the three stages that check a
capability read it: the compiler when a builtin needs one (``compiler/builtins``), the
toolchain when it validates an arch (``toolchain/target.py``), and the runtime before a
launch (``runtime/module.py``). Each row is (first compute capability, what it is, as
messages name it).
"""

from __future__ import annotations

# capability -> (first compute capability, what a refusal adds after "needs sm_XY or
# newer", or "" where the builtin's own name says enough)
CAPABILITIES = {
    "clusters": (90, "thread-block clusters and distributed shared memory"),
    "atomic_float16": (70, ""),
    "atomic_bfloat16": (80, ""),
}

# Arch variant suffix -> first compute capability NVRTC offers it for: 'a' an arch-specific
# CUBIN (this exact GPU, e.g. wgmma on sm_90a), 'f' a family-specific one (CUDA 12.9+).
VARIANT_MIN_CC = {"": 0, "a": 90, "f": 100}


def min_cc(capability: str) -> int:
    """The first compute capability (as 90 for sm_90) that has ``capability``."""
    return CAPABILITIES[capability][0]


def feature_note(cc: int) -> str:
    """' (what sm_``cc`` brought)' for messages about a use that needs it, else ''."""
    for first, what in CAPABILITIES.values():
        if first == cc and what:
            return f" ({what})"
    return ""
