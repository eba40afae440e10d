"""Gradient checks of the joins rules, to second order, on NumPy and the other backends (``concatenate`` and ``stack``)."""

import numpy as np
import pytest
from test_rules import case_tests, rand

import trackerlab as tl

A = rand(2, 3)
B = rand(2, 3, seed=1)
C = rand(4, 3, seed=2)
E = rand(0, 3, seed=5)

CASES = {
    "concatenate": [
        (lambda x, y: tl.concatenate([x, y]), A, B),
        (lambda x, y: tl.concatenate([x, y, x], axis=1), A, B),
        (lambda x, y: tl.concatenate([x, y], axis=None), A, C),
        (lambda x, y: tl.concatenate([x, y], axis=0), E, C),
    ],
    "stack": [(lambda x, y: tl.stack([x, y]), A, B), (lambda x, y: tl.stack([x, y, x], axis=-1), A, B)],
}


globals().update(case_tests("joins", CASES))  # a case for every rule, each checked on every backend


def test_concatenate_records_one_call_with_every_array():
    x, y = tl.param([1.0]), tl.param([2.0, 3.0])
    z = tl.concatenate([x, y, np.array([4.0])])
    assert z.tracker.f.name == "concatenate" and len(z.tracker.f.args) == 3
    tl.back_(z, [1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(x.grad, [1.0])
    np.testing.assert_array_equal(y.grad, [2.0, 3.0])


def test_casting_rules_are_checked_as_numpy_checks_them():
    x, y = tl.param(np.ones(2)), tl.param(np.ones(2, dtype=np.float32))
    with pytest.raises(TypeError, match=r"concatenate: cannot cast an array of float32 to float64 under casting='no'"):
        np.vstack([x, y], casting="no")
    with pytest.raises(TypeError, match=r"stack: cannot cast an array of float64 to float32 under casting='safe'"):
        tl.stack([x, y], dtype=np.float32, casting="safe")
    with pytest.raises(ValueError, match="concatenate: casting must be one of"):
        tl.hstack([x, y], casting="sometimes")
    z = tl.concatenate([x, y], dtype=np.float32, casting="same_kind")
    tl.back_(tl.sum(z * 2.0))
    np.testing.assert_array_equal(x.grad, [2.0, 2.0])
    assert x.grad.dtype == np.float64 and y.grad.dtype == np.float32


def test_joins_refuse_out():
    x = tl.param(np.ones(2))
    with pytest.raises(TypeError, match="concatenate: out= is not supported on tracked values"):
        tl.concatenate([x, x], out=np.empty(4))
    with pytest.raises(TypeError, match="stack: out= is not supported on tracked values"):
        tl.stack([x, x], out=np.empty((2, 2)))
