"""C++ function templates in the simulator's C subset (see :mod:`.csubset`).

pycparser reads C, not C++, so a function template is taken out of the source before
parsing (:func:`extract`, its lines left blank so every other line keeps its number) and
kept as text. A call ``f<float>(x)`` is rewritten to a call of an alias that records the
explicit arguments; a call ``f(x)`` deduces them from the arguments' C types, as C++ does
for parameters spelled ``T``, ``T*`` or ``complex<T>``. Each distinct instantiation is
written once: the template's text with its parameters replaced by the types' spellings,
parsed (at the template's own lines, so errors name the user's line) and translated as
an ordinary device function (:meth:`Templates.function`).

Class templates, template template parameters, partial specialisation and SFINAE stay
outside the subset and are refused by name.
"""

from __future__ import annotations

import dataclasses
import re

from .csubset import _BASE, BOOL, C64, C128, F16, F32, F64, I8, I16, I32, I64, TYPEDEFS, U8, U16
from .csubset import U32, U64, real_of, refuse
from . import csubset

#: One spelling per dtype that the subset reads back as that dtype (single words, so that
#: C++ functional casts such as ``T(1)`` stay casts).
SPELLING = {
    BOOL: "bool", I8: "int8_t", U8: "uint8_t", I16: "int16_t", U16: "uint16_t", I32: "int",
    U32: "uint32_t", I64: "int64_t", U64: "uint64_t", F16: "half", F32: "float",
    F64: "double", C64: "complex<float>", C128: "complex<double>",
}

_HEADER = re.compile(r"\btemplate\s*<")
_NOT_NAMES = {"__launch_bounds__", "__align__", "alignas", "decltype", "sizeof"}
_ALIAS = "__jk_tpl_"


@dataclasses.dataclass
class Template:
    """A function template: its parameters ``[(name, kind, default text)]`` (kind
    ``"type"`` or a non-type parameter's C type), its definition without the header, the
    line the definition starts on, and its function parameters' text."""

    name: str
    params: list
    text: str
    line: int
    fn_params: str
    kernel: bool


