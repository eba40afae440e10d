"""The tape drawing's matplotlib artists: each box with its text, each edge along its route from the
layout with its arrowhead and argument number, and the legend; in the theme's light colours, which the
SVG turns into the page's."""

from __future__ import annotations

from matplotlib.patches import FancyBboxPatch, Patch, PathPatch, Polygon
from matplotlib.path import Path

from ..common.i18n import _
from ..common.theme import COLOURS
from .boxes import BODY_PT, FONT, HEAD_PT, PAD_Y, SMALL_PT, text_width

__all__ = ["LEGEND_H", "STATES", "draw_box", "draw_edge", "legend", "legend_columns", "legend_entries"]

STATES = ("done", "current", "pending", "waiting")
LEGEND_H = 0.3

# Kinds of value: (edge, fill, box style); the stepper's states: fill. Colours are COLOURS' light
# ones; the SVG maps each to a CSS variable with a dark counterpart.
_KIND = {
    "param": (COLOURS["param"], COLOURS["param-fill"], "round,pad=0,rounding_size=0.09"),
    "op": (COLOURS["op"], COLOURS["op-fill"], "square,pad=0"),
    "block": (COLOURS["block"], COLOURS["block-fill"], "round,pad=0,rounding_size=0.05"),
    "const": (COLOURS["const"], COLOURS["const-fill"], "round,pad=0,rounding_size=0.04"),
    "more": (COLOURS["const"], COLOURS["more-fill"], "sawtooth,pad=0,tooth_size=0.05"),
}
_STATE_FILL = {s: COLOURS[f"{s}-fill"] for s in STATES}


def draw_box(ax, centre, box, *, is_output: bool, key: str) -> None:
    kind = box["kind"]
    edge, fill, style = _KIND[kind]
    state = box.get("state")
    if state is not None:
        fill = _STATE_FILL[state]
    width = 2.4 if state == "current" else 1.6 if is_output or kind == "block" else 0.9
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
    title = ax.text(
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
    title.set_gid(f"title-{key}")
    body = ax.text(
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
    body.set_gid(f"lines-{key}")


def draw_edge(ax, route, target: dict, offset: float) -> None:
    verts, codes = [], []
    for command, *points in route.points:
        points = [(px + offset, py) for px, py in points]
        verts.extend(points)
        codes.extend({"M": [Path.MOVETO], "L": [Path.LINETO], "C": [Path.CURVE4] * 3}[command])
    tip = (route.end[0] + offset, route.end[1])
    length, half = 0.09, 0.04
    hx, hy = route.heading  # the way the arrow points: along its target's band (a snake's run back, backwards)
    base = (tip[0] - hx * length, tip[1] - hy * length)
    head = [tip, (base[0] - hy * half, base[1] - hx * half), (base[0] + hy * half, base[1] + hx * half)]
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
        if route.heading[1] == 0:  # beside the line, above it, on the side the edge comes from
            lx -= 0.02 * route.heading[0]
            where = {"ha": "right" if route.heading[0] > 0 else "left", "va": "bottom"}
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


def legend_entries(boxes: dict, states: dict, wrong: set, all_states: bool = False) -> list:
    kinds = {box["kind"] for box in boxes.values()}
    names_ = {"param": _("parameter (leaf)"), "op": _("operation"), "const": _("constant")}
    names_["block"] = _("block (opens below)")
    state_names = {"done": _("done"), "current": _("current"), "pending": _("pending"), "waiting": _("waiting")}
    handles = []
    for kind in ("param", "op", "block", "const"):
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


def legend_columns(handles: list, width: float) -> int:
    """As many legend entries to a row as fit in ``width`` inches."""
    widest = max((text_width(h.get_label(), SMALL_PT) for h in handles), default=0.0) + 0.42
    return max(1, min(len(handles), int(width // widest)))


def legend(ax, handles: list, columns: int, width: float, height: float) -> None:
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
