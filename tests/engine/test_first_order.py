"""A ``@grad_rule`` pullback that closes over a plain value of its call (``tl.data(x)`` of a tracked argument,
or the value the rule returned) is right to first order and a constant to nested differentiation: its
first derivatives are given, and any derivative of them (``hessian``, a gradient of a gradient, a gradient
penalty through ``back_``) refuses, naming the rule, instead of silently missing the pullback's dependence on
``x``. A pullback written with the tracked arguments nests, and the engine's own rules are not refused."""

from __future__ import annotations

import functools
import re

import numpy as np
import pytest

import trackerlab as tl

X0 = np.array([0.5, 1.5, -0.7])


def _custom(name, make):
    """A function ``name`` recorded with the rule ``make(x) -> (value, pullback)``."""

    def f(x):
        return tl.track(f, x) if tl.istracked(x) else make(x)[0]

    f.__name__ = name
    tl.grad_rule(f)(make)
    return f


def _data_cube(x):
    xd = tl.data(x)
    return xd**3, lambda d: (3 * d * xd**2,)


def _tracked_cube(x):
    return tl.data(x) ** 3, lambda d: (3 * d * x**2,)


def _value_exp(x):
    y = np.exp(tl.data(x))
    return y, lambda d: (d * y,)


def _default_cube(x):
    xd = tl.data(x)
    return xd**3, lambda d, xd=xd: (3 * d * xd**2,)


def _helper_cube(x):
    xd = tl.data(x)

    def slope():
        return 3 * xd**2

    return xd**3, lambda d: (d * slope(),)


def _tuple_cube(x):
    saved = (tl.data(x), "cube")
    return saved[0] ** 3, lambda d: (3 * d * saved[0] ** 2,)


def _times(d, xd):
    return (3 * d * xd**2,)


def _partial_cube(x):
    return tl.data(x) ** 3, functools.partial(_times, xd=tl.data(x))


data_cube = _custom("data_cube", _data_cube)
tracked_cube = _custom("tracked_cube", _tracked_cube)
value_exp = _custom("value_exp", _value_exp)
CAPTURES = {
    "data_cube": (data_cube, "tl.data of argument 1"),
    "default_cube": (_custom("default_cube", _default_cube), "tl.data of argument 1"),
    "helper_cube": (_custom("helper_cube", _helper_cube), "tl.data of argument 1"),
    "tuple_cube": (_custom("tuple_cube", _tuple_cube), "tl.data of argument 1"),
    "partial_cube": (_custom("partial_cube", _partial_cube), "tl.data of argument 1"),
    "value_exp": (value_exp, "the value the rule returned"),
}


def _first(f):
    return np.exp(X0) if f is value_exp else 3 * X0**2


@pytest.mark.parametrize("name", sorted(CAPTURES))
def test_first_derivatives_are_given(name):
    f, _ = CAPTURES[name]
    want = _first(f)
    x = tl.param(X0.copy())
    tl.back_(tl.sum(f(x)))
    np.testing.assert_allclose(x.grad, want, rtol=1e-12)
    (g,) = tl.gradient(lambda x: tl.sum(f(x)), X0)  # a recorded walk: the results are marked, not refused
    np.testing.assert_allclose(tl.data(g), want, rtol=1e-12)
    _, back = tl.forward(lambda x: tl.sum(f(x)), X0)
    np.testing.assert_allclose(tl.data(back(2.0)[0]), 2 * want, rtol=1e-12)
    np.testing.assert_allclose(tl.jacobian(f, X0), np.diag(want), rtol=1e-12)


@pytest.mark.parametrize("name", sorted(CAPTURES))
def test_second_derivatives_refuse(name):
    f, what = CAPTURES[name]
    message = re.escape(f"{name}: the pullback of its @grad_rule closes over {what}")
    with pytest.raises(TypeError, match=message):
        tl.hessian(lambda x: tl.sum(f(x)), X0)
    with pytest.raises(TypeError, match=message):
        tl.gradient(lambda x: tl.sum(tl.gradient(lambda x: tl.sum(f(x)), x)[0]), X0)
    with pytest.raises(TypeError, match=message):
        tl.check_grads(lambda x: tl.sum(f(x)), X0)
    w = tl.param(X0.copy())  # a gradient penalty: back_ of a function of the gradient
    (g,) = tl.gradient(lambda x: tl.sum(f(x * w)), np.ones(3))
    with pytest.raises(TypeError, match=message):
        tl.back_(tl.sum(g * g))


