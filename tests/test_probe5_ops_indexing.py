"""Indices that NumPy reads as positions although they are not lists or integer arrays: a tuple inside the
index (``x[(0, 0),]``, ``x[:, (1, 1)]``, ``x[((0, 0), (1, 1))]``) and a tuple of indices given to ``take``. A
position given twice selects its element twice, and its gradient must receive both contributions; the scatter
of the sensitivity wrote them (keeping one) instead of adding them. Checked by hand and against central
differences of ``Σ W ∘ f(x)`` with random weights ``W``, to second order, through ``gradient`` and ``back_``."""

import numpy as np
import pytest
from differences import differences

import trackerlab as tl

RNG = np.random.default_rng(20261123)


def _differences(f, x, W, eps=1e-6):
    return differences(f, [x], 0, W, eps)


CASES = {
    "x[(0, 0),]": (lambda a: a[(0, 0),], (4,)),
    "x[(2, 0, 2, 2),]": (lambda a: a[(2, 0, 2, 2),], (3, 2)),
    "x[:, (1, 1)]": (lambda a: a[:, (1, 1)], (2, 3)),
    "x[((0, 0), (1, 1))]": (lambda a: a[((0, 0), (1, 1))], (2, 3)),
    "x[(0, 0), :]": (lambda a: a[(0, 0), :], (2, 3)),
    "x[..., (-1, 2)]": (lambda a: a[..., (-1, 2)], (2, 3)),
    "x[(1, 1), 0, None]": (lambda a: a[(1, 1), 0, None], (2, 3)),
    "np.take(x, (0, 0))": (lambda a: np.take(a, (0, 0)), (4,)),
    "np.take(x, (1, -2, 1), axis=1)": (lambda a: np.take(a, (1, -2, 1), axis=1), (2, 3)),
    "x.take((0, 0, 3))": (lambda a: a.take((0, 0, 3)), (2, 2)),
}


def test_a_position_given_twice_in_a_tuple_receives_both_contributions():
    x = np.arange(4.0)
    assert tl.data(tl.gradient(lambda a: tl.sum(a[(0, 0),]), x)[0]).tolist() == [2.0, 0.0, 0.0, 0.0]
    assert tl.data(tl.gradient(lambda a: tl.sum(np.take(a, (3, 3, 3))), x)[0]).tolist() == [0.0, 0.0, 0.0, 3.0]
    m = tl.param(np.arange(6.0).reshape(2, 3))
    tl.back_(tl.sum(m[:, (1, 1)] * np.array([[1.0, 10.0], [100.0, 1000.0]])))
    assert m.grad.tolist() == [[0.0, 11.0, 0.0], [0.0, 1100.0, 0.0]]


@pytest.mark.parametrize("name", CASES)
def test_tuple_indices_against_differences(name):
    f, shape = CASES[name]
    x = RNG.standard_normal(shape)
    W = RNG.standard_normal(np.shape(f(x)))
    want = _differences(f, x, W)
    got = tl.data(tl.gradient(lambda a: tl.sum(f(a) * W), x)[0])
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
    p = tl.param(x)
    tl.back_(f(p), W)
    np.testing.assert_allclose(p.grad, want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", CASES)
def test_tuple_indices_to_second_order(name):
    """The gradient of Σ U ∘ ∇(Σ W ∘ f(x)³): the cube makes the second derivative depend on the repeats."""
    f, shape = CASES[name]
    x = RNG.standard_normal(shape)
    W = RNG.standard_normal(np.shape(f(x)))
    U = RNG.standard_normal(shape)

    def first(a):
        return tl.gradient(lambda b: tl.sum(f(b) ** 3 * W), a)[0]

    want = _differences(lambda a: tl.data(first(a)), x, U, eps=1e-5)
    got = tl.data(tl.gradient(lambda a: tl.sum(first(a) * U), x)[0])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


SCALAR_INDICES = {
    "x[()]": (lambda a: a[()] * a, lambda v: 2 * v),
    "x[...]": (lambda a: a[...] ** 3, lambda v: 3 * v**2),
    "x[None] · [2, 3]": (lambda a: tl.sum(a[None] * np.array([2.0, 3.0])), lambda v: 5.0),
    "x[None, None][0, 0]": (lambda a: a[None, None][0, 0] ** 2, lambda v: 2 * v),
    "x[None][[0, 0]]": (lambda a: tl.sum(a[None][[0, 0]] ** 2), lambda v: 4 * v),
}


@pytest.mark.parametrize("name", SCALAR_INDICES)
def test_a_tracked_number_is_indexed_as_numpys_scalars_are(name):
    """A 0-d parameter is a tracked number; ``x[()]``, ``x[...]`` and ``x[None]`` work on it as on ``np.float64``
    (they were "'float' object is not subscriptable"), with the gradient to second order."""
    f, slope = SCALAR_INDICES[name]
    np.testing.assert_allclose(tl.data(f(tl.param(1.3))), tl.data(f(np.float64(1.3))))
    (g,) = tl.gradient(f, 1.3)
    assert float(tl.data(g)) == pytest.approx(slope(1.3))
    second = tl.gradient(lambda v: tl.gradient(f, v)[0], 1.3)[0]
    eps = 1e-5
    want = (float(tl.data(tl.gradient(f, 1.3 + eps)[0])) - float(tl.data(tl.gradient(f, 1.3 - eps)[0]))) / (2 * eps)
    assert float(tl.data(second)) == pytest.approx(want, abs=1e-6)
