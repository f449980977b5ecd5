"""Debug mode without a GPU (issue 10): the generated source of a debug build checks every
access and a normal build has no check; debug builds compile for sm_90 with -lineinfo and
are cached apart; JITKERN_DEBUG and debug= are validated; the registry and messages."""

import json
import os
import re

import numpy as np
import pytest

import jitkern
from jitkern import config, jit
from jitkern.runtime import debugcheck
from jitkern.kernels import jit_index
from jitkern.jit import rawkernel

F32 = np.zeros(16, np.float32)
F32_2D = np.zeros((4, 8), np.float32)


def copy_shift(x, y, n):
    i = jit.grid(1)
    if i < n:
        y[i] = x[i + 1]


@rawkernel(device=True)
def pick(a, p, i):
    return a[i] + p[i]


def everything(x, m, out):
    t = jit.threadIdx.x
    tile = jit.shared_memory(np.float32, 64)
    dyn = jit.shared_memory(np.float32, None)
    tile[t] = m[t, 1]
    dyn[t] = tile[t + 1]
    row = m[t]
    out[t] = row[2] + pick(x, tile, t)
    jit.atomic_add(out, t, 1.0)


def test_debug_source_checks_every_access_and_normal_source_has_none():
    debug = rawkernel(debug=True)(everything).emit(F32, F32_2D, F32)
    normal = rawkernel()(everything).emit(F32, F32_2D, F32)
    assert "jk::dbg" not in normal and "jk_debug" not in normal
    assert "debug build (bounds-checked)" in debug.splitlines()[1]
    body = debug[debug.index('extern "C"') :]
    # tile[t] = m[t, 1]: a shared store and a 2-D load
    assert re.search(
        r"\(\*jk::dbg::at1\(tile, \(long long\)\(t\), jk_extent_tile, \d+\)\) = "
        r"\(\*jk::dbg::at\(m, \d+, \(t\), \(1\)\)\);",
        body,
    )
    assert "jk_extent_tile = 64LL;" in body
    assert "jk_extent_dyn = jk::dbg::dynamic_extent<float>();" in body
    assert re.search(r"jk::dbg::at\(jk::dbg::sub\(m, \d+, \(t\)\), \d+, \(2\)\)", body)
    # the device function gets each pointer's element count after it
    assert "jk_fn_pick(x, jk_shape0_x, tile, jk_extent_tile, t)" in body
    assert re.search(
        r"float jk_fn_pick\(float\* a, long long jk_shape0_a, float\* p, "
        r"long long jk_shape0_p, unsigned int i\)",
        debug,
    )
    assert re.search(r"atomicAdd\(&\(\*jk::dbg::at1\(out, ", body)
    # no access of the normal build is left unchecked in the debug build
    lines = [ln for ln in body.splitlines() if not ln.lstrip().startswith(("//", "#"))]
    assert not any(re.search(r"\b(x|out|tile|dyn)\[", ln) for ln in lines)


def test_sites_name_the_python_line_and_expression():
    k = rawkernel(debug=True)(everything)
    types = k._arg_types((F32, F32_2D, F32), allow_host=True)
    generated = k._generate(types)
    first = everything.__code__.co_firstlineno
    sites = [(s.line - first, s.name, s.kind) for s in generated.sites]
    assert (4, "m", "array") in sites and (4, "tile", "shared") in sites
    assert (5, "dyn", "shared") in sites and (6, "m", "array") in sites
    assert (7, "row", "array") in sites and (8, "out", "array") in sites
    assert all(s.file == __file__ for s in generated.sites if s.name != "a")
    helper_sites = [s for s in generated.sites if s.name in ("a", "p")]
    assert [s.line for s in helper_sites] == [
        pick.py_func.__code__.co_firstlineno + 2
    ] * 2  # (decorator line first)


def test_debug_build_compiles_for_sm90_with_lineinfo_and_its_own_binary():
    normal, debug = rawkernel(lineinfo=False)(copy_shift), rawkernel(debug=True)(copy_shift)
    assert "-lineinfo" in debug.options and "-lineinfo" not in normal.options
    a = normal.inspect(F32, F32, np.int32(4), arch="sm_90")
    b = debug.inspect(F32, F32, np.int32(4), arch="sm_90")
    assert a.cubin != b.cubin
    built_n = next(iter(normal._by_types.values()))
    built_d = next(iter(debug._by_types.values()))
    assert built_n.binary.key != built_d.binary.key
    assert "-lineinfo" in built_d.binary.options
    # the in-memory key carries the flag
    assert all(key[2] is True for key in debug._by_types)
    assert all(key[2] is False for key in normal._by_types)


