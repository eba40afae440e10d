"""A directive that writes the API reference entries of the public names ``trackerlab`` has.

    .. public-names:: param data grad optim.Descent

becomes one autodoc entry per name (``autofunction``, ``autoclass`` with its members, or
``automodule``); ``api.rst`` uses it (reST, as autodoc is). A name the package does not have is a
warning, so the build (``sphinx-build -W``) fails; ``tests/project/test_docs.py`` checks that every public name
of the package is listed and is in the built reference.
"""

import importlib
import inspect

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinx.util.parsing import nested_parse_to_nodes

logger = logging.getLogger(__name__)


def lookup(name: str):
    """``trackerlab.<name>``, or ``None`` when the package does not have it (yet)."""
    value = importlib.import_module("trackerlab")
    try:
        for part in name.split("."):
            value = getattr(value, part)
    except (AttributeError, ImportError):  # the lazy notebook names import their module on access
        return None
    return value


def entry(name: str, value) -> list[str]:
    """The reST autodoc lines for one public name."""
    target = f"trackerlab.{name}"
    if inspect.ismodule(value):
        return [f".. automodule:: {target}", ""]
    if inspect.isclass(value):
        # Python's own reading of the signature (autodoc prefers a base class's ``__new__(*args, **kwargs)``
        # over the class's ``__init__``, as for the ipywidgets-based BackpropStepper).
        try:
            signature = str(inspect.signature(value)).replace("'", "")
        except (TypeError, ValueError):
            signature = ""
        return [f".. autoclass:: {target}{signature}", "   :members:", ""]
    return [f".. autofunction:: {target}", ""]


class PublicNames(SphinxDirective):
    has_content = True

    def run(self) -> list[nodes.Node]:
        lines = []
        for name in " ".join(self.content).split():
            value = lookup(name)
            if value is None:
                logger.warning("public-names: trackerlab has no %s", name, location=self.get_location())
                continue
            lines += entry(name, value)
        source = self.get_source_info()[0]
        return nested_parse_to_nodes(self.state, StringList(lines, source=source))


def setup(app):
    app.add_directive("public-names", PublicNames)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
