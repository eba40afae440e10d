"""Gradient checks of the splits rules, to second order, on NumPy and the other backends (``split``)."""

import numpy as np
from test_rules import case_tests, rand

import trackerlab as tl

V = rand(6, seed=3)


def pieces(x):
    """The pieces of a split, weighted differently so that each piece's sensitivity is checked."""
    return tl.concatenate([(k + 1.0) * p for k, p in enumerate(tl.split(x, [1, 4]))])


CASES = {
    "split": [(pieces, V), (lambda x: tl.split(x, 2, axis=1)[0] * tl.split(x, 2, axis=1)[1], rand(2, 4))],
}


globals().update(case_tests("splits", CASES))  # a case for every rule, each checked on every backend


def test_split_records_one_split_per_piece():
    x = tl.param(np.arange(6.0))
    pieces = tl.split(x, 3)
    assert [p.tracker.f.name for p in pieces] == ["split"] * 3
    assert [tl.data(p).tolist() for p in pieces] == [[0, 1], [2, 3], [4, 5]]
