"""Special functions and their gradient rules, by SciPy's names: the log-gamma function and its derivatives, the
error function and the normal distribution's, the logistic function and its inverse, x log y, the log-beta function.

Forwards call the backend's special functions (``scipy.special`` for NumPy and dask, ``cupyx.scipy.special``
for CuPy; see ``_backend.special_functions``), so SciPy is needed only when one of these is used. Each derivative
is written with ``tl`` operations, these included (the derivative of ``gammaln`` is ``digamma``, of ``digamma``
``polygamma(1, ·)``), so every rule can be differentiated again. ``scipy.special.gammaln(x)`` and the other
ufuncs reach these on tracked values through ``__array_ufunc__`` (see ``numpy_protocol.py``).
"""

from __future__ import annotations

import math
from typing import Any

from ..backends.arrays import special_functions
from ..core.tracked import _TrackedValue, data
from ..ops.registry import defop, register_rules
from ._util import composite, integer, real_only, unbroadcast, wrapper
from .elementwise import exp, log, log1p
from .selection import where

_REAL = "it is differentiated as a function of real numbers"
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)  # erf′(x) = 2/√π e^(−x²)
_HALF_SQRT_PI = math.sqrt(math.pi) / 2.0  # erfinv′(y) = √π/2 e^(erfinv(y)²)
_ONE_OVER_SQRT_TAU = 1.0 / math.sqrt(2.0 * math.pi)  # the standard normal density φ(x) = e^(−x²/2)/√(2π)


def _special(name: str):
    """The forward of SciPy's special function ``name`` on the backend of its operands."""

    def impl(*args):
        out = getattr(special_functions(name, *args), name)(*args)
        return _number(out, args)

    impl.__name__ = name
    return real_only(name, impl, why=_REAL)


def _number(out, args):
    """A result of Python numbers as a Python float, as the elementwise operations give (SciPy gives NumPy's
    scalars, which device libraries refuse beside their arrays)."""
    for a in args:
        if hasattr(a, "shape"):
            return out
    return float(out)


def _polygamma(n, x):
    """ψ⁽ⁿ⁾(x) = (−1)ⁿ⁺¹ n! ζ(n + 1, x) for n ≥ 1, and ψ(x) for n = 0, as SciPy computes it; written with the
    ufuncs ``digamma`` and ``zeta`` for one order n, which dask applies block by block, lazily."""
    functions = special_functions("polygamma", x)
    if not integer(n):
        return functions.polygamma(n, x)
    n = int(n)
    if n == 0:
        return _number(functions.digamma(x), (x,))
    return _number((-1.0) ** (n + 1) * math.factorial(n) * functions.zeta(n + 1.0, x), (x,))


u = _special
gammaln = defop("gammaln", u("gammaln"), family="special", doc="log |Γ(x)|")
digamma = defop("digamma", u("digamma"), family="special", doc="ψ(x) = d/dx log Γ(x)")
_polygamma_op = defop(
    "polygamma", real_only("polygamma", _polygamma, why=_REAL), family="special", doc="ψ⁽ⁿ⁾(x), ψ's n-th derivative"
)
erf = defop("erf", u("erf"), family="special", doc="2/√π ∫₀ˣ e^(−t²) dt")
erfc = defop("erfc", u("erfc"), family="special", doc="1 − erf(x)")
erfinv = defop("erfinv", u("erfinv"), family="special", doc="the inverse of erf on (−1, 1)")
ndtr = defop("ndtr", u("ndtr"), family="special", doc="Φ(x), the standard normal distribution function")
log_ndtr = defop("log_ndtr", u("log_ndtr"), family="special", doc="log Φ(x), computed stably for x ≪ 0")
expit = defop("expit", u("expit"), family="special", doc="1 / (1 + e⁻ˣ), SciPy's logistic function")
logit = defop("logit", u("logit"), family="special", doc="log(p / (1 − p)), the inverse of expit")
xlogy = defop("xlogy", u("xlogy"), family="special", doc="x log y, and 0 where x = 0")
xlog1py = defop("xlog1py", u("xlog1py"), family="special", doc="x log(1 + y), and 0 where x = 0")
betaln = defop("betaln", u("betaln"), family="special", doc="log |B(a, b)|")
del u


