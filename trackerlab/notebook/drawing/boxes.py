"""What the tape drawing shows: one box per value with its title and lines of text, one edge per
recorded use, and each box's size measured in the font it is drawn in."""

from __future__ import annotations

import functools
import unicodedata
from collections import deque

from ...core.tracked import Tracked
from ...presentation.numbering import names, numbering
from ...presentation.text import call_text
from ..common.i18n import _
from ..common.lazy import is_lazy, lazy_brief, lazy_text
from ..common.tape import changed, dtype_text, shape_text, short, tape

__all__ = ["BODY_PT", "FONT", "HEAD_PT", "PAD_Y", "SMALL_PT", "box_size", "box_text", "boxes_and_edges", "text_width"]

FONT = "DejaVu Sans"  # measured and drawn in the same font, so titles never overflow their boxes
HEAD_PT, BODY_PT, SMALL_PT = 9.0, 8.25, 8.25  # 8.25 pt is 11 CSS px: the least text size shown
PAD_X, PAD_Y, MIN_W, MAX_CHARS = 0.09, 0.06, 0.85, 40


def boxes_and_edges(
    root: Tracked, labels: dict, max_nodes: int, constants: bool, numbered=None, focus=None
) -> tuple[dict, list, int]:
    """The boxes (key → what it shows) and edges ((source, target, position), one per use) to draw,
    and the number of values on the whole tape. Only the part that is drawn is looked at closely."""
    # ``numbered``: the stepper's (numbering, names) of the same tape, so a frame costs what it shows
    (index, _, below), named = numbered or (numbering(root), None)
    keep = None
    users: dict = {}
    if len(index) > max_nodes:  # the values nearest the output (or the focus), breadth first, and a box for the rest
        start, users = (root, {}) if focus is None or focus[0] not in index else focus
        keep = {start}
        # Around a focus: the values it was computed from, and the values computed from it on the way to the
        # output with what those were computed from (a cone); not every other use of a value it reached
        # going down (a parameter used by every layer would fill the drawing with unconnected calls).
        queue = deque([(start, True)])
        room = max_nodes - (2 if users else 1)  # boxes for the values not shown: earlier ones, later ones
        while queue and len(keep) < room:
            node, upwards = queue.popleft()
            nexts = [(arg, False) for arg in below[node]]
            if upwards:
                nexts += [(user, True) for user in users.get(node, ())]
            for arg, up in nexts:
                if arg not in keep and len(keep) < room:
                    keep.add(arg)
                    queue.append((arg, up))
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
            # a number is written into its call's text (``x * 2``); an array keeps a box of its own
            if constants or not _is_number(entry.value):
                boxes[entry.key] = _box(entry.key, "const", None, None, entry.value, operands=0)
            continue
        kind = "param" if node.isleaf else "op"
        box = boxes[entry.key] = _box(entry.key, kind, node, named[node], node.data, operands=len(entry.args))
        box["user"] = node in labels
        if not node.isleaf:
            box["call"] = call_text(node, named.__getitem__, limit=MAX_CHARS - 2)
        for source, position in entry.args:
            if source.startswith("c") and source not in boxes:
                continue
            if source.startswith("c") or keep is None or drawn(source):
                edges.append((source, entry.key, position))
    if keep is not None:
        # Every use not drawn is an arrow to or from a box for what is not shown: values computed from ones
        # not shown come from "… N more"; values used by later ones not shown go to "later values".
        ordered = sorted(keep, key=index.__getitem__)
        used_later = [n for n in ordered if any(u not in keep for u in users.get(n, ()))]
        boxes["more"] = _box("more", "more", None, None, None, operands=0)
        boxes["more"]["hidden"] = len(index) - len(keep)
        boxes["more"]["later"] = bool(used_later)
        for node in ordered:
            if any(a not in keep for a in below[node]):
                edges.append(("more", f"n{index[node]}", None))
        boxes = {"more": boxes.pop("more"), **boxes}
        if used_later:
            boxes["later"] = _box("later", "more", None, None, None, operands=0)
            edges.extend((f"n{index[node]}", "later", None) for node in used_later)
    return boxes, edges, len(index)


