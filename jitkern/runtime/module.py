"""Loading compiled binaries on devices and launching their kernels.

A :class:`~jitkern.toolchain.nvrtc.Binary` is loaded at most once per device
(``cuModuleLoadData`` in the device's primary context). :class:`Function` is a kernel of
a binary that can be launched on any device: it resolves its ``CUfunction`` per device on
first use, and keeps one packing :class:`~.launch.Plan` per argument-type signature.
:meth:`Function.bind` makes a :class:`BoundLaunch`: one launch with its
arguments packed once, re-run by a call that is little more than ``cuLaunchKernel``.
"""

from __future__ import annotations

import struct
import threading
import weakref

from ..capabilities import min_cc
from ..errors import (
    CUDAError,
    JitkernAttributeError,
    KernelArgumentError,
    LaunchError,
)
from ..toolchain import cubin
from . import driver, graphnodes
from .device import STREAMS_IN_USE, _stream_state, current_stream_handle, stream_handle
from .driver import check, drv
from .limits import SHARED_OPTIN_MAX, check_dims, check_shared_mem
from .bound import BoundLaunch  # noqa: F401 - Function.bind's result, named here too
from .launcher import bind_fast_launcher, make_fast_launcher
from .signature import pack_problem
from .launch import (
    build_plan,
    device_getter,
    dim3,
    signature_of,
)

_modules: dict[tuple[str, int], "LoadedModule"] = {}
_modules_lock = threading.Lock()


class LoadedModule:
    """A binary loaded on one device."""

    __slots__ = ("binary", "device_id", "handle", "_functions", "_driver")

    def __init__(self, binary, device_id: int):
        # Unloaded through the driver that loaded it (a fake's handle never reaches CUDA)
        self._driver = d = drv()
        driver.set_current(device_id)
        self.binary = binary
        self.device_id = device_id
        # PTX is text the driver reads up to its NUL; a fatbin's trailing zeros are its own.
        data = binary.data.rstrip(b"\0") + b"\0" if binary.fmt == "ptx" else binary.data
        self.handle = check(d.cuModuleLoadData(data), f"loading {binary.fmt} on device {device_id}")
        self._functions: dict[str, object] = {}

    def function_handle(self, symbol: str):
        fn = self._functions.get(symbol)
        if fn is None:
            err, fn = drv().cuModuleGetFunction(self.handle, symbol.encode())
            if err != 0:
                raise LaunchError(
                    f"no kernel named {symbol!r} in the module; kernels need extern \"C\" (or a "
                    "name expression for templates) to be found by name"
                ) from None
            self._functions[symbol] = fn
        return fn

    def get_global(self, name: str) -> tuple[int, int]:
        """(device pointer, size in bytes) of the global ``name``."""
        err, ptr, size = drv().cuModuleGetGlobal(self.handle, name.encode())
        if err != 0:
            raise LaunchError(f"no global variable named {name!r} in the module") from None
        return int(ptr), int(size)

    def __del__(self):
        try:
            self._driver.cuModuleUnload(self.handle)
        except Exception:
            pass


def load(binary, device_id: int) -> LoadedModule:
    key = (binary.key, device_id)
    mod = _modules.get(key)
    if mod is None:
        with _modules_lock:
            mod = _modules.get(key)
            if mod is None:
                mod = _modules[key] = LoadedModule(binary, device_id)
    return mod


_ATTRIBUTES = (
    "max_threads_per_block", "shared_size_bytes", "const_size_bytes", "local_size_bytes",
    "num_regs", "ptx_version", "binary_version", "cache_mode_ca",
    "max_dynamic_shared_size_bytes", "preferred_shared_memory_carveout",
)
SETTABLE_ATTRIBUTES = ("max_dynamic_shared_size_bytes", "preferred_shared_memory_carveout")


class _DeviceState:
    """What a Function knows about itself on one device."""

    __slots__ = ("handle", "param_layout", "param_sizes", "plans", "last_plan", "device_id",
                 "nonportable")

    def __init__(self, handle, param_sizes, device_id: int = 0, param_layout=None):
        self.handle = handle
        self.param_layout = param_layout  # [(offset, size)] per parameter, or None
        if param_layout is not None:
            param_sizes = [size for _offset, size in param_layout]
        self.param_sizes = param_sizes
        self.device_id = device_id
        self.plans: dict = {}
        self.last_plan = None
        self.nonportable = False  # CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED set


