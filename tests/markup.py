"""Reading the notebook layer's HTML in tests: its markup without the inline styles (which ``_inline`` adds
to every element, so that sanitised pages keep the layout), and the SVG inside its pictures."""

from __future__ import annotations

import re
from urllib.parse import unquote

PICTURE = re.compile(r'<img class="tl-picture" src="data:image/svg\+xml;charset=utf-8,([^"]*)"')


def unstyled(html: str) -> str:
    """``html`` without its ``style`` attributes: the structure and the text, as tests compare them."""
    return re.sub(r' style="[^"]*"', "", html)


def pictures(html: str) -> list[str]:
    """The SVG documents drawn in ``html``'s pictures (``<img>`` elements with an SVG data URI), in order."""
    return [unquote(source) for source in PICTURE.findall(html)]


def picture(html: str) -> str:
    """The SVG of the one picture in ``html``."""
    [svg] = pictures(html)
    return svg
