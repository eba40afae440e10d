"""Gradient checks of the signal rules (``convolve``, and ``correlate`` composed of it), to second order, in
every mode and length order, real and complex, on NumPy and the other backends; values against NumPy's."""

import re

import numpy as np
import pytest
from differences import differences
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
    with pytest.raises(
        ValueError, match=re.escape(f"{name}: a and v must be 1-D sequences (got shapes (5,) and (2, 3))")
    ):
        f(x, np.ones((2, 3)))
    with pytest.raises(ValueError, match=re.escape(f"{name}: a and v must not be empty (got shapes (5,) and (0,))")):
        f(x, np.ones(0))


# ----------------------------------------------------------------------------------------------------
# ``convolve`` and ``correlate`` of a real sequence with a complex one: the real operand's sensitivity was the complex
# correlation itself, and the walk refused it ("the gradient of a real input must be real"); it is now its real part,
# ``∂L/∂a = Re(...)``, as for a product of a real and a complex number (docs/differentiation.md). Checked against
# central differences of ``Re Σ W ∘ f`` with complex ``W``, in every mode, to second order.
# ----------------------------------------------------------------------------------------------------


RNG = np.random.default_rng(20261123)


def _complex(*shape):
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


def _differences(f, args, i, eps=1e-6):
    return differences(f, args, i, 1.0, eps)


CASES_SIGNAL = [
    (name, mode, lengths, complex_first)
    for name in ("convolve", "correlate")
    for mode in ("full", "same", "valid")
    for lengths in ((5, 3), (2, 4))
    for complex_first in (True, False)
]


@pytest.mark.parametrize(("name", "mode", "lengths", "complex_first"), CASES_SIGNAL)
def test_a_real_sequence_beside_a_complex_one_gets_a_real_gradient(name, mode, lengths, complex_first):
    n, m = lengths
    a = _complex(n) if complex_first else RNG.standard_normal(n)
    v = RNG.standard_normal(m) if complex_first else _complex(m)
    f = getattr(np, name)
    W = _complex(len(f(a, v, mode)))
    loss = lambda x, y: np.sum(np.real(W * f(x, y, mode)))
    got = tl.gradient(lambda x, y: tl.sum(tl.real(f(x, y, mode) * W)), a, v)
    for i, want_real in ((0, not complex_first), (1, complex_first)):
        g = tl.data(got[i])
        assert np.iscomplexobj(g) != want_real
        np.testing.assert_allclose(g, _differences(loss, [a, v], i), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_the_real_operand_to_second_order(mode):
    a, v = RNG.standard_normal(4), _complex(3)
    W = _complex(len(np.convolve(a, v, mode)))
    U = RNG.standard_normal(4)

    def slope(x):  # Σ U ∘ ∂/∂a of Re Σ W ∘ conv(a, v)², a real function of the real a
        return tl.sum(tl.gradient(lambda y: tl.sum(tl.real(np.convolve(y, v, mode) ** 2 * W)), x)[0] * U)

    got = tl.data(tl.gradient(slope, a)[0])
    want = _differences(lambda x: float(tl.data(slope(x))), [a], 0, eps=1e-5)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
