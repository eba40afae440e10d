"""The stepper in a plain ``jupyter nbconvert --to html`` export opened from disk with no network, stepped in
headless Chromium with every request that is not the file itself refused: a fresh notebook executed by
nbclient and saved as JupyterLab saves it by default (no widget state) and with its widget state (then
nbconvert exports the widget view, whose manager comes from a CDN), and the committed tutorials."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from labkit import ROOT, executed_stepper_notebook, write_notebook

WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
# nbconvert's own page asks for require.js, MathJax and, with widget state, the widget manager from these
CDNS = ("https://cdnjs.cloudflare.com/", "https://cdn.jsdelivr.net/", "https://unpkg.com/")


def nbconvert(path, env=None, *flags: str):
    """``jupyter nbconvert --to html`` with no other flag (``flags`` only where a test says why)."""
    run = subprocess.run(
        [sys.executable, "-m", "nbconvert", "--to", "html", *flags, str(path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    return path.with_suffix(".html")


@pytest.fixture(scope="module", params=["without widget state", "with widget state"])
def exported(request, tmp_path_factory):
    import nbformat

    folder = tmp_path_factory.mktemp("export")
    with_state = request.param == "with widget state"
    nb, env = executed_stepper_notebook(folder / "home", store_widget_state=with_state)
    assert (WIDGET_STATE in nb.metadata.get("widgets", {})) == with_state
    path = write_notebook(nbformat.from_dict(nb), folder / "stepper.ipynb")
    page = nbconvert(path, env)
    text = page.read_text(encoding="utf-8")
    # the widget's output comes first, the self-contained copy second; nbconvert exports the widget view
    # exactly when the widget state was saved
    assert ('<script type="application/vnd.jupyter.widget-view+json">' in text) == with_state
    assert text.count('class="tl-static-stepper"') == 1
    return page


def offline(page, outside: list):
    """Refuse every request that is not a file: URL, and remember what was asked for."""

    def route(route):
        if route.request.url.startswith(("file:", "data:")):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page.route("**/*", route)


def frame_text(page) -> str:
    return page.locator(".tl-static-stepper .tl-frame-text").inner_text()


def test_the_export_steps_offline(page, exported, screenshots):
    outside: list[str] = []
    offline(page, outside)
    page.goto(exported.as_uri())
    stepper = page.locator(".tl-static-stepper")
    stepper.wait_for()
    assert frame_text(page).splitlines()[0] == "step 1 of 4: y = c + a"
    drawing = stepper.locator(".tl-frame-view img.tl-picture")
    assert drawing.count() == 1 and drawing.evaluate("i => i.complete && i.naturalWidth") > 0
    page.screenshot(path=str(screenshots / "offline-export-step1.png"), full_page=True)

    stepper.get_by_role("button", name="next step").click()
    assert frame_text(page).splitlines()[0] == "step 2 of 4: c = a * b"
    assert "  → a: Δ·b = 1.0 × 3.0 = 3.0  (a now holds 1.0 + 3.0 = 4.0)" in frame_text(page).splitlines()
    stepper.get_by_role("button", name="next step").click()
    assert frame_text(page).splitlines()[1] == "Δ arrived: 1.0 + 3.0 = 4.0  (used 2 times: from y, c)"
    stepper.get_by_role("button", name="previous step").click()
    assert frame_text(page).startswith("step 2 of 4")
    assert stepper.locator(".tl-static-where").inner_text() == "step 2 of 4"

    # the slider
    stepper.locator("input[type=range]").fill("3")
    assert frame_text(page).splitlines()[-1] == "grads so far: a = 4.0, b = 2.0"
    stepper.get_by_role("button", name="first step").click()
    assert frame_text(page).startswith("step 1 of 4")

    # play runs on its own to the last frame, then offers to play again
    stepper.get_by_role("button", name="play").click()
    assert stepper.get_by_role("button", name="pause").is_visible()
    page.wait_for_function(
        "() => document.querySelector('.tl-static-stepper .tl-frame-text').textContent.startsWith('step 4 of 4')",
        polling=100,
    )
    stepper.get_by_role("button", name="play").wait_for()
    page.screenshot(path=str(screenshots / "offline-export-last.png"), full_page=True)

    # the icons are drawn, not glyphs of a font that a file: page cannot load
    for name in ("first step", "previous step", "play", "next step"):
        box = stepper.get_by_role("button", name=name).locator("svg path").bounding_box()
        assert box and box["width"] > 5 and box["height"] > 5, name
    # nbconvert's own page asks for require.js, MathJax (and the widget manager) from CDNs, refused here; the
    # stepper asks for nothing
    assert all(url.startswith(CDNS) for url in outside), outside
    # one stepper is seen: the widget's output before it (its text stand-in, or the view no manager drew) is not
    assert page.locator(".tl-static-stepper:visible").count() == 1
    assert page.get_by_text("BackpropStepper(4 steps").is_hidden()
    assert "http" not in stepper.evaluate("e => e.outerHTML").replace("http://www.w3.org", "")
    assert not page.errors


def test_a_page_without_scripts_shows_the_first_and_last_frames(browser, exported, screenshots):
    context = browser.new_context(java_script_enabled=False, viewport={"width": 1100, "height": 900})
    try:
        page = context.new_page()
        outside: list[str] = []
        offline(page, outside)
        page.goto(exported.as_uri())
        page.locator(".tl-static-stepper").wait_for()  # it appears a moment late (see _static.py), then stays
        texts = page.locator(".tl-static-stepper .tl-frame-text")
        assert texts.count() == 2
        assert texts.nth(0).inner_text().startswith("step 1 of 4: y = c + a")
        assert texts.nth(1).inner_text().startswith("step 4 of 4: b (a leaf)")
        labels = page.locator(".tl-static-stepper .tl-static-label")
        assert [labels.nth(i).inner_text() for i in range(labels.count())] == ["first step", "last step"]
        for i in range(2):  # legible: real text, not shrunk to nothing
            size = texts.nth(i).evaluate("e => parseFloat(getComputedStyle(e).fontSize)")
            assert size >= 12
        page.screenshot(path=str(screenshots / "offline-export-noscript.png"), full_page=True)
    finally:
        context.close()


# ----------------------------------------------------------------------------------------------------
# The committed tutorials, exported as they are

WORDS = {  # the copy's controls and its "where" line, in each tutorial's language
    "en": {"first": "first step", "next": "next step", "play": "play", "where": r"step (\d+) of (\d+)"},
    "ja": {"first": "最初のステップ", "next": "次のステップ", "play": "再生", "where": r"ステップ (\d+) / (\d+)"},
    "zh": {"first": "第一步", "next": "下一步", "play": "播放", "where": r"第 (\d+) 步，共 (\d+) 步"},
}


def _stepper_cells(path) -> int:
    import nbformat

    return sum(
        "BackpropStepper" in cell.source or "--step" in cell.source
        for cell in nbformat.read(str(path), as_version=4).cells
        if cell.cell_type == "code"
    )


TUTORIALS = [path for path in sorted((ROOT / "notebooks").glob("*.ipynb")) if _stepper_cells(path)]


@pytest.mark.parametrize("tutorial", TUTORIALS, ids=[path.stem for path in TUTORIALS])
def test_a_committed_tutorial_exported_by_nbconvert_steps_offline(tutorial, page, tmp_path, screenshots):
    import shutil

    words = WORDS[tutorial.stem.rsplit(".", 1)[1]]
    exported = nbconvert(shutil.copy(tutorial, tmp_path / tutorial.name))
    outside: list[str] = []
    offline(page, outside)
    page.goto(exported.as_uri())
    steppers = page.locator(".tl-static-stepper")
    steppers.first.wait_for()
    assert steppers.count() == _stepper_cells(tutorial)
    for k in range(steppers.count()):
        stepper = steppers.nth(k)
        stepper.scroll_into_view_if_needed()
        text = stepper.locator(".tl-frame-text")
        where = stepper.locator(".tl-static-where")
        step, total = map(int, re.fullmatch(words["where"], where.inner_text()).groups())
        assert step == 1 and total >= 3
        first = text.inner_text()
        stepper.get_by_role("button", name=words["next"]).click()
        assert re.fullmatch(words["where"], where.inner_text()).groups() == ("2", str(total))
        assert text.inner_text() != first and text.inner_text().split(":")[0] != first.split(":")[0]
        if k == 0:
            page.screenshot(path=str(screenshots / f"offline-{tutorial.stem}.png"))
        stepper.locator("input[type=range]").fill(str(total - 1))
        assert re.fullmatch(words["where"], where.inner_text()).groups() == (str(total), str(total))
        stepper.get_by_role("button", name=words["first"]).click()
        assert text.inner_text() == first
        stepper.get_by_role("button", name=words["play"]).click()
        last = re.sub(r"\(\\d\+\)", str(total), words["where"])  # the "where" line of the last frame
        page.wait_for_function("([e, last]) => e.textContent === last", arg=[where.element_handle(), last], polling=100)
    # every stepper on the page is its self-contained copy: no widget view is waiting for a manager
    assert page.locator('script[type="application/vnd.jupyter.widget-view+json"]').count() == 0
    assert all(url.startswith(CDNS) for url in outside), outside
    assert not page.errors


def test_the_export_follows_nbconvert_s_dark_theme(browser, tmp_path, screenshots):
    """Dark mode: ``--HTMLExporter.theme=dark`` (nbconvert's own switch for a dark page) darkens the copy."""
    import shutil

    tutorial = ROOT / "notebooks" / "03_backprop_as_a_graph_walk.en.ipynb"
    exported = nbconvert(shutil.copy(tutorial, tmp_path / tutorial.name), None, "--HTMLExporter.theme=dark")
    context = browser.new_context(viewport={"width": 1100, "height": 900}, color_scheme="dark")
    try:
        page = context.new_page()
        offline(page, [])
        page.goto(exported.as_uri())
        stepper = page.locator(".tl-static-stepper").first
        stepper.wait_for()
        stepper.scroll_into_view_if_needed()
        text = stepper.locator(".tl-frame-text")
        background, colour = text.evaluate("e => [getComputedStyle(e).backgroundColor, getComputedStyle(e).color]")
        assert _luminance(background) < 0.3 < 0.6 < _luminance(colour), (background, colour)
        page.screenshot(path=str(screenshots / "offline-export-dark.png"))
    finally:
        context.close()


def _luminance(css: str) -> float:
    r, g, b = (int(v) / 255 for v in re.findall(r"[\d.]+", css)[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b
