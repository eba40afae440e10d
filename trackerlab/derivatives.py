"""Matrices of derivatives built on ``forward``'s backpropagator: ``jacobian`` (one walk per output) and
``hessian`` (the Jacobian of the gradient: nested AD)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .api import _NESTED, forward
from .backends.arrays import library_name, namespace
from .core.recording import RECORDING
from .core.tracked import _TrackedValue, data, param
from .core.validation import check_loss, check_numbers
from .ops.registry import operations

__all__ = ["hessian", "jacobian"]


def jacobian(f: Callable, x: Any) -> Any:
    """The Jacobian of ``f`` at ``x``, a plain array of shape ``f(x).shape + x.shape``; inside a function being
    differentiated (a third derivative, the gradient of a Hessian), a tracked one where it depends on tracked
    values, so that it can be differentiated.

    >>> import trackerlab as tl
    >>> tl.jacobian(lambda x: x * x, [1.0, 2.0])
    array([[2., 0.],
           [0., 4.]])
    """
    y, back = forward(f, x)
    check_numbers(y, "jacobian")
    y_value = data(y)
    x_value = data(x) if isinstance(x, _TrackedValue) else data(param(x))
    out_shape = tuple(getattr(y_value, "shape", ()))
    in_shape = tuple(getattr(x_value, "shape", ()))
    n_out = math.prod(out_shape)
    xp = namespace(y_value, x_value)
    rows = []
    recorded = False
    inside = RECORDING.differentiating > 0 or getattr(_NESTED, "depth", 0) > 0  # a function being differentiated
    for i in range(n_out):
        if out_shape:
            seed = xp.zeros(n_out, dtype=getattr(y_value, "dtype", xp.float64))
            seed[i] = 1
            seed = xp.reshape(seed, out_shape)
        else:
            seed = 1.0
        row = back(seed)[0]
        if inside and isinstance(row, _TrackedValue) and not row.tracker.isleaf:
            recorded = True  # the walk was recorded: the row depends on tracked values (x, or f's closure)
        rows.append(row)
    # inside a function being differentiated, a Jacobian that depends on tracked values (a tracked x, a
    # parameter f closes over) is recorded, so that its gradient reaches them (a plain J was a constant there:
    # a third derivative through hessian came out 0, and so did the gradient of a Jacobian with respect to
    # the parameters of f, without a word)
    if recorded:
        ops = operations()
        J = ops["stack"]([ops["reshape"](row, (-1,)) for row in rows])
        return ops["reshape"](J, out_shape + in_shape)
    # the rows are x's sensitivities: of x's library (NumPy for a NumPy x over dask data, which lands them)
    rows = [data(row) for row in rows]
    rp = namespace(*rows) if rows else namespace(x_value)
    rows = [rp.reshape(rp.asarray(row), (-1,)) for row in rows]
    J = rp.stack(rows) if rows else rp.zeros((0, math.prod(in_shape)))
    J = rp.reshape(J, out_shape + in_shape)
    return J if J.ndim or library_name(J) != "numpy" else J.item()  # device values stay there; complex stays complex


def hessian(f: Callable, x: Any) -> Any:
    """The Hessian of the scalar function ``f`` at ``x``: the Jacobian of its gradient (nested AD).

    >>> import trackerlab as tl
    >>> tl.hessian(lambda x: tl.sum(x ** 3), [1.0, 2.0])
    array([[ 6.,  0.],
           [ 0., 12.]])
    """

    def grad_f(x):
        y, back = forward(f, x)
        check_loss(y, "hessian")
        return back()[0]

    return jacobian(grad_f, x)
