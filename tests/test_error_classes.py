"""Every error jitkern raises on purpose is a jitkern.JitkernError and the built-in a user catches."""

import ast
import builtins
import inspect
import pathlib

import pytest

import jitkern
from jitkern import errors

PACKAGE = pathlib.Path(jitkern.__file__).parent

# Raises of a bare built-in that are Python protocol, not user errors: __getattr__ must raise a
# plain AttributeError for hasattr(); lookups whose KeyError the caller catches.
PROTOCOL_RAISES = {
    ("compiler/builtins/records.py", "AttributeError"),
    ("kernels/jit.py", "AttributeError"),
    ("sim/translated.py", "AttributeError"),  # the same hasattr protocol (__jit_device__)
    ("compiler/frontend.py", "KeyError"),
    ("compiler/types.py", "KeyError"),
    ("compiler/docs.py", "SystemExit"),  # the docs generator script exits with a status
    ("config.py", "SystemExit"),  # python -m jitkern: a bad variable is a message, status 2
}

BUILTIN_EXCEPTIONS = {
    name for name, obj in vars(builtins).items()
    if isinstance(obj, type) and issubclass(obj, BaseException)
}


def _bare_builtin_raises():
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.Raise) or node.exc is None:
                continue
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(exc, ast.Name) and exc.id in BUILTIN_EXCEPTIONS:
                if (rel, exc.id) not in PROTOCOL_RAISES:
                    yield f"{rel}:{node.lineno}: raise {exc.id}"


def test_no_bare_builtin_exception_is_raised():
    found = list(_bare_builtin_raises())
    assert found == [], "raise a jitkern.errors class instead:\n" + "\n".join(found)


def _error_classes():
    return [obj for _, obj in inspect.getmembers(errors, inspect.isclass)
            if issubclass(obj, BaseException) and obj.__module__ == errors.__name__]


@pytest.mark.parametrize("cls", _error_classes(), ids=lambda c: c.__name__)
def test_every_error_class_is_a_jitkern_error_and_exported(cls):
    assert issubclass(cls, jitkern.JitkernError)
    assert getattr(jitkern, cls.__name__) is cls


@pytest.mark.parametrize("cls", [c for c in _error_classes() if c is not errors.JitkernError
                                 and c is not errors.JitError], ids=lambda c: c.__name__)
def test_every_concrete_error_class_is_also_a_builtin(cls):
    builtin_bases = [b for b in cls.__mro__ if b.__module__ == "builtins"
                     and b not in (Exception, BaseException, object)]
    assert builtin_bases, f"{cls.__name__} is no built-in exception a user could catch"