@wrapper("polygamma")
def polygamma(n: Any, x: Any) -> Any:
    """ψ⁽ⁿ⁾(x), the n-th derivative of the digamma function ψ, as ``scipy.special.polygamma(n, x)``: the order
    ``n`` is a non-negative integer (or an array of them), differentiable in ``x``.

    >>> import trackerlab as tl
    >>> round(float(tl.polygamma(1, 1.0)), 6)  # ψ′(1) = π²/6
    1.644934
    """
    if isinstance(n, _TrackedValue):
        raise TypeError("polygamma: the order n is tracked, but it is an integer, with no gradient; pass tl.data(n)")
    return _polygamma_op(n, x)


@composite("special")
def logabsgamma(x: Any) -> tuple[Any, Any]:
    """``(log |Γ(x)|, sign of Γ(x))``, as Julia's ``logabsgamma``: the first tracked (``gammaln(x)``), the sign
    plain (an int for a number, an array of ±1.0 for an array).

    >>> import trackerlab as tl
    >>> value, sign = tl.logabsgamma(-0.5)  # Γ(−1/2) = −2√π
    >>> round(float(value), 6), sign
    (1.265512, -1)
    """
    plain = data(x)
    sign = special_functions("logabsgamma", plain).gammasgn(plain)
    return gammaln(x), (int(sign) if not hasattr(plain, "shape") else sign)


def _xdivy(x, y):
    """x / y, and 0 where x = 0 (y = 0 too): the derivative of x log y in y, which is 0 on the line x = 0."""
    if not hasattr(data(x), "shape") and data(x) == 0:
        return 0.0
    return x / where(data(x) == 0, 1.0, y)


RULES = {
    "gammaln": (lambda g, ans, x: g * digamma(x),),
    "digamma": (lambda g, ans, x: g * polygamma(1, x),),
    "polygamma": (None, lambda g, ans, n, x: g * polygamma(n + 1, x)),
    "erf": (lambda g, ans, x: g * (_TWO_OVER_SQRT_PI * exp(-x * x)),),
    "erfc": (lambda g, ans, x: g * (-_TWO_OVER_SQRT_PI * exp(-x * x)),),
    "erfinv": (lambda g, ans, x: g * (_HALF_SQRT_PI * exp(ans * ans)),),
    "ndtr": (lambda g, ans, x: g * (_ONE_OVER_SQRT_TAU * exp(-0.5 * x * x)),),
    # (log Φ)′ = φ / Φ = e^(−x²/2 − log Φ(x)) / √(2π): no division by a Φ that underflows far left
    "log_ndtr": (lambda g, ans, x: g * (_ONE_OVER_SQRT_TAU * exp(-0.5 * x * x - ans)),),
    "expit": (lambda g, ans, x: g * (ans * (1 - ans)),),
    "logit": (lambda g, ans, x: g / (x * (1 - x)),),
    "xlogy": (
        lambda g, ans, x, y: unbroadcast(x, g * log(y)),
        lambda g, ans, x, y: unbroadcast(y, g * _xdivy(x, y)),
    ),
    "xlog1py": (
        lambda g, ans, x, y: unbroadcast(x, g * log1p(y)),
        lambda g, ans, x, y: unbroadcast(y, g * _xdivy(x, 1 + y)),
    ),
    # log B(a, b) = log Γ(a) + log Γ(b) − log Γ(a + b)
    "betaln": (
        lambda g, ans, a, b: unbroadcast(a, g * (digamma(a) - digamma(a + b))),
        lambda g, ans, a, b: unbroadcast(b, g * (digamma(b) - digamma(a + b))),
    ),
}
register_rules("special", RULES)
