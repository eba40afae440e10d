"""Custom rules: a ``@tl.primitive`` function (``hook``, ``nobacksies``, ``checkpoint`` and the user's own)
given a tracked value by keyword is refused, naming the function, since running the function itself would
skip its rule (``tl.hook(f=..., x=y)`` would be ``y`` itself, its hook never applied)."""

from __future__ import annotations

import numpy as np
import pytest

import trackerlab as tl


def _double(g):
    return 2 * g


@pytest.mark.parametrize(
    "call",
    [
        lambda y: tl.hook(f=_double, x=y),
        lambda y: tl.hook(_double, x=y),
        lambda y: tl.nobacksies("no second pass", x=y),
        lambda y: tl.nobacksies(message="no second pass", x=y),
        lambda y: tl.checkpoint(lambda t: t * t, t=y),
    ],
)
def test_a_tracked_keyword_argument_of_a_primitive_is_refused(call):
    x = tl.param([1.0, 2.0])
    with pytest.raises(TypeError, match=r"keyword argument .*= of .* is tracked.*pass it by position"):
        call(x * x)
    with pytest.raises(TypeError, match="pass it by position"):
        tl.gradient(lambda x: tl.sum(call(x * x)), np.array([1.0, 2.0]))


def test_the_same_calls_by_position_apply_the_rule():
    x0 = np.array([1.0, 2.0])
    (g,) = tl.gradient(lambda x: tl.sum(tl.hook(_double, x * x)), x0)
    np.testing.assert_allclose(tl.data(g), 4 * x0)  # the hook doubles d(x²)/dx = 2x
    with pytest.raises(RuntimeError, match="nobacksies: no second pass"):
        tl.back_(tl.sum(tl.nobacksies("no second pass", tl.param(x0) * 3)))
    (g,) = tl.gradient(lambda x: tl.sum(tl.checkpoint(lambda t: t * t, x)), x0)
    np.testing.assert_allclose(tl.data(g), 2 * x0)


def test_a_users_primitive_given_a_tracked_keyword_only_is_refused():
    @tl.primitive
    def scaled(x, *, s):
        return tl.data(x) * tl.data(s)  # computes on plain values: its rule is what differentiates it

    @tl.grad_rule(scaled)
    def _(x, *, s):
        return tl.data(x) * tl.data(s), lambda g: (g * s,)

    s = tl.param(3.0)
    with pytest.raises(TypeError, match="keyword argument s= of scaled is tracked"):
        scaled(np.array([1.0, 2.0]), s=s)
    with pytest.raises(TypeError, match="keyword argument s= of scaled is tracked"):
        scaled(tl.param([1.0, 2.0]), s=s)
    with tl.no_grad():  # nothing is recorded: the plain computation
        np.testing.assert_allclose(scaled(np.array([1.0, 2.0]), s=s), [3.0, 6.0])
    x = tl.param([1.0, 2.0])
    tl.back_(tl.sum(scaled(x, s=3.0)))  # a plain keyword setting is fine
    np.testing.assert_allclose(x.grad, [3.0, 3.0])


# ----------------------------------------------------------------------------------------------------
# A custom pullback written with tl.data(x) is constant to nested differentiation: differentiating what it sent
# refuses (check_grads' second-order comparison included), as docs/differentiation.md says, and the pullback written
# with x is right.
# ----------------------------------------------------------------------------------------------------


def cube_from_data(x):
    return tl.track(cube_from_data, x) if tl.istracked(x) else x**3


@tl.grad_rule(cube_from_data)
def _(x):
    xd = tl.data(x)
    return xd**3, lambda d: (3 * d * xd**2,)


def cube(x):
    return tl.track(cube, x) if tl.istracked(x) else x**3


@tl.grad_rule(cube)
def _(x):
    return tl.data(x) ** 3, lambda d: (3 * d * x**2,)


def test_check_grads_finds_a_pullback_written_with_plain_values():
    x0 = np.array([0.5, 1.5])
    (g,) = tl.gradient(lambda x: tl.sum(cube_from_data(x)), x0)
    np.testing.assert_allclose(tl.data(g), 3 * x0**2, rtol=1e-12)  # right at first order
    with pytest.raises(TypeError, match=r"cube_from_data: the pullback of its @grad_rule closes over tl\.data"):
        tl.check_grads(lambda x: tl.sum(cube_from_data(x)), x0)
    tl.check_grads(lambda x: tl.sum(cube(x)), x0)
    np.testing.assert_allclose(tl.hessian(lambda x: tl.sum(cube(x)), x0), np.diag(6 * x0), rtol=1e-12)


# ---------------------------------------------------------------- tracked values inside a structured argument


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
