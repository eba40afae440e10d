"""A Jacobian or Hessian taken inside a function being differentiated is differentiated too: it was a plain
array there, so a third derivative through ``hessian`` or ``jacobian`` came out 0, and so did the gradient of
a Jacobian with respect to a parameter its function closes over, without a word."""

import numpy as np
import pytest

import trackerlab as tl

RNG = np.random.default_rng(2)
W0, X0, V = RNG.random((2, 3)), RNG.random(3), RNG.random((2, 3))


def central(f, x, h=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


@pytest.mark.parametrize("inner", ["hessian", "jacobian of gradient"])
def test_a_third_derivative_through_a_hessian(inner):
    x0, v = np.array([0.7, 1.1, 1.3]), np.arange(9.0).reshape(3, 3)
    f = lambda x: tl.sum(x**3 * 1.5 + tl.sin(x))

    def second(x):
        if inner == "hessian":
            return tl.hessian(f, x)
        return tl.jacobian(lambda z: tl.gradient(f, z)[0], x)

    g = tl.gradient(lambda x: tl.sum(second(x) * v), x0)[0]
    want = (9.0 - np.cos(x0)) * np.diag(v)  # d/dx of sum_i (9 x_i - sin x_i) v_ii
    np.testing.assert_allclose(tl.data(g), want, rtol=1e-12)


def test_the_gradient_of_a_jacobian_reaches_the_parameters_its_function_closes_over():
    loss = lambda W: tl.sum(tl.jacobian(lambda x: tl.sin(W @ x), X0) * V)
    plain = lambda W: np.sum(np.cos(W @ X0)[:, None] * W * V)
    np.testing.assert_allclose(tl.data(tl.gradient(loss, W0)[0]), central(plain, W0), atol=1e-8)
    W = tl.param(W0)
    gs = tl.gradient(lambda: loss(W) + tl.sum(W), tl.Params([W]))
    np.testing.assert_allclose(tl.data(gs[W]), central(plain, W0) + 1, atol=1e-8)


def test_the_gradient_of_a_hessian_reaches_the_parameters_its_function_closes_over():
    loss = lambda W: tl.sum(tl.hessian(lambda x: tl.sum(tl.sin(W @ x)), X0))
    plain = lambda W: np.sum(W.T @ np.diag(-np.sin(W @ X0)) @ W)
    np.testing.assert_allclose(tl.data(tl.gradient(loss, W0)[0]), central(plain, W0), atol=1e-8)


def test_at_top_level_a_jacobian_is_still_a_plain_array():
    J = tl.jacobian(lambda x: x * x, tl.param([1.0, 2.0]))
    assert type(J) is np.ndarray
    np.testing.assert_array_equal(J, [[2.0, 0.0], [0.0, 4.0]])
