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


def _numpy_scalar(name: str, x, y):
    """``name(x, y)`` computed as NumPy computes it on arrays, for Python numbers where Python's operator
    raises or leaves the reals: inf or NaN with NumPy's RuntimeWarning, returned as a Python number."""
    xp = namespace()
    out = getattr(xp, name)(xp.asarray(x), xp.asarray(y))
    return complex(out) if type(x) is complex or type(y) is complex else float(out)


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


def _real_only(name: str, impl):
    """``impl`` refusing complex operands (``_util.real_only``, which this module cannot import yet)."""

    def checked(*args, **kwargs):
        refuse_complex(name, *args, *kwargs.values())
        return impl(*args, **kwargs)

    checked.__name__ = name
    return checked


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
divide = defop("divide", _binary("divide", _divide), family="elementwise")
power = defop("power", _binary("power", _power), family="elementwise")
float_power = defop("float_power", _binary("float_power", None, "pow"), family="elementwise")
maximum = defop("maximum", _real_only("maximum", _binary("maximum")), family="elementwise")
minimum = defop("minimum", _real_only("minimum", _binary("minimum")), family="elementwise")
fmax = defop("fmax", _real_only("fmax", _binary("fmax", None, "maximum")), family="elementwise")
fmin = defop("fmin", _real_only("fmin", _binary("fmin", None, "minimum")), family="elementwise")
hypot = defop("hypot", _binary("hypot"), family="elementwise")
arctan2 = defop("arctan2", _binary("arctan2", None, "atan2"), family="elementwise")
logaddexp = defop("logaddexp", _binary("logaddexp"), family="elementwise")
logaddexp2 = defop(
    "logaddexp2", lambda x, y: logaddexp.impl(x * _LN2, y * _LN2) / _LN2, family="elementwise", doc="log2(2**x + 2**y)"
)
where = defop("where", _where, family="elementwise", doc="``where(condition, x, y)``: x where condition, else y.")
clip = defop("clip", _real_only("clip", _clip), family="elementwise")
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
# the complex conjugate and the real part, which the rules of non-holomorphic functions are written with
_conj = defop(
    "_conj", u("conj", lambda x: x, fallback=lambda xp, x: x), family="elementwise", doc="The complex conjugate."
)
_real = defop("_real", u("real", lambda x: x, fallback=lambda xp, x: x), family="elementwise", doc="The real part.")
del u


def _share(x, y, larger: bool, nan_wins: bool):
    """The share of ``x`` in ``maximum(x, y)`` (``larger``) or ``minimum``: 1 where it wins, ½ on ties, 0
    where it loses. A NaN wins ``maximum``/``minimum`` (they return it) and loses ``fmax``/``fmin`` (they
    return the number facing it); two NaNs share."""
    x, y = data(x), data(y)
    xp = namespace(x, y)
    a, b = xp.asarray(x), xp.asarray(y)
    a_nan, b_nan = xp.isnan(a), xp.isnan(b)
    wins = xp.logical_and(a_nan, xp.logical_not(b_nan)) if nan_wins else xp.logical_and(b_nan, xp.logical_not(a_nan))
    ties = xp.logical_or(a == b, xp.logical_and(a_nan, b_nan))
    share = mask(xp.logical_or(a > b if larger else a < b, wins), a) + 0.5 * mask(ties, a)
    return share if hasattr(x, "shape") or hasattr(y, "shape") else float(share)


def _chooser(larger: bool, nan_wins: bool, first: bool):
    def pullback(g, ans, x, y):
        share = _share(x, y, larger, nan_wins) if first else _share(y, x, larger, nan_wins)
        return unbroadcast(x if first else y, keep(data(share) != 0, g * share))

    return pullback


def _power_slope(x, y):
    """d(x ** y)/dx = y x^(y−1). Where x = 0 and y = 0 that is 0 · 0⁻¹: the exponent is shifted to 0 there
    (a constant), so that x ** 0 has slope 0 at 0 as everywhere else (PyTorch and JAX agree)."""
    a, b = data(x), data(y)
    if not hasattr(a, "shape") and not hasattr(b, "shape"):
        shift = 1.0 if a == 0 and b == 0 else 0.0
    else:
        xp = namespace(a, b)
        both = xp.logical_and(xp.asarray(a) == 0, xp.asarray(b) == 0)
        shift = mask(both, a if hasattr(a, "shape") and not is_complex(a) else b)
    return power(x, y - 1 + shift) * y  # the operation first: a plain y of a strict backend refuses tracked operands


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


