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
    original = api.Walk  # backprop_steps' core, which names its caller

    def spy(y, Δ, who, **kwargs):
        calls.append(who)
        return original(y, Δ, who, **kwargs)

    api.Walk = spy
    try:
        x = tl.param(2.0)
        tl.back_(x * x)
        tl.forward(lambda x: x * x, 2.0)[1](1.0)
        tl.gradient(lambda x: x * x, 2.0)
        tl.gradient(lambda: x * x, tl.Params([x]))
    finally:
        api.Walk = original
    assert calls == ["back_", "back", "back", "gradient"]


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