class Templates:
    """The function templates of one translation unit and their instantiations."""

    def __init__(self, where: str):
        self.where = where
        self.by_name: dict[str, Template] = {}
        self.explicit: dict[str, tuple] = {}  # alias -> (template name, argument texts)
        self.macros: dict = {}
        self.made: dict = {}  # (name, bound parameters) -> the Function
        self.sources: list[str] = []
        self.lambdas: dict = {}  # alias -> (body text, its line): [&] { ... }() in place

    def kernel_line(self, name: str) -> int | None:
        """The line of template ``__global__`` function ``name``, None if there is none."""
        t = self.by_name.get(name)
        return t.line if t is not None and t.kernel else None

    # -- a call --------------------------------------------------------------
    def called(self, name: str):
        """(template, explicit argument texts) of a called name, or None."""
        if name in self.explicit:
            base, texts = self.explicit[name]
            return self.by_name[base], texts
        if name in self.by_name:
            return self.by_name[name], []
        return None

    def function(self, tr, name: str, args: list, node):
        """The instantiation a call of ``name`` with arguments ``args`` (translated values)
        uses, translated on first use; None if ``name`` is not a template."""
        found = self.called(name)
        if found is None:
            return None
        tpl, texts = found
        at = tr.at(node)
        if tpl.kernel:
            raise refuse(f"a call of the __global__ template {tpl.name}", at)
        bound = self.bind(tpl, texts, args, tr.types, at)
        key = (tpl.name, tuple(bound.items()))
        if key not in self.made:
            self.made[key] = self.instantiate(tr, tpl, bound, len(self.made))
        return self.made[key]

    def bind(self, tpl: Template, texts: list, args: list, types: dict, at: str) -> dict:
        if len(texts) > len(tpl.params):
            raise refuse(f"{tpl.name}<...> with {len(texts)} template arguments (it takes "
                         f"{len(tpl.params)})", at)
        bound = {}
        for (pname, kind, _), text in zip(tpl.params, texts):
            bound[pname] = resolve(text, types, at) if kind == "type" else _value(text, at)
        self.deduce(tpl, args, bound, at)
        for pname, kind, default in tpl.params:
            if pname in bound:
                continue
            if default is None:
                raise refuse(f"a call of {tpl.name}() that does not decide its template "
                             f"parameter {pname} (name it: {tpl.name}<...>(...))", at)
            bound[pname] = resolve(default, types, at) if kind == "type" else _value(default, at)
        return bound

    def deduce(self, tpl: Template, args: list, bound: dict, at: str) -> None:
        """Bind type parameters from parameters spelled ``T``, ``T*`` or ``complex<T>``."""
        kinds = {p: k for p, k, _ in tpl.params}
        params = [p for p in split_top(tpl.fn_params) if p.strip() not in ("", "void")]
        for text, arg in zip(params, args):
            base, pointer = _param_type(text)
            m = re.fullmatch(r"(?:\w+\s*::\s*)?complex\s*<\s*(\w+)\s*>", base)
            name, of_complex = (m.group(1), True) if m else (base, False)
            if kinds.get(name) != "type" or arg.type is None:
                continue
            t = arg.type
            if pointer:
                if not arg.is_pointer:
                    continue
                t = t.elem
            elif arg.is_pointer:
                continue
            if of_complex:
                if t.kind != "c":
                    continue
                t = real_of(t)
            if name in bound and bound[name] != t:
                raise refuse(f"{tpl.name}(): template parameter {name} deduced as both "
                             f"{SPELLING.get(bound[name], bound[name])} and "
                             f"{SPELLING.get(t, t)}", at)
            bound[name] = t

    # -- an immediately invoked lambda -------------------------------------------
    def inline_lambda(self, tr, name: str, node):
        """The value of ``[&] { ...; return x; }()``: its statements run where it is called
        (before the statement using it), in a scope of their own, the value kept in a temp."""
        body, line = self.lambdas[name]
        ast, _, _ = parse("\n" * (line - 1) + "void __jk_lambda(void) " + body, self.where,
                          {k: v for k, v in tr.types.items() if k not in TYPEDEFS}, templates=self)
        items = next(e for e in ast.ext if type(e).__name__ == "FuncDef").body.block_items or []
        last = items[-1] if items else None
        if type(last).__name__ != "Return" or last.expr is None or _returns(items[:-1]):
            raise refuse("a lambda that does not end in its only return", tr.at(node))
        result = {}

        def run():
            tr.scopes.append({})
            for item in items[:-1]:
                tr.statement(item)
            value = tr.expr(last.expr)
            if value.is_pointer or value.type is None:
                raise refuse("a lambda returning a pointer or nothing", tr.at(node))
            result["v"] = value.type, tr.temp()
            tr.flush()
            tr.emit(f"{result['v'][1]} = {value.code}")
            tr.scopes.pop()

        pending, tr.pre = tr.pre, []
        lines = tr.captured(run)
        tr.pre = pending + lines
        t, temp = result["v"]
        return csubset.Val(temp, t)

    # -- an instantiation ------------------------------------------------------
    def instantiate(self, tr, tpl: Template, bound: dict, n: int):
        mangled = f"{tpl.name}__jk{n}"
        text = _renamed(tpl, mangled, self.where)
        for pname, value in bound.items():
            spelled = SPELLING[value] if not isinstance(value, str) else value
            text = re.sub(rf"\b{re.escape(pname)}\b", spelled, text)
        text = "\n" * (tpl.line - 1) + text
        placeholders = {k: v for k, v in tr.types.items() if k not in TYPEDEFS}
        ast, _, _ = parse(text, self.where, placeholders, templates=self)
        funcdef = next(e for e in ast.ext if type(e).__name__ == "FuncDef")
        sub = type(tr)(tr.where, placeholders)
        sub.locate, sub.functions, sub.templates = tr.locate, tr.functions, self
        fn = sub.signature(funcdef)
        fn.py = "_c_fn_" + mangled
        tr.functions[mangled] = fn
        self.sources.append(sub.function(funcdef, fn))
        return fn


def _returns(items) -> bool:
    """Whether a ``return`` is among ``items`` or nested in them."""
    for item in items:
        if type(item).__name__ == "Return":
            return True
        if _returns([c for _, c in item.children()]):
            return True
    return False


def resolve(text: str, types: dict, at: str):
    """The dtype a template argument's text names (``float``, ``T``, ``complex<double>``)."""
    text = " ".join(text.replace("const", " ").split())
    m = re.fullmatch(r"(?:\w+\s*::\s*)?complex\s*<\s*(.+?)\s*>", text)
    if m is not None:
        inner = resolve(m.group(1), types, at)
        if inner in (F32, C64):
            return C64
        if inner in (F64, C128):
            return C128
        raise refuse(f"the template argument {text!r}", at)
    if text in types:
        return types[text]
    t = _BASE.get(tuple(sorted(text.split())))
    if t is None:
        raise refuse(f"the template argument {text!r} (only arithmetic types and "
                     "complex<float>/complex<double>)", at)
    return t


