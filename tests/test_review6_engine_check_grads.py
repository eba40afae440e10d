"""check_grads catches a rule 1% wrong in a function whose derivatives are small (0.001, 10⁻⁶: the default
atol of 10⁻⁶ let it pass wherever they were below about 10⁻⁴), and passes the right rule at every scale."""

import numpy as np
import pytest

import trackerlab as tl


def _scaled_sine(scale: float, factor: float):
    def f(x):
        return tl.track(f, x)

    @tl.grad_rule(f)
    def _(x):
        return scale * np.sin(tl.data(x)), lambda Δ: (Δ * (scale * factor) * tl.cos(x),)

    return f


@pytest.mark.parametrize("scale", [1e3, 1.0, 1e-3, 1e-6])
@pytest.mark.parametrize("at", [np.array([0.3, 1.1, -0.7]), 0.4], ids=["array", "number"])
def test_a_rule_one_percent_wrong_fails_at_every_scale(scale, at):
    f = _scaled_sine(scale, 1.01)
    with pytest.raises(AssertionError, match="order 1"):
        tl.check_grads(lambda x: tl.sum(f(x)), at)


@pytest.mark.parametrize("scale", [1e3, 1.0, 1e-3, 1e-6, 1e-12])
@pytest.mark.parametrize("at", [np.array([0.3, 1.1, -0.7]), 0.4], ids=["array", "number"])
def test_the_right_rule_passes_at_every_scale(scale, at):
    tl.check_grads(lambda x: tl.sum(_scaled_sine(scale, 1.0)(x)), at)
    tl.check_grads(lambda x: scale * tl.sum(tl.sin(x) * tl.exp(x)), at)


def test_derivatives_that_are_exactly_zero_after_cancelling_pass():
    tl.check_grads(lambda x: tl.prod(x), np.array([0.0, 0.0, 2.0]))
    tl.check_grads(lambda x: tl.var(x * 0.0 + 1.0), np.array([0.3, 1.1, -0.7]))
