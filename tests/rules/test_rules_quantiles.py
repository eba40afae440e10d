"""Gradient checks of the order statistics (``quantile``, ``percentile``, ``median``), to second order, on NumPy
and the other backends, with values and gradients worked out by hand. Where tied values and NaN go, and how
bad options are refused, is in ``test_probe3_reductions.py``."""

import numpy as np
import pytest
from test_rules import BACKENDS, alternating, check

import trackerlab as tl

# (function, shapes of its arguments): distinct values, so no finite difference reorders them
COMPOSITES = [
    (lambda x: tl.median(x), (5,)),
    (lambda x: tl.median(x, axis=1), (3, 4)),
    (lambda x: tl.median(x, axis=(0, 2), keepdims=True), (3, 2, 3)),
    (lambda x: tl.quantile(x, 0.3), (2, 3)),
    (lambda x: tl.quantile(x, [0.1, 0.5, 0.9], axis=0), (4, 3)),
    (lambda x: tl.quantile(x, [0.3, 0.7], axis=1, method="midpoint"), (2, 5)),
    (lambda x: tl.quantile(x, [0.2, 0.6], axis=-1, method="nearest", keepdims=True), (3, 4)),
    (lambda x: tl.percentile(x, [25, 50, 100], axis=0), (4, 2)),
    (lambda x: tl.percentile(x, 40, method="lower") + tl.percentile(x, 40, method="higher"), (6,)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", range(len(COMPOSITES)))
def test_composites_of_quantiles(case, backend):
    f, *shapes = COMPOSITES[case]
    args = alternating(shapes)
    if backend == "array_api_strict":
        # sort's gradient scatters back, which array_api_strict cannot: a clear error, as for sort itself
        with pytest.raises(TypeError, match="needs a scatter-add"):
            check(f, *args, backend=backend)
        return
    check(f, *args, backend=backend)


NUMPY = [  # NumPy's spelling of each case, computed by NumPy on the plain arrays
    lambda x: np.median(x),
    lambda x: np.median(x, axis=1),
    lambda x: np.median(x, axis=(0, 2), keepdims=True),
    lambda x: np.quantile(x, 0.3),
    lambda x: np.quantile(x, [0.1, 0.5, 0.9], axis=0),
    lambda x: np.quantile(x, [0.3, 0.7], axis=1, method="midpoint"),
    lambda x: np.quantile(x, [0.2, 0.6], axis=-1, method="nearest", keepdims=True),
    lambda x: np.percentile(x, [25, 50, 100], axis=0),
    lambda x: np.percentile(x, 40, method="lower") + np.percentile(x, 40, method="higher"),
]


@pytest.mark.parametrize("case", range(len(COMPOSITES)))
def test_every_case_has_numpys_value(case):
    f, *shapes = COMPOSITES[case]
    args = alternating(shapes)
    want = NUMPY[case](*args)
    got = tl.data(f(*(tl.param(a) for a in args)))
    assert np.shape(got) == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_median_sends_half_to_each_middle_value():
    x = tl.param([3.0, 1.0, 2.0, 5.0])  # sorted: 1, 2, 3, 5; the median is (2 + 3) / 2
    y = tl.median(x)
    assert tl.data(y) == 2.5
    tl.back_(y)
    np.testing.assert_array_equal(x.grad, [0.5, 0.0, 0.5, 0.0])


def test_quantile_weighs_its_two_neighbours_as_it_weighs_their_values():
    # n = 4, q = 0.25: position 0.75 between the sorted values 1 (x[1]) and 2 (x[3]): 1 + 0.75 · (2 − 1)
    for f in (lambda x: tl.quantile(x, 0.25), lambda x: tl.percentile(x, 25)):
        x = tl.param([4.0, 1.0, 3.0, 2.0])
        y = f(x)
        assert tl.data(y) == pytest.approx(1.75)
        tl.back_(y)
        np.testing.assert_allclose(x.grad, [0.0, 0.25, 0.0, 0.75])


def test_one_observation_methods_send_everything_to_it():
    x = np.array([4.0, 1.0, 3.0, 2.0])  # position 0.75 · 3 = 2.25 for q = 0.75: sorted[2] = 3 is x[2]
    for method, index in (("lower", 2), ("higher", 0), ("nearest", 2)):
        (g,) = tl.gradient(lambda x: tl.quantile(x, 0.75, method=method), x)
        np.testing.assert_array_equal(tl.data(g), np.eye(4)[index], err_msg=method)


# ----------------------------------------------------------------------------------------------------
# quantile and percentile give NumPy's dtype: a float32 x at float64 levels (a list, an array, a NumPy float64) is
# read in float64, as NumPy promotes them; a Python number keeps float32. They always gave x's dtype, rounding a
# float64 result to float32.
# ----------------------------------------------------------------------------------------------------


X = (np.array([[0.3, -1.2, 2.0, 0.7, -0.4], [1.1, 0.2, -0.9, 0.4, 2.3]]) * 7).astype(np.float32)
LEVELS = [
    0.3,
    [0.3, 0.6],
    np.float64(0.3),
    np.float32(0.3),
    np.array([0.3], np.float32),
    np.array(0.3),
    np.int64(1),
    [0, 1],
]


@pytest.mark.parametrize("method", ["linear", "midpoint", "lower"])
@pytest.mark.parametrize("q", range(len(LEVELS)))
def test_quantile_has_numpys_dtype_and_value(q, method):
    q = LEVELS[q]
    want = np.quantile(X, q, axis=1, method=method)
    got = tl.data(tl.quantile(tl.param(X), q, axis=1, method=method))
    assert got.dtype == want.dtype
    # (NumPy's midpoint subtracts in float32 before it promotes: the same to float32's rounding)
    np.testing.assert_allclose(got, want, rtol=1e-12 if want.dtype == np.float64 and method == "linear" else 1e-6)
    g = tl.gradient(lambda x: tl.sum(tl.quantile(x, q, axis=1, method=method)), tl.param(X))[0]
    assert tl.data(g).dtype == np.float32


@pytest.mark.parametrize("q", [30, 30.0, [30], np.float64(30), np.array([30], np.float32), np.array([30, 60])])
def test_percentile_has_numpys_dtype_and_value(q):
    want = np.percentile(X, q, axis=1)
    got = tl.data(tl.percentile(tl.param(X), q, axis=1))
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-12 if want.dtype == np.float64 else 1e-6)


def test_a_float64_quantile_of_float32_values_keeps_float64_digits():
    x = np.array([1.0, 1.0 + 2**-20], np.float32)
    got = tl.data(tl.quantile(tl.param(x), np.float64(1 / 3)))
    assert got == np.quantile(x, np.float64(1 / 3)) == 1.0 + 2**-20 / 3
