"""A fifth probe of ``no_grad``: as in PyTorch, ``@tl.no_grad()`` on a function runs each call of it without
recording (it was a ``TypeError``: 'no_grad' object is not callable), in the calling thread only, and restores
recording after an error."""

import threading

import numpy as np
import pytest

import trackerlab as tl


@tl.no_grad()
def _evaluate(W, x):
    """An evaluation step: nothing recorded."""
    return tl.sum(W * x)


def test_no_grad_as_a_decorator_records_nothing_and_keeps_the_name():
    W = tl.param([1.0, 2.0])
    value = _evaluate(W, np.array([3.0, 4.0]))
    assert not tl.istracked(value) and value == 11.0
    assert _evaluate.__name__ == "_evaluate" and "nothing recorded" in _evaluate.__doc__
    assert tl.istracked(W * 2)  # recording is back on after the call
    tl.back_(tl.sum(W * W))
    np.testing.assert_array_equal(W.grad, [2.0, 4.0])


def test_a_decorated_function_that_raises_restores_recording():
    @tl.no_grad()
    def fails(x):
        raise ValueError("inside")

    with pytest.raises(ValueError, match="inside"):
        fails(tl.param(1.0))
    assert tl.istracked(tl.param(1.0) * 2)


def test_a_decorated_function_inside_gradient_is_a_constant():
    @tl.no_grad()
    def scale(x):
        return x * 3.0

    (g,) = tl.gradient(lambda x: x * scale(x), 2.0)  # d/dx of x · c with c = 3x held constant: c = 6
    assert tl.data(g) == 6.0


def test_a_decorated_function_in_one_thread_never_stops_recording_in_another():
    inside, leave = threading.Event(), threading.Event()

    @tl.no_grad()
    def wait():
        inside.set()
        leave.wait()

    thread = threading.Thread(target=wait)
    thread.start()
    inside.wait()
    try:
        (g,) = tl.gradient(lambda x: x * x, 3.0)
        assert tl.data(g) == 6.0
    finally:
        leave.set()
        thread.join()


def test_no_grad_on_something_not_callable_says_how_to_use_it():
    with pytest.raises(TypeError, match=r"no_grad: use it as `with tl.no_grad\(\):`"):
        tl.no_grad()(3)
