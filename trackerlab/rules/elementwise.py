"""Elementwise operations and their gradient rules: arithmetic, powers, exponentials, trigonometry, selection.

Forwards use the array-API names of the backend's namespace (``asin``, ``pow``, ``atan2``); the
operations keep NumPy's names (``arcsin``, ``power``, ``arctan2``). Python floats take the ``math``
fast path. Every pullback is written with ``tl`` operations on ``g``, ``ans`` and the arguments, so
it can be differentiated again.
"""

from __future__ import annotations

import math
import operator

from .._backend import namespace
from ..ops import defop, register_rules

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)


def _unary(name: str, scalar=None, array_name: str | None = None, fallback=None):
    """The forward of a unary function: ``math`` on Python floats, the backend's namespace otherwise."""
    array_name = array_name or name
    resolved = {}  # array type -> the namespace's function, looked up once per type

    def impl(x):
        if scalar is not None and type(x) is float:
            try:
                return scalar(x)
            except (ValueError, OverflowError, ZeroDivisionError):  # math raises where NumPy gives nan or inf
                pass
        f = resolved.get(type(x))
        if f is not None:
            return f(x)
        xp = namespace(x)
        f = getattr(xp, array_name, None)
        if f is None:
            return fallback(xp, x)
        if not hasattr(x, "shape"):
            return f(xp.asarray(x))
        resolved[type(x)] = f
        return f(x)

    impl.__name__ = name
    return impl


def _binary(name: str, python=None, array_name: str | None = None):
    """The forward of a binary function: Python's operator where it broadcasts, else the namespace's
    function called ``name`` (or ``array_name`` where the backend lacks it, as array-API libraries do)."""

    def impl(x, y):
        if python is not None:
            return python(x, y)
        xp = namespace(x, y)
        if not hasattr(x, "shape") and not hasattr(y, "shape"):
            x = xp.asarray(x)
        f = getattr(xp, name, None) or getattr(xp, array_name)
        return f(x, y)

    impl.__name__ = name
    return impl


def _cbrt(xp, x):
    return xp.sign(x) * xp.abs(x) ** (1 / 3)


def _where(condition, x, y):
    xp = namespace(condition, x, y)
    if not hasattr(x, "shape") and not hasattr(y, "shape"):
        x = xp.asarray(x)
    return xp.where(condition, x, y)


def _bounds(a_min, a_max, named: dict):
    """NumPy's ``clip(x, a_min, a_max)`` and ``clip(x, min=, max=)`` spellings, as ``(low, high)``."""
    return (a_min if a_min is not None else named.get("min"), a_max if a_max is not None else named.get("max"))


def _clip(x, a_min=None, a_max=None, **named):
    lo, hi = _bounds(a_min, a_max, named)
    xp = namespace(x, lo, hi)
    return xp.clip(x if hasattr(x, "shape") else xp.asarray(x), lo, hi)


def _astype(x, dtype, copy=True):
    xp = namespace(x)
    return xp.astype(x if hasattr(x, "shape") else xp.asarray(x), dtype)