class Function:
    """One kernel of a :class:`~jitkern.toolchain.nvrtc.Binary`, launchable on any device.

    The kernel object that made it may set ``owner`` (a weak reference to itself) and
    ``arg_map`` (a :class:`~.graphargs.ArgMap`: how its arguments are re-packed when a
    graph node of this function is updated; None refuses updates). ``owners`` holds every
    kernel object that launches it (objects of one definition share their Functions through
    the memo of builds, runtime/memo.py), ``watch`` a debug build's record.
    """

    owner = None
    arg_map = None
    watch = None

    def __init__(self, binary, symbol: str, *, display_name: str | None = None,
                 check_param_sizes: bool = True, params=None):
        self.binary = binary
        self.owners = weakref.WeakSet()
        self.params = params  # parsed parameter list (name, ctype, pointer), if known
        self.symbol = binary.lowered(symbol)
        self.name = display_name or symbol
        self._check_sizes = check_param_sizes
        self._states: dict[int, _DeviceState] = {}
        self._last_device = -1
        self._last_state: _DeviceState | None = None
        self._lock = threading.Lock()
        # The generated launch of the last signature (make_fast_launcher), once one ran
        self.fast = None
        self._fast_cooperative = False

    # -- per-device state -------------------------------------------------
    def _state(self, device_id: int) -> _DeviceState:
        state = self._states.get(device_id)
        if state is None:
            with self._lock:
                state = self._states.get(device_id)
                if state is None:
                    handle = load(self.binary, device_id).function_handle(self.symbol)
                    layout = param_layout(handle, self.binary, self.symbol)
                    state = self._states[device_id] = _DeviceState(
                        handle, None, device_id, layout if self._check_sizes else None)
                    graphnodes.register(handle, self, state)
        return state

    def handle(self, device_id: int | None = None):
        if device_id is None:
            device_id = driver.current_device_id()
        return self._state(device_id).handle

    def param_sizes(self, device_id: int | None = None) -> list[int] | None:
        if device_id is None:
            device_id = driver.current_device_id()
        return self._state(device_id).param_sizes

    def param_layout(self, device_id: int | None = None) -> list[tuple[int, int]]:
        """(offset, size) of each parameter in the launch's parameter buffer."""
        if device_id is None:
            device_id = driver.current_device_id()
        state = self._state(device_id)
        layout = state.param_layout
        if layout is None:
            layout = param_layout(state.handle, self.binary, self.symbol)
        if layout is None:
            raise CUDAError(f"the parameter layout of kernel {self.name!r} cannot be read "
                            "(neither from its binary nor from the driver)")
        return layout

    # -- launch -----------------------------------------------------------
    def launch(self, grid, block, args, shared_mem: int = 0, stream=None,
               cooperative: bool = False) -> None:
        """Launch on the current device. See :mod:`.launch` for how args are packed.

        This is the hot path: every line here runs on every launch.
        """
        fast = self.fast
        if fast is not None and cooperative == self._fast_cooperative and fast(
                grid, block, args, shared_mem, stream):
            return
        if type(args) is not tuple:
            args = _as_args(args)
        state = self._last_state
        if state is None or _multi_device:
            state = self._select_state()
        plan = state.last_plan
        try:  # free when nothing raises (zero-cost exceptions)
            if plan is None or plan.dtypes is not None or not plan.pack_if_same(args):
                plan = state.last_plan = self._plan_for(state, args)
                plan.pack(args)
        except struct.error as exc:
            raise self._pack_error(state, args, exc) from None
        if _multi_device:
            self._check_devices(args)
        dims = _dims.get(grid)
        gx, gy, gz = dims if dims is not None else _dims_of(grid, "grid", self.name)
        dims = _block_dims.get(block)
        bx, by, bz = dims if dims is not None else _dims_of(block, "block", self.name)
        if stream is None:
            stack = _stream_state.stack
            s = stack[-1].ptr if stack else 0
        else:
            s = stream_handle(stream)
        d = _drv
        driver.LAST_LAUNCH[0] = state.handle  # a fault's error names the last kernel launched
        try:
            if cooperative:
                (err,) = d.cuLaunchCooperativeKernel(state.handle, gx, gy, gz, bx, by, bz,
                                                      shared_mem, s, plan.params_ptr)
            else:
                (err,) = d.cuLaunchKernel(state.handle, gx, gy, gz, bx, by, bz, shared_mem, s,
                                          plan.params_ptr, 0)
        except TypeError:  # shared_mem of another type (1.5, "64"): say so as the simulator does
            check_shared_mem(shared_mem, self.name, limit=SHARED_OPTIN_MAX)
            raise
        except OverflowError:
            check_shared_mem(shared_mem, self.name, limit=SHARED_OPTIN_MAX)
            raise LaunchError(f"{self.name}: a launch dimension or shared_mem is out of range "
                              f"(grid={grid!r}, block={block!r}, shared_mem={shared_mem!r})") from None
        if err != 0:
            self._launch_failed(err, state, plan, (gx, gy, gz), (bx, by, bz), shared_mem, s,
                                cooperative)
        elif plan.dtypes is None:
            # Generating a launcher costs a compile(); kernel objects that make their own
            # (RawKernel, @rawkernel) leave this path after one launch, so this one is
            # made when the general path sees the plan a second time.
            plan.general_launches += 1
            if plan.general_launches > 1:
                self._install_fast(state, plan, cooperative)

    def launch_cluster(self, grid, block, args, shared_mem: int = 0, stream=None,
                       cooperative: bool = False, cluster=(1, 1, 1),
                       nonportable: bool = False) -> None:
        """Launch in thread-block clusters of ``cluster`` blocks (sm_90+), through
        cuLaunchKernelEx. ``nonportable``: allow clusters of 9 to 16 blocks (the kernel's
        CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED is set first).

        Not the hot path: it builds the launch configuration each time. Everything the
        launch asks of the cluster is checked before anything is packed or launched.
        """
        grid3, cluster3 = check_cluster(self.name, grid, cluster, nonportable)
        block3 = dim3(block, "block")
        check_dims(grid3, "grid", self.name, grid)
        check_dims(block3, "block", self.name, block)
        if type(args) is not tuple:
            args = _as_args(args)
        state = self._last_state
        if state is None or _multi_device:
            state = self._select_state()
        require_cluster_device(self.name, state.device_id)
        d = _drv
        if nonportable and not state.nonportable:
            check(d.cuFuncSetAttribute(
                state.handle,
                d.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1),
                f"allowing non-portable cluster sizes for {self.name}")
            state.nonportable = True
        plan = self._plan_for(state, args)
        plan.pack(args)
        s = current_stream_handle() if stream is None else stream_handle(stream)
        config = cluster_config(d, grid3, block3, shared_mem, s, cluster3, cooperative)
        driver.LAST_LAUNCH[0] = state.handle
        (err,) = d.cuLaunchKernelEx(config, state.handle, plan.params_ptr, 0)
        if err != 0:
            if driver.is_kernel_fault(err):  # an earlier kernel's: not this configuration's
                check((err,), f"launching {self.name} with cluster={cluster!r}")
            reasons = diagnose_launch(self, state.device_id, grid3, block3, shared_mem, cooperative)
            if self.max_cluster_blocks(block3, shared_mem, cluster3, state) == 0:
                reasons.append(f"cluster={cluster!r} cannot be scheduled on device "
                               f"{state.device_id} (the cluster's blocks must fit on one GPC "
                               "together: fewer threads, registers or shared memory per block, "
                               "or a smaller cluster)")
            if reasons:
                raise LaunchError(f"cannot launch {self.name}: " + "; ".join(reasons)
                                  + f" ({driver._name(d, err)})")
            check((err,), f"launching {self.name} with cluster={cluster!r}")

    def max_cluster_blocks(self, block, shared_mem, cluster, state=None) -> int:
        """Active clusters of this shape the device can hold (0: not schedulable)."""
        state = state or self._select_state()
        config = cluster_config(drv(), (cluster[0], cluster[1], cluster[2]), dim3(block, "block"),
                                shared_mem, 0, dim3(cluster, "cluster"), False)
        err, count = drv().cuOccupancyMaxActiveClusters(state.handle, config)
        return int(count) if err == 0 else 0

    def _install_fast(self, state: _DeviceState, plan, cooperative: bool) -> None:
        """Make ``self.fast`` the generated launcher of ``plan`` (made once per plan)."""
        self.fast = self.fast_launcher(state, plan, cooperative)
        self._fast_cooperative = cooperative

    def fast_launcher(self, state: _DeviceState, plan, cooperative: bool, fallback=None,
                      positional: bool = False, guards=(), guard_env=None, star=None):
        """The generated launcher for ``plan`` (runtime/launcher.make_fast_launcher), its text
        generated once per plan and form and kept on it (kernel objects of one definition
        share the plan through the memo of builds), bound here to ``fallback`` (the kernel
        object's general path) and ``guard_env`` (the values its guards name). The bound
        function is kept too, per fallback, so a kernel launched with alternating
        signatures makes nothing again."""
        guard_env = guard_env or {}
        form = (cooperative, fallback is not None, positional, tuple(guards), star,
                tuple(guard_env))
        bound_key = (form, fallback, id(guard_env) if guard_env else None)
        bound = plan.bound.get(bound_key)
        if bound is not None:
            return bound[0]
        launcher = plan.launchers.get(form)
        if launcher is None:
            launcher = plan.launchers[form] = self._make_fast_launcher(
                state, plan, cooperative, fallback is not None, positional, guards,
                tuple(guard_env), star)
        run = bind_fast_launcher(launcher, fallback, checked_dims, **guard_env)
        if len(plan.bound) >= 64:  # bound for kernel objects made and dropped per call
            plan.bound.clear()
        plan.bound[bound_key] = (run, guard_env)  # (keeps guard_env, whose id is the key)
        return run

    def _make_fast_launcher(self, state, plan, cooperative, fallback: bool, positional, guards,
                            late, star):
        d = _drv
        launch = d.cuLaunchCooperativeKernel if cooperative else d.cuLaunchKernel

        def fail(err, grid, block, shared_mem, stream):
            self._launch_failed(err, state, plan, grid, block, shared_mem, stream, cooperative)

        # With several GPUs the launcher also checks the current context and each
        # array's device (a miss takes the general path, which picks the device).
        device = None
        if _multi_device:
            device = (state.device_id, driver.primary_context(state.device_id),
                      d.cuCtxGetCurrent)
        return make_fast_launcher(
            plan, launch, state.handle, _dims, STREAMS_IN_USE, fail, block_dims=_block_dims,
            fallback=fallback, positional=positional, guards=guards, late=late,
            stream_of=stream_handle, current_stream=current_stream_handle, device=device,
            star=star)

    def bind(self, grid, block, args, shared_mem: int = 0, stream=None, cooperative: bool = False,
             *, user_count: int | None = None, refresh=None) -> "BoundLaunch":
        """A :class:`BoundLaunch` of this kernel with ``args`` packed now, on the current device.

        ``stream=None`` launches on the caller's current stream at each call; a given
        stream is fixed. ``user_count`` (default: all) is how many of ``args`` the user
        gave (the rest are derived, as the JIT's shape/stride parameters);
        ``refresh(i, value, user_args)`` validates a replacement of user argument ``i``
        and returns the new full argument tuple (the JIT's signature check).
        """
        args = tuple(args) if type(args) is not tuple else args
        state = self._select_state()
        plan = build_plan(args, state.param_sizes, self.params, self.name)
        plan.pack(args)
        dims = (dim3(grid, "grid"), dim3(block, "block"))
        check_dims(dims[0], "grid", self.name, grid)
        check_dims(dims[1], "block", self.name, block)
        if type(shared_mem) is not int or shared_mem < 0:
            raise KernelArgumentError(f"shared_mem: expected a non-negative int, got {shared_mem!r}")
        fixed = None if stream is None else stream_handle(stream)
        return BoundLaunch(self, state, plan, args, dims, shared_mem, fixed, cooperative,
                           len(args) if user_count is None else user_count, refresh)

    def last_plan(self):
        """(state, plan) of the last launch (on the device it ran on), or None."""
        state = self._last_state
        if state is None or state.last_plan is None:
            return None
        return state, state.last_plan

    def _select_state(self) -> _DeviceState:
        global _drv, _multi_device
        if _drv is None:
            _drv = drv()
            _multi_device = driver.device_count() > 1
        device_id = driver.current_device_id()
        state = self._state(device_id)
        self._last_device, self._last_state = device_id, state
        return state

    def _plan_for(self, state: _DeviceState, args: tuple):
        """The plan for ``args``: structured (numpy.void) scalars also key on their dtypes."""
        key = tuple(map(type, args))
        plan = state.plans.get(key)
        if plan is not None and plan.dtypes is None:
            return plan
        full_key = signature_of(args)
        plan = state.plans.get(full_key)
        if plan is None:
            plan = build_plan(args, state.param_sizes, self.params, self.name)
            state.plans[full_key] = plan
            if plan.dtypes is None:
                state.plans[key] = plan
        return plan

    def _pack_error(self, state: _DeviceState, args: tuple, exc) -> Exception:
        """A value that does not pack into the plan of its argument types (a dataclass
        field of another kind at a later launch): the full check of the first launch names
        the argument and field; else the packer's own words."""
        try:
            plan = build_plan(args, state.param_sizes, self.params, self.name)
        except KernelArgumentError as named:
            return named
        problem = pack_problem(plan.slots, args, exc)
        return type(problem)(f"{self.name}: {problem}")

    def _check_devices(self, args: tuple) -> None:
        for i, arg in enumerate(args):
            getter = device_getter(type(arg))
            if getter is not None:
                dev = getter(arg)
                if dev is not None and dev != self._last_device:
                    raise KernelArgumentError(
                        f"argument {i} is on device {dev}, but the launch is on device "
                        f"{self._last_device}; use `with jitkern.Device({dev}):` or move the array"
                    )

    def _launch_failed(self, err, state, plan, grid, block, shared_mem, stream,
                       cooperative) -> None:
        d = drv()
        if err == d.CUresult.CUDA_ERROR_INVALID_CONTEXT and self._last_device >= 0:
            # A thread with no current context: use the device this kernel last ran on.
            driver.set_current(self._last_device)
            launch = d.cuLaunchCooperativeKernel if cooperative else d.cuLaunchKernel
            extra = () if cooperative else (0,)
            (err,) = launch(state.handle, *grid, *block, shared_mem, stream, plan.params_ptr, *extra)
            if err == 0:
                return
        if driver.is_kernel_fault(err):  # an earlier kernel's fault: the context is lost,
            check((err,), f"launching {self.name}")  # and its attributes answer nothing true
        device_id = self._last_device
        reasons = diagnose_launch(self, device_id, grid, block, shared_mem, cooperative)
        name = driver._name(d, err)
        if reasons:
            raise LaunchError(f"cannot launch {self.name}: " + "; ".join(reasons) + f" ({name})")
        check((err,), f"launching {self.name}")

    # -- attributes -------------------------------------------------------
    def attributes(self, device_id: int | None = None) -> dict:
        handle = self.handle(device_id)
        d = drv()
        result = {}
        for attr in _ATTRIBUTES:
            enum = getattr(d.CUfunction_attribute, "CU_FUNC_ATTRIBUTE_" + attr.upper(), None)
            if enum is None:
                result[attr] = -1
                continue
            err, value = d.cuFuncGetAttribute(enum, handle)
            result[attr] = int(value) if err == 0 else -1
        return result

    def get_attribute(self, attr: str, device_id: int | None = None) -> int:
        return self.attributes(device_id)[attr]

    def set_attribute(self, attr: str, value: int, device_id: int | None = None) -> None:
        if attr not in SETTABLE_ATTRIBUTES:
            raise JitkernAttributeError(f"kernel attribute {attr!r} is read-only; settable: "
                                 + ", ".join(SETTABLE_ATTRIBUTES))
        d = drv()
        enum = getattr(d.CUfunction_attribute, "CU_FUNC_ATTRIBUTE_" + attr.upper())
        check(d.cuFuncSetAttribute(self.handle(device_id), enum, int(value)),
              f"setting {attr}={value} on {self.name}")

    def occupancy_max_active_blocks(self, block_size: int, shared_mem: int = 0,
                                    device_id: int | None = None) -> int:
        d = drv()
        return int(check(d.cuOccupancyMaxActiveBlocksPerMultiprocessor(
            self.handle(device_id), block_size, shared_mem), "cuOccupancyMaxActiveBlocksPerMultiprocessor"))


