"""Linear algebra and its gradient rules: ``matmul`` for every rank, batched and 1-D included."""

from __future__ import annotations

import operator

from ..ops import defop, register_rules

matmul = defop("matmul", operator.matmul, family="linalg")


def _mT(a):
    """Swap the last two axes."""
    n = len(shape(a))
    return transpose(a, tuple(range(n - 2)) + (n - 1, n - 2))


def _as_matrices(g, x, y):
    """Treat 1-D operands as rows (``x``) or columns (``y``) of a matrix, as matmul does, and ``g`` to match."""
    if len(shape(x)) == 1:
        x = reshape(x, (1,) + shape(x))
        g = reshape(g, shape(g)[:-1] + (1,) + shape(g)[-1:]) if len(shape(y)) > 1 else reshape(g, (1,) + shape(g))
    if len(shape(y)) == 1:
        y = reshape(y, shape(y) + (1,))
        g = reshape(g, shape(g) + (1,))
    return g, x, y


def _matmul_x(g, ans, x, y):
    g2, x2, y2 = _as_matrices(g, x, y)
    return reshape(unbroadcast(x2, matmul(g2, _mT(y2))), shape(x))


def _matmul_y(g, ans, x, y):
    g2, x2, y2 = _as_matrices(g, x, y)
    return reshape(unbroadcast(y2, matmul(_mT(x2), g2)), shape(y))


RULES = {
    "matmul": (_matmul_x, _matmul_y),
}
register_rules("linalg", RULES)

from ._util import shape, unbroadcast  # noqa: E402  (the families' rules use each other)
from .shape import reshape, transpose  # noqa: E402
