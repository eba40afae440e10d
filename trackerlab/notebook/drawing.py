"""The tape as a matplotlib drawing, the public entry points: ``plot_tape``, ``tape_svg`` and the figure
that shows itself as SVG. Each value is a box sized to its text (``_boxes``), each recorded use its own
edge routed around the boxes (``_layout``), drawn as matplotlib artists (``_artists``) in colours that
follow the notebook's or the docs' light or dark theme (``_theme``)."""

from __future__ import annotations

import sys
import warnings

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..core.tracked import Tracked, istracked
from ._artists import LEGEND_H, STATES, draw_box, draw_edge, legend, legend_columns, legend_entries
from ._boxes import FONT, box_size, box_text, boxes_and_edges
from ._i18n import _
from ._layout import layout
from ._tape import as_node, label_map
from ._theme import COLOURS, picture, svg_text

__all__ = ["STATES", "TapeFigure", "plot_tape", "svg_markup", "tape_svg"]

DIRECTIONS = ("auto", "right", "down")
AUTO_RIGHT_MAX = 9.0  # "auto" lays out left to right while that fits in this many inches, else downwards


class TapeFigure(Figure):
    """A matplotlib ``Figure`` of a tape that shows itself in a notebook as SVG following the theme (in
    HTML as a picture, an ``<img>`` of the SVG, which untrusted notebooks show too).

    ``plot_tape`` makes it through pyplot, so it appears like any matplotlib figure (also when it is
    not the cell's last expression), ``plt.show()`` shows it and ``savefig`` saves it; as the last
    expression it is shown once, not twice. Its text repr names what it draws, not its size.
    """

    values = 0

    def __repr__(self) -> str:
        return f"<TapeFigure: the tape of {self.values} value{'s' if self.values != 1 else ''}>"

    def _repr_mimebundle_(self, include=None, exclude=None):
        svg = svg_text(self)
        _shown_once(self)
        return {"text/html": picture(svg, repr(self)), "image/svg+xml": svg, "text/plain": repr(self)}


def plot_tape(
    y,
    ax=None,
    *,
    labels=None,
    highlight=None,
    states=None,
    grads=None,
    check=None,
    max_nodes: int = 60,
    direction: str = "auto",
    constants: bool = False,
    show_data: bool = True,
    title: str | None = None,
    format: str | None = None,  # noqa: A002  (as matplotlib names it)
):
    """Draw the tape of ``y``: one box per value, inputs first, ``y`` last, one arrow per use.

    Each box shows the value's name (``labels``, else ``x1``, ``x2``, … for parameters and
    ``matmul#2`` for the second matmul made), its key (``n0``, ``n1``, … in the order the values were
    made, as in ``to_networkx``, the HTML repr and ``check_tape``), shape, the call as written
    (``= b1[:, None]``, ``= h * 2``), data and grad. Parameters are green rounded boxes, operations
    blue square ones. Every recorded use is its own arrow, numbered by argument position where the
    operation has several (``x * x`` has two arrows, 1 and 2), and routed around the boxes. A number
    given as an argument is written into its call (``h * 2``), an array is a grey ``const`` box of its
    own; ``constants=True`` draws numbers as boxes too.

    ``highlight`` marks a node as current; ``states`` maps nodes to ``"done"``, ``"current"``,
    ``"pending"`` or ``"waiting"`` (the stepper colours the walk with it); ``grads`` maps nodes to
    the sensitivity that has reached them, shown as ``Δ`` (and as ``grad`` on leaves once
    accumulated) instead of ``.grad``; ``check`` is a report of ``tl.check_tape`` whose wrong nodes
    are drawn in red. Tapes with more than ``max_nodes`` values show the part nearest the output
    and one "… N more" box for the rest. ``direction`` is ``"right"`` (inputs on the left),
    ``"down"`` (inputs at the top) or ``"auto"``: right while the drawing fits a notebook's width,
    down otherwise, so text keeps its size.

    Draws into ``ax`` when given; else returns a new pyplot figure (it never changes the backend),
    or the drawing as SVG text with ``format="svg"``.

    >>> import trackerlab as tl
    >>> W = tl.param([[1, 2], [3, 4]]); x = tl.param([5, 6])
    >>> fig = tl.plot_tape(W @ x, labels={W: "W", x: "x"})
    >>> type(fig).__name__
    'TapeFigure'
    """
    options = dict(labels=labels, highlight=highlight, states=states, grads=grads, check=check)
    options.update(max_nodes=max_nodes, direction=direction, constants=constants, show_data=show_data)
    return _plot(y, ax, title=title, format=format, numbered=None, **options)