def test_a_pullback_written_with_the_tracked_argument_nests():
    np.testing.assert_allclose(tl.hessian(lambda x: tl.sum(tracked_cube(x)), X0), np.diag(6 * X0), rtol=1e-12)
    (g,) = tl.gradient(lambda x: tl.sum(tl.gradient(lambda x: tl.sum(tracked_cube(x)), x)[0]), X0)
    np.testing.assert_allclose(tl.data(g), 6 * X0, rtol=1e-12)
    tl.check_grads(lambda x: tl.sum(tracked_cube(x)), X0)


def test_a_plain_constant_argument_may_be_closed_over():
    def scaled(x, c):
        return tl.track(scaled, x, c) if tl.istracked(x) else x**3 * c

    @tl.grad_rule(scaled)
    def _(x, c):  # c is a constant of the call: closing over it is right to every order
        return tl.data(x) ** 3 * c, lambda d: (3 * d * x**2 * c, None)

    c = np.array([2.0, -1.0, 0.5])
    np.testing.assert_allclose(tl.hessian(lambda x: tl.sum(scaled(x, c)), X0), np.diag(6 * X0 * c), rtol=1e-12)


def test_closing_over_a_constant_argument_of_a_two_argument_rule_refuses_only_its_own_path():
    def mul(a, b):
        return tl.track(mul, a, b) if tl.istracked(a) or tl.istracked(b) else a * b

    @tl.grad_rule(mul)
    def _(a, b):
        bd = tl.data(b)
        return tl.data(a) * bd, lambda d: (d * bd, d * a)

    b0 = np.array([1.0, 2.0, 3.0])
    # b plain: nothing is closed over that a derivative depends on, and the Hessian in a is 0 (mul is linear in a)
    np.testing.assert_allclose(tl.hessian(lambda a: tl.sum(mul(a, b0) ** 2), X0), np.diag(2 * b0**2), rtol=1e-12)
    # b tracked: tl.data(b) is closed over, so a derivative through what the pullback sends refuses
    with pytest.raises(TypeError, match=r"mul: the pullback of its @grad_rule closes over tl\.data of argument 2"):
        tl.hessian(lambda b: tl.sum(mul(X0, b) ** 2), b0)


def test_the_engines_own_rules_nest():
    np.testing.assert_allclose(
        tl.hessian(lambda x: tl.sum(tl.checkpoint(lambda t: t**3, x)), X0), np.diag(6 * X0), rtol=1e-12
    )
    # the hook doubles every sensitivity that passes it, the second walk's too: 2 · 2 · 6x
    np.testing.assert_allclose(
        tl.hessian(lambda x: tl.sum(tl.hook(lambda d: 2 * d, x) ** 3), X0), np.diag(24 * X0), rtol=1e-12
    )


# ----------------------------------------------------------------------------------------------------
# A @grad_rule pullback that reads tl.data(x) through a callable object, a bound method, a deep nest or a 0-d array
# made from a tracked number is first-order only too: differentiating what it sent refuses (a Hessian of x³ came back
# 0, not 6x); a pullback written with the tracked argument stays differentiable.
# ----------------------------------------------------------------------------------------------------


class _Pullback:
    def __init__(self, xd):
        self.xd = xd

    def __call__(self, Δ):
        return (3 * Δ * self.xd**2,)

    def method(self, Δ):
        return (3 * Δ * self.xd**2,)


class _Slotted:
    __slots__ = ("xd",)

    def __init__(self, xd):
        self.xd = xd

    def __call__(self, Δ):
        return (3 * Δ * self.xd**2,)


