"""Creating arrays: ``linspace``, whose endpoints may be tracked, and ``full``, whose fill value may be (composites
of elementwise and shape operations, so their gradients are theirs)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..backends.arrays import namespace
from ..core.tracked import data, istracked
from ..ops.registry import as_operand
from ._util import composite
from .elementwise import add, astype, divide, multiply, subtract
from .joins import concatenate
from .shape import broadcast_to, copy, expand_dims, moveaxis


@composite("creation")
def linspace(
    start: Any,
    stop: Any,
    num: int = 50,
    endpoint: bool = True,
    retstep: bool = False,
    dtype: Any = None,
    axis: int = 0,
    *,
    device: Any = None,
) -> Any:
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


@composite("creation")
def full(shape: int | Sequence[int], fill_value: Any, dtype: Any = None) -> Any:
    """NumPy's ``full``: an array of ``shape`` filled with ``fill_value``, which may be tracked (a number, or an
    array that broadcasts to ``shape``); its gradient is the sum of the array's sensitivities over the copies.
    (``np.full(shape, v)`` cannot record itself: NumPy reads ``v`` as a plain array first.)

    >>> import trackerlab as tl
    >>> tl.gradient(lambda v: tl.sum(tl.full((2, 3), v) * 2.0), 1.5)
    (12.0 (tracked),)
    """
    shape = (int(shape),) if isinstance(shape, int) or getattr(shape, "ndim", None) == 0 else tuple(shape)
    if not istracked(fill_value):
        xp = namespace(fill_value)
        if not hasattr(fill_value, "shape"):
            return xp.full(shape, fill_value, dtype=dtype)
        fill_value = fill_value if dtype is None else xp.astype(fill_value, dtype)
        return xp.asarray(xp.broadcast_to(fill_value, shape), copy=True)
    filled = broadcast_to(fill_value, shape)
    return astype(filled, dtype) if dtype is not None and filled.dtype != dtype else copy(filled)


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
