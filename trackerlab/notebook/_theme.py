"""Colours that follow the page: the drawings are made in light colours, and their SVG turns each one
into a CSS variable with a dark counterpart, chosen by JupyterLab's theme (``--jp-*`` variables,
``body[data-jp-theme-light]``), the docs' theme (furo's ``body[data-theme]``) or, for a standalone SVG
and pages that say nothing, the viewer's ``prefers-color-scheme``."""

from __future__ import annotations

import io
import re
import warnings

__all__ = ["COLOURS", "PALETTE", "THEME_CSS", "inline_svg", "svg_text"]

# role: (light, dark). Each light colour is used for that role only, so the SVG can be re-coloured
# by colour; text, dim text and the background take JupyterLab's variables first where they exist.
PALETTE = {
    "bg": ("#ffffff", "#1e1e1e"),
    "text": ("#1f2328", "#e6edf3"),
    "dim": ("#59636e", "#a0a9b2"),
    "label": ("#37474f", "#c5d0d8"),
    "edge": ("#5f6f80", "#9aa7b4"),
    "param": ("#2e7d32", "#7bc67e"),
    "param-fill": ("#e3f4e1", "#1c3a20"),
    "op": ("#1f4e8c", "#7fb0ec"),
    "op-fill": ("#e4ecf8", "#1b2b44"),
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
    ".tl-tape.tl-inline{--tl-bg:transparent!important}"
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


def inline_svg(svg: str) -> str:
    """A standalone SVG made ready to sit in HTML: no prolog, never wider than its container (it
    shrinks to 70% at most, then scrolls sideways), its background the page's."""
    svg = svg[svg.index("<svg") :]
    match = re.search(r'width="([\d.]+)pt" height="([\d.]+)pt"', svg)
    width = float(match.group(1))
    svg = svg.replace(
        match.group(0),
        f'style="width:{width:g}pt;max-width:100%;min-width:{0.7 * width:.1f}pt;height:auto"',
        1,
    )
    svg = svg.replace('class="tl-tape"', 'class="tl-tape tl-inline"', 1)
    return f'<div class="tl-tape-scroll" style="overflow-x:auto;max-width:100%">{svg}</div>'
