"""Utilities written as gradient rules of two lines, as Tracker.jl writes them: ``identity``, ``hook``,
``nobacksies``, ``checkpoint``."""

from __future__ import annotations

from .._checks import check_replayed
from .._recording import RECORDING, no_grad
from ..api import forward
from ..custom_rules import grad_rule, primitive
from ..ops import defop, register_rules
from ..tracked import data

identity = defop("identity", lambda x: x, family="utility")
register_rules("utility", {"identity": (lambda g, ans, x: g,)})


@primitive
def hook(f, x):
    """Identity going forward; going back, the sensitivity of ``x`` is replaced by ``f(Δ)``.

    >>> import trackerlab as tl
    >>> x = tl.param(2.0)
    >>> tl.gradient(lambda x: tl.hook(lambda Δ: 10 * Δ, x) * 3, x)
    (30.0 (tracked),)
    """
    return x


@grad_rule(hook)
def _(f, x):
    return data(x), lambda Δ: (None, f(Δ))


@primitive
def nobacksies(message: str, x):
    """Identity going forward; back-propagating through it raises an error with ``message``.

    >>> import trackerlab as tl
    >>> y = tl.nobacksies("no second derivatives here", tl.param(2.0) * 3)
    >>> tl.back_(y)
    Traceback (most recent call last):
    ...
    RuntimeError: nobacksies: no second derivatives here
    """
    return x


@grad_rule(nobacksies)
def _(message, x):
    def refuse(Δ):
        raise RuntimeError(f"nobacksies: {message}")

    return data(x), refuse


@primitive
def checkpoint(f, *args):
    """``f(*args)`` without keeping its tape: the backward pass runs ``f`` again to get it.

    >>> import trackerlab as tl
    >>> x = tl.param(3.0)
    >>> tl.gradient(lambda x: tl.checkpoint(lambda t: t * t, x), x)
    (6.0 (tracked),)
    """
    return f(*args)


@grad_rule(checkpoint)
def _(f, *args):
    with no_grad():
        value = f(*(data(a) for a in args))

    def pullback(Δ):
        before = RECORDING.on
        RECORDING.on = True  # the replay records even inside a plain walk
        try:
            again, back = forward(f, *args)
            check_replayed(value, again, "checkpoint")  # random numbers or state in f: refuse
            return (None, *back(Δ))
        finally:
            RECORDING.on = before

    return value, pullback
