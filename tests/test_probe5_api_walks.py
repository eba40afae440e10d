"""A fifth probe of the walks: a parameter changed while a backward pass runs (by a hook, a custom pullback or
code between the steps of ``backprop_steps``) is refused, and a sensitivity Δ that the caller changes after
handing it over is never read again."""

import numpy as np
import pytest

import trackerlab as tl


def _change(W, how):
    if how == "update_":
        tl.update_(W, np.full(np.shape(tl.data(W)), 98.0) if np.ndim(tl.data(W)) else 98.0)
    else:
        W.data = np.full(np.shape(tl.data(W)), 100.0) if np.ndim(tl.data(W)) else 100.0


@pytest.mark.parametrize("how", ["update_", "data"])
@pytest.mark.parametrize("shape", [(), (2,)])
def test_a_hook_that_changes_a_parameter_the_rest_of_the_walk_reads_is_refused(shape, how):
    W = tl.param(np.full(shape, 2.0) if shape else 2.0)
    a = tl.param(np.full(shape, 3.0) if shape else 3.0)

    def step_in_backward(g):  # an optimiser step inside the backward pass, as a hook
        _change(W, how)
        return g

    # the hook's branch is walked first; sin(sin(W * a)) still reads W after it: its gradient for a would be
    # computed at W = 100 (94.1 instead of 1.85)
    loss = tl.sum(tl.hook(step_in_backward, W) * 5.0) + tl.sum(tl.sin(tl.sin(W * a)))
    with pytest.raises(RuntimeError, match=r"multiply: argument 1 \(a parameter of shape .*while the backward pass"):
        tl.back_(loss)
    np.testing.assert_array_equal(a.grad, np.zeros(shape))  # all or nothing


def test_a_custom_pullback_that_changes_a_parameter_is_refused_in_gradient_and_forward():
    W = tl.param([2.0, -1.0])

    @tl.primitive
    def double(x):
        return tl.data(x) * 2

    @tl.grad_rule(double)
    def _(x):
        def pullback(g):
            tl.update_(W, [1.0, 1.0])
            return (2 * g,)

        return tl.data(x) * 2, pullback

    def f(x):
        return tl.sum(double(x) * 1.0) + tl.sum(W * x * x)

    with pytest.raises(RuntimeError, match="while the backward pass ran"):
        tl.gradient(f, np.array([0.5, 1.5]))
    with pytest.raises(RuntimeError, match="while the backward pass ran"):
        tl.forward(f, np.array([0.5, 1.5]))[1](1.0)


def test_a_change_between_the_steps_of_backprop_steps_is_refused():
    W, a = tl.param([2.0]), tl.param([3.0])
    y = tl.sum(tl.sin(W * a) * W)
    steps = tl.backprop_steps(y)
    assert next(steps).op == "sum"
    assert next(steps).op == "multiply"
    tl.update_(W, [1.0])  # sin and W * a are still to come, and read W
    with pytest.raises(RuntimeError, match=r"multiply: argument 1 .* while the backward pass ran"):
        list(steps)


def test_a_hook_changing_a_parameter_that_nothing_left_reads_and_checkpoints_walk_as_before():
    W, a = tl.param([2.0, 3.0]), tl.param([0.5, -1.0])
    seen = []

    def step(g):
        seen.append(np.array(g))
        tl.update_(a, [10.0, 10.0])  # W * a has been walked: nothing left reads a
        return g

    loss = tl.sum(tl.checkpoint(lambda t: tl.sin(t) * t, W)) + tl.sum(W * tl.hook(step, a))
    tl.back_(loss)
    w, av = np.array([2.0, 3.0]), np.array([0.5, -1.0])
    np.testing.assert_allclose(W.grad, np.cos(w) * w + np.sin(w) + av)
    np.testing.assert_allclose(a.grad, w)
    assert len(seen) == 1


def test_backprop_steps_keeps_the_delta_it_was_given():
    x = tl.param([1.0, 2.0])
    y = x * 3
    delta = np.array([1.0, -1.0])
    steps = tl.backprop_steps(y, delta)  # a generator: it reads Δ at its first step
    delta[:] = 7.0
    (leaf,) = [s.delta for s in steps if s.node.isleaf]
    np.testing.assert_array_equal(leaf, [3.0, -3.0])


@pytest.mark.parametrize("kind", ["array", "list"])
def test_forward_back_keeps_the_delta_its_results_are_differentiated_with(kind):
    x0 = np.array([0.5, 1.0])
    _, back = tl.forward(lambda x: tl.sin(x) * x, x0)
    delta = np.array([1.0, 2.0]) if kind == "array" else [1.0, 2.0]
    (g,) = back(delta)
    np.testing.assert_allclose(tl.data(g), np.array([1.0, 2.0]) * (np.cos(x0) * x0 + np.sin(x0)))
    delta[0] = 100.0  # after the call: the result g is Δ ∘ f'(x) with the Δ of the call, to every order
    delta[1] = -5.0
    (second,) = [s.delta for s in tl.backprop_steps(tl.sum(g)) if s.node.isleaf]
    np.testing.assert_allclose(second, np.array([1.0, 2.0]) * (2 * np.cos(x0) - np.sin(x0) * x0))
    assert tl.check_tape(g).ok


def test_on_array_api_strict_values_too():
    xp = pytest.importorskip("array_api_strict")
    W, a = tl.param(xp.asarray([2.0])), tl.param(xp.asarray([3.0]))

    def step_in_backward(g):
        tl.update_(W, xp.asarray([98.0]))
        return g

    loss = tl.sum(tl.hook(step_in_backward, W) * 5.0) + tl.sum(tl.sin(tl.sin(W * a)))
    with pytest.raises(RuntimeError, match="while the backward pass ran"):
        tl.back_(loss)
    x0 = np.array([0.5, 1.0])
    _, back = tl.forward(lambda x: tl.sin(x) * x, xp.asarray(x0))
    delta = xp.asarray([1.0, 2.0])
    (g,) = back(delta)
    delta[0] = 100.0
    (second,) = [s.delta for s in tl.backprop_steps(tl.sum(g)) if s.node.isleaf]
    np.testing.assert_allclose(np.asarray(second), np.array([1.0, 2.0]) * (2 * np.cos(x0) - np.sin(x0) * x0))
