"""The rule tables, one module per op family; importing this package registers every operation.

``functions()`` gives the public function of each operation, as ``tl.<name>`` exposes it and NumPy's
protocols dispatch to it: the operation itself, or the thin wrapper that calls it (``concatenate``
takes a list, ``slogdet`` returns a pair), and the composites built from operations (``hstack``).
"""

from __future__ import annotations

from collections.abc import Callable

from ..core.late import bind

# Each family imports only the families below it; a function of a family above is named by a placeholder
# (``core.late.Later``), which ``bind`` replaces once every family is loaded.
from . import (  # noqa: F401  (importing a family registers it; _bind_later reads them by name)
    _util,
    complex,
    conv,
    covariance,
    creation,
    elementwise,
    factorizations,
    indexing,
    inverses,
    joins,
    linalg,
    matrices,
    nn,
    quantiles,
    reductions,
    remainders,
    selection,
    shape,
    signal,
    special,
    splits,
    utility,
)
from ._util import COMPOSITES, WRAPPERS

FAMILIES = (
    "elementwise",
    "complex",
    "remainders",
    "selection",
    "reductions",
    "shape",
    "joins",
    "splits",
    "signal",
    "creation",
    "indexing",
    "quantiles",
    "linalg",
    "matrices",
    "inverses",
    "factorizations",
    "covariance",
    "nn",
    "special",
    "utility",
    "conv",
)


bind()  # the families' placeholders for one another's functions (and those of the modules loaded so far)


def functions() -> dict[str, Callable]:
    """Every public function of the op library by name: operations with a rule, wrappers, composites."""
    from ..ops.registry import operations

    out: dict[str, Callable] = {
        name: op for name, op in operations().items() if op.rule is not None and not name.startswith("_")
    }
    out.update(WRAPPERS)
    out.update({name: f for name, (_, f) in COMPOSITES.items()})
    return out


_TABLE: dict[str, Callable] = {}


def function(name: str) -> Callable:
    """The public function called ``name`` (a fast look-up for NumPy's dispatch); ``KeyError`` if none."""
    f = _TABLE.get(name)
    if f is None:  # first use, or a rule registered since: read the tables again
        _TABLE.clear()
        _TABLE.update(functions())
        f = _TABLE[name]
    return f


def composites() -> dict[str, tuple[str, Callable]]:
    """The public functions composed of operations, by name: ``(family, function)``."""
    return dict(COMPOSITES)
