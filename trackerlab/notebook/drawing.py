"""The tape as a matplotlib drawing: layered from the inputs to the output, each value a box sized to
its text, each recorded use its own edge routed around the boxes (``_layout``), shown as SVG that
follows the notebook's or the docs' light or dark theme (``_theme``)."""

from __future__ import annotations

import sys
import unicodedata
import warnings
from collections import deque

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch, Patch, PathPatch, Polygon
from matplotlib.path import Path

from ..tracked import Tracked, _TrackedValue
from ._i18n import _
from ._layout import layout
from ._tape import as_node, dtype_text, label_map, names, numbering, shape_text, short, tape
from ._theme import COLOURS, inline_svg, svg_text

__all__ = ["STATES", "TapeFigure", "plot_tape", "svg_markup", "tape_svg"]

STATES = ("done", "current", "pending", "waiting")
DIRECTIONS = ("auto", "right", "down")
FONT = "DejaVu Sans"  # measured and drawn in the same font, so titles never overflow their boxes
HEAD_PT, BODY_PT, SMALL_PT = 8.0, 7.0, 6.5
PAD_X, PAD_Y, MIN_W, MAX_CHARS = 0.09, 0.06, 0.85, 40
AUTO_RIGHT_MAX = 9.0  # "auto" lays out left to right while that fits in this many inches, else downwards
LEGEND_H = 0.3
WRONG = "rule disagrees with finite differences"  # the legend shows it translated

# Kinds of value: (edge, fill, box style); the stepper's states: fill. Colours are COLOURS' light
# ones; the SVG maps each to a CSS variable with a dark counterpart.
_KIND = {
    "param": (COLOURS["param"], COLOURS["param-fill"], "round,pad=0,rounding_size=0.09"),
    "op": (COLOURS["op"], COLOURS["op-fill"], "square,pad=0"),
    "const": (COLOURS["const"], COLOURS["const-fill"], "round,pad=0,rounding_size=0.04"),
    "more": (COLOURS["const"], COLOURS["more-fill"], "sawtooth,pad=0,tooth_size=0.05"),
}
_STATE_FILL = {s: COLOURS[f"{s}-fill"] for s in STATES}


