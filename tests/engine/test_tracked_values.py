"""Tracked values as Python objects: a tracked number is not iterable (else a NumPy scalar's ``IndexError``
would end Python's iteration by ``__getitem__`` at once, and ``sum(tl.sum(x))`` would be 0, its gradient 0,
without a word), and iterating a tracked array gives its rows, tracked, with their gradients."""

import numpy as np
import pytest

import trackerlab as tl

X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])


@pytest.mark.parametrize(
    "make",
    [
        lambda x: tl.sum(x),
        lambda x: tl.sum(x[0] * 2.0),
        lambda x: x[1, 2],
        lambda x: tl.param(2.0),
        lambda x: x[0] @ x[1],
    ],
)
@pytest.mark.parametrize("spelling", [list, tuple, sum, lambda s: [v for v in s], lambda s: next(iter(s))])
def test_iterating_a_tracked_number_is_refused(make, spelling):
    s = make(tl.param(X))
    assert isinstance(s, tl.TrackedReal)
    with pytest.raises(TypeError, match="'TrackedReal' object is not iterable"):
        spelling(s)


def test_python_sum_of_a_tracked_number_inside_gradient_is_refused_not_zero():
    with pytest.raises(TypeError, match="'TrackedReal' object is not iterable"):
        tl.gradient(lambda x: sum(tl.sum(x, axis=0)), np.array([1.0, 2.0]))


def test_iterating_a_tracked_array_gives_tracked_rows_with_their_gradients():
    w = np.array([[2.0, -1.0, 0.5], [3.0, 1.0, -2.0]])
    (g,) = tl.gradient(lambda x: tl.sum(sum(x) * w[0]) + sum(list(x[1] * w[1])), X)
    expected = np.stack([w[0], w[0] + w[1]])  # sum over rows, then the second row weighted again
    np.testing.assert_allclose(tl.data(g), expected)
    (g,) = tl.gradient(lambda x: max(x) * 2.0 + sorted(x)[0], np.array([1.0, 3.0, 0.5]))
    np.testing.assert_allclose(tl.data(g), [0.0, 2.0, 1.0])
    assert len(tl.param(X)) == 2


@pytest.mark.parametrize(
    "differentiate",
    [
        lambda f: tl.gradient(lambda x: tl.sum(f(x)), X),
        lambda f: tl.jacobian(f, X),
        lambda f: tl.hessian(lambda x: tl.sum(f(x) ** 3), X),
        lambda f: tl.forward(f, X),
        lambda f: tl.gradient(lambda: tl.sum(f(W_PARAM)), tl.Params([W_PARAM])),
    ],
)
def test_a_new_parameter_from_a_tracked_value_inside_differentiation_is_refused(differentiate):
    # a new leaf would cut the gradient through x: tl.gradient(lambda x: tl.sum(tl.param(x) * 2), X) would be 0
    with pytest.raises(TypeError, match=r"param\(x\): x is tracked.*tl.param\(tl.data\(x\)\)"):
        differentiate(lambda x: tl.param(x) * 2.0)


W_PARAM = tl.param(X)


def test_a_new_parameter_from_a_value_on_purpose():
    (g,) = tl.gradient(lambda x: tl.sum(tl.param(tl.data(x)) * x), X)  # a constant copy of x, times x
    np.testing.assert_allclose(tl.data(g), X)
    y = tl.param(X) * 3  # outside differentiation, param starts a new leaf from a tracked value's data
    p = tl.param(y)
    assert tl.isleaf(p)
    np.testing.assert_allclose(tl.data(p), 3 * X)


def test_a_parameter_does_not_change_between_a_number_and_an_array():
    s, a = tl.param(1.0), tl.param([1.0, 2.0])
    # a TrackedReal holding an array (and a TrackedArray holding a number) then failed far from here: len,
    # indexing and float() of the wrong kind
    with pytest.raises(TypeError, match=r"x.data = ...: x is a tracked number, and the new value has shape \(2,\)"):
        s.data = np.array([1.0, 2.0])
    with pytest.raises(TypeError, match=r"x.data = ...: x is a tracked array, and the new value has shape \(\)"):
        a.data = 3.0
    assert tl.data(s) == 1.0
    np.testing.assert_array_equal(tl.data(a), [1.0, 2.0])
    s.data = np.array(5.0)  # a 0-d array is a number: fine
    a.data = [[3.0, 4.0, 5.0]]  # another shape of array: fine
    assert tl.data(s) == 5.0 and tl.data(a).shape == (1, 3)
    tl.back_(tl.sum(a * s))
    np.testing.assert_array_equal(a.grad, [[5.0, 5.0, 5.0]])
    assert s.grad == 12.0
