"""Gradient checks of the elementwise rules, to second order, on shapes and broadcasts drawn by
hypothesis (0-d, size-1 and empty axes included), on NumPy and on the other backends."""

import math

import numpy as np
import pytest
from test_rules import (
    ABOVE_ONE,
    AWAY,
    POSITIVE,
    REAL,
    SMALL,
    UNIT,
    family_tests,
    namespace_of,
)

import trackerlab as tl
from trackerlab.ops.registry import operations

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
    "sinc": (-2.5, 2.5, ()),
}

# binary: (domain of x, domain of y)
BINARY = {
    "add": (REAL, REAL),
    "subtract": (REAL, REAL),
    "multiply": (REAL, REAL),
    "divide": (REAL, AWAY),
    "power": (POSITIVE, REAL),
    "float_power": (POSITIVE, REAL),
    "hypot": (AWAY, AWAY),
    "arctan2": (AWAY, AWAY),
    "logaddexp": (REAL, REAL),
    "logaddexp2": (REAL, REAL),
}


def _astype(backend):
    xp = namespace_of(backend)
    return lambda x: tl.astype(x * 2.0, xp.float64)


def _fused(name, **settings):
    """A fused pullback (one recorded operation standing for a rule's formula) as a function of its operands."""
    op = operations()[name]
    return lambda backend: lambda *operands: op(*operands, **settings)


# the rest: (domains of the arguments, the function of those arguments on a backend)
OTHER = {
    "astype": ((REAL,), _astype),
    # fused pullbacks: (g, t) for tanh's, (g, x) for that of x ** p
    "_tanh_backward": ((REAL, UNIT), _fused("_tanh_backward")),
    "_power_backward": ((REAL, POSITIVE), _fused("_power_backward", exponent=2.5)),
}


globals().update(family_tests("elementwise", UNARY, BINARY, OTHER))  # the rule tests from the case tables


# ---------------------------------------------------------------- what the checks cannot see


def test_power_of_zero_has_a_finite_exponent_gradient():
    x, y = tl.param([0.0, 2.0]), tl.param(2.0)
    tl.back_(tl.sum(x**y))
    np.testing.assert_allclose(x.grad, [0.0, 4.0])
    assert math.isfinite(y.grad) and y.grad == pytest.approx(4.0 * math.log(2.0))


def test_float32_stays_float32():
    x = tl.param(np.array([0.5, 1.5], dtype=np.float32))
    y = tl.sum(tl.exp(x) * 2.0 + tl.sin(x) / x)
    tl.back_(y)
    assert tl.data(y).dtype == np.float32 and x.grad.dtype == np.float32
    v = np.array([0.5, 1.5])
    np.testing.assert_allclose(tl.data(y), np.sum(np.exp(v) * 2 + np.sin(v) / v), rtol=1e-6)
    np.testing.assert_allclose(x.grad, 2 * np.exp(v) + (v * np.cos(v) - np.sin(v)) / v**2, rtol=1e-6)


def test_sinc_at_zero_has_finite_derivatives():
    (first,) = tl.gradient(tl.sinc, 0.0)
    assert tl.data(first) == 0.0
    (second,) = tl.gradient(lambda x: tl.gradient(tl.sinc, x)[0], 0.0)
    assert tl.data(second) == pytest.approx(-(np.pi**2) / 3, rel=1e-12)
    x = tl.param(np.array([0.0, 1e-9, 0.5]))
    tl.back_(tl.sum(np.sinc(x)))
    assert np.all(np.isfinite(x.grad))
    np.testing.assert_allclose(
        x.grad, [0.0, -(np.pi**2) / 3 * 1e-9, (np.cos(np.pi / 2) - np.sinc(0.5)) / 0.5], atol=1e-15
    )
    tl.check_grads(tl.sinc, np.array([0.0, 0.09, 0.11, -0.3]))


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


# ---------------------------------------------------------------- fused pullbacks


