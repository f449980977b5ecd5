"""Naming, in one place: the C++ spelling of a user's identifier and the names the
emitter makes up (``jk_<tag>``), which can never equal a user's.
"""

from __future__ import annotations

import re

from .. import builtins as B
from ..strings.environment import constant_values


RESERVED_NAMES = frozenset(
    """
alignas alignof and asm auto bitand bitor bool break case catch char class compl const
constexpr const_cast continue decltype default delete do double dynamic_cast else enum explicit
export extern false float for friend goto if inline int long mutable namespace new noexcept not
operator or private protected public register reinterpret_cast return short signed sizeof
static static_assert static_cast struct switch template this throw true try typedef typeid
typename union unsigned using virtual void volatile wchar_t while xor threadIdx blockIdx blockDim
gridDim warpSize jk printf min max abs dim3 main half complex cub cooperative_groups
atomicAdd atomicSub atomicExch atomicMin atomicMax atomicInc atomicDec atomicCAS atomicAnd
atomicOr atomicXor
""".split()
)


def _template_functions() -> frozenset:
    """Free functions and namespaces the builtin records' C++ names: a user local of the
    same name would hide them, so such names are mangled too."""
    names = set()
    for record in B.all_records():
        if isinstance(record.template, str):
            names.update(re.findall(r"(?<![.\w])([A-Za-z_]\w*)\s*(?:\(|::|<)", record.template))
    for _record, row in B.MATH:
        names.update(n for n in (row.f32, row.f64, row.complex_fn) if n)
    return frozenset(names)


#: Names a user identifier must not become in C++ (keywords, CUDA's and the builtins', and the
#: macros every kernel is compiled with: M_PI, CUDART_INF, ... of jitkern/environment.h).
TAKEN_NAMES = RESERVED_NAMES | _template_functions() | frozenset(constant_values())


# Naming, in one place. Every name the emitter makes up starts with "jk_" followed by a tag
# without underscores (jk_t3, jk_shape0_x, jk_fn_twice); a user's name becomes a C++ name
# that never starts with "jk": kept when it is a plain ASCII identifier that is not taken,
# otherwise mangled to "jkv_" plus an ASCII spelling. So no made-up name can equal a user's.


def generated_name(tag: str, name: str = "") -> str:
    """A name the emitter makes up: ``jk_<tag>`` or ``jk_<tag>_<c name>``."""
    return f"jk_{tag}_{name}" if name else f"jk_{tag}"


def user_c_name(name: str) -> str:
    """The C++ spelling of a user's Python identifier (see the naming rule above)."""
    return name if _is_plain_c_name(name) else "jkv_" + ascii_spelling(name)


def ascii_spelling(name: str) -> str:
    """``name`` with each non-ASCII character spelled ``_u<hex>_`` (café -> caf_ue9_)."""
    return "".join(ch if ch.isascii() else f"_u{ord(ch):x}_" for ch in name)


def _is_plain_c_name(name: str) -> bool:
    return (
        name.isascii()
        and name.isidentifier()
        and not name.startswith("jk")
        and name not in TAKEN_NAMES
        and "__" not in name
        and not re.match(r"_[A-Z]", name)
    )
