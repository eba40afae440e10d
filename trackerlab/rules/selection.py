"""Selections and their gradient rules: ``maximum``, ``minimum``, ``fmax``, ``fmin``, ``where``, ``clip``,
``nan_to_num`` and the composite ``select``. Each sends the sensitivity to the value it selected and
exactly 0 to the others (even where that is inf or NaN); ties share it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..backends.arrays import namespace
from ..core.tracked import data
from ..ops.registry import as_operand, defop, register_rules
from ._util import Later, composite, is_complex, keep, mask, real_only, unbroadcast
from ._util import shape as shape_of
from .complex import _complex_op, imag, real
from .elementwise import _binary

take = Later("rules.indexing", "take")  # a family above this one (see ``core.late.Later``)


def _where(condition, x, y):
    xp = namespace(condition, x, y)
    if not hasattr(x, "shape") and not hasattr(y, "shape"):
        x = xp.asarray(x)
    return xp.where(condition, x, y)


def _bounds(a_min, a_max, named: dict):
    """NumPy's ``clip(x, a_min, a_max)`` and ``clip(x, min=, max=)`` spellings, as ``(low, high)``; other options
    (``out=``, which would leave the caller's array unwritten) are refused."""
    unknown = sorted(name for name, value in named.items() if name not in ("min", "max") and value is not None)
    if unknown:
        raise TypeError(f"clip: {'=, '.join(unknown)}= is not supported on tracked values; use the result it returns")
    return (a_min if a_min is not None else named.get("min"), a_max if a_max is not None else named.get("max"))


def _clip(x, a_min=None, a_max=None, **named):
    lo, hi = _bounds(a_min, a_max, named)
    xp = namespace(x, lo, hi)
    x = x if hasattr(x, "shape") else xp.asarray(x)
    if type(x).__module__ == "numpy":
        return xp.clip(x, lo, hi)
    return _clamp(xp, x, lo, hi)


def _clamp(xp, x, lo, hi):
    """NumPy's clip, max(x, lo) then min(·, hi), by the elementwise maximum and minimum, for libraries other
    than NumPy: array-api-compat's clip (how trackerlab reaches CuPy) indexes with a boolean mask, which asks
    the device for a count, a synchronisation. NaN in ``x`` or a bound gives NaN, as NumPy's clip does."""
    if lo is not None:
        x = xp.maximum(x, lo)
    if hi is not None:
        x = xp.minimum(x, hi)
    return x


def _nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    xp = namespace(x)
    if type(x) is float:
        x = xp.asarray(x)
    f = getattr(xp, "nan_to_num", None)
    if f is not None:
        return f(x, nan=nan, posinf=posinf, neginf=neginf)
    if is_complex(x):
        raise TypeError(f"nan_to_num: complex input on {xp.__name__} is not supported")
    big = xp.finfo(x.dtype).max
    out = xp.where(xp.isnan(x), xp.asarray(nan, dtype=x.dtype), x)
    out = xp.where(out == math.inf, xp.asarray(big if posinf is None else posinf, dtype=x.dtype), out)
    return xp.where(out == -math.inf, xp.asarray(-big if neginf is None else neginf, dtype=x.dtype), out)


maximum = defop("maximum", real_only("maximum", _binary("maximum")), family="selection")
minimum = defop("minimum", real_only("minimum", _binary("minimum")), family="selection")
fmax = defop("fmax", real_only("fmax", _binary("fmax", None, "maximum")), family="selection")
fmin = defop("fmin", real_only("fmin", _binary("fmin", None, "minimum")), family="selection")
where = defop("where", _where, family="selection", doc="``where(condition, x, y)``: x where condition, else y.")
clip = defop("clip", real_only("clip", _clip), family="selection")
nan_to_num = defop("nan_to_num", _nan_to_num, arity=1, family="selection", doc="NaN and ±inf replaced by numbers.")


def _share(x, y, larger: bool, nan_wins: bool):
    """The share of ``x`` in ``maximum(x, y)`` (``larger``) or ``minimum``: 1 where it wins, ½ on ties, 0
    where it loses. A NaN wins ``maximum``/``minimum`` (they return it) and loses ``fmax``/``fmin`` (they
    return the number facing it); two NaNs share."""
    x, y = data(x), data(y)
    xp = namespace(x, y)
    a, b = xp.asarray(x), xp.asarray(y)
    a_nan, b_nan = xp.isnan(a), xp.isnan(b)
    wins = xp.logical_and(a_nan, xp.logical_not(b_nan)) if nan_wins else xp.logical_and(b_nan, xp.logical_not(a_nan))
    ties = xp.logical_or(a == b, xp.logical_and(a_nan, b_nan))
    share = mask(xp.logical_or(a > b if larger else a < b, wins), a) + 0.5 * mask(ties, a)
    return share if hasattr(x, "shape") or hasattr(y, "shape") else float(share)


def _chooser(larger: bool, nan_wins: bool, first: bool):
    def pullback(g, ans, x, y):
        share = _share(x, y, larger, nan_wins) if first else _share(y, x, larger, nan_wins)
        return unbroadcast(x if first else y, keep(data(share) != 0, g * share))

    return pullback


def _condition(c):
    """The plain condition of ``where`` as booleans."""
    c = data(c)
    if not hasattr(c, "shape"):
        return bool(c)
    xp = namespace(c)
    return c if xp.isdtype(c.dtype, "bool") else c != 0


def _where_x(g, ans, condition, x, y):
    return unbroadcast(x, keep(_condition(condition), g))


def _where_y(g, ans, condition, x, y):
    c = _condition(condition)
    return unbroadcast(y, keep(not c if isinstance(c, bool) else namespace(c).logical_not(c), g))


def _chosen(v, lo, hi):
    """Which of ``x``, ``lo`` and ``hi`` gives each element of ``clip(x, lo, hi)``, as NumPy computes it:
    ``minimum(maximum(x, lo), hi)``. ``hi`` where ``x > hi``, and everywhere ``lo > hi`` (then ``hi`` is the
    result whatever ``x`` is); ``lo`` where ``x < lo ≤ hi``; ``x`` elsewhere, at a bound it touches and where it
    is NaN (which passes through)."""
    xp = namespace(v, lo, hi)
    v = xp.asarray(v)
    never = xp.zeros(v.shape, dtype=xp.bool)
    low = v < lo if lo is not None else never
    high = v > hi if hi is not None else never
    if lo is not None and hi is not None:
        crossed = xp.logical_and(xp.asarray(lo) > xp.asarray(hi), xp.logical_not(xp.isnan(v)))
        high, low = xp.logical_or(high, crossed), xp.logical_and(low, xp.logical_not(crossed))
    return xp.logical_not(xp.logical_or(low, high)), low, high


def _clip_x(g, ans, x, a_min=None, a_max=None, **named):
    lo, hi = _bounds(data(a_min), data(a_max), named)
    return unbroadcast(x, keep(_chosen(data(x), lo, hi)[0], g))


def _clip_bound(low: bool):
    def pullback(g, ans, x, a_min=None, a_max=None, **named):
        hit = _chosen(data(x), *_bounds(data(a_min), data(a_max), named))[1 if low else 2]
        return unbroadcast(a_min if low else a_max, keep(hit, g))

    return pullback


def _nan_to_num_rule(g, ans, x, copy=True, nan=0.0, posinf=None, neginf=None):
    # replaced entries are constants: no sensitivity; a complex number is replaced part by part
    plain = data(x)
    xp = namespace(plain)
    plain = plain if hasattr(plain, "shape") else xp.asarray(plain)
    if not is_complex(x):
        return g * mask(xp.isfinite(plain), plain)
    keep_re, keep_im = mask(xp.isfinite(xp.real(plain)), plain), mask(xp.isfinite(xp.imag(plain)), plain)
    return _complex_op(real(g) * keep_re) + _complex_op(imag(g) * keep_im) * 1j


RULES = {
    # the winner takes the sensitivity, ties share it, a loser gets exactly 0 (even of an inf)
    "maximum": (_chooser(True, True, True), _chooser(True, True, False)),
    "minimum": (_chooser(False, True, True), _chooser(False, True, False)),
    # fmax and fmin ignore NaN: a number facing a NaN takes the whole sensitivity
    "fmax": (_chooser(True, False, True), _chooser(True, False, False)),
    "fmin": (_chooser(False, False, True), _chooser(False, False, False)),
    "where": (None, _where_x, _where_y),
    "clip": (_clip_x, _clip_bound(True), _clip_bound(False)),
    "nan_to_num": (_nan_to_num_rule,),
}
register_rules("selection", RULES)


@composite("selection")
def select(condlist: Sequence[Any], choicelist: Sequence[Any], default: Any = 0) -> Any:
    """``numpy.select``: where the first true condition of ``condlist`` picks its entry of ``choicelist``,
    ``default`` elsewhere. Conditions are plain booleans; choices may be tracked.

    >>> import numpy as np, trackerlab as tl
    >>> x = tl.param([-1.0, 0.5, 2.0])
    >>> tl.select([tl.data(x) < 0, tl.data(x) < 1], [-x, x * 10], default=x)
    Tracked 3-element float64 array:
    [1. 5. 2.]
    """
    if len(condlist) != len(choicelist):
        raise ValueError(
            f"select: {len(condlist)} conditions and {len(choicelist)} choices; pass one choice per condition"
        )
    out = default
    for condition, choice in reversed(list(zip(condlist, choicelist))):
        condition = data(condition)
        xp = namespace(condition)
        condition = condition if hasattr(condition, "shape") else xp.asarray(condition)
        if not xp.isdtype(condition.dtype, "bool"):
            raise TypeError(f"select: conditions must be boolean arrays, not {condition.dtype}")
        out = where(condition, choice, out)
    return out


@composite("selection")
def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None, period: None = None) -> Any:
    """``numpy.interp``: the piecewise-linear interpolant through the points ``(xp, fp)``, at ``x``; ``x``,
    ``fp``, ``left`` and ``right`` may be tracked (``xp``, the knots, are constants). Between knots the slope
    in ``x`` is that of the segment; at a knot, that of the segment to its right (the last knot: to its left);
    outside the knots, 0 (``left`` or ``right`` is the value there, ``fp``'s first or last by default).

    >>> import trackerlab as tl
    >>> tl.gradient(lambda x: tl.interp(x, [0.0, 1.0, 3.0], [0.0, 2.0, 3.0]), 2.0)
    (0.5 (tracked),)
    """
    if period is not None:
        raise TypeError("interp: period= is not supported on tracked values")
    if getattr(xp, "tracker", None) is not None:
        raise TypeError("interp: xp (the knots) is tracked; they are constants here: pass tl.data(xp)")
    at = data(x)
    library = namespace(at, data(fp))
    knots = library.asarray(xp, dtype=library.float64)
    listed = isinstance(fp, list | tuple)
    fp = as_operand(fp, "interp")
    if listed and getattr(fp, "tracker", None) is None:  # a list of numbers: on x's device, as the knots are
        fp = library.asarray(fp)
    n = knots.shape[0] if knots.ndim == 1 else -1
    if n < 1 or shape_of(fp) != (n,):
        raise ValueError(f"interp: xp and fp must be 1-D of one length, not {tuple(knots.shape)} and {shape_of(fp)}")
    points = library.asarray(at, dtype=library.float64)
    if n == 1:
        segment = library.zeros(points.shape, dtype=library.int64)
        low = high = take(fp, segment)
        slope_part = 0.0 * x
    else:
        segment = library.searchsorted(knots, library.reshape(points, (-1,)), side="right") - 1
        segment = library.reshape(_clamp(library, segment, 0, n - 2), points.shape)
        low, high = take(fp, segment), take(fp, segment + 1)
        start = library.take(knots, library.reshape(segment, (-1,)))
        width = library.take(knots, library.reshape(segment + 1, (-1,))) - start
        slope_part = (x - library.reshape(start, points.shape)) / library.reshape(width, points.shape)
    value = low + (high - low) * slope_part
    below, above = points < knots[0], points > knots[n - 1]
    value = where(below, take(fp, 0) if left is None else left, value)
    return where(above, take(fp, n - 1) if right is None else right, value)