# Blocks per cluster: 8 on every GPU with clusters (portable); up to 16 where the kernel
# allows non-portable sizes and the GPU has them (H100/H200).
PORTABLE_CLUSTER_SIZE = 8
NONPORTABLE_CLUSTER_SIZE = 16
CLUSTER_MIN_CC = divmod(min_cc("clusters"), 10)  # (9, 0): compared with (major, minor)


def check_cluster(name: str, grid, cluster, nonportable: bool = False):
    """(grid, cluster) as 3-tuples, after checking what needs no GPU: each cluster
    dimension at least 1 and dividing the grid's, and the cluster's size."""
    cluster3 = dim3(cluster, "cluster")
    grid3 = dim3(grid, "grid")
    limit = NONPORTABLE_CLUSTER_SIZE if nonportable else PORTABLE_CLUSTER_SIZE
    size = cluster3[0] * cluster3[1] * cluster3[2]
    if size > limit:
        hint = ("" if nonportable else
                f"; set kernel.allow_nonportable_cluster_size = True for up to "
                f"{NONPORTABLE_CLUSTER_SIZE} (on GPUs that have them, such as H100)")
        raise KernelArgumentError(
            f"{name}: cluster={cluster!r} has {size} blocks; expected at most {limit} "
            f"blocks per cluster{hint}")
    for c, g, k in zip("xyz", grid3, cluster3):
        if g % k:
            raise LaunchError(f"{name}: cluster={cluster!r} must divide grid={grid!r} "
                              f"(grid {c}={g} is not a multiple of cluster {c}={k})")
    return grid3, cluster3


