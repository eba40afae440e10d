"""Forward mode: the value and directional derivative of ``f(x) = tanh(A x)`` along ``v``, A 200×200.

trackerlab's ``tl.jvp`` transposes the backpropagator: ``f`` recorded, its walk recorded on a tracked ``u``, and
a plain walk over that recording seeded with ``v``. autograd's ``make_jvp`` transposes the same way; PyTorch's
``torch.func.jvp`` pushes tangents forward with rules of its own. The floor is the formula:
``y = tanh(A x)``, ``J v = (1 − y²) ⊙ (A v)``.
"""

from __future__ import annotations

import numpy as np

from . import hvp
from ._peers import need
from .workload import Workload

problem = hvp.problem  # the same A, x and v as the Hessian-vector product's row


def floor(size):
    A, x, v = size

    def run():
        y = np.tanh(A @ x)
        return [y, (1 - y * y) * (A @ v)]

    return run


def trackerlab(size):
    """``tl.jvp``."""
    import trackerlab as tl

    A, x, v = size

    def f(x):
        return tl.tanh(A @ x)

    def run():
        return list(tl.jvp(f, x, v))

    return run


def pytorch(size):
    """``torch.func.jvp``."""
    torch = need("torch")
    func = need("torch.func")
    A, x0, v0 = (torch.tensor(a) for a in size)

    def run():
        y, Jv = func.jvp(lambda x: torch.tanh(A @ x), (x0,), (v0,))
        return [y.numpy(), Jv.numpy()]

    return run


def autograd(size):
    """autograd's ``make_jvp``."""
    ag = need("autograd")
    anp = need("autograd.numpy")
    A, x, v = size

    def f(x):
        return anp.tanh(anp.dot(A, x))

    def run():
        return list(ag.make_jvp(f)(x)(v))

    return run


def workload(smoke: bool) -> Workload:
    return Workload(
        name="Jacobian-vector product",
        detail="tanh(A x) along v, A 200×200" if not smoke else "tiny",
        unit="ms",
        per=1,
        target="",
        target_value=float("inf"),
        target_kind="ratio",
        size=problem(smoke),
        implementations={
            "floor": floor,
            "trackerlab": trackerlab,
            "pytorch torch.func.jvp": pytorch,
            "autograd make_jvp": autograd,
        },
        repeats=51,
    )


# ---------------------------------------------------------------------------------------------------------
# The Jacobian of a tall function by forward mode: tanh(A x), A 200×20 (20 inputs, 200 outputs)


def tall_problem(smoke: bool):
    m, n = (6, 3) if smoke else (200, 20)
    rng = np.random.default_rng(3)
    return rng.standard_normal((m, n)) / np.sqrt(n), rng.standard_normal(n)


def jacobian_floor(size):
    A, x = size

    def run():
        y = np.tanh(A @ x)
        return [(1 - y * y)[:, None] * A]

    return run


def trackerlab_jacfwd(size):
    """``tl.jacfwd``: a unit tangent pushed forward over the tape per input."""
    import trackerlab as tl

    A, x = size
    return lambda: [tl.jacfwd(lambda x: tl.tanh(A @ x), x)]


def trackerlab_jacobian(size):
    """``tl.jacobian``: a reverse walk per output."""
    import trackerlab as tl

    A, x = size
    return lambda: [tl.jacobian(lambda x: tl.tanh(A @ x), x)]


def pytorch_jacfwd(size):
    """``torch.func.jacfwd`` (its tangents batched by ``vmap``)."""
    torch = need("torch")
    func = need("torch.func")
    A, x0 = (torch.tensor(a) for a in size)
    jac = func.jacfwd(lambda x: torch.tanh(A @ x))
    return lambda: [jac(x0).numpy()]


def autograd_jacobian(size):
    """autograd's ``jacobian`` (reverse mode, a walk per output)."""
    ag = need("autograd")
    anp = need("autograd.numpy")
    A, x = size
    jac = ag.jacobian(lambda x: anp.tanh(anp.dot(A, x)))
    return lambda: [jac(x)]


def jacobian_workload(smoke: bool) -> Workload:
    return Workload(
        name="Jacobian by forward mode",
        detail="tanh(A x), A 200×20" if not smoke else "tiny",
        unit="ms",
        per=1,
        target="",
        target_value=float("inf"),
        target_kind="ratio",
        size=tall_problem(smoke),
        implementations={
            "floor": jacobian_floor,
            "trackerlab": trackerlab_jacfwd,
            "trackerlab jacobian()": trackerlab_jacobian,
            "pytorch torch.func.jacfwd": pytorch_jacfwd,
            "autograd jacobian": autograd_jacobian,
        },
        repeats=21,
    )