def _condition(c):
    """The plain condition of ``where`` as booleans."""
    c = data(c)
    if not hasattr(c, "shape"):
        return bool(c)
    xp = namespace(c)
    return c if xp.isdtype(c.dtype, "bool") else c != 0


def _where_x(g, ans, condition, x, y):
    return unbroadcast(x, keep(_condition(condition), g))


def _where_y(g, ans, condition, x, y):
    c = _condition(condition)
    return unbroadcast(y, keep(not c if isinstance(c, bool) else namespace(c).logical_not(c), g))


def _outside(v, lo, hi):
    """Where ``clip`` replaced ``v`` by a bound (a NaN passes through, as ``clip`` returns it)."""
    xp = namespace(v, lo, hi)
    v = xp.asarray(v)
    out = v < lo if lo is not None else xp.zeros(v.shape, dtype=xp.bool)
    return xp.logical_or(out, v > hi) if hi is not None else out


def _clip_x(g, ans, x, a_min=None, a_max=None, **named):
    lo, hi = _bounds(data(a_min), data(a_max), named)
    inside = namespace(data(x)).logical_not(_outside(data(x), lo, hi))
    return unbroadcast(x, keep(inside, g))


def _clip_bound(low: bool):
    def pullback(g, ans, x, a_min=None, a_max=None, **named):
        v, bound = data(x), data(a_min if low else a_max)
        hit = xp_less(v, bound) if low else xp_less(bound, v)
        return unbroadcast(a_min if low else a_max, keep(hit, g))

    return pullback


def xp_less(a, b):
    """``a < b`` on plain values: a Python bool for two numbers, booleans of the backend otherwise."""
    if not hasattr(a, "shape") and not hasattr(b, "shape"):
        return bool(a < b)
    xp = namespace(a, b)
    return xp.asarray(a) < xp.asarray(b)


def _abs_rule(g, ans, x):
    if is_complex(x):  # |z| is real: its cotangent sends Re(g) · conj(z) / |z|
        return real_part(g) * slope_of_abs(x)
    v = data(x)
    return keep(v != 0 if hasattr(v, "shape") else v != 0.0, g * sign(x))


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
        lambda g, ans, x, y: unbroadcast(x, g * _power_slope(x, y)),
        lambda g, ans, x, y: unbroadcast(y, g * ans * log(_base_of_log(x, y))),
    ),
    "float_power": (
        lambda g, ans, x, y: unbroadcast(x, g * _float_power_slope(x, y)),
        lambda g, ans, x, y: unbroadcast(y, g * ans * log(_base_of_log(x, y))),
    ),
    "negative": (lambda g, ans, x: -g,),
    "positive": (lambda g, ans, x: g,),
    "abs": (_abs_rule,),
    "astype": (_astype_rule,),
    # selection: the winner takes the sensitivity, ties share it, a loser gets exactly 0 (even of an inf)
    "maximum": (_chooser(True, True, True), _chooser(True, True, False)),
    "minimum": (_chooser(False, True, True), _chooser(False, True, False)),
    # fmax and fmin ignore NaN: a number facing a NaN takes the whole sensitivity
    "fmax": (_chooser(True, False, True), _chooser(True, False, False)),
    "fmin": (_chooser(False, False, True), _chooser(False, False, False)),
    "where": (None, _where_x, _where_y),
    "clip": (_clip_x, _clip_bound(True), _clip_bound(False)),
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
    "square": (lambda g, ans, x: 2 * g * x,),
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
    "tanh": (lambda g, ans, x: g * (1 - ans * ans),),
    "arcsinh": (lambda g, ans, x: div(g, sqrt(x * x + 1)),),
    "arccosh": (lambda g, ans, x: div(g, sqrt(x - 1) * sqrt(x + 1)),),  # √(x−1)√(x+1): the principal branch
    "arctanh": (lambda g, ans, x: div(g, 1 - x * x),),
    # the conjugate is linear in the real and imaginary parts; the real part sends a real cotangent
    "_conj": (lambda g, ans, x: real_for(x, _conj(g)),),
    "_real": (lambda g, ans, x: real_part(g),),
}
register_rules("elementwise", RULES)


def _float_power_slope(x, y):
    a, b = data(x), data(y)
    xp = namespace(a, b)
    both = xp.logical_and(xp.asarray(a) == 0, xp.asarray(b) == 0)
    return float_power(x, y - 1 + mask(both, a if hasattr(a, "shape") and not is_complex(a) else b)) * y


def _dtype(x):
    value = data(x)
    return value.dtype if hasattr(value, "dtype") else namespace().float64