def _value(text: str, at: str) -> str:
    text = text.strip()
    if not re.fullmatch(r"-?(0[xX][0-9a-fA-F]+|\d+)[uUlL]*|true|false", text):
        raise refuse(f"the non-type template argument {text!r} (only integer literals)", at)
    return f"({text})"


def _param_type(text: str) -> tuple[str, bool]:
    """(the base type's text, whether it is a pointer) of a parameter declaration."""
    words = re.sub(r"\b(const|volatile|__restrict__|__restrict|restrict)\b|&", " ", text)
    pointer = "*" in words
    words = re.sub(r"\s*<\s*", "<", re.sub(r"\s+>", ">", words.replace("*", " "))).split()
    return " ".join(words[:-1] if len(words) > 1 else words), pointer


def split_top(text: str) -> list:
    """``text`` split at the commas outside (), <> and []."""
    parts, depth, start = [], 0, 0
    for k, ch in enumerate(text):
        if ch in "(<[":
            depth += 1
        elif ch in ")>]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:k])
            start = k + 1
    parts.append(text[start:])
    return parts


def _renamed(tpl: Template, mangled: str, where: str) -> str:
    """The definition with its name replaced and ``const T&`` parameters made values."""
    open_ = tpl.text.index("(", re.search(rf"\b{re.escape(tpl.name)}\s*\(", tpl.text).start())
    close = _matching(tpl.text, open_, "(", ")")
    head = re.sub(rf"\b{re.escape(tpl.name)}(\s*\()", rf"{mangled}\1", tpl.text[:open_ + 1],
                  count=1)
    params = tpl.text[open_ + 1:close]
    for p in split_top(params):
        if "&" in p and not re.search(r"\bconst\b", p):
            raise refuse(f"the reference parameter {' '.join(p.split())!r} of {tpl.name} "
                         "(only const references)", f"{where} line {tpl.line}")
    return head + params.replace("&", " ") + tpl.text[close:]


def _matching(text: str, start: int, open_: str, close: str) -> int:
    depth = 0
    for k in range(start, len(text)):
        if text[k] == open_:
            depth += 1
        elif text[k] == close:
            depth -= 1
            if depth == 0:
                return k
    return -1


def parse(source: str, where: str, types: dict, templates: Templates | None = None):
    """(pycparser's AST, the object-like macros, the function templates) of ``source``;
    ``templates``: the registry to add to (an instantiation's text: its unit's)."""
    templates = templates if templates is not None else Templates(where)
    ast, macros = csubset.parse(source, where, types,
                                extract=lambda text: extract(text, where, templates),
                                macros=templates.macros)
    templates.macros = macros
    return ast, macros, templates


def extract(text: str, where: str, templates: Templates) -> str:
    """``text`` without its function templates (kept in ``templates``). Class templates are
    left in place (the subset refuses them); calls with explicit template arguments become
    calls of aliases; the ``jitkern::`` and global ``::`` scopes are dropped. ``text`` has
    its comments blanked already."""
    text = re.sub(r"\bjitkern\s*::\s*", "", text)
    text = re.sub(r"([\w>]?)(\s*)::\s*(?=\w)",
                  lambda m: m.group(0) if m.group(1) else m.group(2), text)
    pos = 0
    while True:
        m = _HEADER.search(text, pos)
        if m is None:
            break
        found = _one_template(text, m, where)
        if found is None:
            pos = m.end()
            continue
        tpl, end = found
        if tpl is not None:
            if tpl.name in templates.by_name:
                raise refuse(f"a second template named {tpl.name} (overloads)",
                             f"{where} line {tpl.line}")
            templates.by_name[tpl.name] = tpl
        text = text[:m.start()] + re.sub(r"[^\n]", " ", text[m.start():end]) + text[end:]
        pos = end
    text = _VALUE_INIT.sub(r"\1 = 0", text)
    text = _BRACE_INIT.sub(_brace_init, text)
    return _lambdas(_aliased(text, templates), templates)


#: ``T x{};`` (value-initialised: zero for the subset's numbers and complex numbers).
_VALUE_INIT = re.compile(r"(\b[A-Za-z_]\w*(?:\s*<[^<>;{}]*>)?\s+[A-Za-z_]\w*)\s*\{\s*\}")
#: ``T x { value };`` (C++11's braces around one value, as CuPy's signal kernels write
#: their loop_prep constants): ``T x = (value);``. Braces holding a list (``{a, b}``) stay,
#: for the subset to refuse.
_BRACE_INIT = re.compile(
    r"(\b(?!(?:enum|struct|union|class|namespace|return|else|do)\b)[A-Za-z_]\w*"
    r"(?:\s*<[^<>;{}]*>)?\s+[A-Za-z_]\w*)\s*\{([^{};]*)\}(?=\s*[;,)])")


