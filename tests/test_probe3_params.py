"""``gradient(f, Params([...]))`` with a computed value among the Params, as Tracker.jl allows: its gradient is
the sensitivity that reaches it (it was silently 0). Expected values by hand."""

import numpy as np

import trackerlab as tl


def test_a_computed_value_among_the_params_gets_its_sensitivity():
    W = tl.param([1.0, 2.0])
    h = W * 3
    gs = tl.gradient(lambda: tl.sum(h * h) + tl.sum(W), tl.Params([W, h]))
    np.testing.assert_array_equal(tl.data(gs[h]), [6.0, 12.0])  # 2h
    np.testing.assert_array_equal(tl.data(gs[W]), [19.0, 37.0])  # 2h · 3 + 1, through h as well
    tl.back_(tl.sum(gs[h] * np.array([1.0, 10.0])))  # d/dW Σ 2 · 3W ∘ [1, 10]
    np.testing.assert_array_equal(W.grad, [6.0, 60.0])


def test_a_computed_value_among_the_params_inside_an_outer_gradient():
    W = tl.param([1.0, 2.0])
    h = tl.sin(W)

    def outer():
        gs = tl.gradient(lambda: tl.sum(h**3), tl.Params([h]))
        return tl.sum(gs[h] * np.array([1.0, -2.0]))  # Σ 3 sin²W ∘ [1, −2]

    g = tl.gradient(outer, tl.Params([W]))[W]
    np.testing.assert_allclose(tl.data(g), 6 * np.sin([1.0, 2.0]) * np.cos([1.0, 2.0]) * [1.0, -2.0])


def test_a_computed_value_the_loss_does_not_reach_gets_zero():
    W = tl.param([1.0, 2.0])
    h = W * 3
    gs = tl.gradient(lambda: tl.sum(W * W), tl.Params([W, h]))
    np.testing.assert_array_equal(tl.data(gs[h]), [0.0, 0.0])
    np.testing.assert_array_equal(tl.data(gs[W]), [2.0, 4.0])