def cluster_refused(kind: str, name: str) -> KernelArgumentError:
    """The error for ``cluster=`` given to a kernel kind that sizes its own grid."""
    return KernelArgumentError(
        f"{name}: cluster= is not accepted by {kind}: it picks its own grid and block for "
        "each call, so there is no grid for a cluster to divide; launch in thread-block "
        "clusters from a RawKernel or a @jitkern.rawkernel kernel instead")


_cluster_devices: dict[int, tuple[int, int]] = {}  # device id -> its compute capability


def require_cluster_device(name: str, device_id: int) -> None:
    """Refuse a cluster launch on a GPU older than sm_90 (its capability read once)."""
    cc = _cluster_devices.get(device_id)
    if cc is None:
        cc = _cluster_devices[device_id] = driver.compute_capability(device_id)
    if cc < CLUSTER_MIN_CC:
        raise LaunchError(
            f"{name}: cluster= needs a GPU of compute capability 9.0 or newer "
            f"(thread-block clusters came with sm_90); device {device_id} is "
            f"{cc[0]}.{cc[1]} (sm_{cc[0]}{cc[1]}); launch without cluster=")


def cluster_config(d, grid3, block3, shared_mem: int, stream, cluster3, cooperative: bool):
    """A CUlaunchConfig (of driver module ``d``) with the cluster dimension (and
    cooperative) attribute."""
    config = d.CUlaunchConfig()
    config.gridDimX, config.gridDimY, config.gridDimZ = grid3
    config.blockDimX, config.blockDimY, config.blockDimZ = block3
    config.sharedMemBytes = shared_mem
    config.hStream = stream
    attrs = []
    attr = d.CUlaunchAttribute()
    attr.id = d.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
    attr.value.clusterDim.x, attr.value.clusterDim.y, attr.value.clusterDim.z = cluster3
    attrs.append(attr)
    if cooperative:
        attr = d.CUlaunchAttribute()
        attr.id = d.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_COOPERATIVE
        attr.value.cooperative = 1
        attrs.append(attr)
    config.attrs = attrs
    config.numAttrs = len(attrs)
    return config