def _box(key, kind, node, name, data, operands: int) -> dict:
    return {
        "key": key,
        "kind": kind,
        "node": node,
        "name": name,
        "data": data,
        "operands": operands,
        "call": None,
        "user": False,
    }


def box_text(box, shown, show_data: bool) -> tuple[str, list[str]]:
    """The box's title and its lines: key, shape and dtype; the call as the user wrote it (``= b1[:, None]``);
    data; grad or Δ."""
    kind = box["kind"]
    if kind == "more":
        if box["key"] == "later":
            return "…", [_("later values")]
        more = _("… {count} more").format(count=f"{box['hidden']:,}")
        return more, [_("not shown") if box.get("later") else _("earlier values")]
    data = box["data"]
    if kind == "const":
        shape = shape_text(tuple(getattr(data, "shape", ())))
        value = _constant(data) if is_lazy(data) else _("data {value}").format(value=short(data, 3))
        return _("const"), [f"{box['key']} · {shape}", value]
    node = box["node"]
    op = "param" if node.isleaf else node.f.name
    name = box["name"]
    head = f"{name} = {op}" if box["user"] or node.isleaf else name
    lines = [f"{box['key']} · {shape_text(tuple(getattr(data, 'shape', ())))} {dtype_text(data)}"]
    if box["call"] is not None:
        lines.append(f"= {box['call']}")
    lines.extend(box.get("notes", ()))  # a block's drawing: where an input came from ("from layer 1")
    if show_data:
        lines.append(_("data {value}").format(value=_value(data)))
        if shown is None:
            if node.grad is not None:
                lines.append(_("grad {value}").format(value=_value(node.grad)))
        elif node in shown:
            done = box["state"] in ("done", "current")
            word = _("grad {value}") if node.isleaf and done else "Δ {value}"
            lines.append(word.format(value=_value(shown[node])))
    lines.extend(_("⚠ argument {n} changed since").format(n=p + 1) for p in changed(node))
    return _clip(head), [_clip(line) for line in lines]


def _value(x) -> str:
    """A value of the box's node, whose shape and dtype the box already shows: a few numbers, or for a lazy
    (dask) value its chunks."""
    return lazy_brief(x) if is_lazy(x) else short(x, 3)


def _constant(x) -> str:
    """A lazy (dask) constant in its box: its shape and dtype, never its values."""
    return lazy_text(x, chunks=False)


def _is_number(x) -> bool:
    """A constant written as itself into its call's text: a number, not an array."""
    return not getattr(x, "shape", ()) and not isinstance(x, list | tuple) and not is_lazy(x)


def _clip(text: str) -> str:
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 1] + "…"


_RENDERER = []


@functools.lru_cache(maxsize=4096)  # the same lines recur from drawing to drawing (a stepper's frames, blocks)
def text_width(text: str, size: float, bold: bool = False) -> float:
    """The width of ``text`` in inches, from the font's own metrics (matplotlib's, the wider at 72 and 100 dpi)."""
    from matplotlib.backends.backend_agg import RendererAgg
    from matplotlib.font_manager import FontProperties

    if not _RENDERER:  # the SVG's 72 dpi and the figures' 100: hinting widens text differently at each
        _RENDERER.extend(RendererAgg(10, 10, dpi) for dpi in (72, 100))
    prop = FontProperties(family=FONT, size=size, weight="bold" if bold else "normal")
    # a wide (Japanese or Chinese) character is one em, about an "m" of the font, whatever fonts are installed
    text = "".join("m" if unicodedata.east_asian_width(c) in "WF" else c for c in text)
    return max(r.get_text_width_height_descent(text, prop, ismath=False)[0] / r.dpi for r in _RENDERER)


def box_size(text) -> tuple[float, float]:
    head, lines = text
    widest = max([text_width(head, HEAD_PT, bold=True)] + [text_width(line, BODY_PT) for line in lines])
    height = (HEAD_PT * 1.35 + BODY_PT * 1.3 * len(lines)) / 72 + 2 * PAD_Y
    return max(widest + 2 * PAD_X, MIN_W), height
