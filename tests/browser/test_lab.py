"""The stepper and ``%%track`` in a real JupyterLab, driven in headless Chromium."""

from __future__ import annotations

from urllib.parse import unquote

from labkit import stepper_notebook, track_notebook, write_notebook

KERNEL_IDLE = """(name) => {
    const widget = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    if (!widget || !widget.context || widget.context.path !== name) return false;
    const session = widget.sessionContext;
    const kernel = session && session.session && session.session.kernel;
    return !!kernel && session.isReady && kernel.status === "idle";
}"""


def open_and_run_all(page, lab, name: str):
    """Open a notebook, wait until its kernel is idle, run every cell, and wait until it is idle again."""
    page.goto(lab.url(f"lab/workspaces/{name.replace('.', '-')}/tree/{name}"))
    page.wait_for_function(KERNEL_IDLE, arg=name, polling=250)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_function(
        """() => { const prompts = [...document.querySelectorAll('.jp-Notebook .jp-Cell .jp-InputArea-prompt')];
                   return prompts.length > 0 && prompts.every(p => /\\[\\d+\\]/.test(p.textContent)); }""",
        polling=250,
    )
    page.wait_for_function(KERNEL_IDLE, arg=name, polling=250)


# Counts, every animation frame, the frames in which a stepper's self-contained copy was visible.
COPY_WATCH = """
window.tlCopyFrames = 0; window.tlCopySeen = 0;
(function watch() {
  window.tlCopyFrames += 1;
  for (const e of document.querySelectorAll(".tl-static-stepper")) {
    if (e.getBoundingClientRect().height > 0 && getComputedStyle(e).visibility === "visible") window.tlCopySeen += 1;
  }
  requestAnimationFrame(watch);
})();
"""


def frame_text(page) -> str:
    return page.locator(".tl-stepper .tl-frame-text:visible").inner_text()


def test_stepping_through_a_walk_in_jupyterlab(page, lab, screenshots):
    write_notebook(stepper_notebook(), lab.root / "stepper.ipynb")
    page.add_init_script(COPY_WATCH)
    open_and_run_all(page, lab, "stepper.ipynb")
    stepper = page.locator(".tl-stepper")
    stepper.wait_for()
    page.wait_for_timeout(1000)  # past the moment the copy would appear (see _static.py)
    assert page.evaluate("() => [window.tlCopyFrames, window.tlCopySeen]")[1] == 0  # never seen, not a flash
    assert frame_text(page).splitlines()[:2] == ["step 1 of 4: y = c + a", "Δ arrived: 1.0  (the seed)"]
    assert stepper.locator(".tl-frame-view img.tl-picture:visible").count() == 1

    next_button = stepper.get_by_role("button", name="next ▶")
    assert next_button.is_visible() and stepper.locator(".tl-static-note").is_hidden()
    # the self-contained copy in the output after the widget gives way to the live widget, taking no room
    copy = page.locator(".tl-static-stepper")
    assert copy.count() == 1 and copy.is_hidden() and copy.bounding_box() is None
    next_button.click()
    page.wait_for_function(
        "() => [...document.querySelectorAll('.tl-frame-text')].some(e => e.offsetParent && "
        "e.textContent.startsWith('step 2 of 4'))"
    )
    lines = frame_text(page).splitlines()
    assert lines[0] == "step 2 of 4: c = a * b"
    assert "  → a: Δ·b = 1.0 × 3.0 = 3.0  (a now holds 1.0 + 3.0 = 4.0)" in lines
    assert "  → b: Δ·a = 1.0 × 2.0 = 2.0" in lines
    stepper.scroll_into_view_if_needed()
    page.screenshot(path=str(screenshots / "lab-stepper-step2.png"))

    next_button.click()
    next_button.click()
    page.wait_for_function(
        "() => [...document.querySelectorAll('.tl-frame-text')].some(e => e.offsetParent && "
        "e.textContent.startsWith('step 4 of 4'))"
    )
    lines = frame_text(page).splitlines()
    assert lines[0] == "step 4 of 4: b (a leaf)"
    assert lines[-1] == "grads so far: a = 4.0, b = 2.0"
    from playwright.sync_api import expect  # here: without playwright the tests are skipped, not broken

    expect(next_button).to_be_disabled()  # its state comes in a message of its own: wait for it
    drawing = stepper.locator(".tl-frame-view img.tl-picture:visible")
    assert drawing.evaluate("i => i.complete && i.naturalWidth") > 0
    assert unquote(drawing.get_attribute("src")).count(">b = param<") == 1
    stepper.scroll_into_view_if_needed()
    page.screenshot(path=str(screenshots / "lab-stepper.png"), full_page=False)

    # the keyboard steps too: the slider's handle takes the arrow keys
    stepper.locator(".tl-step-slider .noUi-handle").focus()
    page.keyboard.press("ArrowLeft")
    page.wait_for_function(
        "() => [...document.querySelectorAll('.tl-frame-text')].some(e => e.offsetParent && "
        "e.textContent.startsWith('step 3 of 4'))"
    )
    assert frame_text(page).splitlines()[1] == "Δ arrived: 1.0 + 3.0 = 4.0  (used 2 times: from y, c)"
    # and so do the buttons: focus one and press Enter
    stepper.get_by_role("button", name="◀ previous").focus()
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => [...document.querySelectorAll('.tl-frame-text')].some(e => e.offsetParent && "
        "e.textContent.startsWith('step 2 of 4'))"
    )
    assert not page.errors


