"""Gradient checks of inverses, determinants and solves, to second order: ``inv``, ``det``, ``slogdet``,
``solve``, ``cholesky`` and the composite ``matrix_power``."""

import re

import numpy as np
import pytest
from test_rules import check, host, on, rand, ruled
from test_rules_linalg import BSQ, M34, SQ, v3

import trackerlab as tl
from trackerlab.backends.arrays import namespace


def spd(a):
    """A symmetric positive-definite matrix made from ``a`` (so cholesky's input stays valid)."""
    return tl.matmul(a, tl.swapaxes(a, -1, -2)) + 3 * namespace(tl.data(a)).eye(tl.data(a).shape[-1])


CASES = {
    "inv": [(tl.inv, SQ), (tl.inv, BSQ)],
    "det": [(tl.det, SQ), (tl.det, BSQ)],
    "slogdet": [(lambda x: tl.slogdet(x)[1], SQ), (lambda x: tl.slogdet(x)[1], -BSQ)],
    "solve": [
        (tl.solve, SQ, v3),
        (tl.solve, SQ, M34),
        (tl.solve, BSQ, v3),
        # the batch axes broadcast, as NumPy's do (CuPy's solve does not broadcast them: solve does it first)
        (tl.solve, BSQ, rand(3, 2)),
        (tl.solve, SQ, rand(2, 3, 2, seed=11)),
        (tl.solve, BSQ[:, None], rand(4, 3, 2, seed=12)),
    ],
    "cholesky": [
        (lambda a: tl.cholesky(spd(a)), rand(3, 3)),
        (lambda a: tl.cholesky(spd(a), upper=True), BSQ),
        # not symmetric: NumPy reads one triangle (diagonally dominant, so it stands for a positive-definite matrix)
        (tl.cholesky, SQ),
        (lambda a: tl.cholesky(a, upper=True), BSQ),
    ],
}


def test_every_inverses_rule_has_a_case():
    missing = [n for n in ruled("inverses") if n not in CASES]
    assert not missing, f"inverses rules without a test case: {missing}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_inverses_rule(name):
    for f, *args in CASES[name]:
        check(f, *args)


# (the composite through tl, the same through NumPy on plain arrays, arguments)
COMPOSITES = [
    (lambda x: tl.matrix_power(x, 3), lambda x: np.linalg.matrix_power(x, 3), SQ),
    (lambda x: tl.matrix_power(x, -2), lambda x: np.linalg.matrix_power(x, -2), SQ),
    (lambda x: tl.matrix_power(x, 0) * x, lambda x: np.linalg.matrix_power(x, 0) * x, SQ),
]


@pytest.mark.parametrize("case", range(len(COMPOSITES)))
def test_composites_of_inverse_operations(case):
    f, numpy_f, *args = COMPOSITES[case]
    np.testing.assert_allclose(tl.data(f(*(tl.param(a) for a in args))), numpy_f(*args))
    check(f, *args)


def test_slogdet_returns_a_plain_sign_and_a_tracked_log():
    sign, logdet = tl.slogdet(tl.param([[0.0, 2.0], [3.0, 0.0]]))
    assert float(sign) == -1.0 and not tl.istracked(sign)
    assert tl.istracked(logdet) and float(logdet) == pytest.approx(np.log(6.0))


# ----------------------------------------------------------------------------------------------------
# Determinants of 0×0 matrices and ``slogdet``'s named result. ``det`` of a 0×0 matrix is 1 (NumPy's value) and moves
# with nothing: its gradient is the empty matrix, where the backward pass failed on a maximum of nothing; ``slogdet``
# returns NumPy's named pair, so ``np.linalg.slogdet(x).logabsdet`` works on a tracked ``x`` as on an array.
# ----------------------------------------------------------------------------------------------------


SPELLINGS = {
    "np.linalg.det": lambda a: np.linalg.det(a),
    "np.linalg.slogdet(...).logabsdet": lambda a: np.linalg.slogdet(a).logabsdet,
    "tl.slogdet(...)[1]": lambda a: tl.slogdet(a)[1],
}


@pytest.mark.parametrize("name", SPELLINGS)
@pytest.mark.parametrize("shape", [(0, 0), (3, 0, 0)])
def test_the_determinant_of_empty_matrices_has_an_empty_gradient(name, shape):
    f = SPELLINGS[name]
    x = tl.param(np.zeros(shape))
    y = f(x)
    np.testing.assert_array_equal(tl.data(y), f(np.zeros(shape)))
    tl.back_(tl.sum(y))
    assert x.grad.shape == shape
    (g,) = tl.gradient(lambda a: tl.sum(f(a)), np.zeros(shape))
    assert tl.data(g).shape == shape
    assert tl.hessian(lambda a: tl.sum(f(a)), np.zeros(shape)).shape == shape + shape


def test_slogdet_has_numpys_named_fields():
    a = np.array([[2.0, 1.0], [1.0, -3.0]])
    x = tl.param(a)
    got, want = np.linalg.slogdet(x), np.linalg.slogdet(a)
    assert float(got.sign) == want.sign == -1.0
    assert float(tl.data(got.logabsdet)) == pytest.approx(want.logabsdet)
    sign, logabsdet = tl.slogdet(x)
    assert logabsdet is not None and float(sign) == -1.0
    tl.back_(got.logabsdet)
    np.testing.assert_allclose(x.grad, np.linalg.inv(a).T)  # d log|det a| / da = a⁻ᵀ


@pytest.mark.parametrize("backend", ["numpy", "devicearray"])
def test_solve_broadcasts_the_batch_axes_as_numpy_does_and_names_those_that_do_not(backend):
    a, b = BSQ[:, None], rand(4, 3, 2, seed=12)
    x = tl.solve(tl.param(on(backend, a)), on(backend, b))
    np.testing.assert_allclose(host(tl.data(x)), np.linalg.solve(a, b), rtol=1e-12)
    a, b = on(backend, rand(2, 3, 3) + 3 * np.eye(3)), on(backend, rand(4, 3, 2))
    with pytest.raises(ValueError, match=re.escape("solve: the batch axes of a (2, 3, 3) and b (4, 3, 2) do not")):
        tl.solve(tl.param(a), b)
