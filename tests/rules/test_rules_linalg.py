"""Gradient checks of the products, to second order: every rank (``matmul`` also on the other backends),
``einsum``, ``tensordot``, ``cross``, and the composites ``kron`` and ``multi_dot``; the matrix constants
here are shared with the other linear-algebra families' files."""

import numpy as np
import pytest
from differences import differences
from test_rules import BACKENDS, check, rand, ruled

import trackerlab as tl

v3, w3 = rand(3), rand(3, seed=1)
M23, M34 = rand(2, 3, seed=2), rand(3, 4, seed=3)
B523, B534 = rand(5, 2, 3, seed=4), rand(5, 3, 4, seed=5)
S = np.array(1.5)
SQ = rand(3, 3, seed=6) + 3 * np.eye(3)  # well conditioned
BSQ = rand(2, 3, 3, seed=7) + 3 * np.eye(3)
T234 = rand(2, 3, 4, seed=8)
T342 = rand(3, 4, 2, seed=9)


MATMUL = [
    (v3, w3),  # 1-D · 1-D
    (M23, v3),  # 2-D · 1-D
    (v3, M34),  # 1-D · 2-D
    (M23, M34),
    (B523, M34),  # batched · matrix
    (B523, B534),  # batched · batched
    (rand(1, 2, 3), rand(4, 3, 2)),  # broadcast batches
    (v3, B534),  # 1-D · batched
    (B523, v3),  # batched · 1-D
]

CASES = {
    "matmul": [(tl.matmul, x, y) for x, y in MATMUL],
    "dot": [(tl.dot, S, M23), (tl.dot, v3, w3), (tl.dot, M23, M34), (tl.dot, T234, rand(5, 4, 2)), (tl.dot, B523, v3)],
    "inner": [(tl.inner, v3, w3), (tl.inner, M23, rand(4, 2, 3)), (tl.inner, S, v3)],
    "outer": [(tl.outer, v3, rand(4)), (tl.outer, M23, w3)],
    "vdot": [(tl.vdot, M23, rand(3, 2))],
    "vecdot": [(tl.vecdot, M23, w3), (lambda x, y: tl.vecdot(x, y, axis=0), M34, rand(3, 1))],
    "tensordot": [
        (lambda x, y: tl.tensordot(x, y, axes=2), T234, T342),
        (lambda x, y: tl.tensordot(x, y, axes=([1, 0], [0, 2])), T234, rand(3, 5, 2)),
        (lambda x, y: tl.tensordot(x, y, axes=0), v3, M23),
        (lambda x, y: tl.tensordot(x, y, axes=1), M23, M34),
        # a 0-d operand, nothing summed: the outer product (CuPy's tensordot refuses axes=([], []) with one)
        (lambda x, y: tl.tensordot(x, y, axes=([], [])), S, M23),
        (lambda x, y: tl.tensordot(x, y, axes=0), M23, S),
    ],
    "cross": [
        (tl.cross, v3, w3),
        (tl.cross, rand(4, 3), w3),
        (lambda x, y: tl.cross(x, y, axis=0), M34, rand(3, 1)),
        (lambda x, y: tl.cross(x, y, axisa=0, axisb=1, axisc=0), M34, rand(4, 3, seed=11)),
        (lambda x, y: tl.cross(x, y, axisa=0, axisc=1), M34, w3),  # y broadcasts against x's vectors
        (lambda x, y: tl.cross(x, y, axisb=0, axisc=0), rand(2, 1, 3, seed=12), rand(3, 4, seed=13)),
    ],
    "einsum": [
        (lambda x, y: tl.einsum("ij,jk->ik", x, y), M23, M34),
        (lambda x, y: tl.einsum("ij,jk", x, y), M23, M34),  # implicit output
        (lambda x: tl.einsum("ii->", x), SQ),
        (lambda x: tl.einsum("ii->i", x), SQ),
        (lambda x: tl.einsum("i,i->", x, x), v3),  # one operand twice
        (lambda x, y: tl.einsum("...ij,...jk->...ik", x, y), B523, M34),
        (lambda x: tl.einsum("bij->j", x), B523),  # a summed-away letter comes back
        (lambda x, y, z: tl.einsum("i,ij,j", x, y, z), rand(2), M23, w3),
        (lambda x, y: tl.einsum(x, [0, 1], y, [1, 2], [0, 2]), M23, M34),  # interleaved form
        (lambda x, y: tl.einsum("ij,kj->ikj", x, y), rand(2, 1), rand(4, 3)),  # a broadcast length-1 axis
    ],
}