u = _unary
add = defop("add", _binary("add", operator.add), family="elementwise")
subtract = defop("subtract", _binary("subtract", operator.sub), family="elementwise")
multiply = defop("multiply", _binary("multiply", operator.mul), family="elementwise")
divide = defop("divide", _binary("divide", operator.truediv), family="elementwise")
power = defop("power", _binary("power", operator.pow), family="elementwise")
float_power = defop("float_power", _binary("float_power", None, "pow"), family="elementwise")
maximum = defop("maximum", _binary("maximum"), family="elementwise")
minimum = defop("minimum", _binary("minimum"), family="elementwise")
fmax = defop("fmax", _binary("fmax", None, "maximum"), family="elementwise")
fmin = defop("fmin", _binary("fmin", None, "minimum"), family="elementwise")
hypot = defop("hypot", _binary("hypot"), family="elementwise")
arctan2 = defop("arctan2", _binary("arctan2", None, "atan2"), family="elementwise")
logaddexp = defop("logaddexp", _binary("logaddexp"), family="elementwise")
logaddexp2 = defop(
    "logaddexp2", lambda x, y: logaddexp.impl(x * _LN2, y * _LN2) / _LN2, family="elementwise", doc="log2(2**x + 2**y)"
)
where = defop("where", _where, family="elementwise", doc="``where(condition, x, y)``: x where condition, else y.")
clip = defop("clip", _clip, family="elementwise")
_astype_op = defop("astype", _astype, arity=1, family="elementwise", doc="``x`` cast to a floating ``dtype``.")
negative = defop("negative", operator.neg, family="elementwise")
positive = defop("positive", operator.pos, family="elementwise")
abs = defop("abs", u("abs", math.fabs), family="elementwise")
exp = defop("exp", u("exp", math.exp), family="elementwise")
exp2 = defop("exp2", u("exp2", lambda x: 2.0**x, fallback=lambda xp, x: xp.pow(2.0, x)), family="elementwise")
expm1 = defop("expm1", u("expm1", math.expm1), family="elementwise")
log = defop("log", u("log", math.log), family="elementwise")
log2 = defop("log2", u("log2", math.log2), family="elementwise")
log10 = defop("log10", u("log10", math.log10), family="elementwise")
log1p = defop("log1p", u("log1p", math.log1p), family="elementwise")
sqrt = defop("sqrt", u("sqrt", math.sqrt), family="elementwise")
cbrt = defop(
    "cbrt", u("cbrt", lambda x: math.copysign(math.fabs(x) ** (1 / 3), x), fallback=_cbrt), family="elementwise"
)
square = defop("square", u("square", lambda x: x * x), family="elementwise")
reciprocal = defop(
    "reciprocal", u("reciprocal", lambda x: 1.0 / x, fallback=lambda xp, x: 1.0 / x), family="elementwise"
)
sin = defop("sin", u("sin", math.sin), family="elementwise")
cos = defop("cos", u("cos", math.cos), family="elementwise")
tan = defop("tan", u("tan", math.tan), family="elementwise")
arcsin = defop("arcsin", u("arcsin", math.asin, "asin"), family="elementwise")
arccos = defop("arccos", u("arccos", math.acos, "acos"), family="elementwise")
arctan = defop("arctan", u("arctan", math.atan, "atan"), family="elementwise")
sinh = defop("sinh", u("sinh", math.sinh), family="elementwise")
cosh = defop("cosh", u("cosh", math.cosh), family="elementwise")
tanh = defop("tanh", u("tanh", math.tanh), family="elementwise")
arcsinh = defop("arcsinh", u("arcsinh", math.asinh, "asinh"), family="elementwise")
arccosh = defop("arccosh", u("arccosh", math.acosh, "acosh"), family="elementwise")
arctanh = defop("arctanh", u("arctanh", math.atanh, "atanh"), family="elementwise")
deg2rad = defop("deg2rad", lambda x: x * (math.pi / 180), family="elementwise")
rad2deg = defop("rad2deg", lambda x: x * (180 / math.pi), family="elementwise")
del u


def _ties(x, y):
    """Where ``x`` wins a maximum over ``y``: 1, 0, and ½ on ties, so equal arguments share the gradient."""
    x, y = data(x), data(y)
    return mask(x > y, x) + 0.5 * mask(x == y, x)


def _alone(x, y):
    """Where ``x`` is a number facing a NaN in ``y``: there ``fmax`` and ``fmin`` return ``x`` outright."""
    x, y = data(x), data(y)
    xp = namespace(x, y)
    return mask(xp.logical_and(xp.isnan(xp.asarray(y)), xp.logical_not(xp.isnan(xp.asarray(x)))), x)


def _nonzero(x):
    """``x`` with exact zeros replaced by 1 (a constant shift), for ``log(x)`` where its factor is zero."""
    return x + mask(data(x) == 0, x)


def _where_x(g, ans, condition, x, y):
    return unbroadcast(x, g * mask(data(condition), g))


def _where_y(g, ans, condition, x, y):
    return unbroadcast(y, g * (1 - mask(data(condition), g)))


def _clip_x(g, ans, x, a_min=None, a_max=None, **named):
    lo, hi = _bounds(data(a_min), data(a_max), named)
    v = data(x)
    inside = mask(v >= lo, v) if lo is not None else 1.0
    if hi is not None:
        inside = inside * mask(v <= hi, v)
    return unbroadcast(x, g * inside)


