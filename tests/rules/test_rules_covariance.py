"""``cov`` and ``corrcoef``: NumPy's values for each of its arguments, gradients checked to second order (tracked
weights included), on NumPy and the other backends, and NumPy's refusals, naming the operation."""

import re
import warnings

import numpy as np
import pytest
from test_rules import case_tests, rand

import trackerlab as tl

M, Y = rand(3, 6, seed=5), rand(2, 6, seed=6)
FW = np.array([1.0, 2.0, 1.0, 3.0, 1.0, 2.0])
AW = rand(6, seed=7, low=0.5, high=2.0)

CASES = {
    "cov": [
        (tl.cov, M),
        (lambda m, y: tl.cov(m, y, rowvar=False), M.T, Y.T),
        (lambda m, w: tl.cov(m, aweights=w, ddof=2), M, AW),  # the weights' own gradient too
    ],
    "corrcoef": [(tl.corrcoef, M), (lambda m, y: tl.corrcoef(m, y), M, Y)],
}
globals().update(case_tests("covariance", CASES))

SETTINGS = [
    {},
    {"bias": True},
    {"ddof": 0},
    {"ddof": 2},
    {"fweights": FW.astype(int)},
    {"aweights": AW},
    {"fweights": FW, "aweights": AW},
    {"fweights": FW, "aweights": AW, "bias": True},
    {"fweights": FW, "aweights": AW, "ddof": 3},
]


@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: ",".join(s) or "defaults")
@pytest.mark.parametrize("operands", ["m", "m,y", "row", "row,row", "columns"])
def test_cov_gives_numpys_value_and_gradients(settings, operands):
    m, y, rowvar = {
        "m": (M, None, True),
        "m,y": (M, Y, True),
        "row": (M[0], None, True),
        "row,row": (M[0], M[1], True),
        "columns": (M.T, Y.T, False),
    }[operands]
    # NumPy multiplies float fweights by aweights in place: it gets copies
    want = np.cov(m, y, rowvar, **{k: np.array(v) if k != "bias" else v for k, v in settings.items()})
    np.testing.assert_allclose(tl.data(tl.cov(tl.param(m), y, rowvar, **settings)), want, rtol=1e-12)
    np.testing.assert_allclose(tl.data(np.cov(tl.param(m), y, rowvar, **settings)), want, rtol=1e-12)
    assert np.array_equal(FW, [1, 2, 1, 3, 1, 2]), "cov changed the caller's fweights"
    tl.check_grads(lambda m: tl.cov(m, y, rowvar, **settings), m)
    if y is not None:
        tl.check_grads(lambda y: tl.cov(m, y, rowvar, **settings), y)


def test_cov_by_hand():
    """The unweighted covariance of two variables from its definition."""
    x, y = np.array([1.0, 2.0, 4.0]), np.array([2.0, 1.0, 3.0])
    c = tl.data(tl.cov(tl.param(x), y))
    cxy = np.sum((x - x.mean()) * (y - y.mean())) / 2
    np.testing.assert_allclose(c, [[np.var(x, ddof=1), cxy], [cxy, np.var(y, ddof=1)]], rtol=1e-12)
    # d var(x) / dx_i = 2 (x_i - mean) / (n - 1)
    (g,) = tl.gradient(lambda x: tl.cov(x), x)
    np.testing.assert_allclose(tl.data(g), (x - x.mean()), rtol=1e-12)


@pytest.mark.parametrize("operands", ["m", "m,y", "columns", "one"])
def test_corrcoef_gives_numpys_value_and_gradients(operands):
    m, y, rowvar = {
        "m": (M, None, True),
        "m,y": (M, Y, True),
        "columns": (M.T, None, False),
        "one": (M[0], None, True),
    }[operands]
    want = np.corrcoef(m, y, rowvar)
    got = tl.corrcoef(tl.param(m), y, rowvar)
    np.testing.assert_allclose(tl.data(got), want, rtol=1e-12)
    tl.check_grads(lambda m: tl.corrcoef(m, y, rowvar), m)


def test_complex_values():
    mc = M + 1j * rand(3, 6, seed=8)
    np.testing.assert_allclose(tl.data(tl.cov(tl.param(mc))), np.cov(mc), rtol=1e-12)
    np.testing.assert_allclose(tl.data(tl.corrcoef(tl.param(mc))), np.corrcoef(mc), rtol=1e-12)

    def parts(re_, im_):
        c = tl.cov(re_ + 1j * im_)
        return tl.real(c) + tl.imag(c) ** 2

    tl.check_grads(parts, M, mc.imag)


