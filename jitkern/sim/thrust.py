"""``jit.thrust`` in the simulator: each algorithm of the JIT's table run with NumPy.

An iterator is a position in a 1-D array (:class:`Ptr`; ``x`` itself is its first
element), so pointer subscripts are bounds-checked like arrays, a range ``[first, last)``
is checked to lie in one array, and what an algorithm writes lands in the kernel's array.

Each algorithm computes in the types the JIT gave its arguments (the generated code
converts values and ``init`` to those types, and functors convert their operands as
Thrust's ``plus<T>`` does), in Thrust's sequential order: a kernel's Thrust call runs in
the calling thread.
"""

from __future__ import annotations

import functools

import numpy

from ..errors import KernelAssertionError
from . import runtime as R


class Ptr:
    """An iterator: a position in a 1-D array (NumPy's empty views forget their offset,
    so ``x.end()`` cannot be a view). Subscripts are checked like an array's."""

    __slots__ = ("array", "offset")

    def __init__(self, array, offset: int):
        self.array, self.offset = array, offset

    def __len__(self):
        return len(self.array) - self.offset

    def __getitem__(self, i):
        return self.array[self.offset + i]

    def __setitem__(self, i, value):
        self.array[self.offset + i] = value


class Fancy:
    """``make_counting_iterator(start)`` / ``make_constant_iterator(value)``: the values an
    iterator computes, as an unbounded read-only sequence (element k is start + k, or value,
    in the iterator's type); slices are NumPy arrays, so every algorithm reads it as a range."""

    __slots__ = ("kind", "value")

    def __init__(self, kind: str, value):
        self.kind, self.value = kind, value

    def __len__(self):
        return 1 << 62  # unbounded: a range of it is [first, last)

    def __getitem__(self, k):
        if isinstance(k, slice):
            return self._values(k.start or 0, k.stop)
        return self._values(k, k + 1)[0]

    def _values(self, start: int, stop: int):
        cls = type(self.value)
        if self.kind == "constant":
            return numpy.full(stop - start, self.value, dtype=cls)
        if numpy.issubdtype(cls, numpy.integer):  # wraps in the iterator's type, as in C++
            return (numpy.arange(start, stop, dtype=numpy.int64) + int(self.value)).astype(cls)
        return (numpy.arange(start, stop, dtype=numpy.float64) + float(self.value)).astype(cls)

    def __setitem__(self, k, value):
        raise KernelAssertionError(
            f"{R.where_now()}: a {self.kind} iterator is read-only in {R.thread_text()}"
        )

    def same(self, other) -> bool:
        return (
            isinstance(other, Fancy)
            and (self.kind, type(self.value)) == (other.kind, type(other.value))
            and self.value == other.value
        )


def make_fancy(kind: str, value):
    return Fancy(kind, value)


def fancy_at(p, k):
    """``it[k]`` of a fancy iterator, also one moved by ``it + n``: the value it computes at
    that position (any position: a counting iterator has no memory to leave)."""
    array, offset = _position(p)
    return array[offset + int(k)]


def _position(p):
    """(1-D array, offset) of an iterator: an array (its first element) or a Ptr."""
    if isinstance(p, Ptr):
        return p.array, p.offset
    return p, 0


def _moved(site, array, offset: int):
    if isinstance(array, Fancy):  # no memory behind it: any offset is a position
        return Ptr(array, offset)
    if not 0 <= offset <= len(array):
        raise KernelAssertionError(
            f"{site}: pointer arithmetic leaves the array: position {offset} of an array "
            f"of {len(array)} elements in {R.thread_text()}"
        )
    return Ptr(array, offset)


def ptr_add(p, n):
    """``p + n`` for an iterator ``p``."""
    array, offset = _position(p)
    return _moved(R.where_now(), array, offset + int(n))


def ptr_end(a):
    return Ptr(a, len(a))


