"""Loading compiled binaries on devices and launching their kernels.

A :class:`Binary` is loaded at most once per device (``cuModuleLoadData`` in
the device's primary context). :class:`Function` is a kernel of a binary that
can be launched on any device: it resolves its ``CUfunction`` per device on
first use, and keeps one packing :class:`~.launch.Plan` per argument-type
signature.
"""

from __future__ import annotations

import threading

from ..errors import CUDAError, JitkernAttributeError, KernelArgumentError, LaunchError
from . import driver
from .device import STREAMS_IN_USE, _stream_state, current_stream_handle, stream_handle
from .driver import check, drv
from .launch import build_plan, device_getter, dim3, make_fast_launcher, signature_of

_modules: dict[tuple[str, int], "LoadedModule"] = {}
_modules_lock = threading.Lock()


class LoadedModule:
    """A binary loaded on one device."""

    __slots__ = ("binary", "device_id", "handle", "_functions")

    def __init__(self, binary, device_id: int):
        d = drv()
        driver.set_current(device_id)
        self.binary = binary
        self.device_id = device_id
        data = binary.data if binary.fmt == "cubin" else binary.data.rstrip(b"\0") + b"\0"
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
            drv().cuModuleUnload(self.handle)
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

    __slots__ = ("handle", "param_sizes", "plans", "last_plan", "device_id")

    def __init__(self, handle, param_sizes, device_id: int = 0):
        self.handle = handle
        self.param_sizes = param_sizes
        self.device_id = device_id
        self.plans: dict = {}
        self.last_plan = None


class Function:
    """One kernel of a :class:`~.compiler.Binary`, launchable on any device."""

    def __init__(self, binary, symbol: str, *, display_name: str | None = None,
                 check_param_sizes: bool = True, params=None):
        self.binary = binary
        self.params = params  # parsed parameter list (name, ctype, pointer), if known
        self.symbol = binary.lowered(symbol)
        self.name = display_name or symbol
        self._check_sizes = check_param_sizes
        self._states: dict[int, _DeviceState] = {}
        self._last_device = -1
        self._last_state: _DeviceState | None = None
        self._lock = threading.Lock()
        # The generated whole-launch function for the last signature (see
        # launch.make_fast_launcher); None until a plain launch succeeded.
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
                    sizes = _param_sizes(handle) if self._check_sizes else None
                    state = self._states[device_id] = _DeviceState(handle, sizes, device_id)
        return state

    def handle(self, device_id: int | None = None):
        if device_id is None:
            device_id = driver.current_device_id()
        return self._state(device_id).handle

    def param_sizes(self, device_id: int | None = None) -> list[int] | None:
        if device_id is None:
            device_id = driver.current_device_id()
        return self._state(device_id).param_sizes

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
        if plan is None or plan.dtypes is not None or not plan.pack_if_same(args):
            plan = state.last_plan = self._plan_for(state, args)
            plan.pack(args)
        if _multi_device:
            self._check_devices(args)
        dims = _dims.get(grid)
        gx, gy, gz = dims if dims is not None else _dims_of(grid, "grid")
        dims = _dims.get(block)
        bx, by, bz = dims if dims is not None else _dims_of(block, "block")
        if stream is None:
            stack = _stream_state.stack
            s = stack[-1].ptr if stack else 0
        else:
            s = stream_handle(stream)
        d = _drv
        try:
            if cooperative:
                (err,) = d.cuLaunchCooperativeKernel(state.handle, gx, gy, gz, bx, by, bz,
                                                      shared_mem, s, plan.params_ptr)
            else:
                (err,) = d.cuLaunchKernel(state.handle, gx, gy, gz, bx, by, bz, shared_mem, s,
                                          plan.params_ptr, 0)
        except OverflowError:
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

    def _install_fast(self, state: _DeviceState, plan, cooperative: bool) -> None:
        """Make ``self.fast`` the generated launcher of ``plan`` (made once per plan)."""
        self.fast = self.fast_launcher(state, plan, cooperative)
        self._fast_cooperative = cooperative

    def fast_launcher(self, state: _DeviceState, plan, cooperative: bool, fallback=None,
                      positional: bool = False, guards=(), guard_env=None):
        """The generated launcher for ``plan`` (see launch.make_fast_launcher), cached on it,
        so a kernel launched with alternating signatures does not regenerate code."""
        key = (cooperative, fallback, positional, tuple(guards))
        run = plan.launchers.get(key)
        if run is None:
            d = _drv
            launch = d.cuLaunchCooperativeKernel if cooperative else d.cuLaunchKernel

            def fail(err, grid, block, shared_mem, stream):
                self._launch_failed(err, state, plan, grid, block, shared_mem, stream,
                                    cooperative)

            # With several GPUs the launcher also checks the current context and each
            # array's device (a miss takes the general path, which picks the device).
            device = None
            if _multi_device:
                device = (state.device_id, driver.primary_context(state.device_id),
                          d.cuCtxGetCurrent)
            run = plan.launchers[key] = make_fast_launcher(
                plan, launch, state.handle, _dims, STREAMS_IN_USE, fail,
                fallback=fallback, positional=positional, guards=guards, guard_env=guard_env,
                stream_of=stream_handle, current_stream=current_stream_handle, device=device)
        return run

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


_drv = None
_multi_device = False

# Normalised launch dimensions by the value the caller gave (ints and tuples are
# hashable): a dict hit replaces a function call on the hot path.
_dims: dict = {}


def _dims_of(value, what: str) -> tuple[int, int, int]:
    dims = dim3(value, what)
    if len(_dims) < 4096:
        try:
            _dims[value] = dims
        except TypeError:  # a list: not hashable
            pass
    return dims


def _as_args(args) -> tuple:
    if isinstance(args, list):
        return tuple(args)
    raise KernelArgumentError(f"args: expected a tuple of kernel arguments, got {type(args).__name__}")


def _param_sizes(handle) -> list[int] | None:
    """Sizes of the kernel's parameters (None where the driver cannot tell)."""
    d = drv()
    get = getattr(d, "cuFuncGetParamInfo", None)
    if get is None:
        return None
    sizes = []
    i = 0
    while True:
        err, _offset, size = get(handle, i)
        if err != 0:
            break
        sizes.append(int(size))
        i += 1
        if i > 4096:
            return None
    return sizes


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
