"""The optimisers on complex parameters: a step must go downhill. The gradient of a complex parameter is
``∂L/∂x − i ∂L/∂y`` (JAX's convention), so ``z − η · grad`` moved ``y`` uphill; each optimiser now steps a
complex parameter as the pair of real parameters ``(x, y)``, as PyTorch's do. Checked against the same
optimiser on the two real parts."""

import numpy as np
import pytest

import trackerlab as tl

C = np.array([0.3 - 1.2j, -0.7 + 0.4j])


def _complex_run(opt, steps=5):
    z = tl.param(np.array([1.0 + 1.0j, 0.5 - 2.0j]))
    ps = tl.Params([z])
    for _ in range(steps):
        gs = tl.gradient(lambda: tl.sum(tl.abs(z - C) ** 2 * np.array([1.0, 3.0])), ps)
        tl.update_(opt, ps, gs)
    return tl.data(z)


def _real_run(opt, steps=5):
    a, b = tl.param([1.0, 0.5]), tl.param([1.0, -2.0])
    ps = tl.Params([a, b])
    for _ in range(steps):
        gs = tl.gradient(lambda: tl.sum(((a - C.real) ** 2 + (b - C.imag) ** 2) * np.array([1.0, 3.0])), ps)
        tl.update_(opt, ps, gs)
    return tl.data(a) + 1j * tl.data(b)


@pytest.mark.parametrize(
    "make", [lambda: tl.optim.Descent(0.05), lambda: tl.optim.Momentum(0.05, 0.9), lambda: tl.optim.ADAM(0.1)]
)
def test_a_complex_parameter_steps_as_its_two_real_parts(make):
    np.testing.assert_allclose(_complex_run(make()), _real_run(make()), rtol=1e-12, atol=1e-12)


def test_descent_on_a_complex_parameter_goes_downhill():
    z = tl.param(np.array([1.0 + 1.0j]))
    gs = tl.gradient(lambda: tl.sum(tl.abs(z) ** 2), tl.Params([z]))
    np.testing.assert_allclose(gs[z].data, [2.0 - 2.0j])  # the convention: ∂L/∂x − i ∂L/∂y
    tl.update_(tl.optim.Descent(0.1), tl.Params([z]), gs)
    np.testing.assert_allclose(tl.data(z), [0.8 + 0.8j])  # was 0.8 + 1.2j: y moved uphill