def ptr_diff(p, q):
    """``p - q``: the distance in elements between two iterators of one array."""
    a, i = _position(p)
    b, j = _position(q)
    if not _same(a, b):
        raise KernelAssertionError(
            f"{R.where_now()}: the two iterators of p - q point into different arrays "
            f"in {R.thread_text()}"
        )
    return numpy.int64(i - j)


def _same(a, b) -> bool:
    if isinstance(a, Fancy) or isinstance(b, Fancy):
        return a is b or (isinstance(a, Fancy) and a.same(b))
    return a is b or (
        a.__array_interface__["data"][0] == b.__array_interface__["data"][0] and len(a) == len(b)
    )


def _span(site, first, last, name="[first, last)"):
    """The range as a 1-D view, and the array and offset of ``first``."""
    a, i = _position(first)
    b, j = _position(last)
    if not (_same(a, b) and i <= j):
        raise KernelAssertionError(
            f"{site}: the range {name} of a jit.thrust call is not a range of one array "
            f"in {R.thread_text()}"
        )
    return a[i:j], a, i


def _out(site, result, n, name="result"):
    """The n-element output at ``result`` as a view, and the iterator past its end."""
    a, i = _position(result)
    if i + n > len(a):
        raise KernelAssertionError(
            f"{site}: the output {name} of a jit.thrust call has {len(a) - i} elements "
            f"from its start, the input {n} in {R.thread_text()}"
        )
    return a[i : i + n], Ptr(a, i + n)


# -- functors: thrust::plus<T>() and the others, typed ---------------------------------

_FUNCTORS = {
    "plus": lambda a, b: a + b,
    "minus": lambda a, b: a - b,
    "multiplies": lambda a, b: a * b,
    "maximum": lambda a, b: b if a < b else a,  # noqa: FURB136 - Thrust's order on ties
    "minimum": lambda a, b: a if a < b else b,  # noqa: FURB136 - Thrust's order on ties
    "less": lambda a, b: a < b,
    "greater": lambda a, b: a > b,
    "less_equal": lambda a, b: a <= b,
    "greater_equal": lambda a, b: a >= b,
    "equal_to": lambda a, b: a == b,
    "negate": lambda a: -a,
    "identity": lambda a: a,
}
_UNARY = ("negate", "identity")


def functor(name: str, cls):
    """``thrust::<name><T>()``: operands converted to ``cls``, arithmetic results too."""
    fn = _FUNCTORS[name]
    if name in _UNARY:
        return lambda a: cls(fn(cls(a)))
    if name in ("plus", "minus", "multiplies", "maximum", "minimum"):
        return lambda a, b: cls(fn(cls(a), cls(b)))
    return lambda a, b: fn(cls(a), cls(b))


def _less(comp):
    return comp if comp is not None else (lambda a, b: a < b)


# -- the algorithms ----------------------------------------------------------------------


def count(site, first, last, value):
    seg, _, _ = _span(site, first, last)
    return numpy.int64(numpy.count_nonzero(seg == value))


def find(site, first, last, value):
    seg, a, i = _span(site, first, last)
    hits = numpy.flatnonzero(seg == value)
    return Ptr(a, i + (int(hits[0]) if len(hits) else len(seg)))


def fill(site, first, last, value):
    _span(site, first, last)[0][:] = value


def sequence(site, first, last, init, step):
    seg, _, _ = _span(site, first, last)
    value = init
    for k in range(len(seg)):  # init + k * step in the element type, as Thrust computes it
        seg[k] = value
        value = type(init)(value + step)


def _sorted_order(seg, comp):
    if comp is None:
        return numpy.argsort(seg, kind="stable")
    key = functools.cmp_to_key(
        lambda i, j: -1 if comp(seg[i], seg[j]) else (1 if comp(seg[j], seg[i]) else 0)
    )
    return numpy.array(sorted(range(len(seg)), key=key), dtype=numpy.intp)


def sort(site, first, last, comp):
    seg, _, _ = _span(site, first, last)
    seg[:] = seg[_sorted_order(seg, comp)]


