"""Central finite differences, the one numerical core of the gradient checks: ``check_grads`` (a function's
gradients, along random directions) and ``check_tape`` (each recorded operation's rule, at the inputs it saw)
both differentiate numerically here, compare with the same test and bound the same roundoff.

A central difference ``(L(x + εv) − L(x − εv)) / 2ε`` along a direction ``v`` has an error of order ``ε²·L‴``
from the function's curvature, and one of order ``roundoff · |L| / ε`` from the two values it subtracts; two
numbers agree when they differ by at most ``atol + rtol · max(|a|, |b|)`` plus that roundoff (``agree``). The
values are computed in float64 on the host side of the backend (``inner``).
"""

from __future__ import annotations

from collections.abc import Callable

from ..backends.arrays import namespace
from ..core.tracked import data

__all__ = ["ROUNDOFF", "agree", "central", "float64", "inner", "kink", "random_like", "roundoff", "slope"]

ROUNDOFF = 16 * 2.0**-52  # a few units of float64 roundoff, for the noise of a difference of two sums


def central(at: Callable, step: float):
    """``(at(step) − at(−step)) / 2·step``, with the two values: ``(slope, plus, minus)``. ``at(h)`` is the
    function at ``x + h·v`` (a number, or an array of numbers for the slope of each component).

    >>> round(central(lambda h: (1.0 + h) ** 3, 1e-3)[0], 9)  # d/dx x³ at 1 is 3, and the error ε²·x‴/6 = 1e-6
    3.000001
    """
    plus, minus = at(step), at(-step)
    return slope(plus, minus, step), plus, minus


def slope(plus, minus, step: float):
    """``(plus − minus) / 2·step``: the central difference of the values at ``x ± step·v``."""
    return (plus - minus) / (2 * step)


def roundoff(size: float, step: float) -> float:
    """The roundoff of a difference of two values of about ``size`` (in float64), divided by ``step``."""
    return ROUNDOFF * size / step


def agree(a: float, b: float, rtol: float, atol: float, noise: float = 0.0) -> bool:
    """Whether ``a`` and ``b`` agree: relative to their own size (no floor of 1, which would let a rule 1% wrong
    pass wherever the derivatives are below about 0.1), plus ``atol`` and the roundoff ``noise``.

    >>> agree(1.0, 1.0 + 1e-9, rtol=1e-5, atol=0.0), agree(1e-3, 1.01e-3, rtol=1e-5, atol=1e-8)
    (True, False)
    """
    return abs(a - b) <= atol + rtol * max(abs(a), abs(b)) + noise


def kink(plus: float, here: float, minus: float, step: float) -> float:
    """How far apart the one-sided slopes ``(plus − here)/step`` and ``(here − minus)/step`` are: about
    ``step · |L″|`` where ``L`` is smooth, and the jump of the slope at a kink (relu or abs at 0, a tie in max)."""
    return abs((plus - here) - (here - minus)) / step


# ----------------------------------------------------------------------------------------------------
# The plain-value arithmetic: float64 copies, random directions, inner products


def float64(a):
    """A float64 copy of a real value (a Python float for a Python number)."""
    a = data(a)
    if isinstance(a, bool | int | float):
        return float(a)
    xp = namespace(a)
    return xp.astype(xp.asarray(a), xp.float64)


def random_like(x, rng, xp):
    """Standard normal values of ``x``'s shape, in float64 (a Python float for a number)."""
    x = data(x)
    if not hasattr(x, "shape"):
        return float(rng.standard_normal())
    return xp.asarray(rng.standard_normal(tuple(x.shape)), dtype=xp.float64)


def inner(a, b, xp) -> float:
    """``Σ a·b`` as a Python float, in float64 (0 for ``a is None``: nothing reaches this argument)."""
    if a is None:
        return 0.0
    a, b = data(a), data(b)
    if not hasattr(a, "shape") and not hasattr(b, "shape"):
        return float(a) * float(b)
    return float(xp.sum(xp.asarray(a, dtype=xp.float64) * xp.asarray(b, dtype=xp.float64)))
