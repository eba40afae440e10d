"""A read-only view of a writeable array (np.broadcast_to(c, ...), a view made read-only) used as a constant
changes with its base: the tape keeps a copy of a small one and refuses a changed large one, as it does for
the writeable array itself (the gradient was the one at the new values, without a word)."""

import numpy as np
import pytest

import trackerlab as tl


def _read_only_view(c):
    view = c.view()
    view.flags.writeable = False
    return view


@pytest.mark.parametrize("make", [_read_only_view, lambda c: np.broadcast_to(c, (2, *c.shape))[0]])
def test_a_small_read_only_view_keeps_the_values_it_was_recorded_with(make):
    c = np.array([1.0, 2.0, 3.0])
    x = tl.param(np.ones(3))
    y = tl.sum(make(c) * x)
    c[:] = 5.0
    tl.back_(y)
    assert np.array_equal(tl.grad(x), [1.0, 2.0, 3.0])


def test_a_broadcast_constant_keeps_its_values():
    c = np.array([1.0, 2.0, 3.0])
    assert np.allclose(tl.data(tl.gradient(lambda x: tl.sum(np.broadcast_to(c, (2, 3)) * x), np.ones((2, 3)))[0]), c)
    x = tl.param(np.ones((2, 3)))
    y = tl.sum(np.broadcast_to(c, (2, 3)) * x)
    c[:] = 5.0
    tl.back_(y)
    assert np.array_equal(tl.grad(x), [[1.0, 2.0, 3.0]] * 2)


def test_a_large_read_only_view_changed_is_refused():
    c = np.arange(20_000.0)
    x = tl.param(np.ones(20_000))
    y = tl.sum(_read_only_view(c) * x)
    c[0] = 7.0
    with pytest.raises(RuntimeError, match="was changed in place"):
        tl.back_(y)


def test_views_of_read_only_memory_are_kept_as_they_are():
    x = tl.param(np.ones(3))
    frozen = _read_only_view(np.array([1.0, 2.0, 3.0]))
    frozen.base.flags.writeable = False
    y = x * frozen
    assert y.tracker.args[1] is frozen  # nothing that can change: no copy
    tl.back_(tl.sum(y))
    assert np.array_equal(tl.grad(x), [1.0, 2.0, 3.0])