def sort_by_key(site, keys_first, keys_last, values_first, comp):
    keys, _, _ = _span(site, keys_first, keys_last, "[keys_first, keys_last)")
    values, _ = _out(site, values_first, len(keys), "values_first")
    order = _sorted_order(keys, comp)
    keys[:] = keys[order]
    values[:] = values[order]


def reduce(site, first, last, init, op):
    cls = type(init)
    op = op if op is not None else (lambda a, b: a + b)
    acc = init
    for x in _span(site, first, last)[0]:
        acc = cls(op(acc, cls(x)))
    return acc


def _scan(site, first, last, result, acc, op, inclusive):
    seg = _span(site, first, last)[0].copy()  # the output may be the input
    out, end = _out(site, result, len(seg))
    op = op if op is not None else (lambda a, b: a + b)
    cls = type(acc) if acc is not None else seg.dtype.type
    for k, x in enumerate(seg):
        if inclusive:
            acc = x if k == 0 else cls(op(acc, x))
            out[k] = acc
        else:
            out[k] = acc
            acc = cls(op(acc, cls(x)))
    return end


def inclusive_scan(site, first, last, result, op):
    return _scan(site, first, last, result, None, op, True)


def exclusive_scan(site, first, last, result, init, op):
    return _scan(site, first, last, result, init, op, False)


def equal(site, first1, last1, first2):
    seg, _, _ = _span(site, first1, last1, "[first1, last1)")
    other, _ = _out(site, first2, len(seg), "first2")
    return numpy.bool_(all(a == b for a, b in zip(seg, other)))


def _extreme(site, first, last, comp, smallest):
    seg, a, i = _span(site, first, last)
    less = _less(comp)
    best = 0
    for k in range(1, len(seg)):
        if less(seg[k], seg[best]) if smallest else less(seg[best], seg[k]):
            best = k
    return Ptr(a, i + best)


def min_element(site, first, last, comp):
    return _extreme(site, first, last, comp, True)


def max_element(site, first, last, comp):
    return _extreme(site, first, last, comp, False)


def _bound(seg, before):
    """The first position whose element is not ``before`` it (binary search)."""
    lo, hi = 0, len(seg)
    while lo < hi:
        mid = (lo + hi) // 2
        if before(seg[mid]):
            lo = mid + 1
        else:
            hi = mid
    return lo


def _lower(seg, value, less):
    return _bound(seg, lambda x: less(x, value))


def _upper(seg, value, less):
    return _bound(seg, lambda x: not less(value, x))


def _found(seg, value, less):
    k = _lower(seg, value, less)
    return numpy.bool_(k < len(seg) and not less(value, seg[k]))


def _search(name: str, one, position: bool):
    """A search of one value, or of each value of [values_first, values_last) written to
    result as Thrust's vectorised form does (an index into the range, or whether found)."""

    def algorithm(site, first, last, *rest):
        seg, a, i = _span(site, first, last)
        if len(rest) == 2:  # value, comp
            value, comp = rest
            found = one(seg, value, _less(comp))
            return Ptr(a, i + found) if position else found
        values_first, values_last, result, comp = rest
        values = _span(site, values_first, values_last, "[values_first, values_last)")[0]
        values = values.copy()  # the output may overlap them
        out, end = _out(site, result, len(values))
        less = _less(comp)
        for k, value in enumerate(values):
            out[k] = one(seg, value, less)
        return end

    algorithm.__name__ = name
    return algorithm


lower_bound = _search("lower_bound", _lower, True)
upper_bound = _search("upper_bound", _upper, True)
binary_search = _search("binary_search", _found, False)


def transform(site, first, last, result, op):
    seg = _span(site, first, last)[0].copy()
    out, end = _out(site, result, len(seg))
    for k, x in enumerate(seg):
        out[k] = op(x)
    return end


def transform_reduce(site, first, last, unary_op, init, binary_op):
    cls = type(init)
    acc = init
    for x in _span(site, first, last)[0]:
        acc = cls(binary_op(acc, unary_op(x)))
    return acc


# -- cupyx.jit.thrust's other algorithms: copies, removals, sets and the by-key family -----


