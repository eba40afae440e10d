"""Elementwise operations and their gradient rules: arithmetic, powers, exponentials, trigonometry."""

from __future__ import annotations

import math
import operator

from .._backend import namespace
from ..ops import defop, register_rules


def _unary(name: str, scalar=None, array_name: str | None = None):
    """The forward of a unary math function: ``math`` on Python floats, the array namespace otherwise."""
    array_name = array_name or name

    def impl(x):
        if scalar is not None and type(x) is float:
            try:
                return scalar(x)
            except (ValueError, OverflowError):  # math raises where NumPy gives nan or inf
                return float(getattr(namespace(), array_name)(x))
        return getattr(namespace(x), array_name)(x)

    impl.__name__ = name
    return impl


def _binary(name: str, python, array_name: str | None = None):
    array_name = array_name or name

    def impl(x, y):
        if python is not None:
            return python(x, y)
        return getattr(namespace(x, y), array_name)(x, y)

    impl.__name__ = name
    return impl


add = defop("add", _binary("add", operator.add), family="elementwise")
subtract = defop("subtract", _binary("subtract", operator.sub), family="elementwise")
multiply = defop("multiply", _binary("multiply", operator.mul), family="elementwise")
divide = defop("divide", _binary("divide", operator.truediv), family="elementwise")
power = defop("power", _binary("power", operator.pow), family="elementwise")
maximum = defop("maximum", _binary("maximum", None), family="elementwise")
minimum = defop("minimum", _binary("minimum", None), family="elementwise")
negative = defop("negative", operator.neg, family="elementwise")
exp = defop("exp", _unary("exp", math.exp), family="elementwise")
log = defop("log", _unary("log", math.log), family="elementwise")
sin = defop("sin", _unary("sin", math.sin), family="elementwise")
cos = defop("cos", _unary("cos", math.cos), family="elementwise")
tanh = defop("tanh", _unary("tanh", math.tanh), family="elementwise")


def _ties(x, y):
    """Where ``x`` wins a maximum over ``y``: 1, 0, and ½ on ties, so equal arguments share the gradient."""
    x, y = data(x), data(y)
    return mask(x > y, x) + 0.5 * mask(x == y, x)


RULES = {
    "add": (lambda g, ans, x, y: unbroadcast(x, g), lambda g, ans, x, y: unbroadcast(y, g)),
    "subtract": (lambda g, ans, x, y: unbroadcast(x, g), lambda g, ans, x, y: unbroadcast(y, -g)),
    "multiply": (lambda g, ans, x, y: unbroadcast(x, g * y), lambda g, ans, x, y: unbroadcast(y, g * x)),
    "divide": (lambda g, ans, x, y: unbroadcast(x, g / y), lambda g, ans, x, y: unbroadcast(y, -g * ans / y)),
    "power": (
        lambda g, ans, x, y: unbroadcast(x, g * y * x ** (y - 1)),
        lambda g, ans, x, y: unbroadcast(y, g * ans * log(x)),
    ),
    "maximum": (
        lambda g, ans, x, y: unbroadcast(x, g * _ties(x, y)),
        lambda g, ans, x, y: unbroadcast(y, g * _ties(y, x)),
    ),
    "minimum": (
        lambda g, ans, x, y: unbroadcast(x, g * _ties(y, x)),
        lambda g, ans, x, y: unbroadcast(y, g * _ties(x, y)),
    ),
    "negative": (lambda g, ans, x: -g,),
    "exp": (lambda g, ans, x: g * ans,),
    "log": (lambda g, ans, x: g / x,),
    "sin": (lambda g, ans, x: g * cos(x),),
    "cos": (lambda g, ans, x: -g * sin(x),),
    "tanh": (lambda g, ans, x: g * (1 - ans * ans),),
}
register_rules("elementwise", RULES)

from ..tracked import data  # noqa: E402
from ._util import mask, unbroadcast  # noqa: E402
