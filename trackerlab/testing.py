"""Testing helpers: ``check_grads`` compares reverse mode with central finite differences."""

from __future__ import annotations

from collections.abc import Callable

from ._backend import namespace
from .api import gradient
from .rules.reductions import sum as _sum
from .tracked import data

__all__ = ["check_grads"]


def check_grads(
    f: Callable,
    *args,
    order: int = 2,
    eps: float = 1e-6,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    seed: int = 0,
    **kwargs,
) -> None:
    """Check the gradients of ``f`` at ``args`` against central differences, to ``order`` (1 or 2).

    Along a random direction ``v`` of the inputs and a random weighting ``u`` of the output, the
    reverse-mode directional derivative ``<∇(u·f), v>`` must match
    ``(u·f(x + εv) − u·f(x − εv)) / 2ε``. For order 2 the same check runs on that reverse-mode
    directional derivative itself, which differentiates through the backpropagators (nested AD).
    Raises ``AssertionError`` naming the order and the two numbers.

    >>> import trackerlab as tl
    >>> tl.check_grads(lambda x: tl.sum(tl.sin(x) * x), [0.1, 0.2, 0.3])
    """
    import numpy as np  # finite differences are a host-side check; inputs are copied to float64

    rng = np.random.default_rng(seed)
    xs = [_float64(a) for a in args]
    xp = namespace(*xs)
    _check(f, xs, kwargs, order, eps, rtol, atol, rng, xp, level=1)


def _float64(a):
    a = data(a)
    xp = namespace(a)
    if isinstance(a, bool | int | float):
        return float(a)
    a = xp.asarray(a)
    return xp.astype(a, xp.float64)


def _random_like(x, rng, xp):
    if isinstance(x, float):
        return float(rng.standard_normal())
    values = rng.standard_normal(tuple(x.shape))
    return xp.asarray(values, dtype=xp.float64)


def _inner(a, b, xp):
    a, b = data(a), data(b)
    if isinstance(a, float) or getattr(a, "ndim", 0) == 0:
        return float(a) * float(b)
    return float(xp.sum(a * b))


def _check(f, xs, kwargs, order, eps, rtol, atol, rng, xp, level):
    y0 = data(f(*xs, **kwargs))
    u = _random_like(_float64(y0), rng, xp)

    def scalar(*ys):
        out = f(*ys, **kwargs)
        if isinstance(u, float):
            return out * u
        return _sum(out * u)

    vs = [_random_like(x, rng, xp) for x in xs]
    grads = gradient(scalar, *xs)
    reverse = 0.0
    for g, v in zip(grads, vs):
        reverse += _inner(g, v, xp)
    plus = float(data(scalar(*(x + eps * v for x, v in zip(xs, vs)))))
    minus = float(data(scalar(*(x - eps * v for x, v in zip(xs, vs)))))
    numeric = (plus - minus) / (2 * eps)
    if not abs(reverse - numeric) <= atol + rtol * max(1.0, abs(reverse), abs(numeric)):
        raise AssertionError(
            f"check_grads: order {level}: reverse mode gives {reverse!r} along a random direction, "
            f"finite differences give {numeric!r}"
        )
    if level < order:

        def directional(*ys):
            gs = gradient(scalar, *ys)
            total = 0.0
            for g, v in zip(gs, vs):
                total = total + (g * v if isinstance(v, float) else _sum(g * v))
            return total

        _check(directional, xs, {}, order, eps, rtol, atol, rng, xp, level + 1)