from ..tracked import data  # noqa: E402
from ._util import (  # noqa: E402
    div,
    is_complex,
    keep,
    lift,
    mask,
    real_for,
    real_part,
    refuse_complex,
    sign,
    slope_of_abs,
    unbroadcast,
    wrapper,
)


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

# ----------------------------------------------------------------------------------------------------
# Complex parts, remainders, sinc and nan_to_num.
#
# Complex numbers follow HIPS autograd's and JAX's convention: the sensitivity of z = x + iy is
# ∂L/∂x − i ∂L/∂y, a holomorphic function pulls back g·f′(z) without a conjugate, and a real input's
# gradient is real. ``_complex`` (a real value as a complex one) is the bridge: its pullback is real(g).


def _is_complex(x) -> bool:
    value = data(x)
    if isinstance(value, complex):
        return True
    dtype = getattr(value, "dtype", None)
    return dtype is not None and namespace(value).isdtype(dtype, "complex floating")


def _copy_of(x):
    """A real value passed through ``real`` or ``conj``: a copy, so the result never aliases the input."""
    if not hasattr(x, "shape"):
        return x
    return namespace(x).asarray(x, copy=True)


def _real_impl(x):
    return namespace(x).real(x) if _is_complex(x) else _copy_of(x)


def _imag(x):
    if _is_complex(x):
        return namespace(x).imag(x)
    if not hasattr(x, "shape"):
        return 0.0
    return namespace(x).zeros_like(x)


def _conj_impl(x):
    return namespace(x).conj(x) if _is_complex(x) else _copy_of(x)


def _angle(x, deg=False):
    xp = namespace(x)
    if type(x) in (float, int, complex):
        out = math.atan2(x.imag, x.real)
    else:
        x = x if hasattr(x, "shape") else xp.asarray(x)
        if _is_complex(x):
            out = xp.atan2(xp.imag(x), xp.real(x))
        else:
            out = xp.atan2(xp.zeros_like(x), x)
    return out * (180 / math.pi) if deg else out


def _to_complex(x):
    if not hasattr(x, "shape"):
        return complex(x)
    xp = namespace(x)
    if _is_complex(x):
        return x
    dtype = xp.complex64 if x.dtype == xp.float32 else xp.complex128
    return xp.astype(x, dtype)


def _no_complex(name: str, *values) -> None:
    refuse_complex(name, *values, why="it rounds a quotient, which complex numbers do not allow")


def _remainder(x, y):
    _no_complex("remainder", x, y)
    if type(x) is float and type(y) is float and y != 0.0:
        return x % y
    xp = namespace(x, y)
    if not hasattr(x, "shape") and not hasattr(y, "shape"):
        x = xp.asarray(x)
    f = getattr(xp, "remainder", None)
    if f is not None:
        return f(x, y)
    return x - xp.floor(x / y) * y


def _fmod(x, y):
    _no_complex("fmod", x, y)
    if type(x) is float and type(y) is float and y != 0.0:
        return math.fmod(x, y)
    xp = namespace(x, y)
    if not hasattr(x, "shape") and not hasattr(y, "shape"):
        x = xp.asarray(x)
    f = getattr(xp, "fmod", None)
    if f is not None:
        return f(x, y)
    return x - xp.trunc(x / y) * y


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


def _nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    xp = namespace(x)
    if type(x) is float:
        x = xp.asarray(x)
    f = getattr(xp, "nan_to_num", None)
    if f is not None:
        return f(x, nan=nan, posinf=posinf, neginf=neginf)
    if _is_complex(x):
        raise TypeError(f"nan_to_num: complex input on {xp.__name__} is not supported")
    big = xp.finfo(x.dtype).max
    out = xp.where(xp.isnan(x), xp.asarray(nan, dtype=x.dtype), x)
    out = xp.where(out == math.inf, xp.asarray(big if posinf is None else posinf, dtype=x.dtype), out)
    return xp.where(out == -math.inf, xp.asarray(-big if neginf is None else neginf, dtype=x.dtype), out)


