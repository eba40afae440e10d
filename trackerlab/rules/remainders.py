"""Remainders and their gradient rules: ``remainder`` (``%``, ``mod``), ``fmod`` and the composite ``divmod``.

A remainder is x − round(x / y) · y with a rounding that is constant between its jumps: slope 1 in x and
−floor(x / y) (−trunc(x / y) for ``fmod``) in y, away from the jumps.
"""

from __future__ import annotations

import math
import operator
from typing import Any

from ..backends.arrays import namespace
from ..core.tracked import data
from ..ops.registry import defop, register_rules
from ._util import composite, refuse_complex, unbroadcast, wrapper


def _remainder_of(name: str, rounding: str, scalar):
    """The forward of a remainder: ``scalar`` on two Python floats, the namespace's ``name`` on arrays, or
    x − ``rounding``(x / y) · y where the backend lacks it (as array-API libraries do)."""

    def impl(x: Any, y: Any) -> Any:
        refuse_complex(name, x, y, why="it rounds a quotient, which complex numbers do not allow")
        if type(x) is float and type(y) is float and y != 0.0:
            return scalar(x, y)
        xp = namespace(x, y)
        if not hasattr(x, "shape") and not hasattr(y, "shape"):
            x = xp.asarray(x)
        f = getattr(xp, name, None)
        if f is not None:
            return f(x, y)
        return x - getattr(xp, rounding)(x / y) * y

    impl.__name__ = name
    return impl


remainder = defop(
    "remainder",
    _remainder_of("remainder", "floor", operator.mod),
    family="remainders",
    doc="x - floor(x / y) * y, the sign of y (``%``).",
)
fmod = defop(
    "fmod",
    _remainder_of("fmod", "trunc", math.fmod),
    family="remainders",
    doc="x - trunc(x / y) * y, the sign of x (C's fmod).",
)


def _floored(x, y, rounding: str):
    """``floor(x / y)`` or ``trunc(x / y)`` of the plain data: the constant slope of a remainder in ``y``."""
    a, b = data(x), data(y)
    xp = namespace(a, b)
    quotient = (a if hasattr(a, "shape") else xp.asarray(a)) / b
    return getattr(xp, rounding)(quotient)


RULES = {
    "remainder": (
        lambda g, ans, x, y: unbroadcast(x, g),
        lambda g, ans, x, y: unbroadcast(y, -g * _floored(x, y, "floor")),
    ),
    "fmod": (
        lambda g, ans, x, y: unbroadcast(x, g),
        lambda g, ans, x, y: unbroadcast(y, -g * _floored(x, y, "trunc")),
    ),
}
register_rules("remainders", RULES)

mod = wrapper("mod")(remainder)  # NumPy's other name for the same operation


@composite("remainders")
def divmod(x: Any, y: Any) -> tuple[Any, Any]:
    """``(floor(x / y), x % y)``, as Python's ``divmod`` and ``numpy.divmod``: the quotient is a plain
    integer-valued array (it has no gradient), the remainder is ``remainder(x, y)``.

    >>> import trackerlab as tl
    >>> tl.divmod(tl.param(7.5), 2.0)
    (3.0, 1.5 (tracked))
    """
    a, b = data(x), data(y)
    xp = namespace(a, b)
    if type(a) is float and type(b) is float and b != 0.0:
        quotient = a // b
    else:
        quotient = xp.floor_divide(a if hasattr(a, "shape") else xp.asarray(a), b)
    return quotient, remainder(x, y)
