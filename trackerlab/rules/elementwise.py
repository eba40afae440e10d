"""Elementwise operations and their gradient rules: arithmetic, powers, exponentials, trigonometry, casts.

Forwards use the array-API names of the backend's namespace (``asin``, ``pow``, ``atan2``); the
operations keep NumPy's names (``arcsin``, ``power``, ``arctan2``). Python floats take the ``math``
fast path. Every pullback is written with ``tl`` operations on ``g``, ``ans`` and the arguments, so
it can be differentiated again.
"""

from __future__ import annotations

import math
import operator
from typing import Any

from ..backends.arrays import NDARRAY, namespace
from ..core.tracked import data
from ..ops.registry import defop, register_rules
from ._util import (
    direct,
    div,
    is_complex,
    keep,
    lift,
    mask,
    plain_sign,
    real_for,
    real_part,
    slope_of_abs,
    unbroadcast,
    wrapper,
)

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


def _numpy_scalar(name: str, x, y):
    """``name(x, y)`` computed as NumPy computes it on arrays, for Python numbers where Python's operator
    raises or leaves the reals: inf or NaN with NumPy's RuntimeWarning, returned as a Python number."""
    xp = namespace()
    out = getattr(xp, name)(xp.asarray(x), xp.asarray(y))
    return complex(out) if type(x) is complex or type(y) is complex else float(out)


def _logaddexp2(x, y):
    # scaled by ln 2 after the two are promoted to one dtype, as NumPy's logaddexp2 computes (a float32 y
    # beside a float64 x in float64, not scaled in float32 first)
    if hasattr(x, "dtype") and hasattr(y, "dtype") and x.dtype != y.dtype:
        xp = namespace(x, y)
        common = xp.result_type(x, y)
        x, y = xp.asarray(x, dtype=common), xp.asarray(y, dtype=common)
    return logaddexp.impl(x * _LN2, y * _LN2) / _LN2


def _divide(x, y):
    try:
        return x / y
    except ZeroDivisionError:  # Python numbers: 1.0 / 0.0 is inf, as for arrays
        return _numpy_scalar("divide", x, y)


def _power(x, y):
    try:
        out = x**y
    except (ZeroDivisionError, OverflowError):  # 0.0 ** -1 and 10.0 ** 400: inf, as for arrays
        return _numpy_scalar("power", x, y)
    if type(out) is complex and type(x) is not complex and type(y) is not complex:
        return _numpy_scalar("power", x, y)  # (-8.0) ** (1/3): NaN, as for arrays, not a complex number
    return out


def _cbrt(xp, x):
    return xp.sign(x) * xp.abs(x) ** (1 / 3)


def _sinc(x):
    if type(x) is float:
        return 1.0 if x == 0.0 else math.sin(math.pi * x) / (math.pi * x)
    xp = namespace(x)
    x = x if hasattr(x, "shape") else xp.asarray(x)
    f = getattr(xp, "sinc", None)
    if f is not None:
        return f(x)
    y = math.pi * xp.where(x == 0, xp.ones_like(x), x)
    return xp.where(x == 0, xp.ones_like(y), xp.sin(y) / y)


def _astype(x, dtype, copy=True):
    xp = namespace(x)
    return xp.astype(x if hasattr(x, "shape") else xp.asarray(x), dtype)


u = _unary
add = defop("add", _binary("add", operator.add), family="elementwise")
subtract = defop("subtract", _binary("subtract", operator.sub), family="elementwise")
multiply = defop("multiply", _binary("multiply", operator.mul), family="elementwise")
divide = defop("divide", _binary("divide", _divide), family="elementwise")
power = defop("power", _binary("power", _power), family="elementwise")
float_power = defop("float_power", _binary("float_power", None, "pow"), family="elementwise")
hypot = defop("hypot", _binary("hypot"), family="elementwise")
arctan2 = defop("arctan2", _binary("arctan2", None, "atan2"), family="elementwise")
logaddexp = defop("logaddexp", _binary("logaddexp"), family="elementwise")
logaddexp2 = defop("logaddexp2", lambda x, y: _logaddexp2(x, y), family="elementwise", doc="log2(2**x + 2**y)")
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
sinc = defop("sinc", _sinc, family="elementwise", doc="sin(πx) / (πx), and 1 at 0.")
del u

