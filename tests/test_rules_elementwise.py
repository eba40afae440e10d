"""Gradient checks of the elementwise rules, to second order, on shapes and broadcasts drawn by
hypothesis (0-d, size-1 and empty axes included), on NumPy and on the other backends."""

import math

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_rules import BACKENDS, check, namespace_of, ruled

import trackerlab as tl
from trackerlab.ops import operations

SETTINGS = settings(max_examples=8, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])

# domains: (low, high, points to keep away from, where the function is not smooth)
REAL = (-2.0, 2.0, ())
POSITIVE = (0.2, 3.0, ())
UNIT = (-0.9, 0.9, ())
ABOVE_ONE = (1.2, 3.0, ())
AWAY = (-2.0, 2.0, (0.0,))  # away from a kink or a pole at 0
SMALL = (-1.2, 1.2, ())
# two grids a quarter apart: x and y never meet, so maximum and friends stay away from their kink
GRID = st.sampled_from([k / 2 for k in range(-4, 5)])
OFF_GRID = st.sampled_from([k / 2 + 0.25 for k in range(-4, 4)])

UNARY = {
    "negative": REAL,
    "positive": REAL,
    "abs": AWAY,
    "exp": REAL,
    "exp2": REAL,
    "expm1": REAL,
    "log": POSITIVE,
    "log2": POSITIVE,
    "log10": POSITIVE,
    "log1p": POSITIVE,
    "sqrt": POSITIVE,
    "cbrt": AWAY,
    "square": REAL,
    "reciprocal": AWAY,
    "sin": REAL,
    "cos": REAL,
    "tan": SMALL,
    "arcsin": UNIT,
    "arccos": UNIT,
    "arctan": REAL,
    "sinh": REAL,
    "cosh": REAL,
    "tanh": REAL,
    "arcsinh": REAL,
    "arccosh": ABOVE_ONE,
    "arctanh": UNIT,
    "deg2rad": REAL,
    "rad2deg": REAL,
    "_conj": REAL,  # on complex input: tests/test_complex.py
    "_real": REAL,
}

# binary: (domain of x, domain of y)
BINARY = {
    "add": (REAL, REAL),
    "subtract": (REAL, REAL),
    "multiply": (REAL, REAL),
    "divide": (REAL, AWAY),
    "power": (POSITIVE, REAL),
    "float_power": (POSITIVE, REAL),
    "maximum": (GRID, OFF_GRID),
    "minimum": (GRID, OFF_GRID),
    "fmax": (GRID, OFF_GRID),
    "fmin": (GRID, OFF_GRID),
    "hypot": (AWAY, AWAY),
    "arctan2": (AWAY, AWAY),
    "logaddexp": (REAL, REAL),
    "logaddexp2": (REAL, REAL),
}


def _where(backend):
    return lambda c, x, y: tl.where(tl.data(c) > 0, x, y)


def _clip(backend):
    return lambda x, lo, hi: tl.clip(x, lo, hi)


def _astype(backend):
    xp = namespace_of(backend)
    return lambda x: tl.astype(x * 2.0, xp.float64)


# the rest: (domains of the arguments, the function of those arguments on a backend)
OTHER = {
    "where": ((AWAY, REAL, REAL), _where),
    "clip": (((-2.0, 2.0, (-0.5, 0.5)), st.just(-0.5), st.just(0.5)), _clip),
    "astype": ((REAL,), _astype),
}


def test_every_elementwise_rule_has_a_case():
    missing = [n for n in ruled("elementwise") if n not in UNARY and n not in BINARY and n not in OTHER]
    assert not missing, f"elementwise rules without a test case: {missing}"


def values(draw, shape, domain):
    if isinstance(domain, st.SearchStrategy):
        return draw(hnp.arrays(np.float64, shape, elements=domain))
    low, high, away = domain
    elements = st.floats(low, high, allow_nan=False, allow_infinity=False)
    if away:
        elements = elements.filter(lambda v: all(abs(v - p) > 0.1 for p in away))
    return draw(hnp.arrays(np.float64, shape, elements=elements))


SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3)
BROADCAST = hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=3, min_side=0, max_side=3)


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


def fixed(shape, domain, seed):
    """Values of ``domain`` without hypothesis: for the fixed broadcasting case below."""
    rng = np.random.default_rng(seed)
    if isinstance(domain, st.SearchStrategy):  # the two grids
        grid = [k / 2 for k in range(-4, 5)] if domain is GRID else [k / 2 + 0.25 for k in range(-4, 4)]
        return rng.choice(grid, shape)
    low, high, away = domain
    x = rng.uniform(low, high, shape)
    for p in away:
        x = np.where(np.abs(x - p) < 0.1, p + 0.2, x)
    return x


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_rule_on_a_full_broadcast(name, backend):
    dx, dy = BINARY[name]
    check(getattr(tl, name), fixed((2, 1, 3), dx, 0), fixed((4, 1), dy, 1), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(OTHER))
@SETTINGS
@given(data=st.data())
def test_other_elementwise_rule(name, backend, data):
    domains, make = OTHER[name]
    shapes = data.draw(BROADCAST).input_shapes[: len(domains)]
    args = [values(data.draw, s, d) for s, d in zip(shapes, domains)]
    check(make(backend), *args, backend=backend)


# ---------------------------------------------------------------- what the checks cannot see


def test_maximum_ties_share_the_gradient():
    x, y = tl.param([1.0, 2.0, 3.0]), tl.param([1.0, 0.0, 5.0])
    tl.back_(tl.sum(tl.maximum(x, y)))
    np.testing.assert_array_equal(x.grad, [0.5, 1.0, 0.0])
    np.testing.assert_array_equal(y.grad, [0.5, 0.0, 1.0])


def test_power_of_zero_has_a_finite_exponent_gradient():
    x, y = tl.param([0.0, 2.0]), tl.param(2.0)
    tl.back_(tl.sum(x**y))
    np.testing.assert_allclose(x.grad, [0.0, 4.0])
    assert math.isfinite(y.grad) and y.grad == pytest.approx(4.0 * math.log(2.0))


def test_where_sends_nothing_to_the_unselected_side():
    x, y = tl.param([1.0, -1.0]), tl.param([10.0, 20.0])
    tl.back_(tl.sum(tl.where(tl.data(x) > 0, x, y)))
    np.testing.assert_array_equal(x.grad, [1.0, 0.0])
    np.testing.assert_array_equal(y.grad, [0.0, 1.0])


def test_clip_with_bounds_given_as_min_and_max():
    x = tl.param([-2.0, 0.5, 2.0])
    tl.back_(tl.sum(tl.clip(x, min=-1.0, max=1.0)))
    np.testing.assert_array_equal(x.grad, [0.0, 1.0, 0.0])


def test_float32_stays_float32():
    x = tl.param(np.array([0.5, 1.5], dtype=np.float32))
    y = tl.sum(tl.exp(x) * 2.0 + tl.sin(x) / x)
    tl.back_(y)
    assert tl.data(y).dtype == np.float32 and x.grad.dtype == np.float32
    v = np.array([0.5, 1.5])
    np.testing.assert_allclose(tl.data(y), np.sum(np.exp(v) * 2 + np.sin(v) / v), rtol=1e-6)
    np.testing.assert_allclose(x.grad, 2 * np.exp(v) + (v * np.cos(v) - np.sin(v)) / v**2, rtol=1e-6)


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
