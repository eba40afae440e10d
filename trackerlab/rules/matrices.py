"""Parts and sizes of matrices and their gradient rules (family ``matrices``): ``trace``, ``diagonal``,
``diag``, ``triu``/``tril`` and ``norm``.

Stacks of matrices (``(..., n, n)``) work wherever NumPy's ``linalg`` accepts them. Pullbacks are
written with these same operations and the constant masks of diagonals and triangles, so they can be
differentiated again. Inverses, determinants and solves are in ``inverses.py``, decompositions in
``factorizations.py``.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from ..core.tracked import data, istracked
from ..ops.registry import defop, register_rules
from ._util import (
    Later,
    array,
    conj,
    integer,
    is_complex,
    lift,
    mask,
    mT,
    ns,
    real_part,
    shape,
    slope_of_abs,
    spread,
    unbroadcast,
    wrapper,
)
from .elementwise import abs
from .shape import expand_dims, moveaxis, pad

# a function of a family above this one that these rules call (see ``core.late.Later``)
svdvals = Later("rules.factorizations", "svdvals")


def _diagonal_mask(xp, n: int, m: int, offset: int, dtype):
    """The ``(n, m)`` matrix with ones on diagonal ``offset`` (a constant of the backend)."""
    rows = xp.reshape(xp.arange(n), (n, 1))
    cols = xp.reshape(xp.arange(m), (1, m))
    return xp.astype((cols - rows) == offset, dtype)


def _triangle_mask(xp, n: int, m: int, k: int, upper: bool):
    rows = xp.reshape(xp.arange(n), (n, 1))
    cols = xp.reshape(xp.arange(m), (1, m))
    return (cols - rows) >= k if upper else (cols - rows) <= k


def _to_last(x, axis1: int, axis2: int):
    """``x`` with ``axis1`` and ``axis2`` moved to the end."""
    xp = ns(x)
    return xp.moveaxis(array(x), (axis1, axis2), (-2, -1))


def _diagonal(x, offset=0, axis1=0, axis2=1):
    return ns(x).linalg.diagonal(_to_last(x, axis1, axis2), offset=offset)


def _trace(x, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    if dtype is not None or out is not None:
        raise TypeError("trace: dtype= and out= are not supported on tracked values")
    return ns(x).sum(_diagonal(x, offset, axis1, axis2), axis=-1)


def _diag(x, k=0):
    ns(x)
    x = array(x)
    if x.ndim == 2:
        return _diagonal(x, k)
    if x.ndim != 1:
        raise ValueError("diag: the input must be 1-D or 2-D")
    n = x.shape[0] + (k if k > 0 else -k)
    return _embed(x, n, n, k)


def _embed(v, n: int, m: int, offset: int):
    """The stack of ``(n, m)`` matrices with ``v[..., i]`` on diagonal ``offset`` and zeros elsewhere.

    ``v`` is padded to one entry per row (the row of its diagonal element), then spread along the row
    by the diagonal's mask: only tracked operations on ``v``, so the result can be differentiated again.
    """
    row0 = -offset if offset < 0 else 0
    k = shape(v)[-1]
    widths = [(0, 0)] * (len(shape(v)) - 1) + [(row0, n - row0 - k)]
    rows = pad(v, widths) if row0 or n - row0 - k else v
    xp = ns(v)
    return expand_dims(rows, -1) * _diagonal_mask(xp, n, m, offset, getattr(data(v), "dtype", xp.float64))


def _triangle(upper: bool):
    def impl(x, k=0):
        xp = ns(x)
        x = array(x)
        if x.ndim == 0:
            raise ValueError(f"{'triu' if upper else 'tril'}: the input must have at least 1 dimension")
        n, m = x.shape[-2:] if x.ndim > 1 else x.shape * 2  # NumPy: a vector is a row repeated, (n,) → (n, n)
        keep = _triangle_mask(xp, n, m, k, upper)
        return xp.where(keep, x, xp.zeros_like(x))

    impl.__name__ = "triu" if upper else "tril"
    return impl


def _norm_axes(ndim: int, ord, axis) -> tuple:  # noqa: A002  (NumPy's argument names)
    """``('vector', axes)`` or ``('matrix', (row, col))``, as ``numpy.linalg.norm`` reads its arguments."""
    kind, axes = _norm_kind(ndim, ord, axis)
    if kind == "vector" and isinstance(ord, str):  # NumPy's refusal: 'fro' and 'nuc' are norms of matrices
        raise ValueError(f"norm: ord={ord!r} is a norm of matrices; a vector's 2-norm is ord=None (or 2)")
    return kind, axes


def _norm_kind(ndim: int, ord, axis) -> tuple:  # noqa: A002  (NumPy's argument names)
    if axis is None:
        if ord is None or ndim == 1:
            return "vector", tuple(range(ndim))
        if ndim == 2:
            return "matrix", (0, 1)
        raise ValueError("norm: an ord is given for an array of more than 2 dimensions; pass axis")
    if integer(axis):
        return "vector", (_within(axis, ndim),)
    if len(axis) == 1:
        return "vector", (_within(axis[0], ndim),)
    if len(axis) == 2:
        return "matrix", (_within(axis[0], ndim), _within(axis[1], ndim))
    raise ValueError("norm: axis must be an int or a pair of ints")


def _within(axis, ndim: int) -> int:
    """``axis`` as a non-negative axis of an array of dimension ``ndim``; one beyond it is an error, as in NumPy."""
    if not -ndim <= int(axis) < ndim:
        raise ValueError(f"norm: axis {int(axis)} is out of bounds for an array of dimension {ndim}")
    return int(axis) % ndim


def _norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002  (NumPy's argument names)
    xp = ns(x)
    x = array(x)
    kind, axes = _norm_axes(x.ndim, ord, axis)
    if kind == "vector" or ord in (None, "fro"):
        p = 2 if ord in (None, "fro") else ord
        return xp.linalg.vector_norm(x, axis=axes, keepdims=keepdims, ord=p)
    row, col = axes
    if ord in (1, -1, math.inf, -math.inf):
        summed, reduced = (row, col) if ord in (1, -1) else (col, row)
        sums = xp.sum(xp.abs(x), axis=summed, keepdims=True)
        best = xp.max(sums, axis=reduced, keepdims=True) if ord > 0 else xp.min(sums, axis=reduced, keepdims=True)
        return best if keepdims else xp.reshape(best, tuple(n for i, n in enumerate(x.shape) if i not in axes))
    moved = xp.moveaxis(x, (row, col), (-2, -1))
    out = xp.linalg.matrix_norm(moved, ord=ord, keepdims=False)
    return xp.expand_dims(xp.expand_dims(out, axis=min(axes)), axis=max(axes)) if keepdims else out


trace = defop("trace", _trace, arity=1, family="matrices")
diagonal = defop("diagonal", _diagonal, arity=1, family="matrices")
diag = defop("diag", _diag, arity=1, family="matrices")
triu = defop("triu", _triangle(True), arity=1, family="matrices")
tril = defop("tril", _triangle(False), arity=1, family="matrices")
_norm_op = defop("norm", _norm, arity=1, family="matrices", doc="Vector and matrix norms, as numpy.linalg.norm.")


def symmetric_from(x, upper: bool):
    """The plain symmetric matrices that one triangle of the plain ``x`` stands for (the lower one, or the
    upper one with ``upper``): what NumPy's ``cholesky`` and ``eigh`` read, given to a backend that may read
    the other triangle."""
    xp = ns(x)
    n = x.shape[-1]
    return xp.where(_triangle_mask(xp, n, n, 0, upper), x, xp.matrix_transpose(x))


def triangle_adjoint(s, upper: bool):
    """The gradient with respect to every entry of ``x`` of a function that reads one triangle of ``x`` (the
    lower one, or the upper one with ``upper``) as the symmetric matrix it stands for, given ``s``, the
    gradient with respect to that symmetric matrix: an off-diagonal entry read stands for two entries of
    it, so it gets s + sᵀ there; the diagonal gets s once, and the triangle not read 0 (as NumPy's
    ``cholesky``, ``eigh`` and ``eigvalsh`` do, which never look at it)."""
    if upper:
        return triu(s) + triu(mT(s), 1)
    return tril(s) + tril(mT(s), -1)


@wrapper("norm")
def norm(
    x: Any,
    ord: float | Literal["fro", "nuc"] | None = None,  # noqa: A002  (NumPy's argument names)
    axis: int | tuple[int, int] | None = None,
    keepdims: bool = False,
) -> Any:
    """``numpy.linalg.norm``: vector p-norms and the Frobenius, 1, -1, inf and -inf matrix norms.

    The matrix 2-norm (the largest singular value), -2 (the smallest) and nuclear norm (their sum)
    go through ``svdvals``.

    >>> import trackerlab as tl
    >>> tl.norm(tl.param([3.0, 4.0]))
    5.0 (tracked)
    """
    kind, axes = _norm_axes(len(shape(x)), ord, axis)
    if kind == "matrix" and ord in (2, -2, "nuc") and istracked(x):
        return _singular_norm(x, ord, axes, keepdims)
    return _norm_op(x, ord=ord, axis=axis, keepdims=keepdims)


def _singular_norm(x, ord, axes, keepdims):  # noqa: A002  (NumPy's argument names)
    """The matrix norms made of singular values: the largest (2), the smallest (-2), their sum ('nuc')."""
    from .reductions import max, min, sum  # here, so that the module's own max and min stay Python's

    s = svdvals(moveaxis(x, axes, (-2, -1)))
    out = {2: max, -2: min, "nuc": sum}[ord](s, axis=-1)
    return expand_dims(out, tuple(sorted(axes))) if keepdims else out


# ----------------------------------------------------------------------------------------------------
# Pullbacks


def _diagonal_rule(g, ans, x, offset=0, axis1=0, axis2=1):
    n, m = shape(x)[axis1], shape(x)[axis2]
    ndim = len(shape(x))
    return moveaxis(_embed(g, n, m, offset), (-2, -1), (axis1 % ndim, axis2 % ndim))


def _trace_rule(g, ans, x, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    n, m = shape(x)[axis1], shape(x)[axis2]
    ndim = len(shape(x))
    xp = ns(ans)
    eye = _diagonal_mask(xp, n, m, offset, getattr(data(x), "dtype", xp.float64))
    full = expand_dims(lift(g, x), (-2, -1)) * eye
    return moveaxis(full, (-2, -1), (axis1 % ndim, axis2 % ndim))


def _diag_rule(g, ans, x, k=0):
    if len(shape(x)) == 2:
        return _diagonal_rule(g, ans, x, k)
    return diagonal(g, k)


def _triangle_rule(upper: bool):
    def pullback(g, ans, x, k=0):
        xp = ns(ans)
        kept = g * mask(_triangle_mask(xp, shape(ans)[-2], shape(ans)[-1], k, upper), ans)
        return kept if len(shape(x)) > 1 else unbroadcast(x, kept)  # a vector's rows are summed back

    return pullback


def _norm_rule(g, ans, x, ord=None, axis=None, keepdims=False):  # noqa: A002  (NumPy's argument names)
    # norms are real functions of |x|: for complex x each |x_i| sends Re(g) · conj(x_i) / |x_i| (the
    # convention of HIPS autograd and JAX); slope_of_abs is sign(x) for real x
    kind, axes = _norm_axes(len(shape(x)), ord, axis)
    g = spread(real_part(g), x, axes, keepdims)
    norm_ = spread(ans, x, axes, keepdims)
    plain, size_ = data(x), data(norm_)
    safe = norm_ + mask(size_ == 0, size_)  # at x = 0 the subgradient 0 is taken, as for abs
    if ord in (None, "fro", 2) and (kind == "vector" or ord != 2):
        return g * (conj(x) if is_complex(x) else x) / safe
    if kind == "vector":
        if ord in (math.inf, -math.inf):
            return g * slope_of_abs(x) * _shared(_abs_plain(plain) == size_, axes, size_)
        if ord == 0:  # the number of nonzero elements: flat
            return ns(plain).zeros_like(array(plain))
        if ord == 1:
            return g * slope_of_abs(x)
        return g * slope_of_abs(x) * (abs(x) / safe) ** (ord - 1)
    row, col = axes
    if ord in (1, -1, math.inf, -math.inf):
        summed = row if ord in (1, -1) else col
        sums = ns(plain).sum(_abs_plain(plain), axis=summed, keepdims=True)
        # every row of a winning column is a hit: count the columns (rows) that tie, not their elements
        return g * slope_of_abs(x) * (_shared(sums == size_, axes, size_) * shape(x)[summed])
    # tl.norm sends these through svdvals (_singular_norm): only a direct call of the operation gets here
    raise TypeError(f"norm: ord={ord!r} of a matrix is a function of its singular values: use tl.norm (svdvals)")


def _abs_plain(v):
    return ns(v).abs(array(v))


def _shared(hit, axes, like):
    """A winner mask (plain booleans) as weights that share the sensitivity evenly between ties."""
    weights = mask(hit, like)
    return weights / ns(weights).sum(weights, axis=axes, keepdims=True)


RULES = {
    "trace": (_trace_rule,),
    "diagonal": (_diagonal_rule,),
    "diag": (_diag_rule,),
    "triu": (_triangle_rule(True),),
    "tril": (_triangle_rule(False),),
    "norm": (_norm_rule,),
}
register_rules("matrices", RULES)