_drv = None
_multi_device = False
# What this module keeps from the driver: fresh under driver.use(fake), restored after.
driver.resets(globals(), _drv=drv, _multi_device=lambda: driver.device_count() > 1,
              _cluster_devices=dict, _modules=dict)

# Normalised launch dimensions by the value the caller gave (ints and tuples are
# hashable): a dict hit replaces a function call on the hot path.
# Grids and blocks apart: a value is checked against its own limits once (limits.py), and
# only a checked value is memoised, so the hot path's dict hit means "within CUDA's limits".
_dims: dict = {}
_block_dims: dict = {}


def _dims_of(value, what: str, name: str | None = None) -> tuple[int, int, int]:
    dims = dim3(value, what)
    check_dims(dims, what, name, value)
    memo = _block_dims if what == "block" else _dims
    if len(memo) < 4096:
        try:
            memo[value] = dims
        except TypeError:  # a list: not hashable
            pass
    return dims


def checked_dims(grid, block):
    """(grid, block) as 3-tuples checked against CUDA's limits (memoised as a launch
    memoises them), or None where either is not a valid launch dimension: the launch's
    general path then says why, when the launch is made."""
    try:
        g = _dims.get(grid) or _dims_of(grid, "grid")
        b = _block_dims.get(block) or _dims_of(block, "block")
    except Exception:  # noqa: BLE001 - any invalid value: the general path raises it
        return None
    return g, b