class TapeFigure(Figure):
    """A matplotlib ``Figure`` of a tape that shows itself in a notebook as SVG following the theme.

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
        return {"text/html": inline_svg(svg), "image/svg+xml": svg, "text/plain": repr(self)}


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
    ``matmul#2`` for the second matmul computed), its key (``n0``, ``n1``, … in forward order, as
    in ``to_networkx`` and the HTML repr), shape, data and grad. Parameters are green rounded
    boxes, operations blue square ones. Every recorded use is its own arrow, numbered by argument
    position where the operation has several (``x * x`` has two arrows, 1 and 2), and routed
    around the boxes. Constant operands are written in the box of the call that used them
    (``const 2 = 0.5`` is its second argument), or drawn as grey boxes of their own with
    ``constants=True``.

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
    boxes, edges, total = _boxes(root, label_map(labels, "plot_tape"), max_nodes, constants, numbered, focus)
    for box in boxes.values():
        node = box["node"]
        box["state"] = node_states.get(node) if node is not None else None
        box["wrong"] = node in wrong
        box["text"] = _box_text(box, shown, show_data)
        box["size"] = _box_size(box["text"])
    sizes = {key: box["size"] for key, box in boxes.items()}
    keys = list(boxes)
    plan = layout(keys, sizes, edges, "right")
    if direction == "down" or (direction == "auto" and plan.size[0] > AUTO_RIGHT_MAX):
        plan = layout(keys, sizes, edges, "down")

    width, height = plan.size
    legend = _legend_entries(boxes, node_states, wrong, all_states)
    head = 0.3 if title else 0.0
    fig_w = max(width, 2.6)
    columns = _legend_columns(legend, fig_w)
    fig_h = head + height + LEGEND_H * -(-len(legend) // columns)
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
        _draw_edge(ax, route, boxes[route.target], plan.direction, offset)
    for key, box in boxes.items():
        x, y0 = plan.centres[key]
        _draw_box(ax, (x + offset, y0), box, is_output=box["node"] is root, key=key)
    _legend(ax, legend, columns, fig_w, height)
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
    """The drawing as an ``<svg>`` element to sit inside HTML: no XML prolog, at most as wide as its
    container (and never below 70% of its size: wider drawings scroll), following JupyterLab's and
    the docs' theme. ``numbered``: the tape's ``(numbering, names)``, when the caller has them."""
    defaults = dict(labels=None, highlight=None, states=None, grads=None, check=None, max_nodes=60)
    defaults.update(direction="auto", constants=False, show_data=True, title=None)
    return inline_svg(_plot(y, None, **{**defaults, **options}, format="svg", numbered=numbered))


# ----------------------------------------------------------------------------------------------------
# Options


def _items(mapping, option: str):
    if not hasattr(mapping, "items"):
        raise TypeError(f"plot_tape: {option} must be a mapping from tracked values to values")
    return mapping.items()


def _node(key, option: str) -> Tracked:
    node = key.tracker if isinstance(key, _TrackedValue) else key
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
# What is drawn


def _boxes(
    root: Tracked, labels: dict, max_nodes: int, constants: bool, numbered=None, focus=None
) -> tuple[dict, list, int]:
    """The boxes (key → what it shows) and edges ((source, target, position), one per use) to draw,
    and the number of values on the whole tape. Only the part that is drawn is looked at closely."""
    # ``numbered``: the stepper's (numbering, names) of the same tape, so a frame costs what it shows
    (index, _, below), named = numbered or (numbering(root), None)
    keep = None
    if len(index) > max_nodes:  # the values nearest the output (or the focus), breadth first, and a box for the rest
        start, users = (root, {}) if focus is None or focus[0] not in index else focus
        keep = {start}
        queue = deque([start])
        while queue and len(keep) < max_nodes - 1:
            node = queue.popleft()
            for arg in (*below[node], *users.get(node, ())):
                if arg not in keep and len(keep) < max_nodes - 1:
                    keep.add(arg)
                    queue.append(arg)
    entries = tape(root, index, keep)
    kept_keys = None if keep is None else {f"n{index[node]}" for node in keep}

    def drawn(key):
        return key in kept_keys

    if named is None:
        named = names(index, labels)  # counted over the whole tape, so they match the stepper's
    boxes: dict = {}
    edges: list = []
    for entry in entries:
        node = entry.node
        if entry.const:
            if not constants:
                continue
            boxes[entry.key] = _box(entry.key, "const", None, None, entry.value, operands=0)
            continue
        kind = "param" if node.isleaf else "op"
        box = boxes[entry.key] = _box(entry.key, kind, node, named[node], node.data, operands=len(entry.args))
        box["user"] = node in labels
        if not node.isleaf:
            box["settings"] = entry.settings
            box["kwargs"] = dict(node.f.kwargs)
        for source, position in entry.args:
            if source.startswith("c") and not constants:
                box["folded"].append((position, source))
            elif source.startswith("c") or keep is None or drawn(source):
                edges.append((source, entry.key, position))
    if not constants:  # write each constant operand into its call's box
        values = {e.key: e.value for e in entries if e.const}
        for box in boxes.values():
            box["folded"] = [f"const {p + 1} = {short(values[k], 3)}" for p, k in box["folded"]]
    if keep is not None:
        boxes["more"] = _box("more", "more", None, None, None, operands=0)
        boxes["more"]["hidden"] = len(index) - len(keep)
        cut = [n for n in keep if any(a not in keep for a in below[n])]
        for node in sorted(cut, key=index.__getitem__):
            edges.append(("more", f"n{index[node]}", None))
        boxes = {"more": boxes.pop("more"), **boxes}
    return boxes, edges, len(index)


def _box(key, kind, node, name, data, operands: int) -> dict:
    return {
        "key": key,
        "kind": kind,
        "node": node,
        "name": name,
        "data": data,
        "operands": operands,
        "folded": [],
        "settings": (),
        "kwargs": {},
        "user": False,
    }


def _box_text(box, shown, show_data: bool) -> tuple[str, list[str]]:
    """The box's title and its lines: key, shape and dtype; data; grad or Δ; settings; constants."""
    kind = box["kind"]
    if kind == "more":
        return _("… {count} more").format(count=f"{box['hidden']:,}"), [_("earlier values")]
    data = box["data"]
    if kind == "const":
        shape = shape_text(tuple(getattr(data, "shape", ())))
        return _("const"), [f"{box['key']} · {shape}", _("data {value}").format(value=short(data, 3))]
    node = box["node"]
    op = "param" if node.isleaf else node.f.name
    name = box["name"]
    head = f"{name} = {op}" if box["user"] or node.isleaf else name
    lines = [f"{box['key']} · {shape_text(tuple(getattr(data, 'shape', ())))} {dtype_text(data)}"]
    extra = [short(s, 3) for s in box["settings"]] + [f"{k}={short(v, 3)}" for k, v in box["kwargs"].items()]
    if extra:
        lines.append(f"({', '.join(extra)})")
    if show_data:
        lines.append(_("data {value}").format(value=short(data, 3)))
        if shown is None:
            if node.grad is not None:
                lines.append(_("grad {value}").format(value=short(node.grad, 3)))
        elif node in shown:
            done = box["state"] in ("done", "current")
            word = _("grad {value}") if node.isleaf and done else "Δ {value}"
            lines.append(word.format(value=short(shown[node], 3)))
    lines.extend(box["folded"])
    return _clip(head), [_clip(line) for line in lines]


