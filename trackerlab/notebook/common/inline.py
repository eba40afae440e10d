"""Inline styles for the notebook layer's HTML: how a repr or a stepper's text reads where no ``<style>``
block runs (an untrusted notebook in JupyterLab, GitHub). Only properties JupyterLab's sanitiser keeps,
never ``var(…)``, colours that read on a light and on a dark page (greys half transparent, accents of
middle lightness); where the page's styles run, each display's style block adds the theme's colours."""

from __future__ import annotations

import re

__all__ = ["INLINE", "MONO", "styled"]

GREY = "#8888"  # borders and rules: grey at half opacity, seen on white and on black alike
DIM = "opacity:.75"  # secondary text: the page's own text colour, fainter, in either theme
MONO = "ui-monospace,SFMono-Regular,Menlo,Consolas,monospace"

# class (or bare tag) → its inline style
INLINE = {
    "tl-repr": f"font-family:{MONO};font-size:12.5px;line-height:1.45;margin:2px 0",
    "tl-head": "margin-bottom:4px",
    "tl-kind": "font-weight:bold",
    "tl-name": "font-weight:bold",
    "tl-dim": DIM,
    "tl-key": f"{DIM};font-size:85%",
    "tl-more": f"{DIM};font-style:italic",
    "tl-none": f"{DIM};font-style:italic",
    "tl-title": f"{DIM};font-size:90%;margin-bottom:2px",
    "tl-warn": "color:#cc6a00;font-weight:bold",
    "tl-op": "color:#3d7fd9;font-weight:bold",
    "tl-leaf": "color:#3b9a3f;font-weight:bold",
    "tl-block": "color:#8a63d2;font-weight:bold",
    "tl-grad": "color:#9a6ddb",
    "tl-spark": "color:#3d7fd9;letter-spacing:1px;margin-top:2px",
    "tl-badge": f"border:1px solid {GREY};border-radius:3px;padding:0 4px;margin-left:4px",
    "tl-lazy": "color:#9a6ddb;border-style:dashed",
    "tl-panels": "display:flex;flex-wrap:wrap;gap:12px;margin:4px 0",
    "tl-panel": f"border:1px solid {GREY};border-radius:4px;padding:4px 8px;min-width:8em",
    "tl-scalar": "font-size:120%",
    "tl-table": "border-collapse:collapse;margin:0;font-size:100%",
    "tl-tree": f"list-style:none;margin:0;padding-left:1.3em;border-left:1px dotted {GREY}",
    "td": f"border:1px solid {GREY};padding:1px 6px;text-align:right;background:transparent",
    "th": f"border:1px solid {GREY};padding:1px 6px;text-align:left;font-weight:normal;background:#8882",
    "tl-frame-text": (
        "margin:0;padding:6px 8px;font-size:13px;line-height:1.45;white-space:pre-wrap;"
        f"border:1px solid {GREY};border-radius:4px"
    ),
    "tl-message": "color:#cc6a00",
    "tl-static-label": "font-weight:bold;font-size:13px;margin:8px 0 2px",
}

_CLASS = re.compile(r'class="(tl-[^"]*)"(?! style=)')  # an element with a style of its own keeps it
_BARE = re.compile(r"<(td|th)>")


def _with_style(match: re.Match) -> str:
    style = ";".join(INLINE[name] for name in match.group(1).split() if name in INLINE)
    return f'{match.group(0)} style="{style}"' if style else match.group(0)


def styled(html: str) -> str:
    """``html`` (markup of the notebook layer) with each element's inline style: those of its ``tl-``
    classes (an element whose ``style`` follows its ``class`` keeps its own), and its table cells'."""
    html = _CLASS.sub(_with_style, html)
    return _BARE.sub(lambda m: f'<{m.group(1)} style="{INLINE[m.group(1)]}">', html)
