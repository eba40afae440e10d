"""Gradient checks of the selections (``maximum``, ``minimum``, ``fmax``, ``fmin``, ``where``, ``clip``,
``nan_to_num``, ``select``), to second order, on shapes and broadcasts drawn by hypothesis, on NumPy and
on the other backends, away from their kinks; and what the checks cannot see: ties, NaN, the unselected side."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_rules import (
    AWAY,
    BACKENDS,
    BROADCAST,
    GRID,
    OFF_GRID,
    REAL,
    SETTINGS,
    SHAPES,
    alternating,
    check,
    fixed,
    ruled,
    values,
)

import trackerlab as tl
from trackerlab.ops import operations

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


def test_every_selection_rule_has_a_case():
    missing = [n for n in ruled("selection") if n not in UNARY and n not in BINARY and n not in OTHER]
    assert not missing, f"selection rules without a test case: {missing}"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(UNARY))
@SETTINGS
@given(data=st.data())
def test_unary_rule(name, backend, data):
    x = values(data.draw, data.draw(SHAPES), UNARY[name])
    check(operations()[name], x, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(BINARY))
@SETTINGS
@given(data=st.data())
def test_binary_rule_with_broadcasting(name, backend, data):
    dx, dy = BINARY[name]
    sx, sy, _ = data.draw(BROADCAST).input_shapes
    x = values(data.draw, sx, dx)
    y = values(data.draw, sy, dy)
    check(getattr(tl, name), x, y, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_rule_on_a_full_broadcast(name, backend):
    dx, dy = BINARY[name]
    check(getattr(tl, name), fixed((2, 1, 3), dx, 0), fixed((4, 1), dy, 1), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(OTHER))
@SETTINGS
@given(data=st.data())
def test_other_selection_rule(name, backend, data):
    domains, make = OTHER[name]
    shapes = data.draw(BROADCAST).input_shapes[: len(domains)]
    args = [values(data.draw, s, d) for s, d in zip(shapes, domains)]
    check(make(backend), *args, backend=backend)


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
