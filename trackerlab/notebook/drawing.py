"""The tape as a matplotlib drawing: layered from the inputs (left) to the output (right), each value a
box with its op, shape, data and grad. Works without a display: it never touches pyplot or the backend."""

from __future__ import annotations

import io

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Patch

from ..tracked import Tracked, _TrackedValue
from ._layout import _BOX_H, _BOX_W, _GAP_X, _fold_constants, _layout, _limit
from ._tape import as_node, label_map, shape_text, short
from .graph import to_networkx

__all__ = ["STATES", "TapeFigure", "plot_tape", "tape_svg"]

STATES = ("done", "current", "pending", "waiting")

# Kinds of value (edge colour, fill, box style) and the stepper's states (fill); inches throughout.
_KIND = {
    "param": ("#2e7d32", "#e3f4e1", "round,pad=0.04,rounding_size=0.12"),
    "op": ("#1f4e8c", "#e4ecf8", "square,pad=0.04"),
    "const": ("#757575", "#f2f2f2", "round,pad=0.04,rounding_size=0.04"),
    "more": ("#757575", "#ffffff", "sawtooth,pad=0.04,tooth_size=0.06"),
}
_STATE_FILL = {"done": "#cfd8dc", "current": "#ffb74d", "pending": "#fff1b8", "waiting": "#ffffff"}


class TapeFigure(Figure):
    """A matplotlib ``Figure`` that shows itself as a PNG in a notebook, with or without pyplot.

    Its text repr names what it draws, not its size in pixels, so notebooks that print it stay
    the same when the layout is refined.
    """

    values = 0

    def __repr__(self) -> str:
        return f"<TapeFigure: the tape of {self.values} value{'s' if self.values != 1 else ''}>"

    def _repr_png_(self):
        buffer = io.BytesIO()
        self.savefig(buffer, format="png", dpi=100)
        return buffer.getvalue()


def plot_tape(
    y,
    ax=None,
    *,
    labels=None,
    highlight=None,
    states=None,
    grads=None,
    max_nodes: int = 60,
    wrap: int = 6,
    constants: bool = False,
    show_data: bool = True,
    title: str | None = None,
    format: str | None = None,  # noqa: A002  (as matplotlib names it)
):
    """Draw the tape of ``y``: inputs on the left, ``y`` on the right, one box per value.

    Each box shows the value's name (from ``labels``) and op, its shape, its data and its grad
    (a scalar's value, a few elements, or the range). Parameters are green rounded boxes,
    operations blue square ones; constant operands are written in the box of the call that
    used them (``const 2 = 0.5`` is its second argument), or drawn as grey boxes of their own with
    ``constants=True``. ``highlight`` marks a node as current;
    ``states`` maps nodes to ``"done"``, ``"current"``, ``"pending"`` or ``"waiting"`` (the
    stepper colours the walk with it); ``grads`` maps nodes to the sensitivity to show instead of
    the accumulated ``.grad``. Tapes with more than ``max_nodes`` values show the part nearest the
    output and one "… N more" box for the rest; tapes more than ``wrap`` steps long continue on
    the next row.

    Draws into ``ax`` when given, else into a new figure; returns the figure, or the drawing as SVG
    text with ``format="svg"``.

    >>> import trackerlab as tl
    >>> W = tl.param([[1, 2], [3, 4]]); x = tl.param([5, 6])
    >>> fig = tl.plot_tape(W @ x, labels={W: "W", x: "x"})
    >>> type(fig).__name__
    'TapeFigure'
    """
    if format not in (None, "svg"):
        raise ValueError(f"plot_tape: format must be None (a figure) or 'svg', not {format!r}")
    for option, value, least in (("max_nodes", max_nodes, 2), ("wrap", wrap, 1)):
        if not isinstance(value, int) or isinstance(value, bool) or value < least:
            raise ValueError(f"plot_tape: {option} must be an integer of at least {least}, not {value!r}")
    root = as_node(y, "plot_tape")
    node_states = _state_map(states, highlight)
    shown_grads = None if grads is None else {_node(k, "grads"): v for k, v in _items(grads, "grads")}
    graph = to_networkx(root, labels=label_map(labels, "plot_tape"))
    values = sum(1 for _, const in graph.nodes(data="const") if not const)
    if not constants:
        _fold_constants(graph)
    graph, hidden = _limit(graph, max_nodes)
    positions, size, row_of = _layout(graph, wrap)

    width, height = max(size[0], 3.0), max(size[1], 1.6)
    if ax is None:
        head = 0.35 if title else 0.0
        figure = TapeFigure(figsize=(width, height + head))
        figure.values = values
        FigureCanvasAgg(figure)
        ax = figure.add_axes((0, 0, 1, height / (height + head)))
    figure = ax.figure
    ax.set_xlim(0, width)
    ax.set_ylim(-height, 0)
    ax.set_aspect("equal")
    ax.axis("off")
    if title:
        figure.suptitle(title, fontsize=10)

    stubs_in: dict[str, int] = {}
    stubs_out: dict[str, list] = {}
    for source, target, attrs in graph.edges(data=True):
        numbered = graph.in_degree(target) > 1
        if row_of[source] == row_of[target]:
            _draw_edge(ax, positions[source], positions[target], attrs, numbered)
            continue
        # An edge to another row is two short stubs naming the far end, not a line across the drawing.
        n = stubs_in[target] = stubs_in.get(target, 0) + 1
        _draw_stub_in(ax, positions[target], _tag(source, graph.nodes[source]), attrs, numbered, n)
        stubs_out.setdefault(source, []).append(target)
    for source, targets in stubs_out.items():
        _draw_stub_out(ax, positions[source], targets)
    for key, attrs in graph.nodes(data=True):
        node = attrs.get("node")
        state = node_states.get(node) if node is not None else None
        grad = attrs.get("grad")
        if shown_grads is not None:
            grad = shown_grads.get(node)
        text = _box_text(attrs, grad, hidden, show_data)
        _draw_box(ax, positions[key], attrs, state, is_output=node is root, text=text, key=key)
    _legend(ax, graph, node_states)

    if format == "svg":
        return _svg(figure)
    return figure


