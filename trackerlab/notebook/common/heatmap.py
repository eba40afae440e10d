"""2-D arrays as heat maps for the notebook's HTML (the repr's data and grad, the stepper's values): a grid of
coloured cells with each number a hover away (its ``title``), and a legend. Inline styles only, which an
untrusted notebook keeps, and colours that read on a light and on a dark page: signed values fade from a
full colour to transparent at 0, so 0 is the page itself in either theme."""

from __future__ import annotations

from html import escape

import numpy as np

from ...presentation.text import number, shape_text
from .i18n import _

__all__ = ["CELLS", "SMALL", "heatmap_html", "layout", "wanted"]

CELLS = 24  # rows and columns of cells at most: a larger array is shown by the means of its blocks
SMALL = 24  # a 2-D array of at most this many numbers stays a table: a few numbers read better than colours
SIDE = 192  # pixels the longer side of the grid aims at (cells of 4 to 14 pixels)

POSITIVE = (0xE0, 0x60, 0x3C)  # signed values: orange-red above 0, blue below, of middle lightness
NEGATIVE = (0x3D, 0x7F, 0xD9)
# one-signed values, from their least to their greatest: viridis (opaque; it reads on white and on black)
VIRIDIS = ("#440154", "#482878", "#3e4989", "#31688e", "#26828e", "#1f9e89", "#35b779", "#6ece58", "#b5de2b", "#fde725")
NAN = "#ff00ff"  # a colour of neither map
OUTLINE = "outline:1px solid #ff00ff;outline-offset:-1px"  # an infinite cell: its end of the map, outlined


def wanted(a) -> bool:
    """Whether a plain (host) array reads better as a heat map than as numbers: real and 2-D, with more than
    ``SMALL`` numbers."""
    return getattr(a, "ndim", 0) == 2 and a.dtype.kind in "biuf" and a.size > SMALL


def heatmap_html(a, *, cells: int = CELLS, side: int = SIDE) -> str:
    """``a`` (a 2-D host array) as a heat map of at most ``cells`` × ``cells`` cells, its longer side about
    ``side`` pixels: a signed array on a diverging map centred at 0, a one-signed one from its least to its
    greatest value; each cell's ``title`` holds its number (for a larger array, the mean of its block)."""
    values = np.asarray(a, dtype=np.float64)
    rows, columns = values.shape
    down, across, size = layout(values.shape, cells, side)
    shown = _block_means(values, down, across) if down > 1 or across > 1 else values
    low, high = _range(values)
    signed = low < 0 < high
    # the colours span the cells shown: the means of blocks vary less than the elements they stand for
    least, most = _range(shown) if shown is not values else (low, high)
    if signed or least == most:  # (all one value: no colour for 0, else the full colour of its sign)
        signed = True
        colour = _diverging(max(-least, most) or 1.0)
    else:
        colour = _sequential(least, most)
    titles = _titles(shown, down, across, rows, columns)
    grid = "".join(
        f'<span title="{title}" style="{colour(v)}"></span>' for v, title in zip(shown.reshape(-1), titles, strict=True)
    )
    ends = (-max(-least, most), max(-least, most)) if signed else (least, most)
    return (
        # the legend wraps at the grid's width (at least 240 pixels), so a data and a grad map sit side by side
        f'<div class="tl-heat" style="display:inline-block;vertical-align:top;'
        f'max-width:{max(240, shown.shape[1] * size + 2)}px">'
        f'<div style="display:inline-grid;grid-template-columns:repeat({shown.shape[1]},{size}px);'
        f'grid-auto-rows:{size}px;border:1px solid #8888">{grid}</div>'
        f"{_legend(values, low, high, ends, signed, colour, down, across)}</div>"
    )


