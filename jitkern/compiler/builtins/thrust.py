"""Thrust's algorithms inside kernels (``jit.thrust``), as cupyx.jit.thrust spells them.

Every algorithm is one row of :data:`_ALGORITHMS`: its name, Thrust header, parameters
(each with an argument kind from :data:`_KINDS`), result rule, C++ call and doc. One
rule and one template read the row, so checking, emission and the docs table share it.

Iterators are 1-D contiguous arrays (``x``, ``x.begin()``, ``x.end()``), shared memory
and pointer arithmetic on them (``x + n``, ``smem + 4``); ``thrust.find`` and the other
searches return a pointer, and ``it - x.begin()`` is its index. The fancy iterators
``make_counting_iterator(start)`` and ``make_constant_iterator(value)`` (a
:class:`~jitkern.compiler.types.FancyIterator`) stand wherever an algorithm only reads a range.

NVRTC cannot compile Thrust (its headers define host functions, which NVRTC refuses:
NVIDIA/cccl#4305), so a program that includes a Thrust header is compiled with nvcc,
as cupyx.jit does; :func:`backend_for` says which compiler a generated source needs.
"""

from __future__ import annotations

import dataclasses

from ...errors import JitkernTypeError
from .. import infer
from .. import types as T
from ..values import Const, operand
from . import thrust_sim
from .iterators import FANCY_ITERATORS, as_iterator, describe_item as _describe, element_type, iterator_type
from .iterators import iterator_text as _iterator_text
from .records import Builtin, Marker, Namespace, Sig
from .thrust_search import overloaded

_POLICY_HEADER = "<thrust/execution_policy.h>"
_THRUST_INCLUDE = "#include <thrust/"


def backend_for(source: str) -> str:
    """The compiler a generated program needs: nvcc when it includes Thrust."""
    return "nvcc" if _THRUST_INCLUDE in source else "nvrtc"


POLICIES = {
    "device": Marker("thrust.device", "thrust::device"),
    "seq": Marker("thrust.seq", "thrust::seq"),
}

#: Function objects for comparators and operators (``jit.thrust.greater()``).
FUNCTORS = {
    name: Marker(f"thrust.{name}", f"thrust::{name}")
    for name in (
        "plus",
        "minus",
        "multiplies",
        "maximum",
        "minimum",
        "less",
        "greater",
        "less_equal",
        "greater_equal",
        "equal_to",
        "negate",
        "identity",
    )
}


# ---------------------------------------------------------------------------
# argument kinds


#: Algorithms that write through their first range, and the parameters that are outputs:
#: a fancy iterator (read-only) cannot stand there.
_WRITES_FIRST = frozenset(
    (
        "fill",
        "sequence",
        "sort",
        "stable_sort",
        "sort_by_key",
        "stable_sort_by_key",
        "reverse",
        "replace",
        "remove",
        "unique",
        "swap_ranges",
        "unique_by_key",
    )
)
_OUTPUTS = frozenset(("result", "keys_output", "values_output", "keys_result", "values_result"))
_WRITTEN_WITH_FIRST = ("values_first", "first2")  # in place with the first range (sort_by_key)


def _policy(item, name, state):
    if isinstance(item, Const) and any(item.value is p for p in POLICIES.values()):
        return
    raise JitkernTypeError(f"{name} must be jit.thrust.device or jit.thrust.seq")


def _iterator(item, name, state):
    elem = element_type(item)
    if elem is None:
        raise JitkernTypeError(
            f"{name} must be a 1-D contiguous array, shared memory or a pointer "
            f"(x, x.begin(), x + n), got {_describe(item)}"
        )
    if isinstance(item.type, T.FancyIterator) and _written(name, state):
        raise JitkernTypeError(
            f"{name} is written by thrust.{state['algo']}, so it cannot be a {item.type} "
            "(fancy iterators are read-only): pass an array or a pointer"
        )
    state.setdefault("elem", elem)
    state.setdefault("elems", []).append(elem)
    state.setdefault("iters", []).append(iterator_type(item))


def _written(name: str, state) -> bool:
    if name in _OUTPUTS:
        return True
    in_place = state["algo"] in _WRITES_FIRST
    return in_place and (name in _WRITTEN_WITH_FIRST or name.startswith(("first", "keys_")))


def _values(item, name, state):
    """The values a vectorised search looks up: of the searched range's element type."""
    _iterator(item, name, state)
    if state["elems"][-1] != state["elems"][0]:
        raise JitkernTypeError(f"{name} points to {state['elems'][-1]}, but first points to "
                               f"{state['elems'][0]}: search values of the range's type")


