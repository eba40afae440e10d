"""Values as the stepper shows them: plain Python data for its ``steps``, and one short line of text
(numbers written as Python writes floats) for its text panel."""

from __future__ import annotations

import math

import numpy as np

from ..backends.arrays import to_host
from ..core.tracked import Tracked, istracked
from ..presentation.text import shape_text, summary
from ._i18n import _
from ._lazy import is_lazy, lazy_text

__all__ = ["constant", "plain", "text"]


def plain(value):
    """A value as plain Python data: a float for a scalar, nested lists for an array, ``None`` for none,
    and for a lazy (dask) value its description (``lazy 8×5 float64, chunks 4×5 · 2 blocks``), uncomputed."""
    if value is None:
        return None
    if istracked(value) or isinstance(value, Tracked):
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


def text(value, limit: int = 6) -> str:
    """A value in one short line (``presentation.text.summary`` in the stepper's spelling: numbers as Python
    writes floats)."""
    return summary(value, limit=limit)


def constant(value) -> str:
    """An untracked argument as it reads among the arguments of a call: the value itself when it is
    short, else its shape (``8×1 constant``), so it does not read like more arguments."""
    shape = getattr(value, "shape", None)
    if shape is None and isinstance(value, list | tuple):
        shape = np.shape(value)
    if shape is not None and math.prod(shape) > 6:
        return _("{shape} constant").format(shape=shape_text(shape))
    return text(value)
