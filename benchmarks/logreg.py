"""1,000 steps of gradient descent on logistic regression with 8 features: the per-op overhead shows.

The loss is ``mean(log(1 + exp(-y (X w + b))))`` with labels ``y`` in {-1, 1}. The gradients checked
against the floor are the final weights, which depend on every step's gradient.
"""

from __future__ import annotations

import numpy as np

from ._peers import need
from .workload import Workload

RATE = 0.5


def problem(smoke: bool):
    n, features = 64, 8
    rng = np.random.default_rng(2)
    X = rng.standard_normal((n, features))
    y = np.sign(X @ rng.standard_normal(features) + 0.3 * rng.standard_normal(n))
    return X, y, (20 if smoke else 1000)


def floor(size):
    X, y, steps = size
    n = len(y)

    def run():
        w, b = np.zeros(X.shape[1]), 0.0
        for _ in range(steps):
            m = y * (X @ w + b)
            e = np.exp(-m)
            dm = -(e / (1 + e)) * y / n
            w = w - RATE * (X.T @ dm)
            b = b - RATE * np.sum(dm)
        return [w, b]

    return run


def trackerlab(size):
    """Flux's loop: ``back_`` from the loss, ``update_`` each parameter with its ``.grad``."""
    import trackerlab as tl

    X, y, steps = size

    def run():
        w, b = tl.param(np.zeros(X.shape[1])), tl.param(0.0)
        for _ in range(steps):
            loss = tl.mean(tl.log(1 + tl.exp(-y * (X @ w + b))))
            tl.back_(loss)
            tl.update_(w, -RATE * w.grad)
            tl.update_(b, -RATE * b.grad)
        return [w.data, b.data]

    return run


def trackerlab_gradient(size):
    """The same loop with ``gradient`` (tracked results, ready for nested AD)."""
    import trackerlab as tl

    X, y, steps = size

    def loss(w, b):
        return tl.mean(tl.log(1 + tl.exp(-y * (X @ w + b))))

    def run():
        w, b = np.zeros(X.shape[1]), 0.0
        for _ in range(steps):
            dw, db = tl.gradient(loss, w, b)
            w = w - RATE * tl.data(dw)
            b = b - RATE * tl.data(db)
        return [w, b]

    return run


def pytorch(size):
    torch = need("torch")
    X0, y0, steps = size
    X, y = torch.tensor(X0), torch.tensor(y0)

    def run():
        w = torch.zeros(X.shape[1], dtype=torch.float64, requires_grad=True)
        b = torch.zeros((), dtype=torch.float64, requires_grad=True)
        for _ in range(steps):
            loss = torch.mean(torch.log(1 + torch.exp(-y * (X @ w + b))))
            loss.backward()
            with torch.no_grad():
                w -= RATE * w.grad
                b -= RATE * b.grad
            w.grad = None
            b.grad = None
        return [w.detach().numpy(), b.item()]

    return run


def autograd(size):
    ag = need("autograd")
    anp = need("autograd.numpy")
    X, y, steps = size

    def loss(w, b):
        return anp.mean(anp.log(1 + anp.exp(-y * (anp.dot(X, w) + b))))

    dloss = ag.grad(loss, argnum=(0, 1))

    def run():
        w, b = np.zeros(X.shape[1]), 0.0
        for _ in range(steps):
            dw, db = dloss(w, b)
            w = w - RATE * dw
            b = b - RATE * db
        return [w, b]

    return run


def workload(smoke: bool) -> Workload:
    size = problem(smoke)
    return Workload(
        name="logistic regression",
        detail=f"{size[2]:,} steps, 8 features",
        unit="ms",
        per=size[2],
        target="≤ 6×",
        target_value=6.0,
        target_kind="ratio",
        size=size,
        implementations={
            "floor": floor,
            "trackerlab": trackerlab,
            "trackerlab gradient()": trackerlab_gradient,
            "pytorch": pytorch,
            "autograd": autograd,
        },
        rtol=1e-9,
        repeats=9,
    )
