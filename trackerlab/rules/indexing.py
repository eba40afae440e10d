"""Indexing and its gradient rule: the sensitivity of a selection is scattered back, repeats accumulating."""

from __future__ import annotations

from ..ops import defop, register_rules


def _getitem(x, index):
    return x[index]


def _untake(g, index, shape):
    """Zeros of ``shape`` with ``g`` added at ``index`` (a repeated index receives every contribution)."""
    xp = ns(g)
    out = xp.zeros(tuple(shape), dtype=getattr(g, "dtype", xp.float64))
    add = getattr(xp, "add", None)
    if hasattr(add, "at"):  # NumPy and CuPy accumulate repeated indices with ufunc.at
        add.at(out, index, g)
    else:
        out[index] = g
    return out


getitem = defop("getitem", _getitem, arity=1, family="indexing")
untake = defop("untake", _untake, arity=1, family="indexing")

RULES = {
    "getitem": (lambda g, ans, x, index: untake(g, index, shape(x)),),
    "untake": (lambda g, ans, x, index, shape: getitem(g, index),),
}
register_rules("indexing", RULES)

from ._util import ns, shape  # noqa: E402  (the families' rules use each other)
