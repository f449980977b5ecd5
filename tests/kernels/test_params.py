"""Parameter strings and type placeholders (CPU only)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jitkern import JitkernError
from jitkern.compiler.strings.params import (
    DTYPE_BY_NAME,
    ParamError,
    TypeResolutionError,
    check_kernel_params,
    convert_scalar,
    parse_params,
    resolve_placeholders,
    scalar_dtype,
)


def test_parse_basic():
    ps = parse_params("float32 x, raw T y ,  int64   z", is_output=False)
    assert [(p.name, p.type_name, p.raw) for p in ps] == [
        ("x", "float32", False),
        ("y", "T", True),
        ("z", "int64", False),
    ]
    assert ps[0].dtype == np.float32 and ps[1].dtype is None and ps[1].placeholder == "T"
    assert parse_params("", is_output=True) == ()
    assert parse_params("   ", is_output=True) == ()


@pytest.mark.parametrize(
    "text,words",
    [
        ("float32 1x", ["parameter 1", "not a C identifier"]),
        ("float32 x, float y", ["parameter 2", "unknown type 'float'", "float64"]),
        ("T i", ["'i' is reserved", "element's index"]),
        ("T _x", ["'_x' is reserved", "starting with '_'"]),
        ("T _ind", ["'_ind' is reserved"]),
        ("T x, T x", ["parameter 2", "used twice"]),
        ("int32", ["expected '[raw] TYPE NAME'"]),
        ("foo T x", ["unknown keyword 'foo'"]),
        ("T float", ["not a C identifier"]),
        ("T x,", ["parameter 2", "empty parameter"]),
        ("raw raw T x", ["expected"]),
        ("object x", ["unknown type"]),
        ("TT x", ["unknown type"]),
    ],
)
def test_parse_errors(text, words):
    with pytest.raises(ParamError) as info:
        parse_params(text, is_output=False)
    msg = str(info.value)
    assert repr(text) in msg and "in_params" in msg
    for w in words:
        assert w in msg


def test_error_names_column():
    with pytest.raises(ParamError, match="column 12"):
        parse_params("float32 x, float32 2y", is_output=False)


def test_kernel_level_checks():
    ins = parse_params("float32 x, float32 alpha", is_output=False)
    outs = parse_params("float32 x", is_output=True)
    with pytest.raises(ParamError, match="already an input"):
        check_kernel_params(ins, outs, "float32 x, float32 alpha", "float32 x")
    with pytest.raises(ParamError, match="placeholder"):
        check_kernel_params(parse_params("T T", is_output=False), (), "T T", "")


_names = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True).filter(
    lambda s: (
        s
        not in (
            "i",
            "n",
            "int",
            "for",
            "do",
            "if",
            "auto",
            "bool",
            "char",
            "case",
            "else",
            "enum",
            "goto",
            "long",
            "this",
            "true",
            "void",
            "and",
            "or",
            "not",
            "new",
            "try",
            "asm",
            "xor",
            "float",
            "const",
            "short",
            "union",
            "while",
            "break",
            "catch",
            "class",
            "false",
            "throw",
            "using",
            "bitor",
            "compl",
            "or_eq",
            "and_eq",
            "double",
            "delete",
            "export",
            "extern",
            "friend",
            "inline",
            "not_eq",
            "public",
            "return",
            "signed",
            "sizeof",
            "static",
            "struct",
            "switch",
            "typeid",
            "xor_eq",
            "bitand",
            "default",
            "mutable",
            "nullptr",
            "private",
            "typedef",
            "virtual",
            "alignas",
            "alignof",
            "char8_t",
            "concept",
            "wchar_t",
            "decltype",
        )
    )
)
_types = st.sampled_from(sorted(DTYPE_BY_NAME) + list("TUVXYZab"))
_ws = st.sampled_from(["", " ", "  ", "\t", "\n"])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.booleans(), _types, _names, _ws, _ws),
        min_size=1,
        max_size=6,
        unique_by=lambda t: t[2],
    )
)
def test_roundtrip_generated(items):
    text = ",".join(f"{w1}{'raw ' if raw else ''}{t} {name}{w2}" for raw, t, name, w1, w2 in items)
    ps = parse_params(text, is_output=False)
    assert [(p.raw, p.type_name, p.name) for p in ps] == [(r, t, n) for r, t, n, _a, _b in items]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="abTxyz _,0123456789raw\t", max_size=30))
def test_garbage_only_raises_param_error(text):
    # Any text either parses into well-formed parameters or raises ParamError (a
    # JitkernError and a ValueError) that names the parameter string; nothing else.
    try:
        params = parse_params(text, is_output=True)
    except ParamError as exc:
        assert isinstance(exc, JitkernError) and isinstance(exc, ValueError)
        assert str(exc).startswith(f"out_params {text!r}")
        return
    names = [p.name for p in params]
    assert len(set(names)) == len(names)
    for p in params:
        assert p.name.isidentifier() and p.is_output
        assert p.type_name in text and p.name in text
        assert (p.dtype is None) == (len(p.type_name) == 1)


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("type_name", ["a1", "a0", "S5", "U3", "f4", "float", "object", "V8"])
def test_unknown_type_names_warn_nothing(type_name):
    # numpy.dtype() of some spellings warns (the alias 'a' is deprecated): not the user's
    # problem, since the name is refused anyway
    with pytest.raises(ParamError, match=f"unknown type {type_name!r}"):
        parse_params(f"{type_name} x", is_output=False)


def test_numpy_spelling_of_a_supported_dtype_gets_a_hint():
    with pytest.raises(ParamError, match="did you mean 'float32'"):
        parse_params("f4 x", is_output=False)
    with pytest.raises(ParamError) as info:
        parse_params("S5 x", is_output=False)
    assert "did you mean" not in str(info.value)  # bytes are not a kernel type


# -- placeholder resolution ------------------------------------------------------------

F32, F64, I32, I64 = (np.dtype(t) for t in ("float32", "float64", "int32", "int64"))


def _resolve(ins, outs, in_types, out_types, scalars):
    return resolve_placeholders(
        parse_params(ins, is_output=False),
        parse_params(outs, is_output=True),
        in_types,
        out_types,
        scalars,
        "k",
    )


@pytest.mark.parametrize(
    "ins,outs,in_types,out_types,scalars,expected",
    [
        ("T x, T y", "T z", [F32, F32], [], [False, False], {"T": F32}),
        ("T x, T y", "T z", [F32, I64], [], [False, True], {"T": F32}),  # scalar converts
        ("T x, T y", "T z", [I64, F64], [], [True, True], {"T": I64}),  # scalars only: first
        ("T x, T y", "T z", [F32, F32], [F64], [True, True], {"T": F64}),  # outputs first
        ("X x, Y y", "Z z", [F32, I32], [F64], [False, False], {"X": F32, "Y": I32, "Z": F64}),
        ("float32 x, T y", "T z", [F32, F64], [], [False, True], {"T": F64}),
    ],
)
def test_resolution_table(ins, outs, in_types, out_types, scalars, expected):
    assert _resolve(ins, outs, in_types, out_types, scalars) == expected


@pytest.mark.parametrize(
    "ins,outs,in_types,out_types,scalars,words",
    [
        ("X x, Y y", "Z z", [F32, I32], [], [False, False], ["'Z'", "output"]),
        ("T x, T y", "T z", [F32, F64], [], [False, False], ["'T'", "float32", "float64"]),
        ("float32 x", "float32 z", [F64], [], [False], ["declared float32", "float64", "astype"]),
        ("T x", "float32 z", [F32], [F64], [False], ["output 'z'"]),
    ],
)
def test_resolution_errors(ins, outs, in_types, out_types, scalars, words):
    with pytest.raises(TypeResolutionError) as info:
        _resolve(ins, outs, in_types, out_types, scalars)
    for w in words:
        assert w in str(info.value)


def test_scalar_rules():
    assert scalar_dtype(1) == I64 and scalar_dtype(1.0) == F64 and scalar_dtype(True) == np.bool_
    assert scalar_dtype(np.float32(1)) == F32
    assert convert_scalar(5, np.dtype(np.int8), "x", "k") == np.int8(5)
    assert type(convert_scalar(2.5, F32, "x", "k")) is np.float32
    with pytest.raises(TypeResolutionError, match="does not fit in int8"):
        convert_scalar(300, np.dtype(np.int8), "x", "k")
    with pytest.raises(TypeResolutionError, match="does not fit in uint32"):
        convert_scalar(np.int64(-1), np.dtype(np.uint32), "x", "k")
    with pytest.raises(TypeResolutionError, match="scalar 1j for 'x' cannot be converted to float32"):
        convert_scalar(1j, F32, "x", "k")
