"""``convolve`` and ``correlate`` of a real sequence with a complex one: the real operand's sensitivity was the
complex correlation itself, and the walk refused it ("the gradient of a real input must be real"); it is now
its real part, ``∂L/∂a = Re(...)``, as for a product of a real and a complex number (docs/differentiation.md).
Checked against central differences of ``Re Σ W ∘ f`` with complex ``W``, in every mode, to second order."""

import numpy as np
import pytest
from differences import differences

import trackerlab as tl

RNG = np.random.default_rng(20261123)


def _complex(*shape):
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


def _differences(f, args, i, eps=1e-6):
    return differences(f, args, i, 1.0, eps)


CASES = [
    (name, mode, lengths, complex_first)
    for name in ("convolve", "correlate")
    for mode in ("full", "same", "valid")
    for lengths in ((5, 3), (2, 4))
    for complex_first in (True, False)
]


@pytest.mark.parametrize(("name", "mode", "lengths", "complex_first"), CASES)
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