def test_every_linalg_rule_has_a_case():
    missing = [n for n in ruled("linalg") if n not in CASES]
    assert not missing, f"linalg rules without a test case: {missing}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_linalg_rule(name):
    for f, *args in CASES[name]:
        check(f, *args)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", range(len(MATMUL)))
def test_matmul_of_every_rank_on_every_backend(case, backend):
    check(tl.matmul, *MATMUL[case], backend=backend)


# (the composite through tl, the same through NumPy on plain arrays, arguments)
COMPOSITES = [
    (lambda x, y: tl.multi_dot([x, y, y.T]), lambda x, y: np.linalg.multi_dot([x, y, y.T]), M23, M34),
    (tl.kron, np.kron, M23, rand(2, 2, seed=16)),
    (tl.kron, np.kron, v3, M23),
    (tl.kron, np.kron, S, T234),
]


@pytest.mark.parametrize("case", range(len(COMPOSITES)))
def test_composites_of_linalg_operations(case):
    f, numpy_f, *args = COMPOSITES[case]
    np.testing.assert_allclose(tl.data(f(*(tl.param(a) for a in args))), numpy_f(*args))
    check(f, *args)


def test_cross_with_separate_axes_matches_numpy():
    a, b = rand(3, 4, seed=20), rand(4, 3, seed=21)
    x, y = tl.param(a), tl.param(b)
    out = np.cross(x, y, axisa=0, axisb=1, axisc=0)
    np.testing.assert_allclose(tl.data(out), np.cross(a, b, axisa=0, axisb=1, axisc=0))
    np.testing.assert_allclose(tl.data(np.cross(x, y.T, axis=0)), np.cross(a, b.T, axis=0))
    tl.back_(tl.sum(out * np.arange(12.0).reshape(3, 4)))
    assert x.grad.shape == (3, 4) and y.grad.shape == (4, 3)


def test_kron_matches_numpy():
    for a, b in ((M23, rand(2, 2, seed=16)), (v3, M23), (T234, rand(2, 1, seed=17))):
        np.testing.assert_allclose(tl.data(np.kron(tl.param(a), b)), np.kron(a, b))


def test_cross_axes_out_of_bounds_are_an_error():
    x = tl.param(M34)
    with pytest.raises(ValueError, match=r"cross: axisa=2 is out of bounds for an array of dimension 2"):
        tl.cross(x, w3, axisa=2)
    with pytest.raises(ValueError, match=r"cross: axisc=-3 is out of bounds for an array of dimension 2"):
        np.cross(x, w3, axisa=0, axisc=-3)


# ----------------------------------------------------------------------------------------------------
# ``einsum`` where an operand's axis meets only axes of length 1 in the other operands (NumPy broadcasts them):
# ``einsum("ij,ij->i", a, b)`` with ``a`` of shape (3, 1) and ``b`` of shape (3, 4). ``b``'s sensitivity came out of
# the contraction with length 1 on ``j`` and the backward pass failed; it is the same along ``j`` and is spread over
# it. Checked against central differences of ``Σ W ∘ f``, to second order, with the other forms of einsum this probe
# tried beside it (implicit outputs with upper-case letters, ellipses that broadcast, diagonals, interleaved labels
# above 26).
# ----------------------------------------------------------------------------------------------------


RNG = np.random.default_rng(20261123)


def _differences(f, args, i, W, eps=1e-6):
    return differences(f, args, i, W, eps)


CASES_EINSUM = {
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


@pytest.mark.parametrize("name", CASES_EINSUM)
def test_einsum_with_broadcast_axes_against_differences(name):
    subscripts, sa, sb = CASES_EINSUM[name]
    a, b = RNG.standard_normal(sa), RNG.standard_normal(sb)
    f = lambda x, y: np.einsum(subscripts, x, y)
    W = RNG.standard_normal(np.shape(f(a, b)))
    got = tl.gradient(lambda x, y: tl.sum(f(x, y) * W), a, b)
    for i in range(2):
        np.testing.assert_allclose(tl.data(got[i]), _differences(f, [a, b], i, W), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", CASES_EINSUM)
def test_einsum_with_broadcast_axes_to_second_order(name):
    subscripts, sa, sb = CASES_EINSUM[name]
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
