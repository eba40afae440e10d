"""Neural-network functions and their gradient rules."""

from __future__ import annotations

from ..ops import defop, register_rules


def _relu(x):
    if type(x) is float:
        return x if x > 0.0 else 0.0
    return ns(x).maximum(x, 0)


relu = defop("relu", _relu, family="nn")

RULES = {
    "relu": (lambda g, ans, x: g * mask(data(x) > 0, x),),
}
register_rules("nn", RULES)

from ..tracked import data  # noqa: E402
from ._util import mask, ns  # noqa: E402  (the families' rules use each other)