def _clip(text: str) -> str:
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 1] + "…"


_RENDERER = []


def _text_width(text: str, size: float, bold: bool = False) -> float:
    """The width of ``text`` in inches, from the font's own metrics (matplotlib's, at 72 dpi)."""
    from matplotlib.backends.backend_agg import RendererAgg
    from matplotlib.font_manager import FontProperties

    if not _RENDERER:
        _RENDERER.append(RendererAgg(10, 10, 72))
    prop = FontProperties(family=FONT, size=size, weight="bold" if bold else "normal")
    # a wide (Japanese or Chinese) character is one em, about an "m" of the font, whatever fonts are installed
    text = "".join("m" if unicodedata.east_asian_width(c) in "WF" else c for c in text)
    width, _height, _descent = _RENDERER[0].get_text_width_height_descent(text, prop, ismath=False)
    return width / 72


def _box_size(text) -> tuple[float, float]:
    head, lines = text
    widest = max([_text_width(head, HEAD_PT, bold=True)] + [_text_width(line, BODY_PT) for line in lines])
    height = (HEAD_PT * 1.35 + BODY_PT * 1.3 * len(lines)) / 72 + 2 * PAD_Y
    return max(widest + 2 * PAD_X, MIN_W), height


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


def _draw_box(ax, centre, box, *, is_output: bool, key: str) -> None:
    kind = box["kind"]
    edge, fill, style = _KIND[kind]
    state = box.get("state")
    if state is not None:
        fill = _STATE_FILL[state]
    width = 2.4 if state == "current" else 1.6 if is_output else 0.9
    colour = COLOURS["current"] if state == "current" else edge
    if box.get("wrong"):
        colour, width = COLOURS["wrong"], 2.6
    w, h = box["size"]
    x, y = centre
    patch = FancyBboxPatch(
        (x - w / 2, y - h / 2),
        w,
        h,
        boxstyle=style,
        facecolor=fill,
        edgecolor=colour,
        linewidth=width,
        linestyle="--" if kind in ("const", "more") else "-",
        zorder=2,
        clip_on=False,
    )
    patch.set_gid(f"box-{key}")
    ax.add_patch(patch)
    head, lines = box["text"]
    top = y - h / 2 + PAD_Y
    ax.text(
        x,
        top,
        head,
        ha="center",
        va="top",
        fontsize=HEAD_PT,
        fontweight="bold",
        fontfamily=FONT,
        color=COLOURS["wrong"] if box.get("wrong") else edge,
        zorder=3,
        parse_math=False,
        clip_on=False,
    )
    ax.text(
        x,
        top + HEAD_PT * 1.35 / 72,
        "\n".join(lines),
        ha="center",
        va="top",
        fontsize=BODY_PT,
        fontfamily=FONT,
        color=COLOURS["text"],
        zorder=3,
        linespacing=1.3,
        parse_math=False,
        clip_on=False,
    )


