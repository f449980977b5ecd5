"""The simulator's C errors name the kernel, the line and column of the user's source, show
that line with a caret under the construct, and are public jitkern classes (issue 27).

Before, a parse error read ``<source>: Invalid expression`` (no line, no column), refusals
named a line but no column and showed no source, and their class was printed as
``jitkern.sim.csubset.Refused``; a malformed parameter string raised
``jitkern.compiler.strings.params.ParamError``. Each case goes through the public path a
user takes (``kernel.simulate``), and the caret's column is checked against where the
construct stands in the user's own line."""

import numpy as np
import pytest

import jitkern


def _refusal(source, name="k", args=None):
    k = jitkern.RawKernel(source, name)
    out = np.full(4, -7.0, np.float32)
    with pytest.raises(jitkern.SimulatorError) as info:
        k.simulate((1,), (1,), args or (out,))
    assert (out == -7.0).all(), "a refused kernel ran"
    return info.value


def _place(message):
    """(line, column, the shown line, the caret's column) of a placed message."""
    head, shown, caret = message.split("\n")[-3:] if message.count("\n") >= 2 else (message, "", "")
    import re
    m = re.search(r" line (\d+), column (\d+):", message)
    assert m is not None, message
    bar = shown.index("|")
    return int(m.group(1)), int(m.group(2)), shown[bar + 2:], caret.index("^") - bar - 2


CASES = [  # (source, the construct, its line)
    ('extern "C" __global__ void k(float* x) {\n  x[0] = undeclared_thing;\n}',
     "undeclared_thing", 2),
    ('extern "C" __global__ void k(float* x) {\n  float y = 2.0f;\n  goto done;\n'
     '  done: x[0] = y;\n}', "goto", 3),
    ('extern "C" __global__ void k(float* x) {\n\n  x[0] = sinf(1.0f, 2.0f);\n}', "sinf", 3),
    ('extern "C" __global__ void k(float* x) {\n  x[0] = nullptr == 0;\n}', "nullptr", 2),
]


@pytest.mark.parametrize("source, construct, line", CASES)
def test_a_refusal_shows_the_line_with_a_caret_under_the_construct(source, construct, line):
    error = _refusal(source)
    message = str(error)
    assert message.startswith("RawKernel 'k' line ")
    got_line, column, shown, caret = _place(message)
    user_line = source.split("\n")[line - 1]
    assert got_line == line and shown == user_line
    assert caret == user_line.index(construct) == column - 1
    assert "jitkern.sim" not in message and "Refused" not in message


def test_a_syntax_error_names_line_and_column():
    source = 'extern "C" __global__ void k(float* x) {\n  float y = 1.0f;\n  x[0] = y + ;\n}'
    message = str(_refusal(source))
    line, column, shown, caret = _place(message)
    assert line == 3 and shown == "  x[0] = y + ;"
    assert caret == column - 1 == shown.index(";")  # where the parser stopped
    assert "<source>" not in message


def test_the_class_is_public_and_what_users_catch():
    error = _refusal('extern "C" __global__ void k(float* x) {\n  goto end;\n  end: x[0] = 1;\n}')
    assert type(error) is jitkern.SimulatorError and type(error).__module__ == "jitkern.errors"
    assert isinstance(error, jitkern.CompileError) and isinstance(error, NotImplementedError)
    assert isinstance(error, jitkern.JitkernError)


def test_an_elementwise_operation_error_is_placed_in_the_operation():
    k = jitkern.ElementwiseKernel("float32 x", "float32 y",
                                  "float t = x;\ny = t + undeclared_w;", "placed_ew")
    y = np.full(3, -7, np.float32)
    with pytest.raises(jitkern.SimulatorError) as info:
        k.simulate(np.ones(3, np.float32), y)
    line, column, shown, caret = _place(str(info.value))
    assert str(info.value).startswith("placed_ew operation line 2, column ")
    assert line == 2 and shown == "y = t + undeclared_w;" and caret == shown.index("undeclared_w")
    assert (y == -7).all()


def test_a_bad_parameter_string_is_a_public_value_error():
    with pytest.raises(jitkern.ParamError) as info:
        jitkern.ElementwiseKernel("float32 x y z", "float32 out", "out = x", "bad_params")
    assert type(info.value).__module__ == "jitkern.errors"
    assert isinstance(info.value, ValueError)
    assert "'float32 x y z'" in str(info.value) and "column" in str(info.value)
