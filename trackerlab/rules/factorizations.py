"""Matrix decompositions and their gradient rules (family ``factorizations``): ``svd`` and ``svdvals``,
``eigh`` and ``eigvalsh``, ``eig`` and ``eigvals``, and ``pinv``.

A decomposition has several results, and each is an operation of its own on the tape: ``svd`` records
U and Vh as two ``svd`` calls and s as ``svdvals``; ``eigh`` records ``eigvalsh`` and ``eigh`` (the
vectors). Each pullback sends back that result's share of the decomposition's gradient (the shares add
up, the gradient being linear in the sensitivities) and recomputes the factors with these same
operations, so it can be differentiated again. The factors of one call agree in sign and phase,
because the same routine runs on the same values.

Where a gradient does not exist, back-propagation raises an error naming the operation instead of
returning one: U and Vh at repeated singular values (or at a zero singular value of a non-square
matrix), eigenvectors at repeated eigenvalues, a sensitivity on the extra columns of
``full_matrices=True``, and ``pinv`` at a rank-deficient matrix (its singular values below the cutoff).
Values closer than 8·k·ε·max|value| (k values, ε the dtype's resolution) count as repeated: the
routines cannot resolve them more finely. ``eig``'s eigenvectors are
differentiated with LAPACK's choice of phase (unit length, the largest component real). Complex input
is refused (``eig`` of a real matrix may have complex results: those are supported), except by
``svdvals`` (and the 2- and nuclear norms made of it) and ``eigvalsh``, whose rules cover complex (Hermitian)
matrices to first order; the vectors' rules refuse them by name when a sensitivity reaches them.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any, Literal

from ..core.errors import UndefinedGradient
from ..core.tracked import data, istracked
from ..ops.registry import defop, register_rules
from ._util import (
    array,
    is_complex,
    lift,
    mask,
    mT,
    ns,
    real_only,
    refuse_complex,
    shape,
    wrapper,
)
from .complex import _complex_op as _complex
from .complex import conj, imag, real
from .indexing import getitem
from .inverses import solve
from .linalg import matmul
from .matrices import symmetric_from, triangle_adjoint, tril, triu
from .reductions import sum
from .shape import expand_dims

SVDResult = namedtuple("SVDResult", "U S Vh")
EighResult = namedtuple("EighResult", "eigenvalues eigenvectors")
EigResult = namedtuple("EigResult", "eigenvalues eigenvectors")


def _linalg(x, name: str):
    xp = ns(x)
    f = getattr(xp.linalg, name, None)
    if f is None:
        raise TypeError(f"the {xp.__name__} namespace has no linalg.{name}, which this operation needs")
    return f


def _svd(x, part: str, full_matrices=True):
    u, _, vh = _linalg(x, "svd")(array(x), full_matrices=full_matrices)
    return u if part == "U" else vh


def _svdvals(x):
    x = array(x)
    f = getattr(ns(x).linalg, "svdvals", None)
    return f(x) if f is not None else _linalg(x, "svd")(x, full_matrices=False)[1]


def _eigh_call(x, UPLO: str):
    """The backend's ``eigh``, reading the lower triangle (``UPLO='L'``) or the upper one."""
    if not isinstance(UPLO, str) or UPLO.upper() not in ("L", "U"):  # NumPy takes 'l' and 'u' too
        raise ValueError(f"eigh: UPLO must be 'L' or 'U', not {UPLO!r}")
    UPLO = UPLO.upper()
    x = array(x)
    eigh_ = _linalg(x, "eigh")
    try:
        return eigh_(x, UPLO=UPLO)
    except TypeError:  # the array API's eigh has no UPLO and says nothing of the triangle it reads
        return eigh_(symmetric_from(x, UPLO == "U"))


def _eigvalsh(x, UPLO="L"):
    return _eigh_call(x, UPLO)[0]


def _eigh_vectors(x, UPLO="L"):
    return _eigh_call(x, UPLO)[1]


def _eig_call(x):
    """The backend's ``eig`` with NumPy's result kind: a real matrix's eigenvalues and eigenvectors are real
    where every eigenvalue is (NumPy casts them), complex otherwise. CuPy's are complex always; asking whether
    any eigenvalue is complex reads one number on the host, as NumPy's choice of kind does."""
    x = array(x)
    w, v = _linalg(x, "eig")(x)
    xp = ns(w)
    if xp.isdtype(x.dtype, "real floating") and xp.isdtype(w.dtype, "complex floating"):
        if not bool(xp.any(xp.imag(w) != 0)):
            return xp.real(w), xp.real(v)
    return w, v


