"""Found by the random-program fuzzer: the Jacobian of a real function of a complex 0-d input."""

import numpy as np

import trackerlab as tl


def test_jacobian_of_a_complex_scalar_input_is_the_complex_gradient():
    # L = |z|³: ∂L/∂x − i ∂L/∂y = 3|z| (x − iy) = 3 · 0.5 · (0.3 − 0.4i)
    z = np.array(0.3 + 0.4j)
    J = tl.jacobian(lambda z: abs(z) ** 3, z)
    assert isinstance(J, complex)
    assert np.isclose(J, 1.5 * (0.3 - 0.4j))
    # the same number as the gradient, and as the 1-element case
    assert np.isclose(J, complex(tl.data(tl.gradient(lambda z: abs(z) ** 3, z)[0])))
    assert np.allclose(tl.jacobian(lambda z: abs(z) ** 3, np.array([0.3 + 0.4j])), [[1.5 * (0.3 - 0.4j)]])


def test_jacobian_of_a_real_scalar_stays_a_float():
    J = tl.jacobian(lambda x: x**3, 2.0)
    assert type(J) is float and J == 12.0
    assert tl.hessian(lambda x: x**3, 2.0) == 12.0
