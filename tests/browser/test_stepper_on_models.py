"""The stepper's self-contained copy on a real model and a long chain, in Chromium at 1280×800, light and
dark: at each of the first steps the current node's box, the drawing's legend and the next button are in the
window without scrolling, a heat map's legend is whole, every text reads at 11 px or more, and the text panel
and the drawing keep their places."""

from __future__ import annotations

import inspect
import re
from urllib.parse import unquote

import numpy as np
import pytest

import trackerlab as tl
from trackerlab.notebook.stepper.frame_html import ZOOM

WINDOW = {"width": 1280, "height": 800}


def mlp():
    """784-256-10 at batch 64, tanh, softmax cross-entropy, its layers in blocks."""
    rng = np.random.default_rng(0)
    W1, b1 = tl.param(rng.normal(size=(256, 784)) * 0.05), tl.param(np.zeros(256))
    W2, b2 = tl.param(rng.normal(size=(10, 256)) * 0.05), tl.param(np.zeros(10))
    x, t = rng.normal(size=(784, 64)), np.eye(10)[:, rng.integers(0, 10, 64)]
    with tl.scope("layer 1"):
        h = tl.tanh(W1 @ x + b1[:, None])
    with tl.scope("layer 2"):
        out = W2 @ h + b2[:, None]
    return -tl.sum(t * tl.log_softmax(out, axis=0)) / 64, {W1: "W1", b1: "b1", W2: "W2", b2: "b2"}


def chain():
    """2,000 operations on a scalar."""
    x = tl.param(0.3)
    y = x
    for _ in range(1000):
        y = tl.sin(y) * 1.01
    return y, {x: "x"}


# The box of the current node in the page: the picture's place, scaled from its own size (data-current).
CURRENT_BOX = """(view) => {
  const img = view.querySelector("img.tl-picture"), r = img.getBoundingClientRect();
  const [x, y, w, h] = img.dataset.current.split(" ").map(Number), scale = r.width / Number(img.getAttribute("width"));
  const clip = view.getBoundingClientRect();
  return {left: r.left + x * scale, top: r.top + y * scale, right: r.left + (x + w) * scale,
          bottom: r.top + (y + h) * scale, clip: [clip.left, clip.top, clip.right, clip.bottom],
          scale: scale};
}"""