def _eigvals(x):
    return _eig_call(x)[0]


def _eig_vectors(x):
    return _eig_call(x)[1]


def _pinv(x, rcond=None, hermitian=False, *, rtol=None):
    cutoff = rtol if rtol is not None else rcond
    pinv_ = _linalg(x, "pinv")
    return pinv_(array(x)) if cutoff is None else pinv_(array(x), rtol=cutoff)


_REAL = "the rules here cover real matrices"


def _decomposition(name: str, impl, doc: str):
    """The operation ``name``: ``impl`` on a real matrix (complex input is refused)."""
    return defop(name, real_only(name, impl, _REAL), arity=1, family="factorizations", doc=doc)


# svd and svdvals take complex matrices: the singular values' rule covers them (to first order); the singular
# vectors' rule refuses them by name when a sensitivity reaches them
_svd_op = defop("svd", _svd, arity=1, family="factorizations", doc="U or Vh of the singular value decomposition.")
svdvals = defop("svdvals", _svdvals, arity=1, family="factorizations", doc="The singular values, largest first.")
# eigh and eigvalsh take Hermitian matrices too: the eigenvalues' rule covers them (to first order); the
# eigenvectors' rule refuses them by name when a sensitivity reaches them
_eigh_op = defop("eigh", _eigh_vectors, arity=1, family="factorizations", doc="The eigenvectors of a symmetric matrix.")
eigvalsh = defop("eigvalsh", _eigvalsh, arity=1, family="factorizations", doc="The eigenvalues of a symmetric matrix.")
_eig_op = _decomposition("eig", _eig_vectors, "The eigenvectors of a square matrix.")
eigvals = _decomposition("eigvals", _eigvals, "The eigenvalues of a square matrix.")
pinv = _decomposition("pinv", _pinv, "The Moore-Penrose pseudo-inverse.")


def _refuse_hermitian(name: str, x, hermitian) -> None:
    if hermitian and istracked(x):
        raise TypeError(
            f"{name}: hermitian=True reads one triangle only and has no gradient rule; "
            "pass hermitian=False (the default)"
        )


@wrapper("svd")
def svd(x: Any, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False) -> SVDResult | Any:
    """``numpy.linalg.svd``: ``(U, S, Vh)`` with ``x = U @ diag(S) @ Vh``, or ``S`` alone (``compute_uv=False``).

    The gradient through U and Vh exists where the singular values are distinct (and, for a non-square
    matrix, nonzero); elsewhere back-propagation says so. With ``full_matrices=True`` a non-square
    matrix's extra columns of U (rows of Vh) are any basis of the complement: a loss may not depend on
    them. Functions of S alone always have a gradient.

    >>> import trackerlab as tl
    >>> tl.svd(tl.param([[3.0, 0.0], [0.0, -2.0]]), compute_uv=False)
    Tracked 2-element float64 array:
    [3. 2.]
    """
    _refuse_hermitian("svd", x, hermitian)
    if hermitian:  # plain values: the backend's own routine
        plain = array(data(x))
        return ns(plain).linalg.svd(plain, full_matrices=full_matrices, compute_uv=compute_uv, hermitian=True)
    if not compute_uv:  # the singular values: real or complex matrices
        return svdvals(x)
    refuse_complex("svd", x, why=_REAL)
    u = _svd_op(x, part="U", full_matrices=full_matrices)
    vh = _svd_op(x, part="Vh", full_matrices=full_matrices)
    return SVDResult(u, svdvals(x), vh)


@wrapper("eigh")
def eigh(x: Any, UPLO: Literal["L", "U", "l", "u"] = "L") -> EighResult:
    """``numpy.linalg.eigh``: ``(eigenvalues, eigenvectors)`` of a symmetric matrix, eigenvalues ascending.

    Like NumPy, it reads one triangle of ``x`` (the lower one by default): the gradient is that of the
    function NumPy computes, so it lies in that triangle (HIPS autograd does the same). Eigenvectors
    have a gradient where the eigenvalues are distinct.

    >>> import trackerlab as tl
    >>> tl.eigh(tl.param([[2.0, 1.0], [1.0, 2.0]])).eigenvalues
    Tracked 2-element float64 array:
    [1. 3.]
    """
    vectors = _eigh_op(x, UPLO=UPLO)  # first, so that an error names eigh
    return EighResult(eigvalsh(x, UPLO=UPLO), vectors)


