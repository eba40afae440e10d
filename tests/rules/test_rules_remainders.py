"""Gradient checks of the remainders (``remainder``, ``fmod``, ``divmod``), to second order, on shapes and
broadcasts drawn by hypothesis, on NumPy and on the other backends, away from the jumps."""

import numpy as np
import pytest
from test_rules import (
    BACKENDS,
    DIVISORS,
    OFF_GRID,
    alternating,
    check,
    family_tests,
)

import trackerlab as tl

# binary: (domain of x, domain of y)
BINARY = {
    # x/y stays at least 1/16 away from an integer: away from the jumps of the remainders
    "remainder": (OFF_GRID, DIVISORS),
    "fmod": (OFF_GRID, DIVISORS),
}


globals().update(family_tests("remainders", None, BINARY, None))  # the rule tests from the case tables


# ---------------------------------------------------------------- composites: divmod


COMPOSITES = [
    (lambda x: tl.divmod(x, 0.7)[1] * x, (4,)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", range(len(COMPOSITES)))
def test_composites_of_remainders(case, backend):
    f, *shapes = COMPOSITES[case]
    check(f, *alternating(shapes), backend=backend)


# ---------------------------------------------------------------- what the checks cannot see


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


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning", "ignore:invalid value:RuntimeWarning")
@pytest.mark.parametrize(
    "x, y, expected",
    [(2.0, 0.0, np.inf), (-2.0, 0.0, -np.inf), (0.0, 0.0, np.nan), (7.0, 2.0, 3.0), (-7.0, 2.0, -4.0)],
)
def test_floor_division_of_a_tracked_number_gives_numpys_quotient(x, y, expected):
    """``//`` is piecewise constant: its plain quotient, as NumPy gives it for arrays (inf, not ZeroDivisionError)."""
    for got in (tl.param(x) // y, x // tl.param(y), tl.param(x) // tl.param(y)):
        np.testing.assert_equal(got, expected)
        np.testing.assert_equal(tl.data(tl.param([x]) // y), [expected])
        np.testing.assert_equal(float(divmod(tl.param(x), y)[0]), expected)
