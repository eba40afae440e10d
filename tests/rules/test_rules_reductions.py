"""Gradient checks of the reduction rules, to second order, on shapes, axes (ints and tuples) and
``keepdims`` drawn by hypothesis (0-d, size-1 and empty axes included), on NumPy and the other backends."""

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_rules import BACKENDS, check, ruled

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
