"""Gradient checks of the linear-algebra rules, to second order: products of every rank (``matmul``
also on the other backends), ``einsum``, ``tensordot``, and the matrix functions."""

import numpy as np
import pytest
from test_rules import BACKENDS, check, rand, ruled

import trackerlab as tl
from trackerlab._backend import namespace

v3, w3 = rand(3), rand(3, seed=1)
M23, M34 = rand(2, 3, seed=2), rand(3, 4, seed=3)
B523, B534 = rand(5, 2, 3, seed=4), rand(5, 3, 4, seed=5)
S = np.array(1.5)
SQ = rand(3, 3, seed=6) + 3 * np.eye(3)  # well conditioned
BSQ = rand(2, 3, 3, seed=7) + 3 * np.eye(3)
T234 = rand(2, 3, 4, seed=8)
T342 = rand(3, 4, 2, seed=9)


def spd(a):
    """A symmetric positive-definite matrix made from ``a`` (so cholesky's input stays valid)."""
    return tl.matmul(a, tl.swapaxes(a, -1, -2)) + 3 * namespace(tl.data(a)).eye(tl.data(a).shape[-1])


SYM = np.array([[2.0, 0.3, -0.4], [0.3, 1.0, 0.2], [-0.4, 0.2, -0.5]])  # distinct eigenvalues
ROTATING = np.array([[0.3, -1.2, 0.4], [0.9, 0.1, -0.3], [0.2, 0.5, 1.1]])  # a complex pair and one real
WEIGHTS2, WEIGHTS3 = np.array([1.0, -2.0]), np.array([1.0, -2.0, 0.5])
WEIGHTS33 = np.arange(9.0).reshape(3, 3) - 4.0


def like(value, constant):
    """A NumPy test constant on the backend of ``value`` (so the cases run on device arrays too)."""
    from trackerlab._backend import namespace

    return namespace(tl.data(value)).asarray(constant)


def projector(vectors, weights):
    """Σ w_i v_i v_iᵀ: the vectors' signs cancel."""
    return tl.matmul(vectors * like(vectors, weights), tl.swapaxes(vectors, -1, -2))


def first_pair(u, s, vh):
    """u_0 v_0ᵀ scaled by s: the signs of u_0 and v_0 flip together."""
    return u[..., :, :1] * vh[..., :1, :] * s[..., :1, None] + tl.sum(u[..., :, 1:2] * vh[..., 1:2, :])


MATMUL = [
    (v3, w3),  # 1-D · 1-D
    (M23, v3),  # 2-D · 1-D
    (v3, M34),  # 1-D · 2-D
    (M23, M34),
    (B523, M34),  # batched · matrix
    (B523, B534),  # batched · batched
    (rand(1, 2, 3), rand(4, 3, 2)),  # broadcast batches
    (v3, B534),  # 1-D · batched
    (B523, v3),  # batched · 1-D
]

