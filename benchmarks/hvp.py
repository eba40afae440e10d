"""Hessian-vector product of ``f(x) = sum(tanh(A x)²)`` by nested reverse mode, A 200×200.

Reverse over reverse: the gradient is computed with its tape recorded, then ``v · ∇f`` is
back-propagated through that tape. The floor is the analytic formula: with ``t = tanh(A x)``,
``∇f = Aᵀ (2 t (1 - t²))`` and ``H v = Aᵀ ((2 - 6 t²)(1 - t²) ⊙ A v)``.
"""

from __future__ import annotations

import numpy as np

from ._peers import need
from .workload import Workload


def problem(smoke: bool):
    n = 6 if smoke else 200
    rng = np.random.default_rng(1)
    A = rng.standard_normal((n, n)) / np.sqrt(n)
    return A, rng.standard_normal(n), rng.standard_normal(n)


def floor(size):
    A, x, v = size

    def run():
        t = np.tanh(A @ x)
        return [A.T @ ((2 - 6 * t * t) * (1 - t * t) * (A @ v))]

    return run


def trackerlab(size):
    """``gradient`` of ``v · gradient(f)``: Flux's nested reverse mode."""
    import trackerlab as tl

    A, x, v = size

    def f(x):
        return tl.sum(tl.tanh(A @ x) ** 2)

    def run():
        (hv,) = tl.gradient(lambda x: tl.sum(tl.gradient(f, x)[0] * v), x)
        return [tl.data(hv)]

    return run


def pytorch(size):
    torch = need("torch")
    A, x0, v0 = (torch.tensor(a) for a in size)

    def run():
        x = x0.clone().requires_grad_(True)
        (g,) = torch.autograd.grad(torch.sum(torch.tanh(A @ x) ** 2), x, create_graph=True)
        (hv,) = torch.autograd.grad(torch.sum(g * v0), x)
        return [hv.numpy()]

    return run


def autograd(size):
    ag = need("autograd")
    anp = need("autograd.numpy")
    A, x, v = size

    def f(x):
        return anp.sum(anp.tanh(anp.dot(A, x)) ** 2)

    hvp = ag.grad(lambda x: anp.sum(ag.grad(f)(x) * v))

    def run():
        return [hvp(x)]

    return run


def workload(smoke: bool) -> Workload:
    return Workload(
        name="Hessian-vector product",
        detail="sum(tanh(A x)²), A 200×200" if not smoke else "tiny",
        unit="ms",
        per=1,
        target="≤ 5×",
        target_value=5.0,
        target_kind="ratio",
        size=problem(smoke),
        implementations={"floor": floor, "trackerlab": trackerlab, "pytorch": pytorch, "autograd": autograd},
        repeats=51,
    )
