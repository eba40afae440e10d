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
