"""Colours that follow the page, and the drawing as a picture that survives sanitisers: the drawings are
made in light colours, and their SVG turns each one into a CSS variable with a dark counterpart, chosen by
the SVG's own ``prefers-color-scheme``. In HTML the SVG is an ``<img>`` (a data URI), which untrusted
JupyterLab, GitHub and the like keep where they drop inline ``<svg>`` and ``<style>``; where the page's
styles run, JupyterLab's theme (``body[data-jp-theme-light]``) or the docs' (furo's ``body[data-theme]``)
sets the picture's ``color-scheme``, which is what its ``prefers-color-scheme`` answers (JupyterLab also sets
its theme's ``color-scheme`` on the page itself)."""

from __future__ import annotations

import io
import re
import warnings
from html import escape
from urllib.parse import quote

__all__ = ["COLOURS", "PALETTE", "PICTURE_CSS", "THEME_CSS", "picture", "svg_source", "svg_text"]

# role: (light, dark). Each light colour is used for that role only, so the SVG can be re-coloured
# by colour; text, dim text and the background take JupyterLab's variables first where they exist.
PALETTE = {
    "bg": ("#ffffff", "#111111"),  # the pictures are opaque: JupyterLab's own backgrounds, light and dark
    "text": ("#1f2328", "#e6edf3"),
    "dim": ("#59636e", "#a0a9b2"),
    "label": ("#37474f", "#c5d0d8"),
    "edge": ("#5f6f80", "#9aa7b4"),
    "param": ("#2e7d32", "#7bc67e"),
    "param-fill": ("#e3f4e1", "#1c3a20"),
    "op": ("#1f4e8c", "#7fb0ec"),
    "op-fill": ("#e4ecf8", "#1b2b44"),
    "block": ("#6a3d9a", "#c3a6ec"),
    "block-fill": ("#f1eafa", "#2b2140"),
    "const": ("#757575", "#a6a6a6"),
    "const-fill": ("#f2f2f2", "#2b2b2b"),
    "more-fill": ("#fbfbfb", "#242424"),
    "done-fill": ("#cfd8dc", "#3a464d"),
    "current": ("#e65100", "#ffa040"),
    "current-fill": ("#ffb74d", "#7a4100"),
    "pending-fill": ("#fff1b8", "#4f4518"),
    "waiting-fill": ("#fdfdfd", "#262626"),
    "wrong": ("#d50000", "#ff6e6e"),
}
COLOURS = {role: light for role, (light, _) in PALETTE.items()}
_JUPYTER = {"text": "--jp-content-font-color1", "dim": "--jp-content-font-color2"}


def _variables(which: int) -> str:
    return ";".join(f"--tl-{role}:{colours[which]}" for role, colours in PALETTE.items())


_DARK_PAGE = 'body[data-jp-theme-light="false"] .tl-tape,body[data-theme="dark"] .tl-tape'
_AUTO_DARK = 'body:not([data-jp-theme-light="true"]):not([data-theme="light"]) .tl-tape,:root.tl-tape'
THEME_CSS = (
    f".tl-tape{{{_variables(0)}}}"
    f"{_DARK_PAGE}{{{_variables(1)}}}"
    f"@media (prefers-color-scheme:dark){{{_AUTO_DARK}{{{_variables(1)}}}}}"
    ".tl-tape *{stroke-linejoin:round;stroke-linecap:butt}"
)

_BY_COLOUR = {light: role for role, (light, _) in PALETTE.items()}
_PAINT = re.compile(r"(fill|stroke): (#[0-9a-f]{6})")


def _paint(match) -> str:
    role = _BY_COLOUR.get(match.group(2))
    if role is None:
        return match.group(0)
    fallback = f"var(--tl-{role}, {match.group(2)})"
    if role in _JUPYTER:
        fallback = f"var({_JUPYTER[role]}, {fallback})"
    return f"{match.group(1)}: {fallback}"


def svg_text(figure) -> str:
    """``figure`` as a standalone SVG document: text kept as text (crisp, searchable, small), the same
    bytes for the same drawing, colours that follow the theme."""
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "trackerlab", "svg.fonttype": "none"}), warnings.catch_warnings():
        # text stays text in the SVG, drawn by the browser's fonts: matplotlib's own fonts need no CJK glyphs
        warnings.filterwarnings("ignore", "Glyph .* missing from font", UserWarning)
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    svg = buffer.getvalue()
    svg = re.sub(r"\s*<metadata>.*?</metadata>", "", svg, count=1, flags=re.S)
    svg = svg.replace(
        '<style type="text/css">*{stroke-linejoin: round; stroke-linecap: butt}</style>',
        f"<style>{THEME_CSS}</style>",  # a plain <style>, as nbval's sanitiser for notebooks expects
    )
    svg = svg.replace("font-family: 'DejaVu Sans'", "font-family: 'DejaVu Sans', Verdana, sans-serif")
    svg = svg.replace("<svg ", '<svg class="tl-tape" ', 1)
    return _PAINT.sub(_paint, svg)


# An SVG image answers ``prefers-color-scheme`` with the ``color-scheme`` of its <img>, which it inherits
# from the page: JupyterLab sets its theme's on the page itself (so an untrusted notebook's pictures follow
# the theme too); where this block runs (the docs, an exported page) it sets the page theme's. Elsewhere
# the picture follows the reader's colour scheme.
_DARK_IMG = 'body[data-jp-theme-light="false"] img.tl-picture,body[data-theme="dark"] img.tl-picture'
_LIGHT_IMG = 'body[data-jp-theme-light="true"] img.tl-picture,body[data-theme="light"] img.tl-picture'
PICTURE_CSS = f"<style>{_DARK_IMG}{{color-scheme:dark}}{_LIGHT_IMG}{{color-scheme:light}}</style>"

# Kept as they are in the data URI: what is neither special in a URL (%, #) nor in HTML (&, <, >, ")
# nor white space a URL parser drops (newlines), so the SVG's text and numbers stay readable in the file.
_URI_SAFE = " !$'()*+,-./:;=?@[]^_`{|}~"


def picture(svg: str, alt: str = "") -> str:
    """A standalone SVG as a picture to sit in HTML: an ``<img>`` whose source is the SVG as a data URI,
    with its width and height, at most as wide as its container (it shrinks to 70% at most, then
    scrolls sideways). Sanitisers keep it where they drop inline ``<svg>`` and ``<style>``."""
    svg = svg[svg.index("<svg") :]
    match = re.search(r'width="([\d.]+)pt" height="([\d.]+)pt"', svg)
    width, height = (round(float(v) * 4 / 3) for v in match.groups())  # CSS pixels: 96 per inch, 72 points
    source = svg_source(svg)
    return (
        f'<div class="tl-tape-scroll" style="overflow-x:auto;max-width:100%">{PICTURE_CSS}'
        f'<img class="tl-picture" src="{source}" width="{width}" height="{height}" alt="{escape(alt)}" '
        f'style="max-width:100%;min-width:{round(0.7 * width)}px;height:auto"></div>'
    )


def svg_source(svg: str) -> str:
    """A standalone SVG as the data URI of an ``<img>``, its text and numbers readable in the file."""
    return "data:image/svg+xml;charset=utf-8," + quote(svg[svg.index("<svg") :], safe=_URI_SAFE)
