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
    _text,
    optim,
)
from ._language import set_language
from ._recording import no_grad
from .anomaly import detect_anomaly
from .api import back_, forward, gradient, hessian, jacobian
from .custom_rules import grad_rule, primitive, track
from .ops import Op, supported_operations
from .params import Grads, Params, update_, zero_grad_
from .rules.complex import (
    angle,
    conj,
    conjugate,
    imag,
    real,
)
from .rules.elementwise import (
    abs,
    add,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    astype,
    cbrt,
    cos,
    cosh,
    deg2rad,
    divide,
    exp,
    exp2,
    expm1,
    float_power,
    hypot,
    linspace,
    log,
    log1p,
    log2,
    log10,
    logaddexp,
    logaddexp2,
    multiply,
    negative,
    positive,
    power,
    rad2deg,
    reciprocal,
    sin,
    sinc,
    sinh,
    sqrt,
    square,
    subtract,
    tan,
    tanh,
)
from .rules.factorizations import eig, eigh, eigvals, eigvalsh, pinv, svd, svdvals
from .rules.indexing import (
    getitem,
    partition,
    sort,
    take,
    take_along_axis,
)
from .rules.inverses import cholesky, det, inv, matrix_power, slogdet, solve
from .rules.joins import (
    append,
    column_stack,
    concatenate,
    hstack,
    stack,
    vstack,
)
from .rules.linalg import (
    cross,
    dot,
    einsum,
    inner,
    kron,
    matmul,
    multi_dot,
    outer,
    tensordot,
    vdot,
    vecdot,
)
from .rules.matrices import diag, diagonal, norm, trace, tril, triu
from .rules.nn import (
    binary_cross_entropy_with_logits,
    cross_entropy,
    elu,
    gelu,
    leaky_relu,
    log_sigmoid,
    log_softmax,
    relu,
    sigmoid,
    silu,
    softmax,
    softplus,
)
from .rules.reductions import (
    cumsum,
    logsumexp,
    max,
    mean,
    min,
    nanmean,
    nansum,
    prod,
    std,
    sum,
    var,
)
from .rules.remainders import (
    divmod,
    fmod,
    mod,
    remainder,
)
from .rules.selection import (
    clip,
    fmax,
    fmin,
    maximum,
    minimum,
    nan_to_num,
    select,
    where,
)
from .rules.shape import (
    atleast_1d,
    atleast_2d,
    atleast_3d,
    broadcast_to,
    copy,
    diff,
    expand_dims,
    flip,
    fliplr,
    flipud,
    matrix_transpose,
    moveaxis,
    pad,
    ravel,
    repeat,
    reshape,
    roll,
    rollaxis,
    rot90,
    squeeze,
    swapaxes,
    tile,
    transpose,
)
from .rules.splits import (
    array_split,
    dsplit,
    hsplit,
    split,
    vsplit,
)
from .rules.utility import checkpoint, hook, identity, nobacksies
from .tapecheck import check_tape
from .testing import check_grads
from .tracked import Call, Tracked, TrackedArray, TrackedReal, data, grad, isleaf, istracked, param, tracker
from .walk import Step, backprop_steps

__version__ = "0.1.0"

__all__ = [
    "Call",
    "Grads",
    "Op",
    "Params",
    "Step",
    "Tracked",
    "TrackedArray",
    "TrackedReal",
    "abs",
    "add",
    "angle",
    "append",
    "arccos",
    "arccosh",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctan2",
    "arctanh",
    "array_split",
    "astype",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "back_",
    "backprop_steps",
    "binary_cross_entropy_with_logits",
    "broadcast_to",
    "cbrt",
    "check_grads",
    "check_tape",
    "checkpoint",
    "cholesky",
    "clip",
    "column_stack",
    "concatenate",
    "conj",
    "conjugate",
    "copy",
    "cos",
    "cosh",
    "cross",
    "cross_entropy",
    "cumsum",
    "data",
    "deg2rad",
    "det",
    "detect_anomaly",
    "diag",
    "diagonal",
    "diff",
    "divide",
    "divmod",
    "dot",
    "dsplit",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "einsum",
    "elu",
    "exp",
    "exp2",
    "expand_dims",
    "expm1",
    "flip",
    "fliplr",
    "flipud",
    "float_power",
    "fmax",
    "fmin",
    "fmod",
    "forward",
    "gelu",
    "getitem",
    "grad",
    "grad_rule",
    "gradient",
    "hessian",
    "hook",
    "hsplit",
    "hstack",
    "hypot",
    "identity",
    "imag",
    "inner",
    "inv",
    "isleaf",
    "istracked",
    "jacobian",
    "kron",
    "leaky_relu",
    "linspace",
    "log",
    "log1p",
    "log2",
    "log10",
    "log_sigmoid",
    "log_softmax",
    "logaddexp",
    "logaddexp2",
    "logsumexp",
    "matmul",
    "matrix_power",
    "matrix_transpose",
    "max",
    "maximum",
    "mean",
    "min",
    "minimum",
    "mod",
    "moveaxis",
    "multi_dot",
    "multiply",
    "nan_to_num",
    "nanmean",
    "nansum",
    "negative",
    "no_grad",
    "nobacksies",
    "norm",
    "optim",
    "outer",
    "pad",
    "param",
    "partition",
    "pinv",
    "positive",
    "power",
    "primitive",
    "prod",
    "rad2deg",
    "ravel",
    "real",
    "reciprocal",
    "relu",
    "remainder",
    "repeat",
    "reshape",
    "roll",
    "rollaxis",
    "rot90",
    "select",
    "set_language",
    "sigmoid",
    "silu",
    "sin",
    "sinc",
    "sinh",
    "slogdet",
    "softmax",
    "softplus",
    "solve",
    "sort",
    "split",
    "sqrt",
    "square",
    "squeeze",
    "stack",
    "std",
    "subtract",
    "sum",
    "supported_operations",
    "svd",
    "svdvals",
    "swapaxes",
    "take",
    "take_along_axis",
    "tan",
    "tanh",
    "tensordot",
    "tile",
    "trace",
    "track",
    "tracker",
    "transpose",
    "tril",
    "triu",
    "update_",
    "var",
    "vdot",
    "vecdot",
    "vsplit",
    "vstack",
    "where",
    "zero_grad_",
]

# The notebook layer is imported on first use, so that ``import trackerlab`` stays light.
_NOTEBOOK = ("to_networkx", "plot_tape", "tape_svg", "BackpropStepper")
__all__ += list(_NOTEBOOK)


def __getattr__(name: str):
    if name in _NOTEBOOK:
        from . import notebook

        return getattr(notebook, name)
    raise AttributeError(f"module 'trackerlab' has no attribute {name!r}")


def _html_repr(value) -> str:
    from .notebook.html import html_repr

    return html_repr(value)


_text.HTML_REPR = _html_repr  # tracked values' _repr_html_: the notebook layer draws it, loaded on first use


def load_ipython_extension(ipython) -> None:
    """``%load_ext trackerlab``: registers the ``%%track`` and ``%tape`` magics."""
    from .notebook.magics import load_ipython_extension as load

    load(ipython)