RULES = {
    # arithmetic: each sensitivity is summed back to its argument's shape
    "add": (lambda g, ans, x, y: unbroadcast(x, g), lambda g, ans, x, y: unbroadcast(y, g)),
    "subtract": (lambda g, ans, x, y: unbroadcast(x, g), lambda g, ans, x, y: unbroadcast(y, -g)),
    "multiply": (lambda g, ans, x, y: unbroadcast(x, g * y), lambda g, ans, x, y: unbroadcast(y, g * x)),
    "divide": (lambda g, ans, x, y: unbroadcast(x, g / y), lambda g, ans, x, y: unbroadcast(y, -g * ans / y)),
    "power": (
        lambda g, ans, x, y: unbroadcast(x, g * y * x ** (y - 1)),
        lambda g, ans, x, y: unbroadcast(y, g * ans * log(_nonzero(x))),
    ),
    "float_power": (
        lambda g, ans, x, y: unbroadcast(x, g * y * float_power(x, y - 1)),
        lambda g, ans, x, y: unbroadcast(y, g * ans * log(_nonzero(x))),
    ),
    "negative": (lambda g, ans, x: -g,),
    "positive": (lambda g, ans, x: g,),
    "abs": (lambda g, ans, x: g * sign(x),),
    "astype": (lambda g, ans, x, dtype, copy=True: astype(lift(g, x), _dtype(x)),),
    # selection: the winner takes the sensitivity, ties share it
    "maximum": (
        lambda g, ans, x, y: unbroadcast(x, g * _ties(x, y)),
        lambda g, ans, x, y: unbroadcast(y, g * _ties(y, x)),
    ),
    "minimum": (
        lambda g, ans, x, y: unbroadcast(x, g * _ties(y, x)),
        lambda g, ans, x, y: unbroadcast(y, g * _ties(x, y)),
    ),
    # fmax and fmin ignore NaN: a number facing a NaN takes the whole sensitivity
    "fmax": (
        lambda g, ans, x, y: unbroadcast(x, g * (_ties(x, y) + _alone(x, y))),
        lambda g, ans, x, y: unbroadcast(y, g * (_ties(y, x) + _alone(y, x))),
    ),
    "fmin": (
        lambda g, ans, x, y: unbroadcast(x, g * (_ties(y, x) + _alone(x, y))),
        lambda g, ans, x, y: unbroadcast(y, g * (_ties(x, y) + _alone(y, x))),
    ),
    "where": (None, _where_x, _where_y),
    "clip": (
        _clip_x,
        lambda g, ans, x, a_min=None, a_max=None, **kw: unbroadcast(a_min, g * mask(data(x) < data(a_min), x)),
        lambda g, ans, x, a_min=None, a_max=None, **kw: unbroadcast(a_max, g * mask(data(x) > data(a_max), x)),
    ),
    # exponentials and logarithms
    "exp": (lambda g, ans, x: g * ans,),
    "exp2": (lambda g, ans, x: g * ans * _LN2,),
    "expm1": (lambda g, ans, x: g * (ans + 1),),
    "log": (lambda g, ans, x: g / x,),
    "log2": (lambda g, ans, x: g / (x * _LN2),),
    "log10": (lambda g, ans, x: g / (x * _LN10),),
    "log1p": (lambda g, ans, x: g / (x + 1),),
    "logaddexp": (
        lambda g, ans, x, y: unbroadcast(x, g * exp(x - ans)),
        lambda g, ans, x, y: unbroadcast(y, g * exp(y - ans)),
    ),
    "logaddexp2": (
        lambda g, ans, x, y: unbroadcast(x, g * exp2(x - ans)),
        lambda g, ans, x, y: unbroadcast(y, g * exp2(y - ans)),
    ),
    # powers and roots
    "sqrt": (lambda g, ans, x: g / (2 * ans),),
    "cbrt": (lambda g, ans, x: g / (3 * ans * ans),),
    "square": (lambda g, ans, x: 2 * g * x,),
    "reciprocal": (lambda g, ans, x: -g * ans * ans,),
    "hypot": (lambda g, ans, x, y: unbroadcast(x, g * x / ans), lambda g, ans, x, y: unbroadcast(y, g * y / ans)),
    # trigonometry, and its inverses: d atan2(x, y) = (y dx − x dy) / (x² + y²)
    "sin": (lambda g, ans, x: g * cos(x),),
    "cos": (lambda g, ans, x: -g * sin(x),),
    "tan": (lambda g, ans, x: g * (1 + ans * ans),),
    "arcsin": (lambda g, ans, x: g / sqrt(1 - x * x),),
    "arccos": (lambda g, ans, x: -g / sqrt(1 - x * x),),
    "arctan": (lambda g, ans, x: g / (1 + x * x),),
    "arctan2": (
        lambda g, ans, x, y: unbroadcast(x, g * y / (x * x + y * y)),
        lambda g, ans, x, y: unbroadcast(y, -g * x / (x * x + y * y)),
    ),
    "deg2rad": (lambda g, ans, x: g * (math.pi / 180),),
    "rad2deg": (lambda g, ans, x: g * (180 / math.pi),),
    # hyperbolic functions
    "sinh": (lambda g, ans, x: g * cosh(x),),
    "cosh": (lambda g, ans, x: g * sinh(x),),
    "tanh": (lambda g, ans, x: g * (1 - ans * ans),),
    "arcsinh": (lambda g, ans, x: g / sqrt(x * x + 1),),
    "arccosh": (lambda g, ans, x: g / sqrt(x * x - 1),),
    "arctanh": (lambda g, ans, x: g / (1 - x * x),),
}
register_rules("elementwise", RULES)


def _dtype(x):
    value = data(x)
    return value.dtype if hasattr(value, "dtype") else namespace().float64


from ..tracked import data  # noqa: E402
from ._util import lift, mask, sign, unbroadcast, wrapper  # noqa: E402


@wrapper("astype")
def astype(x, dtype, copy=True):
    """``x`` cast to ``dtype``, as ``numpy.astype``. A cast to an integer or bool dtype carries no gradient
    (its derivative is 0, as in PyTorch and JAX), so its result is a plain array; floating casts are recorded.

    >>> import trackerlab as tl
    >>> tl.astype(tl.param([1.5, -2.5]), int)
    array([ 1, -2])
    """
    value = data(x)
    if value is not x and not _floating(value, dtype):
        return _astype(value, dtype)
    return _astype_op(x, dtype)


def _floating(value, dtype) -> bool:
    xp = namespace(value)
    return xp.isdtype(xp.empty((0,), dtype=dtype).dtype, ("real floating", "complex floating"))
