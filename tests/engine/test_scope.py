"""``tl.scope`` names blocks of the computation: every node recorded inside carries the open blocks' names."""

import threading

import numpy as np
import pytest

import trackerlab as tl


def test_nodes_recorded_inside_a_block_carry_its_name_and_nested_blocks_stack():
    W = tl.param(np.ones((2, 2)))
    with tl.scope("model"):
        with tl.scope("layer 1"):
            h = tl.tanh(W @ np.ones(2))
        y = tl.sum(h)
    z = y * 2
    assert tl.scopes(h) == ("model", "layer 1")
    assert tl.scopes(h.tracker.args[0]) == ("model", "layer 1")  # W @ x
    assert tl.scopes(y) == ("model",)
    assert tl.scopes(z) == ()
    assert tl.scopes(W) == ()
    assert tl.scopes(3.0) == ()


def test_a_decorated_function_is_a_block_at_each_call_named_after_it_or_as_given():
    @tl.scope
    def dense(W, x):
        return tl.tanh(W @ x)

    @tl.scope("output layer")
    def out(h):
        return tl.sum(h * h)

    class Model:
        @tl.scope
        def __call__(self, W, x):
            return out(dense(W, x))

    W = tl.param(np.eye(2))
    y = Model()(W, np.array([0.5, -1.0]))
    assert tl.scopes(y) == ("Model.__call__", "output layer")
    assert tl.scopes(y.tracker.args[0].args[0]) == ("Model.__call__", "dense")
    assert dense.__name__ == "dense"


def test_gradients_are_the_same_inside_a_block():
    x = np.array([0.3, -0.7, 1.1])

    def f(v):
        return tl.sum(tl.sin(v) * v)

    def scoped(v):
        with tl.scope("f"):
            return f(v)

    (plain,) = tl.gradient(f, x)
    (inside,) = tl.gradient(scoped, x)
    np.testing.assert_allclose(tl.data(inside), np.sin(x) + x * np.cos(x), rtol=1e-12)
    np.testing.assert_array_equal(tl.data(inside), tl.data(plain))


def test_a_block_is_closed_when_its_body_raises():
    with pytest.raises(ZeroDivisionError), tl.scope("broken"):
        raise ZeroDivisionError
    assert tl.scopes(tl.param(1.0) * 2) == ()


def test_a_block_in_one_thread_does_not_name_what_another_records():
    seen = {}
    inside, done = threading.Event(), threading.Event()

    def other():
        inside.wait()
        seen["other"] = tl.scopes(tl.param(1.0) * 2)
        done.set()

    thread = threading.Thread(target=other)
    thread.start()
    with tl.scope("mine"):
        inside.set()
        done.wait()
        seen["mine"] = tl.scopes(tl.param(1.0) * 2)
    thread.join()
    assert seen == {"mine": ("mine",), "other": ()}


def test_the_anomaly_mode_still_notes_lines_inside_a_block():
    with tl.detect_anomaly(), tl.scope("block"):
        x = tl.param([1.0, 0.0])
        y = tl.sum(tl.sqrt(x))
    assert tl.scopes(y) == ("block",)
    assert tl.anomaly.recorded_at(y)[0][0] == __file__


@pytest.mark.parametrize("name", ["", 3, None])
def test_a_block_needs_a_name(name):
    with pytest.raises(TypeError, match="scope: the name of a block is a non-empty string"):
        tl.scope(name)


def test_a_named_block_used_on_something_not_a_function_says_how_to_use_it():
    with pytest.raises(TypeError, match=r"scope\('x'\): use it as `with tl.scope\(name\):`"):
        tl.scope("x")(3)
