"""Gradient checks of the indexing rules, to second order: basic, advanced and boolean indices, repeated
indices that accumulate, ``take``, ``take_along_axis`` and ``sort``."""

import numpy as np
import pytest
from differences import differences
from test_rules import check, rand, ruled

import trackerlab as tl
from trackerlab.rules.indexing import _untake

A = rand(3, 4)
V = rand(5, seed=1)
REPEATS = np.array([0, 2, 0, 0])
MASK = A > 0.1
IDX = np.array([[2, 0, 1, 1], [0, 0, 2, 1]])

CASES = {
    "getitem": [
        (lambda x: x[1], A),
        (lambda x: x[1:, ::2], A),
        (lambda x: x[..., None, -1], A),
        (lambda x: x[REPEATS], V),  # repeated indices must accumulate
        (lambda x: x[REPEATS, 1:3], A),
        (lambda x: x[[0, 2, 2], [1, 1, 3]], A),
        (lambda x: x[MASK], A),
        (lambda x: x[MASK[0]], A.T),
        (lambda x: x[np.array(3)], V),
    ],
    "_untake": [
        (lambda g: _untake(g, REPEATS, (5,)), rand(4, seed=2)),
        (lambda g: _untake(g, (slice(None), 1), (3, 4)), rand(3, seed=3)),
    ],
    "take": [
        (lambda x: tl.take(x, REPEATS), A),
        (lambda x: tl.take(x, REPEATS, axis=1), A),
        (lambda x: tl.take(x, IDX, axis=0), A),
    ],
    "take_along_axis": [
        (lambda x: tl.take_along_axis(x, IDX, axis=0), A),
        (lambda x: tl.take_along_axis(x, IDX[:, :3].T, axis=1), A),
        (lambda x: tl.take_along_axis(x, np.array([[1], [0], [3]]), axis=1), A),
    ],
    "sort": [
        (tl.sort, A),
        (lambda x: tl.sort(x, axis=0), A),
        (lambda x: tl.sort(x, axis=None), A),
    ],
    "partition": [
        (lambda x: tl.partition(x, 2), A),
        (lambda x: tl.partition(x, (0, 2), axis=0), A),
        (lambda x: tl.partition(x, 5, axis=None), A),
    ],
}


def test_every_indexing_rule_has_a_case():
    missing = [n for n in ruled("indexing") if n not in CASES]
    assert not missing, f"indexing rules without a test case: {missing}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_indexing_rule(name):
    for f, *args in CASES[name]:
        check(f, *args)


def test_repeated_advanced_indices_accumulate():
    x = tl.param([1.0, 2.0, 3.0])
    tl.back_(tl.sum(x[np.array([0, 0, 2, 0])]))
    np.testing.assert_array_equal(x.grad, [3.0, 0.0, 1.0])
    W = tl.param(np.zeros((2, 3)))
    tl.back_(tl.sum(W[[1, 1], [2, 2]] * np.array([1.0, 10.0])))
    np.testing.assert_array_equal(W.grad, [[0, 0, 0], [0, 0, 11.0]])


def test_boolean_masks_select_and_send_back():
    x = tl.param([[1.0, -2.0], [3.0, -4.0]])
    positive = tl.data(x) > 0
    y = x[positive]
    np.testing.assert_array_equal(tl.data(y), [1.0, 3.0])
    tl.back_(tl.sum(y * y))
    np.testing.assert_array_equal(x.grad, [[2.0, 0.0], [6.0, 0.0]])


def test_a_mask_made_by_comparing_tracked_values_is_plain():
    x = tl.param([1.0, 2.0, 3.0])
    assert not tl.istracked(x > 1.5)
    np.testing.assert_array_equal(tl.data(x[x > 1.5]), [2.0, 3.0])


def test_sort_sends_each_sensitivity_to_its_element():
    x = tl.param([3.0, 1.0, 2.0])
    tl.back_(tl.sort(x), [10.0, 20.0, 30.0])
    np.testing.assert_array_equal(x.grad, [30.0, 10.0, 20.0])


def test_assigning_into_a_tracked_array_is_a_clear_error():
    x = tl.param([1.0, 2.0])
    with pytest.raises(TypeError, match=r"cannot be assigned to in place \(x\[i\] = v\)"):
        x[0] = 5.0


def test_partition_sends_each_sensitivity_to_the_element_it_came_from():
    x = tl.param([3.0, 1.0, 4.0, 1.5, 9.0])
    y = np.partition(x, 2)
    np.testing.assert_array_equal(tl.data(y), np.partition(tl.data(x), 2))
    weights = np.arange(1.0, 6.0)
    tl.back_(tl.sum(y * weights))
    order = np.argpartition(tl.data(x), 2)
    expected = np.zeros(5)
    expected[order] = weights
    np.testing.assert_array_equal(x.grad, expected)
    assert not tl.istracked(np.argpartition(x, 2)) and not tl.istracked(x.argpartition(2))


