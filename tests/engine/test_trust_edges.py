"""Values at the edges: singular points, zero exponents, length-1 axes, singular matrices, NaN and inf.

Each case is checked against a hand-derived value or a one-sided difference. Where the derivative is
infinite or undefined the gradient is inf or NaN, as NumPy's arrays give it (with NumPy's warning), and
Python floats give the same as arrays, never a ``ZeroDivisionError``; where a limit exists it is given,
never NaN; a value that was not selected (``where``, ``maximum``, ``clip``, NaN skipped by ``nansum``)
gets exactly 0, even when the sensitivity arriving is inf.
"""

import math
import warnings

import numpy as np
import pytest

import trackerlab as tl


def grad_of(f, x, Δ=None):
    """The gradient of ``f`` at ``x`` by ``back_`` (which, unlike ``gradient``, allows an infinite result)."""
    p = tl.param(x)
    tl.back_(f(p), Δ)
    return p.grad


def quietly(f, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return f(*args)


# ---------------------------------------------------------------- powers at 0


@pytest.mark.parametrize("x", [0.0, np.array([0.0, 2.0])])
def test_x_to_the_zero_has_slope_zero_at_zero(x):
    g = grad_of(lambda t: tl.sum(t**0), x)
    np.testing.assert_array_equal(g, np.zeros_like(x))
    h = tl.hessian(lambda t: tl.sum(t**0), np.atleast_1d(x))
    np.testing.assert_array_equal(tl.data(h), np.zeros((np.size(x), np.size(x))))


def one_sided(f, x, h=1e-14):
    return (f(x + h) - f(x)) / h


@pytest.mark.parametrize("y", [1.0, 2.0, 3.0, 1.5, 2.5, 4.0])
def test_x_to_a_positive_power_at_zero_matches_its_one_sided_slope(y):
    for x in (0.0, np.array([0.0])):
        g = grad_of(lambda t: tl.sum(t**y), x)
        assert float(np.sum(g)) == pytest.approx(one_sided(lambda t: t**y, 0.0), abs=1e-6)


@pytest.mark.parametrize("y", [0.5, 0.25])
def test_x_to_a_power_below_one_has_infinite_slope_at_zero(y):
    for x in (0.0, np.array([0.0])):
        with pytest.warns(RuntimeWarning):
            g = grad_of(lambda t: tl.sum(t**y), x)
        assert float(np.sum(g)) == math.inf


def test_exponent_gradient_at_zero_base():
    # d(0 ** y)/dy: 0 for y > 0 (0 ** y is 0 nearby), and 0 at y = 0 (PyTorch's choice); 0 ** y = inf for
    # y < 0, with slope -inf there
    for y, expected in ((2.0, 0.0), (0.5, 0.0), (0.0, 0.0), (-1.0, -math.inf)):
        x, e = tl.param(0.0), tl.param(y)
        quietly(tl.back_, x**e)
        assert e.grad == expected, (y, e.grad)
        x, e = tl.param(np.array([0.0])), tl.param(np.array([y]))
        quietly(tl.back_, tl.sum(x**e))
        assert e.grad[0] == expected, (y, e.grad)


def test_exponent_gradient_at_negative_base_is_nan():
    # (-2) ** y is real only at integer y: no slope in y exists, and the gradient says so (NaN, with
    # NumPy's warning for log of a negative number)
    x, e = tl.param(-2.0), tl.param(2.0)
    with pytest.warns(RuntimeWarning):
        tl.back_(x**e)
    assert x.grad == -4.0 and math.isnan(e.grad)


def test_x_to_a_zero_exponent_that_is_tracked():
    x, e = tl.param(0.0), tl.param(0.0)
    tl.back_(x**e)
    assert (x.grad, e.grad) == (0.0, 0.0)


def test_float_power_at_zero():
    np.testing.assert_array_equal(grad_of(lambda t: tl.sum(tl.float_power(t, 0.0)), np.array([0.0, 1.0])), [0, 0])
    np.testing.assert_array_equal(grad_of(lambda t: tl.sum(tl.float_power(t, 2.0)), np.array([0.0, 1.0])), [0, 2])


# ---------------------------------------------------------------- moments over short axes


def test_std_and_var_over_an_axis_of_length_one_have_slope_zero():
    x = np.array([[1.0], [2.0]])
    for f in (tl.std, tl.var):
        np.testing.assert_array_equal(grad_of(lambda t: tl.sum(f(t, axis=1)), x), np.zeros((2, 1)))
        np.testing.assert_array_equal(grad_of(f, np.array([3.0])), [0.0])
        # second order too: std and var of one value are 0 whatever the value
        np.testing.assert_array_equal(tl.data(tl.hessian(lambda t: f(t), np.array([3.0]))), [[0.0]])


def test_std_of_equal_values_takes_the_subgradient_zero():
    np.testing.assert_array_equal(grad_of(tl.std, np.array([2.0, 2.0, 2.0])), [0.0, 0.0, 0.0])


def test_var_with_no_degrees_of_freedom_is_inf_as_numpy_gives_it():
    x = np.array([1.0, 2.0])
    with pytest.warns(RuntimeWarning):
        assert np.var(x, ddof=2) == math.inf
        g = grad_of(lambda t: tl.var(t, ddof=2), x)
    np.testing.assert_array_equal(g, [-math.inf, math.inf])  # 2 (x − mean) / 0
    with pytest.warns(RuntimeWarning):
        g = grad_of(lambda t: tl.std(t, ddof=1), np.array([1.0]))
    assert math.isnan(g[0])  # std is NaN (0 / 0) there, and so is its slope


# ---------------------------------------------------------------- singular matrices


def test_det_at_a_singular_matrix_is_the_adjugate():
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    np.testing.assert_allclose(grad_of(tl.det, a), [[4.0, -2.0], [-2.0, 1.0]])  # adj(a)ᵀ
    b = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])  # rank 2
    cofactors = np.array([[4.0, 4.0, -4.0], [-2.0, -2.0, 2.0], [0.0, 0.0, 0.0]])
    np.testing.assert_allclose(grad_of(tl.det, b), cofactors, atol=1e-12)


