"""NumPy's reductions that trackerlab lacked (``np.median(x)`` was "no gradient rule"): ``cumprod``, ``ptp``,
``average``, ``median``, ``quantile`` and ``percentile``, composed of recorded operations. Each is checked
against NumPy's value and against central differences of ``Σ W ∘ f`` with random weights (computed here),
through ``back_``, ``gradient`` and ``forward``; to second order and on the other backends with the suite's
``check``; and at ties, where the documented convention (through ``sort``, as JAX) is pinned by hand."""

import warnings

import numpy as np
import pytest
from differences import differences
from test_rules import BACKENDS, check

import trackerlab as tl

RNG = np.random.default_rng(11)
X = RNG.uniform(-1.5, 1.5, (3, 4))
T = RNG.uniform(-1.5, 1.5, (2, 3, 4))


def _differences(f, x, W, eps=1e-6):
    return differences(f, [x], 0, W, eps)


SPELLINGS = {
    "np.cumprod(x, axis=1)": (lambda x: np.cumprod(x, axis=1), X),
    "np.cumprod(x)": (lambda x: np.cumprod(x), X),
    "np.cumprod with zeros": (lambda x: np.cumprod(x * np.array([1.0, 0.0, 1.0, 1.0]), axis=1), X),
    "np.cumprod(x, axis=-2), 3-d": (lambda x: np.cumprod(x, axis=-2), T),
    "np.multiply.accumulate(x, axis=0)": (lambda x: np.multiply.accumulate(x, axis=0), X),
    "np.ptp(x, axis=1)": (lambda x: np.ptp(x, axis=1), X),
    "np.ptp(x, axis=0, keepdims=True)": (lambda x: np.ptp(x, axis=0, keepdims=True), X),
    "np.average(x, axis=1, weights=list)": (lambda x: np.average(x, axis=1, weights=[1.0, 2.0, 3.0, 4.0]), X),
    "np.average(x)": (lambda x: np.average(x), X),
    "np.average(x, weights of x's shape)": (lambda x: np.average(x, weights=np.arange(1.0, 13.0).reshape(3, 4)), X),
    "np.average(..., returned=True)[1]": (
        lambda x: np.average(x, axis=0, weights=[1.0, 2.0, 3.0], returned=True)[0],
        X,
    ),
    "np.average(..., keepdims=True)": (lambda x: np.average(x, axis=0, weights=[1.0, 2.0, 3.0], keepdims=True), X),
    "np.median(x)": (lambda x: np.median(x), X),
    "np.median(x, axis=1)": (lambda x: np.median(x, axis=1), X),
    "np.median(x, axis=0), odd count": (lambda x: np.median(x, axis=0), X),
    "np.median(x, axis=(0, 2), keepdims=True)": (lambda x: np.median(x, axis=(0, 2), keepdims=True), T),
    "np.quantile(x, 0.3)": (lambda x: np.quantile(x, 0.3), X),
    "np.quantile(x, [0.1, 0.5, 0.9], axis=1)": (lambda x: np.quantile(x, [0.1, 0.5, 0.9], axis=1), X),
    "np.quantile(x, 2-d q, axis=0)": (lambda x: np.quantile(x, [[0.1, 0.5], [0.7, 1.0]], axis=0), X),
    "np.quantile(x, q, axis=(1, 2), keepdims=True)": (
        lambda x: np.quantile(x, [0.2, 0.8], axis=(1, 2), keepdims=True),
        T,
    ),
    "method='lower'": (lambda x: np.quantile(x, [0.3, 0.5, 0.66], axis=1, method="lower"), X),
    "method='higher'": (lambda x: np.quantile(x, [0.3, 0.5, 0.66], axis=1, method="higher"), X),
    "method='nearest'": (lambda x: np.quantile(x, [0.3, 0.5, 0.66, 1 / 6], axis=1, method="nearest"), X),
    "method='midpoint'": (lambda x: np.quantile(x, [0.3, 0.5, 0.66], axis=1, method="midpoint"), X),
    "np.percentile(x, [25, 50, 100], axis=0)": (lambda x: np.percentile(x, [25, 50, 100], axis=0), X),
}


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_numpy_reductions_match_numpy_and_differences(spelling):
    f, x = SPELLINGS[spelling]
    want_value = f(x)
    p = tl.param(x)
    y = f(p)
    np.testing.assert_allclose(tl.data(y), want_value, rtol=1e-12, atol=1e-12)
    W = RNG.standard_normal(np.shape(want_value))
    want = _differences(f, x, W)
    tl.back_(y, W) if np.ndim(want_value) else tl.back_(y * float(W))
    (g,) = tl.gradient(lambda t: tl.sum(f(t) * W), x)
    (h,) = tl.forward(f, x)[1](W)
    for got in (p.grad, tl.data(g), tl.data(h)):
        np.testing.assert_allclose(got, want, atol=1e-6)
    single = x.astype(np.float32)  # float32 stays float32 unless NumPy too promotes (float64 weights, q arrays)
    assert tl.data(f(tl.param(single))).dtype in (np.float32, f(single).dtype)