def _last(item, name, state):
    _iterator(item, name, state)
    first, last = state["elems"][-2], state["elems"][-1]
    if first != last:
        raise JitkernTypeError(f"{name} points to {last}, but first points to {first}")
    first_it, last_it = state["iters"][-2], state["iters"][-1]
    if first_it != last_it:
        raise JitkernTypeError(
            f"{name} is a {_iterator_text(last_it)}, but first is a {_iterator_text(first_it)}: "
            "a range's two ends are iterators of one kind"
        )


def _value(item, name, state):
    if not isinstance(operand(item), (T.Scalar, bool, int, float, complex)):
        raise JitkernTypeError(f"{name} must be a number, got {_describe(item)}")
    return state["elem"]


def _init(item, name, state):
    if isinstance(item, Const) and item.value is None:
        return None
    op = operand(item)
    if not isinstance(op, (T.Scalar, bool, int, float, complex)):
        raise JitkernTypeError(f"{name} must be a number, got {_describe(item)}")
    state["init"] = state["elem"] if infer.is_weak(op) else op
    return state["init"]


def _values_init(item, name, state):
    """An init for the values of a by-key algorithm: typed as the values' elements."""
    if isinstance(item, Const) and item.value is None:
        return None
    op = operand(item)
    if not isinstance(op, (T.Scalar, bool, int, float, complex)):
        raise JitkernTypeError(f"{name} must be a number, got {_describe(item)}")
    return state["elems"][2]


def _element_value(item, name, state):
    if isinstance(item, Const) and item.value is None:
        return None
    return _value(item, name, state)


def _functor(item, name, state):
    value = item.value if isinstance(item, Const) else None
    state.setdefault("ops_given", []).append(not (value is None and isinstance(item, Const)))
    if value is None and isinstance(item, Const):
        return
    if isinstance(value, Marker) and value in FUNCTORS.values():
        return
    if value is not None and hasattr(value, "__jit_device__"):
        return
    raise JitkernTypeError(
        f"{name} must be a jit.thrust functor (jit.thrust.greater(), ...) or a device function"
    )


def _second_op(item, name, state):
    """The second of two operators Thrust takes together (inner_product's)."""
    _functor(item, name, state)
    first, second = state["ops_given"][-2:]
    if first != second:
        raise JitkernTypeError(
            f"give both operators or neither: {name} goes with the one before it"
        )


_KINDS = {
    "policy": _policy,
    "op2": _second_op,
    "vop": _functor,  # an operator on the values of a by-key algorithm
    "vinit": _values_init,
    "first": _iterator,
    "values": _values,
    "last": _last,
    "iter": _iterator,
    "value": _value,
    "init": _init,
    "elem": _element_value,
    "op": _functor,
}


_ITERATOR_KINDS = frozenset(("first", "values", "last", "iter"))


# ---------------------------------------------------------------------------
# the table


@dataclasses.dataclass(frozen=True)
class Algorithm:
    name: str
    header: str
    params: tuple  # 'kind:name' or 'kind:name=default'
    result: str  # 'void', 'index', 'elem', 'init', 'bool', 'pointer'
    doc: str


# each algorithm's first parameters: the execution policy, then its input range(s)
_ON_RANGE = ("policy:exec_policy", "first:first", "last:last")
_ON_RANGE1 = ("policy:exec_policy", "first:first1", "last:last1")
_ON_KEYS = ("policy:exec_policy", "first:keys_first", "last:keys_last")
_ON_TWO_RANGES = ("policy:exec_policy", "first:first1", "last:last1", "first:first2", "last:last2")
_ON_TWO_KEY_RANGES = (
    "policy:exec_policy",
    "first:keys_first1",
    "last:keys_last1",
    "first:keys_first2",
    "last:keys_last2",
)


def _set_by_key(operation: str, values_first2: bool = True) -> Algorithm:
    """The ``<operation>_by_key`` row: the set operation on the keys, carrying the values
    (set_intersection_by_key takes the first range's values only)."""
    values = (
        ("iter:values_first1", "iter:values_first2") if values_first2 else ("iter:values_first1",)
    )
    outputs = 4 + len(values)  # the keys' and the values' outputs among the iterators
    return Algorithm(
        f"{operation}_by_key",
        "set_operations",
        (*_ON_TWO_KEY_RANGES, *values, "iter:keys_result", "iter:values_result", "op:comp=None"),
        f"pair:{outputs},{outputs + 1}",
        f"{operation} on the keys, carrying the values; returns the ends of both outputs.",
    )


