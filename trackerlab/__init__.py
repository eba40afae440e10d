"""trackerlab: Flux.Tracker for Python, made for notebooks.

Tracked arrays and reals record a ``Call`` tape; one iterative walk back-propagates over it; the
notebook layer (imported lazily) shows the tape and steps through the walk.

>>> import trackerlab as tl
>>> tl.gradient(lambda a, b: a * b, 2, 3)
(3.0 (tracked), 2.0 (tracked))
"""

from __future__ import annotations

from . import exercises, optim
from .anomaly import detect_anomaly
from .api import WithGradient, back_, forward, gradient, withgradient
from .backends.dask import progress
from .checks.grads import check_grads
from .checks.tape import check_tape
from .core.errors import (
    AnomalyError,
    ArgumentError,
    DTypeError,
    ExerciseError,
    FirstOrderError,
    LazyValueError,
    MissingSpecialFunctions,
    NonFiniteError,
    ParameterError,
    ReadOnlyError,
    ReplayError,
    ShapeError,
    StaleValueError,
    TrackerlabError,
    UndefinedGradient,
)
from .core.late import bind
from .core.recording import no_grad, scope
from .core.tracked import (
    Call,
    Tracked,
    TrackedArray,
    TrackedReal,
    data,
    grad,
    isleaf,
    istracked,
    param,
    scopes,
    tracker,
)
from .core.walk import Step, backprop_steps
from .derivatives import hessian, jacobian
from .forward_mode import hvp, jacfwd, jvp
from .ops import methods  # noqa: F401  (binds operators and methods to tracked values)
from .ops.custom import grad_rule, primitive, track
from .ops.registry import Op, supported_operations
from .params import Grads, Params, update_, zero_grad_
from .presentation.language import set_language
from .rules import functions as _functions
from .rules.utility import checkpoint, hook, nobacksies

__version__ = "0.1.0"

# The engine's API, then every operation, wrapper and composite of the rule tables as ``tl.<name>``
# (read from the tables: a new operation needs no line here).
__all__ = [
    "AnomalyError",
    "ArgumentError",
    "Call",
    "DTypeError",
    "ExerciseError",
    "FirstOrderError",
    "Grads",
    "LazyValueError",
    "MissingSpecialFunctions",
    "NonFiniteError",
    "Op",
    "ParameterError",
    "Params",
    "ReadOnlyError",
    "ReplayError",
    "ShapeError",
    "StaleValueError",
    "Step",
    "Tracked",
    "TrackedArray",
    "TrackedReal",
    "TrackerlabError",
    "UndefinedGradient",
    "WithGradient",
    "back_",
    "backprop_steps",
    "check_grads",
    "check_tape",
    "checkpoint",
    "data",
    "detect_anomaly",
    "exercises",
    "forward",
    "grad",
    "grad_rule",
    "gradient",
    "hessian",
    "hook",
    "hvp",
    "isleaf",
    "istracked",
    "jacfwd",
    "jacobian",
    "jvp",
    "no_grad",
    "nobacksies",
    "optim",
    "param",
    "primitive",
    "progress",
    "scope",
    "scopes",
    "set_language",
    "supported_operations",
    "track",
    "tracker",
    "update_",
    "withgradient",
    "zero_grad_",
]
bind()  # every placeholder of a lower module for a higher one's object (core.late), now that all are loaded
globals().update(_functions())
__all__ += sorted(_functions())

# The notebook layer is imported on first use, so that ``import trackerlab`` stays light.
_NOTEBOOK = ("to_networkx", "plot_tape", "tape_svg", "BackpropStepper")
__all__ += list(_NOTEBOOK)


def __getattr__(name: str):
    if name in _NOTEBOOK:
        from . import notebook

        return getattr(notebook, name)
    raise AttributeError(f"module 'trackerlab' has no attribute {name!r}")


def load_ipython_extension(ipython) -> None:
    """``%load_ext trackerlab``: registers the ``%%track`` and ``%tape`` magics."""
    from .notebook.magics import load_ipython_extension as load

    load(ipython)
