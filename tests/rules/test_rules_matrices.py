"""Gradient checks of the parts and sizes of matrices, to second order: ``trace``, ``diagonal``, ``diag``,
the triangles and ``norm``."""

import numpy as np
import pytest
from test_rules import check, ruled
from test_rules_linalg import B523, M23, M34, SQ, T234, v3

import trackerlab as tl

CASES = {
    "trace": [(tl.trace, SQ), (lambda x: tl.trace(x, 1), M34), (lambda x: tl.trace(x, -1, axis1=1, axis2=2), T234)],
    "diagonal": [
        (tl.diagonal, SQ),
        (lambda x: tl.diagonal(x, 1), M34),
        (lambda x: tl.diagonal(x, -1, axis1=2, axis2=1), T234),
    ],
    "diag": [(tl.diag, v3), (lambda x: tl.diag(x, 1), v3), (lambda x: tl.diag(x, -1), M34), (tl.diag, SQ)],
    "triu": [(tl.triu, M34), (lambda x: tl.triu(x, -1), B523)],
    "tril": [(tl.tril, M34), (lambda x: tl.tril(x, 1), B523)],
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


def test_every_matrices_rule_has_a_case():
    missing = [n for n in ruled("matrices") if n not in CASES]
    assert not missing, f"matrices rules without a test case: {missing}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_matrices_rule(name):
    for f, *args in CASES[name]:
        check(f, *args)


def test_matrix_norms_of_singular_values_match_numpy():
    for ord_ in (2, -2, "nuc"):
        assert float(tl.norm(tl.param(SQ), ord_)) == pytest.approx(np.linalg.norm(SQ, ord_))
        assert tl.norm(SQ, ord_) == pytest.approx(np.linalg.norm(SQ, ord_))  # plain values too
    x = tl.param(M34)
    np.testing.assert_allclose(
        tl.data(np.linalg.norm(x, 2, axis=(1, 0), keepdims=True)), np.linalg.norm(M34, 2, axis=(1, 0), keepdims=True)
    )
    np.testing.assert_allclose(tl.data(np.linalg.matrix_norm(x, ord="nuc")), np.linalg.matrix_norm(M34, ord="nuc"))


def test_norm_of_zero_has_a_zero_gradient():
    x = tl.param([0.0, 0.0])
    tl.back_(tl.norm(x))
    np.testing.assert_array_equal(x.grad, [0.0, 0.0])