CASES = {
    "matmul": [(tl.matmul, x, y) for x, y in MATMUL],
    "dot": [(tl.dot, S, M23), (tl.dot, v3, w3), (tl.dot, M23, M34), (tl.dot, T234, rand(5, 4, 2)), (tl.dot, B523, v3)],
    "inner": [(tl.inner, v3, w3), (tl.inner, M23, rand(4, 2, 3)), (tl.inner, S, v3)],
    "outer": [(tl.outer, v3, rand(4)), (tl.outer, M23, w3)],
    "vdot": [(tl.vdot, M23, rand(3, 2))],
    "vecdot": [(tl.vecdot, M23, w3), (lambda x, y: tl.vecdot(x, y, axis=0), M34, rand(3, 1))],
    "tensordot": [
        (lambda x, y: tl.tensordot(x, y, axes=2), T234, T342),
        (lambda x, y: tl.tensordot(x, y, axes=([1, 0], [0, 2])), T234, rand(3, 5, 2)),
        (lambda x, y: tl.tensordot(x, y, axes=0), v3, M23),
        (lambda x, y: tl.tensordot(x, y, axes=1), M23, M34),
    ],
    "cross": [
        (tl.cross, v3, w3),
        (tl.cross, rand(4, 3), w3),
        (lambda x, y: tl.cross(x, y, axis=0), M34, rand(3, 1)),
        (lambda x, y: tl.cross(x, y, axisa=0, axisb=1, axisc=0), M34, rand(4, 3, seed=11)),
        (lambda x, y: tl.cross(x, y, axisa=0, axisc=1), M34, w3),  # y broadcasts against x's vectors
        (lambda x, y: tl.cross(x, y, axisb=0, axisc=0), rand(2, 1, 3, seed=12), rand(3, 4, seed=13)),
    ],
    "einsum": [
        (lambda x, y: tl.einsum("ij,jk->ik", x, y), M23, M34),
        (lambda x, y: tl.einsum("ij,jk", x, y), M23, M34),  # implicit output
        (lambda x: tl.einsum("ii->", x), SQ),
        (lambda x: tl.einsum("ii->i", x), SQ),
        (lambda x: tl.einsum("i,i->", x, x), v3),  # one operand twice
        (lambda x, y: tl.einsum("...ij,...jk->...ik", x, y), B523, M34),
        (lambda x: tl.einsum("bij->j", x), B523),  # a summed-away letter comes back
        (lambda x, y, z: tl.einsum("i,ij,j", x, y, z), rand(2), M23, w3),
        (lambda x, y: tl.einsum(x, [0, 1], y, [1, 2], [0, 2]), M23, M34),  # interleaved form
        (lambda x, y: tl.einsum("ij,kj->ikj", x, y), rand(2, 1), rand(4, 3)),  # a broadcast length-1 axis
    ],
    "trace": [(tl.trace, SQ), (lambda x: tl.trace(x, 1), M34), (lambda x: tl.trace(x, -1, axis1=1, axis2=2), T234)],
    "diagonal": [
        (tl.diagonal, SQ),
        (lambda x: tl.diagonal(x, 1), M34),
        (lambda x: tl.diagonal(x, -1, axis1=2, axis2=1), T234),
    ],
    "diag": [(tl.diag, v3), (lambda x: tl.diag(x, 1), v3), (lambda x: tl.diag(x, -1), M34), (tl.diag, SQ)],
    "triu": [(tl.triu, M34), (lambda x: tl.triu(x, -1), B523)],
    "tril": [(tl.tril, M34), (lambda x: tl.tril(x, 1), B523)],
    "inv": [(tl.inv, SQ), (tl.inv, BSQ)],
    "det": [(tl.det, SQ), (tl.det, BSQ)],
    "slogdet": [(lambda x: tl.slogdet(x)[1], SQ), (lambda x: tl.slogdet(x)[1], -BSQ)],
    "solve": [(tl.solve, SQ, v3), (tl.solve, SQ, M34), (tl.solve, BSQ, v3), (tl.solve, BSQ, rand(3, 2))],
    "cholesky": [(lambda a: tl.cholesky(spd(a)), rand(3, 3)), (lambda a: tl.cholesky(spd(a), upper=True), BSQ)],
    "norm": [
        (tl.norm, v3),
        (tl.norm, M23),
        (lambda x: tl.norm(x, 1), v3),
        (lambda x: tl.norm(x, np.inf), v3),
        (lambda x: tl.norm(x, -np.inf), v3),
        (lambda x: tl.norm(x, 3), v3),
        (lambda x: tl.norm(x, axis=1, keepdims=True), M23),
        (lambda x: tl.norm(x, "fro"), M23),
        (lambda x: tl.norm(x, 1), M34),
        (lambda x: tl.norm(x, np.inf, axis=(2, 0), keepdims=True), T234),
        (lambda x: tl.norm(x, -1), M34),
    ],
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
    "pinv": [(tl.pinv, M23), (tl.pinv, M34.T), (tl.pinv, SQ), (tl.pinv, B523), (lambda x: tl.pinv(x, rcond=1e-10), M34)],
}


def test_every_linalg_rule_has_a_case():
    missing = [n for n in ruled("linalg") if n not in CASES]
    assert not missing, f"linalg rules without a test case: {missing}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_linalg_rule(name):
    for f, *args in CASES[name]:
        check(f, *args)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", range(len(MATMUL)))
def test_matmul_of_every_rank_on_every_backend(case, backend):
    check(tl.matmul, *MATMUL[case], backend=backend)


