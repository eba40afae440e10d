"""Reductions and their gradient rules: the sensitivity of a reduced axis is spread back over it.

Every reduction takes ``axis`` (``None``, an int or a tuple) and ``keepdims`` as NumPy does.
``max``/``min`` split the sensitivity evenly between tied winners; ``prod`` is differentiated without
dividing by the arguments, so zeros are handled to any order (Tracker.jl issue #120).
"""

from __future__ import annotations

import math
from typing import Any

from ..backends.arrays import NDARRAY, REAL_SCALARS, is_lazy, namespace
from ..core.tracked import data
from ..ops.registry import as_operand, defop, register_rules
from ._util import (
    array,
    axes_of,
    composite,
    conj,
    count,
    integer,
    inverse_permutation,
    is_complex,
    keep,
    mask,
    ns,
    real,
    real_part,
    shape,
    size,
    spread,
    wrapper,
)
from ._util import real_only as _real_only
from .elementwise import exp, sqrt
from .shape import flip, pad, reshape, take_slice, transpose


def _unsupported(name: str, **options) -> None:
    for option, value in options.items():
        if value is not None:
            raise TypeError(f"{name}: {option}= is not supported on tracked values; convert the result instead")


def _reduce(name: str, array_name: str | None = None):
    array_name = array_name or name

    def impl(x, axis=None, dtype=None, out=None, keepdims=False):
        if dtype is not None or out is not None:
            _unsupported(name, dtype=dtype, out=out)
        if type(x) is float:
            return x
        if type(x) is NDARRAY and axis is None and not keepdims:  # the array's own method: the same reduction,
            return getattr(x, array_name)()  # without the namespace's dispatch (a third of a small sum's time)
        xp = ns(x)
        return getattr(xp, array_name)(x if hasattr(x, "shape") else xp.asarray(x), axis=axis, keepdims=keepdims)

    impl.__name__ = name
    return impl


def _extremum(name: str):
    """``max`` or ``min`` with NumPy's order of arguments, which has no ``dtype``: ``np.max(x, 1, None, True)``."""
    reduce = _reduce(name)

    def impl(x, axis=None, out=None, keepdims=False):
        return reduce(x, axis, None, out, keepdims)

    impl.__name__ = name
    return impl


def _moments(name: str):
    def impl(x, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, correction=None):
        if dtype is not None or out is not None:
            _unsupported(name, dtype=dtype, out=out)
        xp = ns(x)
        x = array(x)
        return getattr(xp, name)(x, axis=axis, correction=ddof if correction is None else correction, keepdims=keepdims)

    impl.__name__ = name
    return impl