@wrapper("eig")
def eig(x: Any) -> EigResult:
    """``numpy.linalg.eig``: ``(eigenvalues, eigenvectors)`` of a square real matrix; complex where the
    eigenvalues are, as NumPy gives them, each eigenvector of unit length.

    The eigenvectors' gradient is that of NumPy's (LAPACK's) choice of phase: unit length, the component
    of largest modulus real. They have a gradient where the eigenvalues are distinct.

    >>> import trackerlab as tl
    >>> tl.eig(tl.param([[0.0, -1.0], [1.0, 0.0]])).eigenvalues
    Tracked 2-element complex128 array:
    [0.+1.j 0.-1.j]
    """
    vectors = _eig_op(x)  # first, so that an error names eig
    return EigResult(eigvals(x), vectors)


# ----------------------------------------------------------------------------------------------------
# Pullbacks (``x`` is real: the operations refuse complex input; the sensitivities of ``eig``'s results may be complex)


def _eps(x) -> float:
    plain = data(x)
    return float(ns(plain).finfo(plain.dtype).eps)


def _plain(x):
    return array(data(x))


def _require_distinct(name: str, values, what: str, sorted_: bool) -> None:
    """Raise unless the eigen- or singular values of each matrix are distinct (beyond rounding)."""
    v = _plain(values)
    xp = ns(v)
    k = v.shape[-1]
    if k < 2:
        return
    scale = xp.max(xp.abs(v), axis=-1, keepdims=True)
    tol = 8 * k * _eps(values) * scale
    if sorted_:
        gaps = xp.abs(v[..., 1:] - v[..., :-1])
    else:
        gaps = xp.abs(xp.reshape(v, v.shape + (1,)) - xp.reshape(v, v.shape[:-1] + (1, k)))
        gaps = gaps + xp.eye(k, dtype=gaps.dtype) * (2 * xp.max(tol) + 1)
        tol = xp.reshape(tol, tol.shape + (1,))
    if bool(xp.any(gaps <= tol)):
        raise UndefinedGradient(
            f"{name}: the gradient of the {what} is undefined where values repeat ({v}); it exists only "
            f"for distinct values: differentiate a function of the values alone, or perturb the matrix",
            op=name,
        )


def _gaps(values, dtype):
    """``F[i, j] = 1 / (values[j] − values[i])`` off the diagonal and 0 on it (stacks of matrices too)."""
    k = shape(values)[-1]
    eye = ns(data(values)).eye(k, dtype=dtype)
    return (1 - eye) / (expand_dims(values, -2) - expand_dims(values, -1) + eye)


def _factors(x, full_matrices):
    """U, s and V of ``x``'s SVD, tracked where ``x`` is, cut to ``k = min(m, n)`` columns."""
    m, n = shape(x)[-2:]
    k = min(m, n)
    u = _svd_op(x, part="U", full_matrices=full_matrices)
    vh = _svd_op(x, part="Vh", full_matrices=full_matrices)
    if full_matrices and m != n:
        u = getitem(u, (Ellipsis, slice(None), slice(0, k)))
        vh = getitem(vh, (Ellipsis, slice(0, k), slice(None)))
    return u, mT(vh)


def _svdvals_rule(g, ans, x):
    # ds_i = Re(u_iᴴ dA v_i), so dL = Re Σ Ā ∘ dA with Ā = conj(U diag(s̄) Vᴴ) (the cotangent ∂L/∂Re − i ∂L/∂Im,
    # as in autograd and JAX); for a real A, U diag(s̄) Vᵀ
    u, v = _factors(x, False)
    out = matmul(u * expand_dims(lift(g, ans), -2), mT(v))  # (v is Vhᵀ: mT(v) is Vh)
    return conj(out) if is_complex(x) else out