def _brace_init(m) -> str:
    value = m.group(2)
    if not value.strip() or len(split_top(value)) != 1:
        return m.group(0)
    return f"{m.group(1)} = ({value})"


_LAMBDA = re.compile(r"\[\s*[&=]?\s*\]\s*(?:\(\s*\)\s*)?\{")


def _lambdas(text: str, templates: Templates) -> str:
    """Immediately invoked lambdas without parameters, ``[&] { ... }()``, become calls of
    aliases (their lines kept); other lambdas stay, to be refused."""
    pos = 0
    while True:
        m = _LAMBDA.search(text, pos)
        if m is None:
            return text
        close = _matching(text, m.end() - 1, "{", "}")
        call = re.match(r"\s*\(\s*\)", text[close + 1:]) if close > 0 else None
        if call is None:
            pos = m.end()
            continue
        end = close + 1 + call.end()
        alias = f"__jk_lambda_{len(templates.lambdas)}"
        line = text.count("\n", 0, m.start()) + 1
        templates.lambdas[alias] = (text[m.end() - 1:close + 1], line)
        replaced = alias + "()" + "\n" * text.count("\n", m.start(), end)
        text = text[:m.start()] + replaced + text[end:]
        pos = m.start() + len(alias)


def _one_template(text: str, m, where: str):
    """((the Template or None for a declaration, where it ends) of the template starting at
    ``m``, or None for a class template (left to be refused)."""
    close = _matching(text, m.end() - 1, "<", ">")
    line = text.count("\n", 0, m.start()) + 1
    if close < 0:
        raise refuse("this template header", f"{where} line {line}")
    k = close + 1
    depth = 0
    while k < len(text) and not (depth == 0 and text[k] in "{;"):
        depth += (text[k] == "(") - (text[k] == ")")
        k += 1
    header = text[close + 1:k]
    if re.search(r"\b(struct|class|union)\b", header) or k >= len(text):
        return None
    if text[k] == ";":  # a declaration: the definition comes elsewhere
        return None, k + 1
    end = _matching(text, k, "{", "}") + 1
    if end <= 0:
        raise refuse("this template (its braces do not close)", f"{where} line {line}")
    names = [n for n in re.findall(r"(\w+)\s*\(", header) if n not in _NOT_NAMES]
    if not names:
        raise refuse("this template", f"{where} line {line}")
    open_ = header.index("(", header.index(names[0]))
    params_close = _matching(header, open_, "(", ")")
    def_line = line + text.count("\n", m.start(), close + 1)
    tpl = Template(names[0], _template_params(text[m.end():close], where, line),
                   text[close + 1:end], def_line, header[open_ + 1:params_close],
                   "__global__" in header)
    return tpl, end


def _template_params(text: str, where: str, line: int) -> list:
    out = []
    for p in split_top(text):
        p, _, default = p.partition("=")
        default = default.strip() or None
        m = re.fullmatch(r"\s*(?:typename|class)\s+(\w+)\s*", p)
        if m is not None:
            out.append((m.group(1), "type", default))
            continue
        m = re.fullmatch(r"\s*((?:unsigned\s+|signed\s+|const\s+)*\w+)\s+(\w+)\s*", p)
        if m is None or m.group(1).split()[-1] in ("typename", "class", "template"):
            raise refuse(f"the template parameter {' '.join(p.split())!r} (only named type "
                         "and integer parameters)", f"{where} line {line}")
        out.append((m.group(2), m.group(1), default))
    return out


def _aliased(text: str, templates: Templates) -> str:
    """Explicit template arguments at calls: ``f<float>(`` -> ``__jk_tpl_N(``."""
    if not templates.by_name:
        return text
    names = "|".join(map(re.escape, templates.by_name))
    pattern = re.compile(rf"\b({names})\s*<")
    pos = 0
    while True:
        m = pattern.search(text, pos)
        if m is None:
            return text
        close = _matching(text, m.end() - 1, "<", ">")
        after = re.match(r"\s*\(", text[close + 1:]) if close > 0 else None
        if after is None:
            pos = m.end()
            continue
        alias = f"{_ALIAS}{len(templates.explicit)}"
        templates.explicit[alias] = (m.group(1), split_top(text[m.end():close]))
        text = text[:m.start()] + alias + text[close + 1:]
        pos = m.start() + len(alias)
