"""Matrices of derivatives built on ``forward``'s backpropagator: ``jacobian`` (one walk per output) and
``hessian`` (the Jacobian of the gradient: nested AD)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .api import _NESTED, forward
from .backends.arrays import library_name, namespace
from .core.errors import Caller
from .core.recording import RECORDING
from .core.tracebacks import entry_point
from .core.tracked import _TrackedValue, data, param
from .core.validation import check_loss, check_numbers
from .rules.complex import imag, real
from .rules.joins import stack
from .rules.shape import reshape
from .trees import flatten, is_structure

__all__ = ["hessian", "jacobian"]


@entry_point
def jacobian(f: Callable, x: Any) -> Any:
    """The Jacobian of ``f`` at ``x``, a plain array of shape ``f(x).shape + x.shape``; inside a function being
    differentiated (a third derivative, the gradient of a Hessian), a tracked one where it depends on tracked
    values, so that it can be differentiated.

    ``x`` may be a structure (nested dicts, lists, tuples, namedtuples, dataclasses of arrays), and ``f`` may
    return one: the result then has ``f``'s structure, with ``x``'s structure at each of its leaves, holding the
    Jacobian of that result with respect to that leaf of ``x`` (as JAX's ``jacobian`` of pytrees).

    >>> import trackerlab as tl
    >>> tl.jacobian(lambda x: x * x, [1.0, 2.0])
    array([[2., 0.],
           [0., 4.]])
    >>> tl.jacobian(lambda p: p["a"] * p["b"], {"a": 2.0, "b": 3.0})
    {'a': 3.0, 'b': 2.0}
    """
    if is_structure(x):
        with _JACOBIAN:
            leaves, _, rebuild_x = flatten(x)
        y, back = forward(lambda *xs: f(rebuild_x(iter(xs))), *leaves)
    else:
        leaves, rebuild_x = [x], None
        y, back = forward(f, x)
    with _JACOBIAN:
        if is_structure(y):
            outputs, _, rebuild_y = flatten(y)
        else:
            outputs, rebuild_y = [y], None
        for out in outputs:
            check_numbers(out)
    x_values = [data(v) if isinstance(v, _TrackedValue) else data(param(v)) for v in leaves]
    if rebuild_x is None and rebuild_y is None and _complex(data(y)) and not _complex(x_values[0]):
        # a real x and complex values: a backward pass gives the derivative of the real part of what it is seeded
        # with, so the Jacobian is that of the real part plus i times that of the imaginary part, each a walk
        # (a real seed alone dropped the imaginary part)
        return jacobian(lambda x: real(f(x)), x) + 1j * jacobian(lambda x: imag(f(x)), x)
    inside = RECORDING.differentiating > 0 or getattr(_NESTED, "depth", 0) > 0  # a function being differentiated
    by_output = []
    for k, out in enumerate(outputs):
        y_value = data(out)
        out_shape = tuple(getattr(y_value, "shape", ()))
        n_out = math.prod(out_shape)
        xp = namespace(y_value, *x_values)
        rows: list[list] = [[] for _ in leaves]
        recorded = [False] * len(leaves)
        for i in range(n_out):
            if out_shape:
                seed = xp.zeros(n_out, dtype=getattr(y_value, "dtype", xp.float64))
                seed[i] = 1
                seed = xp.reshape(seed, out_shape)
            else:
                seed = 1.0
            # one result seeded, the others 0 (a zero number: no term of the walk's loss)
            Δ = seed if rebuild_y is None else rebuild_y(iter([seed if j == k else 0.0 for j in range(len(outputs))]))
            for j, row in enumerate(back(Δ)):
                if inside and isinstance(row, _TrackedValue) and not row.tracker.isleaf:
                    recorded[j] = True  # the walk was recorded: the row depends on tracked values (x, or f's closure)
                rows[j].append(row)
        Js = [_assemble(rows[j], out_shape, x_values[j], recorded[j]) for j in range(len(leaves))]
        by_output.append(Js[0] if rebuild_x is None else rebuild_x(iter(Js)))
    return by_output[0] if rebuild_y is None else rebuild_y(iter(by_output))


def _assemble(rows: list, out_shape: tuple, x_value, recorded: bool):
    """The Jacobian of shape ``out_shape + x.shape`` from its rows, x's sensitivities for each output element."""
    in_shape = tuple(getattr(x_value, "shape", ()))
    # inside a function being differentiated, a Jacobian that depends on tracked values (a tracked x, a
    # parameter f closes over) is recorded, so that its gradient reaches them (a plain J was a constant there:
    # a third derivative through hessian came out 0, and so did the gradient of a Jacobian with respect to
    # the parameters of f, without a word)
    if recorded:
        J = stack([reshape(row, (-1,)) for row in rows])
        return reshape(J, out_shape + in_shape)
    # the rows are x's sensitivities: of x's library (NumPy for a NumPy x over dask data, which lands them)
    rows = [data(row) for row in rows]
    rp = namespace(*rows) if rows else namespace(x_value)
    rows = [rp.reshape(rp.asarray(row), (-1,)) for row in rows]
    J = rp.stack(rows) if rows else rp.zeros((0, math.prod(in_shape)))
    J = rp.reshape(J, out_shape + in_shape)
    return J if J.ndim or library_name(J) != "numpy" else J.item()  # device values stay there; complex stays complex


def _complex(value) -> bool:
    xp = namespace(value)
    return xp.isdtype(xp.asarray(value).dtype, "complex floating")


@entry_point
def hessian(f: Callable, x: Any) -> Any:
    """The Hessian of the scalar function ``f`` at ``x``: the Jacobian of its gradient (nested AD). For a
    structure ``x``, a structure of structures: ``H[a][b]`` is the block of the leaves ``a`` and ``b`` of ``x``,
    of shape ``a.shape + b.shape``.

    >>> import trackerlab as tl
    >>> tl.hessian(lambda x: tl.sum(x ** 3), [1.0, 2.0])
    array([[ 6.,  0.],
           [ 0., 12.]])
    """

    def grad_f(x):
        y, back = forward(f, x)
        with _HESSIAN:
            check_loss(y)
        return back()[0]

    return jacobian(grad_f, x)


_JACOBIAN = Caller("jacobian")
_HESSIAN = Caller("hessian")
