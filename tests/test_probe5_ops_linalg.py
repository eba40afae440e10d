"""Determinants of 0×0 matrices and ``slogdet``'s named result. ``det`` of a 0×0 matrix is 1 (NumPy's value)
and moves with nothing: its gradient is the empty matrix, where the backward pass failed on a maximum of
nothing; ``slogdet`` returns NumPy's named pair, so ``np.linalg.slogdet(x).logabsdet`` works on a tracked
``x`` as on an array."""

import numpy as np
import pytest

import trackerlab as tl

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
