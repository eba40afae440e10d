"""The tape as a matplotlib drawing, the public entry points: ``plot_tape``, ``tape_svg`` and the figure
that shows itself as SVG. Each value is a box sized to its text (``boxes``), each recorded use its own
edge routed around the boxes (``layout``), drawn as matplotlib artists (``artists``) in colours that
follow the notebook's or the docs' light or dark theme (``common.theme``)."""

from __future__ import annotations

import functools
import math
import sys
import warnings
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any, Literal

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from ...core.tracked import Tracked, istracked
from ...presentation.numbering import numbering
from ...tapereport import TapeCheck
from ..common.fold import Folding, block_text, fold_boxes, folding
from ..common.i18n import _, ngettext
from ..common.lazy import is_lazy
from ..common.tape import as_node, dtype_text, label_map, shape_text
from ..common.theme import COLOURS, picture, svg_text
from .artists import LEGEND_H, STATES, draw_box, draw_edge, legend, legend_columns, legend_entries
from .boxes import FONT, SMALL_PT, box_size, box_text, boxes_and_edges, text_width
from .layout import Strip

__all__ = ["STATES", "TapeFigure", "plot_tape", "svg_markup", "tape_html", "tape_svg"]

DIRECTIONS = ("auto", "right", "down")
AUTO_RIGHT_MAX = 9.0  # "auto" lays out left to right while that fits in this many inches, else downwards,
ASPECT = 3.0  # while that is at most this many times as tall as wide; else as a snake of rows this wide
SNAKE_GAIN = 1.25  # a stepper's window shows a snake where it shows this many times more than a strip


class TapeFigure(Figure):
    """A matplotlib ``Figure`` of a tape that shows itself in a notebook as SVG following the theme (in
    HTML as a picture, an ``<img>`` of the SVG, which untrusted notebooks show too).

    ``plot_tape`` makes it through pyplot, so it appears like any matplotlib figure (also when it is
    not the cell's last expression), ``plt.show()`` shows it and ``savefig`` saves it; as the last
    expression it is shown once, not twice. Its text repr names what it draws, not its size.
    """

    values = 0
    blocks = None  # the folded blocks' own drawings, in HTML, made when shown

    def __repr__(self) -> str:
        return f"<TapeFigure: the tape of {self.values} value{'s' if self.values != 1 else ''}>"

    def _repr_mimebundle_(self, include=None, exclude=None):
        svg = svg_text(self)
        _shown_once(self)
        html = picture(svg, repr(self)) + (self.blocks() if self.blocks is not None else "")
        return {"text/html": html, "image/svg+xml": svg, "text/plain": repr(self)}