def smallest_drawing_text(page, view) -> float:
    """The smallest font size of the drawing's SVG, in pixels as the picture is shown."""
    source, shown = view.evaluate(
        "v => { const i = v.querySelector('img'); return [i.src, i.getBoundingClientRect().width]; }"
    )
    svg = unquote(source.split(",", 1)[1])
    width = float(re.search(r'viewBox="0 0 ([\d.]+) ', svg).group(1))
    return min(float(s) for s in re.findall(r"font-size: ([\d.]+)px", svg)) * shown / width


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("model", [mlp, chain], ids=["mlp", "chain"])
def test_the_current_node_and_the_controls_stay_in_the_window(browser, screenshots, model, scheme):
    y, labels = model()
    with tl.BackpropStepper(y, labels=labels) as stepper:
        for step in range(6):  # drawn by the kernel as a reader steps, kept in the copy
            stepper.index = step
        html = stepper.to_html()
    context = browser.new_context(viewport=WINDOW, color_scheme=scheme)
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.set_content(
            '<!doctype html><meta charset="utf-8"><meta name="color-scheme" content="light dark">'
            f'<body style="margin:8px;background:Canvas;color:CanvasText">{html}</body>'
        )
        stepper = page.locator(".tl-static-stepper")
        page.wait_for_function(
            "() => getComputedStyle(document.querySelector('.tl-static-stepper')).visibility === 'visible'"
        )
        stepper.evaluate("e => e.scrollIntoView()")  # the reader scrolls to the stepper once
        scrolled = page.evaluate("() => window.scrollY")
        next_button = stepper.get_by_role("button", name="next step")
        widths, places, heats = set(), set(), 0
        for step in range(5):
            page.wait_for_function(
                "(k) => document.querySelector('.tl-static-stepper .tl-frame-text').textContent.startsWith(k)",
                arg=f"step {step + 1} of ",
            )
            view = stepper.locator(".tl-frame-view")
            box = view.evaluate(CURRENT_BOX)
            left, top, right, bottom = box["clip"]
            assert 0 <= box["left"] and box["right"] <= WINDOW["width"], (step, box)
            assert 0 <= box["top"] and box["bottom"] <= WINDOW["height"], (step, box)
            assert left - 1 <= box["left"] and box["right"] <= right + 1, (step, box)  # not clipped by the window
            assert top - 1 <= box["top"] and box["bottom"] <= bottom + 1, (step, box)
            button = next_button.bounding_box()
            assert button["y"] >= 0 and button["y"] + button["height"] <= WINDOW["height"]
            assert box["scale"] == pytest.approx(ZOOM, abs=0.01)  # the drawing never shrinks below its text size
            # the drawing's legend, outside the window that pans: whole, in the browser window
            key = stepper.locator(".tl-frame-legend").bounding_box()
            assert key["height"] > 10 and 0 <= key["y"] and key["y"] + key["height"] <= WINDOW["height"], (step, key)
            assert key["x"] >= 0 and key["x"] + key["width"] <= WINDOW["width"], (step, key)
            assert key["y"] >= bottom - 1, (step, key, box)
            # a heat map's legend is whole: nothing of it cut by its panel or the page
            heat = stepper.evaluate(
                """e => { const l = e.querySelector('.tl-frame-values .tl-heat-legend'); if (!l) return null;
                     const p = l.closest('.tl-frame-values'), r = l.getBoundingClientRect(), q = p.getBoundingClientRect();
                     return {legend: [r.left, r.top, r.right, r.bottom], panel: [q.left, q.top, q.right, q.bottom],
                             cut: p.scrollHeight > p.clientHeight + 1 || p.scrollWidth > p.clientWidth + 1}; }"""
            )
            if heat is not None:
                heats += 1
                (l0, t0, r0, b0), (l1, t1, r1, b1) = heat["legend"], heat["panel"]
                assert not heat["cut"] and l1 <= l0 and r0 <= r1 + 1 and t1 <= t0 and b0 <= b1 + 1, (step, heat)
                assert b0 <= WINDOW["height"] and r0 <= left, (step, heat, box)  # beside the drawing, not under it
            places.add(round(left))
            assert smallest_drawing_text(page, view) >= 11
            sizes = page.evaluate(
                """() => [...document.querySelectorAll('.tl-static-stepper *')]
                       .filter(e => e.offsetParent && [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim()))
                       .map(e => parseFloat(getComputedStyle(e).fontSize))"""
            )
            assert sizes and min(sizes) >= 11, sizes
            widths.add(stepper.locator(".tl-frame-text").bounding_box()["width"])
            if step == 1:
                page.screenshot(path=str(screenshots / f"stepper-{model.__name__}-{scheme}.png"))
            next_button.click()
        assert len(widths) == 1, widths
        assert len(places) == 1, places  # the window stays where it is, with or without a heat map beside it
        assert heats >= (2 if model is mlp else 0)  # the MLP's Δ of 10×64 at steps 4 and 5
        assert page.evaluate("() => window.scrollY") == scrolled  # no scrolling needed
        # the zoom makes the drawing larger, still placed on the current box
        page.wait_for_function(
            "() => document.querySelector('.tl-static-stepper .tl-frame-text').textContent.startsWith('step 6 of ')"
        )
        stepper.get_by_role("button", name="zoom the drawing").click()
        assert stepper.locator(".tl-frame-view").evaluate(CURRENT_BOX)["scale"] == pytest.approx(1.4, abs=0.01)
        if model is mlp:  # step 6 is the first of layer 2; over it, its weight W2
            over = stepper.get_by_role("button", name="skip the rest of the current block (tl.scope)")
            over.click()
            page.wait_for_function(
                "() => document.querySelector('.tl-static-stepper .tl-frame-text').textContent"
                ".startsWith('step 9 of 16: W2 (a leaf)')"
            )
        assert not errors
    finally:
        context.close()


# ----------------------------------------------------------------------------------------------------
# The live widget in JupyterLab

# The notebook runs the same two models as the tests above: their functions' source, then their calls.
MODELS = "\n".join(
    [
        "import numpy as np",
        "import trackerlab as tl",
        inspect.getsource(mlp),
        inspect.getsource(chain),
        "loss, mlp_labels = mlp()",
        "y, chain_labels = chain()",
    ]
)


