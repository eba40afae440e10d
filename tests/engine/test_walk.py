"""The one walk: its order, its records, replay, depth, and that it is the only one."""

import gc
import math
import sys
import weakref

import numpy as np
import pytest

import trackerlab as tl


def h(x, y):
    z = x + y
    return tl.log(z) + tl.exp(z)


def test_minitorch_example_order_and_merging():
    x, y = tl.param(1.0), tl.param(2.0)
    out = h(x, y)
    steps = list(tl.backprop_steps(out))
    assert [s.op for s in steps] == ["add", "log", "exp", "add", "param", "param"]
    z_step = steps[3]
    # z is used twice: it is processed once, with both contributions summed
    assert z_step.delta == pytest.approx(1 / 3 + math.exp(3))
    assert steps[1].sent[0] == pytest.approx(1 / 3) and steps[2].sent[0] == pytest.approx(math.exp(3))
    assert steps[4].delta == pytest.approx(1 / 3 + math.exp(3))
    assert [s.index for s in steps] == list(range(6))
    # the pending set after the first step holds log(z) and exp(z)
    assert [n.f.name for n in steps[0].pending] == ["log", "exp"]
    assert steps[-1].pending == ()


def test_steps_name_arguments_and_constants():
    x = tl.param(3.0)
    y = x * 2.0
    step = next(iter(tl.backprop_steps(y)))
    assert step.args == (x.tracker, None)
    assert step.sent == [2.0, None] or tuple(step.sent) == (2.0, None)
    assert step.isleaf is False


def test_replay_gives_the_same_steps_and_leaves_the_tape_alone():
    x, y = tl.param(1.0), tl.param(2.0)
    out = h(x, y)
    first = [(s.op, s.delta, tuple(s.sent)) for s in tl.backprop_steps(out)]
    second = [(s.op, s.delta, tuple(s.sent)) for s in tl.backprop_steps(out)]
    assert first == second
    assert x.grad == 0.0 and out.tracker.grad is None


def test_back_and_the_last_steps_agree():
    x = tl.param([1.0, 2.0, 3.0])
    out = tl.sum(tl.tanh(x) * x)
    deltas = {s.node: s.delta for s in tl.backprop_steps(out)}
    tl.back_(out)
    np.testing.assert_allclose(x.grad, deltas[x.tracker])


def test_back_accumulates_until_zero_grad():
    a = tl.param(2.0)
    tl.back_(a * 3)
    tl.back_(a * 3)
    assert a.grad == 6.0
    tl.zero_grad_(a)
    assert a.grad == 0.0


def test_scalar_sensitivity_broadcasts_over_an_array_output():
    x = tl.param([1.0, 2.0])
    tl.back_(x * x, 2.0)
    np.testing.assert_array_equal(x.grad, [4.0, 8.0])


def test_a_million_operations_back_propagate_without_recursion():
    assert sys.getrecursionlimit() <= 10_000
    x = tl.param(0.0)
    y = x
    for _ in range(1_000_000):
        y = y + 1.0
    tl.back_(y)
    assert x.grad == 1.0
    assert tl.data(y) == 1_000_000.0


def half_way():
    """Leaves with gradients already, and a tape whose walk reaches the leaf ``w`` before it fails at a
    ``nobacksies`` deeper in the other branch."""
    x, w = tl.param([1.0, 2.0]), tl.param(3.0)
    tl.back_(tl.sum(x * x) * w)  # gradients that a failed back_ must leave as they are
    blocked = tl.nobacksies("stop here", tl.sin(tl.sin(x * 3.0)))
    y = w * 2.0 + tl.sum(blocked)
    return x, w, y


def test_the_half_way_case_reaches_a_leaf_before_its_error():
    x, w, y = half_way()
    reached = []
    with pytest.raises(RuntimeError, match="nobacksies: stop here"):
        for step in tl.backprop_steps(y):
            reached.append(step.node)
    assert w.tracker in reached and x.tracker not in reached


def test_an_error_half_way_leaves_every_grad_as_it_was():
    x, w, y = half_way()
    x_before, w_before = x.grad.copy(), w.grad
    np.testing.assert_array_equal(x_before, [6.0, 12.0])
    assert w_before == 5.0
    with pytest.raises(RuntimeError, match="nobacksies: stop here"):
        tl.back_(y)
    np.testing.assert_array_equal(x.grad, x_before)
    assert w.grad == w_before


def test_after_an_error_half_way_the_tape_walks_again():
    _, w, y = half_way()
    with pytest.raises(RuntimeError, match="nobacksies: stop here"):
        tl.back_(y)
    # the other branch of the same tape still works, and a second walk fails the same way
    tl.zero_grad_(w)
    tl.back_(w * 5.0)
    assert w.grad == 5.0
    with pytest.raises(RuntimeError, match="nobacksies: stop here"):
        list(tl.backprop_steps(y))


