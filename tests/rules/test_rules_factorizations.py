"""Gradient checks of the decompositions, to second order (``svd``, ``eigh``, ``eig``, ``pinv``), their
closed forms, and the errors where no gradient exists."""

import numpy as np
import pytest
from test_rules import check, rand, ruled
from test_rules_linalg import B523, BSQ, M23, M34, SQ, T234

import trackerlab as tl

SYM = np.array([[2.0, 0.3, -0.4], [0.3, 1.0, 0.2], [-0.4, 0.2, -0.5]])  # distinct eigenvalues
ROTATING = np.array([[0.3, -1.2, 0.4], [0.9, 0.1, -0.3], [0.2, 0.5, 1.1]])  # a complex pair and one real
WEIGHTS2, WEIGHTS3 = np.array([1.0, -2.0]), np.array([1.0, -2.0, 0.5])
WEIGHTS33 = np.arange(9.0).reshape(3, 3) - 4.0


def like(value, constant):
    """A NumPy test constant on the backend of ``value`` (so the cases run on device arrays too)."""
    from trackerlab.backends.arrays import namespace

    return namespace(tl.data(value)).asarray(constant)


def projector(vectors, weights):
    """Σ w_i v_i v_iᵀ: the vectors' signs cancel."""
    return tl.matmul(vectors * like(vectors, weights), tl.swapaxes(vectors, -1, -2))


def first_pair(u, s, vh):
    """u_0 v_0ᵀ scaled by s: the signs of u_0 and v_0 flip together."""
    return u[..., :, :1] * vh[..., :1, :] * s[..., :1, None] + tl.sum(u[..., :, 1:2] * vh[..., 1:2, :])


CASES = {
    # the decompositions, through functions that do not depend on the signs (phases) of the vectors
    "svdvals": [
        (tl.svdvals, M23),
        (tl.svdvals, SQ),
        (lambda x: tl.svd(x, compute_uv=False), B523),
        (lambda x: tl.norm(x, 2), M34),
        (lambda x: tl.norm(x, -2), SQ),
        (lambda x: tl.norm(x, "nuc"), M34.T),
        (lambda x: tl.norm(x, 2, axis=(2, 0), keepdims=True), T234),
    ],
    "svd": [
        (lambda x: projector(tl.svd(x)[0], WEIGHTS3), SQ),
        (lambda x: projector(tl.swapaxes(tl.svd(x)[2], -1, -2), WEIGHTS3), SQ),
        (lambda x: projector(tl.svd(x, full_matrices=False)[0], WEIGHTS2), M23),
        (lambda x: projector(tl.swapaxes(tl.svd(x, full_matrices=False)[2], -1, -2), WEIGHTS2), M23),
        (lambda x: projector(tl.svd(x, full_matrices=False)[0], WEIGHTS3), M34.T),
        (lambda x: projector(tl.swapaxes(tl.svd(x, full_matrices=False)[2], -1, -2), WEIGHTS3), M34.T),
        (lambda x: first_pair(*tl.svd(x, full_matrices=False)), B523),
        (lambda x: first_pair(*tl.svd(x, full_matrices=False)), rand(2, 4, 3, seed=14)),
        (lambda x: tl.sum(tl.matmul(tl.svd(x)[0] * tl.svd(x)[1], tl.svd(x)[2]) ** 3), SQ),
    ],
    "eigvalsh": [
        (tl.eigvalsh, SYM),
        (tl.eigvalsh, SQ),  # reads the lower triangle only, as NumPy does
        (lambda x: tl.eigvalsh(x, UPLO="U"), SQ),
        (lambda x: tl.eigh(x)[0] ** 2, BSQ),
    ],
    "eigh": [
        (lambda x: projector(tl.eigh(x)[1], WEIGHTS3), SYM),
        (lambda x: projector(tl.eigh(x)[1], WEIGHTS3), SQ),
        (lambda x: projector(tl.eigh(x, UPLO="U")[1][..., :1], WEIGHTS3[:1]), BSQ),
        (lambda x: tl.eigh(x)[1] * tl.eigh(x)[1][..., :1, :], SYM),  # v_i[k] v_i[0]: sign-free
    ],
    "eigvals": [
        (lambda x: tl.real(tl.eigvals(x)) + tl.imag(tl.eigvals(x)) ** 2, ROTATING),
        (lambda x: tl.real(tl.eig(x)[0]) ** 3, SYM),
        (lambda x: tl.imag(tl.eigvals(x)) * tl.real(tl.eigvals(x)), rand(2, 4, 4, seed=15)),
    ],
    "eig": [
        (lambda x: tl.real(tl.eig(x)[1] * tl.conj(tl.eig(x)[1])) * like(x, WEIGHTS33), ROTATING),
        (lambda x: tl.real(tl.eig(x)[1][0] * tl.conj(tl.eig(x)[1][1])), ROTATING),
        (lambda x: tl.real(tl.eig(x)[1]) * like(x, WEIGHTS33) + tl.imag(tl.eig(x)[1]) ** 2, ROTATING),  # NumPy's phase
        (lambda x: tl.eig(x)[1] * tl.eig(x)[1][..., :1, :], SYM),  # real eigenvectors
        (lambda x: tl.imag(tl.eig(x)[1]) + tl.real(tl.eig(x)[1]) ** 2, rand(2, 4, 4, seed=15)),
    ],
    "pinv": [
        (tl.pinv, M23),
        (tl.pinv, M34.T),
        (tl.pinv, SQ),
        (tl.pinv, B523),
        (lambda x: tl.pinv(x, rcond=1e-10), M34),
    ],
}