def _source(site, first, n, name):
    """n elements read from an input iterator (a copy: the output may overlap it)."""
    return _out(site, first, n, name)[0].copy()


def _at(site, iterator, k, name):
    """The element position ``iterator + k`` as (array, index), checked to lie in it."""
    a, i = _position(iterator)
    if not 0 <= i + k < len(a):
        raise KernelAssertionError(
            f"{site}: {name} + {k} is outside its array of {len(a)} elements in {R.thread_text()}"
        )
    return a, i + k


def _equal_pred(pred):
    return pred if pred is not None else (lambda a, b: a == b)


def _write(site, result, values, name="result"):
    out, end = _out(site, result, len(values), name)
    out[:] = values
    return end


def copy(site, first, last, result):
    return _write(site, result, _span(site, first, last)[0].copy())


def reverse(site, first, last):
    seg = _span(site, first, last)[0]
    seg[:] = seg[::-1].copy()


def reverse_copy(site, first, last, result):
    return _write(site, result, _span(site, first, last)[0][::-1].copy())


def replace(site, first, last, old_value, new_value):
    seg = _span(site, first, last)[0]
    seg[seg == old_value] = new_value


def replace_copy(site, first, last, result, old_value, new_value):
    seg = _span(site, first, last)[0].copy()
    seg[seg == old_value] = new_value
    return _write(site, result, seg)


def remove(site, first, last, value):
    seg, a, i = _span(site, first, last)
    kept = seg[seg != value].copy()
    seg[: len(kept)] = kept  # the tail keeps its old elements, as a sequential remove does
    return Ptr(a, i + len(kept))


def remove_copy(site, first, last, result, value):
    seg = _span(site, first, last)[0]
    return _write(site, result, seg[seg != value].copy())


def _run_starts(keys, pred, adjacent=False):
    """Positions that start a run of equal elements: each key is compared with the run's
    first (unique, reduce_by_key), or with the key before it (the scans by key), as
    Thrust's sequential versions compare them."""
    equal_to, starts = _equal_pred(pred), []
    for k in range(len(keys)):
        before = k - 1 if adjacent else (starts[-1] if starts else 0)
        if not starts or not equal_to(keys[before], keys[k]):
            starts.append(k)
    return starts


def unique(site, first, last, binary_pred):
    seg, a, i = _span(site, first, last)
    starts = _run_starts(seg, binary_pred)
    seg[: len(starts)] = seg[starts].copy()
    return Ptr(a, i + len(starts))


def _sorted_until(seg, comp):
    less = _less(comp)
    for k in range(1, len(seg)):
        if less(seg[k], seg[k - 1]):
            return k
    return len(seg)


def is_sorted(site, first, last, comp):
    seg = _span(site, first, last)[0]
    return numpy.bool_(_sorted_until(seg, comp) == len(seg))


def is_sorted_until(site, first, last, comp):
    seg, a, i = _span(site, first, last)
    return Ptr(a, i + _sorted_until(seg, comp))


def adjacent_difference(site, first, last, result, binary_op):
    seg = _span(site, first, last)[0].copy()
    op = binary_op if binary_op is not None else functor("minus", seg.dtype.type)
    out, end = _out(site, result, len(seg))
    for k in range(len(seg)):
        out[k] = seg[k] if k == 0 else op(seg[k], seg[k - 1])
    return end


def inner_product(site, first1, last1, first2, init, binary_op1, binary_op2):
    cls = type(init)
    seg = _span(site, first1, last1, "[first1, last1)")[0]
    other = _out(site, first2, len(seg), "first2")[0]
    add = binary_op1 if binary_op1 is not None else functor("plus", cls)
    mul = binary_op2 if binary_op2 is not None else functor("multiplies", cls)
    acc = init
    for a, b in zip(seg, other):
        acc = cls(add(acc, mul(a, b)))
    return acc


def swap_ranges(site, first1, last1, first2):
    seg = _span(site, first1, last1, "[first1, last1)")[0]
    other, end = _out(site, first2, len(seg), "first2")
    held = seg.copy()
    seg[:] = other
    other[:] = held
    return end