def tape_svg(y, **options) -> str:
    """The drawing of ``plot_tape(y, **options)`` as SVG text, for static pages.

    >>> import trackerlab as tl
    >>> tl.tape_svg(tl.param(2.0) * 3).startswith("<?xml")
    True
    """
    return plot_tape(y, format="svg", **options)


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


# ----------------------------------------------------------------------------------------------------
# Layout


def _box_text(attrs, grad, hidden: int, show_data: bool) -> tuple[str, str]:
    op = attrs["op"]
    if op == "more":
        return f"… {hidden} more", "earlier values"
    name = attrs.get("label")
    head = f"{name} = {op}" if name else op
    settings = attrs.get("settings") or ()
    kwargs = attrs.get("kwargs") or {}
    extra = [short(s, 3) for s in settings] + [f"{k}={short(v, 3)}" for k, v in kwargs.items()]
    if extra:
        head += f" ({', '.join(extra)})"
    lines = [shape_text(attrs["shape"]) + ("" if op == "const" else f" {attrs.get('dtype', '')}")]
    if show_data:
        lines.append(f"data {short(attrs.get('data'), 3)}")
        if grad is not None:
            lines.append(f"grad {short(grad, 3)}")
    lines.extend(attrs.get("folded", ()))
    return _clip(head), "\n".join(_clip(line) for line in lines)


