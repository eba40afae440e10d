"""The stepper widget: the frames of the engine's walk (``backprop_steps``) shown one at a time, with
controls that work in a live kernel and, for the frames drawn up front, on a static page without one."""

from __future__ import annotations

import gc
import html
import itertools

import ipywidgets as widgets
import traitlets

from ...core.tracked import Tracked
from ...core.walk import steps_for
from ..common.i18n import _
from ..common.tape import label_map
from .frame_html import PANEL_CHARS, ZOOM, check_report, frame_html, frame_text, panel_lines
from .frames import Frames
from .static import static_html

__all__ = ["BackpropStepper"]

_STYLE = """<style>
:is(.tl-stepper, .tl-static-stepper) { --tl-zoom: {zoom}; }
:is(.tl-stepper, .tl-static-stepper).tl-zoom-2 { --tl-zoom: 1.4; }
:is(.tl-stepper, .tl-static-stepper).tl-zoom-3 { --tl-zoom: 1.8; }
:is(.tl-stepper, .tl-static-stepper), :is(.tl-stepper, .tl-static-stepper) .tl-frame {
  font-family: var(--jp-content-font-family, sans-serif); }
/* the text panel (of a fixed width) beside the drawing's window; under it where the output is narrow */
:is(.tl-stepper, .tl-static-stepper) .tl-frame-body { display: flex; flex-flow: row wrap; gap: 8px;
  align-items: flex-start; }
:is(.tl-stepper, .tl-static-stepper) .tl-frame-text { margin: 0; padding: 6px 8px; font-size: 13px; line-height: 1.45;
  background: var(--jp-layout-color2, var(--color-background-secondary, light-dark(#f5f5f5, #1e2227)));
  color: var(--jp-content-font-color1, var(--color-foreground-primary, light-dark(#111, #e6edf3)));
  border-radius: 4px; white-space: pre-wrap; word-break: normal; overflow-wrap: anywhere; box-sizing: border-box;
  flex: 0 0 auto; width: calc({chars}ch + 18px); max-width: 100%; }
:is(.tl-stepper, .tl-static-stepper) .tl-frame-drawing { flex: 1 1 320px; min-width: 0; }
/* the drawing at its size times --tl-zoom, in a window that keeps the current node's box at its centre */
:is(.tl-stepper, .tl-static-stepper) .tl-frame-view { position: relative; overflow: hidden;
  height: var(--tl-view-h); border-radius: 4px; }
:is(.tl-stepper, .tl-static-stepper) .tl-frame-view > img.tl-picture { position: absolute;
  max-width: none !important; min-width: 0 !important;
  width: calc(var(--w) * var(--tl-zoom)) !important; height: calc(var(--h) * var(--tl-zoom)) !important;
  left: min(0px, max(calc(100% - var(--w) * var(--tl-zoom)), calc(50% - var(--x) * var(--tl-zoom))));
  top: min(0px, max(calc(100% - var(--h) * var(--tl-zoom)), calc(50% - var(--y) * var(--tl-zoom)))); }
/* the frames take the output's whole width (ipywidgets' HTML and Stack shrink to their content) */
.tl-stepper .tl-frames, .tl-stepper .tl-frames > .widget-html, .tl-stepper .tl-frames .widget-html-content {
  width: 100%; }
/* the controls stay in sight above a stepper taller than the page, and wrap in a narrow one */
.tl-stepper .tl-controls { position: sticky; top: 0; z-index: 3; flex-wrap: wrap; gap: 2px 4px;
  background: var(--jp-layout-color0, var(--color-background-primary, #fff)); }
.tl-stepper .tl-controls .widget-button, .tl-stepper .tl-controls .jupyter-button { width: auto;
  min-width: 2.6em; padding: 0 10px; }
.tl-stepper .tl-controls .widget-slider { width: 250px; flex: 0 0 250px; }
.tl-stepper .tl-controls .widget-toggle-buttons .widget-toggle-button { width: auto; padding: 0 8px; }
:is(.tl-stepper, .tl-static-stepper) .tl-message { color: var(--jp-warn-color0, #a15c00) !important;
  line-height: 1.4; }
:is(.tl-stepper, .tl-static-stepper) .tl-static-note { display: none; font-size: 12px;
  color: var(--jp-ui-font-color2, var(--color-foreground-secondary, #555)); }
/* a page rendered by the html-manager (nbconvert, the docs) has no kernel: its buttons could not answer */
.widget-subarea .tl-stepper .tl-needs-kernel { display: none !important; }
.widget-subarea .tl-stepper .tl-static-note { display: block; }
</style>
<div class="tl-static-note">{note}</div>"""