def _as_args(args) -> tuple:
    if isinstance(args, list):
        return tuple(args)
    raise KernelArgumentError(f"args: expected a tuple of kernel arguments, got {type(args).__name__}")


def param_layout(handle, binary, symbol: str) -> list[tuple[int, int]] | None:
    """(offset, size) of each parameter of kernel ``symbol``; None where nothing can tell.

    From the CUBIN's own parameter table when the binary is a CUBIN (no driver call),
    else from the driver, asking for the count first: probing ``cuFuncGetParamInfo``
    past the last parameter fails with CUDA_ERROR_INVALID_VALUE, which every
    compute-sanitizer run of a user's program would report.
    """
    return cubin.param_layout(binary, symbol, lambda: _driver_param_layout(handle))


def _driver_param_layout(handle) -> list[tuple[int, int]] | None:
    d = drv()
    count_of = getattr(d, "cuFuncGetParamCount", None)
    info = getattr(d, "cuFuncGetParamInfo", None)
    if count_of is None or info is None:
        return None
    try:
        err, count = count_of(handle)
    except RuntimeError:  # the binding has it, the installed driver does not
        return None
    if err != 0:
        return None
    layout = []
    for i in range(int(count)):
        err, offset, size = info(handle, i)
        if err != 0:
            return None
        layout.append((int(offset), int(size)))
    return layout