_ALGORITHMS = (
    Algorithm(
        "count",
        "count",
        (*_ON_RANGE, "value:value"),
        "index",
        "Number of elements equal to value.",
    ),
    Algorithm(
        "find",
        "find",
        (*_ON_RANGE, "value:value"),
        "pointer",
        "Pointer to the first element equal to value (last if none).",
    ),
    Algorithm(
        "fill",
        "fill",
        (*_ON_RANGE, "value:value"),
        "void",
        "Set every element to value.",
    ),
    Algorithm(
        "sequence",
        "sequence",
        (*_ON_RANGE, "elem:init=None", "elem:step=None"),
        "void",
        "Store init, init + step, ... (default 0, 1).",
    ),
    Algorithm(
        "sort",
        "sort",
        (*_ON_RANGE, "op:comp=None"),
        "void",
        "Sort in place (ascending, or by comp).",
    ),
    Algorithm(
        "stable_sort",
        "sort",
        (*_ON_RANGE, "op:comp=None"),
        "void",
        "Sort in place keeping the order of equal elements.",
    ),
    Algorithm(
        "sort_by_key",
        "sort",
        (*_ON_KEYS, "iter:values_first", "op:comp=None"),
        "void",
        "Sort keys in place and permute values_first the same way.",
    ),
    Algorithm(
        "stable_sort_by_key",
        "sort",
        (*_ON_KEYS, "iter:values_first", "op:comp=None"),
        "void",
        "sort_by_key keeping the order of equal keys.",
    ),
    Algorithm(
        "reduce",
        "reduce",
        (*_ON_RANGE, "init:init=None", "op:binary_op=None"),
        "init",
        "Sum (or binary_op) of the elements and init (default 0); typed as init.",
    ),
    Algorithm(
        "inclusive_scan",
        "scan",
        (*_ON_RANGE, "iter:result", "op:binary_op=None"),
        "pointer_out",
        "Prefix sums including each element into result; returns the end of the output.",
    ),
    Algorithm(
        "exclusive_scan",
        "scan",
        (*_ON_RANGE, "iter:result", "init:init=None", "op:binary_op=None"),
        "pointer_out",
        "Prefix sums excluding each element, starting at init (default 0).",
    ),
    Algorithm(
        "equal",
        "equal",
        (*_ON_RANGE1, "iter:first2"),
        "bool",
        "Whether [first1, last1) equals the range at first2.",
    ),
    Algorithm(
        "min_element",
        "extrema",
        (*_ON_RANGE, "op:comp=None"),
        "pointer",
        "Pointer to the smallest element (the first one on ties).",
    ),
    Algorithm(
        "max_element",
        "extrema",
        (*_ON_RANGE, "op:comp=None"),
        "pointer",
        "Pointer to the largest element (the first one on ties).",
    ),
    Algorithm(
        "lower_bound",
        "binary_search",
        (*_ON_RANGE, "value:value", "op:comp=None"),
        "pointer",
        "First position in a sorted range where value could be inserted.",
    ),
    Algorithm(
        "upper_bound",
        "binary_search",
        (*_ON_RANGE, "value:value", "op:comp=None"),
        "pointer",
        "Last position in a sorted range where value could be inserted.",
    ),
    Algorithm(
        "binary_search",
        "binary_search",
        (*_ON_RANGE, "value:value", "op:comp=None"),
        "bool",
        "Whether a sorted range contains value.",
    ),
    Algorithm(
        "transform",
        "transform",
        (*_ON_RANGE, "iter:result", "op:op"),
        "pointer_out",
        "result[i] = op(first[i]) (op: a device function or jit.thrust.negate()).",
    ),
    Algorithm(
        "transform_reduce",
        "transform_reduce",
        (*_ON_RANGE, "op:unary_op", "init:init", "op:binary_op"),
        "init",
        "binary_op-reduction of unary_op(x) over the range, starting at init.",
    ),
    # cupyx.jit.thrust's other single-result algorithms
    Algorithm(
        "copy",
        "copy",
        (*_ON_RANGE, "iter:result"),
        "pointer_out",
        "Copy [first, last) to result; returns the end of the output.",
    ),
    Algorithm(
        "reverse",
        "reverse",
        _ON_RANGE,
        "void",
        "Reverse the range in place.",
    ),
    Algorithm(
        "reverse_copy",
        "reverse",
        (*_ON_RANGE, "iter:result"),
        "pointer_out",
        "Copy the range reversed to result; returns the end of the output.",
    ),
    Algorithm(
        "replace",
        "replace",
        (*_ON_RANGE, "value:old_value", "value:new_value"),
        "void",
        "Replace every element equal to old_value by new_value.",
    ),
    Algorithm(
        "replace_copy",
        "replace",
        (*_ON_RANGE, "iter:result", "value:old_value", "value:new_value"),
        "pointer_out",
        "Copy to result, replacing old_value by new_value.",
    ),
    Algorithm(
        "remove",
        "remove",
        (*_ON_RANGE, "value:value"),
        "pointer",
        "Move the elements not equal to value to the front; returns their new end.",
    ),
    Algorithm(
        "remove_copy",
        "remove",
        (*_ON_RANGE, "iter:result", "value:value"),
        "pointer_out",
        "Copy the elements not equal to value to result; returns the end of the output.",
    ),
    Algorithm(
        "unique",
        "unique",
        (*_ON_RANGE, "op:binary_pred=None"),
        "pointer",
        "Drop all but the first of each run of equal elements; returns the new end.",
    ),
    Algorithm(
        "is_sorted",
        "sort",
        (*_ON_RANGE, "op:comp=None"),
        "bool",
        "Whether the range is sorted (ascending, or by comp).",
    ),
    Algorithm(
        "is_sorted_until",
        "sort",
        (*_ON_RANGE, "op:comp=None"),
        "pointer",
        "End of the longest sorted prefix.",
    ),
    Algorithm(
        "adjacent_difference",
        "adjacent_difference",
        (*_ON_RANGE, "iter:result", "op:binary_op=None"),
        "pointer_out",
        "result[0] = first[0], result[i] = first[i] - first[i - 1] (or binary_op).",
    ),
    Algorithm(
        "inner_product",
        "inner_product",
        (*_ON_RANGE1, "iter:first2", "init:init", "op:binary_op1=None", "op2:binary_op2=None"),
        "init",
        "init plus the sum of products (or binary_op1 of binary_op2); typed as init.",
    ),
    Algorithm(
        "swap_ranges",
        "swap",
        (*_ON_RANGE1, "iter:first2"),
        "pointer_out",
        "Swap [first1, last1) with the range at first2; returns the end of the second.",
    ),
    Algorithm(
        "gather",
        "gather",
        (
            "policy:exec_policy",
            "first:map_first",
            "last:map_last",
            "iter:input_first",
            "iter:result",
        ),
        "pointer_out",
        "result[i] = input_first[map_first[i]]; returns the end of the output.",
    ),
    Algorithm(
        "scatter",
        "scatter",
        (*_ON_RANGE, "iter:map", "iter:result"),
        "void",
        "result[map[i]] = first[i].",
    ),
    Algorithm(
        "set_union",
        "set_operations",
        (*_ON_TWO_RANGES, "iter:result", "op:comp=None"),
        "pointer_out",
        "Sorted union of two sorted ranges into result; returns the end of the output.",
    ),
    Algorithm(
        "set_intersection",
        "set_operations",
        (*_ON_TWO_RANGES, "iter:result", "op:comp=None"),
        "pointer_out",
        "Sorted intersection of two sorted ranges; returns the end of the output.",
    ),
    Algorithm(
        "set_difference",
        "set_operations",
        (*_ON_TWO_RANGES, "iter:result", "op:comp=None"),
        "pointer_out",
        "Elements of the first sorted range not in the second; returns the end of the output.",
    ),
    Algorithm(
        "set_symmetric_difference",
        "set_operations",
        (*_ON_TWO_RANGES, "iter:result", "op:comp=None"),
        "pointer_out",
        "Elements in exactly one of two sorted ranges; returns the end of the output.",
    ),
    # pairs of iterators (returned as a tuple) and the by-key algorithms
    Algorithm(
        "mismatch",
        "mismatch",
        (*_ON_RANGE1, "iter:first2", "op:pred=None"),
        "pair:0,2",
        "The first position where the ranges differ, as a pair of iterators (one per range).",
    ),
    Algorithm(
        "equal_range",
        "binary_search",
        (*_ON_RANGE, "value:value", "op:comp=None"),
        "pair:0,1",
        "lower_bound and upper_bound of value in a sorted range, as a pair of iterators.",
    ),
    Algorithm(
        "unique_by_key",
        "unique",
        (*_ON_KEYS, "iter:values_first", "op:binary_pred=None"),
        "pair:0,2",
        "unique on the keys, moving the values along; returns the two new ends.",
    ),
    Algorithm(
        "reduce_by_key",
        "reduce",
        (
            *_ON_KEYS,
            "iter:values_first",
            "iter:keys_output",
            "iter:values_output",
            "op:binary_pred=None",
            "vop:binary_op=None",
        ),
        "pair:3,4",
        "Reduce each run of equal keys' values; returns the ends of both outputs.",
    ),
    Algorithm(
        "inclusive_scan_by_key",
        "scan",
        (
            *_ON_KEYS,
            "iter:values_first",
            "iter:result",
            "op:binary_pred=None",
            "vop:binary_op=None",
        ),
        "pointer_out",
        "inclusive_scan restarted at each run of equal keys; returns the end of the output.",
    ),
    Algorithm(
        "exclusive_scan_by_key",
        "scan",
        (
            *_ON_KEYS,
            "iter:values_first",
            "iter:result",
            "vinit:init=None",
            "op:binary_pred=None",
            "vop:binary_op=None",
        ),
        "pointer_out",
        "exclusive_scan restarted at each run of equal keys (from init, default 0).",
    ),
    _set_by_key("set_union"),
    _set_by_key("set_intersection", values_first2=False),
    _set_by_key("set_difference"),
    _set_by_key("set_symmetric_difference"),
)