@pytest.mark.parametrize("exponent", [0, 1, 2, 3, 2.5, -1.5, 0.5])
def test_the_fused_pullback_of_a_power_has_checked_derivatives(exponent):
    power_backward = operations()["_power_backward"]
    g, x = np.array([0.3, -1.2, 0.8]), np.array([0.7, 1.3, 2.1])
    np.testing.assert_allclose(tl.data(power_backward(g, x, exponent=exponent)), g * exponent * x ** (exponent - 1))
    tl.check_grads(lambda g, x: power_backward(g, x, exponent=exponent), g, x, order=2)
    tl.check_grads(lambda g, x: power_backward(g, x, exponent=exponent), g[:1], x, order=2)  # g broadcast


def test_the_fused_pullback_of_tanh_has_checked_derivatives():
    tanh_backward = operations()["_tanh_backward"]
    g, t = np.array([0.3, -1.2, 0.8]), np.array([0.2, -0.6, 0.9])
    np.testing.assert_allclose(tl.data(tanh_backward(g, t)), g * (1 - t * t))
    tl.check_grads(tanh_backward, g, t, order=2)
    tl.check_grads(tanh_backward, 0.4, t, order=2)


def test_pullbacks_of_tanh_and_powers_record_one_operation_each():
    x = tl.param(np.array([0.3, -0.5]))
    for f, name in (
        (tl.tanh, "_tanh_backward"),
        (lambda x: x**3, "_power_backward"),
        (lambda x: x**2.0, "_power_backward"),
    ):
        (g,) = tl.gradient(lambda x: tl.sum(f(x)), x)
        assert g.tracker.f.name == name


def test_power_by_a_number_is_exact_at_zero():
    # x ** 0 is 1 everywhere, 0 ** 0 too: every derivative is 0; x ** 1 has slope 1 at 0
    for exponent, slope in ((0, 0.0), (0.0, 0.0), (1, 1.0), (2, 0.0)):
        x = tl.param(np.array([0.0, 2.0]))
        tl.back_(tl.sum(x**exponent))
        np.testing.assert_array_equal(x.grad, [slope, exponent * 2.0 ** (exponent - 1)])


def _derivatives(f, x: float, order: int) -> list:
    """f's derivatives at x of orders 1 … ``order``, each by differentiating the previous one (nested AD)."""
    out, fs = [], [f]
    for _ in range(order):
        fs.append(lambda x, g=fs[-1]: tl.gradient(g, x)[0])
        out.append(float(tl.data(fs[-1](x))))
    return out


def test_tanh_and_powers_to_fourth_order():
    t = math.tanh(0.4)
    s = 1 - t * t
    expected = [s, -2 * t * s, (6 * t * t - 2) * s, 8 * t * s * (2 - 3 * t * t)]
    np.testing.assert_allclose(_derivatives(tl.tanh, 0.4, 4), expected, rtol=1e-12)
    np.testing.assert_allclose(
        _derivatives(lambda x: x**3.5, 1.3, 4),
        [3.5 * 1.3**2.5, 3.5 * 2.5 * 1.3**1.5, 3.5 * 2.5 * 1.5 * 1.3**0.5, 3.5 * 2.5 * 1.5 * 0.5 * 1.3**-0.5],
        rtol=1e-12,
    )
    np.testing.assert_allclose(_derivatives(lambda x: x**3, 1.3, 4), [3 * 1.3**2, 6 * 1.3, 6.0, 0.0], rtol=1e-12)
    # at 0, where x^(p−k) is infinite once p − k < 0, the derivatives that vanish are exactly 0, not NaN
    for p, expected in (
        (0, [0.0] * 4),
        (1, [1.0, 0.0, 0.0, 0.0]),
        (2, [0.0, 2.0, 0.0, 0.0]),
        (3, [0.0, 0.0, 6.0, 0.0]),
    ):
        assert _derivatives(lambda x, p=p: x**p, 0.0, 4) == expected
    # the square of tanh, the Hessian-vector product's function, and on arrays: the Hessian's diagonal
    x = np.array([0.3, -0.7])
    t = np.tanh(x)
    np.testing.assert_allclose(
        tl.hessian(lambda x: tl.sum(tl.tanh(x) ** 2), x), np.diag((2 - 6 * t * t) * (1 - t * t)), rtol=1e-12
    )
