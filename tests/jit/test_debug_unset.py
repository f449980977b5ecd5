"""Debug mode's reads before assignment, without a GPU (issues 9 and 10): in a debug build
a local first assigned inside a block gets a flag that its assignments set and its reads
check (the site names the local and the read's line); a local assigned at the top level,
and every local of a normal build, has none; the message of such a record."""

import re

import numpy as np

import jitkern
from jitkern import jit
from jitkern.runtime import debugcheck
from jitkern.jit import rawkernel

F32 = np.zeros(16, np.float32)
N = np.int32(16)


def guarded(x, y, n):
    i = jit.grid(1)
    if i < n:
        v = x[i]
    y[i] = v  # READ-V


@rawkernel(device=True)
def clip_or_unset(a, lo):
    if a > lo:
        r = a
    return r  # READ-R


def many(x, y, n):
    i = jit.grid(1)
    w = x[0]
    for k in range(n):
        last = x[k]
    if i < n:
        t = (x[i], x[i])
        s = x[i]
        y[i] = s + t[0]  # in the block that assigned s and t: no check
    if i > 1:
        s += 1.0  # AUG-S
    y[i] = w + last + k + t[1] + (s if i < n else w) + clip_or_unset(x[i], w)


def line_of(func, marker):
    import inspect

    lines, first = inspect.getsourcelines(func)
    return first + next(n for n, text in enumerate(lines) if text.rstrip().endswith(marker))


def body_of(source, name):
    start = source.index(f"void {name}(")
    return source[start:]


def test_conditionally_assigned_local_has_a_flag_set_and_checked():
    debug = rawkernel(debug=True)(guarded).emit(F32, F32, N)
    body = body_of(debug, "guarded")
    assert "bool jk_set_v = false;" in body
    assert re.search(r"v = \(\*jk::dbg::at1\(x, .*\);\n\s*jk_set_v = true;", body)
    assert re.search(r"= jk::dbg::use\(v, jk_set_v, \d+\);", body)
    # i is assigned at the top level: every later read is dominated, so no flag, no check
    assert "jk_set_i" not in body and "jk::dbg::use(i" not in body
    assert "template <class T> __device__ __forceinline__ T& use(" in debug


def test_normal_build_has_no_flags():
    for func in (guarded, many):
        normal = rawkernel()(func).emit(F32, F32, N)
        assert "jk_set_" not in normal and "jk::dbg" not in normal and "jk_debug" not in normal
    body = body_of(rawkernel()(guarded).emit(F32, F32, N), "guarded")
    assert re.search(r"^\s*float v\{\};$", body, re.MULTILINE)
    assert re.search(r"^\s*y\[i\] = v;$", body, re.MULTILINE)


def test_unset_sites_carry_the_read_line_and_the_name():
    k = rawkernel(debug=True)(guarded)
    generated = k._generate(k._arg_types((F32, F32, N), allow_host=True))
    unset = [s for s in generated.sites if s.kind == "unset"]
    assert unset == [debugcheck.Site(__file__, line_of(guarded, "# READ-V"), "v", "unset")]
    assert [s.kind for s in generated.sites].count("array") == 2  # x[i], y[i]


def test_loops_augmented_assignment_conditional_expression_and_device_function():
    k = rawkernel(debug=True)(many)
    source = k.emit(F32, F32, N)
    body = body_of(source, "many")
    # w: top level, no flag; last: in a loop; k: a loop variable (unset after no iteration)
    assert "jk_set_w" not in body
    for name in ("last", "k", "t", "s"):
        assert f"bool jk_set_{name} = false;" in body, name
    assert re.search(r"k = jk_it\d+;\n\s*jk_set_k = true;", body)
    # inside its loop, k is assigned on every path: x[k] reads it unchecked
    assert re.search(r"last = \(\*jk::dbg::at1\(x, \(long long\)\(k\), ", body)
    assert re.search(r"= \(s \+ t\.head\);", body)
    # s += 1.0 reads s through its check, then sets it
    assert re.search(r"s = \(jk::dbg::use\(s, jk_set_s, \d+\) \+ ", body)
    # the conditional expression checks s only on the branch that reads it
    assert re.search(r"\? jk::dbg::use\(s, jk_set_s, \d+\) : w\)", body)
    assert "jk::dbg::use(t, jk_set_t, " in body  # a tuple local: t[1] reads t
    device = source[source.index("jk_fn_clip_or_unset(") :]
    assert "bool jk_set_r = false;" in device and "return jk::dbg::use(r, jk_set_r, " in device
    generated = k._generate(k._arg_types((F32, F32, N), allow_host=True))
    unset = {(s.name, s.line) for s in generated.sites if s.kind == "unset"}
    assert ("s", line_of(many, "# AUG-S")) in unset
    assert ("r", line_of(clip_or_unset.py_func, "# READ-R")) in unset
    assert {name for name, _ in unset} == {"last", "k", "t", "s", "r"}
    assert len([s for s in generated.sites if s.kind == "unset"]) == 6  # s twice


def test_debug_build_with_flags_compiles_for_sm90():
    k = rawkernel(debug=True)(many)
    info = k.inspect(F32, F32, N, arch="sm_90")
    assert info.cubin


def make_record(site, thread, block):
    r = np.zeros((), debugcheck.RECORD_DTYPE)
    r["flag"], r["site"] = 1, site
    r["thread"], r["block"] = thread, block
    return r


def test_message_of_a_read_before_assignment():
    sites = [
        debugcheck.Site("/src/file.py", 12, "x"),
        debugcheck.Site("/src/file.py", 14, "v", "unset"),
    ]
    watch = debugcheck.Watch("kernel k", sites, lambda device: None)
    text = debugcheck.describe(watch, make_record(1, (3, 0, 0), (0, 2, 0)))
    assert text.startswith(
        "/src/file.py:14: local variable 'v' is read before it is assigned in thread "
        "(3,0,0) of block (0,2,0) (kernel k)"
    )
    assert "out-of-bounds" not in text
    assert isinstance(
        watch.error(make_record(1, (0, 0, 0), (0, 0, 0))), jitkern.KernelAssertionError
    )


def test_index_entry_round_trips_unset_sites():
    site = debugcheck.Site("/src/f.py", 3, "v", "unset")
    assert debugcheck.Site.from_json(site.to_json()) == site