_STYLE = _STYLE.replace("{chars}", str(PANEL_CHARS)).replace("{zoom}", str(ZOOM))
_STYLE_ONLY = _STYLE[: _STYLE.index("</style>") + len("</style>")]
_LIVE = itertools.count(1)  # steppers made by this process, for the class that ties a widget to its HTML copy


class BackpropStepper(widgets.VBox):
    """Step through back-propagation from ``y`` as the engine does it, one frame per step of
    ``tl.backprop_steps(y, Δ)``.

    Each frame draws the tape with the current node highlighted and finished and pending nodes told
    apart, and says what sensitivity arrived (the contributions added up when a value is used more
    than once), what the pullback sent to each argument (the chain-rule product written out for
    scalars) and the leaves' grads so far. Use the buttons (next, previous, over block, reset), the play
    button with its speed, or the slider (its arrow keys step too); code and tests use ``.index``,
    ``.steps`` (plain data) and ``.text``. A node recorded in a block (``tl.scope``) says so in its
    frame, and ``step_over()`` (*over block*) goes past the rest of the block at once.

    The frame's text panel keeps its width and height, and the drawing sits beside it in a window of a
    fixed size placed on the current node's box, shown at 1.1 times its size (the zoom makes it larger),
    with its legend under the window, so nothing moves from frame to frame and the current node stays in
    sight under the controls.

    A walk of at most ``static_frames`` steps has all its frames drawn up front and switched in the
    browser, so the slider and play also work on a static page (nbconvert's HTML, the docs); in a
    longer walk each frame is drawn by the kernel when it is reached. Walks longer than ``max_steps``
    are cut there, with a message, to protect the browser. ``labels`` maps tracked values to the
    names to show. ``check``, the report of ``tl.check_tape(y)``, marks the nodes whose rule is wrong
    in the drawing and gives each frame's node its verdict in the text (and in ``steps``, as ``check``).

    >>> import trackerlab as tl
    >>> a, b = tl.param(2.0), tl.param(3.0)
    >>> stepper = tl.BackpropStepper(a * b, labels={a: "a", b: "b"})
    >>> print(stepper.text.splitlines()[3])
      → a: Δ·b = 1.0 × 3.0 = 3.0
    """

    index = traitlets.Int(0, help="the frame shown, 0 to len(steps) - 1")

    def __init__(
        self,
        y,
        Δ=None,
        *,
        labels=None,
        check=None,
        max_steps: int = 300,
        static_frames: int = 20,
        interval: int = 800,
    ):
        for name, value, least, most in (
            ("max_steps", max_steps, 1, None),
            ("static_frames", static_frames, 0, None),
            ("interval", interval, 100, 3000),
        ):
            if not isinstance(value, int) or isinstance(value, bool) or value < least or (most and value > most):
                bounds = f"≥ {least}" if most is None else f"from {least} to {most}"
                raise ValueError(f"BackpropStepper: {name} must be an integer {bounds} (got {value!r})")
        self._root = y
        self._check = check_report(check)
        self._frames = Frames(steps_for("BackpropStepper", y, Δ), _label_map(labels), max_steps, root=_node(y))
        if self._check is not None:
            self._frames.checks = [self._check.verdict(step.node) for step in self._frames.walk]
        self._drawn: set[int] = set()
        self._interval = interval
        count = len(self._frames)
        # every frame's text panel as tall as the tallest (its lines wrapped at its width), so nothing moves
        self._lines = max(panel_lines(self._text(i)) for i in range(count))
        last = count - 1

        self.previous_button = widgets.Button(description=_("◀ previous"), tooltip=_("previous step"), disabled=True)
        self.next_button = widgets.Button(description=_("next ▶"), tooltip=_("next step"), disabled=count == 1)
        self.over_button = widgets.Button(
            description=_("over block ⤼"),
            tooltip=_("skip the rest of the current block (tl.scope)"),
            disabled=self._frames.over(0) is None,
        )
        self.reset_button = widgets.Button(description=_("⟲ reset"), tooltip=_("back to the first step"))
        self.zoom = widgets.ToggleButtons(
            options=[("A", 1), ("A+", 2), ("A++", 3)],
            value=1,
            tooltips=[_("the drawing's text at its size"), _("the drawing larger"), _("the drawing larger still")],
        )
        self.zoom.observe(self._zoom, names="value")
        for button in (self.previous_button, self.next_button, self.over_button, self.reset_button, self.zoom):
            button.add_class("tl-needs-kernel")
        self.play = widgets.Play(value=0, min=0, max=last, step=1, interval=interval, description=_("play"))
        self.speed = widgets.IntSlider(
            value=interval,
            min=100,
            max=3000,
            step=100,
            description=_("ms/step"),
            continuous_update=True,
            style={"description_width": "initial"},
        )
        self.slider = widgets.IntSlider(
            value=0, min=0, max=last, description=_("step"), readout=False, continuous_update=True
        )
        self.slider.tooltip = _("← → step back and forth")
        self.slider.add_class("tl-step-slider")
        self.frame_views = [widgets.HTML() for _ in range(count)]
        self.stack = widgets.Stack(self.frame_views, selected_index=0)
        self.stack.add_class("tl-frames")
        # Linked in the browser, so that the slider and play step through the frames without a kernel.
        self.links = [
            widgets.jslink((self.play, "value"), (self.slider, "value")),
            widgets.jslink((self.speed, "value"), (self.play, "interval")),
            widgets.jslink((self.slider, "value"), (self.stack, "selected_index")),
        ]
        traitlets.link((self, "index"), (self.slider, "value"))

        self.previous_button.on_click(lambda _: self.previous())
        self.next_button.on_click(lambda _: self.next())
        self.over_button.on_click(lambda _: self.step_over())
        self.reset_button.on_click(lambda _: self.reset())
        self.observe(self._show, names="index")

        notes = []
        if self._frames.truncated:
            notes.append(
                _(
                    "BackpropStepper: the walk has more than {count} steps; showing the first {count} "
                    "(pass max_steps= to show more; thousands of frames slow the browser down)."
                ).format(count=max_steps)
            )
        if self._frames.lazy:
            notes.append(
                _(
                    "The tape holds lazy dask arrays: each frame shows what the walk would compute (shapes, "
                    "dtypes and chunks), and nothing is computed here. tl.back_(y) computes the gradients of "
                    "in-memory parameters in one dask.compute; the gradient of a dask parameter stays lazy until you "
                    "compute it."
                )
            )
        if count > static_frames:
            notes.append(
                _(
                    "{count} steps (more than static_frames={static}): each frame is drawn by the kernel "
                    "when you reach it, so a static copy of this page shows only the frames already seen."
                ).format(count=count, static=static_frames)
            )
        self.message = widgets.HTML("".join(f'<div class="tl-message">{html.escape(n)}</div>' for n in notes))
        for i in range(count if count <= static_frames else 1):
            self._draw(i)
        controls = widgets.HBox(
            [
                self.previous_button,
                self.next_button,
                self.over_button,
                self.reset_button,
                self.play,
                self.speed,
                self.zoom,
            ]
        )
        controls.add_class("tl-controls")
        note = _("No kernel here: the slider (its arrow keys too) and play step through the frames.")
        self.style_view = widgets.HTML(_STYLE.replace("{note}", html.escape(note)))
        super().__init__([self.style_view, controls, self.slider, self.message, self.stack])
        self.add_class("tl-stepper")
        self._live = f"tl-live-{next(_LIVE)}"
        self.add_class(self._live)

    # ------------------------------------------------------------------------------------------------

    @property
    def steps(self) -> list[dict]:
        """The frames as plain data, one dict per step: ``index``, ``node`` (its name), ``op``,
        ``isleaf``, ``args``, ``delta``, ``contributions`` (what arrived, from whom), ``sent`` (per
        argument: ``to``, ``value``, ``formula``, ``product``), ``pending``, ``grads`` and ``done``. A lazy
        (dask) value is given by its description (``"lazy 8×5 float64, chunks 4×5 · 2 blocks"``), not computed."""
        self._closed_check("steps")
        return self._frames.steps

    @property
    def text(self) -> str:
        """The current frame as plain text (deterministic: a checked notebook cell can print it)."""
        self._closed_check("text")
        return self._text(self.index)

    def _text(self, i: int) -> str:
        return frame_text(self._frames, i, self._check)

    @property
    def truncated(self) -> bool:
        """Whether the walk had more than ``max_steps`` steps and the frames stop early."""
        return self._frames.truncated

    def __len__(self) -> int:
        return len(self.frame_views)

    def __repr__(self) -> str:
        if self._frames is None:
            return f"BackpropStepper({len(self)} steps, closed)"
        count = f"{len(self)}{'+' if self.truncated else ''} steps"
        first, now = self.steps[0]["node"], self.steps[self.index]["node"]
        return f"BackpropStepper({count} from {first}, at step {self.index + 1}: {now})"

    def next(self) -> None:
        """Show the next step (nothing after the last)."""
        self.index = min(self.index + 1, len(self) - 1)

    def previous(self) -> None:
        """Show the previous step (nothing before the first)."""
        self.index = max(self.index - 1, 0)

    def step_over(self) -> None:
        """Show the step after the last one of the block (``tl.scope``) that the current step's node was
        recorded in: the rest of the block stepped over at once, with the leaves the walk reaches in
        between (to the last step when the block goes on to the end; nothing outside every block)."""
        after = self._frames.over(self.index)
        if after is not None:
            self.index = after

    def reset(self) -> None:
        """Stop playing and go back to the first step."""
        self.play.playing = False
        self.index = 0

    @traitlets.validate("index")
    def _check_index(self, proposal):
        value = proposal["value"]
        if not 0 <= value < len(self):
            raise traitlets.TraitError(
                f"BackpropStepper.index: {value} is out of range; there are {len(self)} steps (0 to {len(self) - 1})"
            )
        return value

    def _show(self, change) -> None:
        i = change["new"]
        self._draw(i)
        self.stack.selected_index = i
        self.previous_button.disabled = i == 0
        self.next_button.disabled = i == len(self) - 1
        self.over_button.disabled = self._frames.over(i) is None

    def _zoom(self, change) -> None:
        for level in (2, 3):
            (self.add_class if change["new"] == level else self.remove_class)(f"tl-zoom-{level}")

    def _draw(self, i: int) -> None:
        if i in self._drawn or self._frames is None:
            return
        self._drawn.add(i)
        # A drawing leaves tens of thousands of objects in cycles (matplotlib's figure). Collected as soon
        # as it is done, while they are all still young, they never reach the oldest generation, whose
        # collection visits every node of the tape (half a second on a 10^5-node tape).
        enabled = gc.isenabled()
        gc.disable()
        try:
            frame = self._frame_html(i)
        finally:
            if enabled:
                gc.enable()
        gc.collect(0)
        self.frame_views[i].value = frame

    def _frame_html(self, i: int, drawn: bool = True) -> str:
        return frame_html(self._root, self._frames, i, lines=self._lines, check=self._check, drawn=drawn)

    # ------------------------------------------------------------------------------------------------
    # Outside a live kernel

    def _ipython_display_(self) -> None:
        """Two outputs: the widget's view, for live front ends (JupyterLab, Notebook 7, VS Code), and the
        stepper as self-contained HTML (``to_html()``) for every page without a kernel. Each gives way to
        the other where it is the weaker: the HTML copy hides itself beside a widget that a kernel drives,
        and a widget rendered by the html-manager (a saved widget state exported by nbconvert, the docs)
        hides itself beside the copy, which steps with more controls and loads nothing. A page that cannot
        load the widget manager (nbconvert's export opened offline) shows the copy."""
        from IPython.display import display

        display(super()._repr_mimebundle_() or {"text/plain": repr(self)}, raw=True)
        if self._frames is not None:
            display({"text/html": self.to_html()}, raw=True)

    def _repr_mimebundle_(self, **kwargs):
        """The widget's view and, beside it, the stepper as self-contained HTML (``to_html()``) for
        renderers without the widget manager. (IPython displays the two as separate outputs: see
        ``_ipython_display_``.)"""
        bundle = super()._repr_mimebundle_(**kwargs)
        if self._frames is not None:
            bundle["text/html"] = self.to_html()
        return bundle

    def to_html(self) -> str:
        """The stepper as one piece of HTML that steps without a kernel, a widget manager or a network:
        all frames with a few lines of inline script (first, previous, play, next and a slider). A page
        that runs no script shows the first and the last frame. A walk longer than ``static_frames``
        keeps the drawings of the frames already drawn and of the first and the last; the others carry
        their text."""
        self._closed_check("to_html")
        last = len(self) - 1
        self._draw(last)
        frames = [
            self.frame_views[i].value if i in self._drawn else self._frame_html(i, drawn=False) for i in range(last + 1)
        ]
        return static_html(
            frames,
            interval=self.speed.value,
            truncated=self.truncated,
            extra=_STYLE_ONLY + self.message.value,
            live=self._live,
            over=[self._frames.over(i) for i in range(last + 1)],
        )

    def close(self) -> None:
        """Close the widget and everything it made (its layouts and styles too, which ipywidgets leaves
        open), and let go of the tape: a closed stepper holds no array of the walk (and nothing keeps an
        unreferenced one alive). ``with tl.BackpropStepper(y) as stepper:`` closes it at the block's end.

        An open stepper is kept by ipywidgets (its registry and the kernel's comm manager reach every open
        widget, so that a front end can talk to it) even when no variable names it any more: close the
        steppers you are done with, or make them in a ``with`` block."""
        if not hasattr(self, "links"):  # a stepper whose construction failed: only the box itself is open
            widgets_made = [self]
        else:
            self.play.playing = False
            for link in self.links:
                link.close()
            for button in (self.previous_button, self.next_button, self.over_button, self.reset_button):
                button._click_handlers.callbacks.clear()
            widgets_made = [
                *self.frame_views,
                self.stack,
                self.style_view,
                self.message,
                self.slider,
                self.play,
                self.speed,
                self.previous_button,
                self.next_button,
                self.over_button,
                self.reset_button,
                self.zoom,
                *self.children,
                self,
            ]
            self.unobserve_all()
            self._frames = self._root = self._check = None
            self._drawn = set()
        for widget in widgets_made:
            parts = [getattr(widget, "layout", None), getattr(widget, "style", None)]
            if widget is self:
                super().close()
            else:
                widget.close()
            for part in parts:
                if isinstance(part, widgets.Widget):
                    part.close()

    def __enter__(self) -> BackpropStepper:
        return self

    def __exit__(self, *exc) -> None:
        """``with tl.BackpropStepper(y) as stepper:`` closes the stepper at the end of the block."""
        self.close()

    def _closed_check(self, what: str) -> None:
        if self._frames is None:
            raise RuntimeError(f"BackpropStepper.{what}: the stepper is closed (it no longer holds the tape)")


def _node(y):
    return y if isinstance(y, Tracked) else getattr(y, "tracker", None)


def _label_map(labels) -> dict:
    return label_map(labels, "BackpropStepper")