def _draw_edge(ax, route, target: dict, direction: str, offset: float) -> None:
    verts, codes = [], []
    for command, *points in route.points:
        points = [(px + offset, py) for px, py in points]
        verts.extend(points)
        codes.extend({"M": [Path.MOVETO], "L": [Path.LINETO], "C": [Path.CURVE4] * 3}[command])
    tip = (route.end[0] + offset, route.end[1])
    length, half = 0.09, 0.04
    if direction == "right":
        base = (tip[0] - length, tip[1])
        head = [tip, (base[0], base[1] - half), (base[0], base[1] + half)]
    else:
        base = (tip[0], tip[1] - length)
        head = [tip, (base[0] - half, base[1]), (base[0] + half, base[1])]
    verts[-1] = base  # the line stops where the arrowhead starts
    gid = f"edge-{route.source}-{route.target}-{'' if route.position is None else route.position + 1}"
    line = PathPatch(
        Path(verts, codes), facecolor="none", edgecolor=COLOURS["edge"], linewidth=1.0, zorder=1, clip_on=False
    )
    line.set_gid(gid)
    ax.add_patch(line)
    arrow = Polygon(head, closed=True, facecolor=COLOURS["edge"], edgecolor="none", zorder=1, clip_on=False)
    arrow.set_gid(f"head-{gid[5:]}")
    ax.add_patch(arrow)
    if route.position is not None and target["operands"] > 1:
        lx, ly = route.label_at
        lx += offset
        if direction == "right":
            lx -= 0.02
            where = {"ha": "right", "va": "bottom"}
            ly -= 0.015
        else:
            lx += 0.03
            where = {"ha": "left", "va": "center"}
        text = ax.text(
            lx,
            ly,
            str(route.position + 1),
            fontsize=SMALL_PT,
            fontfamily=FONT,
            color=COLOURS["label"],
            zorder=3,
            parse_math=False,
            clip_on=False,
            **where,
        )
        text.set_gid(f"label-{gid[5:]}")


def _legend_entries(boxes: dict, states: dict, wrong: set, all_states: bool = False) -> list:
    kinds = {box["kind"] for box in boxes.values()}
    names_ = {"param": _("parameter (leaf)"), "op": _("operation"), "const": _("constant")}
    state_names = {"done": _("done"), "current": _("current"), "pending": _("pending"), "waiting": _("waiting")}
    handles = []
    for kind in ("param", "op", "const"):
        if kind in kinds:
            edge, fill, _style = _KIND[kind]
            handles.append(Patch(facecolor=fill, edgecolor=edge, label=names_[kind]))
    shown_states = set(STATES) if all_states else {box["state"] for box in boxes.values() if box["node"] is not None}
    for state in STATES:
        if state in shown_states:
            edge = COLOURS["current"] if state == "current" else COLOURS["const"]
            handles.append(Patch(facecolor=_STATE_FILL[state], edgecolor=edge, label=state_names[state]))
    if any(box.get("wrong") for box in boxes.values()):
        handles.append(
            Patch(
                facecolor=COLOURS["bg"],
                edgecolor=COLOURS["wrong"],
                linewidth=2,
                label=_("rule disagrees with finite differences"),
            )
        )
    return handles


def _legend_columns(handles: list, width: float) -> int:
    """As many legend entries to a row as fit in ``width`` inches."""
    widest = max((_text_width(h.get_label(), SMALL_PT) for h in handles), default=0.0) + 0.42
    return max(1, min(len(handles), int(width // widest)))


def _legend(ax, handles: list, columns: int, width: float, height: float) -> None:
    if not handles:
        return
    legend = ax.legend(
        handles=handles,
        loc="upper center",
        bbox_to_anchor=(width / 2, height + 0.02),
        bbox_transform=ax.transData,
        ncol=columns,
        frameon=False,
        handlelength=1.2,
        borderaxespad=0.1,
        prop={"family": FONT, "size": SMALL_PT},
        labelcolor=COLOURS["dim"],
        columnspacing=1.2,
    )
    legend.set_gid("legend")