def gather(site, map_first, map_last, input_first, result):
    where = _span(site, map_first, map_last, "[map_first, map_last)")[0]
    values = []
    for m in where:
        a, k = _at(site, input_first, int(m), "input_first")
        values.append(a[k])
    return _write(site, result, numpy.array(values))  # converted to the output's type


def scatter(site, first, last, mapping, result):
    seg = _span(site, first, last)[0].copy()
    where = _source(site, mapping, len(seg), "map")
    for x, m in zip(seg, where):
        a, k = _at(site, result, int(m), "result")
        a[k] = x


def _merge(kind, a, b, comp):
    """The set operation's output as (range, index) picks, in std::set_<kind>'s order."""
    less, picks, i, j = _less(comp), [], 0, 0
    while i < len(a) and j < len(b):
        if less(a[i], b[j]):
            if kind in ("union", "difference", "symmetric_difference"):
                picks.append((0, i))
            i += 1
        elif less(b[j], a[i]):
            if kind in ("union", "symmetric_difference"):
                picks.append((1, j))
            j += 1
        else:
            if kind in ("union", "intersection"):
                picks.append((0, i))
            i, j = i + 1, j + 1
    if kind in ("union", "difference", "symmetric_difference"):
        picks += [(0, k) for k in range(i, len(a))]
    if kind in ("union", "symmetric_difference"):
        picks += [(1, k) for k in range(j, len(b))]
    return picks


def _picked(picks, ranges, dtype):
    return numpy.array([ranges[r][k] for r, k in picks], dtype=dtype)


def _set_operation(kind):
    def algorithm(site, first1, last1, first2, last2, result, comp):
        a = _span(site, first1, last1, "[first1, last1)")[0].copy()
        b = _span(site, first2, last2, "[first2, last2)")[0].copy()
        out_dtype = _position(result)[0].dtype
        return _write(site, result, _picked(_merge(kind, a, b, comp), (a, b), out_dtype))

    algorithm.__name__ = f"set_{kind}"
    return algorithm


def _set_operation_by_key(kind):
    def algorithm(site, kf1, kl1, kf2, kl2, *rest):
        if kind == "intersection":
            (vf1, keys_result, values_result, comp), vf2 = rest, None
        else:
            vf1, vf2, keys_result, values_result, comp = rest
        a = _span(site, kf1, kl1, "[keys_first1, keys_last1)")[0].copy()
        b = _span(site, kf2, kl2, "[keys_first2, keys_last2)")[0].copy()
        va = _source(site, vf1, len(a), "values_first1")
        vb = _source(site, vf2, len(b), "values_first2") if vf2 is not None else None
        picks = _merge(kind, a, b, comp)
        keys_dtype = _position(keys_result)[0].dtype
        values_dtype = _position(values_result)[0].dtype
        keys_end = _write(site, keys_result, _picked(picks, (a, b), keys_dtype), "keys_result")
        values = _picked(picks, (va, vb), values_dtype)
        return keys_end, _write(site, values_result, values, "values_result")

    algorithm.__name__ = f"set_{kind}_by_key"
    return algorithm


def mismatch(site, first1, last1, first2, pred):
    seg, a, i = _span(site, first1, last1, "[first1, last1)")
    other = _out(site, first2, len(seg), "first2")[0]
    equal_to, k = _equal_pred(pred), 0
    while k < len(seg) and equal_to(seg[k], other[k]):
        k += 1
    b, j = _position(first2)
    return Ptr(a, i + k), Ptr(b, j + k)


def equal_range(site, first, last, value, comp):
    return lower_bound(site, first, last, value, comp), upper_bound(site, first, last, value, comp)


