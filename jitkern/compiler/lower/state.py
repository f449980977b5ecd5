"""The state of one function being lowered, in one explicit object.

The emitter (:class:`~..statements.FunctionEmitter`, one per function and specialisation)
holds what lowering reads and decides: its target's spelling, the program, the parsed
source. What emitting the function builds up as it goes (its locals and their C names,
the lines written, the nesting, the cursor for error positions) lives here, on
``emitter.state``: nothing of it is kept anywhere else, and a back end that needs more per
function extends this record (:class:`~jitkern.sim.emit.SimState`), not the emitter.
"""

from __future__ import annotations

import dataclasses

from .texts import _assigned_names


@dataclasses.dataclass
class FunctionState:
    """What lowering one function accumulates."""

    debug_line: int  # the current statement's line (debug sites without a node)
    assigned: set  # names the function assigns: Python's rule makes them local
    locals: dict = dataclasses.field(default_factory=dict)  # name -> Value
    aliases: dict = dataclasses.field(default_factory=dict)  # compile-time bindings
    hoisted: list = dataclasses.field(default_factory=list)  # declarations at the top
    prologue: list = dataclasses.field(default_factory=list)  # shared/local arrays
    body: list = dataclasses.field(default_factory=list)  # the lines written
    depth: int = 0  # nesting of the line being written
    loop_depth: int = 0
    return_type: object = None  # fixed by the first return
    temps: int = 0  # temporaries made
    cnames: set = dataclasses.field(default_factory=set)  # C names taken
    recursive: bool = False  # called from its own body (directly or through others)
    #: 1-D array param -> the shape axes used
    pointer_extents: dict = dataclasses.field(default_factory=dict)
    #: debug builds: pointer C expression -> C++ for its element count
    debug_bounds: dict = dataclasses.field(default_factory=dict)
    #: debug builds: C name of a local some path may leave unassigned -> its flag
    set_flags: dict = dataclasses.field(default_factory=dict)
    #: ... and, per open block, the flagged locals every path to here has assigned
    assigned_here: list = dataclasses.field(default_factory=lambda: [set()])
    current_statement: object = None  # the statement being emitted (error positions)
    current_expr: object = None  # the expression being emitted (arch requirements' spans)

    @classmethod
    def of(cls, parsed):
        """The state of a function starting to be lowered (``parsed``: its source)."""
        return cls(debug_line=parsed.source.first_line, assigned=_assigned_names(parsed.tree))
