"""Subgradient conventions at the edges of selections, with hand-derived values: which argument receives the
sensitivity where ``clip``'s bounds cross or touch ``x``."""

import numpy as np

import trackerlab as tl

W = np.array([1.0, 10.0, 100.0, 1000.0])


def _grads(x, lo, hi):
    return [tl.data(g) for g in tl.gradient(lambda *a: tl.sum(tl.clip(*a) * W), x, lo, hi)]


def test_clip_with_a_lower_bound_above_the_upper_gives_everything_to_the_upper():
    # NumPy's clip is minimum(maximum(x, lo), hi): where lo > hi the result is hi whatever x is. Both bounds
    # received the sensitivity there (twice the true total), silently
    x = np.array([0.3, -0.7, 1.1, 0.5])
    lo = np.array([0.5, 0.2, -1.0, 0.9])
    hi = np.array([0.1, 0.6, 0.8, 0.2])
    np.testing.assert_array_equal(tl.data(tl.clip(tl.param(x), lo, hi)), np.clip(x, lo, hi))
    gx, glo, ghi = _grads(x, lo, hi)
    np.testing.assert_array_equal(gx, [0.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(glo, [0.0, 10.0, 0.0, 0.0])
    np.testing.assert_array_equal(ghi, [1.0, 0.0, 100.0, 1000.0])


def test_clip_at_a_bound_it_touches_gives_x_the_sensitivity():
    # PyTorch's convention (clamp's gradient is 1 on the closed interval); JAX's minimum/maximum composition
    # would split a tie
    x = np.array([0.2, 0.8, 0.5, 0.5])
    gx, glo, ghi = _grads(x, np.full(4, 0.2), np.full(4, 0.8))
    np.testing.assert_array_equal(gx, W)
    np.testing.assert_array_equal(glo + ghi, np.zeros(4))


def test_clip_of_nan_with_crossed_bounds_passes_the_nan_through_x():
    x, lo, hi = np.array([np.nan, 0.0, 0.0, 0.0]), np.full(4, 0.6), np.full(4, 0.2)
    y = tl.clip(tl.param(x), lo, hi)
    np.testing.assert_array_equal(tl.data(y), np.clip(x, lo, hi))
    p = tl.param(x)
    low, high = tl.param(lo), tl.param(hi)
    tl.back_(tl.clip(p, low, high), W)
    np.testing.assert_array_equal(p.grad, [1.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(high.grad, [0.0, 10.0, 100.0, 1000.0])
    np.testing.assert_array_equal(low.grad, np.zeros(4))


def test_matrix_norms_at_zero_take_the_documented_subgradients():
    zero = np.zeros((2, 2))
    for order, want in ((2, np.eye(2) / 2), (-2, np.eye(2) / 2), ("nuc", np.eye(2)), ("fro", zero), (1, zero)):
        (g,) = tl.gradient(lambda x: tl.norm(x, ord=order), zero)
        np.testing.assert_array_equal(tl.data(g), want, err_msg=f"ord={order}")
