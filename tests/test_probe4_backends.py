"""Nested differentiation on array-API values that are not NumPy's: hessian, jacobian and forward's
backpropagator with a given Δ on array_api_strict values, compared with the same functions on NumPy."""

from __future__ import annotations

import array_api_strict as xs  # a test dependency: its absence is a failure, not a skip
import numpy as np
import pytest

import trackerlab as tl

RNG = np.random.default_rng(4)
A0 = RNG.normal(size=(3, 3)) + 3 * np.eye(3)
X0 = RNG.normal(size=3)
W0 = RNG.normal(size=3)


def loss(A, x, w):
    return (
        tl.sum(tl.tanh(A @ x) * w)
        + tl.mean(x) * tl.sum(A[1:, ::2] ** 2)
        + tl.max(x * x)
        + tl.sum(tl.solve(A, x) * w)
        + tl.sum(tl.inv(A)[0, ...] * w)
        + tl.norm(x)
        + tl.prod(x)
        + tl.sum(tl.cumsum(x, axis=0) * w)
    )


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_hessian_on_array_api_strict_values_equals_numpys():
    strict = tl.hessian(lambda x: loss(tl.param(xs.asarray(A0)), x, xs.asarray(W0)), xs.asarray(X0))
    plain = tl.hessian(lambda x: loss(A0, x, W0), X0)
    assert type(tl.data(strict)).__module__.startswith("array_api_strict")
    np.testing.assert_allclose(np.asarray(tl.data(strict)), tl.data(plain), rtol=1e-10, atol=1e-12)
    # the hessian of the tanh term by hand, so both sides cannot be wrong together
    only_tanh = tl.hessian(lambda x: tl.sum(tl.tanh(x) * xs.asarray(W0)), xs.asarray(X0))
    t = np.tanh(X0)
    np.testing.assert_allclose(np.asarray(tl.data(only_tanh)), np.diag(-2 * t * (1 - t * t) * W0), rtol=1e-12)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_a_numeric_seed_on_an_array_api_strict_loss():
    x = tl.param(xs.asarray(X0))
    _, back = tl.forward(lambda x: tl.sum(tl.sin(x) * x), x)
    (g,) = back(2.5)
    np.testing.assert_allclose(np.asarray(tl.data(g)), 2.5 * (np.cos(X0) * X0 + np.sin(X0)), rtol=1e-12)
    (g,) = tl.gradient(lambda x: tl.sum(tl.sin(x) * x), xs.asarray(X0))
    np.testing.assert_allclose(np.asarray(tl.data(g)), np.cos(X0) * X0 + np.sin(X0), rtol=1e-12)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize(
    "index",
    [
        (slice(None), None, slice(None)),
        (None, Ellipsis),
        (1, None, Ellipsis),
        (slice(1, 3), None, 0, None),
    ],
)
def test_new_axes_in_an_index_on_array_api_strict_values(index):
    w = RNG.normal(size=np.empty((4, 3))[index].shape)
    x = tl.param(xs.asarray(RNG.normal(size=(4, 3))))
    tl.back_(tl.sum(tl.sin(x)[index] * xs.asarray(w)))
    expected = np.zeros((4, 3))
    expected[tuple(i for i in index if i is not None)] = np.reshape(
        w, np.empty((4, 3))[tuple(i for i in index if i is not None)].shape
    )
    np.testing.assert_allclose(np.asarray(tl.grad(x)), expected * np.cos(np.asarray(tl.data(x))), rtol=1e-12)
