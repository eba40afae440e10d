"""Functions of one's own with ``@tl.primitive`` and ``@tl.grad_rule``: every way of passing a tracked value
reaches the rule or is refused by name, never computed around it (which would give a gradient of 0)."""

import numpy as np
import pytest

import trackerlab as tl


@tl.primitive
def round_st(xs):
    """Rounding with a straight-through rule: its gradient is 1."""
    return np.round(xs[0] if isinstance(xs, tuple | list) else xs["x"] if isinstance(xs, dict) else xs)


@tl.grad_rule(round_st)
def _(xs):
    return round_st(tl.data(xs)), lambda g: (g,)


def test_a_tracked_argument_reaches_the_rule():
    x = tl.param(1.3)
    (g,) = tl.gradient(lambda x: round_st(x), x)
    assert tl.data(g) == 1.0


@pytest.mark.parametrize(
    "wrap",
    [lambda x: (x,), lambda x: [x], lambda x: [[x]], lambda x: {"x": x}],
    ids=["tuple", "list", "nested", "dict"],
)
def test_tracked_values_inside_a_container_argument_are_refused_by_name(wrap):
    x = tl.param(1.3)
    with pytest.raises(TypeError, match=r"track: argument 1 of round_st is a (tuple|list|dict) holding tracked values"):
        tl.gradient(lambda x: round_st(wrap(x)), x)
    with pytest.raises(TypeError, match="round_st"):
        tl.back_(round_st(wrap(x)))


def test_a_container_of_plain_values_still_calls_the_function():
    assert round_st((1.3,)) == 1.0
    with tl.no_grad():
        assert tl.data(round_st((tl.param(2.6),))) == 3.0
