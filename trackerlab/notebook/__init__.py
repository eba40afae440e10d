"""The notebook layer: HTML reprs, the networkx export, matplotlib drawings, the stepper and the magics.

It reads the engine's public data only (``Tracked`` nodes, ``Call`` records and the walk's ``Step``
records); the engine never imports it. Each display imports its own heavy package (networkx,
matplotlib, ipywidgets) when it is first used.
"""

from __future__ import annotations

_NAMES = {
    "html_repr": "trackerlab.notebook.html",
    "to_networkx": "trackerlab.notebook.graph",
    "plot_tape": "trackerlab.notebook.drawing",
    "tape_svg": "trackerlab.notebook.drawing",
    "BackpropStepper": "trackerlab.notebook.stepper",
}


def __getattr__(name: str):
    module = _NAMES.get(name)
    if module is None:
        raise AttributeError(f"module 'trackerlab.notebook' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
