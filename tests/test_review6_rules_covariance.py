"""cov's weights as NumPy reads them: weights that sum to zero are refused (NumPy's average raises; the covariance
was NaN), and they are double precision whatever the covariance's dtype."""

import numpy as np
import pytest

import trackerlab as tl

M = np.array([[0.3, -1.2, 2.0, 0.7, -0.4], [1.1, 0.2, -0.9, 0.4, 2.3], [-0.6, 0.8, 0.1, -1.5, 0.9]])
AW = np.array([0.5, 0.0, 1.5, 2.0, 1.0])


@pytest.mark.parametrize(
    "options",
    [{"aweights": np.zeros(5)}, {"fweights": np.zeros(5, dtype=int)}, {"fweights": [1, 0, 0, 2, 0], "aweights": [0, 1, 2, 0, 3]}],
)
def test_cov_refuses_weights_that_sum_to_zero(options):
    with pytest.raises(ZeroDivisionError):
        np.cov(M, **options)
    with pytest.raises(ZeroDivisionError, match="cov: the weights"):
        tl.cov(tl.param(M), **options)


def test_cov_refuses_tracked_aweights_that_sum_to_zero():
    with pytest.raises(ZeroDivisionError, match="cov: the weights"):
        tl.cov(M, aweights=tl.param(np.zeros(5)))


@pytest.mark.parametrize("options", [{"aweights": AW}, {"fweights": [1, 2, 1, 3, 1]}, {"aweights": AW.astype(np.float32)}])
def test_cov_with_weights_and_a_float32_dtype_is_double_as_numpys(options):
    want = np.cov(M, dtype=np.float32, **options)
    got = tl.data(tl.cov(tl.param(M), dtype=np.float32, **options))
    assert got.dtype == want.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-6)
    tl.check_grads(lambda m: tl.cov(m, dtype=np.float32, **options), M, order=1, rtol=1e-4, atol=1e-5, eps=1e-3)


@pytest.mark.parametrize("rowvar", [True, False])
def test_cov_and_corrcoef_name_themselves_when_m_and_y_differ_in_observations(rowvar):
    y = np.ones((2, 4)) if rowvar else np.ones((4, 2))
    m = M[:2, :3] if rowvar else M[:2, :3].T
    with pytest.raises(ValueError, match=r"cov: m and y must hold as many observations \(got 3 and 4"):
        tl.cov(tl.param(m), y, rowvar=rowvar)
    with pytest.raises(ValueError, match="cov: m and y"):
        tl.corrcoef(tl.param(m), y, rowvar=rowvar)
