"""Random kernels with divergent control flow: the vectorised simulator against the
per-thread scheduler, bit for bit (issue 19's differential check on generated kernels)."""

import importlib.util

import numpy as np
import pytest

from jitkern.sim import vector

VARS = ("a", "b", "c")
OPS = ("+", "-", "*", "&", "|", "^")


class Generator:
    """Writes the body of a random kernel over int32 locals a, b, c and arrays x, acc."""

    returns = True  # may threads return early

    def __init__(self, rng):
        self.rng = rng
        self.loops = 0  # loop variables made so far (each loop has its own names)
        self.lines: list = []

    def pick(self, items):
        return items[int(self.rng.integers(len(items)))]

    def value(self) -> str:
        kind = int(self.rng.integers(4))
        if kind == 0:
            return f"np.int32({int(self.rng.integers(-50, 50))})"
        if kind == 1:
            return f"x[({self.pick(VARS)} & 0x7FFF) % n]"
        return self.pick(VARS)

    def expr(self) -> str:
        if self.rng.random() < 0.2:
            return f"({self.value()} // ({self.value()} | np.int32(1)))"
        return f"({self.value()} {self.pick(OPS)} {self.value()})"

    def cond(self) -> str:
        op = self.pick(("<", "<=", "==", "!=", ">"))
        text = f"{self.expr()} % 3 {op} {self.value()} % 3"
        if self.rng.random() < 0.3:
            text = f"{text} {self.pick(('and', 'or'))} {self.pick(VARS)} > np.int32(0)"
        return text

    def emit(self, depth: int, text: str) -> None:
        self.lines.append("    " * depth + text)

    def block(self, depth: int, in_loop: bool, budget: int) -> None:
        for _ in range(int(self.rng.integers(1, 4))):
            self.statement(depth, in_loop, budget)

    def statement(self, depth: int, in_loop: bool, budget: int) -> None:
        roll = self.rng.random()
        if budget <= 0 or roll < 0.35:
            self.emit(depth, f"{self.pick(VARS)} = {self.expr()}")
        elif roll < 0.5:
            self.emit(depth, f"jit.atomic_add(acc, {self.pick(VARS)} & 3, {self.pick(VARS)})")
        elif roll < 0.7:
            self.emit(depth, f"if {self.cond()}:")
            self.block(depth + 1, in_loop, budget - 1)
            if self.rng.random() < 0.5:
                self.emit(depth, "else:")
                self.block(depth + 1, in_loop, budget - 1)
        elif roll < 0.8:
            self.loops += 1
            j = f"j{self.loops}"
            self.emit(depth, f"for {j} in range(({self.pick(VARS)} & 7) - 2, 6):")
            self.emit(depth + 1, f"c = c + {j}")
            self.block(depth + 1, True, budget - 1)
        elif roll < 0.88:
            self.loops += 1
            w = f"w{self.loops}"
            self.emit(depth, f"{w} = 0")
            self.emit(depth, f"while {w} < ({self.pick(VARS)} & 3) + 1:")
            self.emit(depth + 1, f"{w} += 1")
            self.block(depth + 1, True, budget - 1)
        elif in_loop:
            self.emit(depth, f"if {self.cond()}:")
            self.emit(depth + 1, self.pick(("break", "continue")))
        elif not self.returns:
            self.emit(depth, f"{self.pick(VARS)} = {self.expr()}")
        else:
            self.emit(depth, f"if {self.cond()}:")
            self.emit(depth + 1, "out[i] = a")
            self.emit(depth + 1, "return")

    def source(self) -> str:
        self.block(1, False, 3)
        head = [
            "import numpy as np",
            "import jitkern",
            "from jitkern import jit",
            "",
            "@jitkern.rawkernel()",
            "def k(x, out, acc, n):",
            "    i = jit.grid(1)",
            "    a = x[i % n]",
            "    b = np.int32(i)",
            "    c = np.int32(7)",
        ]
        return "\n".join(head + self.lines + ["    out[i] = a + b * np.int32(3) + c", ""])


def load(path, text):
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.k