def _svd_rule(g, ans, x, part, full_matrices=True):
    """Ā from the sensitivity of U or of Vh (Townsend 2016, as HIPS autograd writes it), with
    F[i, j] = 1 / (s_j² − s_i²):
    from U: U (F ∘ (UᵀŪ − ŪᵀU)) diag(s) Vᵀ, and (I − UUᵀ) Ū diag(1/s) Vᵀ when m > n;
    from Vh: U diag(s) (F ∘ (VᵀV̄ − V̄ᵀV)) Vᵀ, and U diag(1/s) V̄ᵀ (I − VVᵀ) when n > m."""
    refuse_complex(
        "svd",
        x,
        why="the rules cover the singular vectors of real matrices, and the singular values of complex ones: "
        "differentiate a function of the singular values (svdvals, the 2- or nuclear norm) once",
    )
    m, n = shape(x)[-2:]
    k = min(m, n)
    if full_matrices and m != n:
        extra = _plain(g)[..., :, k:] if part == "U" else _plain(g)[..., k:, :]
        if extra.size and bool(ns(extra).any(extra != 0)):
            what = "columns of U" if part == "U" else "rows of Vh"
            raise ValueError(
                f"svd: with full_matrices=True the last {max(m, n) - k} {what} "
                f"of a {m}×{n} matrix are any orthonormal basis of the complement, so a loss that depends on them "
                "has no gradient; use full_matrices=False"
            )
        g = getitem(g, (Ellipsis, slice(None), slice(0, k)) if part == "U" else (Ellipsis, slice(0, k), slice(None)))
    s = svdvals(x)
    _require_distinct("svd", s, "singular vectors (U, Vh)", sorted_=True)
    if m != n and bool(ns(_plain(s)).any(_plain(s) <= 8 * k * _eps(s) * _plain(s)[..., :1])):
        raise UndefinedGradient(
            f"svd: the gradient of U and Vh of a non-square matrix is undefined at a zero singular value ({_plain(s)})",
            op="svd",
        )
    u, v = _factors(x, full_matrices)
    dtype = data(ans).dtype
    f = _gaps(s * s, dtype)
    s_row = expand_dims(s, -2)
    if part == "U":
        utg = matmul(mT(u), g)
        out = matmul(matmul(u, f * (utg - mT(utg)) * s_row), mT(v))
        if m > n:
            scaled = g / s_row
            out = out + matmul(scaled - matmul(u, matmul(mT(u), scaled)), mT(v))
        return out
    gv = mT(g)
    vtg = matmul(mT(v), gv)
    out = matmul(matmul(u, expand_dims(s, -1) * (f * (vtg - mT(vtg)))), mT(v))
    if n > m:
        scaled = gv / s_row
        out = out + matmul(u, mT(scaled - matmul(v, matmul(mT(v), scaled))))
    return out


def _reads_upper(UPLO) -> bool:
    return UPLO.upper() == "U"  # (the forward has refused anything but 'L', 'U', 'l' and 'u')


def _eigvalsh_rule(g, ans, x, UPLO="L"):
    # dw_i = v_iᵀ dA v_i, so the symmetric gradient is V diag(w̄) Vᵀ
    v = _eigh_op(x, UPLO=UPLO)
    if is_complex(x):
        return _hermitian_eigvals_rule(g, ans, v, _reads_upper(UPLO))
    return triangle_adjoint(matmul(v * expand_dims(lift(g, ans), -2), mT(v)), _reads_upper(UPLO))


def _hermitian_eigvals_rule(g, ans, v, upper: bool):
    """A Hermitian matrix read from one triangle, A = tril(X) + tril(X, −1)ᴴ (the diagonal's real part):
    dw_i = Re(v_iᴴ dA v_i) = Re Σ Gᵀ ∘ dA with G = V diag(w̄) Vᴴ, so an entry read below the diagonal, which
    stands for two of A, gets 2 conj(G) there (the cotangent ∂L/∂Re − i ∂L/∂Im), the diagonal G, the
    triangle not read 0."""
    s = conj(matmul(v * expand_dims(lift(g, ans), -2), mT(conj(v))))
    if upper:
        return triu(s) + triu(conj(mT(s)), 1)
    return tril(s) + tril(conj(mT(s)), -1)


def _eigh_rule(g, ans, x, UPLO="L"):
    # dV = V (F ∘ (Vᵀ dA V)) with F[i, j] = 1 / (w_j − w_i), so the symmetric gradient is V (F ∘ VᵀV̄) Vᵀ
    refuse_complex(
        "eigh",
        x,
        why="the rules cover the eigenvectors of real symmetric matrices, and the eigenvalues of Hermitian ones: "
        "differentiate a function of the eigenvalues (eigvalsh) once",
    )
    w = eigvalsh(x, UPLO=UPLO)
    _require_distinct("eigh", w, "eigenvectors", sorted_=True)
    v = _eigh_op(x, UPLO=UPLO)
    inner = _gaps(w, data(ans).dtype) * matmul(mT(v), g)
    return triangle_adjoint(matmul(matmul(v, inner), mT(v)), _reads_upper(UPLO))


def _eigvals_rule(g, ans, x):
    # w is holomorphic in A with dw_i = (V⁻¹ dA V)_ii: Ā = V⁻ᵀ diag(w̄) Vᵀ, real part for a real A
    v = _eig_op(x)
    return real(solve(mT(v), mT(v * expand_dims(lift(g, ans), -2))))