def _split(param: str):
    kind, name = param.split(":", 1)
    return kind, name


def _rule_for(algo: Algorithm):
    kinds = [_split(p)[0] for p in algo.params]

    def rule(items, mode):
        state: dict = {"algo": algo.name}
        targets = []
        for kind, param, item in zip(kinds, algo.params, items):
            name = _split(param)[1].split("=")[0]
            targets.append(_KINDS[kind](item, name, state))
        return Sig(tuple(targets), _result_type(algo.result, items, state))

    return rule


def _result_type(result: str, items, state) -> T.Type:
    if result == "void":
        return T.void
    if result == "index":
        return T.int64
    if result == "bool":
        return T.bool_
    if result == "pointer":
        return state["iters"][0]
    if result == "pointer_out":
        return T.pointer(state["elems"][-1])
    if result == "iter_out":  # the output iterator moved past what was written
        return state["iters"][-1]
    if result.startswith("pair:"):
        iters = state["iters"]
        return T.tuple_of(iters[int(k)] for k in result[5:].split(","))
    return state.get("init", state["elem"])


def _template_for(algo: Algorithm):
    kinds = [_split(p)[0] for p in algo.params]

    def template(codes, sig, items, ctx):
        ctx.include(_POLICY_HEADER)
        ctx.include(f"<thrust/{algo.header}.h>")
        state = {"elem": element_type(items[1])}
        args = []
        for kind, code, item, target in zip(kinds, codes, items, sig.args):
            if kind == "policy":
                args.append(item.value.cname)
            elif kind in ("op", "op2", "vop"):
                if not (isinstance(item, Const) and item.value is None):
                    typed = sig.result if algo.result == "init" else state["elem"]
                    if kind == "vop":
                        typed = element_type(items[3])
                    args.append(_functor_code(item.value, typed, algo, ctx))
            elif (
                kind in ("init", "elem", "vinit") and isinstance(item, Const) and item.value is None
            ):
                continue
            else:
                args.append(as_iterator(code, item, ctx) if kind in _ITERATOR_KINDS else code)
        args = _defaults(algo, items, args, sig, ctx)
        call = f"thrust::{algo.name}({', '.join(args)})"
        if algo.result.startswith("pair:"):
            # thrust::pair -> the JIT's tuple, so `a, b = jit.thrust.mismatch(...)` unpacks it
            return (
                f"[] (auto jk_p) {{ return {sig.result.ctype}{{jk_p.first, {{jk_p.second, {{}}}}}}; }}"
                f"({call})"
            )
        return call

    return template


