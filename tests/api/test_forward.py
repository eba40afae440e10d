"""forward's backpropagator with a tracked Δ: a tracked scalar spreads over an array y as a number does,
and the result can be differentiated with respect to Δ and to the inputs."""

from __future__ import annotations

import numpy as np

import trackerlab as tl

RNG = np.random.default_rng(44)
X0 = RNG.normal(size=3)
DERIVATIVE = np.cos(X0) * X0 + np.sin(X0)  # of sin(x) * x


def test_a_tracked_scalar_sensitivity_spreads_over_an_array_output():
    x = tl.param(X0)
    _, back = tl.forward(lambda x: tl.sin(x) * x, x)
    c = tl.param(1.5)
    (r,) = back(c)
    np.testing.assert_allclose(tl.data(r), 1.5 * DERIVATIVE, rtol=1e-12)
    w = np.array([1.0, -2.0, 0.5])
    tl.back_(tl.sum(r * w))
    np.testing.assert_allclose(tl.grad(c), np.sum(DERIVATIVE * w), rtol=1e-12)
    second = 2 * np.cos(X0) - X0 * np.sin(X0)
    np.testing.assert_allclose(tl.grad(x), 1.5 * second * w, rtol=1e-12)


def test_a_tracked_zero_d_array_sensitivity_and_an_array_one_agree():
    x = tl.param(X0)
    _, back = tl.forward(lambda x: tl.sin(x) * x, x)
    (spread,) = back(tl.param(np.array(2.0)))
    (given,) = back(tl.param(np.full(3, 2.0)))
    np.testing.assert_allclose(tl.data(spread), tl.data(given), rtol=1e-15)
    np.testing.assert_allclose(tl.data(given), 2 * DERIVATIVE, rtol=1e-12)
