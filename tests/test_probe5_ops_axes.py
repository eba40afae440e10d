"""Settings NumPy refuses that trackerlab took silently, giving a wrong value: an axis beyond the array in
``np.take`` and ``np.linalg.norm`` (it wrapped round: ``np.take(x, [0], axis=5)`` of a matrix took column 0),
``ord='fro'`` or ``'nuc'`` for a vector, and ``np.average`` with weights that sum to zero (NaN instead of
NumPy's ``ZeroDivisionError``). Each is now NumPy's refusal, with a message naming the operation. And
``np.tril``/``np.triu`` of a vector, which NumPy reads as a row repeated into a square matrix, was refused
("tuple index out of range"); it now gives NumPy's matrix, and the vector the sum of its rows' sensitivities."""

import numpy as np
import pytest
from differences import differences

import trackerlab as tl

RNG = np.random.default_rng(20261123)
X = RNG.standard_normal((3, 4))

REFUSED = {
    "np.take(x, [0], axis=5)": (lambda a: np.take(a, [0], axis=5), ValueError, "take: axis 5 is out of bounds"),
    "np.take(x, [0], axis=-3)": (lambda a: np.take(a, [0], axis=-3), ValueError, "take: axis -3 is out of bounds"),
    "np.linalg.norm(x, axis=5)": (lambda a: np.linalg.norm(a, axis=5), ValueError, "norm: axis 5 is out of bounds"),
    "np.linalg.norm(x, axis=(0, 5))": (lambda a: np.linalg.norm(a, axis=(0, 5)), ValueError, "norm: axis 5"),
    "np.linalg.norm(x, 2, axis=(-3, 1))": (lambda a: np.linalg.norm(a, 2, axis=(-3, 1)), ValueError, "norm: axis -3"),
    "np.linalg.norm(x, 'fro', axis=0)": (lambda a: np.linalg.norm(a, "fro", axis=0), ValueError, "ord='fro' is a norm"),
    "np.linalg.norm(x[0], 'fro')": (lambda a: np.linalg.norm(a[0], "fro"), ValueError, "ord='fro' is a norm of matrices"),
    "np.linalg.norm(x, 'nuc', axis=1)": (lambda a: np.linalg.norm(a, "nuc", axis=1), ValueError, "ord='nuc' is a norm"),
    "np.average(x, axis=1, weights=[1, -1, 0, 0])": (
        lambda a: np.average(a, axis=1, weights=np.array([1.0, -1.0, 0.0, 0.0])),
        ZeroDivisionError,
        "average: the weights sum to zero",
    ),
    "np.average(x, weights=zeros)": (
        lambda a: np.average(a, weights=np.zeros((3, 4))),
        ZeroDivisionError,
        "average: the weights sum to zero",
    ),
}


@pytest.mark.parametrize("name", REFUSED)
def test_what_numpy_refuses_is_refused_naming_the_operation(name):
    f, error, message = REFUSED[name]
    with pytest.raises(Exception):  # noqa: B017  (NumPy's own error types differ: AxisError, ValueError, …)
        f(X)
    with pytest.raises(error, match=message):
        f(tl.param(X))
    with pytest.raises(error, match=message):
        tl.gradient(lambda a: tl.sum(f(a)), X)


def test_axes_in_range_still_work():
    x = tl.param(X)
    np.testing.assert_allclose(tl.data(np.take(x, [0, 0], axis=-2)), np.take(X, [0, 0], axis=-2))
    np.testing.assert_allclose(tl.data(np.linalg.norm(x, 1, axis=(-1, 0))), np.linalg.norm(X, 1, axis=(-1, 0)))
    np.testing.assert_allclose(tl.data(np.linalg.norm(x, "fro")), np.linalg.norm(X, "fro"))


def _differences(f, x, W, eps=1e-6):
    return differences(f, [x], 0, W, eps)


@pytest.mark.parametrize("f", [lambda a: np.tril(a), lambda a: np.triu(a, 1), lambda a: np.tril(a, -1) ** 2])
def test_a_triangle_of_a_vector_is_numpys_matrix_with_the_gradient(f):
    v = RNG.standard_normal(4)
    np.testing.assert_allclose(tl.data(f(tl.param(v))), f(v))
    W = RNG.standard_normal((4, 4))
    got = tl.data(tl.gradient(lambda a: tl.sum(f(a) * W), v)[0])
    np.testing.assert_allclose(got, _differences(f, v, W), rtol=1e-6, atol=1e-8)


def test_the_triangle_of_a_vector_by_hand():
    """tril([a, b, c]) = [[a, 0, 0], [a, b, 0], [a, b, c]]: a appears three times, b twice, c once."""
    (g,) = tl.gradient(lambda v: tl.sum(np.tril(v)), np.array([1.0, 2.0, 3.0]))
    assert tl.data(g).tolist() == [3.0, 2.0, 1.0]
