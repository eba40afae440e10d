"""One stepper frame as HTML: the frame's text from ``frames`` (with ``tl.check_tape``'s verdict on its
node, when checked) beside the tape drawn with the frame's states, on a large tape only the node's
neighbourhood, in a window of a fixed size that the current node's box is centred in."""

from __future__ import annotations

import html
import re
import unicodedata

from ...presentation.text import number
from ..common.i18n import _
from ..common.inline import INLINE
from ..common.theme import PICTURE_CSS, svg_source
from .frames import Frames
from .values import pictures

__all__ = ["MAX_NODES", "PANEL_CHARS", "VIEW", "ZOOM", "check_report", "frame_html", "frame_text", "panel_lines"]

MAX_NODES = 20  # boxes in one frame's drawing; a larger tape shows the current node's neighbourhood, readably
# The drawing is shown at ZOOM times its size (its smallest text, 8.25 pt or 11 px, at 12.1 px), in a window of
# at most VIEW pixels (width, height) whose centre is the current node's box, laid out as one strip or as a
# snake that fills the window (a long chain); its legend sits under the window, outside what it pans over. The
# text panel beside it is PANEL_CHARS characters wide (its lines wrap there), the same on every frame, with the
# frame's picture of a 2-D value under it.
ZOOM = 1.1
VIEW = (720, 440)
PANEL_CHARS = 60
PIXELS = 96  # CSS pixels per inch
# the legend's width: about what the window has beside the text panel in a notebook's output (a picture, it
# cannot wrap: wider, it ran past the window's edge)
LEGEND_PX = 480
PANEL_PX = 13  # the text panel's font size


def frame_text(frames: Frames, i: int, check=None) -> str:
    """Frame ``i`` as plain text: the frames' own, with the check's verdict under its first line."""
    text = frames.text(i)
    if check is None:
        return text
    line = _verdict(check, frames.walk[i].node)
    if not line:
        return text
    head, _, rest = text.partition("\n")
    return f"{head}\n{line}\n{rest}"


def panel_lines(text: str) -> int:
    """How many lines ``text`` takes in the text panel, its lines wrapped at its width between words (a
    word longer than a line anywhere), a wide character (Japanese, Chinese) taking two columns."""
    return sum(_wrapped(line) for line in text.split("\n"))


def _wrapped(line: str) -> int:
    lines, used = 1, 0
    for word in re.findall(r"[^ ]*(?: +|$)", line):
        width, bare = _columns(word), _columns(word.rstrip(" "))
        if used and used + bare > PANEL_CHARS:  # the word goes to the next line, its spaces at the end
            lines, used = lines + 1, 0
        lines += (used + bare - 1) // PANEL_CHARS if bare else 0  # a word longer than a line, broken
        used = (used + width) % PANEL_CHARS if used + bare > PANEL_CHARS else used + width
    return lines