def test_every_factorizations_rule_has_a_case():
    missing = [n for n in ruled("factorizations") if n not in CASES]
    assert not missing, f"factorizations rules without a test case: {missing}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_factorizations_rule(name):
    for f, *args in CASES[name]:
        check(f, *args)


# ---------------------------------------------------------------- the decompositions: closed forms and errors


def test_singular_value_gradients_match_the_closed_form():
    # ∂s_i/∂A = u_i v_iᵀ: the 2-norm's gradient is u_0 v_0ᵀ, the nuclear norm's U Vᵀ
    u, _s, vh = np.linalg.svd(M34, full_matrices=False)
    for ord_, expected in ((2, np.outer(u[:, 0], vh[0])), ("nuc", u @ vh), (-2, np.outer(u[:, -1], vh[-1]))):
        x = tl.param(M34)
        tl.back_(tl.norm(x, ord_))
        np.testing.assert_allclose(x.grad, expected, atol=1e-12)
    x = tl.param(M34)
    tl.back_(tl.sum(tl.svdvals(x) * np.array([1.0, 2.0, 3.0])))
    np.testing.assert_allclose(x.grad, u @ np.diag([1.0, 2.0, 3.0]) @ vh, atol=1e-12)


def test_eigenvalue_gradients_match_the_closed_form():
    # eigvalsh: ∂w_i/∂A = v_i v_iᵀ on a symmetric matrix; NumPy reads the lower triangle, so the gradient
    # is that matrix's lower triangle with the off-diagonal entries doubled
    _w, v = np.linalg.eigh(SYM)
    x = tl.param(SYM)
    tl.back_(tl.eigvalsh(x)[2])
    outer = np.outer(v[:, 2], v[:, 2])
    np.testing.assert_allclose(x.grad, np.tril(outer) + np.tril(outer, -1), atol=1e-12)
    x = tl.param(SYM)
    tl.back_(tl.eigh(x, UPLO="U")[0][0])
    outer = np.outer(v[:, 0], v[:, 0])
    np.testing.assert_allclose(x.grad, np.triu(outer) + np.triu(outer, 1), atol=1e-12)
    # eig: the eigenvalues sum to the trace and multiply to the determinant
    x = tl.param(ROTATING)
    tl.back_(tl.sum(tl.real(tl.eigvals(x))))
    np.testing.assert_allclose(x.grad, np.eye(3), atol=1e-12)
    x = tl.param(ROTATING)
    tl.back_(tl.real(tl.prod(tl.eigvals(x))))
    np.testing.assert_allclose(x.grad, np.linalg.det(ROTATING) * np.linalg.inv(ROTATING).T, atol=1e-12)
    assert x.grad.dtype == np.float64  # a real matrix's gradient is real


def test_decompositions_through_numpy():
    x = tl.param(M34)
    u, s, vh = np.linalg.svd(x, full_matrices=False)
    result = np.linalg.svd(x)
    assert result.S is result[1] and tl.data(result.U).shape == (3, 3) and tl.data(result.Vh).shape == (4, 4)
    np.testing.assert_allclose(tl.data(u * s @ vh), M34, atol=1e-12)
    assert tl.istracked(np.linalg.svd(x, compute_uv=False)) and tl.istracked(np.linalg.svdvals(x))
    y = tl.param(SYM)
    w, _v = np.linalg.eigh(y)
    np.testing.assert_allclose(tl.data(w), np.linalg.eigvalsh(SYM))
    np.testing.assert_allclose(tl.data(np.linalg.eigvalsh(y)), np.linalg.eigvalsh(SYM))
    z = tl.param(ROTATING)
    values, vectors = np.linalg.eig(z)
    expected_values, expected_vectors = np.linalg.eig(ROTATING)
    np.testing.assert_array_equal(tl.data(values), expected_values)
    np.testing.assert_array_equal(tl.data(vectors), expected_vectors)
    np.testing.assert_array_equal(tl.data(np.linalg.eigvals(z)), np.linalg.eigvals(ROTATING))
    np.testing.assert_allclose(tl.data(np.linalg.pinv(x)), np.linalg.pinv(M34))
    assert [tl.data(v).shape for v in tl.svd(M34)] == [(3, 3), (3,), (4, 4)]  # plain input, plain output


