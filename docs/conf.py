"""Sphinx configuration of the trackerlab documentation.

The tutorials are rendered from their committed outputs (never executed here), the API reference is
read from the docstrings of the repository's own ``trackerlab`` (no install needed), and the widget
JavaScript is served from ``vendor/``, so that widgets render, and the stepper steps, with no CDN.
"""

import re
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path[:0] = [str(ROOT), str(DOCS / "_ext")]

import trackerlab  # noqa: E402  (after the repository is on the path)

project = "trackerlab"
author = "The trackerlab developers"
copyright = "the trackerlab developers"
release = version = trackerlab.__version__

extensions = ["myst_nb", "sphinx.ext.autodoc", "public_names"]
# Only the numbered tutorials are published: a notebook of the reader's own in notebooks/ is not.
TUTORIAL = re.compile(r"^\d\d_[a-z0-9]+(?:_[a-z0-9]+)*\.(?:en|ja|zh)\.ipynb$")


def own_notebooks(root: Path) -> list[str]:
    """The notebooks in ``notebooks/`` that are not numbered tutorials, as exclude patterns."""
    books = sorted((root / "notebooks").glob("*.ipynb"))
    return [f"notebooks/{path.name}" for path in books if not TUTORIAL.match(path.name)]


exclude_patterns = ["_build", "**/.ipynb_checkpoints", "Thumbs.db", ".DS_Store", *own_notebooks(ROOT)]

# --- notebooks: shown as committed, with their widget state -----------------------------------------
nb_execution_mode = "off"
myst_enable_extensions = ["colon_fence", "dollarmath"]
myst_heading_anchors = 3
# The widget manager from vendor/ (copied into _static below), in the order a page must load it:
# RequireJS, where the widget modules live (for their icon fonts), then the html-manager itself.
nb_ipywidgets_js = {
    "requirejs/require.js": {},
    "require-paths.js": {},
    "html-manager/embed-amd.js": {},
}
html_static_path = ["../vendor"]

# --- API reference ---------------------------------------------------------------------------------
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"exclude-members": "__init__, __new__"}

# --- HTML ------------------------------------------------------------------------------------------
html_theme = "furo"
html_title = f"trackerlab {release}"
html_copy_source = False
html_show_sourcelink = False


# --- the tutorials: `docs/notebooks` is a link to the repository's notebooks/ ----------------------


def list_tutorials(app, docname, source):
    """A checkout without notebooks (a fresh branch) still builds: the glob of none would be a warning."""
    if docname == "tutorials" and not any((ROOT / "notebooks").glob("*.ipynb")):
        source[0] = source[0].split("```{toctree}")[0] + "There are no tutorials in this checkout.\n"


def setup(app):
    app.connect("source-read", list_tutorials)
