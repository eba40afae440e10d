"""Order statistics: ``quantile``, ``percentile`` and ``median``, read from the sorted values along the reduced
axes and differentiated through ``sort``, whose rule sends each sensitivity back to the element it came from.

Among tied values, the one ``sort`` puts in a place receives that place's sensitivity (as in JAX), where
``max`` and ``min`` (``reductions``) share a tie evenly.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from ..core.tracked import data
from ._util import array, axes_of, composite, ns, shape, size
from .elementwise import astype
from .indexing import sort, take_along_axis
from .reductions import _unsupported
from .selection import where
from .shape import moveaxis, reshape, transpose

Method = Literal["linear", "lower", "higher", "nearest", "midpoint"]  # the methods differentiated through sort
_QUANTILE_METHODS = get_args(Method)


@composite("quantiles")
def quantile(
    x: Any,
    q: Any,
    axis: int | tuple[int, ...] | None = None,
    out: None = None,
    overwrite_input: bool = False,
    method: Method = "linear",
    keepdims: bool = False,
    *,
    weights: None = None,
    interpolation: None = None,
) -> Any:
    """``numpy.quantile``: the ``q``-th quantiles of ``x`` along ``axis``, differentiated through ``sort``: each
    quantile takes the sorted values it is read from (for ``method='linear'``, the two it interpolates between,
    weighted as it weighs them), so among tied values the one ``sort`` puts in that place receives the
    sensitivity, as in JAX. A slice holding NaN gives NaN, as NumPy's does."""
    _unsupported("quantile", out=out, weights=weights, interpolation=interpolation)
    if method not in _QUANTILE_METHODS:
        raise ValueError(
            f"quantile: method={method!r} is not supported on tracked values; use one of {_QUANTILE_METHODS}"
        )
    if getattr(q, "tracker", None) is not None:
        raise TypeError("quantile: q is tracked; the quantile's level is a setting: pass tl.data(q)")
    plain = data(x)
    xp = ns(plain)
    levels = xp.asarray(q, dtype=xp.float64)
    if bool(xp.any(levels < 0)) or bool(xp.any(levels > 1)):
        raise ValueError("quantile: q must be in the range [0, 1]")
    target = shape(x)
    axes = axes_of(axis, len(target))
    kept = tuple(i for i in range(len(target)) if i not in axes)
    n = size(tuple(target[i] for i in axes))
    if n == 0:
        raise ValueError("quantile: cannot take a quantile of an empty slice")
    # the reduced axes last, as one: quantiles are read along it
    flat = reshape(transpose(x, kept + axes), tuple(target[i] for i in kept) + (n,))
    ordered = sort(flat, axis=-1)
    positions = xp.reshape(levels, (-1,)) * (n - 1)

    def at(index):  # the sorted values at ``index`` (one per level), as the trailing axes q's shape
        index = xp.broadcast_to(xp.astype(index, xp.int64), shape(ordered)[:-1] + shape(index))
        picked = take_along_axis(ordered, index, axis=-1)
        return reshape(picked, shape(picked)[:-1] + shape(levels))

    if method == "linear":
        low = xp.floor(positions)
        fraction = positions - low
        dtype = _result_dtype(xp, plain, q)
        if dtype is not None and dtype != fraction.dtype:
            fraction = xp.astype(fraction, dtype)  # a float32 x stays float32 beside a number q
        below = at(low)
        above = at(xp.where(low < n - 1, low + 1, low))  # q = 1 reads the last value alone
        result = below + (above - below) * xp.reshape(fraction, shape(levels))
    elif method == "midpoint":
        low, high = at(xp.floor(positions)), at(xp.ceil(positions))
        dtype = _result_dtype(xp, plain, q, midpoint=True)
        if dtype is not None and dtype != plain.dtype:  # averaged in the wider dtype, as NumPy does
            low, high = astype(low, dtype), astype(high, dtype)
        result = (low + high) * 0.5
    else:  # one observation, as NumPy picks it: nearest rounds half to even
        result = at({"lower": xp.floor, "higher": xp.ceil, "nearest": xp.round}[method](positions))
    nan = xp.any(xp.isnan(array(data(flat))), axis=-1)  # NumPy's quantile of a slice with NaN is NaN
    if bool(xp.any(nan)):
        result = where(xp.reshape(nan, shape(nan) + (1,) * len(shape(levels))), xp.nan, result)
    # NumPy's order: q's axes first, then the kept ones (each reduced axis as 1 with keepdims)
    if keepdims:
        result = reshape(result, tuple(1 if i in axes else m for i, m in enumerate(target)) + shape(levels))
        along = len(target)
    else:
        along = len(kept)
    return moveaxis(result, tuple(range(along, along + len(shape(levels)))), tuple(range(len(shape(levels)))))


def _result_dtype(xp, plain, q, midpoint: bool = False):
    """The dtype of the linear (or midpoint) quantile of the real floating ``plain`` at ``q``, as NumPy promotes
    them: a Python number keeps ``plain``'s dtype, floating levels with a dtype (a list is float64) promote with
    it (float32 x at float64 levels: float64), integer levels keep it (midpoint: read as float64); ``None`` for
    other ``plain``."""
    if not hasattr(plain, "dtype") or not xp.isdtype(plain.dtype, "real floating"):
        return None
    if type(q) in (int, float):
        return plain.dtype
    levels = xp.asarray(q)
    if xp.isdtype(levels.dtype, "real floating"):
        return xp.result_type(plain.dtype, levels.dtype)
    return xp.result_type(plain.dtype, xp.float64) if midpoint else plain.dtype


@composite("quantiles")
def percentile(
    x: Any,
    q: Any,
    axis: int | tuple[int, ...] | None = None,
    out: None = None,
    overwrite_input: bool = False,
    method: Method = "linear",
    keepdims: bool = False,
    *,
    weights: None = None,
    interpolation: None = None,
) -> Any:
    """``numpy.percentile``: ``quantile`` of ``q / 100``."""
    if getattr(q, "tracker", None) is not None:
        raise TypeError("percentile: q is tracked; the percentile is a setting: pass tl.data(q)")
    xp = ns(data(x))
    if type(q) in (int, float):  # a Python number stays one, so a float32 x stays float32, as in NumPy
        levels = q / 100
    else:  # levels with a dtype are divided in it, as NumPy does (integers in float64)
        levels = xp.asarray(q)
        if not xp.isdtype(levels.dtype, "real floating"):
            levels = xp.astype(levels, xp.float64)
        levels = levels / 100
    if bool(xp.any(xp.asarray(levels) < 0)) or bool(xp.any(xp.asarray(levels) > 1)):
        raise ValueError("percentile: q must be in the range [0, 100]")
    options = {"weights": weights, "interpolation": interpolation}
    return quantile(x, levels, axis, out, overwrite_input, method, keepdims, **options)


@composite("quantiles")
def median(
    x: Any,
    axis: int | tuple[int, ...] | None = None,
    out: None = None,
    overwrite_input: bool = False,
    keepdims: bool = False,
) -> Any:
    """``numpy.median``: the 0.5 quantile (the mean of the two middle values of an even count)."""
    return quantile(x, 0.5, axis, out, overwrite_input, "linear", keepdims)