SECOND_ORDER = {
    "cumprod with a zero": (lambda x: tl.cumprod(x - x[:, 1:2], axis=1), X),  # column 1 is exactly 0
    "cumprod": (lambda x: tl.cumprod(x, axis=0), X),
    "median": (lambda x: tl.median(x, axis=1), X),
    "quantile": (lambda x: tl.quantile(x, [0.25, 0.6], axis=0), X),
    "average with tracked weights": (lambda x, w: tl.average(x, axis=1, weights=w), X, np.array([1.0, 2.0, 0.5, 3.0])),
    "ptp": (lambda x: tl.ptp(x, axis=1), X),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_to_second_order_on_every_backend(name, backend):
    f, *args = SECOND_ORDER[name]
    if backend == "array_api_strict" and name in ("median", "quantile"):
        # sort's gradient scatters back, which array_api_strict cannot: a clear error, as for sort itself
        with pytest.raises(TypeError, match="needs a scatter-add"):
            check(f, *args, backend=backend)
        return
    check(f, *args, backend=backend)


TIES = np.array([[1.0, 2.0, 2.0, 3.0], [0.5, 0.5, 0.5, 0.1], [4.0, 1.0, 1.0, 4.0]])


def test_median_of_ties_follows_sort():
    # a stable sort puts tied values in their order; the two middle places are averaged
    p = tl.param(TIES)
    tl.back_(tl.sum(np.median(p, axis=1) * np.array([1.0, 10.0, 100.0])))
    np.testing.assert_array_equal(p.grad, [[0.0, 0.5, 0.5, 0.0], [5.0, 5.0, 0.0, 0.0], [50.0, 0.0, 50.0, 0.0]])


@pytest.mark.parametrize("method", ["linear", "lower", "higher", "nearest", "midpoint"])
@pytest.mark.parametrize("q", [0.0, 0.25, 0.5, 0.75, 1.0, [0.1, 0.9]])
def test_quantile_of_ties_has_numpys_value(q, method):
    np.testing.assert_allclose(
        tl.data(tl.quantile(tl.param(TIES), q, axis=1, method=method)), np.quantile(TIES, q, axis=1, method=method)
    )


def test_quantile_of_a_slice_with_nan_is_nan_and_refusals_are_named():
    holed = TIES.copy()
    holed[1, 2] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        np.testing.assert_array_equal(tl.data(np.median(tl.param(holed), axis=1)), np.median(holed, axis=1))
    x = tl.param(TIES)
    with pytest.raises(ValueError, match="quantile: method='weibull' is not supported"):
        np.quantile(x, 0.5, method="weibull")
    with pytest.raises(TypeError, match="quantile: out= is not supported"):
        np.median(x, out=np.zeros(3))
    with pytest.raises(TypeError, match="quantile: q is tracked"):
        tl.quantile(x, tl.param(0.5))
    with pytest.raises(ValueError, match=r"quantile: q must be in the range \[0, 1\]"):
        tl.quantile(x, 1.5)
