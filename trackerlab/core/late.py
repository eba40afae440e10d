"""Late binding, the package's one way round an import cycle: a module that needs something of a module above it
(which imports it) names it by a placeholder at its top, ``TrackedReal = Later("core.tracked", "TrackedReal")``, and
``bind()``, run once the modules are loaded (at the end of ``rules/__init__`` and of ``trackerlab/__init__``), puts
the object itself in the placeholder's place among the module's globals. Code that uses the name then pays nothing
for the indirection (``core.tape._new`` makes its wrappers with the classes themselves).

A placeholder whose module is not loaded when ``bind`` runs (the notebook layer, imported on first use) stays, and
calling it imports that module and calls the function it names. Imports run one way, from the higher module to
the lower; ``tests/project/test_imports.py`` checks that no module imports one that imports it back.
"""

from __future__ import annotations

import importlib
import sys

__all__ = ["Later", "bind"]

_PACKAGE = __name__.split(".")[0]


class Later:
    """A placeholder for ``name`` (an attribute path: ``"TrackedReal.__new__"``) of the package's module
    ``module`` (relative to the package: ``"rules.shape"``), until ``bind`` puts the object in its place.

    >>> reshape = Later("rules.shape", "reshape")
    >>> reshape
    Later('rules.shape', 'reshape')
    >>> reshape.resolve().__name__
    'reshape'
    """

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str):
        self.module = module
        self.name = name

    def resolve(self):
        """The object this placeholder stands for (importing its module if it is not loaded yet)."""
        value = importlib.import_module(f"{_PACKAGE}.{self.module}")
        for part in self.name.split("."):
            value = getattr(value, part)
        return value

    def __call__(self, *args, **kwargs):
        return self.resolve()(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Later({self.module!r}, {self.name!r})"


def bind() -> None:
    """Put in the place of every placeholder among the globals of the package's loaded modules the object it
    stands for, where its module is loaded and defines it by now (the rest stay: a later ``bind`` or a call
    resolves them)."""
    prefix = _PACKAGE + "."
    for module_name, module in list(sys.modules.items()):
        if module is None or not (module_name == _PACKAGE or module_name.startswith(prefix)):
            continue
        names = vars(module)
        for key, value in list(names.items()):
            if type(value) is Later and f"{prefix}{value.module}" in sys.modules:
                try:
                    names[key] = value.resolve()
                except AttributeError:  # its module is still being loaded: a later bind finds it
                    pass