# (the composite through tl, the same through NumPy on plain arrays, arguments)
COMPOSITES = [
    (lambda x: tl.matrix_power(x, 3), lambda x: np.linalg.matrix_power(x, 3), SQ),
    (lambda x: tl.matrix_power(x, -2), lambda x: np.linalg.matrix_power(x, -2), SQ),
    (lambda x: tl.matrix_power(x, 0) * x, lambda x: np.linalg.matrix_power(x, 0) * x, SQ),
    (lambda x, y: tl.multi_dot([x, y, y.T]), lambda x, y: np.linalg.multi_dot([x, y, y.T]), M23, M34),
    (tl.kron, np.kron, M23, rand(2, 2, seed=16)),
    (tl.kron, np.kron, v3, M23),
    (tl.kron, np.kron, S, T234),
]


@pytest.mark.parametrize("case", range(len(COMPOSITES)))
def test_composites_of_linalg_operations(case):
    f, numpy_f, *args = COMPOSITES[case]
    np.testing.assert_allclose(tl.data(f(*(tl.param(a) for a in args))), numpy_f(*args))
    check(f, *args)


def test_slogdet_returns_a_plain_sign_and_a_tracked_log():
    sign, logdet = tl.slogdet(tl.param([[0.0, 2.0], [3.0, 0.0]]))
    assert float(sign) == -1.0 and not tl.istracked(sign)
    assert tl.istracked(logdet) and float(logdet) == pytest.approx(np.log(6.0))


def test_matrix_norms_of_singular_values_match_numpy():
    for ord_ in (2, -2, "nuc"):
        assert float(tl.norm(tl.param(SQ), ord_)) == pytest.approx(np.linalg.norm(SQ, ord_))
        assert tl.norm(SQ, ord_) == pytest.approx(np.linalg.norm(SQ, ord_))  # plain values too
    x = tl.param(M34)
    np.testing.assert_allclose(tl.data(np.linalg.norm(x, 2, axis=(1, 0), keepdims=True)),
                               np.linalg.norm(M34, 2, axis=(1, 0), keepdims=True))
    np.testing.assert_allclose(tl.data(np.linalg.matrix_norm(x, ord="nuc")), np.linalg.matrix_norm(M34, ord="nuc"))


def test_norm_of_zero_has_a_zero_gradient():
    x = tl.param([0.0, 0.0])
    tl.back_(tl.norm(x))
    np.testing.assert_array_equal(x.grad, [0.0, 0.0])


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
    with pytest.raises(ValueError, match=r"svd: the gradient of the singular vectors \(U, Vh\) is undefined where values repeat"):
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
    for name, f in (("svd", tl.svd), ("eigh", tl.eigh), ("eig", tl.eig), ("pinv", tl.pinv), ("eigvals", tl.eigvals)):
        with pytest.raises(TypeError, match=f"{name}: complex input is not supported"):
            f(z)
    with pytest.raises(TypeError, match="svd: hermitian=True reads one triangle only"):
        tl.svd(tl.param(SYM), hermitian=True)
    with pytest.raises(TypeError, match="pinv: hermitian=True reads one triangle only"):
        tl.back_(tl.sum(tl.pinv(tl.param(SYM), hermitian=True)))


def test_cross_with_separate_axes_matches_numpy():
    a, b = rand(3, 4, seed=20), rand(4, 3, seed=21)
    x, y = tl.param(a), tl.param(b)
    out = np.cross(x, y, axisa=0, axisb=1, axisc=0)
    np.testing.assert_allclose(tl.data(out), np.cross(a, b, axisa=0, axisb=1, axisc=0))
    np.testing.assert_allclose(tl.data(np.cross(x, y.T, axis=0)), np.cross(a, b.T, axis=0))
    tl.back_(tl.sum(out * np.arange(12.0).reshape(3, 4)))
    assert x.grad.shape == (3, 4) and y.grad.shape == (4, 3)


def test_kron_matches_numpy():
    for a, b in ((M23, rand(2, 2, seed=16)), (v3, M23), (T234, rand(2, 1, seed=17))):
        np.testing.assert_allclose(tl.data(np.kron(tl.param(a), b)), np.kron(a, b))


def test_cross_axes_out_of_bounds_are_an_error():
    x = tl.param(M34)
    with pytest.raises(ValueError, match=r"cross: axisa=2 is out of bounds for an array of dimension 2"):
        tl.cross(x, w3, axisa=2)
    with pytest.raises(ValueError, match=r"cross: axisc=-3 is out of bounds for an array of dimension 2"):
        np.cross(x, w3, axisa=0, axisc=-3)
