"""Helpers shared by the rule tables: shapes of plain or tracked values, undoing broadcasting, masks."""

from __future__ import annotations

from .._backend import namespace
from ..tracked import data


def shape(x) -> tuple:
    """The shape of a plain or tracked value (``()`` for Python numbers)."""
    s = getattr(x, "shape", ())  # tracked values and arrays both have one
    return s if type(s) is tuple else tuple(s)


def ns(*values):
    """The array namespace of the plain data of ``values``."""
    return namespace(*(data(v) for v in values))


def unbroadcast(x, g):
    """Sum the sensitivity ``g`` back to the shape of the argument ``x`` that NumPy broadcast.

    The one place where broadcasting is undone: leading axes that broadcasting added are summed
    away, and axes where ``x`` had size 1 are summed with the size kept.
    """
    if type(g) is float:  # a Python float is the sensitivity of a scalar result, so x was a scalar too
        return g
    target = shape(x)
    have = shape(g)
    if have == target:
        return g
    lead = len(have) - len(target)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(target) if n == 1 and have[lead + i] != 1)
    if axes:
        g = sum(g, axis=axes)
    return g if shape(g) == target else reshape(g, target)


def mask(condition, like):
    """``condition`` (plain booleans) as numbers of ``like``'s dtype, for multiplying a sensitivity."""
    like = data(like)
    if isinstance(condition, bool):
        return 1.0 if condition else 0.0
    xp = namespace(condition, like)
    dtype = like.dtype if hasattr(like, "dtype") and xp.isdtype(like.dtype, "real floating") else xp.float64
    return xp.astype(condition, dtype)


from .reductions import sum  # noqa: E402  (the families' rules use each other)
from .shape import reshape  # noqa: E402
