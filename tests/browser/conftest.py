"""End-to-end fixtures: a JupyterLab server on 127.0.0.1 with fresh config and workspace dirs, headless
Chromium (the system's, never a downloaded one) driven by Playwright, and the notebooks the tests open.

Every test here is marked ``browser`` and skipped, with the reason, when Chromium or Playwright is
missing; with ``TRACKERLAB_REQUIRE_BROWSER=1`` (as ``.ci/run`` sets it) they fail instead.
Screenshots go to ``$TRACKERLAB_SCREENSHOTS`` when it is set, else to pytest's temporary folder.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from labkit import CHROMIUM, CHROMIUM_ARGS, environment, free_port


def _why_not() -> str | None:
    """Why the browser tests cannot run here, or ``None`` when they can."""
    if not (os.path.exists(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        return f"Chromium not found at {CHROMIUM} (apt-get install chromium, or set TRACKERLAB_CHROMIUM)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright Python package is not installed (pip install -e '.[test]')"
    return None


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).parent
    reason = _why_not()
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(pytest.mark.browser)
            if reason is not None and os.environ.get("TRACKERLAB_REQUIRE_BROWSER") != "1":
                item.add_marker(pytest.mark.skip(reason=f"browser test skipped: {reason}"))


def pytest_runtest_setup(item):
    if os.environ.get("TRACKERLAB_REQUIRE_BROWSER") == "1" and item.get_closest_marker("browser"):
        reason = _why_not()
        if reason is not None:
            pytest.fail(f"TRACKERLAB_REQUIRE_BROWSER=1 but {reason}", pytrace=False)


class Lab:
    """A running JupyterLab: ``url(path)`` gives an address with the token."""

    def __init__(self, root: Path, port: int, token: str):
        self.root, self.port, self.token = root, port, token

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}/{path}?token={self.token}"


@pytest.fixture(scope="session")
def lab(tmp_path_factory):
    """JupyterLab on 127.0.0.1 (random free port, a token, fresh config, settings and workspace dirs)."""
    home = tmp_path_factory.mktemp("lab")
    root = home / "notebooks"
    root.mkdir()
    env = environment(home)
    # no news prompt and no update checks: the machine is offline
    notification = Path(env["JUPYTERLAB_SETTINGS_DIR"]) / "@jupyterlab" / "apputils-extension"
    notification.mkdir(parents=True)
    (notification / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False})
    )
    # every cell in the page, not only those scrolled into view, so a test can read all the outputs; a
    # notebook's kernel shut down when the notebook is closed
    tracker = Path(env["JUPYTERLAB_SETTINGS_DIR"]) / "@jupyterlab" / "notebook-extension"
    tracker.mkdir(parents=True)
    (tracker / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none", "kernelShutdown": True}))
    port, token = free_port(), secrets.token_hex(16)
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        "--ServerApp.open_browser=False",
        f"--ServerApp.root_dir={root}",
        f"--LabApp.user_settings_dir={env['JUPYTERLAB_SETTINGS_DIR']}",
        f"--LabApp.workspaces_dir={env['JUPYTERLAB_WORKSPACES_DIR']}",
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.news_url=",
        "--LabApp.extension_manager=readonly",
        "--ServerApp.terminals_enabled=False",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # CI containers run as root
        command.append("--allow-root")
    log = (home / "server.log").open("w")
    process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=root)
    try:
        deadline = time.monotonic() + 90
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"JupyterLab exited with {process.returncode}:\n{(home / 'server.log').read_text()}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={token}", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"JupyterLab did not answer in 90 s:\n{(home / 'server.log').read_text()}")
            time.sleep(0.3)
        yield Lab(root, port, token)
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(60_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.errors = errors
    yield page
    context.close()


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory) -> Path:
    folder = os.environ.get("TRACKERLAB_SCREENSHOTS")
    path = Path(folder) if folder else tmp_path_factory.mktemp("screenshots")
    path.mkdir(parents=True, exist_ok=True)
    return path