@pytest.mark.parametrize(
    "a",
    [
        np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]),  # rank 2
        np.outer([1.0, 2.0, 3.0], [1.0, -1.0, 2.0]),  # rank 1
        np.zeros((3, 3)),
        np.stack([np.eye(2), np.array([[1.0, 1.0], [1.0, 1.0]])]),  # a stack, one of them singular
    ],
)
def test_det_at_singular_matrices_to_second_order(a):
    tl.check_grads(tl.det, a, order=2)


def test_det_near_a_singular_matrix_is_the_cofactor_matrix():
    # condition number 4e12: the gradient comes from the cofactors, exactly, not from det(x) x⁻ᵀ
    a = np.array([[1.0, 1.0], [1.0, 1.0 + 1e-12]])
    np.testing.assert_allclose(grad_of(tl.det, a), [[a[1, 1], -1.0], [-1.0, 1.0]], rtol=1e-15)
    big = np.random.default_rng(0).normal(size=(40, 40))
    np.testing.assert_allclose(grad_of(tl.det, big), np.linalg.det(big) * np.linalg.inv(big).T, rtol=1e-8)


def test_det_at_a_large_singular_matrix_is_a_clear_error():
    a = np.random.default_rng(0).normal(size=(40, 40))
    a[0] = a[1]
    with pytest.raises(ValueError, match=r"det: the gradient at a singular or nearly singular 40×40 matrix"):
        grad_of(tl.det, a)


