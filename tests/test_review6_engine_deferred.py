"""Differentiating a gradient of gradient(f, Params) (a Hessian-vector product) at a least-squares optimum: the
bias's gradient is a sum of rows that cancel, which the recorded walk rounds otherwise than the plain walk
that gave it, and the replay's comparison refused it as if the batch had changed; a refilled batch is
still refused."""

import numpy as np
import pytest

import trackerlab as tl


def _problem(dtype, seed=0):
    rng = np.random.default_rng(seed)
    X = (rng.normal(size=(128, 10)) * 1e3).astype(dtype)
    Y = (rng.normal(size=(128, 4)) * 1e3).astype(dtype)
    W = tl.param(np.zeros((10, 4), dtype))
    b = tl.param((Y - X @ tl.data(W)).mean(0).astype(dtype))  # the bias at its optimum: its gradient ≈ 0
    return X, Y, W, b


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_gradient_that_cancels_is_differentiated(dtype):
    X, Y, W, b = _problem(dtype)
    ps = tl.Params([W, b])
    gs = tl.gradient(lambda: 0.5 * tl.sum((X @ W + b - Y) ** 2), ps)
    h = tl.gradient(lambda: tl.sum(gs[b]), ps)  # d/dθ Σⱼ Σᵢ rᵢⱼ: 128 for each b, Σᵢ Xᵢₖ for each W[k, j]
    np.testing.assert_allclose(tl.data(h[b]), np.full(4, 128.0), rtol=1e-6)
    np.testing.assert_allclose(tl.data(h[W]), np.tile(X.sum(0, dtype=np.float64)[:, None], (1, 4)), rtol=1e-4)


def test_a_refilled_batch_is_still_refused():
    X, Y, W, b = _problem(np.float64)
    ps = tl.Params([W, b])
    gs = tl.gradient(lambda: 0.5 * tl.sum((X @ W + b - Y) ** 2), ps)
    X[:] = np.random.default_rng(5).normal(size=X.shape) * 1e3  # W = 0: the loss does not see X
    with pytest.raises(RuntimeError, match="same value but a different gradient"):
        tl.gradient(lambda: tl.sum(gs[W]), ps)