def test_lineinfo_option_alone_is_not_a_debug_build():
    plain = rawkernel()(copy_shift)  # line information is on by default
    debug = rawkernel(debug=True)(copy_shift)
    assert plain.options == debug.options == ("-lineinfo",)
    types = plain._arg_types((F32, F32, np.int32(1)), allow_host=True)
    assert jit_index.index_key(plain, types) != jit_index.index_key(debug, types)
    assert "jk::dbg" not in plain.emit(F32, F32, np.int32(1))


def test_on_disk_index_keeps_debug_and_normal_apart(tmp_path, monkeypatch):
    monkeypatch.setattr(config.settings, "cache_dir", str(tmp_path))
    monkeypatch.setattr(config.settings, "disk_cache", True)
    args = (F32, F32, np.int32(4))
    rawkernel(debug=True)(copy_shift).inspect(*args, arch="sm_90")
    # a fresh normal kernel object (as in a new process) must not find the debug entry
    jitkern.clear_memo()
    fresh_normal = rawkernel()(copy_shift)
    types = fresh_normal._arg_types(args, allow_host=True)
    assert jit_index.load_index(fresh_normal, types) is None
    fresh_normal.inspect(*args, arch="sm_90")
    assert "jk::dbg" not in fresh_normal.cached_code
    # a fresh debug object finds its entry, with the sites of its checks
    jitkern.clear_memo()
    fresh_debug = rawkernel(debug=True)(copy_shift)
    loaded = jit_index.load_index(fresh_debug, types)
    assert loaded is not None and "jk::dbg" in loaded.source
    assert [(s.name, s.kind) for s in loaded.sites] == [("x", "array"), ("y", "array")]
    from jitkern.toolchain import cache  # the index is an entry of the shared disk cache

    keys = [jit_index.index_key(k, types) for k in (fresh_normal, fresh_debug)]
    entries = [json.loads(cache.disk_get(key, "jit-index")[1]) for key in keys]
    assert [len(e["sites"]) for e in entries] == [0, 2]
    assert len(list(tmp_path.glob("jitkern-entries/jit-index/*/*.jkc"))) == 2


def test_jitkern_debug_environment_variable(monkeypatch):
    monkeypatch.setenv("JITKERN_DEBUG", "1")
    try:
        assert config.reload().debug is True
        assert rawkernel()(copy_shift).debug is True
        assert rawkernel(debug=False)(copy_shift).debug is False
        monkeypatch.setenv("JITKERN_DEBUG", "off")
        assert config.reload().debug is False
        assert rawkernel()(copy_shift).debug is False
    finally:
        monkeypatch.delenv("JITKERN_DEBUG")
        config.reload()
    assert config.settings.debug is False


@pytest.mark.parametrize("bad", ["yes", 1, 0.0])
def test_debug_flag_must_be_a_bool(bad):
    with pytest.raises(jitkern.JitkernTypeError, match=r"rawkernel\(debug=...\): expected True"):
        rawkernel(debug=bad)(copy_shift)
    with pytest.raises(jitkern.JitkernTypeError, match=r"ElementwiseKernel\(debug=...\)"):
        jitkern.ElementwiseKernel("T x", "T y", "y = x", "k", debug=bad)
    with pytest.raises(jitkern.JitkernTypeError, match=r"ReductionKernel\(debug=...\)"):
        jitkern.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "r", debug=bad)


# -- the registry and the message, with a stand-in for the device ----------------------


class FakeWatch(debugcheck.Watch):
    def __init__(self, sites, record, done=True):
        super().__init__("kernel fake", sites, lambda device: None)
        self._record, self._done, self.reads = record, done, 0

    def record_launch(self, device_id, stream):
        pass

    def done(self, device_id):
        return self._done

    def wait(self, device_id):
        self._done = True

    def read(self, device_id):
        self.reads += 1
        record, self._record = self._record, None
        return record


def make_record(site, axis, index, extent, shape, thread, block):
    r = np.zeros((), debugcheck.RECORD_DTYPE)
    r["flag"], r["site"], r["axis"], r["index"], r["extent"] = 1, site, axis, index, extent
    r["ndim"] = len(shape)
    r["shape"][: len(shape)] = shape
    r["thread"], r["block"] = thread, block
    return r


