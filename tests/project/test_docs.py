"""The documentation site: the vendored widget JavaScript, and the Sphinx build with `-W`."""

import functools
import html
import http.server
import importlib.util
import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VENDOR = ROOT / "vendor"


def vendored_versions():
    """The versions vendor/README.md states, by npm package."""
    table = (VENDOR / "README.md").read_text(encoding="utf-8")
    return dict(re.findall(r"^\| `[^`]+\.js` \| `([^`]+)` \| ([0-9.]+) \|", table, flags=re.MULTILINE))


def test_vendored_files_are_the_versions_the_readme_states():
    versions = vendored_versions()
    assert set(versions) == {"requirejs", "@jupyter-widgets/html-manager"}
    require = (VENDOR / "requirejs" / "require.js").read_text(encoding="utf-8")
    assert f"@license RequireJS {versions['requirejs']} " in require
    embed = (VENDOR / "html-manager" / "embed-amd.js").read_text(encoding="utf-8")
    assert f'rE:"{versions["@jupyter-widgets/html-manager"]}"' in embed
    for module in ("base", "controls", "html-manager"):
        assert f'define("@jupyter-widgets/{module}"' in embed
    for licensed in ("requirejs/LICENSE", "html-manager/LICENSE", "html-manager/THIRD-PARTY-NOTICES.txt"):
        assert (VENDOR / licensed).stat().st_size > 500


def test_vendored_html_manager_speaks_the_installed_ipywidgets_protocol():
    from ipywidgets._version import __html_manager_version__, __protocol_version__

    # ipywidgets names a caret range of html-manager releases (`^1.0.1`) and widget protocol 2.x.
    wanted = tuple(int(part) for part in __html_manager_version__.lstrip("^").split("."))
    vendored = tuple(int(part) for part in vendored_versions()["@jupyter-widgets/html-manager"].split("."))
    assert vendored[0] == wanted[0] and vendored >= wanted
    assert __protocol_version__.split(".")[0] == "2"


def test_every_font_the_bundle_names_is_vendored():
    embed = (VENDOR / "html-manager" / "embed-amd.js").read_text(encoding="utf-8")
    fonts = set(re.findall(r"[0-9a-f]{20}\.woff2", embed))
    assert len(fonts) == 3
    assert fonts == {path.name for path in (VENDOR / "html-manager").glob("*.woff2")}


# ----------------------------------------------------------------------------------------------------
# The site, built as CI builds it

DOCS = ROOT / "docs"
NOTEBOOKS = ROOT / "notebooks"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
# DESIGN.md's public names: the engine's are all there already, the notebook layer's as they land.
ENGINE_NAMES = (
    "param data grad tracker istracked isleaf Call backprop_steps Step back_ forward gradient Params Grads "
    "jacobian hessian track grad_rule primitive hook checkpoint nobacksies no_grad update_ zero_grad_ "
    "optim.Descent optim.Momentum optim.ADAM supported_operations check_grads TrackedReal TrackedArray "
    "check_tape detect_anomaly"
).split()
NOTEBOOK_NAMES = ("to_networkx", "plot_tape", "BackpropStepper", "load_ipython_extension")


def build(out: Path) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(DOCS), str(out)]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=600)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("docs") / "html"
    result = build(out)
    assert result.returncode == 0, f"sphinx-build -W failed:\n{result.stderr[-6000:]}"
    return out


def notebook_pages() -> dict[str, dict]:
    """The committed tutorials, by the page each becomes."""
    return {
        f"notebooks/{path.stem}.html": json.loads(path.read_text(encoding="utf-8"))
        for path in sorted(NOTEBOOKS.glob("*.ipynb"))
    }


def scripts(page: str) -> list[str]:
    return re.findall(r'<script\b[^>]*\bsrc="([^"]+)"', page)


@pytest.mark.slow
def test_every_page_is_built(site):
    for page in ("index", "tutorials", "notebook_layer", "julia", "api", "finding_a_wrong_gradient"):
        assert (site / f"{page}.html").is_file(), page
    assert "Supported operations" in (site / "operations.html").read_text(encoding="utf-8")


