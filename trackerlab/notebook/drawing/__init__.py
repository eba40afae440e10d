"""The tape as a matplotlib drawing: ``plot_tape``, ``tape_svg`` and ``tape_html`` (``figure``). Each value
is a box sized to its text (``boxes``), each recorded use its own edge routed around the boxes
(``layout``), drawn as matplotlib artists (``artists``)."""

from .figure import STATES, TapeFigure, plot_tape, svg_markup, tape_html, tape_svg

__all__ = ["STATES", "TapeFigure", "plot_tape", "svg_markup", "tape_html", "tape_svg"]
