"""Utilities written as gradient rules of two lines, as Tracker.jl writes them: ``identity``, ``hook``,
``nobacksies``, ``checkpoint``."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ..api import forward
from ..backends.arrays import shape_of
from ..core.errors import Caller
from ..core.recording import no_grad, recording
from ..core.tape import _next_epoch
from ..core.tracked import Tracked, _TrackedValue, data
from ..core.validation import check_replayed
from ..ops.custom import grad_rule, primitive
from ..ops.registry import defop, register_rules

identity = defop("identity", lambda x: x, family="utility")
register_rules("utility", {"identity": (lambda g, ans, x: g,)})


@primitive
def hook(f: Callable, x: Any) -> Any:
    """Identity going forward; going back, the sensitivity of ``x`` is replaced by ``f(Δ)``.

    >>> import trackerlab as tl
    >>> x = tl.param(2.0)
    >>> tl.gradient(lambda x: tl.hook(lambda Δ: 10 * Δ, x) * 3, x)
    (30.0 (tracked),)
    """
    return x


@grad_rule(hook)
def _(f, x):
    def pullback(Δ):
        sent = f(Δ)
        if sent is None:  # a hook that prints and returns nothing would stop the gradient without a word
            raise TypeError(
                "hook: f returned None; return the sensitivity to send on: Δ itself to leave it as it is "
                "(lambda Δ: (print(Δ), Δ)[1]), or zeros to stop it"
            )
        return (None, sent)

    return data(x), pullback


@primitive
def nobacksies(message: str, x: Any) -> Any:
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
def checkpoint(f: Callable, *args: Any, **settings: Any) -> Any:
    """``f(*args, **settings)`` without keeping its tape: the backward pass runs ``f`` again to get it.
    Gradients go to ``args``; keyword ``settings`` are constants.

    >>> import trackerlab as tl
    >>> x = tl.param(3.0)
    >>> tl.gradient(lambda x: tl.checkpoint(lambda t: t * t, x), x)
    (6.0 (tracked),)
    """
    return f(*args, **settings)


@grad_rule(checkpoint)
def _(f, *args, **settings):
    if settings:
        f = functools.partial(f, **settings)
    with no_grad():
        value = data(f(*(data(a) for a in args)))  # plain even where f differentiates (gradient records)
    if isinstance(value, list | tuple):
        raise TypeError(
            f"checkpoint: f returned a {type(value).__name__}; checkpoint records one result: return one array, "
            "e.g. tl.stack([a, b]), and index it"
        )

    def pullback(Δ):
        with recording(True):  # the replay records even inside a plain walk
            inputs = []

            def replayed(*xs):
                inputs.extend(xs)
                return f(*xs)

            start = _next_epoch()  # what the replay records is of this epoch or later
            again, back = forward(replayed, *args)
            with Caller("checkpoint"):
                check_replayed(value, again)  # random numbers or state in f: refuse
            _refuse_closures(again, inputs, start)
            return (None, *back(Δ))

    return value, pullback


def _refuse_closures(y, inputs, start: int) -> None:
    """Refuse a replay of ``checkpoint``'s ``f`` whose tape reaches a tracked value made before the replay other
    than through ``f``'s arguments: a parameter ``f`` closes over. The backward pass of ``checkpoint`` sends
    sensitivities to its arguments only, so that value's gradient would silently be lost."""
    root = getattr(y, "tracker", None)
    if root is None:
        return
    stop = {x.tracker for x in inputs if isinstance(x, _TrackedValue)}
    seen = {root}
    stack = [root]
    while stack:
        node = stack.pop()
        if node in stop:
            continue
        if node.epoch < start:
            what = "a parameter" if node.isleaf else f"the result of {node.f.name}"
            raise TypeError(
                f"checkpoint: f uses a tracked value that is not one of its arguments ({what} of shape "
                f"{shape_of(node.data)}), and checkpoint sends gradients to its arguments only, so that value's "
                "gradient would be lost; pass it as an argument: tl.checkpoint(lambda x, W: ..., x, W)"
            )
        if not node.isleaf:
            for arg in node.args:
                if type(arg) is Tracked and arg not in seen:
                    seen.add(arg)
                    stack.append(arg)
