"""Reductions and their gradient rules: the sensitivity of a reduced axis is spread back over it."""

from __future__ import annotations

from ..ops import defop, register_rules


def _sum(x, axis=None, keepdims=False):
    if type(x) is float:
        return x
    return ns(x).sum(x, axis=axis, keepdims=keepdims)


def _mean(x, axis=None, keepdims=False):
    if type(x) is float:
        return x
    return ns(x).mean(x, axis=axis, keepdims=keepdims)


sum = defop("sum", _sum, arity=1, family="reductions")
mean = defop("mean", _mean, arity=1, family="reductions")


def _axes(axis, ndim: int) -> tuple:
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, tuple | list) else (axis,)
    return tuple(a % ndim for a in axes)


def _spread(g, x, axis, keepdims):
    """Give the reduced sensitivity ``g`` back its reduced axes (size 1), then broadcast it to ``x``."""
    target = shape(x)
    if not keepdims and target:
        axes = _axes(axis, len(target))
        g = reshape(g, tuple(1 if i in axes else n for i, n in enumerate(target)))
    return broadcast_to(g, target)


def _count(x, axis) -> int:
    target = shape(x)
    n = 1
    for a in _axes(axis, len(target)):
        n *= target[a]
    return n


RULES = {
    "sum": (lambda g, ans, x, axis=None, keepdims=False: _spread(g, x, axis, keepdims),),
    "mean": (lambda g, ans, x, axis=None, keepdims=False: _spread(g, x, axis, keepdims) / _count(x, axis),),
}
register_rules("reductions", RULES)

from ._util import ns, shape  # noqa: E402  (the families' rules use each other)
from .shape import broadcast_to, reshape  # noqa: E402
