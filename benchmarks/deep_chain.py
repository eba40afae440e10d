"""Deep chain: elementwise ops on a length-16 vector, the scalar chain's blocks on arrays; µs per op.

Each block is ``t = tanh(log(exp(sin(t) * 0.5 + x)))`` with ``x`` the input vector.
"""

from __future__ import annotations

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
