"""Gradient checks of the signal rules (``convolve``, and ``correlate`` composed of it), to second order, in
every mode and length order, real and complex, on NumPy and the other backends; values against NumPy's."""

import re

import numpy as np
import pytest
from test_rules import case_tests, rand

import trackerlab as tl

A, V = rand(5, seed=1), rand(3, seed=2)
LENGTHS = [(5, 3), (3, 5), (4, 6), (6, 4), (1, 4), (6, 6), (2, 7)]
MODES = ["full", "same", "valid"]


def _modes(f):
    """``f`` in every mode, weighed differently so that each mode's sensitivity is checked."""
    return lambda a, v: tl.concatenate([(k + 1.0) * f(a, v, mode) for k, mode in enumerate(MODES)])


CASES = {
    "convolve": [
        (_modes(tl.convolve), A, V),
        (_modes(tl.convolve), V, A),  # the longer second: NumPy swaps them
        (_modes(tl.correlate), A, rand(6, seed=4)),  # correlate's own window when v is the longer
        (lambda a: tl.convolve(a, a), A),  # one operand twice: both sensitivities add up
    ],
}
globals().update(case_tests("signal", CASES))


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("n", "m"), LENGTHS)
def test_values_and_gradients_match_numpy_in_every_mode(name, mode, n, m):
    rng = np.random.default_rng(n * 10 + m)
    a, v = rng.standard_normal(n), rng.standard_normal(m)
    f, reference = getattr(tl, name), getattr(np, name)
    np.testing.assert_allclose(tl.data(f(tl.param(a), tl.param(v), mode)), reference(a, v, mode), rtol=1e-12)
    np.testing.assert_allclose(tl.data(reference(tl.param(a), v, mode=mode)), reference(a, v, mode), rtol=1e-12)
    # the gradient of <u, f(a, v)> in a is u's correlation with v, entry by entry from the definition
    u = rng.standard_normal(reference(a, v, mode).shape)
    ga, gv = tl.gradient(lambda a, v: tl.sum(u * f(a, v, mode)), a, v)
    eye_a, eye_v = np.eye(n), np.eye(m)
    want_a = [np.sum(u * reference(eye_a[i], v, mode)) for i in range(n)]
    want_v = [np.sum(u * reference(a, eye_v[j], mode)) for j in range(m)]
    np.testing.assert_allclose(tl.data(ga), want_a, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(tl.data(gv), want_v, rtol=1e-12, atol=1e-14)
    tl.check_grads(lambda a, v: f(a, v, mode), a, v)


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", MODES)
def test_complex_values_follow_the_convention(name, mode):
    """Linear in each operand: holomorphic for convolve (no conjugate sent), correlate conjugates v."""
    rng = np.random.default_rng(7)
    a = rng.standard_normal(4) + 1j * rng.standard_normal(4)
    v = rng.standard_normal(6) + 1j * rng.standard_normal(6)
    f, reference = getattr(tl, name), getattr(np, name)
    np.testing.assert_allclose(tl.data(f(tl.param(a), tl.param(v), mode)), reference(a, v, mode), rtol=1e-12)

    def parts(ar, ai, vr, vi):
        out = f(ar + 1j * ai, vr + 1j * vi, mode)
        return tl.real(out) + tl.imag(out) ** 2

    tl.check_grads(parts, a.real, a.imag, v.real, v.imag)


def test_a_number_is_a_sequence_of_length_one():
    x = tl.param(2.0)
    y = tl.convolve(x, np.array([1.0, -3.0]))
    np.testing.assert_allclose(tl.data(y), [2.0, -6.0])
    tl.back_(tl.sum(y * np.array([1.0, 2.0])))
    assert x.grad == pytest.approx(-5.0)


def test_float32_stays_float32():
    a, v = tl.param(A.astype(np.float32)), tl.param(V.astype(np.float32))
    y = tl.convolve(a, v, "same")
    assert tl.data(y).dtype == np.float32
    tl.back_(tl.sum(y * y))
    assert a.grad.dtype == np.float32 and v.grad.dtype == np.float32


@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_bad_input_is_refused_naming_the_operation(name):
    f = getattr(tl, name)
    x = tl.param(A)
    with pytest.raises(ValueError, match=f"{name}: mode must be one of 'full', 'same', 'valid' \\(got 'middle'\\)"):
        f(x, V, "middle")
    with pytest.raises(ValueError, match=re.escape(f"{name}: a and v must be 1-D sequences (got shapes (5,) and (2, 3))")):
        f(x, np.ones((2, 3)))
    with pytest.raises(ValueError, match=re.escape(f"{name}: a and v must not be empty (got shapes (5,) and (0,))")):
        f(x, np.ones(0))
