"""A fifth probe of gradients differentiated later: ``gradient`` (and ``forward``'s ``back``) at plain inputs
run ``f`` again to differentiate their results, and compared only ``f``'s value with the first run's. At
``w = 0`` a logistic regression's loss is ``log 2`` whatever its batch, so a batch refilled in place before a
gradient penalty's ``back_`` went unseen and the second derivatives came from the new batch, without a word.
The gradient the run gives again is compared too."""

import numpy as np
import pytest

import trackerlab as tl

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
