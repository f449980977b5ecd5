"""Thread-block clusters: jit.cg.this_cluster(), distributed shared memory, cluster= launches."""

import re

import numpy as np
import pytest

import jitkern
from jitkern import jit
from jitkern.toolchain.nvrtc import compile_source
from jitkern.runtime.module import Function
from jitkern.errors import JitTypeError, LaunchError

BLOCK = 64


@jit.rawkernel()
def neighbour_sum(x, out):
    """out[b] = x[b] + x[the next block of the cluster], read from that block's shared memory."""
    cluster = jit.cg.this_cluster()
    mine = jit.shared_memory(np.float32, 1)
    if jit.threadIdx.x == 0:
        mine[0] = x[jit.blockIdx.x]
    cluster.sync()
    if jit.threadIdx.x == 0:
        other = cluster.map_shared_rank(mine, (cluster.block_rank() + 1) % cluster.num_blocks())
        out[jit.blockIdx.x] = mine[0] + other[0]
    cluster.sync()


@jit.rawkernel()
def ranks(out):
    cluster = jit.cg.this_cluster()
    if jit.threadIdx.x == 0:
        out[jit.blockIdx.x] = cluster.block_rank() * 100 + cluster.num_blocks()


@jit.rawkernel()
def not_shared(x, out):
    cluster = jit.cg.this_cluster()
    other = cluster.map_shared_rank(x, 0)
    out[0] = other[0]


def _args(n=16):
    return np.zeros(n, np.float32), np.zeros(n, np.float32)


def test_cluster_codegen_records_the_sm90_requirement():
    source = neighbour_sum.emit(*_args())
    assert "auto cluster = cooperative_groups::this_cluster();" in source
    assert "cluster.map_shared_rank(" in source and "cluster.sync()" in source
    line = neighbour_sum.py_func.__code__.co_firstlineno + 3  # after the decorator and docstring
    # every use, with its column span: cluster = jit.cg.this_cluster() starts at column 15
    assert f"// requires: sm_90: cg.this_cluster at {__file__}:{line}:15-36 [sm_90];" in source
    assert source.count(" [sm_90]") == 6  # this_cluster, 2 x sync, block_rank, num_blocks, map
    assert "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900\n#error" in source


def test_cluster_kernel_compiles_for_sm90():
    info = neighbour_sum.inspect(*_args(), arch="sm_90")
    assert info.cubin.startswith(b"\x7fELF") and info.arch == "sm_90"


def test_cluster_builtins_refused_below_sm90_with_position():
    first = neighbour_sum.py_func.__code__.co_firstlineno
    with pytest.raises(JitTypeError) as err:
        neighbour_sum.inspect(*_args(), arch="sm_80")
    assert not isinstance(err.value, ValueError)  # a type error of the kernel's source
    lines = str(err.value).split("\n")
    assert lines[0] == (f"{__file__}:{first + 3}:15: neighbour_sum: 6 use(s) of builtins that "
                        "need a newer GPU than this compile's target, sm_80")
    # each use: file:line:col, what needs what, the user's line and a caret under the call
    assert lines[1] == (f"{__file__}:{first + 3}:15: cg.this_cluster needs sm_90 or newer "
                        "(thread-block clusters and distributed shared memory)")
    assert lines[2] == "        cluster = jit.cg.this_cluster()"
    assert lines[3] == "                  ^" + "~" * 20
    at = lines.index(f"{__file__}:{first + 9}:17: cluster.map_shared_rank needs sm_90 or newer "
                     "(thread-block clusters and distributed shared memory)")
    assert lines[at + 1].strip().startswith("other = cluster.map_shared_rank(mine, ")
    assert lines[at + 2] == "                    ^" + "~" * 79
    assert sum(" cluster.sync needs sm_90" in ln for ln in lines) == 2
    assert lines[-1] == "compile for arch='sm_90' or newer (or launch on such a GPU)"


def test_refusal_of_a_use_recorded_without_columns():
    """A requirement whose span has no column (a statement the lowering could not narrow)
    is reported at its line, without a caret."""
    from jitkern.compiler.diagnostics import check_target

    needs = (("cg.this_cluster", f"{__file__}:18", 90),)
    with pytest.raises(JitTypeError, match=rf"^{__file__}:18: k: 1 use\(s\) .*\n{__file__}:18: "
                       r"cg.this_cluster needs sm_90 or newer"):
        check_target("k", needs, 80)
    check_target("k", needs, 90)  # sm_90 itself: accepted, returns None
    assert check_target("k", needs, 100) is None


def test_cluster_kernel_export_checks_every_arch(tmp_path):
    with pytest.raises(JitTypeError, match=r"compile's target, sm_80"):
        neighbour_sum.export(tmp_path / "k", *_args(), arch=("sm_80", "sm_90"))
    assert not list(tmp_path.iterdir())
    result = neighbour_sum.export(tmp_path / "k", *_args(), arch="sm_90", format="cubin")
    assert result.manifest["archs"] == ["sm_90"]


