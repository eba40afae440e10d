"""The stepper in a plain ``jupyter nbconvert --to html`` export opened from disk with no network: a fresh
notebook executed by nbclient and saved as JupyterLab saves it by default (no widget state), converted
with no flags, then stepped in headless Chromium with every request that is not the file itself refused."""

from __future__ import annotations

import subprocess
import sys

import pytest
from labkit import executed_stepper_notebook, write_notebook


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    import nbformat

    folder = tmp_path_factory.mktemp("export")
    nb, env = executed_stepper_notebook(folder / "home", store_widget_state=False)
    path = write_notebook(nbformat.from_dict(nb), folder / "stepper.ipynb")
    run = subprocess.run(
        [sys.executable, "-m", "nbconvert", "--to", "html", str(path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    page = folder / "stepper.html"
    assert "BackpropStepper(4 steps" not in page.read_text(encoding="utf-8").split('class="tl-static-view"')[0][-400:]
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
    assert frame_text(page).splitlines()[0] == "step 1 of 4: y = add(c, a)"
    assert stepper.locator(".tl-frame-drawing svg").count() == 1
    page.screenshot(path=str(screenshots / "offline-export-step1.png"), full_page=True)

    stepper.get_by_role("button", name="next step").click()
    assert frame_text(page).splitlines()[0] == "step 2 of 4: c = multiply(a, b)"
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
    # nbconvert's own page asks for require.js and MathJax from CDNs (refused here); the stepper asks for nothing
    assert all(url.startswith("https://cdnjs.cloudflare.com/") for url in outside), outside
    assert "http" not in stepper.evaluate("e => e.outerHTML").replace("http://www.w3.org", "")
    assert not page.errors


def test_a_page_without_scripts_shows_the_first_and_last_frames(browser, exported, screenshots):
    context = browser.new_context(java_script_enabled=False, viewport={"width": 1100, "height": 900})
    try:
        page = context.new_page()
        outside: list[str] = []
        offline(page, outside)
        page.goto(exported.as_uri())
        texts = page.locator(".tl-static-stepper .tl-frame-text")
        assert texts.count() == 2
        assert texts.nth(0).inner_text().startswith("step 1 of 4: y = add(c, a)")
        assert texts.nth(1).inner_text().startswith("step 4 of 4: b (a leaf)")
        labels = page.locator(".tl-static-stepper .tl-static-label")
        assert [labels.nth(i).inner_text() for i in range(labels.count())] == ["first step", "last step"]
        for i in range(2):  # legible: real text, not shrunk to nothing
            size = texts.nth(i).evaluate("e => parseFloat(getComputedStyle(e).fontSize)")
            assert size >= 12
        page.screenshot(path=str(screenshots / "offline-export-noscript.png"), full_page=True)
    finally:
        context.close()
