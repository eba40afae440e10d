"""One stepper frame as HTML: the frame's text from ``_frames`` (with ``tl.check_tape``'s verdict on its
node, when checked) over the tape drawn with the frame's states, on a large tape only the node's
neighbourhood."""

from __future__ import annotations

import html

from ..presentation.text import number
from ._frames import Frames
from ._i18n import _
from ._inline import INLINE
from ._stepvalues import pictures

__all__ = ["MAX_NODES", "check_report", "frame_html", "frame_text"]

MAX_NODES = 20  # boxes in one frame's drawing; a larger tape shows the current node's neighbourhood, readably


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


def frame_html(root, frames: Frames, i: int, *, lines: int, check=None, drawn: bool = True) -> str:
    """Frame ``i``: its text right under the controls (always ``lines`` lines tall, the tallest frame's),
    then the drawing, so neither the text nor the controls move from frame to frame."""
    drawing = _drawing(root, frames, i, check) if drawn else ""
    height = f"{lines * 1.45 + 0.9:.2f}em"
    return (
        f'<div class="tl-frame" data-step="{i}"><div class="tl-frame-body">'
        f'<pre class="tl-frame-text" style="{INLINE["tl-frame-text"]};min-height:{height}">'
        f"{html.escape(frame_text(frames, i, check))}</pre>{pictures(frames, i)}"
        f'<div class="tl-frame-drawing">{drawing}</div></div></div>'
    )


def _drawing(root, frames: Frames, i: int, check=None) -> str:
    """The tape drawn by the display layer for frame ``i``, as a picture (``svg_markup``): on a large tape the
    neighbourhood of the frame's node, and a legend with every state, so frames differ only in what
    changed."""
    step = frames.walk[i]
    options = {} if check is None else {"check": check}
    if frames.numbered is not None and len(frames.numbered[0]) > MAX_NODES:
        options["focus"] = (step.node, frames.users())
    return svg_markup(
        root,
        labels=frames.labels,
        highlight=step.node,
        states=frames.states(i),
        grads=frames.sensitivities(i),
        numbered=None if frames.numbered is None else (frames.numbered, frames.names),
        max_nodes=MAX_NODES,
        all_states=True,
        **options,
    )


def check_report(check):
    from ..checks.tape import TapeCheck

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


def svg_markup(y, **options) -> str:
    """The drawing of ``plot_tape(y, **options)`` as a picture to sit inside HTML (an ``<img>`` of the SVG)."""
    from .drawing import svg_markup as markup

    return markup(y, **options)
