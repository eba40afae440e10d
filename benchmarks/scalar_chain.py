"""Scalar chain: one input through blocks of sin, mul, add, exp, log, tanh; forward and backward, µs per op.

Each block is ``t = tanh(log(exp(sin(t) * 0.5 + x)))``, so every value stays in (-1, 1) and the gradient
with respect to ``x`` (which every block adds in again) neither vanishes nor explodes.
"""

from __future__ import annotations

import math
import sys

from ._peers import micrograd_value, need
from .workload import Workload

X = 0.3
OPS_PER_BLOCK = 6


def floor(blocks: int):
    """Hand-written forward and reverse pass in Python floats."""

    def run():
        sin, exp, log, tanh = math.sin, math.exp, math.log, math.tanh
        tape = []
        t = 0.0
        for _ in range(blocks):
            s = 0.5 * sin(t) + X
            e = exp(s)
            t_new = tanh(log(e))
            tape.append((t, e, t_new))
            t = t_new
        dx = 0.0
        dt = 1.0
        for t, e, t_new in reversed(tape):
            ds = dt * (1.0 - t_new * t_new) / e * e  # tanh', log', exp'
            dx += ds
            dt = ds * 0.5 * math.cos(t)
        return [dx]

    return run


def trackerlab(blocks: int):
    import trackerlab as tl

    def run():
        x = tl.param(X)
        t = 0.0
        for _ in range(blocks):
            t = tl.tanh(tl.log(tl.exp(tl.sin(t) * 0.5 + x)))
        tl.back_(t)
        return [x.grad]

    return run


def trackerlab_gradient(blocks: int):
    """The same chain through ``gradient``: its result is tracked, ready to be differentiated again."""
    import trackerlab as tl

    def chain(x):
        t = 0.0
        for _ in range(blocks):
            t = tl.tanh(tl.log(tl.exp(tl.sin(t) * 0.5 + x)))
        return t

    def run():
        return [tl.data(tl.gradient(chain, X)[0])]

    return run


def micrograd(blocks: int):
    Value = micrograd_value()

    def run():
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 10 * blocks * OPS_PER_BLOCK + 1000))  # its topological sort recurses
        try:
            x = Value(X)
            t = Value(0.0)
            for _ in range(blocks):
                t = ((t.sin() * 0.5) + x).exp().log().tanh()
            t.backward()
            return [x.grad]
        finally:
            sys.setrecursionlimit(limit)

    return run


def pytorch(blocks: int):
    torch = need("torch")

    def run():
        x = torch.tensor(X, dtype=torch.float64, requires_grad=True)
        t = torch.tensor(0.0, dtype=torch.float64)
        for _ in range(blocks):
            t = torch.tanh(torch.log(torch.exp(torch.sin(t) * 0.5 + x)))
        t.backward()
        return [x.grad.item()]

    return run


def autograd(blocks: int):
    ag = need("autograd")
    anp = need("autograd.numpy")

    def f(x):
        t = 0.0
        for _ in range(blocks):
            t = anp.tanh(anp.log(anp.exp(anp.sin(t) * 0.5 + x)))
        return t

    df = ag.grad(f)

    def run():
        return [df(X)]

    return run


def workload(smoke: bool) -> Workload:
    ops = 60 if smoke else 20_004
    blocks = ops // OPS_PER_BLOCK
    return Workload(
        name="scalar chain",
        detail=f"{blocks * OPS_PER_BLOCK:,} mixed scalar ops",
        unit="µs/op",
        per=blocks * OPS_PER_BLOCK,
        target="≤ 2 µs/op",
        target_value=2.0,
        target_kind="per_op",
        size=blocks,
        implementations={
            "floor": floor,
            "trackerlab": trackerlab,
            "trackerlab gradient()": trackerlab_gradient,
            "micrograd": micrograd,
            "pytorch": pytorch,
            "autograd": autograd,
        },
    )
