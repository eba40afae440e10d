"""Gradient checks of the reduction rules, to second order, on shapes, axes (ints and tuples) and
``keepdims`` drawn by hypothesis (0-d, size-1 and empty axes included), on NumPy and the other backends."""

import warnings

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from differences import differences
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_rules import BACKENDS, check, host, on, ruled

import trackerlab as tl

SETTINGS = settings(max_examples=10, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])

REAL = st.floats(-2.0, 2.0, allow_nan=False)
WITH_ZEROS = st.one_of(st.just(0.0), REAL)  # prod must handle zeros, to second order


# name: (elements, smallest number of elements reduced together, distinct values, takes keepdims)
SPECS = {
    "sum": (REAL, 0, False, True),
    "mean": (REAL, 1, False, True),
    "prod": (WITH_ZEROS, 0, False, True),
    "max": (REAL, 1, True, True),
    "min": (REAL, 1, True, True),
    "var": (REAL, 3, False, True),  # at least 3 per group: a variance that is not 0, and a ddof to draw
    "std": (REAL, 3, True, True),
    "logsumexp": (REAL, 1, False, True),
    "cumsum": (REAL, 0, False, False),
    "nansum": (st.one_of(st.just(np.nan), REAL), 0, False, True),
    "nanmean": (REAL, 1, False, True),
}


def test_every_reduction_rule_has_a_case():
    missing = [n for n in ruled("reductions") if n not in SPECS]
    assert not missing, f"reduction rules without a test case: {missing}"


def _reduced(shape, axis) -> int:
    axes = range(len(shape)) if axis is None else ([axis] if isinstance(axis, int) else axis)
    return int(np.prod([shape[a] for a in axes]))


@st.composite
def reductions(draw, name):
    elements, smallest, distinct, keepdims = SPECS[name]
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3))
    if name == "cumsum":
        axis = draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1))) if shape else None
    else:
        axis = draw(
            st.one_of(
                st.none(),
                hnp.valid_tuple_axes(len(shape)),
                *([st.integers(-len(shape), len(shape) - 1)] if shape else []),
            )
        )
    if _reduced(shape, axis) < smallest:  # too few elements: make every axis long enough, reduce one at least
        shape = tuple(max(n, smallest) for n in shape) or (smallest,)
        axis = None if axis in ((), None) else axis
    reduced = _reduced(shape, axis)
    x = draw(hnp.arrays(np.float64, shape, elements=elements, unique=distinct))
    if distinct:  # spread distinct values apart so that no finite difference swaps a max
        order = np.argsort(x, axis=None).argsort().reshape(x.shape) if x.size else x
        x = order * 0.5 - 1.0 + 0.1 * np.tanh(x)
    options = {"axis": axis}
    if keepdims:
        options["keepdims"] = draw(st.booleans())
    if name in ("var", "std") and draw(st.booleans()):
        options["ddof"] = draw(st.integers(1, reduced - 1))
    return x, options


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(SPECS))
@SETTINGS
@given(data=st.data())
def test_reduction_rule(name, backend, data):
    x, options = data.draw(reductions(name))
    op = getattr(tl, name)
    check(lambda x: op(x, **options), x, backend=backend)


NAN = np.nan
WITH_NAN = np.array([[0.5, NAN, -1.2, 0.3], [NAN, 1.1, 0.7, -0.4], [0.9, -0.6, NAN, NAN]])
T = np.random.default_rng(3).uniform(-2, 2, (3, 4, 2))