# Fused pullbacks. Nested AD records the backward pass; a pullback written as a formula of several
# operations records each of them, and differentiating it again walks each. These operations are such
# formulas as one recorded call whose own rule is known (PyTorch's double-backward formulas do the
# same), so a pullback that is differentiated again costs one node.


def _tanh_backward(g, t):
    return g * (1 - t * t)


def _power_backward(g, x, exponent):
    if exponent == 0:  # x⁰ = 1 everywhere (0⁰ too): no slope, not 0 · 0⁻¹
        return g * (0.0 if type(x) is float else namespace(x).zeros_like(x))
    if exponent == 2:  # 2 x¹ is 2 x: one operation less (x ** 1 copies x)
        return g * (exponent * x)
    if exponent == 1 and type(g) is NDARRAY and type(x) is NDARRAY and g.shape == x.shape:
        if g.dtype == x.dtype and g.dtype.kind == "f":  # real: no 0 · inf of a complex product
            return g.copy()  # g · 1 x⁰ is g itself, in a new array
    return g * (exponent * _power(x, exponent - 1))


_tanh_backward_op = defop(
    "_tanh_backward", _tanh_backward, family="elementwise", doc="g · (1 − t²): the pullback of t = tanh(x)."
)
_power_backward_op = defop(
    "_power_backward",
    _power_backward,
    arity=2,
    family="elementwise",
    doc="g · p x^(p−1) (0 for p = 0): the pullback of x ** p for a constant number p.",
)


def _power_backward_x(gg, ans, g, x, exponent):
    """d/dx g p x^(p−1) = g p (p−1) x^(p−2): the same operation with g p for g and p − 1 for p. For p = 0
    the operation is 0 whatever x is: no sensitivity (not 0 · x⁻², which is NaN at 0)."""
    if exponent == 0:
        return None
    return unbroadcast(x, direct(_power_backward_op, gg * g * exponent, x, exponent=exponent - 1))


def _power_x(g, ans, x, y):
    """The sensitivity of x in x ** y: one fused operation for a constant real number y (``x ** 2``)."""
    if type(y) is int or (isinstance(y, float) and type(y) is not bool):
        # x ** y has x's shape, and so has g: the fused operation's value fits x as it is
        return direct(_power_backward_op, g, x, exponent=y)
    return unbroadcast(x, g * _power_slope(x, y))


def _power_slope(x, y, op=power):
    """d(x ** y)/dx = y x^(y−1), with ``op`` ``power`` or ``float_power``. Where x = 0 and y = 0 that is
    0 · 0⁻¹: the exponent is shifted to 0 there (a constant), so that x ** 0 has slope 0 at 0 as everywhere
    else (PyTorch and JAX agree)."""
    a, b = data(x), data(y)
    if not hasattr(a, "shape") and not hasattr(b, "shape"):
        shift = 1.0 if a == 0 and b == 0 else 0.0
    else:
        xp = namespace(a, b)
        both = xp.logical_and(xp.asarray(a) == 0, xp.asarray(b) == 0)
        shift = mask(both, a if hasattr(a, "shape") and not is_complex(a) else b)
    return op(x, y - 1 + shift) * y  # the operation first: a plain y of a strict backend refuses tracked operands


def _base_of_log(x, y):
    """``x`` for ``log(x)`` in d(x ** y)/dy = x^y log x, with 1 where x = 0 and Re y ≥ 0: there x ** y is 0
    (or 1) for every y ≥ 0 nearby, so its slope in y is 0, not 0 · log 0 (PyTorch's choice too). Where
    x = 0 and y < 0, x ** y is inf and the slope -inf; where x < 0, x ** y is not a real function of y
    and the slope is NaN, as ``log`` of a negative number."""
    a, b = data(x), data(y)
    if not hasattr(a, "shape") and not hasattr(b, "shape"):
        b = b.real if type(b) is complex else b
        return x + 1.0 if a == 0 and b >= 0 else x
    xp = namespace(a, b)
    b = xp.asarray(b)
    if is_complex(b):
        b = xp.real(b)
    both = xp.logical_and(xp.asarray(a) == 0, b >= 0)
    return x + mask(both, a if hasattr(a, "shape") and not is_complex(a) else b)


