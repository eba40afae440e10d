"""Custom pullbacks that are right to first order only: one that closes over ``tl.data(x)`` (or the value its
rule returned) computes sensitivities that nested differentiation sees as constants in ``x``. The walk marks
what such a pullback sends in a recorded walk, so that differentiating it refuses instead of giving a
silently wrong second derivative (as PyTorch's ``once_differentiable`` refuses)."""

from __future__ import annotations

from collections.abc import Callable

from .errors import FirstOrderError
from .tape import _new
from .tracked import Tracked, _TrackedValue, data

__all__ = ["FirstOrder", "first_order_only"]


class FirstOrder:
    """A custom pullback that closes over a plain value of its call: ``tl.data(x)`` of a tracked argument, or
    the value the rule returned. Its sensitivities are right, but to nested differentiation they are
    constants in ``x``, so a derivative of them (a Hessian, a gradient of a gradient) would silently miss
    the pullback's own dependence on ``x``. A recorded walk marks what it sends (``first_order_only``), and
    a walk that reaches the mark refuses, naming the rule and the value."""

    __slots__ = ("name", "pullback", "what")

    def __init__(self, pullback: Callable, name: str, what: str):
        self.pullback, self.name, self.what = pullback, name, what

    def __call__(self, Δ):
        return self.pullback(Δ)

    def refusal(self) -> FirstOrderError:
        if self.what.startswith("the value"):
            fix = "compute it from the tracked arguments instead (tl.exp(x), not the value the rule returned)"
        elif "sensitivity" in self.what:
            fix = "compute the sensitivities from Δ itself (lambda Δ: (2 * Δ,), not lambda Δ: (2 * tl.data(Δ),))"
        else:
            fix = (
                "write it with the tracked arguments instead (lambda Δ: (3 * Δ * x**2,), not xd = tl.data(x) "
                "and lambda Δ: (3 * Δ * xd**2,))"
            )
        return FirstOrderError(
            f"{self.name}: the pullback of its @grad_rule "
            f"{'computes with' if 'sensitivity' in self.what else 'closes over'} {self.what}, a plain value, so the "
            "sensitivities are constants to nested differentiation and this derivative of them (a Hessian, a "
            f"gradient of a gradient, check_grads' second order) would be wrong; {fix}",
            op=self.name,
        )


def first_order_only(pullback: FirstOrder, call_args: tuple, s):
    """What a ``FirstOrder`` pullback sent in a recorded walk (``s``, tracked or plain), as a tape node over it
    and the call's tracked arguments whose own backward step refuses: a walk that reaches it is
    differentiating through the pullback."""

    def refuse(*_):
        raise pullback.refusal()

    refuse.__name__ = f"{pullback.name} pullback"
    operands = tuple(a for a in call_args if type(a) is Tracked)
    if isinstance(s, _TrackedValue):
        operands = (s.tracker, *operands)
    return _new(refuse, operands, None, data(s), back=refuse)