def _clip(text: str, width: int = 24) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _draw_box(ax, centre, attrs, state, *, is_output: bool, text, key: str) -> None:
    kind = "more" if attrs["op"] == "more" else "const" if attrs["const"] else "param" if attrs["isleaf"] else "op"
    edge, fill, style = _KIND[kind]
    if state is not None:
        fill = _STATE_FILL[state]
    width = 2.6 if state == "current" else 1.8 if is_output else 1.0
    x, y = centre
    box = FancyBboxPatch(
        (x - _BOX_W / 2, y - _BOX_H / 2),
        _BOX_W,
        _BOX_H,
        boxstyle=style,
        facecolor=fill,
        edgecolor="#e65100" if state == "current" else edge,
        linewidth=width,
        linestyle="--" if kind in ("const", "more") else "-",
        zorder=2,
    )
    ax.add_patch(box)
    if key != "more":  # the key, as in to_networkx and the HTML repr
        ax.text(x - _BOX_W / 2 + 0.05, y + _BOX_H / 2 - 0.05, key, fontsize=5.5, color="#8a949e", va="top", zorder=3)
    head, body = text
    ax.text(x, y + _BOX_H / 2 - 0.1, head, ha="center", va="top", fontsize=8, fontweight="bold", color=edge, zorder=3)
    ax.text(
        x, y + _BOX_H / 2 - 0.27, body, ha="center", va="top", fontsize=7, color="#222222", zorder=3, linespacing=1.15
    )


def _tag(key: str, attrs) -> str:
    if key == "more":
        return "… more"
    return f"{key} {attrs.get('label') or attrs['op']}"[:12]


def _draw_stub_in(ax, end, tag: str, attrs, numbered: bool, n: int) -> None:
    x1, y1 = end[0] - _BOX_W / 2 - 0.04, end[1] + 0.2 - 0.17 * (n - 1)
    x0 = x1 - _GAP_X + 0.1
    _draw_edge(ax, (x0 - _BOX_W / 2 - 0.04, y1), (x1 + _BOX_W / 2 + 0.04, y1), attrs, numbered)
    ax.text(x0, y1 - 0.03, tag, ha="left", va="top", fontsize=5.5, color="#455a64", zorder=3)


def _draw_stub_out(ax, start, targets: list) -> None:
    x0, y0 = start[0] + _BOX_W / 2 + 0.04, start[1] - 0.2
    names = ", ".join(targets[:2]) + (f" +{len(targets) - 2}" if len(targets) > 2 else "")
    _draw_edge(ax, (x0 - _BOX_W / 2 - 0.04, y0), (x0 + 0.3 + _BOX_W / 2, y0), {}, False)
    ax.text(x0 + 0.02, y0 - 0.03, f"→ {names}", ha="left", va="top", fontsize=5.5, color="#455a64", zorder=3)


def _draw_edge(ax, start, end, attrs, numbered: bool) -> None:
    x0, y0 = start[0] + _BOX_W / 2 + 0.04, start[1]
    x1, y1 = end[0] - _BOX_W / 2 - 0.04, end[1]
    arrow = FancyArrowPatch(
        (x0, y0),
        (x1, y1),
        arrowstyle="-|>,head_length=0.4,head_width=0.2",
        mutation_scale=10,
        color="#607080",
        linewidth=0.9,
        shrinkA=0,
        shrinkB=0,
        zorder=1,
    )
    ax.add_patch(arrow)
    positions = attrs.get("positions") or ()
    if numbered and positions:
        label = ",".join(str(p + 1) for p in positions)
        t = 0.82
        ax.text(
            x0 + t * (x1 - x0),
            y0 + t * (y1 - y0) + 0.07,
            label,
            ha="center",
            va="bottom",
            fontsize=6.5,
            color="#455a64",
            zorder=3,
        )


def _legend(ax, graph, states: dict) -> None:
    handles = []
    kinds = {"param" if a["isleaf"] else "const" if a["const"] else "op" for _, a in graph.nodes(data=True)}
    names = {"param": "parameter (leaf)", "op": "operation", "const": "constant"}
    for kind in ("param", "op", "const"):
        if kind in kinds:
            edge, fill, _ = _KIND[kind]
            handles.append(Patch(facecolor=fill, edgecolor=edge, label=names[kind]))
    for state in STATES:
        if state in states.values():
            handles.append(Patch(facecolor=_STATE_FILL[state], edgecolor="#555555", label=state))
    ax.legend(
        handles=handles,
        loc="lower center",
        ncol=len(handles),
        fontsize=7,
        frameon=False,
        handlelength=1.2,
        borderaxespad=0.1,
    )


def _svg(figure) -> str:
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "trackerlab"}):
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()
