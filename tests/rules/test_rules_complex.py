"""Gradient checks of the complex parts (``real``, ``imag``, ``conj``, ``angle``, ``_complex``), to second
order on real input drawn by hypothesis, on NumPy and the other backends; and on complex input, against
the convention: the sensitivity of z = x + iy is ∂L/∂x − i ∂L/∂y."""

import numpy as np
import pytest
from test_rules import AWAY, REAL, family_tests

import trackerlab as tl

UNARY = {
    "real": REAL,
    "imag": REAL,
    "conj": REAL,
    "angle": AWAY,
}


def _complex(backend):
    from trackerlab.rules.complex import _complex_op

    return lambda x, y: tl.real(_complex_op(x) * (0.5 - 2j)) + tl.imag(_complex_op(y) * (1.5 + 1j)) * x


# the rest: (domains of the arguments, the function of those arguments on a backend)
OTHER = {
    "_complex": ((REAL, REAL), _complex),
}


globals().update(family_tests("complex", UNARY, None, OTHER))  # the rule tests from the case tables


# ---------------------------------------------------------------- complex input


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