def _logsumexp(x, axis=None, keepdims=False):
    xp = ns(x)
    x = array(x)
    m = xp.max(x, axis=axis, keepdims=True)
    m = xp.where(xp.isfinite(m), m, xp.zeros_like(m))  # all -inf, or inf: leave the values as they are
    out = xp.log(xp.sum(xp.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else xp.reshape(out, tuple(n for i, n in enumerate(x.shape) if i not in _axes(axis, x)))


def _cumsum(x, axis=None, dtype=None, out=None):
    _unsupported("cumsum", dtype=dtype, out=out)
    xp = ns(x)
    x = array(x)
    if axis is None:
        x, axis = xp.reshape(x, (-1,)), 0
    return xp.cumulative_sum(x, axis=axis)


def _nansum(x, axis=None, dtype=None, out=None, keepdims=False):
    _unsupported("nansum", dtype=dtype, out=out)
    xp = ns(x)
    x = array(x)
    return xp.sum(xp.where(xp.isnan(x), xp.zeros_like(x), x), axis=axis, keepdims=keepdims)


def _nanmean(x, axis=None, dtype=None, out=None, keepdims=False):
    xp = ns(x)
    x = array(x)
    n = xp.sum(xp.astype(~xp.isnan(x), x.dtype), axis=axis, keepdims=keepdims)
    return _nansum(x, axis, dtype, out, keepdims) / n


_array_mean = _reduce("mean")


def _mean(x, axis=None, dtype=None, out=None, keepdims=False):
    """NumPy's ``mean``. For a NumPy array of float32 or float64 (most losses), its sum divided by the count
    directly: the same numbers without the Python layers NumPy wraps around them (a third of the time)."""
    numpy_float = type(x) is NDARRAY and x.dtype.kind == "f" and x.dtype.itemsize >= 4
    if numpy_float and x.size and dtype is None and out is None:
        return x.sum(axis=axis, keepdims=keepdims) / (x.size if axis is None else count(x, axis))
    return _array_mean(x, axis, dtype, out, keepdims)


sum = defop("sum", _reduce("sum"), arity=1, family="reductions")
mean = defop("mean", _mean, arity=1, family="reductions")
prod = defop("prod", _reduce("prod"), arity=1, family="reductions")
max = defop("max", _real_only("max", _extremum("max")), arity=1, family="reductions")
min = defop("min", _real_only("min", _extremum("min")), arity=1, family="reductions")
var = defop("var", _moments("var"), arity=1, family="reductions")
std = defop("std", _moments("std"), arity=1, family="reductions")
logsumexp = defop("logsumexp", _logsumexp, arity=1, family="reductions", doc="log(sum(exp(x))), computed stably")
cumsum = defop("cumsum", _cumsum, arity=1, family="reductions")
nansum = defop("nansum", _nansum, arity=1, family="reductions")
nanmean = defop("nanmean", _nanmean, arity=1, family="reductions")


def _moment_about(name: str, op):
    """``tl.var`` and ``tl.std``: the operation, or, with NumPy 2's ``mean=`` (the mean to measure from, which may
    be tracked), their formula about that mean, Σ|x − mean|² / (n − ddof) (and its square root), whose gradient
    reaches ``mean`` too."""

    def public(x: Any, *args: Any, mean: Any = None, **kwargs: Any) -> Any:
        if mean is None:
            return op(x, *args, **kwargs)
        return _about(name, x, mean, *args, **kwargs)

    public.__name__ = name
    public.__doc__ = f"NumPy's ``{name}``, with ``mean=`` (NumPy 2) too."
    return wrapper(name)(public)


def _about(name: str, x, m, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, correction=None):
    if dtype is not None or out is not None:
        _unsupported(name, dtype=dtype, out=out)
    d = x - m
    squares = real(conj(d) * d) if is_complex(x) or is_complex(m) else d * d
    n = count(x, axis) - (ddof if correction is None else correction)
    v = sum(squares, axis=axis, keepdims=keepdims) / n
    return sqrt(v) if name == "std" else v


_moment_about("var", var)
_moment_about("std", std)


def _axes(axis, x) -> tuple:
    return axes_of(axis, len(shape(x)))


def _winners(g, ans, x, axis, keepdims):
    """The sensitivity of ``max``/``min``: spread over the elements equal to the result, shared evenly.
    A NaN result came from the NaNs of its slice (NumPy propagates them): they share it; the other
    elements get exactly 0."""
    plain, best = data(x), data(ans)
    if not shape(plain):
        return g
    xp = ns(plain)
    if not keepdims:
        best = xp.reshape(array(best), tuple(1 if i in _axes(axis, plain) else n for i, n in enumerate(shape(plain))))
    hits = xp.logical_or(plain == best, xp.logical_and(xp.isnan(plain), xp.isnan(best)))
    hit = mask(hits, plain)
    ties = xp.sum(hit, axis=_axes(axis, plain), keepdims=True)
    return keep(hits, spread(g, x, axis, keepdims) * (hit / ties))


def _exclusive_products(x, axis: int):
    """``p[i] = ∏_{j≠i} x[j]`` along ``axis``, as the product of exclusive running products from the left
    and from the right; no division, so zeros are fine and the result is differentiable again.

    The running products are a Hillis–Steele scan: ⌈log₂ n⌉ shifted multiplications.
    """
    n = shape(x)[axis]
    return _running(x, axis, n) * flip(_running(flip(x, axis), axis, n), axis)


def _running(x, axis: int, n: int):
    """Exclusive running products along ``axis``: ``[1, x0, x0·x1, …]``."""
    p = _shift(x, axis, 1, n)
    step = 1
    while step < n:
        p = p * _shift(p, axis, step, n)
        step *= 2
    return p


def _shift(x, axis: int, by: int, n: int):
    """``x`` moved ``by`` places along ``axis``, ones coming in at the front."""
    widths = [(0, 0)] * len(shape(x))
    widths[axis] = (by, 0)
    return pad(take_slice(x, axis, 0, n - by), widths, constant_values=1.0)


def _prod_rule(g, ans, x, axis=None, dtype=None, out=None, keepdims=False):
    target = shape(x)
    g = spread(g, x, axis, keepdims)
    if not target or size(target) == 0:
        return g
    axes = _axes(axis, x)
    # move the reduced axes last and flatten them into one, so that the products run along one axis
    kept = tuple(i for i in range(len(target)) if i not in axes)
    order = kept + axes
    flat = reshape(transpose(x, order), tuple(target[i] for i in kept) + (-1,))
    others = _exclusive_products(flat, len(kept))
    others = transpose(reshape(others, tuple(target[i] for i in order)), inverse_permutation(order))
    return g * others


def _per(c: float, n: int) -> float:
    """``c / n`` for the divisor ``n = N − ddof`` of ``var``; where ``n ≤ 0`` NumPy divides by 0 (the
    variance is inf, or NaN), and so does its gradient: inf, or NaN where the deviation is 0."""
    return c / n if n > 0 else math.inf


def _deviations(x, axis):
    """``x − mean(x)``, conjugated for complex ``x``: var(z) = mean |z − mean z|², a real function of z, whose
    cotangent is 2 conj(z − mean z) / n (the convention of HIPS autograd and JAX)."""
    centred = x - mean(x, axis=axis, keepdims=True)
    return conj(centred) if is_complex(x) else centred


def _var_rule(g, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, correction=None):
    n = count(x, axis) - (ddof if correction is None else correction)
    return spread(real_part(g), x, axis, keepdims) * _deviations(x, axis) * _per(2.0, n)


def _std_rule(g, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, correction=None):
    # d std = d var / (2 std). Where std is 0 every deviation is 0 (an axis of length 1, or equal values):
    # std is then |·|-like, and the subgradient 0 is taken, as for abs and norm at 0 (exact for length 1,
    # where std is 0 whatever x is)
    n = count(x, axis) - (ddof if correction is None else correction)
    sd = spread(ans, x, axis, keepdims)
    safe = sd + mask(data(sd) == 0, data(sd))
    return spread(real_part(g), x, axis, keepdims) * _deviations(x, axis) * _per(1.0, n) / safe


def _mean_rule(g, ans, x, axis=None, dtype=None, out=None, keepdims=False):
    if axis is None and not keepdims and type(x) is NDARRAY and x.size and type(g) in REAL_SCALARS:
        # a plain walk's total: spread and divided in one pass (what ``full`` computes, without its Python layer)
        each = g / x.size
        out = namespace(x).empty(x.shape, dtype=getattr(each, "dtype", None))  # a Python float's: float64
        out.fill(each)
        return out
    return spread(g, x, axis, keepdims) / count(x, axis)


def _cumsum_rule(g, ans, x, axis=None, dtype=None, out=None):
    # the sensitivity of x[i] is the sum of g[j] for j ≥ i: a running sum from the right
    along = 0 if axis is None else axis
    back = flip(cumsum(flip(g, along), along), along)
    return reshape(back, shape(x)) if axis is None else back


def _numbers(x):
    """Where ``x`` is not NaN (plain booleans)."""
    plain = array(data(x))
    xp = ns(plain)
    return xp.logical_not(xp.isnan(plain))


def _nan_mask(x):
    plain = data(x)
    return mask(_numbers(plain), plain if not is_complex(plain) else ns(plain).real(array(plain)))


RULES = {
    "sum": (lambda g, ans, x, axis=None, dtype=None, out=None, keepdims=False: spread(g, x, axis, keepdims),),
    "mean": (_mean_rule,),
    "prod": (_prod_rule,),
    "max": (lambda g, ans, x, axis=None, out=None, keepdims=False: _winners(g, ans, x, axis, keepdims),),
    "min": (lambda g, ans, x, axis=None, out=None, keepdims=False: _winners(g, ans, x, axis, keepdims),),
    "var": (_var_rule,),
    "std": (_std_rule,),
    "logsumexp": (
        lambda g, ans, x, axis=None, keepdims=False: (
            spread(g, x, axis, keepdims) * exp(x - spread(ans, x, axis, keepdims))
        ),
    ),
    "cumsum": (_cumsum_rule,),
    # a NaN that nansum and nanmean skip gets exactly 0
    "nansum": (
        lambda g, ans, x, axis=None, dtype=None, out=None, keepdims=False: keep(
            _numbers(x), spread(g, x, axis, keepdims)
        ),
    ),
    "nanmean": (
        lambda g, ans, x, axis=None, dtype=None, out=None, keepdims=False: keep(
            _numbers(x), spread(g, x, axis, keepdims) / ns(x).sum(_nan_mask(x), axis=_axes(axis, x), keepdims=True)
        ),
    ),
}
register_rules("reductions", RULES)


# ----------------------------------------------------------------------------------------------------
# Composites: NumPy's reductions built from the operations above (their gradients are those of the parts)


@composite("reductions")
def cumprod(x: Any, axis: int | None = None, dtype: None = None, out: None = None) -> Any:
    """``numpy.cumprod``: the running products along ``axis`` (of the flattened array for ``None``), as
    exclusive running products times ``x``, without dividing: zeros are exact, to any order."""
    _unsupported("cumprod", dtype=dtype, out=out)
    if axis is None or not shape(x):
        x, axis = reshape(x, (-1,)), 0
    axis = axes_of(axis, len(shape(x)))[0]
    n = shape(x)[axis]
    return x * _running(x, axis, n) if n else x * 1.0


@composite("reductions")
def ptp(x: Any, axis: int | tuple[int, ...] | None = None, out: None = None, keepdims: bool = False) -> Any:
    """``numpy.ptp``: the range, ``max − min``, along ``axis``."""
    _unsupported("ptp", out=out)
    return max(x, axis=axis, keepdims=keepdims) - min(x, axis=axis, keepdims=keepdims)


@composite("reductions")
def average(
    x: Any,
    axis: int | tuple[int, ...] | None = None,
    weights: Any = None,
    returned: bool = False,
    *,
    keepdims: bool = False,
) -> Any:
    """``numpy.average``: the mean of ``x`` along ``axis`` weighted by ``weights`` (which may be tracked); with
    ``returned``, also the sum of the weights."""
    if weights is None:
        avg = mean(x, axis=axis, keepdims=keepdims)
        total = count(x, axis) + 0 * avg
        return (avg, total) if returned else avg
    weights = as_operand(weights, "average")
    target = shape(x)
    if shape(weights) != target:
        if axis is None:
            raise TypeError("average: weights of another shape than x need an axis")
        if len(shape(weights)) != 1 or (not integer(axis) and len(axis) != 1):
            raise TypeError("average: weights of another shape than x must be 1-D, for one axis")
        along = axes_of(axis, len(target))[0]
        if shape(weights)[0] != target[along]:
            raise ValueError(f"average: {shape(weights)[0]} weights for an axis of length {target[along]}")
        weights = reshape(weights, tuple(n if i == along else 1 for i, n in enumerate(target)))
    total = sum(weights + 0 * x, axis=axis, keepdims=keepdims)
    if not is_lazy(data(total)) and bool(ns(data(total)).any(array(data(total)) == 0)):  # NumPy's refusal, not NaN
        raise ZeroDivisionError("average: the weights sum to zero, so they cannot be normalized")
    avg = sum(x * weights, axis=axis, keepdims=keepdims) / total
    return (avg, total + 0 * avg) if returned else avg
