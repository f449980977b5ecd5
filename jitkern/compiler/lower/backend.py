"""What a JIT back end supplies: a :class:`Spelling`, passed to the one emitter.

The emitter (:class:`~..statements.FunctionEmitter`, its methods by construct in this
package) holds every rule, check and error: typing through ``infer`` and the builtin
records, folding, the refusals and their positions. A back end differs only in how it
writes what lowering decided, and it says so in data: a ``Spelling`` of tables and of
functions the emitter calls with itself first (its program and ``state``, the function's
:class:`~.state.FunctionState`), then the checked pieces. CUDA C++'s is :data:`.cuda.CUDA`;
the simulator's are ``jitkern.sim.emit.PYTHON`` (one thread) and
``jitkern.sim.vector.VECTOR`` (arrays of threads, built from PYTHON with a few spellings
replaced). docs/architecture.md's "JIT back-end contract" lists the table.
"""

from __future__ import annotations

import dataclasses
from typing import Callable


@dataclasses.dataclass(frozen=True)
class Spelling:
    """A back end's spellings (see the module doc). ``e`` is the emitter."""

    name: str
    state: type  # the per-function record (FunctionState, or a back end's extension)

    # -- names and output
    c_name: Callable  # (name) -> the spelling of a user's name (made unique by the emitter)
    line: Callable  # (e, text): write one line at the current depth
    mark: Callable  # (e, node): a statement starts (#line, or the user's line of what follows)
    mark_expression_first: bool  # mark an expression statement before lowering it
    finish: Callable  # (e) -> FunctionCode: the function's text
    site: Callable  # (e) -> the statement's place, as a literal of the language
    context: str  # the leading parameters of every generated function (the simulator's)
    yields: Callable  # (e, request) -> a barrier's or collective's wait (the simulator's)
    refuse: Callable  # (e, message, hint): a construct this back end cannot run
    breakpoint: Callable | None  # (e) -> breakpoint()'s call (pdb in the user's source), or None
    hold: Callable | None  # (e, item) -> item in a local: long a + b + ... chains, else None

    # -- constants and conversions
    literal: Callable  # (e, value, t) -> a typed constant (its range checked first)
    convert: Callable  # (e, code, src, dst) -> a checked conversion
    half_round: Callable  # (e, t) -> the function rounding a float32 to the half type t
    type_code: Callable  # (e, t) -> the type's name as the language calls it

    # -- expressions
    tuple_code: Callable  # (e, t, codes) -> a tuple value
    tuple_item: Callable  # (e, item, k, checked) -> item k (``checked``: the shared checks')
    helper: Callable  # (e, name) -> jitkern's run-time helper ``jk::name``
    power: Callable  # (e, t, a, b) -> a ** b of floats or complex numbers
    unary: Callable  # (e, op, v) -> not / ~ / - of a checked operand
    negative: Callable  # (e, v) -> -v (unary minus and numpy.negative)
    bool_words: dict  # ast.And / ast.Or -> the operator between bools
    ifexp: Callable  # (e, c, a, b) -> a if c else b
    assign: Callable  # (e, name, code) -> an expression storing code in a local
    sequence: Callable  # (e, firsts, last) -> firsts evaluated in order, then last
    render: Callable  # (e, record, codes, sig, items) -> a builtin call (C++ or ``py=``)
    dim: Callable  # (e, item, attr, k, known) -> item.shape[k] / item.strides[k]
    field: Callable  # (e, code, attr, member) -> field attr (C++ member member) of a struct
    copy_struct: Callable  # (e, code) -> a copy of a struct (assignment)
    cub_instance: Callable  # (e, cls, storage) -> WarpReduce[T](temp)
    device_call: Callable  # (e, fn, values) -> the call of a specialised device function
    device_functor: Callable  # (e, device, t) -> a device function as an operator
    group_sync: Callable  # (e, item, code) -> a group's sync()
    printf: Callable  # (e, text, args) -> print() with its checked format
    print_spec: Callable  # (e, value) -> (conversion, [argument codes]) of one value
    subscript: Callable  # (e, base, indices, checked) -> an element or sub-array
    reference: Callable  # (e, element) -> element held so its address is computed once
    declare_shared: Callable  # (e, elem, size, align) -> a shared array (size None: dynamic)
    declare_local: Callable  # (e, elem, size) -> a per-thread array

    # -- statements
    blocks: dict  # "if", "elif", "else", "while", "end" -> a block's line over its condition
    open_block: Callable  # (e, word, cond): an if/elif/else/while header
    mark_branch: Callable  # (e, node): an elif's own line
    bind_temp: Callable  # (e, value, prefix) -> a new temporary holding value, evaluated here
    range_loop: Callable  # (e, var, items, codes, pragma, node): for var in range(...)
    constant_loop: Callable  # (e, var, codes, node): for var in (c0, c1, ...)
    assert_line: Callable  # (e, cond, message, node): a checked assert
