"""Every example of the Flux.Tracker page (and its translations), in Python, with its numbers."""

import numpy as np
import pytest

import trackerlab as tl


def test_gradient_of_product_is_tracked_like_flux():
    grads = tl.gradient(lambda a, b: a * b, 2, 3)
    assert repr(grads) == "(3.0 (tracked), 2.0 (tracked))"
    assert all(tl.istracked(g) for g in grads)


def test_forward_and_a_backpropagator_called_many_times():
    y, back = tl.forward(lambda a, b: a * b, 2, 3)
    assert repr(y) == "6.0 (tracked)"
    for _ in range(3):
        assert repr(back(1)) == "(3.0 (tracked), 2.0 (tracked))"


def test_forward_with_a_custom_sensitivity_over_arrays():
    y, back = tl.forward(lambda a, b: a * b, [1, 2, 3], [4, 5, 6])
    np.testing.assert_array_equal(tl.data(y), [4.0, 10.0, 18.0])
    da, db = back([1, 1, 1])
    np.testing.assert_array_equal(tl.data(da), [4.0, 5.0, 6.0])
    np.testing.assert_array_equal(tl.data(db), [1.0, 2.0, 3.0])
    assert tl.istracked(da) and tl.istracked(db)


def test_back_in_place_on_reals():
    a, b = tl.param(2), tl.param(3)
    c = a * b
    assert repr(c) == "6.0 (tracked)"
    tl.back_(c)
    assert (tl.grad(a), tl.grad(b)) == (3.0, 2.0)


def test_tracked_arrays_matmul_and_back():
    W = tl.param([[1, 2], [3, 4]])
    x = tl.param([5, 6])
    assert W.dtype == np.float64 and x.dtype == np.float64
    y = W @ x
    np.testing.assert_array_equal(tl.data(y), [17.0, 39.0])
    tl.back_(y, [1, -1])
    np.testing.assert_array_equal(W.grad, [[5.0, 6.0], [-5.0, -6.0]])
    np.testing.assert_array_equal(x.grad, [-2.0, -2.0])
    np.testing.assert_array_equal(x.tracker.grad, [-2.0, -2.0])


def test_the_call_that_made_y_names_matmul_and_holds_its_arguments():
    W = tl.param([[1, 2], [3, 4]])
    x = tl.param([5, 6])
    y = W @ x
    call = y.tracker.f
    assert call.name == "matmul"
    assert call.args == (W.tracker, x.tracker)
    assert repr(call) == "Call(matmul, (param([[1.0, 2.0], [3.0, 4.0]]), param([5.0, 6.0])))"
    np.testing.assert_array_equal(call(), [17.0, 39.0])


def test_leaf_internals_as_the_chinese_deep_dive_shows_them():
    w1 = tl.param(np.array([[1, 2], [3, 4]]))
    np.testing.assert_array_equal(w1.data, [[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(w1.grad, np.zeros((2, 2)))
    assert w1.tracker.isleaf and tl.isleaf(w1)
    assert w1.tracker.f.func is None and w1.tracker.f.args == ()
    assert w1.tracker.f.name == "param"


def test_call_of_plus():
    import operator

    call = tl.Call(operator.add, 1, 2)
    assert call.name == "add" and call.args == (1, 2) and call() == 3


def _minus_by_track():
    def minus(a, b):
        if tl.istracked(a) or tl.istracked(b):
            return tl.track(minus, a, b)
        return a - b

    @tl.grad_rule(minus)
    def _(a, b):
        return minus(tl.data(a), tl.data(b)), lambda Δ: (Δ, -Δ)

    return minus


def _minus_by_primitive():
    @tl.primitive
    def minus(a, b):
        return a - b

    @tl.grad_rule(minus)
    def _(a, b):
        return minus(tl.data(a), tl.data(b)), lambda Δ: (Δ, -Δ)

    return minus


@pytest.mark.parametrize("make", [_minus_by_track, _minus_by_primitive], ids=["track", "primitive"])
def test_custom_minus(make):
    minus = make()
    a, b = tl.param([1, 2, 3]), tl.param([4, 5, 6])
    c = minus(a, b)
    np.testing.assert_array_equal(tl.data(c), [-3.0, -3.0, -3.0])
    assert c.tracker.f.name == "minus"
    tl.back_(c, 1)
    np.testing.assert_array_equal(a.grad, [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(b.grad, [-1.0, -1.0, -1.0])
    assert minus(np.array([1.0]), np.array([2.0])) == -1.0  # untracked: plain result


def test_first_derivative_of_minus_with_gradient():
    minus = _minus_by_primitive()
    assert repr(tl.gradient(minus, 2.0, 3.0)) == "(1.0 (tracked), -1.0 (tracked))"


def test_gradient_of_star_written_as_a_rule_is_nested_correctly():
    # @grad a * b = data(a)*data(b), Δ -> (Δ*b, a*Δ): the pullback uses the tracked a and b
    @tl.primitive
    def times(a, b):
        return a * b

    @tl.grad_rule(times)
    def _(a, b):
        return tl.data(a) * tl.data(b), lambda Δ: (Δ * b, a * Δ)

    # d/da (d/db a*b) = d/da a = 1
    outer = tl.gradient(lambda a: tl.gradient(lambda b: times(a, b), 5.0)[0], 3.0)
    assert repr(outer) == "(1.0 (tracked),)"
    # d²/dx² x·x = 2
    assert float(tl.gradient(lambda x: tl.gradient(lambda y: times(y, y), x)[0], 3.0)[0]) == 2.0


def test_japanese_notebooks_failing_cell_is_a_clear_error_here():
    W = tl.param([[1, 2], [3, 4]])
    x = tl.param([5, 6])
    y = W @ x
    with pytest.raises(ValueError, match=r"back_: y has shape \(2,\); pass a sensitivity Δ"):
        tl.back_(y)