real = defop("real", _real_impl, family="elementwise", doc="The real part (a copy of a real input).")
imag = defop("imag", _imag, family="elementwise", doc="The imaginary part (zeros for a real input).")
conj = defop("conj", _conj_impl, family="elementwise", doc="The complex conjugate (a copy of a real input).")
angle = defop("angle", _angle, arity=1, family="elementwise", doc="The argument of a complex number, atan2(y, x).")
_complex_op = defop(
    "_complex",
    _real_only("_complex", _to_complex),
    family="elementwise",
    doc="A real value as a complex one (its pullback takes the real part, so it takes real input only).",
)
remainder = defop("remainder", _remainder, family="elementwise", doc="x - floor(x / y) * y, the sign of y (``%``).")
fmod = defop("fmod", _fmod, family="elementwise", doc="x - trunc(x / y) * y, the sign of x (C's fmod).")
sinc = defop("sinc", _sinc, family="elementwise", doc="sin(πx) / (πx), and 1 at 0.")
nan_to_num = defop("nan_to_num", _nan_to_num, arity=1, family="elementwise", doc="NaN and ±inf replaced by numbers.")


def _real_valued(g):
    """The sensitivity of a real result: a complex ``g`` (a rule upstream that did not project) counts by
    its real part, the component along the real axis."""
    return real(g) if _is_complex(g) else g


def _real_rule(g, ans, x):
    # L sees only the real part: the sensitivity of x is g itself (complex, zero imaginary part, if x is)
    g = _real_valued(g)
    return _complex_op(g) if _is_complex(x) else g


def _imag_rule(g, ans, x):
    # L sees only y = imag(x): ∂L/∂x = 0, ∂L/∂y = g, so the sensitivity of x is −i·g; none for a real x
    g = _real_valued(g)
    return _complex_op(g) * -1j if _is_complex(x) else g * 0.0


def _angle_rule(g, ans, x, deg=False):
    # θ = atan2(y, x): ∂θ/∂x = −y/|z|², ∂θ/∂y = x/|z|², so the sensitivity is g (−y − ix)/|z|² = −i g / z;
    # a real input lies on the axis, where θ is constant (0 or π)
    scale = (180 / math.pi) if deg else 1.0
    g = _real_valued(g)
    if not _is_complex(x):
        return g * 0.0
    return _complex_op(g * scale) * -1j / x


def _floored(x, y, rounding: str):
    """``floor(x / y)`` or ``trunc(x / y)`` of the plain data: the constant slope of a remainder in ``y``."""
    a, b = data(x), data(y)
    xp = namespace(a, b)
    quotient = (a if hasattr(a, "shape") else xp.asarray(a)) / b
    return getattr(xp, rounding)(quotient)


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


def _nan_to_num_rule(g, ans, x, copy=True, nan=0.0, posinf=None, neginf=None):
    # replaced entries are constants: no sensitivity; a complex number is replaced part by part
    plain = data(x)
    xp = namespace(plain)
    plain = plain if hasattr(plain, "shape") else xp.asarray(plain)
    if not _is_complex(x):
        return g * mask(xp.isfinite(plain), plain)
    keep_re, keep_im = mask(xp.isfinite(xp.real(plain)), plain), mask(xp.isfinite(xp.imag(plain)), plain)
    return _complex_op(real(g) * keep_re) + _complex_op(imag(g) * keep_im) * 1j


RULES.update(
    {
        # complex parts
        "real": (_real_rule,),
        "imag": (_imag_rule,),
        "conj": (lambda g, ans, x: conj(g) if _is_complex(x) else _real_valued(g),),
        "angle": (_angle_rule,),
        "_complex": (lambda g, ans, x: real(g),),
        # remainders: slope 1 in x, and −floor(x / y) (−trunc(x / y) for fmod) in y, away from the jumps
        "remainder": (
            lambda g, ans, x, y: unbroadcast(x, g),
            lambda g, ans, x, y: unbroadcast(y, -g * _floored(x, y, "floor")),
        ),
        "fmod": (
            lambda g, ans, x, y: unbroadcast(x, g),
            lambda g, ans, x, y: unbroadcast(y, -g * _floored(x, y, "trunc")),
        ),
        "sinc": (lambda g, ans, x: g * _sinc_slope(x),),
        "nan_to_num": (_nan_to_num_rule,),
    }
)
register_rules("elementwise", RULES)


from ._util import composite, wrapper  # noqa: E402

mod = wrapper("mod")(remainder)  # NumPy's other names for the same operations
conjugate = wrapper("conjugate")(conj)


@composite("elementwise")
def divmod(x, y):
    """``(floor(x / y), x % y)``, as Python's ``divmod`` and ``numpy.divmod``: the quotient is a plain
    integer-valued array (it has no gradient), the remainder is ``remainder(x, y)``.

    >>> import trackerlab as tl
    >>> tl.divmod(tl.param(7.5), 2.0)
    (3.0, 1.5 (tracked))
    """
    a, b = data(x), data(y)
    xp = namespace(a, b)
    if type(a) is float and type(b) is float and b != 0.0:
        quotient = a // b
    else:
        quotient = xp.floor_divide(a if hasattr(a, "shape") else xp.asarray(a), b)
    return quotient, remainder(x, y)



