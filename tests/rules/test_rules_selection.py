"""Gradient checks of the selections (``maximum``, ``minimum``, ``fmax``, ``fmin``, ``where``, ``clip``,
``nan_to_num``, ``select``), to second order, on shapes and broadcasts drawn by hypothesis, on NumPy and
on the other backends, away from their kinks; and what the checks cannot see: ties, NaN, the unselected side."""

import numpy as np
import pytest
from hypothesis import strategies as st
from test_rules import (
    AWAY,
    BACKENDS,
    GRID,
    OFF_GRID,
    REAL,
    alternating,
    check,
    family_tests,
)

import trackerlab as tl

UNARY = {
    "nan_to_num": REAL,
}

# binary: (domain of x, domain of y)
BINARY = {
    "maximum": (GRID, OFF_GRID),
    "minimum": (GRID, OFF_GRID),
    "fmax": (GRID, OFF_GRID),
    "fmin": (GRID, OFF_GRID),
}


def _where(backend):
    return lambda c, x, y: tl.where(tl.data(c) > 0, x, y)


def _clip(backend):
    return lambda x, lo, hi: tl.clip(x, lo, hi)


# the rest: (domains of the arguments, the function of those arguments on a backend)
OTHER = {
    "where": ((AWAY, REAL, REAL), _where),
    "clip": (((-2.0, 2.0, (-0.5, 0.5)), st.just(-0.5), st.just(0.5)), _clip),
}


globals().update(family_tests("selection", UNARY, BINARY, OTHER))  # the rule tests from the case tables


# ---------------------------------------------------------------- composites: select


COMPOSITES = [
    (lambda x, y: tl.select([tl.data(x) > 0.3, tl.data(y) < 0], [x * 2.0, y], default=x * y), (3, 4), (4,)),
    (lambda x: tl.select([tl.data(x) > 0], [tl.sin(x)]), (5,)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", range(len(COMPOSITES)))
def test_composites_of_selections(case, backend):
    f, *shapes = COMPOSITES[case]
    check(f, *alternating(shapes), backend=backend)


# ---------------------------------------------------------------- what the checks cannot see


def test_maximum_ties_share_the_gradient():
    x, y = tl.param([1.0, 2.0, 3.0]), tl.param([1.0, 0.0, 5.0])
    tl.back_(tl.sum(tl.maximum(x, y)))
    np.testing.assert_array_equal(x.grad, [0.5, 1.0, 0.0])
    np.testing.assert_array_equal(y.grad, [0.5, 0.0, 1.0])


def test_where_sends_nothing_to_the_unselected_side():
    x, y = tl.param([1.0, -1.0]), tl.param([10.0, 20.0])
    tl.back_(tl.sum(tl.where(tl.data(x) > 0, x, y)))
    np.testing.assert_array_equal(x.grad, [1.0, 0.0])
    np.testing.assert_array_equal(y.grad, [0.0, 1.0])


def test_clip_with_bounds_given_as_min_and_max():
    x = tl.param([-2.0, 0.5, 2.0])
    tl.back_(tl.sum(tl.clip(x, min=-1.0, max=1.0)))
    np.testing.assert_array_equal(x.grad, [0.0, 1.0, 0.0])


def test_fmax_and_fmin_send_the_sensitivity_to_a_number_facing_nan():
    # fmax(1, nan) is 1 and fmin(2, nan) is 2: that argument takes the whole gradient, the NaN none
    nan = np.nan
    for f, other, expected in ((tl.fmax, [nan, 1.0], [1.0, 1.0]), (tl.fmin, [nan, 3.0], [1.0, 1.0])):
        x = tl.param([1.0, 2.0])
        tl.back_(tl.sum(f(x, np.array(other))))
        np.testing.assert_array_equal(x.grad, expected)
    y = tl.param([nan, 5.0])
    tl.back_(tl.sum(tl.fmax(np.array([1.0, 2.0]), y)))
    np.testing.assert_array_equal(y.grad, [0.0, 1.0])
    a = tl.param(1.0)
    tl.back_(tl.fmin(a, nan))
    assert a.grad == 1.0


def test_nan_to_num_sends_nothing_to_replaced_entries():
    x = tl.param([1.0, np.nan, np.inf, -np.inf])
    y = np.nan_to_num(x, posinf=5.0, neginf=-5.0)
    np.testing.assert_array_equal(tl.data(y), [1.0, 0.0, 5.0, -5.0])
    tl.back_(tl.sum(y * 3.0))
    np.testing.assert_array_equal(x.grad, [3.0, 0.0, 0.0, 0.0])
    z = tl.param(np.array([complex(np.nan, 2.0), complex(1.0, np.inf)]))
    tl.back_(tl.sum(tl.real(tl.nan_to_num(z, posinf=5.0)) + 2.0 * tl.imag(tl.nan_to_num(z, posinf=5.0))))
    np.testing.assert_array_equal(z.grad, [-2j, 1.0 + 0j])  # each part keeps its own sensitivity


def test_select_errors_name_the_function():
    with pytest.raises(ValueError, match="select: 2 conditions and 1 choices"):
        tl.select([np.array([True]), np.array([False])], [tl.param([1.0])])
    with pytest.raises(TypeError, match="select: conditions must be boolean"):
        tl.select([np.array([1.0])], [tl.param([1.0])])


# ----------------------------------------------------------------------------------------------------
# Subgradient conventions at the edges of selections, with hand-derived values: which argument receives the
# sensitivity where ``clip``'s bounds cross or touch ``x``.
# ----------------------------------------------------------------------------------------------------


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
