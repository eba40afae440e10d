"""Gradient checks of the indexing rules, to second order: basic, advanced and boolean indices, repeated
indices that accumulate, ``take``, ``take_along_axis`` and ``sort``."""

import numpy as np
import pytest
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
