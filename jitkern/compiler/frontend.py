"""Stage 1: read a Python function's source, parse it, and resolve its free names.

Everything the later stages need from the Python world comes from here:
the AST of the function, where each node is in the user's file (for errors and
``#line``), and what each global or closure name is bound to. Captured values
are classified once, here; anything that is not a compile-time constant, an
allowed module, a math function or a jitkern object is refused.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import hashlib
import inspect
import linecache
import weakref
import sys
import types as pytypes

import numpy

from ..errors import JitkernTypeError, JitSyntaxError, JitTypeError

#: Modules a kernel may name; their attributes are resolved at compile time.
ALLOWED_MODULES = ("math", "cmath", "numpy", "builtins")
#: Array modules whose names read as NumPy's in kernels (cupy.float32 is numpy.float32), as
#: in cupyx.jit; a kernel written for CuPy compiles without CuPy (``import jitkern as cupy``).
ARRAY_MODULES = ("cupy", "jitkern")


@dataclasses.dataclass(frozen=True)
class Source:
    """Where a function's text lives: the file and the offsets of its block."""

    filename: str
    first_line: int  # line in the file of the block's first line (1-based)
    indent: int  # columns removed by dedenting
    lines: tuple  # the block's lines as in the file

    def position(self, node) -> tuple[int, int]:
        """(line, column), both 1-based, of an AST node in the user's file."""
        line = self.first_line + getattr(node, "lineno", 1) - 1
        col = getattr(node, "col_offset", 0) + self.indent + 1
        return line, col

    def line_text(self, line: int) -> str:
        index = line - self.first_line
        if 0 <= index < len(self.lines):
            return self.lines[index].rstrip("\n")
        return linecache.getline(self.filename, line).rstrip("\n")

    def statement_text(self, node) -> str:
        """The Python source of a statement's first line, for the emitted comment."""
        line, _col = self.position(node)
        return self.line_text(line).strip()


@dataclasses.dataclass(frozen=True)
class ParsedFunction:
    func: object
    tree: ast.FunctionDef
    source: Source
    qualname: str
    params: tuple

    @property
    def name(self) -> str:
        return self.tree.name


@dataclasses.dataclass(frozen=True)
class Captured:
    """A free name's value, classified. ``kind``: constant, dtype, module, function, jit."""

    kind: str
    value: object
    fingerprint: str


def error(cls, source: Source, node, message: str, hint: str = ""):
    """A ``cls`` error whose message points at ``node``: ``file:LINE:COL``, line, caret."""
    return cls(format_message(source, node, message, hint))


def format_message(source: Source, node, message: str, hint: str = "") -> str:
    line, col = source.position(node)
    text = source.line_text(line)
    end_col = col
    if getattr(node, "end_lineno", None) == getattr(node, "lineno", None):
        end_col = getattr(node, "end_col_offset", col - 1) + source.indent + 1
    width = max(1, end_col - col)
    parts = [
        f"{source.filename}:{line}:{col}: {message}",
        "    " + text,
        "    " + " " * (col - 1) + "^" + "~" * (width - 1),
    ]
    if hint:
        parts.append(hint)
    return "\n".join(parts)


def parse_function(func) -> ParsedFunction:
    """Parse ``func`` (a def or a lone lambda) into a ParsedFunction."""
    if not isinstance(func, pytypes.FunctionType):
        raise JitTypeError(
            f"rawkernel expects a Python function, got {type(func).__name__}; "
            "decorate a `def` with @jitkern.rawkernel()"
        )
    filename = func.__code__.co_filename
    try:
        lines, first_line = inspect.getsourcelines(func)
    except (OSError, TypeError):
        raise JitSyntaxError(
            f"cannot read the source of {func.__qualname__!r} (defined in {filename}): "
            "the JIT compiler reads kernels from their source file, so functions typed into "
            "the interactive interpreter (the REPL, python -c, a script read from stdin) or "
            "made by exec() cannot be compiled; put the kernel in a .py file and import it, "
            "or define it in IPython/Jupyter, which keep each cell's source (linecache)"
        ) from None
    indent = _indent_of(lines)
    text = "".join(_dedent_line(ln, indent) for ln in lines)
    source = Source(filename, first_line, indent, tuple(lines))
    tree = _parse_text(text, source, func)
    node = _function_node(tree, func, source)
    params = _param_names(node, source)
    return ParsedFunction(func, node, source, func.__qualname__, params)


def _indent_of(lines) -> int:
    first = lines[0]
    return len(first) - len(first.lstrip())


def _dedent_line(line: str, indent: int) -> str:
    head = line[:indent]
    return line[indent:] if head.strip() == "" else line.lstrip()


def _parse_text(text: str, source: Source, func) -> ast.Module:
    try:
        return _parse_deep(text)
    except SyntaxError:
        pass
    except (RecursionError, MemoryError):
        raise JitSyntaxError(
            f"{source.filename}:{source.first_line}: {func.__qualname__!r} nests too deeply "
            "for Python's parser (a very long expression or deeply nested brackets); "
            "split the expression over several statements (s = a + b ...; s += c + d ...)"
        ) from None
    if func.__name__ == "<lambda>":
        # A lambda in the middle of a longer expression: parse its line in parentheses.
        try:
            return _parse_deep("(\n" + text + "\n)")
        except (SyntaxError, RecursionError, MemoryError):
            pass
    raise JitSyntaxError(
        f"{source.filename}:{source.first_line}: cannot parse the source of "
        f"{func.__qualname__!r}; define the kernel with a plain `def` statement"
    ) from None


