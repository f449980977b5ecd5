"""One name, two forms: Thrust's searches (``lower_bound``, ``upper_bound``,
``binary_search``) take one value, or a range of values and an output iterator (the
vectorised form), as cupyx.jit.thrust's ``*args`` does. :func:`overloaded` makes the one
builtin record of a name from the records of its two forms (rows of :mod:`.thrust`'s table),
choosing by the number of arguments after the range; checking, C++ and the simulator's
spelling are the chosen form's."""

from __future__ import annotations

from ...errors import JitkernTypeError
from ..values import Const
from .records import Builtin, Sig

_RANGE = 3  # exec_policy, first, last
_FORMS = {1: "one", 2: "one", 3: "many", 4: "many"}  # arguments after the range -> form


def _absent(item) -> bool:
    return isinstance(item, Const) and item.value is None


def _form(items, one: Builtin, many: Builtin) -> tuple[Builtin, int]:
    """(the form's record, how many of ``items`` it takes): the bound items are the
    positional arguments, then ``comp=`` (None when not given as a keyword)."""
    *given, comp = items
    after = len(given) - _RANGE
    form = _FORMS.get(after)
    if form is None:
        raise JitkernTypeError(
            f"takes value[, comp] or values_first, values_last, result[, comp] after first and "
            f"last; got {after} argument(s) there")
    if after in (2, 4):  # the comparator given by position
        if not _absent(comp):
            raise JitkernTypeError("comp is given twice: by position and as comp=")
        return (one if form == "one" else many), len(given)
    return (one if form == "one" else many), len(items)


def overloaded(one: Builtin, many: Builtin, doc: str) -> Builtin:
    """The record of a search name taking one value (``one``) or a range of them (``many``)."""

    def rule(items, mode):
        record, k = _form(items, one, many)
        sig = record.rule(items[:k], mode)
        return Sig(tuple(sig.args) + (None,) * (len(items) - k), sig.result)

    def spelled(template_of):
        def template(codes, sig, items, ctx):
            record, k = _form(items, one, many)
            chosen = template_of(record)
            sig_k = Sig(sig.args[:k], sig.result)
            if callable(chosen):
                return chosen(codes[:k], sig_k, items[:k], ctx)
            return chosen.format(*codes[:k])

        return template

    return Builtin(
        one.name,
        ("exec_policy", "first", "last", "*args", "comp=None"),
        f"{one.accepts}; or values_first, values_last (iterators), result (an output)",
        rule,
        spelled(lambda record: record.template),
        doc,
        one.group,
        includes=one.includes,
        py=spelled(lambda record: record.py),
    )
