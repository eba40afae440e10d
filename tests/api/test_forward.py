"""forward's backpropagator with a tracked Δ: a tracked scalar spreads over an array y as a number does,
and the result can be differentiated with respect to Δ and to the inputs."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import trackerlab as tl

RNG = np.random.default_rng(44)
X0 = RNG.normal(size=3)
DERIVATIVE = np.cos(X0) * X0 + np.sin(X0)  # of sin(x) * x


def test_a_tracked_scalar_sensitivity_spreads_over_an_array_output():
    x = tl.param(X0)
    _, back = tl.forward(lambda x: tl.sin(x) * x, x)
    c = tl.param(1.5)
    (r,) = back(c)
    np.testing.assert_allclose(tl.data(r), 1.5 * DERIVATIVE, rtol=1e-12)
    w = np.array([1.0, -2.0, 0.5])
    tl.back_(tl.sum(r * w))
    np.testing.assert_allclose(tl.grad(c), np.sum(DERIVATIVE * w), rtol=1e-12)
    second = 2 * np.cos(X0) - X0 * np.sin(X0)
    np.testing.assert_allclose(tl.grad(x), 1.5 * second * w, rtol=1e-12)


def test_a_tracked_zero_d_array_sensitivity_and_an_array_one_agree():
    x = tl.param(X0)
    _, back = tl.forward(lambda x: tl.sin(x) * x, x)
    (spread,) = back(tl.param(np.array(2.0)))
    (given,) = back(tl.param(np.full(3, 2.0)))
    np.testing.assert_allclose(tl.data(spread), tl.data(given), rtol=1e-15)
    np.testing.assert_allclose(tl.data(given), 2 * DERIVATIVE, rtol=1e-12)


# ----------------------------------------------------------------------------------------------------
# What ``gradient``, ``hessian`` and ``forward`` are given back by ``f``: a complex loss held as a NumPy complex
# number (or a one-element complex array) is refused as a Python complex is (``float()`` of it would warn, drop the
# imaginary part and give the gradient of the real part), and ``forward``'s ``back`` refuses a tuple of results
# (rather than sending zeros) and a Δ that does not fit a plain result.
# ----------------------------------------------------------------------------------------------------


X = np.array([1.0, 2.0])


@pytest.mark.parametrize(
    "f",
    [
        lambda a: tl.sum(a * 1j),  # a NumPy complex128 number
        lambda a: tl.sum(a * np.complex64(1j)),
        lambda a: tl.reshape(tl.sum(a * 1j), (1,)),  # a one-element complex array
        lambda a: tl.sum(a) * (1 + 2j),
        lambda a: a[0] * 1j,
    ],
)
@pytest.mark.parametrize("who", ["gradient", "hessian", "Params"])
def test_a_complex_loss_is_refused_without_a_warning(f, who):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # NumPy's ComplexWarning was the only sign
        with pytest.raises(TypeError, match=rf"{'gradient' if who == 'Params' else who}: f returned a complex value"):
            if who == "gradient":
                tl.gradient(f, X)
            elif who == "hessian":
                tl.hessian(f, X)
            else:
                x = tl.param(X)
                tl.gradient(lambda: f(x), tl.Params([x]))


def test_real_losses_of_complex_values_are_differentiated():
    (g,) = tl.gradient(lambda a: tl.real(tl.sum(a * (1 + 2j))), X)
    np.testing.assert_allclose(tl.data(g), [1.0, 1.0])
    (g,) = tl.gradient(lambda z: tl.abs(z) ** 2, 3 + 4j)
    assert tl.data(g) == pytest.approx(6 - 8j)


def test_forward_of_a_tuple_of_results_takes_a_delta_for_each():
    _, back = tl.forward(lambda a: (a * 2, a * 3), X)  # back once sent zeros for it
    with pytest.raises(TypeError, match=r"back: Δ at the top is a ndarray, where a tuple of 2 items is expected"):
        back(np.ones(2))
    (g,) = back((np.ones(2), np.array([1.0, -1.0])))
    np.testing.assert_allclose(tl.data(g), [5.0, -1.0])
    _, back = tl.forward(lambda a: None, X)
    with pytest.raises(TypeError, match="forward: f returned a NoneType"):
        back(1.0)


def test_forward_of_a_plain_result_gives_zeros_for_a_delta_that_fits():
    _, back = tl.forward(lambda a: np.ones(3), X)
    (g,) = back(np.ones(3))
    np.testing.assert_array_equal(tl.data(g), [0.0, 0.0])
    (g,) = back(2.0)
    np.testing.assert_array_equal(tl.data(g), [0.0, 0.0])
    with pytest.raises(ValueError, match=r"back: Δ has shape \(2,\), but y has shape \(3,\)"):
        back(np.ones(2))
