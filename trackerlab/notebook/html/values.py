"""Arrays as HTML for the notebook reprs: small ones as tables (one table per 2-D slice for three or more
dimensions, as NumPy prints them), a larger 2-D one as a heat map (``common.heatmap``; past its cells, of block
means, over the summary), other large ones as a summary (range, mean, spread, a sparkline histogram and
NaN/Inf counts)."""

from __future__ import annotations

from html import escape

import numpy as np

from ...backends.arrays import to_host
from ...presentation.text import number
from ..common.heatmap import CELLS, heatmap_html, wanted
from ..common.i18n import _
from ..common.lazy import is_lazy, lazy_text, size_text

__all__ = ["array_html", "lazy_html", "stats"]

_BARS = "▁▂▃▄▅▆▇█"
TABLE_ROWS = 12
TABLE_COLUMNS = 12
TABLE_SLICES = 12  # an array of three or more dimensions is shown whole up to this many 2-D slices


def array_html(x, empty: str) -> str:
    """``x`` as HTML: a number, a table, a heat map, or a summary; ``empty`` says why there is no value."""
    if x is None:
        return f'<div class="tl-none">{escape(empty)}</div>'
    x = x.data if hasattr(x, "tracker") else x
    if is_lazy(x):
        return lazy_html(x)
    a = to_host(x)
    if a.ndim == 0:
        return f'<div class="tl-scalar">{escape(number(a[()], compact=True))}</div>'
    if wanted(a):
        shrunk = a.shape[0] > CELLS or a.shape[1] > CELLS
        return heatmap_html(a) + (f'<div class="tl-heat-summary">{_summary(a)}</div>' if shrunk else "")
    if a.ndim <= 2 and a.shape[0] <= TABLE_ROWS and (a.ndim == 1 or a.shape[1] <= TABLE_COLUMNS) and a.size:
        return _table(a)
    if a.ndim > 2 and a.size and a.shape[-2] <= TABLE_ROWS and a.shape[-1] <= TABLE_COLUMNS:
        if a.size // (a.shape[-2] * a.shape[-1]) <= TABLE_SLICES:
            return _slices(a)
    return _summary(a)


def lazy_html(x) -> str:
    """A lazy (dask) value: what it is and how large it will be, never its values (nothing is computed)."""
    return (
        f'<div class="tl-none">{escape(_("lazy: not computed"))}</div>'
        f'<div class="tl-dim">{escape(lazy_text(x))} · {escape(size_text(x))}</div>'
    )


def _slices(a) -> str:
    """One table per 2-D slice, each captioned with its index (``[1, :, :]``), in NumPy's order."""
    parts = []
    for index in np.ndindex(*a.shape[:-2]):
        where = ", ".join(str(i) for i in index) + ", :, :"
        parts.append(f'<div class="tl-key">[{where}]</div>{_table(a[index])}')
    return f'<div class="tl-slices">{"".join(parts)}</div>'


def _table(a) -> str:
    rows = [a] if a.ndim == 1 else list(a)
    cells = ("".join(f"<td>{escape(number(v, compact=True))}</td>" for v in row) for row in rows)
    body = "".join(f"<tr>{row}</tr>" for row in cells)
    return f'<table class="tl-table">{body}</table>'


def stats(a) -> dict:
    """Minimum, maximum, mean and standard deviation of the finite values, and the NaN/Inf counts."""
    values = np.abs(a) if a.dtype.kind == "c" else a.astype(np.float64, copy=False)
    nan = int(np.isnan(values).sum())
    inf = int(np.isinf(values).sum())
    finite = values[np.isfinite(values)] if nan or inf else values.reshape(-1)
    out = {"nan": nan, "inf": inf, "size": int(a.size), "finite": finite}
    if finite.size:
        low, high = finite.min(), finite.max()
        # the mean and spread of values near the largest float overflow their sum: take them of the values
        # scaled to at most 1 in size, and scale back
        scale = max(abs(float(low)), abs(float(high)))
        if scale > 1e300:
            scaled = finite / scale
            mean, std = scaled.mean() * scale, scaled.std() * scale
        else:
            mean, std = finite.mean(), finite.std()
        out.update(min=low, max=high, mean=mean, std=std)
    return out


def sparkline(finite, bins: int = 16) -> str:
    """A histogram of the finite values in one line of block characters."""
    if finite.size == 0:
        return ""
    low, high = float(finite.min()), float(finite.max())
    if low == high:
        return _BARS[-1]
    scale = max(abs(low), abs(high))  # values near the largest float: bins of the values scaled to 1, which fit
    if scale > 1e300:
        finite, low, high = finite / scale, low / scale, high / scale
    try:
        counts, _ = np.histogram(finite, bins=bins, range=(low, high))
    except ValueError:  # values a few ulps apart: too few floats between them for the bins' edges
        counts, _ = np.histogram((finite - low) / (high - low), bins=bins, range=(0.0, 1.0))
    top = counts.max()
    return "".join(" " if c == 0 else _BARS[min(len(_BARS) - 1, int(c * len(_BARS) / (top + 1)))] for c in counts)


def _summary(a) -> str:
    s = stats(a)
    label = "|x| " if a.dtype.kind == "c" else ""
    if a.size == 0:
        return f'<div class="tl-none">{escape(_("empty"))}</div>'
    cells = []
    if "min" in s:
        for key in ("min", "max", "mean", "std"):
            cells.append(f"<tr><th>{label}{key}</th><td>{escape(number(s[key], compact=True))}</td></tr>")
    flags = []
    for key, word in (("nan", "NaN"), ("inf", "Inf")):
        count = s[key]
        css = "tl-warn" if count else "tl-dim"
        flags.append(f'<span class="{css}">{count} {word}</span>')
    first = ", ".join(number(v, compact=True) for v in a.reshape(-1)[:3])
    spark = sparkline(s["finite"])
    return (
        f'<table class="tl-table tl-stats">{"".join(cells)}</table>'
        f'<div class="tl-spark" title="{escape(_("histogram of the finite values"))}">{escape(spark)}</div>'
        f'<div class="tl-flags">{" · ".join(flags)}</div>'
        f'<div class="tl-dim">{escape(_("first: {values}, …").format(values=first))}</div>'
    )
