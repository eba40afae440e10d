"""``einsum`` where an operand's axis meets only axes of length 1 in the other operands (NumPy broadcasts
them): ``einsum("ij,ij->i", a, b)`` with ``a`` of shape (3, 1) and ``b`` of shape (3, 4). ``b``'s sensitivity
came out of the contraction with length 1 on ``j`` and the backward pass failed; it is the same along ``j``
and is spread over it. Checked against central differences of ``Σ W ∘ f``, to second order, with the other
forms of einsum this probe tried beside it (implicit outputs with upper-case letters, ellipses that
broadcast, diagonals, interleaved labels above 26)."""

import numpy as np
import pytest
from differences import differences

import trackerlab as tl

RNG = np.random.default_rng(20261123)


def _differences(f, args, i, W, eps=1e-6):
    return differences(f, args, i, W, eps)


CASES = {
    "ij,ij->i (3,1) (3,4)": ("ij,ij->i", (3, 1), (3, 4)),
    "ij,ij->i (3,4) (1,4)": ("ij,ij->i", (3, 4), (1, 4)),
    "ij,ij-> (1,4) (3,1)": ("ij,ij->", (1, 4), (3, 1)),
    "ij,jk->i (2,1) (3,4)": ("ij,jk->i", (2, 1), (3, 4)),
    "...i,...i->... (2,1,3) (1,4,3)": ("...i,...i->...", (2, 1, 3), (1, 4, 3)),
    "ii,i->i (3,3) (1,)": ("ii,i->i", (3, 3), (1,)),
    "ij,ij->ij (3,1) (3,4)": ("ij,ij->ij", (3, 1), (3, 4)),
    "...ij,...jk->...ik (1,3,4) (2,4,5)": ("...ij,...jk->...ik", (1, 3, 4), (2, 4, 5)),
    "Ab,bC (2,3) (3,4)": ("Ab,bC", (2, 3), (3, 4)),
    "zA,Ay (2,3) (3,4)": ("zA,Ay", (2, 3), (3, 4)),
}


@pytest.mark.parametrize("name", CASES)
def test_einsum_with_broadcast_axes_against_differences(name):
    subscripts, sa, sb = CASES[name]
    a, b = RNG.standard_normal(sa), RNG.standard_normal(sb)
    f = lambda x, y: np.einsum(subscripts, x, y)
    W = RNG.standard_normal(np.shape(f(a, b)))
    got = tl.gradient(lambda x, y: tl.sum(f(x, y) * W), a, b)
    for i in range(2):
        np.testing.assert_allclose(tl.data(got[i]), _differences(f, [a, b], i, W), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", CASES)
def test_einsum_with_broadcast_axes_to_second_order(name):
    subscripts, sa, sb = CASES[name]
    a, b = RNG.standard_normal(sa), RNG.standard_normal(sb)
    f = lambda x, y: np.einsum(subscripts, x, y)
    W = RNG.standard_normal(np.shape(f(a, b)))
    U = RNG.standard_normal(sb)

    def second(x, y):  # Σ U ∘ ∂/∂b of Σ W ∘ f(a, b)², a function of both operands
        return tl.sum(tl.gradient(lambda p, q: tl.sum(f(p, q) ** 2 * W), x, y)[1] * U)

    plain = lambda x, y: tl.data(second(x, y))
    got = tl.gradient(second, a, b)
    for i in range(2):
        np.testing.assert_allclose(tl.data(got[i]), _differences(plain, [a, b], i, 1.0, 1e-5), rtol=1e-5, atol=1e-6)


def test_the_broadcast_operand_by_hand():
    """Σ_i g_i Σ_j a_i0 b_ij: ∂/∂b_ij = g_i a_i0, the same for every j."""
    a, b = np.array([[2.0], [3.0]]), np.ones((2, 3))
    g = np.array([1.0, 10.0])
    grads = tl.gradient(lambda x, y: tl.sum(np.einsum("ij,ij->i", x, y) * g), a, b)
    assert tl.data(grads[1]).tolist() == [[2.0, 2.0, 2.0], [30.0, 30.0, 30.0]]
    assert tl.data(grads[0]).tolist() == [[3.0], [30.0]]
