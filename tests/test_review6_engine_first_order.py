"""A @grad_rule pullback that reads tl.data(x) through a callable object, a bound method, a deep nest or a 0-d
array made from a tracked number is first-order only too: differentiating what it sent refuses (a Hessian of
x³ came back 0, not 6x); a pullback written with the tracked argument stays differentiable."""

import numpy as np
import pytest

import trackerlab as tl


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