def test_cluster_kernel_exports_for_sm90a(tmp_path):
    """An arch-specific target passes the sm_90 check and stays arch-specific."""
    result = neighbour_sum.export(tmp_path / "k", *_args(), arch="sm_90a", format="cubin")
    assert result.manifest["archs"] == ["sm_90a"]
    assert (tmp_path / "k.sm_90a.cubin").read_bytes().startswith(b"\x7fELF")


def test_map_shared_rank_takes_shared_memory_only():
    with pytest.raises(JitTypeError, match=r"map_shared_rank maps a shared-memory array"):
        not_shared.emit(*_args())


def test_cluster_must_divide_the_grid_before_any_launch():
    binary = compile_source('extern "C" __global__ void k(int* x) {}', arch="sm_90")
    fn = Function(binary, "k")
    with pytest.raises(
        LaunchError,
        match=r"cluster=\(2, 1, 1\) must divide grid=\(3, 2\) "
        r"\(grid x=3 is not a multiple of cluster x=2\)",
    ):
        fn.launch_cluster((3, 2), 32, (0,), cluster=(2, 1, 1))
    with pytest.raises(jitkern.KernelArgumentError, match=r"cluster: every dimension"):
        fn.launch_cluster(4, 32, (0,), cluster=(0, 1, 1))


# ---------------------------------------------------------------------------
# GPU (sm_90+)


def _need_sm90(launch=None):
    if launch is not None and launch.simulated:
        return  # the simulator runs clusters of any size on any machine
    from jitkern.runtime import driver

    major, _minor = driver.compute_capability(driver.current_device_id())
    if major < 9:
        pytest.skip("thread-block clusters need sm_90")


@pytest.mark.parametrize("cluster", [2, 4, 8])
def test_gpu_distributed_shared_memory(rng, cluster, launch):
    _need_sm90(launch)
    blocks = 32
    x = rng.standard_normal(blocks).astype(np.float32)
    out = launch.poisoned(blocks, np.float32)
    launch(neighbour_sum)(blocks, BLOCK, (launch.to_device(x), out), cluster=(cluster, 1, 1))
    want = x + x.reshape(-1, cluster)[:, np.r_[1:cluster, 0]].reshape(-1)
    np.testing.assert_array_equal(launch.get(out), want)


def test_gpu_cluster_ranks_after_plain_launches(launch):
    """A plain launch installs the generated launcher; cluster= still reaches the driver."""
    _need_sm90(launch)
    out = launch.full(8, -1, np.int64)
    launch(ranks)(8, 32, (out,))
    launch(ranks)(8, 32, (out,))
    np.testing.assert_array_equal(launch.get(out), np.full(8, 1))  # clusters of one block
    launch(ranks)(8, 32, (out,), cluster=(4, 1, 1))
    np.testing.assert_array_equal(launch.get(out), np.arange(8) % 4 * 100 + 4)


@pytest.mark.sim_gap("cooperative_groups in RawKernel source is outside the C subset")
def test_gpu_raw_kernel_cluster_launch(launch):
    _need_sm90(launch)
    code = r"""
    #include <cooperative_groups.h>
    extern "C" __global__ void rank_of(int* out) {
      auto c = cooperative_groups::this_cluster();
      if (threadIdx.x == 0) out[blockIdx.x] = c.block_rank() * 10 + c.num_blocks();
    }"""
    k = jitkern.RawKernel(code, "rank_of")
    out = launch.full(12, -1, np.int32)
    launch(k)(12, 32, (out,))
    launch(k)(12, 32, (out,))  # the generated launcher now stands for k
    launch(k)(12, 32, (out,), cluster=(3, 1, 1))
    np.testing.assert_array_equal(launch.get(out), np.arange(12) % 3 * 10 + 3)
    with pytest.raises(LaunchError, match=r"must divide grid"):
        launch(k)(12, 32, (out,), cluster=(5, 1, 1))


def test_gpu_nonportable_cluster_of_16(rng, launch):
    """Clusters of 16 blocks: refused until the kernel allows non-portable sizes."""
    _need_sm90(launch)
    blocks = 32
    x = rng.standard_normal(blocks).astype(np.float32)
    out = launch.poisoned(blocks, np.float32)
    args = (launch.to_device(x), out)
    with pytest.raises(jitkern.KernelArgumentError, match=r"has 16 blocks; expected at most 8"):
        launch(neighbour_sum)(blocks, BLOCK, args, cluster=(16, 1, 1))
    assert np.isnan(launch.get(out)).all()  # nothing ran
    neighbour_sum.allow_nonportable_cluster_size = True
    try:
        launch(neighbour_sum)(blocks, BLOCK, args, cluster=(16, 1, 1))
    finally:
        neighbour_sum.allow_nonportable_cluster_size = False
    want = x + x.reshape(-1, 16)[:, np.r_[1:16, 0]].reshape(-1)
    np.testing.assert_array_equal(launch.get(out), want)