def layout(shape: tuple, cells: int = CELLS, side: int = SIDE) -> tuple[int, int, int]:
    """How an array of ``shape`` is drawn: the rows and columns of elements each cell stands for, and the
    cells' size in pixels (4 to 14, the longer side of the grid about ``side``)."""
    rows, columns = shape
    down, across = -(-rows // cells), -(-columns // cells)
    return down, across, max(4, min(14, side // max(-(-rows // down), -(-columns // across))))


def _range(values) -> tuple[float, float]:
    """The least and greatest finite value (0 and 0 for none)."""
    finite = values[np.isfinite(values)]
    return (float(finite.min()), float(finite.max())) if finite.size else (0.0, 0.0)


def _block_means(values, down: int, across: int):
    """The mean of each ``down`` × ``across`` block (the last ones smaller where the shape does not divide): a
    NaN or Inf in a block shows in its mean."""
    rows = np.add.reduceat(values, np.arange(0, values.shape[0], down), axis=0)
    sums = np.add.reduceat(rows, np.arange(0, values.shape[1], across), axis=1)
    heights = np.diff(np.append(np.arange(0, values.shape[0], down), values.shape[0]))
    widths = np.diff(np.append(np.arange(0, values.shape[1], across), values.shape[1]))
    with np.errstate(invalid="ignore"):  # inf - inf in a block: NaN, as its mean is
        return sums / np.outer(heights, widths)


def _titles(shown, down: int, across: int, rows: int, columns: int) -> list[str]:
    """Each cell's hover text: ``[2, 5] 0.31``, or for a block ``[0:8, 0:8] mean 0.31``."""
    out = []
    for i in range(shown.shape[0]):
        for j in range(shown.shape[1]):
            if down == 1 and across == 1:
                out.append(f"[{i}, {j}] {escape(number(shown[i, j], compact=True))}")
            else:  # a mean, to three digits: a picture of the values, not their record
                v = f"{shown[i, j]:.3g}"
                r = f"{i * down}:{min(rows, (i + 1) * down)}" if down > 1 else f"{i}"
                c = f"{j * across}:{min(columns, (j + 1) * across)}" if across > 1 else f"{j}"
                out.append(f"[{r}, {c}] {escape(_('mean'))} {v}")
    return out


def _diverging(scale: float):
    """Signed values: the colour of their sign, as opaque as ``|v| / scale`` (0: transparent)."""

    def colour(v: float) -> str:
        if v != v:
            return f"background:{NAN}"
        if v in (np.inf, -np.inf):
            return f"background:{_hex(POSITIVE if v > 0 else NEGATIVE)}ff;{OUTLINE}"
        alpha = round(255 * min(1.0, abs(v) / scale))
        return f"background:{_hex(POSITIVE if v > 0 else NEGATIVE)}{alpha:02x}"

    return colour


def _sequential(low: float, high: float):
    """One-signed values: viridis from ``low`` to ``high`` (``low < high``)."""
    span = high - low

    def colour(v: float) -> str:
        if v != v:
            return f"background:{NAN}"
        if v in (np.inf, -np.inf):
            return f"background:{VIRIDIS[-1] if v > 0 else VIRIDIS[0]};{OUTLINE}"
        t = (v - low) / span
        return f"background:{_viridis(min(1.0, max(0.0, t)))}"

    return colour


def _viridis(t: float) -> str:
    """The colour at ``t`` (0 to 1) along ``VIRIDIS``, between its stops."""
    where = t * (len(VIRIDIS) - 1)
    i = min(int(where), len(VIRIDIS) - 2)
    f = where - i
    a, b = (tuple(int(c[k : k + 2], 16) for k in (1, 3, 5)) for c in (VIRIDIS[i], VIRIDIS[i + 1]))
    return _hex(tuple(round(x + (y - x) * f) for x, y in zip(a, b, strict=True)))


def _hex(rgb: tuple) -> str:
    return "#" + "".join(f"{c:02x}" for c in rgb)


def _legend(values, low: float, high: float, ends: tuple, signed: bool, colour, down: int, across: int) -> str:
    """The colour bar with the values at its ends, the least and greatest value, NaN and Inf where there are
    any, and for a shrunk array what each cell stands for."""
    swatch = "display:inline-block;width:7px;height:10px;vertical-align:middle"
    steps = [ends[0] + (ends[1] - ends[0]) * k / 10 for k in range(11)]
    bar = "".join(f'<span style="{swatch};{colour(v)}"></span>' for v in steps)
    left, right = (escape(number(v, compact=True)) for v in ends)
    parts = [f"{left} {bar} {right}"]
    if signed:
        parts.append(escape(_("0: no colour")))
    least, greatest = number(low, compact=True), number(high, compact=True)
    parts.append(escape(_("min {low}, max {high}").format(low=least, high=greatest)))
    nan, inf = int(np.isnan(values).sum()), int(np.isinf(values).sum())
    if nan:
        parts.append(f'<span style="{swatch};background:{NAN}"></span> {nan} NaN')
    if inf:
        parts.append(f'<span style="{swatch};{OUTLINE}"></span> {inf} Inf')
    if down > 1 or across > 1:
        block = shape_text((down, across))
        parts.append(escape(_("each cell: the mean of a {block} block").format(block=block)))
    return f'<div class="tl-heat-legend" style="opacity:.85;font-size:85%;margin-top:2px">{" · ".join(parts)}</div>'