# ----------------------------------------------------------------------------------------------------
# Indices that NumPy reads as positions although they are not lists or integer arrays: a tuple inside the index
# (``x[(0, 0),]``, ``x[:, (1, 1)]``, ``x[((0, 0), (1, 1))]``) and a tuple of indices given to ``take``. A position
# given twice selects its element twice, and its gradient must receive both contributions; the scatter of the
# sensitivity wrote them (keeping one) instead of adding them. Checked by hand and against central differences of ``Σ
# W ∘ f(x)`` with random weights ``W``, to second order, through ``gradient`` and ``back_``.
# ----------------------------------------------------------------------------------------------------


RNG = np.random.default_rng(20261123)


def _differences(f, x, W, eps=1e-6):
    return differences(f, [x], 0, W, eps)


CASES_INDEXING = {
    "x[(0, 0),]": (lambda a: a[(0, 0),], (4,)),
    "x[(2, 0, 2, 2),]": (lambda a: a[(2, 0, 2, 2),], (3, 2)),
    "x[:, (1, 1)]": (lambda a: a[:, (1, 1)], (2, 3)),
    "x[((0, 0), (1, 1))]": (lambda a: a[((0, 0), (1, 1))], (2, 3)),
    "x[(0, 0), :]": (lambda a: a[(0, 0), :], (2, 3)),
    "x[..., (-1, 2)]": (lambda a: a[..., (-1, 2)], (2, 3)),
    "x[(1, 1), 0, None]": (lambda a: a[(1, 1), 0, None], (2, 3)),
    "np.take(x, (0, 0))": (lambda a: np.take(a, (0, 0)), (4,)),
    "np.take(x, (1, -2, 1), axis=1)": (lambda a: np.take(a, (1, -2, 1), axis=1), (2, 3)),
    "x.take((0, 0, 3))": (lambda a: a.take((0, 0, 3)), (2, 2)),
}


def test_a_position_given_twice_in_a_tuple_receives_both_contributions():
    x = np.arange(4.0)
    assert tl.data(tl.gradient(lambda a: tl.sum(a[(0, 0),]), x)[0]).tolist() == [2.0, 0.0, 0.0, 0.0]
    assert tl.data(tl.gradient(lambda a: tl.sum(np.take(a, (3, 3, 3))), x)[0]).tolist() == [0.0, 0.0, 0.0, 3.0]
    m = tl.param(np.arange(6.0).reshape(2, 3))
    tl.back_(tl.sum(m[:, (1, 1)] * np.array([[1.0, 10.0], [100.0, 1000.0]])))
    assert m.grad.tolist() == [[0.0, 11.0, 0.0], [0.0, 1100.0, 0.0]]


@pytest.mark.parametrize("name", CASES_INDEXING)
def test_tuple_indices_against_differences(name):
    f, shape = CASES_INDEXING[name]
    x = RNG.standard_normal(shape)
    W = RNG.standard_normal(np.shape(f(x)))
    want = _differences(f, x, W)
    got = tl.data(tl.gradient(lambda a: tl.sum(f(a) * W), x)[0])
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
    p = tl.param(x)
    tl.back_(f(p), W)
    np.testing.assert_allclose(p.grad, want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", CASES_INDEXING)
def test_tuple_indices_to_second_order(name):
    """The gradient of Σ U ∘ ∇(Σ W ∘ f(x)³): the cube makes the second derivative depend on the repeats."""
    f, shape = CASES_INDEXING[name]
    x = RNG.standard_normal(shape)
    W = RNG.standard_normal(np.shape(f(x)))
    U = RNG.standard_normal(shape)

    def first(a):
        return tl.gradient(lambda b: tl.sum(f(b) ** 3 * W), a)[0]

    want = _differences(lambda a: tl.data(first(a)), x, U, eps=1e-5)
    got = tl.data(tl.gradient(lambda a: tl.sum(first(a) * U), x)[0])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


SCALAR_INDICES = {
    "x[()]": (lambda a: a[()] * a, lambda v: 2 * v),
    "x[...]": (lambda a: a[...] ** 3, lambda v: 3 * v**2),
    "x[None] · [2, 3]": (lambda a: tl.sum(a[None] * np.array([2.0, 3.0])), lambda v: 5.0),
    "x[None, None][0, 0]": (lambda a: a[None, None][0, 0] ** 2, lambda v: 2 * v),
    "x[None][[0, 0]]": (lambda a: tl.sum(a[None][[0, 0]] ** 2), lambda v: 4 * v),
}


@pytest.mark.parametrize("name", SCALAR_INDICES)
def test_a_tracked_number_is_indexed_as_numpys_scalars_are(name):
    """A 0-d parameter is a tracked number; ``x[()]``, ``x[...]`` and ``x[None]`` work on it as on ``np.float64``,
    with the gradient to second order."""
    f, slope = SCALAR_INDICES[name]
    np.testing.assert_allclose(tl.data(f(tl.param(1.3))), tl.data(f(np.float64(1.3))))
    (g,) = tl.gradient(f, 1.3)
    assert float(tl.data(g)) == pytest.approx(slope(1.3))
    second = tl.gradient(lambda v: tl.gradient(f, v)[0], 1.3)[0]
    eps = 1e-5
    want = (float(tl.data(tl.gradient(f, 1.3 + eps)[0])) - float(tl.data(tl.gradient(f, 1.3 - eps)[0]))) / (2 * eps)
    assert float(tl.data(second)) == pytest.approx(want, abs=1e-6)