def _cube_with(kind):
    def cube(x):
        return tl.track(cube, x)

    @tl.grad_rule(cube)
    def _(x):
        xd = tl.data(x)
        if kind == "callable":
            pullback = _Pullback(xd)
        elif kind == "slots":
            pullback = _Slotted(xd)
        elif kind == "method":
            pullback = _Pullback(xd).method
        elif kind == "asarray":
            held = np.asarray(xd)
            pullback = lambda Δ: (3 * Δ * held**2,)
        elif kind == "deep":
            box = [[[[[xd]]]]]
            pullback = lambda Δ: (3 * Δ * box[0][0][0][0][0] ** 2,)
        else:  # "tracked": written with the tracked argument, right to any order
            pullback = lambda Δ: (3 * Δ * x**2,)
        return xd**3, pullback

    return cube


@pytest.mark.parametrize("kind", ["callable", "slots", "method", "asarray", "deep"])
@pytest.mark.parametrize("at", [2.0, np.array([2.0, -1.5])], ids=["number", "array"])
def test_a_hidden_capture_refuses_the_second_order(kind, at):
    cube = _cube_with(kind)
    assert np.allclose(tl.data(tl.gradient(lambda x: tl.sum(cube(x)), at)[0]), 3 * np.asarray(at) ** 2)
    with pytest.raises(TypeError, match=r"closes over tl\.data of argument 1"):
        tl.hessian(lambda x: tl.sum(cube(x)), at)


def test_a_pullback_of_the_tracked_argument_nests():
    cube = _cube_with("tracked")
    at = np.array([2.0, -1.5])
    assert np.allclose(tl.data(tl.hessian(lambda x: tl.sum(cube(x)), at)), np.diag(6 * at))
    assert np.isclose(tl.data(tl.hessian(lambda x: cube(x), 2.0)), 12.0)


# ---------------------------------------------------------------- a pullback that computes with tl.data(Δ)


def _scaled_by_plain_delta(spelling):
    """A custom rule of 2x whose pullback reads the plain value of its sensitivity (``spelling``)."""

    def doubled(x):
        return tl.track(doubled, x)

    @tl.grad_rule(doubled)
    def _(x):
        return 2 * tl.data(x), lambda Δ: (2.0 * spelling(Δ, x),)

    return doubled


PLAIN_DELTAS = {
    "tl.data(Δ)": lambda Δ, x: tl.data(Δ),
    "Δ.data": lambda Δ, x: Δ.data if tl.istracked(Δ) else Δ,
    "tl.data(Δ) * x / x": lambda Δ, x: tl.data(Δ) * x / x,  # tracked through x, still cut from Δ
}


@pytest.mark.parametrize("spelling", PLAIN_DELTAS.values(), ids=PLAIN_DELTAS.keys())
def test_a_pullback_computing_with_the_plain_sensitivity_is_refused_when_differentiated(spelling):
    doubled = _scaled_by_plain_delta(spelling)
    x = np.array([1.0, 2.0])
    (g,) = tl.gradient(lambda x: tl.sum(doubled(x) ** 2), x)  # first order: right
    np.testing.assert_allclose(tl.data(g), 8 * x)
    with pytest.raises(TypeError, match=r"doubled: the pullback of its @grad_rule computes with the plain value of"):
        tl.hessian(lambda x: tl.sum(doubled(x) ** 2), x)  # 8·I, of which Δ's part would silently be missing
    with pytest.raises(TypeError, match="compute the sensitivities from Δ itself"):
        tl.gradient(lambda x: tl.sum(tl.gradient(lambda x: tl.sum(doubled(x) ** 2), x)[0]), x)


def test_a_pullback_that_uses_its_sensitivity_or_sends_zeros_is_differentiated():
    def doubled(x):
        return tl.track(doubled, x)

    @tl.grad_rule(doubled)
    def _(x):
        return 2 * tl.data(x), lambda Δ: (2.0 * Δ,)

    def rounded(x):
        return tl.track(rounded, x)

    @tl.grad_rule(rounded)
    def _(x):
        return np.round(tl.data(x)), lambda Δ: (np.zeros(np.shape(tl.data(Δ))),)  # slope 0: needs no Δ

    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(tl.hessian(lambda x: tl.sum(doubled(x) ** 2), x), 8 * np.eye(2))
    np.testing.assert_allclose(tl.hessian(lambda x: tl.sum(rounded(x) ** 2 + x**3), x), np.diag(6 * x))