@pytest.mark.slow
def test_every_notebook_is_a_page_with_its_committed_outputs(site):
    tutorials = (site / "tutorials.html").read_text(encoding="utf-8")
    for page, notebook in notebook_pages().items():
        shown = html.unescape((site / page).read_text(encoding="utf-8"))
        title = next(
            line[2:].strip()
            for cell in notebook["cells"]
            if cell["cell_type"] == "markdown"
            for line in "".join(cell["source"]).splitlines()
            if line.startswith("# ")
        )
        assert title in shown and page.split("/")[1] in tutorials, page
        images = 0
        for output in (output for cell in notebook["cells"] for output in cell.get("outputs", [])):
            data = output.get("data", {})
            drawing = "".join(data.get("text/html", ""))
            widget = "application/vnd.jupyter.widget-view+json" in data  # the page shows the widget instead
            if '<img class="tl-picture"' in drawing and not widget:  # a tape drawn as a picture: the page holds it
                picture = re.search(r'<img class="tl-picture" src="[^"]{,300}', drawing).group(0)
                assert picture in shown, (page, "a drawing is missing")
            else:
                images += "image/png" in data or "image/svg+xml" in data
            text = "".join(output.get("text", "") if output["output_type"] == "stream" else data.get("text/plain", ""))
            if text.strip() and (output["output_type"] == "stream" or set(data) == {"text/plain"}):
                for line in text.strip().splitlines():
                    assert line.strip() in shown, (page, line)
        # a tape drawing shows as a picture (the <img> in its text/html), other figures as images
        drawn = shown.count("<img ")
        assert drawn >= images, page


@pytest.mark.slow
def test_the_api_reference_has_every_public_name_the_package_has(site):
    import trackerlab

    api = (site / "api.html").read_text(encoding="utf-8")
    for name in ENGINE_NAMES:
        assert f'id="trackerlab.{name}"' in api, name
    for name in NOTEBOOK_NAMES:
        assert getattr(trackerlab, name), name  # a missing public name is a failure, not a skip
        assert f'id="trackerlab.{name}"' in api, name
    for name in listed_names():  # a module's entry is anchored as module-trackerlab.<name>
        assert f'id="trackerlab.{name}"' in api or f'id="module-trackerlab.{name}"' in api, name


def listed_names() -> set[str]:
    """The names the API page lists in its ``public-names`` directives."""
    text = (DOCS / "api.rst").read_text(encoding="utf-8")
    return {name for block in re.findall(r"\.\. public-names::\n\n((?:   .+\n)+)", text) for name in block.split()}


def test_the_api_page_lists_every_public_name_but_the_operations():
    import trackerlab
    from trackerlab.rules import functions

    listed = listed_names()
    assert set(ENGINE_NAMES) | set(NOTEBOOK_NAMES) <= listed
    missing = set(trackerlab.__all__) - set(functions()) - listed
    assert not missing, f"public names the API page does not list: {sorted(missing)}"
    for name in listed:  # and each listed name exists
        value = trackerlab
        for part in name.split("."):
            value = getattr(value, part)


@pytest.mark.slow
def test_widgets_load_the_vendored_javascript_and_no_cdn(site):
    pages = sorted(site.rglob("*.html"))
    for path in pages:
        for src in scripts(path.read_text(encoding="utf-8")):
            # MathJax (pages with formulas) is the one script a page may take from a CDN
            assert "://" not in src or "mathjax" in src.lower(), (path.name, src)
    order = ["_static/requirejs/require.js", "_static/require-paths.js", "_static/html-manager/embed-amd.js"]
    for page, notebook in notebook_pages().items():
        html_page = (site / page).read_text(encoding="utf-8")
        has_state = bool(notebook.get("metadata", {}).get("widgets", {}).get(WIDGET_STATE, {}).get("state"))
        assert (f'type="{WIDGET_STATE}"' in html_page) == has_state, page
        loaded = [src.split("?")[0].removeprefix("../") for src in scripts(html_page)]
        if has_state:
            assert [src for src in loaded if src in order] == order, page
            for src in order:
                assert (site / src).is_file()
        else:
            assert not set(order) & set(loaded), page


def test_the_docs_configuration_names_only_vendored_widget_files():
    config = {"__file__": str(DOCS / "conf.py")}
    exec(compile((DOCS / "conf.py").read_text(encoding="utf-8"), str(DOCS / "conf.py"), "exec"), config)
    assert config["nb_execution_mode"] == "off"
    static = [(DOCS / folder).resolve() for folder in config["html_static_path"]]
    assert VENDOR in static
    assert list(config["nb_ipywidgets_js"]) == ["requirejs/require.js", "require-paths.js", "html-manager/embed-amd.js"]
    for path in config["nb_ipywidgets_js"]:
        assert (VENDOR / path).is_file()


def test_the_julia_table_names_only_what_trackerlab_has():
    import trackerlab

    table = (DOCS / "julia.md").read_text(encoding="utf-8")
    python_names = set(re.findall(r"`(?:@)?tl\.([A-Za-z_][\w.]*)", table))
    assert {"param", "back_", "grad_rule", "primitive", "update_", "optim.ADAM"} <= python_names
    for name in python_names:
        value = trackerlab
        for part in name.split("."):
            value = getattr(value, part)
        assert callable(value), name


