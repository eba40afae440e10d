"""A custom pullback written with tl.data(x) is constant to nested differentiation: differentiating what it
sent refuses (check_grads' second-order comparison included), as docs/differentiation.md says, and the
pullback written with x is right."""

from __future__ import annotations

import numpy as np
import pytest

import trackerlab as tl


def cube_from_data(x):
    return tl.track(cube_from_data, x) if tl.istracked(x) else x**3


@tl.grad_rule(cube_from_data)
def _(x):
    xd = tl.data(x)
    return xd**3, lambda d: (3 * d * xd**2,)


def cube(x):
    return tl.track(cube, x) if tl.istracked(x) else x**3


@tl.grad_rule(cube)
def _(x):
    return tl.data(x) ** 3, lambda d: (3 * d * x**2,)


def test_check_grads_finds_a_pullback_written_with_plain_values():
    x0 = np.array([0.5, 1.5])
    (g,) = tl.gradient(lambda x: tl.sum(cube_from_data(x)), x0)
    np.testing.assert_allclose(tl.data(g), 3 * x0**2, rtol=1e-12)  # right at first order
    with pytest.raises(TypeError, match=r"cube_from_data: the pullback of its @grad_rule closes over tl\.data"):
        tl.check_grads(lambda x: tl.sum(cube_from_data(x)), x0)
    tl.check_grads(lambda x: tl.sum(cube(x)), x0)
    np.testing.assert_allclose(tl.hessian(lambda x: tl.sum(cube(x)), x0), np.diag(6 * x0), rtol=1e-12)
