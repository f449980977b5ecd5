"""Graph updates (issue 20, part 5): new arguments for a captured 100-node graph, updated in
place against captured again, and against launching one by one.

Run: PYTHONPATH=. python benchmarks/bench_graph_update.py

The work: a chain of 100 dependent launches of a small @jitkern.rawkernel kernel (1,024
float32; node 0 reads an input array, each later node the previous node's output). Each
iteration runs the chain on a different input (one of 4 arrays of fresh random data), the
way a serving loop gets a new batch:

- one by one: 100 launches;
- recapture + replay: capture the 100 launches into a new graph (capture, instantiate),
  launch it;
- update 1 node + replay: ``g.update(node0, x=new_input)`` on one captured graph, launch;
- update 100 nodes + replay: every node gets new arrays (the chain moves to another pair
  of work buffers and a new input), launch: the worst case of an update;
- update_many 100 nodes + replay: the same in one ``g.update_many`` call (by position);
- replay only (no new arguments): the floor of a graph.

Host time is the issuing work alone (GPU idle before it), end to end adds waiting for the
GPU; medians of ROUNDS iterations, all on one stream. Every way's result is checked equal
to NumPy's float32 chain. Prints a markdown table last.
"""

from __future__ import annotations

import datetime
import statistics
import time

import numpy as np

import jitkern
from jitkern import jit
from jitkern.runtime import driver

N = 1024
CHAIN = 100
THREADS = 128
BLOCKS = N // THREADS
INPUTS = 4
ROUNDS = 41


@jitkern.rawkernel()
def step(x, y, n):
    i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    if i < n:
        y[i] = x[i] * np.float32(0.5) + np.float32(1.0)


def reference(x0: np.ndarray) -> np.ndarray:
    x = x0.astype(np.float32)
    for _ in range(CHAIN):
        x = x * np.float32(0.5) + np.float32(1.0)
    return x


def chain(inp, a, b, stream) -> None:
    """inp -> b -> a -> b ... : 100 launches, the last one writing ``a``."""
    n = np.int32(N)
    step[BLOCKS, THREADS, 0, stream](inp, b, n)
    x, y = b, a
    for _ in range(CHAIN - 1):
        step[BLOCKS, THREADS, 0, stream](x, y, n)
        x, y = y, x


class Case:
    """One way of running the chain on input ``i``: ``issue(i)`` queues it and returns the
    array holding the result."""

    def __init__(self, name, issue):
        self.name, self.issue = name, issue


def cases(inputs, stream):
    pairs = [(jitkern.empty(N, np.float32), jitkern.empty(N, np.float32)) for _ in range(2)]
    for a, b in pairs:
        a.fill(np.nan)
        b.fill(np.nan)
    a, b = pairs[0]

    def one_by_one(i):
        chain(inputs[i], a, b, stream)
        return a

    def recapture(i):
        with jitkern.graph.capture(stream) as g:
            chain(inputs[i], a, b, stream)
        g.launch(stream)
        return a

    with jitkern.graph.capture(stream) as captured:
        chain(inputs[0], a, b, stream)
    captured.upload(stream)
    first = captured.node(step, 0)

    def update_one(i):
        captured.update(first, x=inputs[i])
        captured.launch(stream)
        return a

    with jitkern.graph.capture(stream) as moving:
        chain(inputs[0], a, b, stream)
    moving.upload(stream)
    nodes = moving.nodes()
    state = {"pair": 0}

    def update_all(i):
        state["pair"] ^= 1  # every node gets the other pair of work buffers
        pa, pb = pairs[state["pair"]]
        moving.update(nodes[0], x=inputs[i], y=pb)
        x, y = pb, pa
        for node in nodes[1:]:
            moving.update(node, x=x, y=y)
            x, y = y, x
        moving.launch(stream)
        return pa

    with jitkern.graph.capture(stream) as many:
        chain(inputs[0], a, b, stream)
    many.upload(stream)
    many_nodes = many.nodes()
    n = np.int32(N)
    state_many = {"pair": 0}

    def update_many(i):
        state_many["pair"] ^= 1
        pa, pb = pairs[state_many["pair"]]
        updates = [(many_nodes[0], (inputs[i], pb, n))]
        x, y = pb, pa
        for node in many_nodes[1:]:
            updates.append((node, (x, y, n)))
            x, y = y, x
        many.update_many(updates)
        many.launch(stream)
        return pa

    with jitkern.graph.capture(stream) as still:
        chain(inputs[0], a, b, stream)
    still.upload(stream)

    def replay_only(i):
        still.launch(stream)
        return a

    return [Case("one by one (100 @rawkernel launches)", one_by_one),
            Case("recapture + replay", recapture),
            Case("update 1 node + replay", update_one),
            Case("update 100 nodes + replay", update_all),
            Case("update_many 100 nodes (one call) + replay", update_many),
            Case("replay only (no new arguments)", replay_only)]


def measure(case: Case, inputs, starts, stream) -> list:
    """[host us, issue + sync us, result check] for ``case`` (medians over ROUNDS)."""
    hosts, ends, ok = [], [], True
    for r in range(ROUNDS):
        i = r % INPUTS
        stream.synchronize()
        t0 = time.perf_counter()
        out = case.issue(i)
        t1 = time.perf_counter()
        stream.synchronize()
        t2 = time.perf_counter()
        hosts.append((t1 - t0) * 1e6)
        ends.append((t2 - t0) * 1e6)
        if case.name.startswith("replay only"):
            i = 0  # the captured input: nothing was updated
        ok = ok and bool(np.array_equal(out.get(stream=stream), reference(starts[i])))
    return [statistics.median(hosts), statistics.median(ends), "yes" if ok else "NO"]


def table(headers, rows) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for row in rows:
        out.append("| " + " | ".join(f"{c:.3g}" if isinstance(c, float) else str(c)
                                     for c in row) + " |")
    return "\n".join(out)


def main():
    dev = driver.current_device_id()
    label = f"{driver.device_name(dev)}, {datetime.date.today().isoformat()}"
    rng = np.random.default_rng()
    starts = [rng.standard_normal(N).astype(np.float32) for _ in range(INPUTS)]
    stream = jitkern.Stream()
    with stream:  # every array on the stream every way runs on: no cross-stream waits
        inputs = [jitkern.asarray(x) for x in starts]
        chain(inputs[0], *(jitkern.empty(N, np.float32) for _ in range(2)), stream)  # compile
        stream.synchronize()
        rows = []
        for case in cases(inputs, stream):
            case.issue(0)  # warm: an update's first call makes its packers
            stream.synchronize()
            rows.append([case.name, *measure(case, inputs, starts, stream)])
    base_host, base_end = rows[1][1], rows[1][2]  # recapture + replay
    for row in rows:
        row.insert(2, base_host / row[1])
        row.insert(4, base_end / row[3])
    print(f"\n## {CHAIN}-node graph, a new input each iteration ({N} float32; {label})\n")
    print(table(["way", "host us per iteration", "x faster than recapture (host)",
                 "issue + sync us", "x faster (end to end)", "result == NumPy"], rows))


if __name__ == "__main__":
    from needs import require_gpu  # (benchmarks/ is on sys.path: the script's folder)

    require_gpu(__file__)
    main()