def _columns(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def frame_html(root, frames: Frames, i: int, *, lines: int, check=None, drawn: bool = True) -> str:
    """Frame ``i``: its text (always ``lines`` lines tall, the tallest frame's, and of a fixed width) with its
    picture of a value under it, beside the drawing's window and the drawing's legend, so neither the text, the
    window nor the controls above them move from frame to frame."""
    drawing = _drawing(root, frames, i, lines, check) if drawn else ""
    height = f"{lines * 1.45 + 0.9:.2f}em"
    return (
        f'<div class="tl-frame" data-step="{i}"><div class="tl-frame-body">'
        '<div class="tl-frame-side" style="flex:0 0 auto;max-width:100%;display:flex;flex-direction:column;gap:6px">'
        f'<pre class="tl-frame-text" style="{INLINE["tl-frame-text"]};min-height:{height}">'
        f"{html.escape(frame_text(frames, i, check))}</pre>{pictures(frames, i)}</div>"
        f'<div class="tl-frame-drawing">{drawing}</div></div></div>'
    )


def _drawing(root, frames: Frames, i: int, lines: int, check=None) -> str:
    """The tape drawn by the display layer for frame ``i``: on a large tape the neighbourhood of the
    frame's node, and a legend with every state, so frames differ only in what changed. It is a picture
    (an ``<img>`` of the SVG) in a window of a fixed height, placed so that the current node's box is at
    the window's centre (or the drawing's edge at the window's), by the stepper's style sheet; the
    picture carries its size and the box's place (``--w``, ``--h``, ``--x``, ``--y``, in pixels at its
    own size) and the box (``data-current``: left, top, width, height).

    The first frame drawn fixes the direction of the layout (the one that shows more of it in the window)
    and, on a large tape, the window's height: as tall as its drawing, but at least as tall as the text
    panel (``lines`` lines) beside it and at most ``VIEW``'s height."""
    step = frames.walk[i]
    options = {} if check is None else {"check": check}
    large = frames.numbered is not None and len(frames.numbered[0]) > MAX_NODES
    if large:
        options["focus"] = (step.node, frames.users())
    fold = _folded(root, frames, step.node)
    if fold is not None:
        options["fold"] = fold
    svg, anchor = framed_svg(
        root,
        labels=frames.labels,
        highlight=step.node,
        states=frames.states(i),
        grads=frames.sensitivities(i),
        numbered=None if frames.numbered is None else (frames.numbered, frames.names),
        max_nodes=MAX_NODES,
        all_states=True,
        fit=(VIEW[0] / ZOOM / PIXELS, VIEW[1] / ZOOM / PIXELS),
        direction="auto" if frames.window is None else frames.window["direction"],
        wrap=None if frames.window is None else frames.window["wrap"],
        keyed=False,
        **options,
    )
    width, height = (round(v * PIXELS, 1) for v in anchor["size"])
    left, top, w, h = (round(v * PIXELS, 1) for v in anchor.get("box", (0, 0, 0, 0)))
    if frames.window is None:
        panel = (lines * 1.45 + 0.9) * PANEL_PX + 2
        frames.window = {
            "direction": anchor["direction"],
            "wrap": anchor["wrap"],
            "height": round(min(VIEW[1], max(panel, height * ZOOM))),
        }
    # a small tape is drawn whole on every frame: its window is as tall as the drawing (at most VIEW's); a large
    # one, or one whose blocks open and close as the walk goes through them, keeps the first frame's window
    fixed = large or fold is not None
    view = f"{frames.window['height']}px" if fixed else f"min({VIEW[1]}px, calc({height}px * var(--tl-zoom, {ZOOM})))"
    place = f"--w:{width}px;--h:{height}px;--x:{left + w / 2:.1f}px;--y:{top + h / 2:.1f}px"
    key = legend_svg(anchor["legend"], LEGEND_PX / PIXELS)
    key_alt = html.escape(_("<the drawing's legend>"))
    key_size = [round(float(v) * 4 / 3) for v in re.search(r'width="([\d.]+)pt" height="([\d.]+)pt"', key).groups()]
    return (
        f'<div class="tl-frame-view" style="--tl-view-h:{view}">{PICTURE_CSS}'
        f'<img class="tl-picture" src="{svg_source(svg)}" width="{round(width)}" '
        f'height="{round(height)}" alt="{html.escape(_("<the tape drawn>"))}" data-current="{left} {top} {w} {h}" '
        f'style="{place};max-width:100%;height:auto"></div>'
        # the legend, under the window rather than under a drawing it pans over: always in sight, at its size
        f'<img class="tl-frame-legend tl-picture" src="{svg_source(key)}" width="{key_size[0]}" '
        f'height="{key_size[1]}" alt="{key_alt}" style="display:block;max-width:none;margin-top:4px">'
    )


def check_report(check):
    from ...checks.tape import TapeCheck

    if check is not None and not isinstance(check, TapeCheck):
        raise TypeError(f"BackpropStepper: check must be the report of tl.check_tape(y), not {type(check).__name__}")
    return check


def _verdict(check, node) -> str:
    """The check's verdict on the rule of the frame's node, as one line of the text panel ("" for a leaf)."""
    entries = check.entries_of(node)
    verdict = check.verdict(node)
    if verdict is None:
        return ""
    if verdict == "wrong":
        bad = [e for e in entries if e.bad]
        parts = []
        for e in bad:
            if e.reverse is None:
                parts.append(_("argument {n}: {note}").format(n=e.argument + 1, note=e.note))
            else:
                parts.append(
                    _("argument {n}: reverse {reverse}, numeric {numeric}, rel. error {error}").format(
                        n=e.argument + 1,
                        reverse=number(e.reverse, compact=True),
                        numeric=number(e.numeric, compact=True),
                        error=f"{e.error:.2e}",
                    )
                )
        return _("check_tape: ✗ WRONG: the rule of {op} disagrees with finite differences ({parts})").format(
            op=node.f.name, parts="; ".join(parts)
        )
    if verdict == "undetermined":
        return _("check_tape: ? undetermined: {note}").format(
            note=next(e.note for e in entries if e.status == "undetermined")
        )
    if verdict == "skipped":
        return _("check_tape: – not checked: {note}").format(
            note=next(e.note for e in entries if e.status == "skipped")
        )
    return _("check_tape: ✓ the rule of {op} agrees with finite differences").format(op=node.f.name)


def _folded(root, frames: Frames, node):
    """The tape's ``tl.scope`` blocks folded as the drawing folds them, but those ``node`` is in opened: the
    first frame shows a model as its layers, and a step inside a layer opens that layer (the others stay one
    box each). ``None`` when the tape has no blocks."""
    if frames.fold is False:
        from ..common.fold import folding

        index, _uses, below = frames.numbered if frames.numbered is not None else (None, None, None)
        frames.fold = None if index is None else folding(root, True, index, below, "BackpropStepper")
    if frames.fold is not None:
        frames.fold.open_around(node)
    return frames.fold


def framed_svg(y, **options) -> tuple[str, dict]:
    """The drawing of ``plot_tape(y, **options)`` as SVG text, and where it and its highlighted box are."""
    from ..drawing.figure import framed_svg as framed

    return framed(y, **options)


def legend_svg(entries: tuple, width: float) -> str:
    """The drawing's legend alone, as SVG text."""
    from ..drawing.figure import legend_svg as alone

    return alone(entries, width)