@pytest.mark.parametrize("trial", range(4))
def test_random_kernels_agree_bit_for_bit(trial, tmp_path, rng, monkeypatch):
    monkeypatch.setattr(vector, "DIFFERENTIAL", False)
    for k in range(10):
        text = Generator(rng).source()
        kernel = load(tmp_path / f"fuzz_{trial}_{k}.py", text)
        x = rng.integers(-1000, 1000, 64).astype(np.int32)
        results = {}
        for mode in ("threads", "vector"):
            monkeypatch.setattr(vector, "MODE", mode)
            out, acc = np.full(96, -1, np.int32), np.zeros(4, np.int32)
            kernel.simulate[3, 32](x, out, acc, 64)
            assert kernel.simulate.last_path == mode, kernel.simulate.why_threads
            results[mode] = (out, acc)
        for want, got in zip(results["threads"], results["vector"]):
            assert want.tobytes() == got.tobytes(), text


class BlockGenerator(Generator):
    """Adds what threads of a block share: shared memory between two barriers, warp
    shuffles and votes with every lane, block-wide counts (64 threads per block)."""

    returns = False  # every thread reaches every barrier

    def statement(self, depth: int, in_loop: bool, budget: int) -> None:
        roll = self.rng.random()
        if in_loop or roll < 0.5:  # loops may be left early: only per-thread work there
            return super().statement(depth, in_loop, budget)
        var = self.pick(VARS)
        if roll < 0.65:
            self.emit(depth, f"s[t] = {self.expr()}")
            self.emit(depth, "jit.syncthreads()")
            self.emit(depth, f"{var} = {var} ^ s[(t + {self.value()} % 64 + 64) % 64]")
            self.emit(depth, "jit.syncthreads()")
        elif roll < 0.8:
            how = self.pick(("shfl_down_sync", "shfl_up_sync", "shfl_xor_sync", "shfl_sync"))
            lane = f"np.int32({int(self.rng.integers(0, 32))})"
            width = self.pick(("", ", 8", ", 16"))
            self.emit(depth, f"{var} = {var} + jit.{how}(FULL, {self.pick(VARS)}, {lane}{width})")
        elif roll < 0.9:
            vote = self.pick(("ballot_sync", "any_sync", "all_sync"))
            self.emit(depth, f"{var} = {var} + np.int32(jit.{vote}(FULL, {self.cond()}))")
        else:
            self.emit(depth, f"{var} = {var} + jit.syncthreads_count({self.cond()})")

    def source(self) -> str:
        text = super().source().replace("    i = jit.grid(1)\n", (
            "    i = jit.grid(1)\n"
            "    t = jit.threadIdx.x\n"
            "    s = jit.shared_memory(np.int32, 64)\n"))
        return text.replace("import numpy as np\n", "import numpy as np\nFULL = 0xFFFFFFFF\n")

    def block(self, depth: int, in_loop: bool, budget: int) -> None:
        if depth == 1:  # the top level: every thread is there (no return before it)
            for _ in range(int(self.rng.integers(2, 6))):
                self.statement(depth, False, 0 if self.rng.random() < 0.5 else budget)
            return
        for _ in range(int(self.rng.integers(1, 4))):
            Generator.statement(self, depth, in_loop, budget)


@pytest.mark.parametrize("trial", range(3))
def test_random_block_kernels_agree_bit_for_bit(trial, tmp_path, rng, monkeypatch):
    monkeypatch.setattr(vector, "DIFFERENTIAL", False)
    for k in range(10):
        text = BlockGenerator(rng).source()
        kernel = load(tmp_path / f"block_{trial}_{k}.py", text)
        x = rng.integers(-1000, 1000, 192).astype(np.int32)
        results = {}
        for mode in ("threads", "vector"):
            monkeypatch.setattr(vector, "MODE", mode)
            out, acc = np.full(192, -1, np.int32), np.zeros(4, np.int32)
            kernel.simulate[3, 64](x, out, acc, 192)
            assert kernel.simulate.last_path == mode, kernel.simulate.why_threads
            results[mode] = (out, acc)
        for want, got in zip(results["threads"], results["vector"]):
            assert want.tobytes() == got.tobytes(), text
