"""Shape and stride arithmetic, as pure functions of tuples (no device, no arrays).

Strides are in bytes, as in NumPy. Views, reshapes, transposes, contiguity
flags and the dimension merging that copy kernels use all live here, so they
are tested without a GPU.
"""

from __future__ import annotations

import operator

from .errors import JitkernAxisError, JitkernIndexError, JitkernTypeError, JitkernValueError


def normalize_shape(shape) -> tuple[int, ...]:
    """``5`` or ``(2, 3)`` (any integer-likes) -> a tuple of non-negative ints."""
    if type(shape) is int:
        dims = (shape,)
    elif type(shape) is tuple and all(type(n) is int for n in shape):
        dims = shape
    else:
        try:
            dims = (operator.index(shape),)
        except TypeError:
            try:
                dims = tuple(operator.index(n) for n in shape)
            except TypeError:
                raise JitkernTypeError(f"shape: expected an int or a sequence of ints, got {shape!r}") from None
    for n in dims:
        if n < 0:
            raise JitkernValueError(f"negative dimensions are not allowed (shape {dims})")
    return dims


def size_of(shape: tuple[int, ...]) -> int:
    size = 1
    for n in shape:
        size *= n
    return size


def c_strides(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    strides = []
    step = itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def f_strides(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    strides = []
    step = itemsize
    for n in shape:
        strides.append(step)
        step *= max(n, 1)
    return tuple(strides)


def is_c_contiguous(shape, strides, itemsize) -> bool:
    """NumPy's rule: dimensions of length 1 may have any stride; empty arrays are contiguous."""
    if 0 in shape:
        return True
    step = itemsize
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1:
            if s != step:
                return False
            step *= n
    return True


def is_f_contiguous(shape, strides, itemsize) -> bool:
    if 0 in shape:
        return True
    step = itemsize
    for n, s in zip(shape, strides):
        if n != 1:
            if s != step:
                return False
            step *= n
    return True


def span(shape, strides, itemsize) -> tuple[int, int]:
    """Byte range ``[lo, hi)`` touched by the array, relative to its first element."""
    if 0 in shape:
        return 0, 0
    lo = hi = 0
    for n, s in zip(shape, strides):
        if s < 0:
            lo += (n - 1) * s
        else:
            hi += (n - 1) * s
    return lo, hi + itemsize


_BAD_INDEX = (
    "only integers, slices (`:`), ellipsis (`...`) and None (`numpy.newaxis`) are valid "
    "indices of a jitkern.ndarray (basic indexing); got {!r}. For fancy indexing, copy to "
    "the host with .get() or use a kernel"
)


def index(shape, strides, key) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """Basic indexing: ``(shape, strides, byte offset)`` of the view ``a[key]``."""
    if type(key) is not tuple:
        key = (key,)
    ndim = len(shape)
    used = 0
    ellipses = 0
    for k in key:
        if k is Ellipsis:
            ellipses += 1
        elif k is not None:
            used += 1
    if ellipses > 1:
        raise JitkernIndexError("an index can only have a single ellipsis ('...')")
    if used > ndim:
        raise JitkernIndexError(
            f"too many indices for array: array is {ndim}-dimensional, but {used} were indexed")
    out_shape: list[int] = []
    out_strides: list[int] = []
    offset = 0
    dim = 0
    for k in key if ellipses else key + (Ellipsis,):
        if k is None:
            out_shape.append(1)
            out_strides.append(0)
        elif k is Ellipsis:
            for _ in range(ndim - used):
                out_shape.append(shape[dim])
                out_strides.append(strides[dim])
                dim += 1
        elif type(k) is slice:
            n, s = shape[dim], strides[dim]
            start, stop, step = k.indices(n)
            length = len(range(start, stop, step))
            if length:
                offset += start * s
            out_shape.append(length)
            out_strides.append(s * step)
            dim += 1
        else:
            offset += _integer(k, shape[dim], dim) * strides[dim]
            dim += 1
    return tuple(out_shape), tuple(out_strides), offset


def _integer(k, n: int, dim: int) -> int:
    if isinstance(k, bool) or type(k).__name__ == "bool_":
        raise JitkernIndexError(_BAD_INDEX.format(k))
    try:
        i = operator.index(k)
    except TypeError:
        raise JitkernIndexError(_BAD_INDEX.format(k)) from None
    if i < -n or i >= n:
        raise JitkernIndexError(f"index {i} is out of bounds for axis {dim} with size {n}")
    return i + n if i < 0 else i


def resolve_shape(size: int, newshape) -> tuple[int, ...]:
    """``newshape`` with one ``-1`` filled in so that it holds ``size`` elements."""
    if type(newshape) is not tuple:
        newshape = (newshape,) if isinstance(newshape, int) else tuple(newshape)
    try:
        dims = [operator.index(n) for n in newshape]
    except TypeError:
        raise JitkernTypeError(f"shape: expected ints, got {newshape!r}") from None
    unknown = [i for i, n in enumerate(dims) if n == -1]
    if len(unknown) > 1:
        raise JitkernValueError("can only specify one unknown dimension (-1)")
    if any(n < -1 for n in dims):
        raise JitkernValueError(f"negative dimensions not allowed (shape {tuple(dims)})")
    known = size_of([n for n in dims if n != -1])
    if unknown:
        if known == 0 or size % known:
            raise JitkernValueError(f"cannot reshape array of size {size} into shape {tuple(newshape)}")
        dims[unknown[0]] = size // known
    elif known != size:
        raise JitkernValueError(f"cannot reshape array of size {size} into shape {tuple(newshape)}")
    return tuple(dims)


def reshape_strides(shape, strides, itemsize, newshape) -> tuple[int, ...] | None:
    """Strides for viewing ``(shape, strides)`` as ``newshape`` in C order without a copy,
    or None when a copy is needed (NumPy's ``_attempt_nocopy_reshape``)."""
    if 0 in shape:
        return c_strides(newshape, itemsize)
    old = [(n, s) for n, s in zip(shape, strides) if n != 1]
    olddims = [n for n, _ in old]
    oldstrides = [s for _, s in old]
    newstrides = [0] * len(newshape)
    nold, nnew = len(olddims), len(newshape)
    oi, oj, ni, nj = 0, 1, 0, 1
    while ni < nnew and oi < nold:
        np_, op = newshape[ni], olddims[oi]
        while np_ != op:
            if np_ < op:
                np_ *= newshape[nj]
                nj += 1
            else:
                op *= olddims[oj]
                oj += 1
        for ok in range(oi, oj - 1):
            if oldstrides[ok] != olddims[ok + 1] * oldstrides[ok + 1]:
                return None
        newstrides[nj - 1] = oldstrides[oj - 1]
        for nk in range(nj - 1, ni, -1):
            newstrides[nk - 1] = newstrides[nk] * newshape[nk]
        ni, nj = nj, nj + 1
        oi, oj = oj, oj + 1
    last = newstrides[ni - 1] if ni >= 1 else itemsize
    for nk in range(ni, nnew):
        newstrides[nk] = last
    return tuple(newstrides)


def normalize_axis(axis, ndim: int, what: str = "") -> int:
    """``axis`` in ``0..ndim-1`` (a negative one counts from the end); NumPy's AxisError,
    with its words, when it is out of range (``what``: the argument, ``axis1``)."""
    try:
        a = operator.index(axis)
    except TypeError:
        raise JitkernTypeError(f"{what or 'axis'}: expected an int, got "
                               f"{type(axis).__name__} {axis!r}") from None
    if not -ndim <= a < ndim:
        head = f"{what}: " if what else ""
        raise JitkernAxisError(f"{head}axis {a} is out of bounds for array of dimension {ndim}")
    return a % ndim


def transpose_axes(ndim: int, axes) -> tuple[int, ...]:
    """Validated permutation (reversed when ``axes`` is empty/None)."""
    if not axes or axes == (None,):
        return tuple(range(ndim - 1, -1, -1))
    if len(axes) == 1 and not isinstance(axes[0], int):
        axes = tuple(axes[0])
    try:
        perm = tuple(operator.index(a) for a in axes)
    except TypeError:
        raise JitkernTypeError(f"axes: expected ints, got {axes!r}") from None
    if len(perm) != ndim:
        raise JitkernValueError("axes don't match array")
    norm = [normalize_axis(a, ndim) for a in perm]
    if len(set(norm)) != ndim:
        raise JitkernValueError("repeated axis in transpose")
    return tuple(norm)


def broadcast_strides(shape, strides, target) -> tuple[int, ...]:
    """Strides that broadcast ``(shape, strides)`` to ``target`` (0 on stretched axes)."""
    if len(shape) > len(target):
        raise JitkernValueError(f"could not broadcast input array from shape {tuple(shape)} "
                         f"into shape {tuple(target)}")
    lead = len(target) - len(shape)
    out = [0] * lead
    for n, s, t in zip(shape, strides, target[lead:]):
        if n == t:
            out.append(s)
        elif n == 1:
            out.append(0)
        else:
            raise JitkernValueError(f"could not broadcast input array from shape {tuple(shape)} "
                             f"into shape {tuple(target)}")
    return tuple(out)


def collapse(shape, *stride_sets, min_ndim: int = 1) -> tuple[tuple[int, ...], list[tuple[int, ...]]]:
    """Drop length-1 axes and merge neighbours that are contiguous in every stride set,
    keeping the C-order element sequence (what a strided copy kernel iterates).

    An all-size-1 shape (one element) gives ``(1,)`` with zero strides when ``min_ndim``
    is 1 (the copy kernels loop over at least one axis), ``()`` when it is 0 (the string
    kernels' launch struct, which then has no axis)."""
    dims: list[int] = []
    sets: list[list[int]] = [[] for _ in stride_sets]
    for i, n in enumerate(shape):
        if n == 1:
            continue
        if dims and all(st[-1] == s[i] * n for st, s in zip(sets, stride_sets)):
            dims[-1] *= n
            for st, s in zip(sets, stride_sets):
                st[-1] = s[i]
            continue
        dims.append(n)
        for st, s in zip(sets, stride_sets):
            st.append(s[i])
    if not dims and min_ndim:
        return (1,), [(0,) for _ in stride_sets]
    return tuple(dims), [tuple(st) for st in sets]


def ranges_overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Whether byte ranges ``[lo, hi)`` intersect."""
    return a[0] < b[1] and b[0] < a[1] and a[0] < a[1] and b[0] < b[1]


def max_extent(shape, strides) -> int:
    """Largest byte distance between two elements of an array of ``shape``/``strides``
    (zero-length axes are skipped; :func:`span` is the range with the item size)."""
    return sum(abs(st) * (n - 1) for n, st in zip(shape, strides) if n > 0)


def fits_int32(shape, strides, itemsize) -> bool:
    """Whether every byte offset an array of this layout reaches fits in an int32 (the
    JIT's and exported kernels' 32-bit indexing); an empty array always does."""
    extent = itemsize
    for n, s in zip(shape, strides):
        if n == 0:
            return True
        extent += (n - 1) * abs(s)
    return extent < (1 << 31)
