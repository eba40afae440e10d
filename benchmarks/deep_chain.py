"""Deep chain: elementwise ops on a length-16 vector, the scalar chain's blocks on arrays; µs per op.

Each block is ``t = tanh(log(exp(sin(t) * 0.5 + x)))`` with ``x`` the input vector.
"""

from __future__ import annotations

from time import process_time_ns as time_ns

import numpy as np

from ._peers import need
from .workload import Workload

OPS_PER_BLOCK = 6
LENGTH = 16


def start():
    return np.linspace(-1.0, 1.0, LENGTH)


def floor(blocks: int):
    """Hand-written NumPy forward (keeping what the reverse pass needs) and reverse pass."""
    x = start()

    def run():
        tape = []
        t = np.zeros(LENGTH)
        for _ in range(blocks):
            s = np.sin(t) * 0.5 + x
            e = np.exp(s)
            t_new = np.tanh(np.log(e))
            tape.append((t, e, t_new))
            t = t_new
        dx = np.zeros(LENGTH)
        dt = np.ones(LENGTH)
        for t, e, t_new in reversed(tape):
            ds = dt * (1.0 - t_new * t_new) / e * e
            dx += ds
            dt = ds * 0.5 * np.cos(t)
        return [dx]

    return run


def trackerlab(blocks: int):
    import trackerlab as tl

    x0 = start()

    def run():
        x = tl.param(x0)
        t = np.zeros(LENGTH)
        for _ in range(blocks):
            t = tl.tanh(tl.log(tl.exp(tl.sin(t) * 0.5 + x)))
        tl.back_(t, 1.0)
        return [x.grad]

    return run


def pytorch(blocks: int):
    torch = need("torch")
    x0 = start()

    def run():
        x = torch.tensor(x0, requires_grad=True)
        t = torch.zeros(LENGTH, dtype=torch.float64)
        for _ in range(blocks):
            t = torch.tanh(torch.log(torch.exp(torch.sin(t) * 0.5 + x)))
        t.backward(torch.ones(LENGTH, dtype=torch.float64))
        return [x.grad.numpy()]

    return run


def autograd(blocks: int):
    ag = need("autograd")
    anp = need("autograd.numpy")
    x0 = start()

    def f(x):
        t = np.zeros(LENGTH)
        for _ in range(blocks):
            t = anp.tanh(anp.log(anp.exp(anp.sin(t) * 0.5 + x)))
        return anp.sum(t)

    df = ag.grad(f)

    def run():
        return [df(x0)]

    return run


IMPLEMENTATIONS = {"floor": floor, "trackerlab": trackerlab, "pytorch": pytorch, "autograd": autograd}


def workload(smoke: bool) -> Workload:
    ops = 60 if smoke else 100_002
    blocks = ops // OPS_PER_BLOCK
    return Workload(
        name="deep chain",
        detail=f"{blocks * OPS_PER_BLOCK:,} elementwise ops, length {LENGTH}",
        unit="µs/op",
        per=blocks * OPS_PER_BLOCK,
        target="≤ 3 µs/op",
        target_value=3.0,
        target_kind="per_op",
        size=blocks,
        implementations=IMPLEMENTATIONS,
        repeats=9,
    )


def profile(blocks: int = 100_002 // OPS_PER_BLOCK, peers: bool = True) -> str:
    """Where trackerlab's deep chain spends its time: the forward pass (recording) and the time the cyclic
    garbage collector runs during it, the backward pass, and the pullbacks alone, in µs per op, next to the
    hand-written NumPy forward and reverse pass. With ``peers`` the peers are imported first, as in
    ``python -m benchmarks`` (the collector then also scans their objects).

    ``python -m benchmarks.deep_chain`` prints it (``--alone`` without importing the peers).
    """
    import gc
    import statistics
    import time

    if peers:
        for name in ("torch", "autograd"):
            try:
                __import__(name)
            except ImportError:
                pass
    import trackerlab as tl

    ops = blocks * OPS_PER_BLOCK
    collector = {"time": 0.0, "started": 0.0, "runs": [0, 0, 0]}

    def timed(phase, info):
        if phase == "start":
            collector["started"] = time.process_time()
        else:
            collector["time"] += time.process_time() - collector["started"]
            collector["runs"][info["generation"]] += 1

    rows = {key: [] for key in ("forward", "collector", "backward", "pullbacks", "floor")}
    runs = []
    objects = 0.0
    gc.callbacks.append(timed)
    try:
        for _ in range(5):
            x = tl.param(start())
            before = len(gc.get_objects())
            collector.update(time=0.0, runs=[0, 0, 0])
            t = np.zeros(LENGTH)
            begin = time.process_time()
            for _ in range(blocks):
                t = tl.tanh(tl.log(tl.exp(tl.sin(t) * 0.5 + x)))
            rows["forward"].append(time.process_time() - begin)
            rows["collector"].append(collector["time"])
            runs.append(list(collector["runs"]))
            objects = (len(gc.get_objects()) - before) / ops
            begin = time.process_time()
            tl.back_(t, 1.0)
            rows["backward"].append(time.process_time() - begin)
            rows["pullbacks"].append(_pullbacks_alone(tl, t))
            del t, x
            begin = time.process_time()
            floor(blocks)()
            rows["floor"].append(time.process_time() - begin)
    finally:
        gc.callbacks.remove(timed)

    def per_op(key):
        return statistics.median(rows[key]) / ops * 1e6

    lines = [
        f"deep chain, {ops:,} ops on a length-{LENGTH} vector, median of 5 (CPU time; peers imported: {peers})",
        f"  forward pass (recording)         {per_op('forward'):6.2f} µs/op",
        f"    of which the cyclic collector  {per_op('collector'):6.2f} µs/op "
        f"(collections per run, generations 0/1/2: {'/'.join(str(n) for n in runs[len(runs) // 2])}; "
        f"{objects:.2f} objects it tracks kept per op)",
        f"  backward pass (back_)            {per_op('backward'):6.2f} µs/op",
        f"    of which the pullbacks alone   {per_op('pullbacks'):6.2f} µs/op (each node's rule called directly)",
        f"  hand-written NumPy, both passes  {per_op('floor'):6.2f} µs/op",
    ]
    return "\n".join(lines)


def _pullbacks_alone(tl, y) -> float:
    """CPU seconds to call the rule of every node of ``y``'s chain once, on its saved values, with a sensitivity
    of ones: what the walk's pullbacks cost without the walk."""
    calls = []
    node = y.tracker
    while not node.isleaf:
        values = [a.data if isinstance(a, tl.Tracked) else a for a in node.args]
        rules = node.func.rule
        for i, a in enumerate(node.args):
            if isinstance(a, tl.Tracked) and rules[i] is not None:
                calls.append((rules[i], node.data, values))
        inner = [a for a in node.args if isinstance(a, tl.Tracked) and not a.isleaf]
        if not inner:
            break
        node = inner[0]
    g = np.ones(LENGTH)
    begin = time_ns()
    for rule, ans, values in calls:
        rule(g, ans, *values)
    return (time_ns() - begin) / 1e9


if __name__ == "__main__":
    import sys

    print(profile(peers="--alone" not in sys.argv[1:]))