def _abs_rule(g, ans, x):
    if is_complex(x):  # |z| is real: its cotangent sends Re(g) · conj(z) / |z|
        return real_part(g) * slope_of_abs(x)
    v = data(x)
    return keep(v != 0 if hasattr(v, "shape") else v != 0.0, g * plain_sign(x))


def _astype_rule(g, ans, x, dtype, copy=True):
    return astype(real_for(x, lift(g, x)), _dtype(x))


def _log_rule(g, ans, x):
    try:  # div(g, x), inlined: log is on most tapes
        return g / x
    except ZeroDivisionError:
        return divide(g, x)


def _hypot_rule(first: bool):
    # hypot is the 2-norm of (x, y): at (0, 0) it has no slope, and the subgradient 0 is taken, as for norm
    def pullback(g, ans, x, y):
        safe = ans + mask(data(ans) == 0, data(ans))
        return unbroadcast(x if first else y, g * (x if first else y) / safe)

    return pullback


RULES = {
    # arithmetic: each sensitivity is summed back to its argument's shape
    "add": (lambda g, ans, x, y: unbroadcast(x, g), lambda g, ans, x, y: unbroadcast(y, g)),
    "subtract": (lambda g, ans, x, y: unbroadcast(x, g), lambda g, ans, x, y: unbroadcast(y, -g)),
    "multiply": (lambda g, ans, x, y: unbroadcast(x, g * y), lambda g, ans, x, y: unbroadcast(y, g * x)),
    "divide": (
        lambda g, ans, x, y: unbroadcast(x, div(g, y)),
        lambda g, ans, x, y: unbroadcast(y, div(-g * ans, y)),
    ),
    "power": (
        _power_x,
        lambda g, ans, x, y: unbroadcast(y, g * ans * log(_base_of_log(x, y))),
    ),
    "float_power": (
        lambda g, ans, x, y: unbroadcast(x, g * _power_slope(x, y, float_power)),
        lambda g, ans, x, y: unbroadcast(y, g * ans * log(_base_of_log(x, y))),
    ),
    "negative": (lambda g, ans, x: -g,),
    "positive": (lambda g, ans, x: g,),
    "abs": (_abs_rule,),
    "astype": (_astype_rule,),
    # exponentials and logarithms; a division by zero gives inf or NaN, as NumPy's arrays do
    "exp": (lambda g, ans, x: g * ans,),
    "exp2": (lambda g, ans, x: g * ans * _LN2,),
    "expm1": (lambda g, ans, x: g * (ans + 1),),
    "log": (_log_rule,),
    "log2": (lambda g, ans, x: div(g, x * _LN2),),
    "log10": (lambda g, ans, x: div(g, x * _LN10),),
    "log1p": (lambda g, ans, x: div(g, x + 1),),
    "logaddexp": (
        lambda g, ans, x, y: unbroadcast(x, g * exp(x - ans)),
        lambda g, ans, x, y: unbroadcast(y, g * exp(y - ans)),
    ),
    "logaddexp2": (
        lambda g, ans, x, y: unbroadcast(x, g * exp2(x - ans)),
        lambda g, ans, x, y: unbroadcast(y, g * exp2(y - ans)),
    ),
    # powers and roots
    "sqrt": (lambda g, ans, x: div(g, 2 * ans),),
    "cbrt": (lambda g, ans, x: div(g, 3 * ans * ans),),
    "square": (lambda g, ans, x: direct(_power_backward_op, g, x, exponent=2),),
    "reciprocal": (lambda g, ans, x: -g * ans * ans,),
    "hypot": (_hypot_rule(True), _hypot_rule(False)),
    # trigonometry, and its inverses: d atan2(x, y) = (y dx − x dy) / (x² + y²)
    "sin": (lambda g, ans, x: g * cos(x),),
    "cos": (lambda g, ans, x: -g * sin(x),),
    "tan": (lambda g, ans, x: g * (1 + ans * ans),),
    "arcsin": (lambda g, ans, x: div(g, sqrt(1 - x * x)),),
    "arccos": (lambda g, ans, x: div(-g, sqrt(1 - x * x)),),
    "arctan": (lambda g, ans, x: div(g, 1 + x * x),),
    "arctan2": (
        lambda g, ans, x, y: unbroadcast(x, div(g * y, x * x + y * y)),
        lambda g, ans, x, y: unbroadcast(y, div(-g * x, x * x + y * y)),
    ),
    "deg2rad": (lambda g, ans, x: g * (math.pi / 180),),
    "rad2deg": (lambda g, ans, x: g * (180 / math.pi),),
    # hyperbolic functions
    "sinh": (lambda g, ans, x: g * cosh(x),),
    "cosh": (lambda g, ans, x: g * sinh(x),),
    "tanh": (lambda g, ans, x: direct(_tanh_backward_op, g, ans),),
    "arcsinh": (lambda g, ans, x: div(g, sqrt(x * x + 1)),),
    "arccosh": (lambda g, ans, x: div(g, sqrt(x - 1) * sqrt(x + 1)),),  # √(x−1)√(x+1): the principal branch
    "arctanh": (lambda g, ans, x: div(g, 1 - x * x),),
    "sinc": (lambda g, ans, x: g * _sinc_slope(x),),
    # fused pullbacks (above): each rule is written with the fused operation again where it can be
    "_tanh_backward": (
        lambda gg, ans, g, t: unbroadcast(g, direct(_tanh_backward_op, gg, t)),
        lambda gg, ans, g, t: unbroadcast(t, -2 * gg * g * t),
    ),
    "_power_backward": (
        lambda gg, ans, g, x, exponent: unbroadcast(g, direct(_power_backward_op, gg, x, exponent=exponent)),
        _power_backward_x,
    ),
}
# The rules whose sensitivities have their argument's shape and kind by their form (elementwise in g, ans
# and x, or summed back by unbroadcast): the walk does not check what they send (see ``register_rules``).
FITTING = (
    *("add", "subtract", "multiply", "divide", "power", "float_power", "negative", "positive"),
    *("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "logaddexp", "logaddexp2"),
    *("sqrt", "cbrt", "square", "reciprocal", "hypot"),
    *("sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "deg2rad", "rad2deg"),
    *("sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh"),
)
register_rules("elementwise", RULES, fitting=FITTING)


def _dtype(x):
    value = data(x)
    return value.dtype if hasattr(value, "dtype") else namespace().float64


@wrapper("astype")
def astype(x: Any, dtype: Any, copy: bool = True) -> Any:
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


def _sinc_slope(x):
    """sinc′(x) = (cos(πx) − sinc(x)) / x, written with tracked operations so it differentiates again.

    Near 0 the formula cancels (0/0 at 0), so there the Taylor series is used instead:
    sinc′(x) = Σ_{k≥1} (−1)^k 2k π^{2k} x^{2k−1} / (2k+1)!, accurate to rounding for |x| < 0.1.
    Elsewhere ``x`` is shifted to 1 where the series applies, so neither branch ever sees 0/0.
    """
    plain = data(x)
    xp = namespace(plain)
    small = mask(xp.abs(plain if hasattr(plain, "shape") else xp.asarray(plain)) < 0.1, plain)
    away = x * (1 - small) + small  # x where the formula is used, 1 where the series is
    exact = (cos(math.pi * away) - sinc(away)) / away
    x2 = x * x
    series = 0.0
    for k in range(7, 0, -1):
        series = series * x2 + (-1) ** k * 2 * k * math.pi ** (2 * k) / math.factorial(2 * k + 1)
    return series * x * small + exact * (1 - small)  # tracked on the left: array-API arrays do not defer