# Fixed cases each reduction must pass besides the drawn ones: real groups (several distinct elements
# reduced together), every ddof branch, and NaNs for the NaN-ignoring reductions.
FIXED = [
    ("var", T, {}),
    ("var", T, {"axis": 1}),
    ("var", T, {"axis": (0, 2), "ddof": 1, "keepdims": True}),
    ("var", T, {"axis": -1, "ddof": 1}),
    ("var", T, {"ddof": 3}),
    ("std", T, {"axis": 1, "ddof": 1}),
    ("std", T, {"axis": (1, 2), "keepdims": True}),
    ("nansum", WITH_NAN, {}),
    ("nansum", WITH_NAN, {"axis": 1}),
    ("nansum", WITH_NAN, {"axis": 0, "keepdims": True}),
    ("nanmean", WITH_NAN, {}),
    ("nanmean", WITH_NAN, {"axis": 1}),
    ("nanmean", WITH_NAN, {"axis": 0, "keepdims": True}),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name, x, options", FIXED, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(FIXED)])
def test_reduction_rule_on_fixed_cases(name, x, options, backend):
    op = getattr(tl, name)
    with np.errstate(invalid="ignore"):
        expected = getattr(np, name)(x, **options)
    if backend == "numpy":
        np.testing.assert_allclose(tl.data(op(x, **options)), expected)
    check(lambda x: op(x, **options), x, backend=backend)


def test_var_and_std_gradients_by_hand():
    # d var / dx_i = 2 (x_i − mean) / (n − ddof); d std = d var / (2 std)
    x = T[:, :, 0]
    for ddof in (0, 1, 2):
        n = x.shape[1] - ddof
        centred = x - x.mean(axis=1, keepdims=True)
        (g,) = tl.gradient(lambda x: tl.sum(tl.var(x, axis=1, ddof=ddof) * np.array([1.0, 2.0, 3.0])), x)
        np.testing.assert_allclose(tl.data(g), 2 * centred / n * np.array([[1.0], [2.0], [3.0]]))
        (g,) = tl.gradient(lambda x: tl.sum(tl.std(x, axis=1, ddof=ddof)), x)
        np.testing.assert_allclose(tl.data(g), centred / (n * np.std(x, axis=1, ddof=ddof, keepdims=True)))


def test_nansum_and_nanmean_send_nothing_to_nans():
    x = tl.param(WITH_NAN)
    y = tl.nansum(x, axis=1)
    np.testing.assert_allclose(tl.data(y), np.nansum(WITH_NAN, axis=1))
    tl.back_(y, [1.0, 2.0, 3.0])
    present = ~np.isnan(WITH_NAN)
    np.testing.assert_array_equal(x.grad, present * np.array([[1.0], [2.0], [3.0]]))
    z = tl.param(WITH_NAN)
    m = tl.nanmean(z, axis=0)
    np.testing.assert_allclose(tl.data(m), np.nanmean(WITH_NAN, axis=0))
    tl.back_(m, [1.0, 1.0, 1.0, 1.0])
    # each present element gets 1 / (the number of present elements in its column)
    np.testing.assert_allclose(z.grad, present / present.sum(axis=0))
    assert np.all(np.isfinite(x.grad)) and np.all(np.isfinite(z.grad))


# ---------------------------------------------------------------- what the checks cannot see


def test_max_and_min_split_ties_evenly():
    x = tl.param([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    tl.back_(tl.sum(tl.max(x, axis=1)))
    np.testing.assert_allclose(x.grad, [[0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]])
    y = tl.param([4.0, 1.0, 1.0])
    tl.back_(y.min())
    np.testing.assert_allclose(y.grad, [0.0, 0.5, 0.5])


def test_prod_nested_gradient_with_zeros_tracker_issue_120():
    # Tracker.jl #120: the Hessian of prod through g·ans/x is NaN (or wrong) wherever x has a zero
    f = lambda x: tl.prod(x)
    for x0 in ([0.0, 2.0, 3.0], [0.0, 0.0, 3.0], [1.0, 2.0, 3.0]):
        x = np.array(x0)
        H = tl.hessian(f, x)
        # ∂²∏x/∂x_i∂x_j = ∏_{k≠i,j} x_k off the diagonal, 0 on it
        exact = np.array([[0.0 if i == j else np.prod(np.delete(x, [i, j])) for j in range(3)] for i in range(3)])
        np.testing.assert_allclose(H, exact)
    g = tl.gradient(lambda x: tl.sum(tl.gradient(f, x)[0]), np.array([0.0, 2.0, 3.0]))[0]
    np.testing.assert_allclose(tl.data(g), [2 + 3, 0 + 3, 0 + 2])


def test_var_and_std_take_ddof():
    x = np.array([1.0, 2.0, 4.0])
    assert float(tl.var(x, ddof=1)) == pytest.approx(np.var(x, ddof=1))
    (g,) = tl.gradient(lambda x: tl.std(x, ddof=1), x)
    np.testing.assert_allclose(tl.data(g), (x - x.mean()) / (2 * np.std(x, ddof=1)))


def test_logsumexp_is_stable():
    x = tl.param([1000.0, 1000.0])
    y = tl.logsumexp(x)
    assert float(y) == pytest.approx(1000 + np.log(2))
    tl.back_(y)
    np.testing.assert_allclose(x.grad, [0.5, 0.5])


# NumPy 2's var and std about a given mean (mean=, which may be tracked): the formula Σ|x − mean|² / (n − ddof)
ABOUT_A_MEAN = [
    (lambda x, m: tl.var(x, axis=1, mean=m), (3, 4), (3, 1)),
    (lambda x, m: tl.std(x, axis=0, ddof=1, keepdims=True, mean=m), (3, 4), (1, 4)),
    (lambda x: tl.std(x, axis=1, mean=0.25), (3, 4)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", range(len(ABOUT_A_MEAN)))
def test_var_and_std_about_a_given_mean_have_checked_gradients(case, backend):
    f, *shapes = ABOUT_A_MEAN[case]
    check(f, *(np.random.default_rng(k).uniform(-1, 1, s) for k, s in enumerate(shapes)), backend=backend)


def test_numpys_var_about_a_tracked_mean_has_checked_gradients():
    # on plain arrays (where the finite differences run f) np.var is the library's own var: NumPy's here,
    # since CuPy's has no mean= (the device case is the next test)
    check(
        lambda x: np.var(x, mean=tl.mean(x, axis=(0, 1), keepdims=True)),
        np.random.default_rng(0).uniform(-1, 1, (3, 4)),
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_numpys_var_of_a_tracked_value_about_a_mean_needs_no_mean_keyword_of_the_library(backend):
    """np.var(x, mean=m) of a tracked x is tl.var, which measures about m itself: on a library whose var has no
    mean= (CuPy's, the stand-in's), it gives NumPy's value and the gradient 2(x − m)/n (that through m is 0
    about the true mean), with m tracked or plain."""
    a = np.random.default_rng(0).uniform(-1, 1, (3, 4))
    x = tl.param(on(backend, a))
    y = np.var(x, mean=tl.mean(x, axis=(0, 1), keepdims=True))
    np.testing.assert_allclose(host(tl.data(y)), np.var(a), rtol=1e-14)
    tl.back_(y)
    np.testing.assert_allclose(host(x.grad), 2 * (a - a.mean()) / a.size, rtol=1e-12, atol=1e-15)
    m = on(backend, np.full((1, 4), 0.25))
    z = tl.param(on(backend, a))
    tl.back_(tl.sum(np.std(z, axis=0, ddof=1, mean=m)))
    s = np.std(a, axis=0, ddof=1, mean=np.full((1, 4), 0.25))
    np.testing.assert_allclose(host(z.grad), (a - 0.25) / ((a.shape[0] - 1) * s), rtol=1e-12)


def test_var_and_std_about_a_given_mean_give_numpys_values():
    x = np.random.default_rng(3).uniform(-1, 1, (3, 4))
    m = np.array([[0.1], [-0.2], [0.3]])
    np.testing.assert_allclose(tl.data(np.var(tl.param(x), axis=1, mean=tl.param(m))), np.var(x, axis=1, mean=m))
    np.testing.assert_allclose(
        tl.data(np.std(tl.param(x), axis=1, ddof=1, mean=m)), np.std(x, axis=1, ddof=1, mean=m), rtol=1e-14
    )
    # about the true mean, the gradient through mean= is 0: the same gradient as var without it
    np.testing.assert_allclose(tl.data(tl.param(x).std(axis=1, mean=0.25)), np.std(x, axis=1, mean=0.25), rtol=1e-14)
    (g,) = tl.gradient(lambda x: tl.sum(np.var(x, axis=0, mean=np.mean(x, axis=0, keepdims=True))), x)
    (h,) = tl.gradient(lambda x: tl.sum(np.var(x, axis=0)), x)
    np.testing.assert_allclose(tl.data(g), tl.data(h), atol=1e-15)


# ----------------------------------------------------------------------------------------------------
# NumPy's reductions that trackerlab lacked (``np.median(x)`` was "no gradient rule"): ``cumprod``, ``ptp``,
# ``average``, ``median``, ``quantile`` and ``percentile``, composed of recorded operations. Each is checked against
# NumPy's value and against central differences of ``Σ W ∘ f`` with random weights (computed here), through ``back_``,
# ``gradient`` and ``forward``; to second order and on the other backends with the suite's ``check``; and at ties,
# where the documented convention (through ``sort``, as JAX) is pinned by hand.
# ----------------------------------------------------------------------------------------------------


RNG = np.random.default_rng(11)
X = RNG.uniform(-1.5, 1.5, (3, 4))
T_REDUCTIONS = RNG.uniform(-1.5, 1.5, (2, 3, 4))


def _differences(f, x, W, eps=1e-6):
    return differences(f, [x], 0, W, eps)


SPELLINGS = {
    "np.cumprod(x, axis=1)": (lambda x: np.cumprod(x, axis=1), X),
    "np.cumprod(x)": (lambda x: np.cumprod(x), X),
    "np.cumprod with zeros": (lambda x: np.cumprod(x * np.array([1.0, 0.0, 1.0, 1.0]), axis=1), X),
    "np.cumprod(x, axis=-2), 3-d": (lambda x: np.cumprod(x, axis=-2), T_REDUCTIONS),
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
    "np.median(x, axis=(0, 2), keepdims=True)": (lambda x: np.median(x, axis=(0, 2), keepdims=True), T_REDUCTIONS),
    "np.quantile(x, 0.3)": (lambda x: np.quantile(x, 0.3), X),
    "np.quantile(x, [0.1, 0.5, 0.9], axis=1)": (lambda x: np.quantile(x, [0.1, 0.5, 0.9], axis=1), X),
    "np.quantile(x, 2-d q, axis=0)": (lambda x: np.quantile(x, [[0.1, 0.5], [0.7, 1.0]], axis=0), X),
    "np.quantile(x, q, axis=(1, 2), keepdims=True)": (
        lambda x: np.quantile(x, [0.2, 0.8], axis=(1, 2), keepdims=True),
        T_REDUCTIONS,
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