def _defaults(algo, items, args, sig, ctx):
    """Fill in what Thrust has no default for: reduce's and scans' init before an op."""
    names = [_split(p)[1].split("=")[0] for p in algo.params]
    given = {n: not (isinstance(i, Const) and i.value is None) for n, i in zip(names, items)}
    if algo.name in ("reduce", "exclusive_scan") and given.get("binary_op") and not given["init"]:
        elem = element_type(items[1])
        position = names.index("init")
        args.insert(position, ctx.zero(elem))
    if algo.name == "reduce" and not given.get("init") and not given.get("binary_op"):
        args.append(ctx.zero(sig.result))  # thrust::reduce(first, last) sums in the element type
    if algo.name.endswith("_by_key") and "binary_op" in names:
        _by_key_defaults(names, given, items, args, ctx)
    return args


def _by_key_defaults(names, given, items, args, ctx):
    """Thrust's by-key overloads take init, then binary_pred, then binary_op: one given alone
    needs the ones before it spelled out (0 of the values' type, equal_to on the keys)."""
    keys, values = element_type(items[1]), element_type(items[3])
    optional = [n for n in ("init", "binary_pred", "binary_op") if n in names]
    last_given = max((k for k, n in enumerate(optional) if given.get(n)), default=0)
    for name in optional[:last_given]:  # left to right, so each lands at its position
        if not given.get(name):
            default = ctx.zero(values) if name == "init" else f"thrust::equal_to<{keys.ctype}>()"
            args.insert(names.index(name), default)