def test_gpu_raw_kernel_cluster_checks_before_launch(launch):
    _need_sm90(launch)
    k = jitkern.RawKernel('extern "C" __global__ void touch(int* out) { out[blockIdx.x] = 1; }',
                          "touch")
    out = launch.full(8, -1, np.int32)
    with pytest.raises(jitkern.KernelArgumentError, match=r"cluster=\(3, 3, 1\) has 9 blocks"):
        launch(k)((9, 3), 32, (out,), cluster=(3, 3, 1))
    with pytest.raises(LaunchError, match=r"grid x=8 is not a multiple of cluster x=3"):
        launch(k)(8, 32, (out,), cluster=3)
    launch.synchronize()
    np.testing.assert_array_equal(launch.get(out), np.full(8, -1))  # nothing ran


def test_gpu_elementwise_refuses_cluster(launch):
    """Also once the kernel's call is its generated entry (after a plain call)."""
    k = jitkern.ElementwiseKernel("T x", "T y", "y = x", "copy_cluster")
    x = launch.to_device(np.arange(4, dtype=np.float32))
    with pytest.raises(jitkern.KernelArgumentError, match=r"cluster= is not accepted"):
        launch(k)(x, cluster=(2, 1, 1))
    np.testing.assert_array_equal(launch.get(launch(k)(x)), np.arange(4, dtype=np.float32))
    np.testing.assert_array_equal(launch.get(launch(k)(x)), np.arange(4, dtype=np.float32))
    with pytest.raises(jitkern.KernelArgumentError, match=r"copy_cluster: cluster= is not "
                       r"accepted by ElementwiseKernel"):
        launch(k)(x, cluster=(2, 1, 1))
    r = jitkern.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "sum_cluster")
    assert float(launch.get(launch(r)(x))) == 6.0
    with pytest.raises(jitkern.KernelArgumentError, match=r"sum_cluster: cluster= is not "
                       r"accepted by ReductionKernel"):
        launch(r)(x, cluster=2)


@pytest.mark.gpu
def test_gpu_exported_cluster_kernel(tmp_path, rng):
    _need_sm90()
    blocks = 16
    result = neighbour_sum.export(tmp_path / "n", *_args(blocks), arch="sm_90")
    k = jitkern.load(result.manifest_path).neighbour_sum
    x = rng.standard_normal(blocks).astype(np.float32)
    out = jitkern.full(blocks, np.nan, np.float32)
    k(blocks, BLOCK, (jitkern.asarray(x), out), cluster=(2, 1, 1))
    np.testing.assert_array_equal(out.get(), x + x.reshape(-1, 2)[:, ::-1].reshape(-1))


@pytest.mark.parametrize("positional", [False, True])
def test_generated_launchers_hand_cluster_launches_to_the_general_path(positional):
    """After a plain launch a kernel's call is its generated launcher: cluster= must reach
    the general path (which launches through cuLaunchKernelEx), never the plain launch."""
    from jitkern.runtime import launch, launcher

    plan = launch.build_plan((np.int32(1),), None)
    launched, slow = [], []

    def record(*a):
        launched.append(a)
        return (0,)

    def general(*a, **k):
        slow.append((a, k))

    dims = {(4,): (4, 1, 1), (32,): (32, 1, 1)}
    run = launcher.bind_fast_launcher(launch.make_fast_launcher(
        plan, record, "handle", dims, [0], None, fallback=True, positional=positional
    ), general)
    run((4,), (32,), (np.int32(5),))
    assert len(launched) == 1 and not slow
    run((4,), (32,), (np.int32(5),), cluster=(2, 1, 1))
    assert len(launched) == 1
    if positional:
        assert slow == [(((4,), (32,), (np.int32(5),), 0, None), {"cluster": (2, 1, 1)})]
    else:
        assert slow == [
            (((4,), (32,), (np.int32(5),)), {"shared_mem": 0, "stream": None, "cluster": (2, 1, 1)})
        ]


@pytest.mark.gpu
def test_gpu_cluster_example_runs():
    """examples/jit_cluster_reduction.py on the GPU: both reductions checked against NumPy."""
    import os
    import pathlib
    import subprocess
    import sys

    _need_sm90()
    root = pathlib.Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, str(root / "examples" / "jit_cluster_reduction.py"), str(1 << 20)],
        capture_output=True, text=True, timeout=300, check=False,
        env=dict(os.environ, PYTHONPATH=str(root)))
    assert done.returncode == 0, done.stderr
    assert re.search(r"^clusters of 8 +sum=", done.stdout, re.M), done.stdout
    assert re.search(r"^one atomic per block +sum=", done.stdout, re.M), done.stdout