# ----------------------------------------------------------------------------------------------------
# The stepper steps in the built pages (headless Chromium, the site served from 127.0.0.1)

CHROMIUM = os.environ.get("TRACKERLAB_CHROMIUM") or "/usr/bin/chromium"


def stepper_pages() -> list[str]:
    """The tutorial pages that show a stepper."""
    return [
        page
        for page, notebook in notebook_pages().items()
        if any(
            "BackpropStepper" in "".join(cell["source"]) or "--step" in "".join(cell["source"])
            for cell in notebook["cells"]
            if cell["cell_type"] == "code"
        )
    ]


@pytest.fixture
def served(site):
    handler = functools.partial(Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def shown(stepper, start: str) -> str:
    """Wait until the stepper shows a frame whose text starts with ``start``, and return that text."""
    visible = "[...s.querySelectorAll('.tl-frame-text')].filter(e => e.offsetParent)"
    stepper.page.wait_for_function(
        f"([s, start]) => {visible}.some(e => e.textContent.startsWith(start))", arg=[stepper.element_handle(), start]
    )
    return stepper.evaluate(f"s => {visible}[0].textContent")


def step_through(served: str, pages: list[str], shots: str) -> list[str]:
    """Open each page, move its first stepper (its self-contained copy) one frame with its next button, take
    a screenshot; return the addresses the pages requested."""
    from playwright.sync_api import sync_playwright

    args = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]
    requests: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=args)
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.set_default_timeout(120_000)
        page.on("request", lambda request: requests.append(request.url))
        for path in pages:
            page.goto(f"{served}/{path}")
            stepper = page.locator(".tl-static-stepper").first
            stepper.wait_for()
            total = int(re.match(r"step 1 of (\d+)", shown(stepper, "step 1 of ")).group(1))
            stepper.get_by_role("button", name="next step").click()
            assert shown(stepper, f"step 2 of {total}:"), path
            stepper.scroll_into_view_if_needed()
            page.screenshot(path=str(Path(shots) / f"docs-{Path(path).stem}.png"))
        browser.close()
    return requests


@pytest.mark.slow
@pytest.mark.browser
def test_the_stepper_steps_in_the_built_pages(served, tmp_path):
    missing = not os.access(CHROMIUM, os.X_OK) or importlib.util.find_spec("playwright") is None
    if missing and os.environ.get("TRACKERLAB_REQUIRE_BROWSER") != "1":
        pytest.skip(f"needs Chromium at {CHROMIUM} and playwright")
    # the English pages: the frame text is read as "step N of M" (ja and zh pages say it in their language)
    pages = [page for page in stepper_pages() if page.endswith(".en.html")]
    assert pages, "no tutorial page shows a stepper"
    shots = Path(os.environ.get("TRACKERLAB_SCREENSHOTS") or tmp_path)
    # its own process: Playwright's sync API refuses to start where another test's browser is running
    drive = f"import test_docs, json; print(json.dumps(test_docs.step_through({served!r}, {pages!r}, {str(shots)!r})))"
    result = subprocess.run(
        [sys.executable, "-c", drive], cwd=Path(__file__).parent, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr[-4000:]
    requests = json.loads(result.stdout.splitlines()[-1])
    outside = [url for url in requests if not url.startswith((served, "data:"))]
    assert not outside, outside


def test_no_page_tells_people_to_pip_install_the_unrelated_trackerlab():
    """`trackerlab` on the package index is another project: installs name the distribution trackerlab-ad."""
    import tomllib

    name = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["name"]
    assert name == "trackerlab-ad"
    pages = [ROOT / "README.md", *DOCS.glob("*.md"), *DOCS.glob("*.rst"), ROOT / "benchmarks" / "README.md"]
    wrong = re.compile(r"pip install (?:-U |--upgrade )?[\"']?trackerlab(?![-\w])")
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert not wrong.search(text), f"{page.name} tells people to install the unrelated `trackerlab`"
    assert "trackerlab-ad @ git+" in (DOCS / "index.md").read_text(encoding="utf-8")


@pytest.mark.slow
def test_the_api_reference_shows_real_signatures(site):
    """No entry reads `(*args, **kwargs)` where the class takes named arguments (BackpropStepper did)."""
    import inspect

    import trackerlab

    api = html.unescape(re.sub(r"<[^>]+>", "", (site / "api.html").read_text(encoding="utf-8")))
    assert "BackpropStepper(y, Δ=None, *, labels=None" in api
    for name in ("BackpropStepper", "Params", "Grads", "Step"):
        wanted = str(inspect.signature(getattr(trackerlab, name))).replace("'", "")
        assert f"{name}{wanted}" in api, name