SITES = [
    debugcheck.Site("/src/file.py", 12, "x"),
    debugcheck.Site("/src/file.py", 14, "smem", "shared"),
]


def test_message_names_line_index_axis_shape_thread_block():
    r = make_record(0, 0, 1024, 1024, (1024,), (0, 0, 0), (4, 0, 0))
    text = debugcheck.describe(FakeWatch(SITES, r), r)
    assert text.startswith(
        "/src/file.py:12: out-of-bounds index 1024 on axis 0 of x (shape (1024,)) in thread "
        "(0,0,0) of block (4,0,0) (kernel fake)"
    )
    r2 = make_record(1, 0, -1, 32, (32,), (3, 1, 0), (0, 2, 1))
    assert (
        "index -1 on axis 0 of shared array smem (shape (32,)) in thread (3,1,0) of block "
        "(0,2,1)" in debugcheck.describe(FakeWatch(SITES, r2), r2)
    )
    raw = debugcheck.Watch(
        "ElementwiseKernel 'k'", [debugcheck.Site(None, None, "w", "raw")], lambda d: None
    )
    r3 = make_record(0, -1, 40, 40, (5, 8), (1, 0, 0), (0, 0, 0))
    assert debugcheck.describe(raw, r3).startswith(
        "ElementwiseKernel 'k': out-of-bounds flat index 40 of raw argument w (size 40, "
        "shape (5, 8)) in thread (1,0,0)"
    )


def test_registry_raises_once_for_a_finished_launch_and_skips_running_ones():
    debugcheck.PENDING.clear()
    r = make_record(0, 0, 7, 4, (4,), (7, 0, 0), (0, 0, 0))
    running = FakeWatch(SITES, None, done=False)
    failed = FakeWatch(SITES, r)
    debugcheck.launched(running, 0, 0)
    debugcheck.launched(failed, 0, 0)
    try:
        with pytest.raises(
            jitkern.KernelAssertionError, match=r"file.py:12: out-of-bounds index 7"
        ):
            debugcheck.check_pending()
        assert failed.reads == 1 and running.reads == 0
        assert list(debugcheck.PENDING) == [(id(running), 0)]
        debugcheck.check_pending()  # nothing new: the failed launch was reported once
        assert failed.reads == 1
        debugcheck.check_watches([running], [0])  # waits, reads a clean record
        assert running.reads == 1 and not debugcheck.PENDING
    finally:
        debugcheck.PENDING.clear()


def test_record_layout_matches_the_device_struct():
    # unsigned flag, int site, int axis, int ndim, long long index, long long extent,
    # long long shape[8], unsigned thread[3], unsigned block[3]
    assert debugcheck.RECORD_DTYPE.itemsize == 4 * 4 + 8 * 2 + 8 * debugcheck.MAX_DIMS + 4 * 6
    assert f"constexpr int jk_debug_dims = {debugcheck.MAX_DIMS};" in debugcheck.DEVICE_SOURCE


def test_synchronisation_points_call_the_registry():
    import inspect

    from jitkern.runtime import device, memory

    for fn in (
        device.Stream.synchronize,
        device.Device.synchronize,
        device.synchronize,
        memory.memcpy_dtoh,
    ):
        assert "debugcheck.check_pending()" in inspect.getsource(fn), fn


def test_debug_mode_docs_exist():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    text = open(os.path.join(root, "docs", "debug_mode.md"), encoding="utf-8").read()
    assert "debug=True" in text and "JITKERN_DEBUG" in text


def test_pickled_kernels_stay_debug_builds():
    import pickle

    k = rawkernel(debug=True)(copy_shift)  # not a module attribute: pickled by value
    again = pickle.loads(pickle.dumps(k))
    assert again.debug is True and again.options == ("-lineinfo",)
    assert "jk::dbg" in again.emit(F32, F32, np.int32(1))
    ew = jitkern.ElementwiseKernel("raw T x", "T y", "y = x[i]", "pickled_debug", debug=True)
    ew2 = pickle.loads(pickle.dumps(ew))
    assert ew2.debug is True and ew2.options.count("-lineinfo") == 1
    assert "_jk_dcarray" in ew2.inspect(F32, F32, arch="sm_90").source