@composite("elementwise")
def select(condlist, choicelist, default=0):
    """``numpy.select``: where the first true condition of ``condlist`` picks its entry of ``choicelist``,
    ``default`` elsewhere. Conditions are plain booleans; choices may be tracked.

    >>> import numpy as np, trackerlab as tl
    >>> x = tl.param([-1.0, 0.5, 2.0])
    >>> tl.select([tl.data(x) < 0, tl.data(x) < 1], [-x, x * 10], default=x)
    Tracked 3-element float64 array:
    [1. 5. 2.]
    """
    if len(condlist) != len(choicelist):
        raise ValueError(
            f"select: {len(condlist)} conditions and {len(choicelist)} choices; pass one choice per condition"
        )
    out = default
    for condition, choice in reversed(list(zip(condlist, choicelist))):
        condition = data(condition)
        xp = namespace(condition)
        condition = condition if hasattr(condition, "shape") else xp.asarray(condition)
        if not xp.isdtype(condition.dtype, "bool"):
            raise TypeError(f"select: conditions must be boolean arrays, not {condition.dtype}")
        out = where(condition, choice, out)
    return out


@composite("elementwise")
def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    """``numpy.linspace``: ``num`` evenly spaced values from ``start`` to ``stop``; either may be tracked
    and may be an array (the samples then lie along ``axis``). ``retstep=True`` also returns the step.

    >>> import trackerlab as tl
    >>> tl.linspace(0.0, tl.param(1.0), 5)
    Tracked 5-element float64 array:
    [0.   0.25 0.5  0.75 1.  ]
    """
    num = int(num)
    if num < 0:
        raise ValueError(f"linspace: the number of samples, {num}, must be non-negative")
    div = num - 1 if endpoint else num
    start, stop = as_operand(start, "linspace"), as_operand(stop, "linspace")  # lists of tracked values too
    xp = namespace(data(start), data(stop))
    real_dtype = _float_dtype(xp, data(start), data(stop))
    a, b = (v if istracked(v) else _as_float(xp, v, real_dtype) for v in (start, stop))
    base = _broadcast_shape(tuple(getattr(data(a), "shape", ())), tuple(getattr(data(b), "shape", ())))
    steps = xp.reshape(xp.arange(num - 1 if endpoint and num > 1 else num, dtype=real_dtype), (-1,) + (1,) * len(base))
    delta = subtract(b, a)
    step = divide(delta, div) if div > 0 else math.nan
    # NumPy's formula: start + i * step, and the last sample exactly stop
    out = add(a, multiply(steps, step if div > 0 else delta))
    if endpoint and num > 1:
        out = concatenate([out, expand_dims(broadcast_to(b, base), 0)], axis=0)
    if axis != 0 and len(base):
        out = moveaxis(out, 0, axis)
    if dtype is not None:
        if xp.isdtype(xp.empty((0,), dtype=dtype).dtype, "integral"):  # NumPy floors into an integer dtype
            out = xp.astype(xp.floor(data(out)), dtype)
        else:
            out = astype(out, dtype)
    return (out, step) if retstep else out


def _broadcast_shape(*shapes) -> tuple:
    n = max(len(s) for s in shapes)
    out = []
    for sizes in zip(*((1,) * (n - len(s)) + s for s in shapes)):
        wide = {d for d in sizes if d != 1}
        if len(wide) > 1:
            raise ValueError(f"linspace: start and stop of shapes {' and '.join(map(str, shapes))} do not broadcast")
        out.append(wide.pop() if wide else 1)
    return tuple(out)


def _as_float(xp, value, dtype):
    """A plain endpoint as an array of the backend (complex stays complex, anything else ``dtype``)."""
    value = xp.asarray(value)
    return value if xp.isdtype(value.dtype, "complex floating") else xp.astype(value, dtype)


def _float_dtype(xp, *values):
    for v in values:
        dtype = getattr(v, "dtype", None)
        if dtype is not None and xp.isdtype(dtype, ("real floating", "complex floating")):
            return xp.float32 if dtype == xp.float32 else xp.float64
    return xp.float64


from ..ops import as_operand  # noqa: E402
from ..tracked import istracked  # noqa: E402
from .shape import broadcast_to, concatenate, expand_dims, moveaxis  # noqa: E402
