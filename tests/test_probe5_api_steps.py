"""A fifth probe of ``backprop_steps``: the arrays a step shows (``.delta`` and ``.sent``) are read-only views,
since the walk goes on with the arrays themselves; a write into one (``s.delta *= 0`` to look at it scaled)
changed the gradients of the arguments still to come."""

import numpy as np
import pytest

import trackerlab as tl


def _graph(op):
    x, W = tl.param([1.0, 2.0]), tl.param([3.0, -4.0])
    return x, W, tl.sin(op(x, W))


OPS = {
    "add": (lambda a, b: a + b, lambda c, x, w: (c, c)),
    "multiply": (lambda a, b: a * b, lambda c, x, w: (c * w, c * x)),
    "subtract": (lambda a, b: a - b, lambda c, x, w: (c, -c)),
}


@pytest.mark.parametrize("name", list(OPS))
@pytest.mark.parametrize("what", ["delta", "sent"])
def test_writing_into_a_steps_arrays_is_refused_and_the_walk_is_unchanged(name, what):
    op, by_hand = OPS[name]
    x, W, y = _graph(op)
    seen = {}
    for s in tl.backprop_steps(y, np.ones(2)):
        if s.node.isleaf:
            seen[s.node] = np.array(s.delta)
        targets = [s.delta] if what == "delta" else [t for t in s.sent if t is not None]
        for t in targets:
            if isinstance(t, np.ndarray):
                with pytest.raises(ValueError, match="read-only"):
                    t *= 0
    x0, w0 = np.array([1.0, 2.0]), np.array([3.0, -4.0])
    dx, dw = by_hand(np.cos(tl.data(op(x0, w0))), x0, w0)
    np.testing.assert_allclose(seen[x.tracker], dx)
    np.testing.assert_allclose(seen[W.tracker], dw)


def test_back_after_a_walk_whose_arrays_were_looked_at():
    x, W, y = _graph(lambda a, b: a * b)
    for s in tl.backprop_steps(y, np.ones(2)):
        np.asarray(s.delta).sum()  # reading is fine
    tl.back_(y, np.ones(2))
    slope = np.cos(np.array([3.0, -8.0]))
    np.testing.assert_allclose(x.grad, slope * np.array([3.0, -4.0]))
    np.testing.assert_allclose(W.grad, slope * np.array([1.0, 2.0]))
    x.grad[...] = 0.0  # a .grad stays the caller's, writable
