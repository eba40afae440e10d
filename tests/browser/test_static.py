"""The stepper on a static page: a notebook executed and exported by nbconvert, its widgets rendered by
the html-manager JavaScript vendored from npm and served from 127.0.0.1 (no CDN, no kernel). The widget
view is drawn there, and gives way to the stepper's self-contained copy, which has every control."""

from __future__ import annotations

import functools
import http.server
import shutil
import threading

import pytest
from labkit import ROOT, executed_stepper_notebook

VENDOR = ROOT / "vendor"
REQUIRED = ("requirejs/require.js", "html-manager/embed-amd.js")


def export(tmp_path):
    """Execute the stepper notebook (storing the widget state) and write it as HTML next to ``vendor/``."""
    import nbconvert
    import nbformat

    nb, _ = executed_stepper_notebook(tmp_path / "home", store_widget_state=True)
    assert "application/vnd.jupyter.widget-state+json" in nb.metadata["widgets"]
    exporter = nbconvert.HTMLExporter(
        template_name="lab",
        require_js_url="vendor/requirejs/require.js",
        widget_renderer_url="vendor/html-manager/embed-amd.js",
        mathjax_url="data:text/javascript,",  # no formulas here, and no CDN
    )
    body, _ = exporter.from_notebook_node(nbformat.from_dict(nb))
    assert "unpkg.com" not in body and "cdn.jsdelivr" not in body
    paths = VENDOR / "require-paths.js"
    if paths.exists():  # where the widget modules' fonts live (see the file)
        body = body.replace(
            '<script src="vendor/requirejs/require.js"></script>',
            '<script src="vendor/requirejs/require.js"></script>\n<script src="vendor/require-paths.js"></script>',
        )
    site = tmp_path / "site"
    site.mkdir()
    (site / "stepper.html").write_text(body, encoding="utf-8")
    shutil.copytree(VENDOR, site / "vendor")
    return site


@pytest.fixture
def site(tmp_path):
    missing = [p for p in REQUIRED if not (VENDOR / p).exists()]
    if missing:
        pytest.fail(f"vendor/ lacks {', '.join(missing)}: vendor the widget JavaScript from npm first")
    folder = export(tmp_path)
    handler = functools.partial(QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def shown(page, start: str) -> None:
    page.wait_for_function(
        "(start) => [...document.querySelectorAll('.tl-frame-text')].some(e => e.offsetParent && "
        "e.textContent.startsWith(start))",
        arg=start,
        polling=100,
    )


def frame_text(page) -> str:
    return page.locator(".tl-static-stepper .tl-frame-text:visible").inner_text()


def test_stepping_on_a_static_page(page, site, screenshots):
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(f"{site}/stepper.html")
    # the html-manager draws the widget view (without a kernel, in a .widget-subarea) and hides it: the
    # self-contained copy beside it is the stepper here
    widget = page.locator(".widget-subarea .tl-stepper")
    widget.wait_for(state="attached")
    page.wait_for_function("() => document.querySelector('.widget-subarea .tl-stepper .tl-frame-text')")
    stepper = page.locator(".tl-static-stepper")
    stepper.wait_for()
    assert widget.is_hidden() and page.locator(".tl-stepper:visible").count() == 0
    shown(page, "step 1 of 4")
    assert stepper.locator(".tl-frame-view img.tl-picture:visible").count() == 1

    stepper.get_by_role("button", name="next step").click()
    shown(page, "step 2 of 4")
    assert "  → a: Δ·b = 1.0 × 3.0 = 3.0  (a now holds 1.0 + 3.0 = 4.0)" in frame_text(page).splitlines()
    stepper.locator("input[type=range]").fill("2")
    shown(page, "step 3 of 4")
    assert frame_text(page).splitlines()[1] == "Δ arrived: 1.0 + 3.0 = 4.0  (used 2 times: from y, c)"
    stepper.get_by_role("button", name="first step").click()
    shown(page, "step 1 of 4")

    # play runs through the frames on its own, to the last one
    stepper.get_by_role("button", name="play").click()
    shown(page, "step 4 of 4")
    assert frame_text(page).splitlines()[-1] == "grads so far: a = 4.0, b = 2.0"
    stepper.scroll_into_view_if_needed()
    page.screenshot(path=str(screenshots / "static-stepper.png"))

    outside = [url for url in requests if not url.startswith((site, "data:"))]
    assert not outside, outside
    assert not page.errors