def unique_by_key(site, keys_first, keys_last, values_first, binary_pred):
    keys, a, i = _span(site, keys_first, keys_last, "[keys_first, keys_last)")
    values = _out(site, values_first, len(keys), "values_first")[0]
    starts = _run_starts(keys, binary_pred)
    keys[: len(starts)] = keys[starts].copy()
    values[: len(starts)] = values[starts].copy()
    b, j = _position(values_first)
    return Ptr(a, i + len(starts)), Ptr(b, j + len(starts))


def _runs(keys, pred, adjacent=False):
    starts = _run_starts(keys, pred, adjacent)
    return list(zip(starts, [*starts[1:], len(keys)]))


def _value_op(op, values):
    return op if op is not None else functor("plus", values.dtype.type)


def reduce_by_key(
    site, keys_first, keys_last, values_first, keys_output, values_output, binary_pred, binary_op
):
    keys = _span(site, keys_first, keys_last, "[keys_first, keys_last)")[0].copy()
    values = _source(site, values_first, len(keys), "values_first")
    op, cls = _value_op(binary_op, values), values.dtype.type
    heads, sums = [], []
    for start, stop in _runs(keys, binary_pred):
        acc = values[start]
        for k in range(start + 1, stop):
            acc = cls(op(acc, values[k]))
        heads.append(keys[start])
        sums.append(acc)
    keys_end = _write(site, keys_output, numpy.array(heads, keys.dtype), "keys_output")
    return keys_end, _write(site, values_output, numpy.array(sums, cls), "values_output")


def _scan_by_key(site, keys_first, keys_last, values_first, result, init, pred, op):
    keys = _span(site, keys_first, keys_last, "[keys_first, keys_last)")[0].copy()
    values = _source(site, values_first, len(keys), "values_first")
    op, cls = _value_op(op, values), values.dtype.type
    out, end = _out(site, result, len(keys))
    for start, stop in _runs(keys, pred, adjacent=True):
        acc = init
        for k in range(start, stop):
            if init is None:
                acc = values[k] if k == start else cls(op(acc, values[k]))
                out[k] = acc
            else:
                out[k] = acc
                acc = cls(op(acc, values[k]))
    return end


def inclusive_scan_by_key(
    site, keys_first, keys_last, values_first, result, binary_pred, binary_op
):
    return _scan_by_key(
        site, keys_first, keys_last, values_first, result, None, binary_pred, binary_op
    )


def exclusive_scan_by_key(
    site, keys_first, keys_last, values_first, result, init, binary_pred, binary_op
):
    return _scan_by_key(
        site, keys_first, keys_last, values_first, result, init, binary_pred, binary_op
    )


_SET_KINDS = ("union", "intersection", "difference", "symmetric_difference")


ALGORITHMS = {
    fn.__name__: fn
    for fn in (
        count,
        find,
        fill,
        sequence,
        sort,
        sort_by_key,
        reduce,
        inclusive_scan,
        exclusive_scan,
        equal,
        min_element,
        max_element,
        lower_bound,
        upper_bound,
        binary_search,
        transform,
        transform_reduce,
        copy,
        reverse,
        reverse_copy,
        replace,
        replace_copy,
        remove,
        remove_copy,
        unique,
        is_sorted,
        is_sorted_until,
        adjacent_difference,
        inner_product,
        swap_ranges,
        gather,
        scatter,
        mismatch,
        equal_range,
        unique_by_key,
        reduce_by_key,
        inclusive_scan_by_key,
        exclusive_scan_by_key,
        *(_set_operation(kind) for kind in _SET_KINDS),
        *(_set_operation_by_key(kind) for kind in _SET_KINDS),
    )
}
ALGORITHMS["stable_sort"] = sort  # sort is stable here: a valid unstable order too
ALGORITHMS["stable_sort_by_key"] = sort_by_key


def names() -> dict:
    table = {f"_jk_thrust_{name}": fn for name, fn in ALGORITHMS.items()}
    table.update(
        _jk_functor=functor,
        _jk_ptr_add=ptr_add,
        _jk_ptr_end=ptr_end,
        _jk_ptr_diff=ptr_diff,
        _jk_fancy=make_fancy,
        _jk_fancy_at=fancy_at,
    )
    return table