#: Python's recursion limit while parsing a kernel: its AST construction recurses once per
#: level of a left-deep chain (a sum of N terms is N levels), bounded by this limit.
_PARSE_RECURSION_LIMIT = 50_000


def _parse_deep(text: str) -> ast.Module:
    """``ast.parse`` that reads long expressions: Python compiled the function, so its text
    parses; only the recursion limit (lower for ``ast`` than for Python's compiler on some
    versions) stands in the way, and is raised for the parse."""
    limit = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(max(limit, _PARSE_RECURSION_LIMIT))
        return ast.parse(text)
    finally:
        sys.setrecursionlimit(limit)


def _function_node(tree: ast.Module, func, source: Source) -> ast.FunctionDef:
    if func.__name__ != "<lambda>":
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name == func.__name__:
                return node
            if isinstance(node, ast.AsyncFunctionDef):
                raise error(JitSyntaxError, source, node, "async functions cannot be kernels")
        raise JitSyntaxError(f"{source.filename}:{source.first_line}: no def of {func.__name__}")
    lambdas = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda)]
    if len(lambdas) != 1:
        raise JitSyntaxError(
            f"{source.filename}:{source.first_line}: {len(lambdas)} lambdas on one line: the "
            "JIT compiler cannot tell which one to compile; define the kernel with `def`"
        )
    lam = lambdas[0]
    body = [ast.copy_location(ast.Return(lam.body), lam.body)]
    node = ast.FunctionDef(
        name="lambda_",
        args=lam.args,
        body=body,
        decorator_list=[],
        returns=None,
        type_comment=None,
        type_params=[],
    )
    return ast.copy_location(node, lam)


def _param_names(node: ast.FunctionDef, source: Source) -> tuple:
    args = node.args
    for bad in (args.vararg, args.kwarg):
        if bad is not None:
            raise error(
                JitSyntaxError,
                source,
                bad,
                "*args and **kwargs are not supported in kernels",
                "name each parameter",
            )
    if args.kwonlyargs or args.posonlyargs:
        raise error(
            JitSyntaxError,
            source,
            node,
            "keyword-only and positional-only parameters are not supported in kernels",
            "use plain positional parameters",
        )
    if args.defaults:
        raise error(
            JitSyntaxError,
            source,
            args.defaults[0],
            "default parameter values are not supported in kernels",
            "pass every argument at the call",
        )
    return tuple(a.arg for a in args.args)


# ---------------------------------------------------------------------------
# free names


def lookup(func, name: str):
    """The value ``name`` is bound to for ``func`` (closure, globals, builtins)."""
    code = func.__code__
    if func.__closure__ and name in code.co_freevars:
        cell = func.__closure__[code.co_freevars.index(name)]
        try:
            return cell.cell_contents
        except ValueError:
            raise KeyError(name) from None
    if name in func.__globals__:
        return func.__globals__[name]
    if hasattr(builtins, name):
        return getattr(builtins, name)
    raise KeyError(name)


def capture(value) -> Captured:
    """Classify a value a kernel names; raises TypeError (with the reason) to refuse it."""
    for kind, test, fingerprint in _CAPTURE_RULES:
        if test(value):
            return Captured(kind, value, fingerprint(value))
    raise JitkernTypeError(_refusal(value))


def _is_constant(v) -> bool:
    return isinstance(v, (bool, int, float, complex, numpy.bool_, numpy.number))


def is_dtype(v) -> bool:
    if isinstance(v, numpy.dtype):
        return True
    return isinstance(v, type) and issubclass(v, (numpy.number, numpy.bool_))


def _is_module(v) -> bool:
    return isinstance(v, pytypes.ModuleType) and (
        v.__name__ in ALLOWED_MODULES + ARRAY_MODULES or is_jit_names(v)
    )


def is_jit_names(v) -> bool:
    """``jitkern.jit`` (cupyx.jit's names), or a namespace that says it stands for it."""
    return getattr(v, "__jit_names__", False) or v.__name__.startswith("jitkern.jit")


def _is_function(v) -> bool:
    module = getattr(v, "__module__", None) or ""
    if isinstance(v, numpy.ufunc):
        return True
    if any(v is b for b in _PY_BUILTINS):
        return True
    return callable(v) and (module in ("math", "cmath") or module.startswith("numpy"))


def _is_jit(v) -> bool:
    return hasattr(type(v), "__jit_fingerprint__")


_PY_BUILTINS = tuple(
    getattr(builtins, n)
    for n in (
        "range",
        "len",
        "abs",
        "min",
        "max",
        "int",
        "float",
        "bool",
        "complex",
        "print",
        "divmod",
        "round",
        "pow",
    )
)


