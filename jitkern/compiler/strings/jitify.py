"""``jitify=True``: C++ standard headers for NVRTC, through CCCL's libcu++.

NVRTC ships no C++ standard library, so ``#include <type_traits>`` fails. jitkern's
``include/jitkern/jitify/`` folder holds one small header per standard header that
libcu++ provides (``type_traits``, ``limits``, ``cstdint``, ``utility``, ``tuple``,
``array``, ``algorithm``, ``cmath``, ... and the C headers ``stdint.h``, ``limits.h``,
``float.h``, ...). Each includes ``<cuda/std/X>`` and makes libcu++'s names reachable
as ``std::`` names, so ``std::is_same<...>::value``, ``std::numeric_limits<float>::max()``
or ``std::tuple`` compile unchanged; the headers of Jitify's list that libcu++ lacks
(:data:`STAND_INS`: ``<vector>``, ``<string>``, ``<iostream>``...) are declarations only, as
Jitify's are. Putting that folder first on the include path is what ``jitify=True`` adds
to the options; an ``#include`` NVRTC then cannot open is skipped with a warning, as Jitify
skips it (toolchain/skipped_includes.py).
"""

from __future__ import annotations

import os

from ...config import PACKAGE_INCLUDE

JITIFY_INCLUDE = os.path.join(PACKAGE_INCLUDE, "jitkern", "jitify")

# Defined while compiling with jitify=True, for code that wants to know.
JITIFY_DEFINE = "-DJITKERN_JITIFY=1"


def jitify_options() -> tuple[str, ...]:
    """The NVRTC options that turn ``jitify=True`` on: the shim folder, and a define."""
    return (f"-I{JITIFY_INCLUDE}", JITIFY_DEFINE)


#: Jitify's headers that libcu++ has no counterpart of, declared here (or built from the
#: others): code that includes them for host-side use compiles (jitify/__jitkern_host_only.h).
STAND_INS = ("cstdio", "iostream", "istream", "memory.h", "mutex", "ostream", "sstream",
             "stdexcept", "stdio.h", "string", "time.h", "vector")


def shim_headers() -> tuple[str, ...]:
    """The standard header names ``jitify=True`` provides, sorted."""
    return tuple(sorted(name for name in os.listdir(JITIFY_INCLUDE) if not name.startswith("__")))