def test_svd_vectors_at_repeated_singular_values_are_an_error():
    x = tl.param(np.diag([2.0, 2.0, 1.0]))
    u, _s, vh = tl.svd(x)
    with pytest.raises(
        ValueError, match=r"svd: the gradient of the singular vectors \(U, Vh\) is undefined where values repeat"
    ):
        tl.back_(tl.sum(u[:, 0] * vh[0]))
    x = tl.param(np.diag([2.0, 2.0, 1.0]))
    tl.back_(tl.sum(tl.svd(x)[1]))  # the values alone have a gradient: U Vᵀ = I
    np.testing.assert_allclose(x.grad, np.eye(3), atol=1e-12)


def test_svd_extra_columns_of_full_matrices_are_an_error():
    x = tl.param(M23)
    vh = tl.svd(x)[2]  # 3 × 3 for a 2 × 3 matrix: its last row is any unit vector orthogonal to the others
    with pytest.raises(ValueError, match=r"svd: with full_matrices=True the last 1 rows of Vh of a 2×3 matrix"):
        tl.back_(tl.sum(vh[2] * vh[2] * np.arange(3.0)))
    x = tl.param(M23)
    _u, _s, vh = tl.svd(x)
    tl.back_(tl.sum(vh[:2] * vh[:2] * np.arange(3.0)))  # the first k rows are fine
    assert np.all(np.isfinite(x.grad))
    # and have the gradient of the reduced decomposition (not a case of the table: tl.check_tape probes
    # each operation with a random sensitivity, which reaches the extra rows)
    check(lambda x: first_pair(tl.svd(x)[0], tl.svd(x)[1], tl.svd(x)[2][..., :2, :]), M23)
    check(lambda x: first_pair(tl.svd(x)[0][..., :, :3], tl.svd(x)[1], tl.svd(x)[2]), M34.T)


def test_svd_vectors_of_a_rank_deficient_non_square_matrix_are_an_error():
    x = tl.param(np.outer([1.0, 2.0], [1.0, 0.0, 1.0]))
    u, _s, vh = tl.svd(x, full_matrices=False)
    with pytest.raises(ValueError, match=r"svd: .*undefined (where values repeat|at a zero singular value)"):
        tl.back_(tl.sum(u[:, :1] * vh[:1]))


def test_eigenvectors_at_repeated_eigenvalues_are_an_error():
    x = tl.param(np.diag([1.0, 1.0, 3.0]))
    with pytest.raises(ValueError, match=r"eigh: the gradient of the eigenvectors is undefined where values repeat"):
        tl.back_(tl.sum(projector(tl.eigh(x)[1], WEIGHTS3)))
    x = tl.param(np.diag([1.0, 1.0, 3.0]))
    with pytest.raises(ValueError, match=r"eig: the gradient of the eigenvectors is undefined where values repeat"):
        tl.back_(tl.sum(tl.eig(x)[1]))
    x = tl.param(np.diag([1.0, 1.0, 3.0]))
    tl.back_(tl.sum(tl.eigvalsh(x)) + tl.sum(tl.real(tl.eigvals(x))))  # the values alone are fine
    np.testing.assert_allclose(x.grad, 2 * np.eye(3), atol=1e-12)


def test_pinv_at_a_rank_deficient_matrix_is_an_error():
    x = tl.param(np.outer([1.0, 2.0], [1.0, 0.0, 1.0]))
    with pytest.raises(ValueError, match=r"pinv: the gradient is undefined at a rank-deficient matrix"):
        tl.back_(tl.sum(tl.pinv(x)))


def test_decompositions_refuse_complex_and_hermitian_input():
    z = tl.param(SQ + 1j * SQ.T)
    for name, f in (("svd", tl.svd), ("eig", tl.eig), ("pinv", tl.pinv), ("eigvals", tl.eigvals)):
        with pytest.raises(TypeError, match=f"{name}: complex input is not supported"):
            f(z)
    # eigh's values take a Hermitian matrix (tests/test_complex.py); a sensitivity reaching its vectors refuses
    with pytest.raises(TypeError, match="eigh: complex input is not supported"):
        tl.back_(tl.sum(tl.real(tl.eigh(z).eigenvectors)))
    with pytest.raises(TypeError, match="svd: hermitian=True reads one triangle only"):
        tl.svd(tl.param(SYM), hermitian=True)
    with pytest.raises(TypeError, match="pinv: hermitian=True reads one triangle only"):
        tl.back_(tl.sum(tl.pinv(tl.param(SYM), hermitian=True)))