def plot_tape(
    y: Any,
    ax: Axes | None = None,
    *,
    labels: Mapping[Any, str] | None = None,
    highlight: Any = None,
    states: Mapping[Any, Literal["done", "current", "pending", "waiting"]] | None = None,
    grads: Mapping[Any, Any] | None = None,
    check: TapeCheck | None = None,
    max_nodes: int = 60,
    direction: Literal["auto", "right", "down"] = "auto",
    constants: bool = False,
    show_data: bool = True,
    fold: bool | Sequence[str] = True,
    title: str | None = None,
    format: Literal["svg"] | None = None,  # noqa: A002  (as matplotlib names it)
) -> Figure | str:
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
    down otherwise, so text keeps its size; and a long chain, which would be a column many times
    taller than wide, as a snake: rows as wide as a notebook, each running back the way the one
    above came, joined by edges that turn round at the ends.

    ``fold`` groups by the user's structure: each block (``with tl.scope("layer 1"):``, a ``@tl.scope``
    function, ``%%track``'s statements and functions) is one purple box titled by its name, with the number
    of operations inside and its output's shape; the values it uses are edges into the box, its values used
    later edges out of it, and nested blocks fold level by level. ``fold=True`` (the default) folds every
    block, ``fold=False`` draws every operation, and a list of block names opens those blocks (their inner
    blocks stay folded unless named too). A block of one operation is drawn as that operation. In a notebook
    the figure shows each folded block's own drawing below it, in a ``<details>`` that opens on click.

    Draws into ``ax`` when given; else returns a new pyplot figure (it never changes the backend),
    or the drawing as SVG text with ``format="svg"``.

    >>> import trackerlab as tl
    >>> W = tl.param([[1, 2], [3, 4]]); x = tl.param([5, 6])
    >>> fig = tl.plot_tape(W @ x, labels={W: "W", x: "x"})
    >>> type(fig).__name__
    'TapeFigure'
    """
    options = dict(labels=labels, highlight=highlight, states=states, grads=grads, check=check)
    options.update(max_nodes=max_nodes, direction=direction, constants=constants, show_data=show_data, fold=fold)
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
    fold=False,
    within=None,
    fit=None,
    wrap=None,
    anchor=None,
    keyed=True,
):
    """``plot_tape``, given the tape's numbering and names when the caller has them (the stepper).
    ``focus``, ``(node, users)`` with ``users`` each node's callers: on a tape larger than ``max_nodes``
    draw the neighbourhood of ``node`` rather than the part nearest the output. ``all_states``: the
    legend lists every state, so it stays the same from frame to frame, and a value that has not received its
    Δ yet keeps a line for it, so its box does not grow when it does. ``fold``: ``plot_tape``'s option,
    or the ``Folding`` already made of it; ``within``: draw that block's own drawing (its inside and its
    inputs) instead of the whole tape. ``fit``, ``(width, height)`` in inches: with ``direction="auto"``,
    lay out the way that shows more of the drawing in that window: one strip, or a snake of bands as long as
    the window is wide or tall when that shows much more. ``wrap``: with a given ``direction``, the longest a
    band may be (a snake, as a first frame chose it), else one strip. ``anchor``, a dict, is given the figure's
    ``size``, the highlighted box's ``box`` ``(left, top, width, height)``, in inches from the top left, and
    the ``direction`` and ``wrap`` laid out. ``keyed=False``: no legend in the drawing; its entries go to the
    ``anchor``'s ``legend``, for ``legend_svg``."""
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
    labels = label_map(labels, "plot_tape")
    folded, numbered = _folding(root, fold, numbered)
    boxes = None
    outputs = {root}
    if folded is not None:  # every value, then the blocks folded
        (index, _uses, _below), _names = numbered
        every = (labels, constants)  # the boxes of every value, made once for a drawing and its blocks' drawings
        if folded.boxes is None or folded.boxes[0] != every:
            folded.boxes = (every, boxes_and_edges(root, labels, len(index), constants, numbered, None))
        boxes, edges, total = folded.boxes[1]
        plan = fold_boxes(boxes, edges, folded, within, max_nodes)
        if plan is not None and focus is not None and not _shows(plan[0], focus[0]):
            plan = None  # the folded drawing kept the boxes nearest the output, not the focus: its neighbourhood
        if plan is None:
            boxes = None  # folding would make a cycle: every operation drawn instead
        else:
            boxes, edges, ends = plan
            outputs = set(ends) if within is not None else {root, folded.key.get(folded.unit(root), "")}
    if boxes is None:
        boxes, edges, total = boxes_and_edges(root, labels, max_nodes, constants, numbered, focus)
    for key, box in boxes.items():
        node = box["node"]
        if box["kind"] == "block":
            box["state"] = _block_state(box["block"], node_states)
            box["wrong"] = any(n in wrong for n in box["block"].nodes)
            box["text"] = block_text(box, shown, show_data)
        else:
            box["state"] = node_states.get(node) if node is not None else None
            box["wrong"] = node in wrong
            box["text"] = box_text(box, shown, show_data)
        box["output"] = node in outputs or key in outputs
        box["size"] = box_size(box["text"])
        if all_states and show_data and shown is not None and box["kind"] in ("param", "op", "block"):
            box["text"], box["size"] = _reserved(box, shown)
    sizes = {key: box["size"] for key, box in boxes.items()}
    keys = list(boxes)
    plan, wrap = _arranged(keys, sizes, edges, direction, fit, wrap)

    width, height = plan.size
    handles = legend_entries(boxes, node_states, wrong, all_states)
    if not keyed:  # the legend goes elsewhere (the stepper's, outside its panned window)
        keyed_entries = tuple(_entry(handle) for handle in handles)
        handles = []
    head = 0.3 if title else 0.0
    fig_w = max(width, 2.6)
    columns = legend_columns(handles, fig_w)
    fig_h = head + height + (LEGEND_H * -(-len(handles) // columns) if handles else 0.0)
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
        draw_edge(ax, route, boxes[route.target], offset)
    for key, box in boxes.items():
        x, y0 = plan.centres[key]
        draw_box(ax, (x + offset, y0), box, is_output=box["output"], key=key)
    legend(ax, handles, columns, fig_w, height)
    if anchor is not None:
        anchor["size"], anchor["direction"], anchor["wrap"] = (fig_w, fig_h), plan.direction, wrap
        if not keyed:
            anchor["legend"] = keyed_entries
        current = next((key for key, box in boxes.items() if box.get("state") == "current"), None)
        if current is not None:
            (x, y0), (w, h) = plan.centres[current], boxes[current]["size"]
            anchor["box"] = (x + offset - w / 2, y0 + head - h / 2, w, h)
    if format == "svg":
        with warnings.catch_warnings():  # Japanese or Chinese text: the SVG keeps it as text, in the reader's fonts
            warnings.filterwarnings("ignore", "Glyph .* missing from font", UserWarning)
            return svg_text(figure)
    if folded is not None and isinstance(figure, TapeFigure) and within is None:
        options = dict(labels=labels, highlight=highlight, states=states, grads=grads, check=check)
        options.update(max_nodes=max_nodes, direction=direction, constants=constants, show_data=show_data)
        figure.blocks = lambda: _blocks_html(root, folded, numbered, options)
    return figure


def _arranged(keys: list, sizes: dict, edges: list, direction: str, fit, wrap) -> tuple:
    """The layout and the band length it wraps at (``None``: one strip). ``"auto"`` lays out left to right
    while that fits a notebook's width; else top down while that is at most ``ASPECT`` times as tall as it is
    wide (a model's layers); else (a long chain) as a snake of rows as wide as a notebook, which turn back at
    each end. Fitted to a window (``fit``), the arrangement that shows the most of the drawing in it; a snake
    of rows or columns as long as the window only for such a long chain, and where it shows ``SNAKE_GAIN``
    times more than a strip."""
    if direction != "auto":
        return Strip(keys, sizes, edges, direction).place(wrap), wrap
    right = Strip(keys, sizes, edges, "right")
    if fit is not None:

        def shown(plan):  # the part of the drawing the window shows
            return min(1, fit[0] / plan.size[0]) * min(1, fit[1] / plan.size[1])

        down = Strip(keys, sizes, edges, "down")
        best = max(((right.place(), None), (down.place(), None)), key=lambda p: shown(p[0]))
        if shown(best[0]) < 1 and down.length > ASPECT * down.breadth:  # a long chain, as plot_tape snakes it
            snakes = ((right.place(fit[0]), fit[0]), (down.place(fit[1]), fit[1]))
            snake = max(snakes, key=lambda p: shown(p[0]))
            if snake[0].bands > 1 and shown(snake[0]) > SNAKE_GAIN * shown(best[0]):
                best = snake
        return best
    if right.length <= AUTO_RIGHT_MAX:
        return right.place(), None
    down = Strip(keys, sizes, edges, "down")
    if down.length <= ASPECT * down.breadth:
        return down.place(), None
    return right.place(AUTO_RIGHT_MAX), AUTO_RIGHT_MAX


def _folding(root, fold, numbered):
    """The ``Folding`` of ``plot_tape``'s option ``fold`` (or ``None``: every operation drawn), and the tape's
    numbering and names, made once for the drawing and its blocks' drawings."""
    if isinstance(fold, Folding):
        return fold, numbered
    if fold is False:
        return None, numbered
    numbered = numbered or (numbering(root), None)
    (index, _uses, below), _names = numbered
    return folding(root, fold, index, below), numbered


def _shows(boxes: dict, node) -> bool:
    """Whether ``node`` is drawn among ``boxes``, as its own box or inside a folded block's."""
    return any(box["node"] is node or (box["kind"] == "block" and node in box["block"].nodes) for box in boxes.values())


def _block_state(block, states: dict):
    """A folded block's state in the walk: current while one of its operations is, pending while one has a
    sensitivity waiting, done once all are."""
    seen = {states.get(node) for node in block.nodes}
    for state in ("current", "pending"):
        if state in seen:
            return state
    if seen == {"done"}:
        return "done"
    return "waiting" if "waiting" in seen else None


def tape_svg(y: Any, **options: Any) -> str:
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


def tape_html(y, **options) -> tuple[str, str]:
    """The drawing of ``plot_tape(y, **options)`` for a notebook: its SVG, and the HTML that shows it (a
    picture, which untrusted notebooks keep) with each folded block's own drawing below it, in a
    ``<details>`` that opens on click (no script: it works in an untrusted notebook and an exported page).

    >>> import trackerlab as tl
    >>> x = tl.param(2.0)
    >>> with tl.scope("square"):
    ...     y = x * x + 1
    >>> svg, html = tape_html(y * 3)
    >>> html.count("<details")
    1
    """
    root = as_node(y, "plot_tape")
    fold = options.pop("fold", True)
    folded, numbered = _folding(root, fold, None)
    defaults = dict(labels=None, highlight=None, states=None, grads=None, check=None, max_nodes=60)
    defaults.update(direction="auto", constants=False, show_data=True, title=None)
    options = {**defaults, **options}
    svg = _plot(y, None, **options, format="svg", numbered=numbered, fold=folded or False)
    html = picture(svg, _("<the tape drawn>"))
    if folded is not None:
        html += _blocks_html(root, folded, numbered, options)
    return svg, html


MAX_BLOCK_DRAWINGS = 24  # a tape of more blocks than this draws the first ones; fold=[name] opens any other


def _blocks_html(root, folded: Folding, numbered, options: dict) -> str:
    """One ``<details>`` per block folded in the drawing, holding the block's own drawing (its operations, its
    nested blocks folded, its inputs) and, nested in it, its nested blocks' in turn; closed until clicked. Past
    ``MAX_BLOCK_DRAWINGS``, those nearest the output, as the drawing keeps them, and a line for the rest."""
    options = {key: value for key, value in options.items() if key != "title"}
    drawn = [0]

    def unopened(blocks) -> int:  # the blocks that would have a drawing: these, and those folded inside them
        stack, count = list(blocks), 0
        while stack:
            block = stack.pop()
            count += block not in folded.opened
            stack.extend(block.blocks)
        return count

    def level(within) -> str:
        blocks = folded.shown(within)
        room = MAX_BLOCK_DRAWINGS - drawn[0]
        out = []
        if len(blocks) > room:  # the first ones go: the drawing too shows those nearest the output
            skipped, blocks = blocks[: len(blocks) - room], blocks[len(blocks) - room :]
            rest = unopened(skipped)
            text = ngettext(
                "… {count} more block: plot_tape(y, fold=[name]) opens it",
                "… {count} more blocks: plot_tape(y, fold=[name]) opens them",
                rest,
            ).format(count=f"{rest:,}")
            out.append(f'<div style="opacity:.75;font-family:system-ui,sans-serif">{escape(text)}</div>')
        for block in blocks:
            drawn[0] += 1
            svg = _plot(root, None, **options, title=None, format="svg", numbered=numbered, fold=folded, within=block)
            inner = level(block)
            out.append(
                '<details class="tl-block-drawing" style="margin:2px 0">'
                '<summary style="cursor:pointer;font-family:system-ui,sans-serif">'
                f"{escape(_block_summary(block, folded.key[block]))}</summary>"
                f'<div style="margin-left:1.2em">{picture(svg, block.name)}{inner}</div></details>'
            )
        return "".join(out)

    return f'<div class="tl-blocks">{level(None)}</div>'


def _block_summary(block, key: str) -> str:
    """A block's line above its drawing: its name and key (as its box shows them), how many operations, its
    outputs' shapes."""
    count = ngettext("{count} operation", "{count} operations", block.operations).format(count=f"{block.operations:,}")
    shapes = ", ".join(
        f"{shape_text(tuple(getattr(node.data, 'shape', ())))} {dtype_text(node.data)}" for node in block.outputs[:3]
    )
    return f"{block.name} ({key}) · {count} → {shapes}" if shapes else f"{block.name} ({key}) · {count}"


def framed_svg(y, *, numbered=None, fit=None, **options) -> tuple[str, dict]:
    """The drawing as SVG text for a frame of the stepper, laid out to show most of it in ``fit``
    ``(width, height)`` inches, and where it is: ``{"size": (width, height), "box": (left, top, width,
    height), "direction": ...}`` of the figure and of the highlighted box, in inches from the top left."""
    defaults = dict(labels=None, highlight=None, states=None, grads=None, check=None, max_nodes=60)
    defaults.update(direction="auto", constants=False, show_data=True, title=None)
    anchor: dict = {}
    svg = _plot(y, None, **{**defaults, **options}, format="svg", numbered=numbered, fit=fit, anchor=anchor)
    return svg, anchor


def _entry(handle) -> tuple:
    """A legend entry as plain data: its label, fill and edge colours and edge width."""
    return (handle.get_label(), to_hex(handle.get_facecolor()), to_hex(handle.get_edgecolor()), handle.get_linewidth())


@functools.lru_cache(maxsize=32)
def legend_svg(entries: tuple, width: float) -> str:
    """The legend alone, as SVG text in the theme's colours, its entries (from ``framed_svg``'s ``legend``) in as
    many columns as fit ``width`` inches: the stepper shows it outside the window it pans over the drawing."""
    handles = [
        Patch(facecolor=fill, edgecolor=edge, linewidth=line, label=label) for label, fill, edge, line in entries
    ]
    columns = legend_columns(handles, width)
    rows = -(-len(handles) // columns)
    used = min(width, columns * (max(text_width(h.get_label(), SMALL_PT) for h in handles) + 0.42) + 0.2)
    figure = _new_figure(used, LEGEND_H * rows, pyplot=False)
    ax = figure.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, used)
    ax.set_ylim(LEGEND_H * rows, 0)
    ax.axis("off")
    legend(ax, handles, columns, used, -0.02)
    with warnings.catch_warnings():  # Japanese or Chinese text: the SVG keeps it as text, in the reader's fonts
        warnings.filterwarnings("ignore", "Glyph .* missing from font", UserWarning)
        return svg_text(figure)


def _reserved(box, shown: dict):
    """A stepper's box keeps a line for the Δ (or grad) that has not arrived yet, and the room its widest
    value would take, so that boxes keep their size from frame to frame: a value's box, and a folded block's
    for its one output (a block of several outputs shows no Δ)."""
    head, lines = box["text"]
    if box["kind"] == "block":
        if len(box["block"].outputs) != 1:
            return box["text"], box["size"]
        (node,) = box["block"].outputs
        text = functools.partial(block_text, box)
    else:
        node = box["node"]
        text = functools.partial(box_text, {**box, "state": "done"})
    if node not in shown:
        lines = [*lines, ""]
    if is_lazy(node.data):  # described by its shape and chunks, the same for its Δ
        return (head, lines), box_size((head, [*lines, box["text"][1][-1]]))
    widest = box_size(text({node: _widest(tuple(getattr(node.data, "shape", ())))}, True))
    return (head, lines), (max(box["size"][0], widest[0]), widest[1])


@functools.lru_cache(maxsize=64)
def _widest(shape: tuple):
    """A value of ``shape`` as wide as any when written in a box (distinct numbers of six digits, negative
    and with an exponent)."""
    size = math.prod(shape)
    return np.linspace(-1.23457e-05, -9.87654e-05, size).reshape(shape) if size else np.zeros(shape)


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
