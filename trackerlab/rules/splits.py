"""Splits and their gradient rule: ``split`` gives one ``split`` operation per piece (a slice along the
axis, whose sensitivity is padded back to the whole), and the splits composed of it (``array_split``,
``hsplit``, ``vsplit``, ``dsplit``).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from ..ops.registry import defop, register_rules
from ._util import composite, integer, wrapper
from ._util import shape as shape_of
from .shape import pad, take_slice


def _split(x, start, stop, axis=0):
    return take_slice(x, axis, start, stop)


_split_op = defop("split", _split, arity=1, family="splits", doc="One piece of a split: a slice along an axis.")


@wrapper("split")
def split(x: Any, indices_or_sections: int | Sequence[int], axis: int = 0) -> list[Any]:
    """Split ``x`` into a list of pieces along ``axis``, as ``numpy.split`` (each piece a ``split`` call)."""
    return _pieces(x, indices_or_sections, axis, exact=True)


@composite("splits")
def array_split(x: Any, indices_or_sections: int | Sequence[int], axis: int = 0) -> list[Any]:
    """``numpy.array_split``: like ``split``, but the sections need not divide the axis evenly."""
    return _pieces(x, indices_or_sections, axis, exact=False)


def _pieces(x, indices_or_sections, axis, exact: bool):
    n = shape_of(x)[axis]
    if integer(indices_or_sections):
        k = int(indices_or_sections)
        if k <= 0 or (exact and n % k):
            raise ValueError(f"split: an axis of length {n} does not split into {k} equal sections")
        sizes = [n // k + (1 if i < n % k else 0) for i in range(k)]
        cuts = [0]
        for s in sizes:
            cuts.append(cuts[-1] + s)
    else:
        cuts = [0] + [min(max(int(i) if i >= 0 else n + int(i), 0), n) for i in indices_or_sections] + [n]
    return [_split_op(x, start=a, stop=max(a, b), axis=axis) for a, b in itertools.pairwise(cuts)]


def _split_rule(g, ans, x, start, stop, axis=0):
    widths = [(0, 0)] * len(shape_of(x))
    widths[axis] = (start, shape_of(x)[axis] - stop)
    return pad(g, widths)


RULES = {
    "split": (_split_rule,),
}
register_rules("splits", RULES)


def _split_along(name: str, x, indices_or_sections, axis: int, least: int):
    if len(shape_of(x)) < least:
        raise ValueError(f"{name}: only works on arrays of {least} or more dimensions (got shape {shape_of(x)})")
    return split(x, indices_or_sections, axis=axis)


@composite("splits")
def hsplit(x: Any, indices_or_sections: int | Sequence[int]) -> list[Any]:
    """``numpy.hsplit``: split along the second axis (the first for 1-D arrays)."""
    return _split_along("hsplit", x, indices_or_sections, 1 if len(shape_of(x)) > 1 else 0, 1)


@composite("splits")
def vsplit(x: Any, indices_or_sections: int | Sequence[int]) -> list[Any]:
    """``numpy.vsplit``: split along the first axis of an array of 2 or more dimensions."""
    return _split_along("vsplit", x, indices_or_sections, 0, 2)


@composite("splits")
def dsplit(x: Any, indices_or_sections: int | Sequence[int]) -> list[Any]:
    """``numpy.dsplit``: split along the third axis of an array of 3 or more dimensions."""
    return _split_along("dsplit", x, indices_or_sections, 2, 3)
