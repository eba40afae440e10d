"""The stepper as one self-contained piece of HTML: its frames, inline SVG icons and a few lines of inline
script, no fonts, no CDN, no widget manager. Any page that shows HTML and runs scripts (nbconvert's
export opened from disk, a docs page, a viewer without ipywidgets) steps it; a page that runs no script
(GitHub, an untrusted notebook) shows the first and the last frame, one under the other, their drawings
pictures and their text laid out by inline styles."""

from __future__ import annotations

import hashlib
import html
import itertools
import json

from ..common.i18n import _
from ..common.inline import styled

__all__ = ["static_html"]

# Icons drawn inline, so they never depend on a font that a file:// page cannot load.
_ICON = '<svg viewBox="0 0 16 16" width="14" height="14" aria-hidden="true"><path d="{}" fill="currentColor"/></svg>'
ICONS = {
    "first": _ICON.format("M3 3h2v10H3zM13 3v10L6 8z"),
    "previous": _ICON.format("M11 3v10L4 8z"),
    "next": _ICON.format("M5 3v10l7-5z"),
    "play": _ICON.format("M4 2v12l10-6z"),
    "pause": _ICON.format("M4 3h3v10H4zM9 3h3v10H9z"),
    "over": _ICON.format("M2 10a6 6 0 0 1 11-3.3V4h2v6h-6V8h2.6A4 4 0 0 0 4 10z"),
    "zoom": _ICON.format(
        "M6.5 1a5.5 5.5 0 0 1 4.4 8.8l4 4-1.4 1.4-4-4A5.5 5.5 0 1 1 6.5 1zm0 2a3.5 3.5 0 1 0 0 7 "
        "3.5 3.5 0 0 0 0-7zM6 4.5h1v1.5h1.5v1H7v1.5H6V7H4.5V6H6z"
    ),
}

_STYLE = """<style>
#{id} .tl-static-controls {{ display: flex; gap: 6px; align-items: center; margin: 4px 0 8px; flex-wrap: wrap;
  position: sticky; top: 0; z-index: 3; padding: 2px 0;
  background: var(--jp-layout-color0, var(--color-background-primary, Canvas)); }}
#{id} .tl-static-controls button:disabled {{ opacity: .45; cursor: default; }}
#{id} .tl-static-controls button {{ display: inline-flex; align-items: center; justify-content: center;
  min-width: 30px; height: 26px; padding: 0 6px; cursor: pointer; border-radius: 3px;
  border: 1px solid var(--jp-border-color1, #999); background: var(--jp-layout-color1, transparent);
  color: var(--jp-ui-font-color1, inherit); }}
#{id} .tl-static-controls input[type=range] {{ flex: 1 1 200px; max-width: 420px; }}
#{id} .tl-static-where {{ font-size: 13px; min-width: 9em; font-variant-numeric: tabular-nums; }}
#{id} .tl-static-label {{ font-weight: bold; font-size: 13px; margin: 8px 0 2px; }}
#{id}.tl-stepping .tl-static-label {{ display: none; }}
</style>"""

# Where the same stepper is also shown as a live widget (the class ``live`` on the widget), only one of the
# two is seen. A widget rendered by the html-manager sits in a .widget-subarea: that page has no kernel, and
# this copy, with its buttons, gives way to nothing. A widget rendered anywhere else is talking to a kernel
# (JupyterLab, Notebook 7, VS Code): this copy gives way to it. The copy appears a moment late, so that a
# live widget rendering next to it replaces it before it is ever seen. In a Jupyter output area the widget's
# output just before this one, when it shows no widget (nbconvert's text stand-in, or a widget manager that
# could not load), is hidden too.
_LIVE_STYLE = """<style>
.widget-subarea .{live} {{ display: none !important; }}
body:has(.{live}:not(.widget-subarea *)) #{id} {{ display: none; }}
.jp-OutputArea-child:has(+ .jp-OutputArea-child #{id}):not(:has(.{live})) {{ display: none; }}
#{id} {{ animation: tl-static-appear 0.01s linear 0.4s both; }}
@keyframes tl-static-appear {{ from {{ visibility: hidden; max-height: 0; overflow: hidden; }}
  to {{ visibility: visible; max-height: none; overflow: visible; }} }}
</style>"""

