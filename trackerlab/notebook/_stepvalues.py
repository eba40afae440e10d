"""Values as the stepper shows them: plain Python data for its ``steps``, and one short line of text
(numbers written as Python writes floats) for its text panel."""

from __future__ import annotations

import math

import numpy as np

from .._backend import to_host
from ..tracked import Tracked, _TrackedValue
from ._i18n import _
from ._lazy import is_lazy, lazy_text
from ._tape import shape_text

__all__ = ["constant", "number", "plain", "text"]


def plain(value):
    """A value as plain Python data: a float for a scalar, nested lists for an array, ``None`` for none,
    and for a lazy (dask) value its description (``lazy 8×5 float64, chunks 4×5 · 2 blocks``), uncomputed."""
    if value is None:
        return None
    if isinstance(value, _TrackedValue | Tracked):
        value = value.data
    if callable(value) and not hasattr(value, "shape"):
        return getattr(value, "__name__", type(value).__name__)
    if is_lazy(value):  # a dask array stays uncomputed: its description stands for it
        return lazy_text(value)
    try:
        a = to_host(value)  # device values: an explicit copy of what is shown
    except (TypeError, ValueError):
        return repr(value)
    if a.dtype.kind not in "biufc":
        return repr(value)
    if a.ndim == 0:
        return a.item() if a.dtype.kind in "biuc" else float(a)
    return a.tolist()


def number(v) -> str:
    """A scalar in at most 6 significant digits, written as Python writes floats: ``1.0``, ``-0.416147``."""
    v = float(v)
    if math.isnan(v) or math.isinf(v):
        return str(v)
    return repr(float(f"{v:.6g}"))


def text(value, limit: int = 6) -> str:
    """A value in one short line: the number, a few elements, or the shape and range of a large array.
    Arrays are summarised where they are (no copy to Python lists)."""
    if value is None:
        return "—"
    if isinstance(value, _TrackedValue | Tracked):
        value = value.data
    if callable(value) and not hasattr(value, "shape"):
        return getattr(value, "__name__", type(value).__name__)
    if isinstance(value, bool | float):
        return number(value)
    if isinstance(value, int):
        return str(value)
    if is_lazy(value):
        return lazy_text(value)
    try:
        a = np.asarray(value) if isinstance(value, list) else to_host(value)
    except (TypeError, ValueError):
        return repr(value)
    if a.dtype.kind not in "biufc":
        return repr(value)
    if a.ndim == 0:
        if a.dtype.kind in "iu":
            return str(a.item())
        return str(a.item()) if a.dtype.kind == "c" else number(a)
    if a.size <= limit:
        body = ", ".join(number(x) for x in a.reshape(-1))
        return f"[{body}]" if a.ndim == 1 else f"[{body}] ({shape_text(a.shape)})"
    low, high = number(a.min()), number(a.max())
    return _("{shape} array, {low} … {high}").format(shape=shape_text(a.shape), low=low, high=high)


def constant(value) -> str:
    """An untracked argument as it reads among the arguments of a call: the value itself when it is
    short, else its shape (``8×1 constant``), so it does not read like more arguments."""
    shape = getattr(value, "shape", None)
    if shape is None and isinstance(value, list | tuple):
        shape = np.shape(value)
    if shape is not None and math.prod(shape) > 6:
        return _("{shape} constant").format(shape=shape_text(shape))
    return text(value)
