"""Stage 3's lowering, by construct: the expression emitter's mixins (attributes,
subscripts, operators, calls) and the function emitter's (assignments, control flow,
functions), with what they share (spelling, common, names, texts).
:mod:`..expressions` and :mod:`..statements` compose them into the emitters."""