def test_precision_is_numpys():
    """NumPy computes a covariance in at least double precision; so does cov, and dtype= casts first."""
    assert tl.data(tl.cov(tl.param(M.astype(np.float32)))).dtype == np.cov(M.astype(np.float32)).dtype == np.float64
    got = tl.cov(tl.param(M), dtype=np.float32)
    assert tl.data(got).dtype == np.float32
    np.testing.assert_allclose(tl.data(got), np.cov(M, dtype=np.float32), rtol=1e-6)


def test_too_few_observations_warn_as_numpy_does():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = tl.data(tl.cov(tl.param(M[:, :1])))
    assert any("degrees of freedom <= 0" in str(w.message) for w in caught)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = np.cov(M[:, :1])
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (
            lambda m: tl.cov(tl.reshape(m, (3, 2, 3))),
            ValueError,
            "cov: m has more than 2 dimensions (got shape (3, 2, 3))",
        ),
        (lambda m: tl.cov(m, aweights=-AW), ValueError, "cov: aweights cannot be negative"),
        (lambda m: tl.cov(m, fweights=FW + 0.5), TypeError, "cov: fweights must be whole numbers"),
        (lambda m: tl.cov(m, fweights=FW[:4]), ValueError, "cov: fweights has 4 entries for 6 observations"),
        (lambda m: tl.cov(m, aweights=np.ones((6, 1))), ValueError, "cov: aweights must be 1-D (got shape (6, 1))"),
        (lambda m: tl.cov(m, ddof=1.5), ValueError, "cov: ddof must be a whole number (got 1.5)"),
    ],
)
def test_bad_arguments_are_refused_naming_cov(call, error, message):
    with pytest.raises(error, match=re.escape(message)):
        call(tl.param(M))


# ----------------------------------------------------------------------------------------------------
# cov's weights as NumPy reads them: weights that sum to zero are refused (NumPy's average raises; the covariance was
# NaN), and they are double precision whatever the covariance's dtype.
# ----------------------------------------------------------------------------------------------------


M_COVARIANCE = np.array([[0.3, -1.2, 2.0, 0.7, -0.4], [1.1, 0.2, -0.9, 0.4, 2.3], [-0.6, 0.8, 0.1, -1.5, 0.9]])
AW_COVARIANCE = np.array([0.5, 0.0, 1.5, 2.0, 1.0])


@pytest.mark.parametrize(
    "options",
    [
        {"aweights": np.zeros(5)},
        {"fweights": np.zeros(5, dtype=int)},
        {"fweights": [1, 0, 0, 2, 0], "aweights": [0, 1, 2, 0, 3]},
    ],
)
def test_cov_refuses_weights_that_sum_to_zero(options):
    with pytest.raises(ZeroDivisionError):
        np.cov(M_COVARIANCE, **options)
    with pytest.raises(ZeroDivisionError, match="cov: the weights"):
        tl.cov(tl.param(M_COVARIANCE), **options)


def test_cov_refuses_tracked_aweights_that_sum_to_zero():
    with pytest.raises(ZeroDivisionError, match="cov: the weights"):
        tl.cov(M_COVARIANCE, aweights=tl.param(np.zeros(5)))


@pytest.mark.parametrize(
    "options",
    [{"aweights": AW_COVARIANCE}, {"fweights": [1, 2, 1, 3, 1]}, {"aweights": AW_COVARIANCE.astype(np.float32)}],
)
def test_cov_with_weights_and_a_float32_dtype_is_double_as_numpys(options):
    want = np.cov(M_COVARIANCE, dtype=np.float32, **options)
    got = tl.data(tl.cov(tl.param(M_COVARIANCE), dtype=np.float32, **options))
    assert got.dtype == want.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-6)
    tl.check_grads(
        lambda m: tl.cov(m, dtype=np.float32, **options), M_COVARIANCE, order=1, rtol=1e-4, atol=1e-5, eps=1e-3
    )


@pytest.mark.parametrize("rowvar", [True, False])
def test_cov_and_corrcoef_name_themselves_when_m_and_y_differ_in_observations(rowvar):
    y = np.ones((2, 4)) if rowvar else np.ones((4, 2))
    m = M_COVARIANCE[:2, :3] if rowvar else M_COVARIANCE[:2, :3].T
    with pytest.raises(ValueError, match=r"cov: m and y must hold as many observations \(got 3 and 4"):
        tl.cov(tl.param(m), y, rowvar=rowvar)
    with pytest.raises(ValueError, match="cov: m and y"):
        tl.corrcoef(tl.param(m), y, rowvar=rowvar)