def test_dropped_tapes_are_freed():
    x = tl.param(np.ones(3))
    y = tl.sum(tl.sin(x) * x)
    nodes = [weakref.ref(y.tracker), weakref.ref(y.tracker.f.args[0])]
    del y
    gc.collect()
    assert all(n() is None for n in nodes)


def test_a_finished_gradient_call_leaves_no_tape_alive():
    g = tl.gradient(lambda x: tl.sum(x * x), np.ones(4))[0]
    ref = weakref.ref(g.tracker)
    parents = [weakref.ref(a) for a in g.tracker.f.args if isinstance(a, tl.Tracked)]
    assert parents  # the gradient is tracked: it has a tape of its own
    del g
    gc.collect()
    assert ref() is None and all(p() is None for p in parents)


def test_backprop_steps_of_untracked_is_an_error():
    with pytest.raises(TypeError, match="backprop_steps: y is not tracked"):
        list(tl.backprop_steps(3.0))


def test_the_walk_is_the_only_walk():
    """back_, forward's backpropagator and gradient all consume backprop_steps."""
    import trackerlab.api as api

    calls = []
    original = api.Walk  # backprop_steps' core

    def spy(y, Δ, **kwargs):
        calls.append(tl.data(y))
        return original(y, Δ, **kwargs)

    api.Walk = spy
    try:
        x = tl.param(2.0)
        tl.back_(x * x)
        tl.forward(lambda x: x * x, 3.0)[1](1.0)
        tl.gradient(lambda x: x * x, 5.0)
        tl.gradient(lambda: x * x * x, tl.Params([x]))
    finally:
        api.Walk = original
    assert calls == [4.0, 9.0, 25.0, 8.0]  # one walk each, from each one's own result


def test_a_tool_built_on_the_walk_gets_its_steps_and_its_own_name_in_errors():
    """``core.walk.steps_for`` (the stepper's entry): the steps of ``backprop_steps``, errors naming the tool."""
    from trackerlab.core.walk import steps_for

    x, w = tl.param(0.5), tl.param([1.0, -2.0])
    y = tl.sum(tl.tanh(w * x) * w)
    public, tool = list(tl.backprop_steps(y)), list(steps_for("Tool", y))
    assert [s.node for s in tool] == [s.node for s in public] and len(tool) == 6
    for a, b in zip(tool, public):
        assert a.index == b.index and a.pending == b.pending
        assert np.array_equal(tl.data(a.delta), tl.data(b.delta))
        assert all(np.array_equal(tl.data(p), tl.data(q)) for p, q in zip(a.sent, b.sent) if p is not None)
    with pytest.raises(TypeError, match="Tool: y is not tracked"):
        next(steps_for("Tool", 3.0))
    with pytest.raises(ValueError, match=r"Tool: y has shape \(2,\); pass a sensitivity Δ"):
        next(steps_for("Tool", w * x))
    with pytest.raises(ValueError, match=r"Tool: .*shape"):
        next(steps_for("Tool", w * x, np.ones(3)))


def test_the_public_walk_has_only_public_options():
    import inspect

    assert list(inspect.signature(tl.backprop_steps).parameters) == ["y", "Δ", "nest", "stop"]
    with pytest.raises(TypeError):
        tl.backprop_steps(tl.param(2.0) * 3.0, _leaves_only=True)


def test_recording_is_on_again_after_a_custom_pullback_that_raises():
    """A plain walk runs custom pullbacks with recording off; an error in one leaves recording as it was."""

    def twice(x):
        return tl.data(x) * 2.0

    @tl.grad_rule(twice)
    def _twice(x):
        def pullback(g):
            assert not tl.istracked(tl.param(1.0) * 1.0)  # recording is off inside the pullback
            raise ArithmeticError("broken pullback")

        return tl.data(x) * 2.0, pullback

    x = tl.param(3.0)
    with pytest.raises(ArithmeticError, match="broken pullback"):
        tl.back_(tl.track(twice, x))
    assert tl.istracked(x * 2.0)
    with tl.no_grad():
        y = tl.forward(lambda x: tl.track(twice, x), 1.0)[0]  # forward records under no_grad too
        with pytest.raises(ArithmeticError):
            tl.back_(y)
        assert not tl.istracked(x * 2.0)  # and off again where it was off


# ----------------------------------------------------------------------------------------------------
# ``backprop_steps``: the arrays a step shows (``.delta`` and ``.sent``) are read-only views, since the walk goes on
# with the arrays themselves; a write into one (``s.delta *= 0`` to look at it scaled) would change the gradients
# of the arguments still to come.
# ----------------------------------------------------------------------------------------------------


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


# ----------------------------------------------------------------------------------------------------
# The walks: a parameter changed while a backward pass runs (by a hook, a custom pullback or code
# between the steps of ``backprop_steps``) is refused, and a sensitivity Δ that the caller changes after handing it
# over is never read again.
# ----------------------------------------------------------------------------------------------------


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
