"""Joins and their gradient rules: ``concatenate`` and ``stack`` (each sensitivity is the slice of ``g`` where
its array lies), their ``dtype=`` and ``casting=`` keywords, and the joins composed of them (``hstack``,
``vstack``, ``column_stack``, ``append``).

The arrays are positional operands of one operation; the public ``tl.concatenate(arrays, axis)`` is a thin
wrapper, as NumPy spells it.
"""

from __future__ import annotations

from ..ops import as_operand, defop, register_rules
from ..tracked import data
from ._util import Each, array, composite, ns, real_for, size, wrapper
from ._util import shape as shape_of
from .elementwise import astype
from .indexing import getitem
from .shape import atleast_1d, atleast_2d, ravel, reshape, take_slice


def _concatenate(*arrays, axis=0):
    xp = ns(*arrays)
    return xp.concat([array(a) for a in arrays], axis=axis)


def _stack(*arrays, axis=0):
    xp = ns(*arrays)
    return xp.stack([array(a) for a in arrays], axis=axis)


_concatenate_op = defop("concatenate", _concatenate, family="joins", doc="Join arrays along an axis.")
_stack_op = defop("stack", _stack, family="joins", doc="Join arrays along a new axis.")


@wrapper("concatenate")
def concatenate(arrays, axis=0, out=None, *, dtype=None, casting=None):
    """Join a sequence of arrays along ``axis`` (``None``: flattened first), as ``numpy.concatenate``.

    >>> import trackerlab as tl
    >>> tl.concatenate([tl.param([1.0]), [2.0, 3.0]])
    Tracked 3-element float64 array:
    [1. 2. 3.]
    """
    _no_out("concatenate", out)
    return _cast("concatenate", _concatenate_op(*arrays, axis=axis), arrays, dtype, casting)


@wrapper("stack")
def stack(arrays, axis=0, out=None, *, dtype=None, casting=None):
    """Join a sequence of arrays of one shape along a new ``axis``, as ``numpy.stack``."""
    _no_out("stack", out)
    return _cast("stack", _stack_op(*arrays, axis=axis), arrays, dtype, casting)


@composite("joins")
def hstack(arrays, *, dtype=None, casting="same_kind"):
    """``numpy.hstack``: concatenate along the second axis (the first for 1-D arrays)."""
    arrays = [atleast_1d(a) for a in arrays]
    return concatenate(arrays, axis=0 if len(shape_of(arrays[0])) == 1 else 1, dtype=dtype, casting=casting)


@composite("joins")
def vstack(arrays, *, dtype=None, casting="same_kind"):
    """``numpy.vstack``: concatenate along the first axis, 1-D arrays becoming rows."""
    return concatenate([atleast_2d(a) for a in arrays], axis=0, dtype=dtype, casting=casting)


def _no_out(name: str, out) -> None:
    if out is not None:
        raise TypeError(f"{name}: out= is not supported on tracked values; use the result it returns")


def _pieces_of(i: int, arrays, axis):
    """Where operand ``i`` of a concatenation lies along ``axis``: ``(start, stop)``."""
    start = 0
    for j, a in enumerate(arrays):
        n = shape_of(a)[axis] if axis is not None else size(shape_of(a))
        if j == i:
            return start, start + n
        start += n
    raise IndexError(i)


def _concatenate_rule(i, g, ans, *arrays, axis=0):
    start, stop = _pieces_of(i, arrays, axis)
    piece = take_slice(g, 0 if axis is None else axis, start, stop)
    return real_for(arrays[i], reshape(piece, shape_of(arrays[i])) if axis is None else piece)


def _stack_rule(i, g, ans, *arrays, axis=0):
    ndim = len(shape_of(ans))
    return real_for(arrays[i], getitem(g, (slice(None),) * (axis % ndim) + (i, Ellipsis)))


RULES = {
    "concatenate": Each(_concatenate_rule),
    "stack": Each(_stack_rule),
}
register_rules("joins", RULES)

_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


def _dtype_of(xp, value):
    value = data(value)
    return value.dtype if hasattr(value, "dtype") else xp.asarray(value).dtype


def _can_cast(xp, source, target, casting: str) -> bool:
    """NumPy's ``can_cast(source, target, casting)``, or the array API's (which knows only 'safe')."""
    try:
        return bool(xp.can_cast(source, target, casting=casting))
    except TypeError:
        pass
    if casting == "unsafe":
        return True
    if casting in ("no", "equiv"):
        return source == target
    if xp.can_cast(source, target):
        return True
    kinds = ("bool", "signed integer", "unsigned integer", "real floating", "complex floating")
    return casting == "same_kind" and any(xp.isdtype(source, k) and xp.isdtype(target, k) for k in kinds)


def _cast(name: str, out, arrays, dtype, casting):
    """The joined ``out`` in ``dtype`` (a cast recorded as ``astype``), after checking that every input may
    be cast to the output's dtype under ``casting``, as NumPy does."""
    if casting is None:
        casting = "same_kind"
    if casting not in _CASTINGS:
        raise ValueError(f"{name}: casting must be one of {', '.join(map(repr, _CASTINGS))}, not {casting!r}")
    if dtype is None and casting in ("same_kind", "unsafe", "safe"):  # the inputs' promotion is always allowed
        return out
    xp = ns(out)
    target = _dtype_of(xp, out) if dtype is None else xp.empty((0,), dtype=dtype).dtype
    for a in arrays:
        source = _dtype_of(xp, a)
        if not _can_cast(xp, source, target, casting):
            raise TypeError(f"{name}: cannot cast an array of {source} to {target} under casting={casting!r}")
    if _dtype_of(xp, out) == target:
        return out
    return astype(out, target)


@composite("joins")
def column_stack(arrays):
    """``numpy.column_stack``: 1-D arrays become columns, 2-D arrays stay as they are, side by side."""
    columns = []
    for a in (as_operand(a, "column_stack") for a in arrays):
        s = shape_of(a)
        columns.append(reshape(a, (s[0] if s else 1, 1)) if len(s) < 2 else a)
    return concatenate(columns, axis=1)


@composite("joins")
def append(x, values, axis=None):
    """``numpy.append``: ``values`` after ``x`` along ``axis`` (both flattened when ``axis`` is None)."""
    if axis is None:
        return concatenate([ravel(x), ravel(values)], axis=0)
    return concatenate([x, values], axis=axis)