# Reads the frames from the JSON block beside it, puts controls above the frame and shows one frame at a
# time. Written for any browser of the last decade; it touches nothing outside its own element.
_SCRIPT = """<script>
(function () {
  var root = document.getElementById(%(id)s);
  if (!root || root.getAttribute("data-ready")) return;
  root.setAttribute("data-ready", "1");
  var frames = JSON.parse(root.querySelector("script.tl-static-frames").textContent);
  var view = root.querySelector(".tl-static-view"), last = frames.length - 1, i = 0, timer = null;
  var icons = %(icons)s, words = %(words)s, bar = document.createElement("div");
  bar.className = "tl-static-controls";
  function button(what, title) {
    return '<button type="button" data-do="' + what + '" title="' + title + '" aria-label="' + title + '">' +
      icons[what] + '</button>';
  }
  var over = %(over)s, zoom = 1;
  bar.innerHTML = button("first", words.first) + button("previous", words.previous) + button("play", words.play) +
    button("next", words.next) + (over.some(function (k) { return k !== null; }) ? button("over", words.over) : "") +
    button("zoom", words.zoom) +
    '<input type="range" min="0" max="' + last + '" value="0" step="1" aria-label="' + words.step + '">' +
    '<span class="tl-static-where"></span>';
  root.insertBefore(bar, view);
  var slider = bar.querySelector("input"), where = bar.querySelector(".tl-static-where");
  var play = bar.querySelector('[data-do="play"]'), overButton = bar.querySelector('[data-do="over"]');
  function show(k) {
    i = Math.max(0, Math.min(last, k));
    view.innerHTML = frames[i];
    slider.value = i;
    if (overButton) overButton.disabled = over[i] === null;
    where.textContent = words.where.replace("{i}", i + 1).replace("{n}", frames.length) + words.more;
  }
  function stop() {
    if (timer !== null) { clearInterval(timer); timer = null; }
    play.innerHTML = icons.play; play.title = words.play; play.setAttribute("aria-label", words.play);
  }
  function start() {
    if (i >= last) show(0);
    play.innerHTML = icons.pause; play.title = words.pause; play.setAttribute("aria-label", words.pause);
    timer = setInterval(function () { if (i >= last) stop(); else show(i + 1); }, %(interval)d);
  }
  bar.addEventListener("click", function (event) {
    var button = event.target.closest("button");
    if (!button) return;
    var what = button.getAttribute("data-do");
    if (what === "play") { if (timer === null) start(); else stop(); return; }
    if (what === "zoom") {
      root.classList.remove("tl-zoom-" + zoom);
      zoom = zoom %% 3 + 1;
      if (zoom > 1) root.classList.add("tl-zoom-" + zoom);
      return;
    }
    stop();
    show(what === "first" ? 0 : what === "previous" ? i - 1 : what === "over" ? over[i] : i + 1);
  });
  slider.addEventListener("input", function () { stop(); show(+slider.value); });
  root.classList.add("tl-stepping");
  show(0);
})();
</script>"""


def _json_in_script(value) -> str:
    """JSON that can sit inside a ``<script>`` element: no ``</`` and no ``<!--`` in it."""
    return json.dumps(value).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


_COUNT = itertools.count(1)  # steppers made by this process


def static_html(
    frames: list[str],
    *,
    interval: int,
    truncated: bool = False,
    extra: str = "",
    live: str | None = None,
    over: list | None = None,
) -> str:
    """The frames (each a piece of HTML) stepped by an inline script; with no script, the first and the
    last frame. ``extra`` (the stepper's style and messages) goes first. ``live``, the class of the live
    widget that shows the same stepper, makes this copy give way to that widget wherever a kernel drives
    it, and the widget give way to this copy on a page without a kernel. ``over``: per frame, the frame
    that stepping over its block goes to (``None`` for none); with one, the controls have that button."""
    # the same id for the same frames in the same place of a run, so re-executed notebooks compare equal
    digest = hashlib.sha1("\0".join(frames).encode("utf-8"), usedforsecurity=False).hexdigest()[:8]
    ident = f"tl-stepper-{digest}-{next(_COUNT)}"
    last = len(frames) - 1
    shown = [f'<div class="tl-static-label">{html.escape(_("first step"))}</div>{frames[0]}']
    if last > 0:
        shown.append(f'<div class="tl-static-label">{html.escape(_("last step"))}</div>{frames[last]}')
    words = {
        "first": _("first step"),
        "previous": _("previous step"),
        "play": _("play"),
        "pause": _("pause"),
        "next": _("next step"),
        "over": _("skip the rest of the current block (tl.scope)"),
        "zoom": _("zoom the drawing"),
        "step": _("step"),
        "where": _("step {i} of {n}"),
        "more": _(" (the walk goes on: max_steps)") if truncated else "",
    }
    script = _SCRIPT % {
        "id": json.dumps(ident),
        "icons": _json_in_script(ICONS),
        "words": _json_in_script(words),
        "interval": interval,
        "over": _json_in_script(over if over is not None else [None] * len(frames)),
    }
    style = _STYLE.format(id=ident) + ("" if live is None else _LIVE_STYLE.format(id=ident, live=live))
    return (
        f'<div class="tl-static-stepper" id="{ident}">{style}{styled(extra)}'
        f'<div class="tl-static-view">{styled("".join(shown))}</div>'
        f'<script type="application/json" class="tl-static-frames">{_json_in_script(frames)}</script>'
        f"{script}</div>"
    )
