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
    "cross": [(tl.cross, v3, w3), (tl.cross, rand(4, 3), w3), (lambda x, y: tl.cross(x, y, axis=0), M34, rand(3, 1))],
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


def test_matrix_norms_that_need_the_svd_are_a_clear_error():
    with pytest.raises(TypeError, match=r"norm: ord='nuc' of a matrix needs the SVD"):
        tl.norm(tl.param(SQ), "nuc")
    assert tl.norm(SQ, 2) == pytest.approx(np.linalg.norm(SQ, 2))  # plain values are fine


def test_norm_of_zero_has_a_zero_gradient():
    x = tl.param([0.0, 0.0])
    tl.back_(tl.norm(x))
    np.testing.assert_array_equal(x.grad, [0.0, 0.0])
