"""Gradient checks of the splits rules, to second order, on NumPy and the other backends (``split``)."""

import numpy as np
import pytest
from test_rules import BACKENDS, check, rand, ruled

import trackerlab as tl

V = rand(6, seed=3)


def pieces(x):
    """The pieces of a split, weighted differently so that each piece's sensitivity is checked."""
    return tl.concatenate([(k + 1.0) * p for k, p in enumerate(tl.split(x, [1, 4]))])


CASES = {
    "split": [(pieces, V), (lambda x: tl.split(x, 2, axis=1)[0] * tl.split(x, 2, axis=1)[1], rand(2, 4))],
}


def test_every_splits_rule_has_a_case():
    missing = [n for n in ruled("splits") if n not in CASES]
    assert not missing, f"splits rules without a test case: {missing}"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_splits_rule(name, backend):
    for f, *args in CASES[name]:
        check(f, *args, backend=backend)


def test_split_records_one_split_per_piece():
    x = tl.param(np.arange(6.0))
    pieces = tl.split(x, 3)
    assert [p.tracker.f.name for p in pieces] == ["split"] * 3
    assert [tl.data(p).tolist() for p in pieces] == [[0, 1], [2, 3], [4, 5]]
