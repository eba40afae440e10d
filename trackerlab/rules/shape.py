"""Shape operations and their gradient rules: each sends the sensitivity back through its inverse."""

from __future__ import annotations

from ..ops import defop, register_rules


def _reshape(x, shape):
    return ns(x).reshape(x, tuple(shape) if not isinstance(shape, int) else (shape,))


def _transpose(x, axes=None):
    xp = ns(x)
    if axes is None:
        axes = tuple(reversed(range(x.ndim)))
    return xp.permute_dims(x, tuple(axes))


def _broadcast_to(x, shape):
    if type(x) is float:
        return ns().broadcast_to(ns().asarray(x), tuple(shape)) if shape else x
    return ns(x).broadcast_to(x, tuple(shape))


reshape = defop("reshape", _reshape, arity=1, family="shape")
transpose = defop("transpose", _transpose, arity=1, family="shape")
broadcast_to = defop("broadcast_to", _broadcast_to, arity=1, family="shape")


def _inverse(axes, ndim: int) -> tuple:
    if axes is None:
        return tuple(reversed(range(ndim)))
    order = [0] * ndim
    for i, a in enumerate(axes):
        order[a % ndim] = i
    return tuple(order)


RULES = {
    "reshape": (lambda g, ans, x, shape: reshape(g, _shape(x)),),
    "transpose": (lambda g, ans, x, axes=None: transpose(g, _inverse(axes, len(_shape(x)))),),
    "broadcast_to": (lambda g, ans, x, shape: unbroadcast(x, g),),
}
register_rules("shape", RULES)

from ._util import ns, unbroadcast  # noqa: E402  (the families' rules use each other)
from ._util import shape as _shape  # noqa: E402