def test_slogdet_at_a_singular_matrix_is_infinite_not_an_error():
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    p = tl.param(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        _, logdet = tl.slogdet(p)
        tl.back_(logdet)
    assert tl.data(logdet) == -math.inf and not np.isfinite(p.grad).all()


# ---------------------------------------------------------------- Python floats as arrays


SINGULAR = [
    ("1 / x", lambda t: 1.0 / t, 0.0),
    ("x / x", lambda t: t / t, 0.0),
    ("x / 0", lambda t: t / 0.0, 1.0),
    ("sqrt", tl.sqrt, 0.0),
    ("cbrt", tl.cbrt, 0.0),
    ("arcsin", tl.arcsin, 1.0),
    ("arccos", tl.arccos, -1.0),
    ("arccosh", tl.arccosh, 1.0),
    ("arctanh", tl.arctanh, 1.0),
    ("log", tl.log, 0.0),
    ("log2", tl.log2, 0.0),
    ("log10", tl.log10, 0.0),
    ("log1p", tl.log1p, -1.0),
    ("reciprocal", tl.reciprocal, 0.0),
    ("x ** -1", lambda t: t**-1.0, 0.0),
    ("x ** 0.5", lambda t: t**0.5, 0.0),
    ("x ** (1/3) below 0", lambda t: t ** (1 / 3), -8.0),
    ("sqrt below 0", tl.sqrt, -1.0),
    ("log below 0", tl.log, -1.0),
    ("arctan2", lambda t: tl.arctan2(t, 0.0), 0.0),
    ("arctan2 of y", lambda t: tl.arctan2(0.0, t), 0.0),
]


@pytest.mark.parametrize("name, f, x", SINGULAR, ids=[s[0] for s in SINGULAR])
def test_python_floats_give_what_arrays_give_at_singular_points(name, f, x):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        p = tl.param(x)
        y = f(p)
        tl.back_(y)
    assert any(issubclass(w.category, RuntimeWarning) for w in caught), f"{name}: no RuntimeWarning"
    a = tl.param(np.array([x]))
    quietly(lambda: tl.back_(tl.sum(f(a))))
    value, grad = float(tl.data(y)), float(p.grad)
    assert isinstance(tl.data(y), float) and not isinstance(tl.data(y), complex)
    np.testing.assert_array_equal([value, grad], [float(tl.data(f(np.array([x])))[0]), float(a.grad[0])])


def test_a_negative_base_to_a_fraction_is_nan_not_complex():
    with pytest.warns(RuntimeWarning):
        y = tl.param(-8.0) ** (1 / 3)
    assert type(tl.data(y)) is float and math.isnan(tl.data(y))


def test_python_float_overflow_is_inf():
    with pytest.warns(RuntimeWarning):
        y = tl.param(10.0) ** 400.0
    assert tl.data(y) == math.inf


# ---------------------------------------------------------------- NaN, and nothing for what was not selected


INF2 = np.array([math.inf, math.inf])


def test_an_unselected_value_gets_exactly_zero_even_of_an_infinite_sensitivity():
    cases = [
        (lambda t: tl.where(np.array([True, False]), t, 5.0), [1.0, 2.0], [math.inf, 0.0]),
        (lambda t: tl.where(np.array([False, True]), 5.0, t), [1.0, 2.0], [math.inf, 0.0]),
        (lambda t: tl.maximum(t, 0.0), [-1.0, 2.0], [0.0, math.inf]),
        (lambda t: tl.minimum(t, 0.0), [-1.0, 2.0], [math.inf, 0.0]),
        (lambda t: tl.clip(t, 0.0, 1.0), [-1.0, 0.5], [0.0, math.inf]),
        (tl.relu, [-1.0, 2.0], [0.0, math.inf]),
        (tl.abs, [0.0, -2.0], [0.0, -math.inf]),
        (lambda t: tl.nansum(t, axis=1), [[np.nan], [2.0]], [[0.0], [math.inf]]),
        (lambda t: tl.nanmean(t, axis=1), [[np.nan], [2.0]], [[0.0], [math.inf]]),
        (lambda t: tl.max(t, axis=1), [[1.0, 3.0], [4.0, 2.0]], [[0.0, math.inf], [math.inf, 0.0]]),
    ]
    for f, x, expected in cases:
        np.testing.assert_array_equal(grad_of(f, np.array(x), INF2), expected)


def test_clip_bounds_get_exactly_zero_where_x_is_inside():
    lo = tl.param(np.array([0.0, 0.0]))
    tl.back_(tl.clip(np.array([-1.0, 0.5]), lo, 1.0), INF2)
    np.testing.assert_array_equal(lo.grad, [math.inf, 0.0])


def test_nan_wins_maximum_and_max():
    # maximum(nan, 1) and max([1, nan]) are NaN: the NaN is what came out, so it takes the sensitivity
    np.testing.assert_array_equal(grad_of(lambda t: tl.sum(tl.maximum(t, 1.0)), np.array([np.nan, 3.0])), [1, 1])
    np.testing.assert_array_equal(grad_of(lambda t: tl.sum(tl.minimum(t, 1.0)), np.array([np.nan, 3.0])), [1, 0])
    np.testing.assert_array_equal(grad_of(tl.max, np.array([1.0, np.nan, 5.0])), [0, 1, 0])
    np.testing.assert_array_equal(grad_of(tl.min, np.array([np.nan, np.nan, 5.0])), [0.5, 0.5, 0])
    y = tl.param(np.array([np.nan, 0.0]))
    tl.back_(tl.sum(tl.maximum(np.array([1.0, 2.0]), y)))
    np.testing.assert_array_equal(y.grad, [1.0, 0.0])
    both = tl.param(np.array([np.nan]))
    tl.back_(tl.sum(tl.fmax(both, np.array([np.nan]))))
    np.testing.assert_array_equal(both.grad, [0.5])  # two NaNs share, as equal values do


def test_nan_passes_through_clip():
    np.testing.assert_array_equal(grad_of(lambda t: tl.sum(tl.clip(t, 0.0, 2.0)), np.array([np.nan, 1.0])), [1, 1])


def test_nansum_and_nanmean_skip_nan():
    np.testing.assert_array_equal(grad_of(tl.nansum, np.array([1.0, np.nan])), [1, 0])
    np.testing.assert_array_equal(grad_of(tl.nanmean, np.array([1.0, np.nan, 3.0])), [0.5, 0, 0.5])


# ---------------------------------------------------------------- norms at 0


def test_norms_at_zero_take_the_subgradient_zero():
    assert grad_of(lambda t: tl.hypot(t, 0.0), 0.0) == 0.0
    x, y = tl.param(np.zeros(2)), tl.param(np.zeros(2))
    tl.back_(tl.sum(tl.hypot(x, y)))
    np.testing.assert_array_equal([x.grad, y.grad], np.zeros((2, 2)))
    np.testing.assert_array_equal(grad_of(tl.norm, np.zeros(3)), np.zeros(3))
    np.testing.assert_array_equal(grad_of(lambda t: tl.std(t), np.zeros(3)), np.zeros(3))
    assert grad_of(tl.abs, 0.0) == 0.0


def test_prod_with_zeros_is_exact_to_second_order():
    # ∂ prod / ∂x_i = ∏_{j≠i} x_j: no division by x, so zeros are exact
    np.testing.assert_array_equal(grad_of(tl.prod, np.array([0.0, 2.0, 3.0])), [6.0, 0.0, 0.0])
    np.testing.assert_array_equal(grad_of(tl.prod, np.array([0.0, 0.0, 3.0])), [0.0, 0.0, 0.0])
    tl.check_grads(tl.prod, np.array([0.0, 0.0, 3.0]), order=2)