def _eig_rule(g, ans, x):
    """NumPy's eigenvectors (LAPACK's): unit length, and the component of largest modulus real. With
    F[i, j] = 1 / (w_j − w_i) and dV′ = V (F ∘ V⁻¹ dA V), dv_i = dv′_i − v_i Re(v_iᴴ dv′_i) + i v_i dθ_i,
    the phase dθ_i = −Im(dv′_i[p]) / v_i[p] keeping component p real. So Ā = Re(V⁻ᵀ (F ∘ Vᵀ Ĝ) Vᵀ) with
    ĝ_i = v̄_i − conj(v_i) Re(v_iᵀ v̄_i) − i e_p Im(v_iᵀ v̄_i) / v_i[p]."""
    w = eigvals(x)
    _require_distinct("eig", w, "eigenvectors", sorted_=False)
    v = _eig_op(x)
    g = lift(g, ans)
    along = sum(v * g, axis=-2)  # diag(Vᵀ V̄)
    g_hat = g - conj(v) * expand_dims(real(along), -2)
    if ns(_plain(w)).isdtype(_plain(w).dtype, "complex floating"):
        g_hat = g_hat - _phase_term(w, v, along)
    inner = _gaps(w, data(ans).dtype) * matmul(mT(v), g_hat)
    return real(solve(mT(v), matmul(inner, mT(v))))


def _phase_term(w, v, along):
    """i e_p Im(v_iᵀ v̄_i) / v_i[p] for each eigenvector of a complex eigenvalue, p its largest component."""
    w_, v_ = _plain(w), _plain(v)
    xp = ns(v_)
    n = v_.shape[-1]
    largest = xp.argmax(xp.abs(v_), axis=-2)  # (..., n): the row p of each column
    rows = xp.reshape(xp.arange(n), (n, 1))
    pick = xp.astype(rows == xp.expand_dims(largest, axis=-2), xp.real(v_).dtype)  # one-hot (..., n, n)
    top = xp.sum(v_ * pick, axis=-2)
    if bool(xp.any(xp.abs(xp.imag(top)) > 1e-12)):
        raise ValueError(
            "eig: the eigenvectors do not follow LAPACK's convention (largest component real), so the "
            "gradient of their phase is unknown; differentiate phase-free quantities such as v * conj(v)"
        )
    beta = imag(along) / real(sum(v * pick, axis=-2)) * mask(xp.imag(w_) != 0, xp.real(w_))
    return _complex(pick * expand_dims(beta, -2)) * 1j


def _pinv_rule(g, ans, x, rcond=None, hermitian=False, *, rtol=None):
    """Golub and Pereyra (1973), for a matrix of constant rank, X = A⁺:
    Ā = −Xᵀ Ḡ Xᵀ + (I − A X) Ḡᵀ X Xᵀ + Xᵀ X Ḡᵀ (I − X A)."""
    if hermitian:
        raise TypeError("pinv: hermitian=True reads one triangle only and has no gradient rule; pass hermitian=False")
    s = _svdvals(_plain(x))
    m, n = shape(x)[-2:]
    cutoff = rtol if rtol is not None else rcond
    cutoff = max(1e-15, max(m, n) * _eps(x)) if cutoff is None else cutoff
    xp = ns(s)
    if bool(xp.any(s <= cutoff * s[..., :1])):
        raise UndefinedGradient(
            f"pinv: the gradient is undefined at a rank-deficient matrix (singular values {s}): the "
            "pseudo-inverse jumps where the rank changes",
            op="pinv",
        )
    p = pinv(x, rcond=rcond, rtol=rtol)
    pt = mT(p)
    gt = mT(g)
    eye_m = xp.eye(m, dtype=s.dtype)
    eye_n = xp.eye(n, dtype=s.dtype)
    out = -matmul(matmul(pt, g), pt)
    out = out + matmul(matmul(eye_m - matmul(x, p), gt), matmul(p, pt))
    return out + matmul(matmul(pt, p), matmul(gt, eye_n - matmul(p, x)))


RULES = {
    "svdvals": (_svdvals_rule,),
    "svd": (_svd_rule,),
    "eigvalsh": (_eigvalsh_rule,),
    "eigh": (_eigh_rule,),
    "eigvals": (_eigvals_rule,),
    "eig": (_eig_rule,),
    "pinv": (_pinv_rule,),
}
register_rules("factorizations", RULES)
