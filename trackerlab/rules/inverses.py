"""Inverses, determinants and linear solves and their gradient rules (family ``inverses``): ``inv``,
``det``, ``slogdet``, ``solve``, ``cholesky`` and ``matrix_power``.

Stacks of matrices (``(..., n, n)``) work wherever NumPy's ``linalg`` accepts them. Pullbacks are
written with ``inv``, ``solve`` and ``matmul`` themselves, so they can be differentiated again; the
gradient of ``det`` and ``slogdet`` at a singular matrix comes from its cofactors.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from ..backends.arrays import is_lazy
from ..core.tracked import data, istracked
from ..ops.registry import defop, register_rules
from ._util import (
    array,
    composite,
    div,
    integer,
    is_complex,
    lift,
    mT,
    ns,
    real_only,
    real_part,
    shape,
    unbroadcast,
    wrapper,
)
from .elementwise import abs as abs_
from .indexing import getitem
from .linalg import matmul
from .matrices import symmetric_from, triangle_adjoint, tril
from .shape import expand_dims, reshape


def _linalg(name: str):
    def impl(x):
        return getattr(ns(x).linalg, name)(x)

    impl.__name__ = name
    return impl


def _solve(a, b):
    """NumPy 2's ``solve``: a 1-D ``b`` is one vector for every matrix of ``a``; otherwise ``b`` is a stack of
    ``(M, K)`` matrices whose batch axes broadcast against ``a``'s. The batches are broadcast here, since
    not every library does it (CuPy's ``solve`` wants ``b``'s batch to be ``a``'s exactly)."""
    xp = ns(a, b)
    a, b = array(a), array(b)
    if b.ndim > 1 and a.shape[:-2] != b.shape[:-2]:
        batch = _broadcast_batch("solve", a.shape, b.shape)
        a = xp.broadcast_to(a, batch + tuple(a.shape[-2:]))
        b = xp.broadcast_to(b, batch + tuple(b.shape[-2:]))
    return xp.linalg.solve(a, b)


def _broadcast_batch(name: str, a_shape: tuple, b_shape: tuple) -> tuple:
    """The broadcast of the batch axes (all but the last two) of two stacks of matrices, or an error naming them."""
    x, y = tuple(a_shape[:-2]), tuple(b_shape[:-2])
    n = max(len(x), len(y))
    x, y = (1,) * (n - len(x)) + x, (1,) * (n - len(y)) + y
    if any(i != j and 1 not in (i, j) for i, j in zip(x, y)):
        raise ValueError(
            f"{name}: the batch axes of a {tuple(a_shape)} and b {tuple(b_shape)} do not broadcast "
            f"({tuple(a_shape[:-2])} against {tuple(b_shape[:-2])})"
        )
    return tuple(j if i == 1 else i for i, j in zip(x, y))


def _cholesky(x, upper=False):
    # NumPy's cholesky reads the lower triangle of x; with upper=True (NumPy 2) it reads the upper one, and
    # U is the transpose of the lower factor. Backends differ in the triangle they read (dask's reads the
    # upper one; array-api-compat's upper=True transposes the lower factor), so each is given the symmetric
    # matrix that NumPy's triangle stands for, and asked for its lower factor (dask's gives the upper one
    # unless told otherwise).
    symmetric = symmetric_from(x, upper)
    cholesky_ = ns(x).linalg.cholesky
    factor = cholesky_(symmetric, lower=True) if is_lazy(symmetric) else cholesky_(symmetric)
    return _mT_plain(factor) if upper else factor


def _mT_plain(x):
    n = x.ndim
    return ns(x).permute_dims(x, tuple(range(n - 2)) + (n - 1, n - 2))


inv = defop("inv", _linalg("inv"), family="inverses")
det = defop("det", _linalg("det"), family="inverses")
_slogdet_op = defop("slogdet", lambda x: ns(x).linalg.slogdet(x)[1], family="inverses", doc="log |det x|")
solve = defop("solve", _solve, family="inverses")
cholesky = defop(
    "cholesky", real_only("cholesky", _cholesky, "its rule is for real symmetric matrices"), arity=1, family="inverses"
)


SlogdetResult = namedtuple("SlogdetResult", "sign logabsdet")  # NumPy's fields: slogdet(x).logabsdet


@wrapper("slogdet")
def slogdet(x: Any) -> SlogdetResult:
    """``(sign, logabsdet)`` of the determinant, as ``numpy.linalg.slogdet``; ``logabsdet`` is tracked, and so is
    the sign of a complex matrix (a real one's is ±1, with slope 0).

    >>> import trackerlab as tl
    >>> sign, logdet = tl.slogdet(tl.param([[2.0, 0.0], [0.0, -3.0]]))
    >>> float(sign), round(float(logdet), 6)
    (-1.0, 1.791759)
    """
    plain = data(x)
    logabsdet = _slogdet_op(x)  # first: the recorded operation explains a failure (a library without slogdet)
    xp = ns(plain)
    sign = xp.linalg.slogdet(array(plain))[0]
    if istracked(x) and is_complex(plain) and bool(xp.all(xp.isfinite(data(logabsdet)))):
        # a complex sign det/|det| moves with x (a real one is ±1, with slope 0): recorded as d/|d| for the
        # determinant d of x scaled by the plain e^(-logabsdet/n), so |d| = 1 (no overflow); sign is unchanged by
        # a positive scale, so holding the scale constant gives its derivatives exactly, to any order
        scale = xp.exp(-array(data(logabsdet)) / shape(x)[-1])[..., None, None]
        d = det(x * scale)
        sign = d / abs_(d)
    return SlogdetResult(sign, logabsdet)


@composite("inverses")
def matrix_power(x: Any, n: int) -> Any:
    """``x`` multiplied by itself ``n`` times (``n < 0``: of its inverse), by repeated squaring."""
    if not integer(n) or len(shape(x)) < 2 or shape(x)[-1] != shape(x)[-2]:  # NumPy's refusal (_registry.composite)
        raise ValueError(f"x of shape {shape(x)}, exponent {n!r}")
    n = int(n)
    if n < 0:
        x, n = inv(x), -n
    result = None
    while n:
        if n & 1:
            result = x if result is None else matmul(result, x)
        n >>= 1
        if n:
            x = matmul(x, x)
    if result is None:
        xp = ns(x)
        plain = data(x)
        return xp.broadcast_to(xp.eye(shape(x)[-1], dtype=plain.dtype), shape(x))
    return result


# ----------------------------------------------------------------------------------------------------
# Pullbacks


def _det_rule(g, ans, x):
    # d det(x) = tr(adj(x) dx): the gradient is the cofactor matrix adj(x)ᵀ, which is det(x) x⁻ᵀ where x
    # is well conditioned, and the determinants of the minors where it is not (no inverse needed)
    inverse = _inverse_if_well_conditioned(x, "det")
    if inverse is None:
        return expand_dims(lift(g, ans), (-2, -1)) * _cofactors(x)
    return expand_dims(lift(g, ans) * ans, (-2, -1)) * mT(inv(x) if istracked(x) else inverse)


def _slogdet_rule(g, ans, x):
    # d log|det x| = Re tr(x⁻¹ dx); at a singular x the slope is adj(x)ᵀ / 0: inf or NaN, as NumPy divides
    g = expand_dims(lift(real_part(g), ans), (-2, -1))
    inverse = _inverse_if_well_conditioned(x, "slogdet")
    if inverse is None:
        return g * div(_cofactors(x), expand_dims(det(x), (-2, -1)))
    return g * mT(inv(x) if istracked(x) else inverse)


_RCOND = 1e-10  # below this reciprocal condition number, det(x) x⁻¹ keeps too few correct digits
_LARGEST_COFACTORS = 32  # the minors of an n×n matrix hold n⁴ numbers: 1M for 32×32


def _inverse_if_well_conditioned(x, name: str):
    """The inverse of the plain data of ``x`` where every matrix of it is well conditioned (its reciprocal
    condition number in the ∞-norm above ``_RCOND``); ``None`` where one is singular or nearly so."""
    plain = array(data(x))
    xp = ns(plain)
    if shape(x)[-1] == 0:  # 0×0 matrices: det is 1 and moves with nothing; their inverses are empty too
        return xp.zeros(shape(x), dtype=plain.dtype)
    try:
        inverse = xp.linalg.inv(plain)
    except ValueError:  # NumPy's and CuPy's LinAlgError: exactly singular
        inverse = None
    if inverse is not None:
        size_ = xp.max(xp.sum(xp.abs(plain), axis=-1), axis=-1)
        size_inverse = xp.max(xp.sum(xp.abs(inverse), axis=-1), axis=-1)
        rcond = 1.0 / (size_ * size_inverse)
        if bool(xp.all(xp.isfinite(size_inverse))) and bool(xp.all(rcond > _RCOND)):
            return inverse
    n = shape(x)[-1]
    if n > _LARGEST_COFACTORS:
        raise ValueError(
            f"{name}: the gradient at a singular or nearly singular {n}×{n} matrix needs its cofactors, "
            f"which trackerlab computes for matrices up to {_LARGEST_COFACTORS}×{_LARGEST_COFACTORS} only"
        )
    return None


def _cofactors(x):
    """The cofactor matrix of each matrix of ``x`` (``(-1)^(i+j)`` times the determinant of the minor without
    row i and column j), taken with ``getitem`` and ``det``, so that it can be differentiated again; it is
    adj(x)ᵀ, the gradient of det, and needs no inverse, so it holds at singular matrices too."""
    n = shape(x)[-1]
    xp = ns(x)
    plain = array(data(x))
    if n == 1:
        return xp.ones_like(plain)
    keep_ = [[k for k in range(n) if k != i] for i in range(n)]
    rows = xp.reshape(xp.asarray([[keep_[i] for _ in range(n)] for i in range(n)]), (n, n, n - 1, 1))
    cols = xp.reshape(xp.asarray([[keep_[j] for j in range(n)] for _ in range(n)]), (n, n, 1, n - 1))
    minors = getitem(x, (Ellipsis, rows, cols))
    signs = xp.asarray([[(-1.0) ** (i + j) for j in range(n)] for i in range(n)], dtype=plain.dtype)
    return det(minors) * signs


def _solve_parts(g, ans, a, b):
    """``(ḡ_b, ans)`` as stacks of column matrices: ``ḡ_b = a⁻ᵀ g`` solves the transposed system."""
    if len(shape(b)) == 1:  # NumPy 2: a 1-D b is one vector, whatever a's batch
        g, ans = expand_dims(g, -1), expand_dims(ans, -1)
    return solve(mT(a), g), ans


def _solve_a(g, ans, a, b):
    gb, x = _solve_parts(g, ans, a, b)
    return unbroadcast(a, -matmul(gb, mT(x)))


def _solve_b(g, ans, a, b):
    gb, _ = _solve_parts(g, ans, a, b)
    if len(shape(b)) == 1:
        gb = reshape(gb, shape(gb)[:-1])
    return unbroadcast(b, gb)


def _cholesky_rule(g, ans, x, upper=False):
    # Murray (2016): with L the lower factor of the symmetric matrix that the triangle read stands for, the
    # gradient with respect to that symmetric matrix is S = sym(L⁻ᵀ Φ(Lᵀ L̄) L⁻¹), Φ taking the lower
    # triangle with the diagonal halved; x's entries get it through the triangle that was read
    L, Lbar = (mT(ans), mT(g)) if upper else (ans, g)
    n = shape(x)[-1]
    xp = ns(ans)
    dtype = getattr(data(ans), "dtype", xp.float64)
    half = 1.0 - 0.5 * xp.eye(n, dtype=dtype)
    phi = tril(matmul(mT(L), Lbar)) * half
    L_inv = inv(L)
    S = matmul(matmul(mT(L_inv), phi), L_inv)
    return triangle_adjoint(0.5 * (S + mT(S)), upper)


RULES = {
    "inv": (lambda g, ans, x: -matmul(matmul(mT(ans), g), mT(ans)),),
    "det": (_det_rule,),
    "slogdet": (_slogdet_rule,),
    "solve": (_solve_a, _solve_b),
    "cholesky": (_cholesky_rule,),
}
register_rules("inverses", RULES)