def diagnose_launch(fn: Function, device_id: int, grid, block, shared_mem, cooperative) -> list[str]:
    """Reasons a launch configuration is invalid on ``device_id`` (empty if none found)."""
    if device_id < 0:
        device_id = driver.current_device_id()
    reasons = []
    attr = driver.device_attribute
    threads = block[0] * block[1] * block[2]
    try:
        kernel_max = fn.get_attribute("max_threads_per_block", device_id)
    except CUDAError:
        kernel_max = attr(device_id, "max_threads_per_block")
    if threads > kernel_max:
        reasons.append(f"block={block} has {threads} threads, more than the {kernel_max} this "
                       f"kernel allows per block on device {device_id}")
    limits = [attr(device_id, f"max_block_dim_{c}") for c in "xyz"]
    for c, value, limit in zip("xyz", block, limits):
        if value > limit:
            reasons.append(f"block {c}={value} is over device {device_id}'s limit {limit}")
    glimits = [attr(device_id, f"max_grid_dim_{c}") for c in "xyz"]
    for c, value, limit in zip("xyz", grid, glimits):
        if value > limit:
            reasons.append(f"grid {c}={value} is over device {device_id}'s limit {limit}")
    try:
        dyn_max = fn.get_attribute("max_dynamic_shared_size_bytes", device_id)
    except CUDAError:
        dyn_max = attr(device_id, "max_shared_memory_per_block")
    if shared_mem > dyn_max:
        optin = attr(device_id, "max_shared_memory_per_block_optin")
        hint = (f"; raise kernel.max_dynamic_shared_size_bytes (up to {optin}) first"
                if shared_mem <= optin else f"; the device allows at most {optin}")
        reasons.append(f"shared_mem={shared_mem} bytes is over this kernel's limit of {dyn_max}{hint}")
    if cooperative:
        try:
            per_sm = fn.occupancy_max_active_blocks(threads, shared_mem, device_id)
            sms = attr(device_id, "multiprocessor_count")
            blocks = grid[0] * grid[1] * grid[2]
            if blocks > per_sm * sms:
                reasons.append(f"a cooperative launch needs all {blocks} blocks resident at once, "
                               f"but device {device_id} fits {per_sm * sms} of this kernel")
        except CUDAError:
            pass
    return reasons
