"""A fifth probe of constants changed between the forward and the backward pass: a list or dict given to a
``@tl.grad_rule`` function (by position or keyword), and the arrays in it, are compared when the walk runs, as
a NumPy array given to it is. The pullback closes over them and read their new values without a word."""

import numpy as np
import pytest

import trackerlab as tl


def _scale(x, cs, **settings):
    return tl.track(_scale, x, cs, **settings)


@tl.grad_rule(_scale)
def _(x, cs, **settings):
    factor = cs["a"] * cs["b"] if isinstance(cs, dict) else cs[0] * cs[1]
    factor = factor * settings.get("also", [1.0])[0]
    return tl.data(x) * factor, lambda g: (g * factor, None)


def _lists():
    return [np.array([1.0, 2.0]), np.array([3.0, 4.0])]


CASES = {
    "array in a list": (_lists, lambda c: c[0].__setitem__(0, 9.0)),
    "number in a list": (lambda: [1.0, 2.0], lambda c: c.__setitem__(0, 9.0)),
    "list appended to": (lambda: [1.0, 2.0], lambda c: c.append(5.0)),
    "number in a dict": (lambda: {"a": np.array([1.0, 2.0]), "b": 3.0}, lambda c: c.__setitem__("b", 9.0)),
    "array in a dict": (lambda: {"a": np.array([1.0, 2.0]), "b": 3.0}, lambda c: c["a"].__setitem__(1, 0.0)),
    "list in a tuple": (lambda: (np.array([1.0, 2.0]), [3.0]), lambda c: c[1].__setitem__(0, 9.0)),
    "nested list": (lambda: [[1.0], [2.0, np.array(3.0)]], lambda c: c[1][1].__setitem__((), 0.5)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_container_of_a_custom_rule_changed_before_back_is_refused(case):
    make, change = CASES[case]
    x = tl.param([1.0, 1.0])
    cs = make()
    y = tl.sum(_scale(x, cs)) if case != "nested list" else tl.sum(tl.track(_nested, x, cs))
    change(cs)
    with pytest.raises(RuntimeError, match=r"argument 2 \(a constant (list|dict|tuple)\) was changed in place"):
        tl.back_(y)
    np.testing.assert_array_equal(x.grad, [0.0, 0.0])


def _nested(x, cs):
    return tl.track(_nested, x, cs)


@tl.grad_rule(_nested)
def _(x, cs):
    return tl.data(x) * float(cs[1][1]), lambda g: (g * float(cs[1][1]), None)


def test_a_keyword_list_of_a_custom_rule_is_compared_too():
    x = tl.param([1.0, 1.0])
    also = [2.0]
    y = tl.sum(_scale(x, [1.0, 3.0], also=also))
    also[0] = 5.0
    with pytest.raises(RuntimeError, match=r"the keyword argument also= \(a constant list\) was changed in place"):
        tl.back_(y)
    also[0] = 2.0  # as recorded again: the gradient at the values the forward pass used
    tl.back_(y)
    np.testing.assert_allclose(x.grad, [6.0, 6.0])


@pytest.mark.parametrize("case", ["array in a list", "number in a dict", "list in a tuple"])
def test_unchanged_containers_give_the_gradient(case):
    make, _ = CASES[case]
    x = tl.param([1.0, 1.0])
    cs = make()
    tl.back_(tl.sum(_scale(x, cs)))
    factor = {"array in a list": [3.0, 8.0], "number in a dict": [3.0, 6.0], "list in a tuple": [3.0, 6.0]}[case]
    np.testing.assert_allclose(x.grad, factor)


def test_a_list_with_nan_that_is_not_changed_is_not_refused():
    x = tl.param([1.0, 1.0])
    y = tl.sum(_scale(x, [np.array([1.0, np.nan]), 2.0]))
    tl.back_(y)
    np.testing.assert_array_equal(x.grad, [2.0, np.nan])
