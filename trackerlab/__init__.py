"""trackerlab: Flux.Tracker for Python, made for notebooks.

Tracked arrays and reals record a ``Call`` tape; one iterative walk back-propagates over it; the
notebook layer (imported lazily) shows the tape and steps through the walk.

>>> import trackerlab as tl
>>> tl.gradient(lambda a, b: a * b, 2, 3)
(3.0 (tracked), 2.0 (tracked))
"""

from __future__ import annotations

from . import (
    _methods,  # noqa: F401  (binds operators and methods to tracked values)
    optim,
)
from .api import Grads, Params, back_, forward, gradient, hessian, jacobian, update_, zero_grad_
from .ops import Op, grad_rule, primitive, supported_operations, track
from .rules.elementwise import (
    add,
    cos,
    divide,
    exp,
    log,
    maximum,
    minimum,
    multiply,
    negative,
    power,
    sin,
    subtract,
    tanh,
)
from .rules.indexing import getitem
from .rules.linalg import matmul
from .rules.nn import relu
from .rules.reductions import mean, sum
from .rules.shape import broadcast_to, reshape, transpose
from .rules.utility import checkpoint, hook, identity, nobacksies
from .testing import check_grads
from .tracked import Call, Tracked, TrackedArray, TrackedReal, data, grad, isleaf, istracked, no_grad, param, tracker
from .walk import Step, backprop_steps

__version__ = "0.1.0"

__all__ = [
    "ADAM",
    "Call",
    "Grads",
    "Op",
    "Params",
    "Step",
    "Tracked",
    "TrackedArray",
    "TrackedReal",
    "add",
    "back_",
    "backprop_steps",
    "broadcast_to",
    "check_grads",
    "checkpoint",
    "cos",
    "data",
    "divide",
    "exp",
    "forward",
    "getitem",
    "grad",
    "grad_rule",
    "gradient",
    "hessian",
    "hook",
    "identity",
    "isleaf",
    "istracked",
    "jacobian",
    "log",
    "matmul",
    "maximum",
    "mean",
    "minimum",
    "multiply",
    "negative",
    "no_grad",
    "nobacksies",
    "optim",
    "param",
    "power",
    "primitive",
    "relu",
    "reshape",
    "sin",
    "subtract",
    "sum",
    "supported_operations",
    "tanh",
    "track",
    "tracker",
    "transpose",
    "update_",
    "zero_grad_",
]
__all__.remove("ADAM")

# The notebook layer is imported on first use, so that ``import trackerlab`` stays light.
_NOTEBOOK = {
    "to_networkx": "trackerlab.notebook.graph",
    "plot_tape": "trackerlab.notebook.drawing",
    "tape_svg": "trackerlab.notebook.drawing",
    "BackpropStepper": "trackerlab.notebook.stepper",
}


def __getattr__(name: str):
    module = _NOTEBOOK.get(name)
    if module is None:
        raise AttributeError(f"module 'trackerlab' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


def load_ipython_extension(ipython) -> None:
    """``%load_ext trackerlab``: registers the ``%%track`` and ``%tape`` magics."""
    from .notebook.magics import load_ipython_extension as load

    load(ipython)