def test_a_track_cell_draws_its_tape_in_jupyterlab(page, lab, screenshots):
    write_notebook(track_notebook(), lab.root / "track.ipynb")
    open_and_run_all(page, lab, "track.ipynb")
    cells = page.locator(".jp-Notebook .jp-Cell")
    pictures = cells.nth(1).locator(".jp-OutputArea-output img.tl-picture")
    drawing = pictures.first
    drawing.wait_for()
    box = drawing.bounding_box()
    assert box["width"] > 100 and box["height"] > 50
    svg = unquote(drawing.get_attribute("src"))
    for label in ("w = param", "x = param", "h = multiply", "loss"):  # loss's statement is a block of 2 operations
        assert f">{label}<" in svg
    assert ">loss = add<" in unquote(pictures.nth(1).get_attribute("src"))  # its own drawing, one click away
    # d loss / dw = 2hx + 1 = 2 × (-0.75) × (-1.5) + 1; d loss / dx = 2hw = 2 × (-0.75) × 0.5
    assert cells.nth(2).locator(".jp-OutputArea-output").inner_text().strip() == "3.25 -0.75"
    drawing.scroll_into_view_if_needed()
    page.screenshot(path=str(screenshots / "lab-track.png"))

    # --step shows the stepper for the --back variable, its values named after the cell's variables
    stepper = cells.nth(4).locator(".tl-stepper")
    stepper.wait_for()
    lines = stepper.locator(".tl-frame-text:visible").inner_text().splitlines()
    assert lines[0] == "step 1 of 2: v = u * u"
    assert lines[3:5] == ["  → u: Δ·u = 1.0 × 3.0 = 3.0", "  → u: Δ·u = 1.0 × 3.0 = 3.0  (u now holds 3.0 + 3.0 = 6.0)"]
    stepper.get_by_role("button", name="next ▶").click()
    page.wait_for_function(
        "() => [...document.querySelectorAll('.tl-frame-text')].some(e => e.offsetParent && "
        "e.textContent.startsWith('step 2 of 2'))"
    )
    assert stepper.locator(".tl-frame-text:visible").inner_text().splitlines()[-1] == "grads so far: u = 6.0"
    stepper.scroll_into_view_if_needed()
    page.screenshot(path=str(screenshots / "lab-track-step.png"))

    # the pictures take JupyterLab's theme (through their color-scheme, which their SVG's CSS answers)
    assert drawing.evaluate("i => getComputedStyle(i).colorScheme") == "light"
    page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})")
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'")
    assert drawing.evaluate("i => getComputedStyle(i).colorScheme") == "dark"
    page.wait_for_selector("#jupyterlab-splash", state="detached")  # the theme's loading screen, gone
    drawing.scroll_into_view_if_needed()
    page.screenshot(path=str(screenshots / "lab-track-dark.png"))
    page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Light'})")
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'true'")
    assert not page.errors
