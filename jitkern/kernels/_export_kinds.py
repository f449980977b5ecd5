"""What ElementwiseKernel and ReductionKernel export (toolchain.export does the writing).

Their generated source depends on the call's dtypes and layout; an export fixes one:

* ElementwiseKernel: the dtypes of the example arguments (or the dtypes given for them)
  and the flat ``linear`` loop over C-contiguous arrays of one size, with 32-bit
  indices, which ``jitkern.load`` calls like the original (``k(*inputs)``);
* ReductionKernel: the kernels ``self(*args, axis=...)`` would run for the example
  arguments (NumPy arrays standing for device arrays), launched from a load with
  their parameter list;
* ``@jitkern.rawkernel`` kernels: one argument signature, with the shape and stride
  parameters the JIT's launcher appends;
* ``jitkern.fuse`` functions that run one ElementwiseKernel on whole arguments: that
  kernel, with the positions of the function's arguments it reads, so a load calls it
  like the fused function.
"""

from __future__ import annotations

import numpy

from .. import records
from ..compiler import types as T
from ..compiler.builtins.thrust import backend_for
from ..compiler.strings.c_params import kernel_params
from ..compiler.strings import mapping
from ..compiler.strings.params import record_ctype
from ..toolchain import export
from ..toolchain.nvrtc import normalize_options
from ..errors import JitkernNotImplementedError, JitkernTypeError

# Elements of the example arrays an elementwise export is generated for: small enough that
# indices are 32-bit; a loaded kernel refuses sizes past _INT32_SIZE.
_EXAMPLE_SIZE = 1024
_INT32_SIZE = (2**31 - 1 - (1 << 16)) // 2


def examples(args) -> tuple:
    """Example arguments: a dtype (or dtype name) stands for a 1-D array of that dtype."""
    out = []
    for a in args:
        if isinstance(a, (numpy.dtype, type, str)) and not isinstance(a, numpy.generic):
            out.append(numpy.zeros(_EXAMPLE_SIZE, numpy.dtype(a)))
        else:
            out.append(a)
    return tuple(out)


def elementwise_spec(kernel, args, fused=None) -> export.ExportSpec:
    if any(p.raw for p in kernel.params):
        raw = [p.name for p in kernel.params if p.raw]
        raise JitkernNotImplementedError(
            f"{kernel.name}.export: raw parameters ({', '.join(raw)}) are not exported yet; "
            "export a RawKernel for kernels that index arrays themselves"
        )
    args = tuple(
        numpy.zeros(_EXAMPLE_SIZE, a.dtype) if isinstance(a, numpy.ndarray) else a
        for a in examples(args)
    )
    arrays = kernel._describe_args(args, host_ok=True)
    a = kernel._analyze(args, arrays, None)
    a.variant, a.vector, a.index_type = "linear", 1, "int"
    a.source = kernel._source(a)
    params = []
    for k, p in enumerate(kernel.params):
        params.append(
            {
                "name": p.name,
                "dtype": str(a.dtypes[k]),
                "is_output": p.is_output,
                "scalar": k in a.scalar_pos,
            }
        )
    entry = export.EntrySpec(
        name=kernel.name,
        symbol=kernel.name,
        kind="elementwise",
        signature=[
            f"{'scalar' if q['scalar'] else 'array'}({q['dtype']}) {q['name']}" for q in params
        ],
        call={
            "params": params,
            "nin": kernel.nin,
            "index_dtype": "int32",
            # CuPy's block where the operation could tell threads apart (strings/mapping.py)
            "block": mapping.CUPY_BLOCK if mapping.per_thread_reason(kernel) else 256,
            "max_size": _INT32_SIZE,
            "no_return": kernel.no_return,
            "return_tuple": kernel.return_tuple,
            **(fused or {}),
        },
    )
    return export.ExportSpec(
        source=a.source, options=kernel.options, entries=(entry,), program_name=f"{kernel.name}.cu",
        records=_records(a.dtypes), param_reader=kernel_params,
    )


