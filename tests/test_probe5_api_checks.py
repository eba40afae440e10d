"""A fifth probe of ``tl.check_grads``: its tolerance is relative to the derivatives it compares, so a rule
1% wrong is caught in a function whose derivatives are small (a floor of 1 on the relative scale let it pass
wherever they were below about 0.1), and a right rule still passes at every scale."""

import numpy as np
import pytest

import trackerlab as tl

X = np.array([0.3, 0.7, 1.1])


def _sine(slope_error: float):
    @tl.primitive
    def sine(x):
        return np.sin(tl.data(x))

    @tl.grad_rule(sine)
    def _(x):
        return np.sin(tl.data(x)), lambda g: (g * tl.cos(x) * (1 + slope_error),)

    return sine


@pytest.mark.parametrize("scale", [1.0, 0.1, 0.01])
@pytest.mark.parametrize("reduce", [True, False])
def test_a_rule_one_percent_wrong_is_caught_in_a_small_function(scale, reduce):
    sine = _sine(0.01)

    def f(x):
        y = sine(x) * scale
        return tl.sum(y) if reduce else y

    with pytest.raises(AssertionError, match="order 1"):
        tl.check_grads(f, X, order=1)


@pytest.mark.parametrize("scale", [1e-3, 1e-2, 1.0, 1e2, 1e4])
def test_a_right_rule_passes_at_every_scale(scale):
    sine = _sine(0.0)
    tl.check_grads(lambda x: tl.sum(sine(x) * x) * scale, X)
    tl.check_grads(lambda x: tl.sin(x) * x * scale + 1e3, X)  # a large offset: the differences' roundoff


def test_a_second_derivative_one_percent_wrong_is_caught_in_a_small_function():
    @tl.primitive
    def cube(x):
        return tl.data(x) ** 3

    @tl.grad_rule(cube)
    def _(x):  # 3x² right; its own derivative 6x·1.01 wrong by 1%
        return tl.data(x) ** 3, lambda g: (g * (3 * x**2 + 0.01 * (x**2 - tl.data(x) ** 2) * 3),)

    with pytest.raises(AssertionError, match="order 2"):
        tl.check_grads(lambda x: tl.sum(cube(x)) * 0.01, X)