def _function_fingerprint(v) -> str:
    return f"fn:{getattr(v, '__module__', '')}.{getattr(v, '__name__', repr(v))}"


def _is_factory(v) -> bool:
    return isinstance(v, pytypes.FunctionType) and not _is_jit(v)


def _factory_fingerprint(v) -> str:
    """The factory's source and every module global its code (and nested code) names.

    The device functions a factory returns are not globals of the kernel, so what they
    read is covered here: a changed global changes the fingerprint.
    """
    parts = [f"factory:{v.__module__}.{v.__qualname__}:{source_digest(v)}"]
    for name in sorted(_global_names(v.__code__)):
        if name not in v.__globals__:
            continue
        value = v.__globals__[name]
        if isinstance(value, pytypes.FunctionType) and not _is_jit(value):
            parts.append(f"{name}=fn:{value.__qualname__}:{source_digest(value)}")
            continue
        try:
            parts.append(f"{name}={capture(value).fingerprint}")
        except TypeError:
            parts.append(f"{name}=?{type(value).__qualname__}")
    return "|".join(parts)


def _global_names(code) -> set:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, pytypes.CodeType):
            names |= _global_names(const)
    return names


_CAPTURE_RULES = (
    ("none", lambda v: v is None, lambda v: "none"),
    ("constant", _is_constant, lambda v: f"const:{type(v).__name__}:{v!r}"),
    ("dtype", is_dtype, lambda v: f"dtype:{numpy.dtype(v).str}"),
    ("module", _is_module, lambda v: f"module:{v.__name__}"),
    ("jit", _is_jit, lambda v: v.__jit_fingerprint__()),
    ("function", _is_function, _function_fingerprint),
    # A plain Python function is called at compile time, with constant arguments, when
    # it returns a device function (``make(10)(x, y)``); anything else it returns is refused.
    ("factory", _is_factory, _factory_fingerprint),
)


def _refusal(value) -> str:
    what = type(value).__name__
    if isinstance(value, pytypes.ModuleType):
        return (
            f"module {value.__name__!r} cannot be used in a kernel (only math, cmath, numpy "
            "and jitkern.jit); bind the constants you need to global names"
        )
    if isinstance(value, numpy.ndarray):
        return (
            "a NumPy array cannot be captured by a kernel; pass it as a kernel argument "
            "(jitkern.asarray(x))"
        )
    if isinstance(value, pytypes.FunctionType):
        return (
            f"Python function {value.__qualname__!r} cannot be called from a kernel; "
            "decorate it with @jitkern.rawkernel(device=True)"
        )
    if (
        isinstance(value, pytypes.BuiltinFunctionType)
        and getattr(builtins, value.__name__, None) is value
    ):
        hint = _BUILTIN_HINTS.get(value.__name__, "see the builtin table in docs/jit.md")
        return f"Python's builtin {value.__name__}() is not available in kernels; {hint}"
    return (
        f"a value of type {what} cannot be captured by a kernel: only numbers, NumPy "
        "scalars, dtypes, math/numpy functions and device functions are"
    )


#: What to write instead of a Python builtin kernels do not have.
_BUILTIN_HINTS = {
    "sum": "accumulate in a loop: s = 0.0, then for i in range(n): s += x[i]",
    "any": "combine conditions in a loop (found = found or x[i] > 0)",
    "all": "combine conditions in a loop (ok = ok and x[i] > 0)",
    "enumerate": "loop over range(n) and index the array",
    "zip": "loop over range(n) and index each array",
    "isinstance": "compare dtypes instead (x.dtype == numpy.float32 is decided at compile time)",
    "sorted": "sort on the host, or with jit.thrust.sort in a kernel",
}


def resolve(func, name: str) -> Captured:
    """Look ``name`` up for ``func`` and classify it; KeyError / TypeError otherwise."""
    return capture(lookup(func, name))


# ---------------------------------------------------------------------------
# quick identity of a function's source, for the on-disk specialisation index


def source_digest(func) -> str | None:
    """SHA-256 of the file lines ``func`` spans, read through linecache (no parsing).

    None when the lines cannot be read (the slow path then reports why).
    """
    code = func.__code__
    lines = linecache.getlines(code.co_filename)
    kept = _digests.get(code)  # a function decorated again (inside a function): its code's
    if kept is not None and kept[0] is lines and kept[1] == func.__qualname__:
        return kept[2]  # ... digest, while linecache holds the same lines
    first = code.co_firstlineno
    last = _last_line(code)
    if not lines or last > len(lines):
        return None
    h = hashlib.sha256()
    h.update(f"{code.co_filename}\0{func.__qualname__}\0{first}\0".encode())
    for ln in lines[first - 1 : last]:
        h.update(ln.encode())
    digest = h.hexdigest()
    _digests[code] = (lines, func.__qualname__, digest)
    return digest


_digests: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # code -> (lines, name, digest)


def _last_line(code) -> int:
    last = code.co_firstlineno
    for _start, _end, line in code.co_lines():
        if line is not None and line > last:
            last = line
    for const in code.co_consts:
        if isinstance(const, pytypes.CodeType):
            last = max(last, _last_line(const))
    return last
