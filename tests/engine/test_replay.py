"""A gradient computed without recording its backward pass is differentiated by running ``f`` again: an
``f`` that gives another value the second time (random numbers, changed state) is refused, never
differentiated as a different function."""

import numpy as np
import pytest

import trackerlab as tl


def test_a_gradient_of_params_whose_f_draws_new_random_numbers_is_refused_when_differentiated():
    rng = np.random.default_rng(0)
    w = tl.param(np.array([0.5, -1.0, 2.0]))

    def f():
        mask = rng.random(3) > 0.5  # dropout drawn inside f: a new mask each run
        return tl.sum(tl.tanh(w * mask * 2.0) ** 2)

    g = tl.gradient(f, tl.Params([w]))
    with pytest.raises(
        RuntimeError, match=r"gradient: f gave a different value when it was run again for the backward pass"
    ):
        tl.back_(tl.sum(g[w] ** 2))
    assert w.grad is None or not np.any(tl.data(w.grad))  # nothing accumulated


def test_a_gradient_whose_f_changes_state_it_reads_is_refused_when_differentiated():
    calls = []

    def f(x):
        calls.append(1)
        return tl.sum(tl.sin(x) * len(calls))

    (gx,) = tl.gradient(f, np.array([0.3, 0.9]))
    with pytest.raises(
        RuntimeError, match=r"forward: f gave a different value when it was run again for the backward pass"
    ):
        tl.back_(tl.sum(gx * gx))


def test_a_deterministic_f_still_gives_exact_second_derivatives():
    w = tl.param(np.array([0.5, -1.0, 2.0]))
    g = tl.gradient(lambda: tl.sum(tl.tanh(w) ** 2), tl.Params([w]))
    tl.back_(tl.sum(g[w] ** 2))
    x = np.array([0.5, -1.0, 2.0])
    t = np.tanh(x)
    first = 2 * t * (1 - t**2)  # d/dx tanh²
    second = 2 * (1 - t**2) ** 2 - 4 * t**2 * (1 - t**2)  # d²/dx² tanh²
    np.testing.assert_allclose(tl.data(w.grad), 2 * first * second, rtol=1e-12)


def test_a_fixed_seed_inside_f_is_the_same_function_each_run():
    w = tl.param(np.array([0.5, -1.0, 2.0]))

    def f():
        mask = np.random.default_rng(7).random(3) > 0.5
        return tl.sum(tl.tanh(w * mask) ** 2)

    g = tl.gradient(f, tl.Params([w]))
    tl.back_(tl.sum(g[w] ** 2))  # no error
    assert np.all(np.isfinite(tl.data(w.grad)))


def test_checkpoint_refuses_an_f_that_draws_new_random_numbers_in_the_replay():
    rng = np.random.default_rng(1)
    x = tl.param(np.array([0.2, 0.4, 0.6, 0.8]))
    y = tl.checkpoint(lambda t: tl.sum(t * (rng.random(4) > 0.5)), x)
    with pytest.raises(
        RuntimeError, match=r"checkpoint: f gave a different value when it was run again for the backward pass"
    ):
        tl.back_(y)


def test_checkpoint_of_a_deterministic_f_is_exact():
    x = tl.param(np.array([0.2, 0.4]))
    tl.back_(tl.checkpoint(lambda t: tl.sum(tl.sin(t) * t), x))
    v = np.array([0.2, 0.4])
    np.testing.assert_allclose(tl.data(x.grad), np.cos(v) * v + np.sin(v), rtol=1e-12)


# ----------------------------------------------------------------------------------------------------
# Gradients differentiated later: ``gradient`` (and ``forward``'s ``back``) at plain inputs run ``f`` again to
# differentiate their results, and compare the gradient the run gives again with the first, not only ``f``'s value:
# at ``w = 0`` a logistic regression's loss is ``log 2`` whatever its batch, so a batch refilled in place before a
# gradient penalty's ``back_`` leaves the value alone while the second derivatives would come from the new batch.
# ----------------------------------------------------------------------------------------------------


RNG = np.random.default_rng(0)
X0 = RNG.standard_normal((8, 3))
Y = np.sign(RNG.standard_normal(8))
NEXT = RNG.standard_normal((8, 3))


def _loss(w, X):
    return tl.mean(tl.log(1 + tl.exp(-Y * (X @ w))))


def _penalty_gradient_by_hand():
    """d/dw |∇L|² at w = 0 for the batch X0: 2 H g, with g = -mean(y x)/2 and H = XᵀX / 4n."""
    g = -(Y[:, None] * X0).mean(0) / 2
    return 2 * (X0.T @ X0 / (4 * len(Y))) @ g


def test_a_gradient_penalty_after_the_batch_was_refilled_is_refused():
    X = X0.copy()
    w = tl.param(np.zeros(3))
    gs = tl.gradient(lambda: _loss(w, X), tl.Params([w]))
    X[:] = NEXT  # the next batch, into the same buffer: the loss at w = 0 is still log 2
    with pytest.raises(RuntimeError, match="gradient: f gave the same value but a different gradient"):
        tl.back_(tl.sum(gs[w] ** 2))
    np.testing.assert_array_equal(w.grad, np.zeros(3))
    X[:] = X0  # the batch it was computed with: right
    tl.back_(tl.sum(gs[w] ** 2))
    np.testing.assert_allclose(w.grad, _penalty_gradient_by_hand(), rtol=1e-10)


def test_forwards_result_differentiated_after_the_batch_was_refilled_is_refused():
    X = X0.copy()
    _, back = tl.forward(lambda w: _loss(w, X), np.zeros(3))
    (g,) = back(1.0)
    X[:] = NEXT
    with pytest.raises(RuntimeError, match="forward: f gave the same value but a different gradient"):
        list(tl.backprop_steps(tl.sum(g * g)))
    X[:] = X0
    (second,) = [s.delta for s in tl.backprop_steps(tl.sum(g * g)) if s.node.isleaf]
    np.testing.assert_allclose(second, _penalty_gradient_by_hand(), rtol=1e-10)


# ----------------------------------------------------------------------------------------------------
# Differentiating a gradient of gradient(f, Params) (a Hessian-vector product) at a least-squares optimum: the bias's
# gradient is a sum of rows that cancel, which the recorded walk rounds otherwise than the plain walk that gave it,
# and the replay's comparison refused it as if the batch had changed; a refilled batch is still refused.
# ----------------------------------------------------------------------------------------------------


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
