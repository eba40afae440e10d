"""The chain rule written out for scalars, for the stepper's text: per operation, one entry per
argument, each giving the formula in Δ and the arguments' names, the same product with the numbers put
in, and its value. The values are recomputed here only to check them against what the engine sent: a
product that does not give what the walk sent is not shown (the frame shows the sent value alone)."""

from __future__ import annotations

import math

from ...core.tracked import Tracked
from ...presentation.text import number
from ..common.lazy import is_lazy

__all__ = ["CHAIN", "chain"]


def _is_scalar(v) -> bool:
    """A real number here and now: a Python or 0-d array scalar, not a lazy (dask) one, which is never
    computed, nor a complex one, for which these formulas (and ``float``) do not hold."""
    if isinstance(v, int | float):
        return True
    return getattr(v, "ndim", None) == 0 and not is_lazy(v) and getattr(v.dtype, "kind", "c") in "biuf"


n = number


def p(v) -> str:
    """A factor inside a product: negative numbers in parentheses, so signs never run together."""
    return f"({number(v)})" if v < 0 else number(v)


CHAIN = {
    "add": (
        lambda g, ans, x, y, X, Y: ("Δ", n(g), g),
        lambda g, ans, x, y, X, Y: ("Δ", n(g), g),
    ),
    "subtract": (
        lambda g, ans, x, y, X, Y: ("Δ", n(g), g),
        lambda g, ans, x, y, X, Y: ("−Δ", f"−{p(g)}", -g),
    ),
    "multiply": (
        lambda g, ans, x, y, X, Y: (f"Δ·{Y}", f"{n(g)} × {p(y)}", g * y),
        lambda g, ans, x, y, X, Y: (f"Δ·{X}", f"{n(g)} × {p(x)}", g * x),
    ),
    "divide": (
        lambda g, ans, x, y, X, Y: (f"Δ/{Y}", f"{n(g)} / {p(y)}", g / y),
        lambda g, ans, x, y, X, Y: (f"−Δ·{X}/{Y}²", f"−{p(g)} × {p(x)} / {p(y)}²", -g * x / y**2),
    ),
    "power": (
        lambda g, ans, x, y, X, Y: (f"Δ·{Y}·{X}^({Y}−1)", f"{n(g)} × {p(y)} × {p(x)}^{p(y - 1)}", g * y * x ** (y - 1)),
        lambda g, ans, x, y, X, Y: (f"Δ·{X}^{Y}·log({X})", f"{n(g)} × {p(ans)} × log({n(x)})", g * ans * math.log(x)),
    ),
    "negative": (lambda g, ans, x, X: ("−Δ", f"−{p(g)}", -g),),
    "identity": (lambda g, ans, x, X: ("Δ", n(g), g),),
    "exp": (lambda g, ans, x, X: (f"Δ·exp({X})", f"{n(g)} × {p(ans)}", g * ans),),
    "log": (lambda g, ans, x, X: (f"Δ/{X}", f"{n(g)} / {p(x)}", g / x),),
    "sin": (lambda g, ans, x, X: (f"Δ·cos({X})", f"{n(g)} × {p(math.cos(x))}", g * math.cos(x)),),
    "cos": (lambda g, ans, x, X: (f"−Δ·sin({X})", f"−{p(g)} × {p(math.sin(x))}", -g * math.sin(x)),),
    "tanh": (lambda g, ans, x, X: (f"Δ·(1 − tanh({X})²)", f"{n(g)} × (1 − {p(ans)}²)", g * (1 - ans * ans)),),
    "relu": (lambda g, ans, x, X: (f"Δ·[{X} > 0]", f"{n(g)} × {int(x > 0)}", g * float(x > 0)),),
    "positive": (lambda g, ans, x, X: ("Δ", n(g), g),),
    "abs": (lambda g, ans, x, X: (f"Δ·sign({X})", f"{n(g)} × {p(_sign(x))}", g * _sign(x)),),
    "square": (lambda g, ans, x, X: (f"Δ·2·{X}", f"{n(g)} × 2 × {p(x)}", 2 * g * x),),
    "sqrt": (lambda g, ans, x, X: (f"Δ/(2·sqrt({X}))", f"{n(g)} / (2 × {p(ans)})", g / (2 * ans)),),
    "reciprocal": (lambda g, ans, x, X: (f"−Δ/{X}²", f"−{p(g)} / {p(x)}²", -g / x**2),),
    "tan": (lambda g, ans, x, X: (f"Δ·(1 + tan({X})²)", f"{n(g)} × (1 + {p(ans)}²)", g * (1 + ans * ans)),),
    "sinh": (lambda g, ans, x, X: (f"Δ·cosh({X})", f"{n(g)} × {p(math.cosh(x))}", g * math.cosh(x)),),
    "cosh": (lambda g, ans, x, X: (f"Δ·sinh({X})", f"{n(g)} × {p(math.sinh(x))}", g * math.sinh(x)),),
    "log1p": (lambda g, ans, x, X: (f"Δ/(1 + {X})", f"{n(g)} / (1 + {p(x)})", g / (1 + x)),),
    "expm1": (lambda g, ans, x, X: (f"Δ·exp({X})", f"{n(g)} × {p(ans + 1)}", g * (ans + 1)),),
    "sigmoid": (
        lambda g, ans, x, X: (f"Δ·σ({X})·(1 − σ({X}))", f"{n(g)} × {p(ans)} × (1 − {p(ans)})", g * ans * (1 - ans)),
    ),
}


def _sign(x: float) -> float:
    return 0.0 if x == 0 else math.copysign(1.0, x)


def chain(node: Tracked, position: int, g, names: list[str], sent):
    """``(formula, product)`` for what ``node``'s pullback sent to its argument ``position``, or ``None``
    where it cannot be written out (arrays, custom rules, operations without an entry, or a product
    that does not give what the engine sent)."""
    call = node.f
    entry = CHAIN.get(call.name)
    if entry is None or call.back is not None or len(call.args) != len(names) or position >= len(entry):
        return None
    xs = [a.data if type(a) is Tracked else a for a in call.args]
    if not all(_is_scalar(v) for v in [g, node.data, sent, *xs]):
        return None
    xs = [float(v) for v in xs]
    try:
        formula, product, value = entry[position](float(g), float(node.data), *xs, *names)
    except (ValueError, ZeroDivisionError, OverflowError, TypeError):
        return None
    if not math.isclose(value, float(sent), rel_tol=1e-9, abs_tol=1e-12):
        return None
    return formula, product
