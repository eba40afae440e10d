"""What the browser tests share besides fixtures: where things are, the notebooks they open, and the
environment (fresh Jupyter dirs, this checkout on ``PYTHONPATH``) their servers and kernels run in."""

from __future__ import annotations

import os
import socket
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("TRACKERLAB_CHROMIUM") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}


# ----------------------------------------------------------------------------------------------------
# The notebooks the tests open


def _notebook(*cells: str):
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = KERNELSPEC
    nb.metadata["language_info"] = {"name": "python"}
    nb.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    return nb


def stepper_notebook():
    """A product used twice, stepped through: the frames these tests expect are written out in them."""
    return _notebook(
        "import trackerlab as tl\na, b = tl.param(2.0), tl.param(3.0)\nc = a * b\ny = c + a",
        'stepper = tl.BackpropStepper(y, labels={a: "a", b: "b", c: "c", y: "y"}, interval=300)\nstepper',
    )


def track_notebook():
    return _notebook(
        "%load_ext trackerlab\nw, x = 0.5, -1.5",
        "%%track -p w x --back loss\nh = w * x\nloss = h * h + w",
        "print(w.grad, x.grad)",
        "u = 3.0",
        "%%track -p u --back v --step\nv = u * u",
    )


def write_notebook(nb, path: Path) -> Path:
    import nbformat

    nbformat.write(nb, str(path))
    return path


# ----------------------------------------------------------------------------------------------------
# Servers and the browser


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def environment(home: Path) -> dict:
    """Variables for a server or kernel: fresh Jupyter, IPython and matplotlib dirs under ``home``."""
    env = dict(os.environ)
    for name, folder in (
        ("JUPYTER_CONFIG_DIR", "config"),
        ("JUPYTER_DATA_DIR", "data"),
        ("JUPYTER_RUNTIME_DIR", "runtime"),
        ("IPYTHONDIR", "ipython"),
        ("JUPYTERLAB_SETTINGS_DIR", "settings"),
        ("JUPYTERLAB_WORKSPACES_DIR", "workspaces"),
        ("MPLCONFIGDIR", "matplotlib"),
    ):
        (home / folder).mkdir(parents=True, exist_ok=True)
        env[name] = str(home / folder)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    env["JUPYTER_PLATFORM_DIRS"] = "1"
    return env


def executed_stepper_notebook(home: Path, *, store_widget_state: bool):
    """The stepper notebook run in a fresh kernel that sees this checkout (and fresh Jupyter dirs under
    ``home``); returns the notebook and the environment it ran in."""
    from nbclient import NotebookClient

    nb = stepper_notebook()
    env = environment(home)
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        NotebookClient(nb, timeout=120, kernel_name="python3", store_widget_state=store_widget_state).execute()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return nb, env