def _plot(
    y,
    ax,
    *,
    labels,
    highlight,
    states,
    grads,
    check,
    max_nodes,
    direction,
    constants,
    show_data,
    title,
    format,  # noqa: A002
    numbered,
    focus=None,
    all_states=False,
):
    """``plot_tape``, given the tape's numbering and names when the caller has them (the stepper).
    ``focus``, ``(node, users)`` with ``users`` each node's callers: on a tape larger than ``max_nodes``
    draw the neighbourhood of ``node`` rather than the part nearest the output. ``all_states``: the
    legend lists every state, so it stays the same from frame to frame."""
    if format not in (None, "svg"):
        raise ValueError(f"plot_tape: format must be None (a figure) or 'svg', not {format!r}")
    if direction not in DIRECTIONS:
        raise ValueError(f"plot_tape: direction must be one of {', '.join(DIRECTIONS)}, not {direction!r}")
    if not isinstance(max_nodes, int) or isinstance(max_nodes, bool) or max_nodes < 2:
        raise ValueError(f"plot_tape: max_nodes must be an integer of at least 2, not {max_nodes!r}")
    root = as_node(y, "plot_tape")
    node_states = _state_map(states, highlight)
    shown = None if grads is None else {_node(k, "grads"): v for k, v in _items(grads, "grads")}
    wrong = _wrong_nodes(check)
    boxes, edges, total = boxes_and_edges(root, label_map(labels, "plot_tape"), max_nodes, constants, numbered, focus)
    for box in boxes.values():
        node = box["node"]
        box["state"] = node_states.get(node) if node is not None else None
        box["wrong"] = node in wrong
        box["text"] = box_text(box, shown, show_data)
        box["size"] = box_size(box["text"])
    sizes = {key: box["size"] for key, box in boxes.items()}
    keys = list(boxes)
    plan = layout(keys, sizes, edges, "right")
    if direction == "down" or (direction == "auto" and plan.size[0] > AUTO_RIGHT_MAX):
        plan = layout(keys, sizes, edges, "down")

    width, height = plan.size
    handles = legend_entries(boxes, node_states, wrong, all_states)
    head = 0.3 if title else 0.0
    fig_w = max(width, 2.6)
    columns = legend_columns(handles, fig_w)
    fig_h = head + height + LEGEND_H * -(-len(handles) // columns)
    if ax is None:
        figure = _new_figure(fig_w, fig_h, pyplot=format is None)
        figure.values = total
        ax = figure.add_axes((0, 0, 1, 1))
        ax.set_xlim(0, fig_w)
        ax.set_ylim(fig_h - head, -head)
    else:
        ax.set_xlim(0, fig_w)
        ax.set_ylim(fig_h - head, -head)
    figure = ax.figure
    ax.set_aspect("equal")
    ax.axis("off")
    if title:
        ax.text(
            fig_w / 2,
            -head / 2,
            title,
            ha="center",
            va="center",
            fontsize=10,
            fontfamily=FONT,
            color=COLOURS["text"],
            parse_math=False,
        )
    offset = (fig_w - width) / 2
    for route in plan.routes:
        draw_edge(ax, route, boxes[route.target], plan.direction, offset)
    for key, box in boxes.items():
        x, y0 = plan.centres[key]
        draw_box(ax, (x + offset, y0), box, is_output=box["node"] is root, key=key)
    legend(ax, handles, columns, fig_w, height)
    if format == "svg":
        with warnings.catch_warnings():  # Japanese or Chinese text: the SVG keeps it as text, in the reader's fonts
            warnings.filterwarnings("ignore", "Glyph .* missing from font", UserWarning)
            return svg_text(figure)
    return figure


def tape_svg(y, **options) -> str:
    """The drawing of ``plot_tape(y, **options)`` as a standalone SVG document that follows the
    viewer's light or dark colour scheme, for static pages and files.

    >>> import trackerlab as tl
    >>> tl.tape_svg(tl.param(2.0) * 3).startswith("<?xml")
    True
    """
    return plot_tape(y, format="svg", **options)


def svg_markup(y, *, numbered=None, **options) -> str:
    """The drawing as a picture to sit inside HTML: an ``<img>`` of the SVG (which sanitisers keep, where
    they drop inline ``<svg>``), at most as wide as its container (and never below 70% of its size: wider
    drawings scroll), following JupyterLab's and the docs' theme where the page's styles run, else the
    reader's colour scheme. ``numbered``: the tape's ``(numbering, names)``, when the caller has them."""
    defaults = dict(labels=None, highlight=None, states=None, grads=None, check=None, max_nodes=60)
    defaults.update(direction="auto", constants=False, show_data=True, title=None)
    svg = _plot(y, None, **{**defaults, **options}, format="svg", numbered=numbered)
    return picture(svg, _("<the tape drawn>"))


# ----------------------------------------------------------------------------------------------------
# Options


def _items(mapping, option: str):
    if not hasattr(mapping, "items"):
        raise TypeError(f"plot_tape: {option} must be a mapping from tracked values to values")
    return mapping.items()


def _node(key, option: str) -> Tracked:
    node = key.tracker if istracked(key) else key
    if not isinstance(node, Tracked):
        raise TypeError(f"plot_tape: {option} has a key of type {type(key).__name__}; keys must be tracked values")
    return node


def _state_map(states, highlight) -> dict:
    out = {}
    if states is not None:
        for key, state in _items(states, "states"):
            if state not in STATES:
                raise ValueError(f"plot_tape: states must be one of {', '.join(STATES)}, not {state!r}")
            out[_node(key, "states")] = state
    if highlight is not None:
        out[_node(highlight, "highlight")] = "current"
    return out


def _wrong_nodes(check) -> set:
    """The nodes a ``tl.check_tape`` report found wrong (its ``.wrong``), as a set."""
    if check is None:
        return set()
    wrong = getattr(check, "wrong", None)
    if wrong is None or isinstance(wrong, str) or not hasattr(wrong, "__iter__"):
        raise TypeError(
            f"plot_tape: check must be a report of tl.check_tape (with .wrong, the nodes whose rule "
            f"disagrees with finite differences), not {type(check).__name__}"
        )
    return {_node(node, "check.wrong") for node in wrong}


# ----------------------------------------------------------------------------------------------------


# ----------------------------------------------------------------------------------------------------
# Drawing


def _new_figure(width: float, height: float, pyplot: bool) -> TapeFigure:
    """A figure of pyplot's (``plot_tape``: it shows like any figure) or of its own (SVG text, the
    stepper's frames: nothing to close). pyplot keeps the backend it has; none is chosen here."""
    if pyplot:
        import matplotlib.pyplot as plt

        return plt.figure(figsize=(width, height), FigureClass=TapeFigure, facecolor=COLOURS["bg"])
    figure = TapeFigure(figsize=(width, height), facecolor=COLOURS["bg"])
    FigureCanvasAgg(figure)
    return figure


def _shown_once(figure) -> None:
    """After a notebook has shown ``figure`` as a cell's value, the inline backend would show it again
    at the end of the cell (every pyplot figure, as PNG): close it for pyplot, and let the PNG
    formatter skip tape figures (their SVG is the output)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is not None:
        for mime in ("image/png", "image/jpeg", "application/pdf"):
            formatter = shell.display_formatter.formatters.get(mime)
            if formatter is not None:
                formatter.for_type(TapeFigure, _nothing)
    pyplot = sys.modules.get("matplotlib.pyplot")
    if (
        pyplot is not None
        and "inline" in str(pyplot.get_backend())
        and figure in map(lambda m: m.canvas.figure, pyplot._pylab_helpers.Gcf.get_all_fig_managers())
    ):
        pyplot.close(figure)


def _nothing(_):
    return None