def lab_notebook():
    import nbformat
    from labkit import KERNELSPEC

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = KERNELSPEC
    nb.cells = [
        nbformat.v4.new_code_cell(source)
        for source in (
            MODELS,
            "tl.BackpropStepper(loss, labels=mlp_labels)",
            "tl.BackpropStepper(y, labels=chain_labels)",
        )
    ]
    return nb


def step_through(page, stepper, name: str, screenshots, shot: str | None = None) -> None:
    """Scroll ``stepper`` to the top once, then press next four times: at each of the five first frames
    the current box and the next button are in the window, the text at 11 px or more, the panel as wide."""
    stepper.evaluate("e => e.scrollIntoView()")
    next_button = stepper.get_by_role("button", name="next ▶")
    widths = set()
    for step in range(5):
        page.wait_for_function(
            "([e, k]) => [...e.querySelectorAll('.tl-frame-text')].some(t => t.offsetParent && t.textContent.startsWith(k))",
            arg=[stepper.element_handle(), f"step {step + 1} of "],
        )
        page.wait_for_function(
            "e => [...e.querySelectorAll('.tl-frame-view img')].some(i => i.offsetParent && i.complete)",
            arg=stepper.element_handle(),
        )
        view = stepper.locator(".tl-frame-view:visible")
        box = view.evaluate(CURRENT_BOX)
        left, top, right, bottom = box["clip"]
        assert 0 <= box["left"] and box["right"] <= WINDOW["width"], (name, step, box)
        assert 0 <= box["top"] and box["bottom"] <= WINDOW["height"], (name, step, box)
        assert left - 1 <= box["left"] and box["right"] <= right + 1 and top - 1 <= box["top"], (name, step, box)
        assert box["bottom"] <= bottom + 1, (name, step, box)
        button = next_button.bounding_box()
        assert 0 <= button["y"] and button["y"] + button["height"] <= WINDOW["height"], (name, step, button)
        assert smallest_drawing_text(page, view) >= 11
        sizes = stepper.evaluate(
            """e => [...e.querySelectorAll('*')]
                 .filter(n => n.offsetParent && [...n.childNodes].some(c => c.nodeType === 3 && c.textContent.trim()))
                 .map(n => parseFloat(getComputedStyle(n).fontSize))"""
        )
        assert min(sizes) >= 11, (name, sizes)
        widths.add(stepper.locator(".tl-frame-text:visible").bounding_box()["width"])
        if step == 1 and shot:
            page.screenshot(path=str(screenshots / shot))
        if step < 4:
            next_button.click()
    assert len(widths) == 1, (name, widths)


def test_the_live_stepper_keeps_the_current_node_and_its_controls_in_the_window(page, lab, screenshots):
    from labkit import write_notebook
    from test_lab import open_and_run_all

    page.set_viewport_size(WINDOW)
    write_notebook(lab_notebook(), lab.root / "models.ipynb")
    open_and_run_all(page, lab, "models.ipynb")
    steppers = page.locator(".tl-stepper")
    steppers.nth(1).wait_for()
    step_through(page, steppers.nth(0), "mlp", screenshots, "lab-stepper-mlp.png")
    step_through(page, steppers.nth(1), "chain", screenshots, "lab-stepper-chain.png")

    page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})")
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'")
    page.wait_for_selector("#jupyterlab-splash", state="detached")
    steppers.nth(0).get_by_role("button", name="⟲ reset").click()
    step_through(page, steppers.nth(0), "mlp, dark", screenshots, "lab-stepper-mlp-dark.png")
    page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Light'})")
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'true'")

    # in a 900 px window every control shows its whole label, and the speed slider keeps its length
    page.set_viewport_size({"width": 900, "height": 800})
    controls = steppers.nth(0).locator(".tl-controls")
    controls.evaluate("e => e.scrollIntoView()")
    page.wait_for_timeout(300)
    cut = controls.evaluate(
        """e => [...e.querySelectorAll('button')].filter(b => b.offsetParent && b.scrollWidth > b.clientWidth + 1)
                  .map(b => b.textContent)"""
    )
    assert not cut, cut
    for part in controls.locator("button:visible, .widget-slider:visible").all():
        box = part.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 900, box
    track = steppers.nth(0).locator(".tl-controls .widget-slider .slider-container").bounding_box()
    assert track["width"] >= 100, track
    page.screenshot(path=str(screenshots / "lab-stepper-900.png"))
    assert not page.errors
