"""Values as the stepper shows them: plain Python data for its ``steps``, one short line of text (numbers
written as Python writes floats) for its text panel, and a heat map of a frame's 2-D value for its picture
panel."""

from __future__ import annotations

import math
import weakref
from html import escape

import numpy as np

from ...backends.arrays import to_host
from ...core.tracked import Tracked, istracked
from ...presentation.text import shape_text, summary
from ..common.heatmap import heatmap_html, layout, wanted
from ..common.i18n import _
from ..common.lazy import is_lazy, lazy_text

__all__ = ["constant", "pictures", "plain", "text"]

PICTURE_CELLS = 16  # rows and columns of a frame's heat map: each frame is kept in the stepper's HTML copy
PICTURE_SIDE = 160
LEGEND = 110  # pixels for a picture's title and its legend (five lines at the grid's width); a longer one grows
_PANELS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # frames → the panel's height (0: none)


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


def pictures(frames, index: int) -> str:
    """Frame ``index``'s picture panel: the value it is about as a heat map, where it is a 2-D array of more
    than a few numbers (the sensitivity that arrived: at a weight's leaf, its gradient). ``""`` in a walk
    with no such value; an empty panel of the same size in a frame without one. It sits under the text panel, as
    wide, so the drawing beside them keeps its place; its height is at least the tallest picture's, and never
    cuts a picture short."""
    height = _PANELS.get(frames)
    if height is None:  # the tallest picture of the walk's, so the panel is as tall in every frame
        found = (_picture_of(frames, i) for i in range(len(frames.frames)))
        height = _PANELS[frames] = max((_height(value) for _, value in filter(None, found)), default=0)
    if not height:
        return ""
    found = _picture_of(frames, index)
    inner = ""
    if found is not None:
        title, value = found
        inner = (
            f'<div class="tl-title">{escape(title)}</div>'
            f"{heatmap_html(to_host(value), cells=PICTURE_CELLS, side=PICTURE_SIDE)}"
        )
    return f'<div class="tl-frame-values" style="min-height:{height}px">{inner}</div>'


def _picture_of(frames, index: int):
    """``(title, array)`` of the value frame ``index`` shows as a heat map, or ``None`` (by its shape and dtype:
    nothing is copied off a device to decide)."""
    frame = frames.frames[index]
    value = frame["delta"]  # at a leaf, all its uses summed: its gradient
    if value is None or is_lazy(value) or getattr(value, "ndim", 0) != 2:
        return None
    if not wanted(value):
        return None
    name = frame["node"]
    shape = shape_text(value.shape)
    title = _("{node}.grad so far ({shape})") if frame["isleaf"] else _("Δ arrived at {node} ({shape})")
    return title.format(node=name, shape=shape), value


def _height(value) -> int:
    """The pixels a heat map of ``value`` takes in a frame, with its title and legend."""
    down, _, size = layout(value.shape, PICTURE_CELLS, PICTURE_SIDE)
    return -(-value.shape[0] // down) * size + 2 + LEGEND
