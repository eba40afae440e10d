"""quantile and percentile give NumPy's dtype: a float32 x at float64 levels (a list, an array, a NumPy float64)
is read in float64, as NumPy promotes them; a Python number keeps float32. They always gave x's dtype, rounding
a float64 result to float32."""

import numpy as np
import pytest

import trackerlab as tl

X = (np.array([[0.3, -1.2, 2.0, 0.7, -0.4], [1.1, 0.2, -0.9, 0.4, 2.3]]) * 7).astype(np.float32)
LEVELS = [0.3, [0.3, 0.6], np.float64(0.3), np.float32(0.3), np.array([0.3], np.float32), np.array(0.3), np.int64(1), [0, 1]]


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
