"""Joins and their gradient rules: ``concatenate`` and ``stack`` (each sensitivity is the slice of ``g`` where
its array lies), their ``dtype=`` and ``casting=`` keywords, and the joins composed of them (``hstack``,
``vstack``, ``column_stack``, ``append``).

The arrays are positional operands of one operation; the public ``tl.concatenate(arrays, axis)`` is a thin
wrapper, as NumPy spells it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from ..core.tracked import data
from ..ops.registry import as_operand, defop, register_rules
from ._util import Each, array, composite, is_complex, ns, real_for, size, wrapper
from ._util import shape as shape_of
from .elementwise import astype
from .indexing import getitem
from .shape import atleast_1d, atleast_2d, ravel, reshape


def _concatenate(*arrays, axis=0):
    xp = ns(*arrays)
    return xp.concat([array(a) for a in arrays], axis=axis)


def _stack(*arrays, axis=0):
    xp = ns(*arrays)
    return xp.stack([array(a) for a in arrays], axis=axis)


_concatenate_op = defop("concatenate", _concatenate, family="joins", doc="Join arrays along an axis.")
_stack_op = defop("stack", _stack, family="joins", doc="Join arrays along a new axis.")


@wrapper("concatenate")
def concatenate(
    arrays: Sequence[Any],
    axis: int | None = 0,
    out: None = None,
    *,
    dtype: Any = None,
    casting: Literal["no", "equiv", "safe", "same_kind", "unsafe"] | None = None,
) -> Any:
    """Join a sequence of arrays along ``axis`` (``None``: flattened first), as ``numpy.concatenate``.

    >>> import trackerlab as tl
    >>> tl.concatenate([tl.param([1.0]), [2.0, 3.0]])
    Tracked 3-element float64 array:
    [1. 2. 3.]
    """
    _no_out("concatenate", out)
    return _cast("concatenate", _concatenate_op(*arrays, axis=axis), arrays, dtype, casting)


@wrapper("stack")
def stack(
    arrays: Sequence[Any],
    axis: int = 0,
    out: None = None,
    *,
    dtype: Any = None,
    casting: Literal["no", "equiv", "safe", "same_kind", "unsafe"] | None = None,
) -> Any:
    """Join a sequence of arrays of one shape along a new ``axis``, as ``numpy.stack``."""
    _no_out("stack", out)
    return _cast("stack", _stack_op(*arrays, axis=axis), arrays, dtype, casting)


@composite("joins")
def hstack(
    arrays: Sequence[Any],
    *,
    dtype: Any = None,
    casting: Literal["no", "equiv", "safe", "same_kind", "unsafe"] = "same_kind",
) -> Any:
    """``numpy.hstack``: concatenate along the second axis (the first for 1-D arrays)."""
    arrays = [atleast_1d(a) for a in arrays]
    return concatenate(arrays, axis=0 if len(shape_of(arrays[0])) == 1 else 1, dtype=dtype, casting=casting)


@composite("joins")
def vstack(
    arrays: Sequence[Any],
    *,
    dtype: Any = None,
    casting: Literal["no", "equiv", "safe", "same_kind", "unsafe"] = "same_kind",
) -> Any:
    """``numpy.vstack``: concatenate along the first axis, 1-D arrays becoming rows."""
    arrays = list(arrays)
    if _vectors_of_one_length(arrays):  # the rows of one stack: one recorded call, not a reshape per row
        return _cast("vstack", _stack_op(*arrays, axis=0), arrays, dtype, casting)
    return _cast("vstack", _concatenate_op(*(atleast_2d(a) for a in arrays), axis=0), arrays, dtype, casting)


def _vectors_of_one_length(arrays) -> bool:
    """Whether ``arrays`` are 1-D arrays (plain or tracked, not lists) of one length."""
    if not arrays:
        return False
    first = getattr(arrays[0], "shape", None)
    return first is not None and len(first) == 1 and all(getattr(a, "shape", None) == first for a in arrays)


def _no_out(name: str, out) -> None:
    if out is not None:
        raise TypeError(f"{name}: out= is not supported on tracked values; use the result it returns")


# The rules send every operand its sensitivity in one call (see ``Each``): one pass over the operands,
# so that joining N arrays costs N slices of ``g`` however large N is.


def _concatenate_rule(wanted, g, ans, *arrays, axis=0):
    """Each array's sensitivity is the slice of ``g`` where it lies along ``axis`` (of flat ``g`` for None)."""
    along = 0 if axis is None else axis % len(shape_of(ans))
    lead = (slice(None),) * along
    real = real_for if is_complex(g) else _same  # a real array's piece of a complex g: its real part
    out = []
    start = 0
    for w, a in zip(wanted, arrays):
        s = shape_of(a)
        stop = start + (size(s) if axis is None else s[along])
        if w:
            piece = _index(g, lead + (slice(start, stop), Ellipsis))
            out.append(real(a, reshape(piece, s) if axis is None else piece))
        else:
            out.append(None)
        start = stop
    return out


def _stack_rule(wanted, g, ans, *arrays, axis=0):
    """Each array's sensitivity is ``g`` at its index along the new axis."""
    ndim = len(shape_of(ans))
    lead = (slice(None),) * (axis % ndim)
    rest = (Ellipsis,) if len(lead) + 1 < ndim else ()  # none after the last axis: NumPy's scalars for scalars
    real = real_for if is_complex(g) else _same  # a real array's piece of a complex g: its real part
    return [real(a, _index(g, (*lead, i, *rest))) if w else None for i, (w, a) in enumerate(zip(wanted, arrays))]


def _same(a, piece):
    """The piece as it is: every piece of a real ``g`` is real."""
    return piece


def _index(g, index: tuple):
    """``g[index]``, recorded as ``getitem`` where ``g`` is tracked; on a plain ``g`` the backend's own indexing
    (a view), which a join of N arrays does N times."""
    return g[index] if data(g) is g else getitem(g, index)


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
def column_stack(arrays: Sequence[Any]) -> Any:
    """``numpy.column_stack``: 1-D arrays become columns, 2-D arrays stay as they are, side by side."""
    arrays = [as_operand(a, "column_stack") for a in arrays]
    if _vectors_of_one_length(arrays):  # the columns of one stack: one recorded call, not a reshape per column
        return stack(arrays, axis=1)
    columns = []
    for a in arrays:
        s = shape_of(a)
        columns.append(reshape(a, (s[0] if s else 1, 1)) if len(s) < 2 else a)
    return concatenate(columns, axis=1)


@composite("joins")
def append(x: Any, values: Any, axis: int | None = None) -> Any:
    """``numpy.append``: ``values`` after ``x`` along ``axis`` (both flattened when ``axis`` is None)."""
    if axis is None:
        return concatenate([ravel(x), ravel(values)], axis=0)
    return concatenate([x, values], axis=axis)
