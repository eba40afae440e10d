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
DIVISORS = st.sampled_from([1.0, -1.0, 2.0, -4.0])

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
    "real": REAL,
    "imag": REAL,
    "conj": REAL,
    "angle": AWAY,
    "sinc": (-2.5, 2.5, ()),
    "nan_to_num": REAL,
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
    # x/y stays at least 1/16 away from an integer: away from the jumps of the remainders
    "remainder": (OFF_GRID, DIVISORS),
    "fmod": (OFF_GRID, DIVISORS),
}


def _where(backend):
    return lambda c, x, y: tl.where(tl.data(c) > 0, x, y)


def _clip(backend):
    return lambda x, lo, hi: tl.clip(x, lo, hi)


def _astype(backend):
    xp = namespace_of(backend)
    return lambda x: tl.astype(x * 2.0, xp.float64)


def _complex(backend):
    from trackerlab.rules.elementwise import _complex_op

    return lambda x, y: tl.real(_complex_op(x) * (0.5 - 2j)) + tl.imag(_complex_op(y) * (1.5 + 1j)) * x


# the rest: (domains of the arguments, the function of those arguments on a backend)
OTHER = {
    "where": ((AWAY, REAL, REAL), _where),
    "clip": (((-2.0, 2.0, (-0.5, 0.5)), st.just(-0.5), st.just(0.5)), _clip),
    "astype": ((REAL,), _astype),
    "_complex": ((REAL, REAL), _complex),
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
        grid = {id(GRID): [k / 2 for k in range(-4, 5)], id(DIVISORS): [1.0, -1.0, 2.0, -4.0]}.get(
            id(domain), [k / 2 + 0.25 for k in range(-4, 4)]
        )
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


# ---------------------------------------------------------------- composites: select, linspace, divmod


COMPOSITES = [
    (lambda x, y: tl.select([tl.data(x) > 0.3, tl.data(y) < 0], [x * 2.0, y], default=x * y), (3, 4), (4,)),
    (lambda x: tl.select([tl.data(x) > 0], [tl.sin(x)]), (5,)),
    (lambda a, b: tl.linspace(a, b, 6), (), ()),
    (lambda a, b: tl.linspace(a, b, 4, endpoint=False) * tl.linspace(b, a, 4), (), ()),
    (lambda a, b: tl.linspace(a, b, 5, axis=-1), (3,), (2, 3)),
    (lambda a, b: tl.linspace(a, b, 3, retstep=True)[1] * tl.linspace(a, b, 3)[1, ...], (2,), ()),
    (lambda x: tl.divmod(x, 0.7)[1] * x, (4,)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", range(len(COMPOSITES)))
def test_composites_of_elementwise_operations(case, backend):
    f, *shapes = COMPOSITES[case]
    # values away from the remainder's jumps (multiples of 0.7) and the selections' thresholds
    signs = [np.where(np.arange(np.prod(s, dtype=int)) % 2, 1.0, -1.0).reshape(s) for s in shapes]
    args = [np.asarray(np.random.default_rng(k).uniform(0.1, 0.6, s) * sign) for k, (s, sign) in enumerate(zip(shapes, signs))]
    check(f, *args, backend=backend)


# ---------------------------------------------------------------- complex input, remainders, sinc, nan_to_num


def complex_gradient(f, z, eps=1e-6):
    """∂L/∂x − i ∂L/∂y of the real scalar L = f(z) at each entry of z = x + iy, by central differences."""
    out = np.zeros_like(z)
    for index in np.ndindex(z.shape):
        step = np.zeros_like(z)
        step[index] = eps
        dx = (f(z + step) - f(z - step)) / (2 * eps)
        dy = (f(z + 1j * step) - f(z - 1j * step)) / (2 * eps)
        out[index] = dx - 1j * dy
    return out


Z = np.array([0.7 - 0.4j, -1.2 + 0.9j, 0.3 + 1.1j])
WEIGHTS = np.array([0.3, -1.1, 0.8])
COMPLEX_CASES = {
    "real": lambda z: tl.real(z),
    "imag": lambda z: tl.imag(z),
    "conj": lambda z: tl.imag(tl.conj(z) * tl.conj(z)) + tl.real(tl.conj(z)),
    "angle": lambda z: tl.angle(z),
    "angle(deg=True)": lambda z: tl.angle(z, deg=True),
    "sinc": lambda z: tl.real(tl.sinc(z)) + 2 * tl.imag(tl.sinc(z)),
    "sinc near 0": lambda z: tl.real(tl.sinc(z * 0.01)) - tl.imag(tl.sinc(z * 0.01)),
    "nan_to_num": lambda z: tl.real(tl.nan_to_num(z) * (1 + 2j)),
}


@pytest.mark.parametrize("name", sorted(COMPLEX_CASES))
def test_complex_input_follows_the_convention(name):
    # the sensitivity of z = x + iy is ∂L/∂x − i ∂L/∂y
    f = COMPLEX_CASES[name]
    z = tl.param(Z.copy())
    tl.back_(tl.sum(WEIGHTS * f(z)))
    expected = complex_gradient(lambda v: float(np.sum(WEIGHTS * tl.data(f(v)))), Z)
    np.testing.assert_allclose(z.grad, expected, rtol=1e-6, atol=1e-8)


def test_real_input_gets_a_real_gradient_from_complex_parts():
    x = tl.param([0.5, -2.0])
    tl.back_(tl.sum(tl.real(tl.conj(x)) + tl.imag(x) + tl.angle(x)))
    assert x.grad.dtype == np.float64
    np.testing.assert_array_equal(x.grad, [1.0, 1.0])


def test_complex_parts_of_a_complex_parameter():
    z = tl.param(np.array([1.0 + 2.0j]))
    tl.back_(tl.sum(tl.imag(z)))
    np.testing.assert_array_equal(z.grad, [-1j])  # −i·g
    z = tl.param(np.array([1.0 + 2.0j]))
    tl.back_(tl.sum(tl.real(z)))
    assert z.grad.dtype == np.complex128
    np.testing.assert_array_equal(z.grad, [1.0 + 0j])


def test_remainder_is_the_percent_operator_and_numpy_mod():
    x = tl.param([5.5, -1.25])
    y = x % 2.0
    assert y.tracker.f.name == "remainder"
    np.testing.assert_allclose(tl.data(y), [1.5, 0.75])
    d = tl.param(2.0)
    tl.back_(tl.sum(np.mod(x, d)) + tl.sum(3.0 % x))
    # ∂(x mod d)/∂x = 1; ∂(3 mod x)/∂x = −floor(3 / x): −0 and 3
    np.testing.assert_allclose(x.grad, [1.0, 1.0 + 3.0])
    assert d.grad == pytest.approx(-(2.0 + -1.0))  # −floor(5.5 / 2) − floor(−1.25 / 2)


def test_fmod_and_divmod():
    x = tl.param([5.5, -1.25])
    q, r = divmod(x, 2.0)
    assert not tl.istracked(q) and tl.istracked(r)
    np.testing.assert_array_equal(q, [2.0, -1.0])
    _q2, r2 = np.divmod(x, 2.0)
    np.testing.assert_array_equal(tl.data(r2), tl.data(r))
    d = tl.param(2.0)
    f = np.fmod(x, d)
    np.testing.assert_allclose(tl.data(f), [1.5, -1.25])
    tl.back_(tl.sum(f))
    assert d.grad == pytest.approx(-2.0)  # −trunc(5.5 / 2) − trunc(−1.25 / 2)


def test_remainder_of_complex_input_is_an_error():
    with pytest.raises(TypeError, match="remainder: complex input"):
        tl.param(np.array([1.0 + 1j])) % 2.0


def test_sinc_at_zero_has_finite_derivatives():
    (first,) = tl.gradient(tl.sinc, 0.0)
    assert tl.data(first) == 0.0
    (second,) = tl.gradient(lambda x: tl.gradient(tl.sinc, x)[0], 0.0)
    assert tl.data(second) == pytest.approx(-(np.pi**2) / 3, rel=1e-12)
    x = tl.param(np.array([0.0, 1e-9, 0.5]))
    tl.back_(tl.sum(np.sinc(x)))
    assert np.all(np.isfinite(x.grad))
    np.testing.assert_allclose(x.grad, [0.0, -(np.pi**2) / 3 * 1e-9, (np.cos(np.pi / 2) - np.sinc(0.5)) / 0.5], atol=1e-15)
    tl.check_grads(tl.sinc, np.array([0.0, 0.09, 0.11, -0.3]))


def test_nan_to_num_sends_nothing_to_replaced_entries():
    x = tl.param([1.0, np.nan, np.inf, -np.inf])
    y = np.nan_to_num(x, posinf=5.0, neginf=-5.0)
    np.testing.assert_array_equal(tl.data(y), [1.0, 0.0, 5.0, -5.0])
    tl.back_(tl.sum(y * 3.0))
    np.testing.assert_array_equal(x.grad, [3.0, 0.0, 0.0, 0.0])
    z = tl.param(np.array([complex(np.nan, 2.0), complex(1.0, np.inf)]))
    tl.back_(tl.sum(tl.real(tl.nan_to_num(z, posinf=5.0)) + 2.0 * tl.imag(tl.nan_to_num(z, posinf=5.0))))
    np.testing.assert_array_equal(z.grad, [-2j, 1.0 + 0j])  # each part keeps its own sensitivity


def test_new_elementwise_functions_through_numpy_and_methods():
    z = tl.param(np.array([1.0 + 1.0j, -2.0j]))
    for value in (np.real(z), np.imag(z), np.conj(z), np.conjugate(z), np.angle(z), z.real, z.imag, z.conj()):
        assert tl.istracked(value)
    np.testing.assert_allclose(tl.data(np.angle(z, deg=True)), [45.0, -90.0])
    x = tl.param([-1.0, 0.5, 2.0])
    out = np.select([tl.data(x) < 0, tl.data(x) < 1], [-x, x * 10], default=x)
    tl.back_(tl.sum(out))
    np.testing.assert_array_equal(x.grad, [-1.0, 10.0, 1.0])
    a = tl.param(1.0)
    samples, step = np.linspace(a, 3.0, 5, retstep=True)
    np.testing.assert_allclose(tl.data(samples), np.linspace(1.0, 3.0, 5))
    assert tl.data(samples)[-1] == 3.0 and float(tl.data(step)) == 0.5
    tl.back_(tl.sum(samples))
    assert a.grad == pytest.approx(1 + 0.75 + 0.5 + 0.25)


def test_linspace_of_array_endpoints_matches_numpy():
    a, b = np.array([0.0, 1.0]), np.array([[1.0, 3.0], [2.0, -1.0], [0.5, 0.5]])
    for options in ({}, {"endpoint": False}, {"axis": -1}, {"axis": 1, "num": 4}, {"num": 1}, {"num": 0}):
        np.testing.assert_allclose(tl.data(tl.linspace(tl.param(a), b, **options)), np.linspace(a, b, **options))
    np.testing.assert_array_equal(tl.linspace(tl.param(-2.0), 2.0, 5, dtype=int), np.linspace(-2.0, 2.0, 5, dtype=int))
    with pytest.raises(ValueError, match="linspace: the number of samples, -1, must be non-negative"):
        tl.linspace(tl.param(0.0), 1.0, -1)


def test_select_errors_name_the_function():
    with pytest.raises(ValueError, match="select: 2 conditions and 1 choices"):
        tl.select([np.array([True]), np.array([False])], [tl.param([1.0])])
    with pytest.raises(TypeError, match="select: conditions must be boolean"):
        tl.select([np.array([1.0])], [tl.param([1.0])])