def _functor_code(value, elem: T.Scalar, algo: Algorithm, ctx) -> str:
    if isinstance(value, Marker):
        return f"{value.cname}<{elem.ctype}>()"
    return _device_lambda(value, elem, 1 if algo.name == "transform" else 2, ctx)


def _device_lambda(device, elem: T.Scalar, arity: int, ctx) -> str:
    fn = ctx.program_device_function(device, (elem,) * arity)
    params = ", ".join(f"{elem.ctype} a{k}" for k in range(arity))
    call = ", ".join(f"a{k}" for k in range(arity))
    return f"[] ({params}) -> {fn.return_type.ctype} {{ return {fn.cname}({call}); }}"


def _record(algo: Algorithm) -> Builtin:
    params = tuple(_split(p)[1] for p in algo.params)
    iterators = "iterators (1-D arrays, shared memory, pointers, fancy where only read)"
    accepts = f"policy; {iterators}; " + ", ".join(
        _split(p)[1].split("=")[0]
        for p in algo.params
        if _split(p)[0] in ("value", "init", "elem", "op", "op2", "vop", "vinit")
    )
    return Builtin(
        f"thrust.{algo.name}",
        params,
        accepts.rstrip("; "),
        _rule_for(algo),
        _transform_reduce_template if algo.name == "transform_reduce" else _template_for(algo),
        algo.doc,
        "thrust",
        includes=(_POLICY_HEADER,),
        py=thrust_sim.template_for(algo),
    )


def _transform_reduce_template(codes, sig, items, ctx):
    ctx.include(_POLICY_HEADER)
    ctx.include("<thrust/transform_reduce.h>")
    elem = element_type(items[1])
    unary, binary = items[3].value, items[5].value
    unary_code = (
        f"{unary.cname}<{elem.ctype}>()"
        if isinstance(unary, Marker)
        else _device_lambda(unary, elem, 1, ctx)
    )
    init_t = sig.result
    binary_code = (
        f"{binary.cname}<{init_t.ctype}>()"
        if isinstance(binary, Marker)
        else _device_lambda(binary, init_t, 2, ctx)
    )
    policy = items[0].value.cname
    return (
        f"thrust::transform_reduce({policy}, {codes[1]}, {codes[2]}, {unary_code}, "
        f"{codes[4]}, {binary_code})"
    )


ALGORITHMS = {algo.name: _record(algo) for algo in _ALGORITHMS}

# lower_bound, upper_bound, binary_search: also over a range of values, into an output
_WRITES = {"binary_search": "whether each is found", "lower_bound": "the index of its lower "
           "bound", "upper_bound": "the index of its upper bound"}
for _name, _writes in _WRITES.items():
    _many = Algorithm(_name, "binary_search", (*_ON_RANGE, "values:values_first",
                      "last:values_last", "iter:result", "op:comp=None"), "iter_out", "")
    ALGORITHMS[_name] = overloaded(
        ALGORITHMS[_name], _record(_many),
        f"{ALGORITHMS[_name].doc} With values_first, values_last, result: for each value, "
        f"{_writes} in result (returns the end of the output).")


thrust = Namespace("thrust", {**ALGORITHMS, **POLICIES, **FUNCTORS, **FANCY_ITERATORS})