def reduction_spec(kernel, args, axis, keepdims) -> export.ExportSpec:
    args = examples(args)
    arrays = kernel._describe_args(args, host_ok=True)
    a = kernel._analyze(args, arrays, axis, keepdims)
    signature = {
        "dtypes": [str(dt) for dt in a.dtypes],
        "in_shape": list(a.in_shape),
        "axes": list(a.axes),
        "keepdims": a.keepdims,
    }
    names = [kernel.name]
    if f"void {kernel.name}_final(" in a.source:
        names.append(kernel.name + "_final")
    entries = tuple(
        export.EntrySpec(name=n, symbol=n, kind="reduction", signature=[signature]) for n in names
    )
    return export.ExportSpec(
        source=a.source, options=kernel.options, entries=entries, program_name=f"{kernel.name}.cu",
        records=_records(a.dtypes), param_reader=kernel_params,
    )


def _records(dtypes) -> tuple:
    """``(C struct name, dtype)`` of the record dtypes among a string kernel's (the layouts
    the export's manifest and header spell out for by-value parameters)."""
    return tuple((record_ctype(dt), dt) for dt in dict.fromkeys(dtypes)
                 if dt is not None and dt.fields is not None)


def fused_spec(fused, args) -> export.ExportSpec:
    """The one ElementwiseKernel a fused function runs for ``args`` (NumPy arrays stand
    for device arrays), with where its arguments come from in the function's."""
    plan = fused._plan(args, {}, fused._key(args, {}))
    kernel = plan.kernels[0] if len(plan.kernels) == 1 else None
    writes = getattr(plan, "writes", None)  # a plan writing arguments (its fast call too)
    if writes:
        raise JitkernNotImplementedError(
            f"{fused.kernel_name or 'the fused function'}.export: a fused function that "
            "writes its arguments (x += y, x[...] = v, out=) is not exported yet; export one "
            "that returns the new values")
    if plan.fast is None or kernel is None or kernel.__class__.__name__ != "ElementwiseKernel":
        raise JitkernNotImplementedError(
            f"{fused.kernel_name or 'the fused function'}.export: only fused functions that "
            "run one elementwise kernel over whole arguments are exported yet (this one runs "
            f"{len(plan.kernels)} kernel(s): {', '.join(type(k).__name__ for k in plan.kernels)})"
        )
    positions = [s.position for s in plan.stages[0].sources]
    kernel_args = tuple(
        numpy.zeros(_EXAMPLE_SIZE, a.dtype) if isinstance(a, numpy.ndarray) else a
        for a in (args[p] for p in positions)
    )
    info = {
        "positions": positions,
        "nargs": len(args),
        "result": "tuple" if plan.tuple_result else "first",
    }
    return elementwise_spec(kernel, kernel_args, fused=info)


def jit_spec(kernel, types: tuple, generated) -> export.ExportSpec:
    """A @rawkernel for one signature (its jit_index.Generated): the user's parameters,
    then the shapes and strides the launcher appends (generated.plans), each tied to its
    argument."""
    names = kernel.parsed().params
    args = [_export_arg(name, t) for name, t in zip(names, types)]
    extras = tuple(export.ExtraParam(kind, i, axis)
                   for i, plan in enumerate(generated.plans) for kind, axis in plan)
    entry = export.EntrySpec(
        name=kernel.__name__, symbol=generated.symbol, kind="jit",
        signature=[t.describe() for t in types], call={"args": args, "mode": kernel.mode},
        extras=extras, cooperative=generated.cooperative)
    return export.ExportSpec(
        source=generated.source, options=normalize_options(kernel.options),
        entries=(entry,), program_name=generated.filename,
        backend=backend_for(generated.source),
        records=tuple((t.cname, t.dtype) for t in types if isinstance(t, T.Struct)),
        param_reader=kernel_params)


def _export_arg(name: str, t) -> dict:
    """The manifest's record of one user argument (what a loaded kernel checks)."""
    if isinstance(t, T.Array):
        return {"name": name, "type": "array", "dtype": str(t.dtype.dtype), "ndim": t.ndim,
                "contiguous": t.is_pointer_like, "index32": t.index32, "describe": t.describe()}
    if isinstance(t, T.Scalar):
        return {"name": name, "type": "scalar", "dtype": str(t.dtype), "describe": t.describe()}
    if isinstance(t, T.Struct):  # by value: its record's layout, padding included
        return {"name": name, "type": "struct", "record": records.record_to_json(t.dtype),
                "itemsize": t.itemsize, "class": t.origin, "describe": t.describe()}
    raise JitkernTypeError(f"export: argument {name!r} of type {t.describe()} cannot be exported; "
                           "exported kernels take arrays, scalars and structs")
