"""``no_grad``: as in PyTorch, ``@tl.no_grad()`` on a function runs each call of it without recording, in the
calling thread only, and restores recording after an error."""

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


# ----------------------------------------------------------------------------------------------------
# @tl.no_grad() on a generator function runs its body without recording at each next(), and the caller's code between
# its values with recording as it is there (the body runs after the decorated call has returned).
# ----------------------------------------------------------------------------------------------------


def test_a_generator_decorated_with_no_grad_records_nothing():
    @tl.no_grad()
    def doubled(x, n):
        for _ in range(n):
            yield x * 2

    x = tl.param(3.0)
    seen = []
    for value in doubled(x, 2):
        seen.append((tl.istracked(value), tl.istracked(x * 2)))  # the caller's code records as before
    assert seen == [(False, True), (False, True)]
    assert [tl.data(v) for v in doubled(x, 2)] == [6.0, 6.0]


def test_send_throw_close_and_return_pass_through():
    @tl.no_grad()
    def echo(x):
        got = yield x * 1
        try:
            got = yield x * got
        except KeyError:
            yield x * 10
        return "done"

    x = tl.param(2.0)
    g = echo(x)
    assert not tl.istracked(next(g))
    value = g.send(3.0)
    assert tl.data(value) == 6.0 and not tl.istracked(value)
    assert tl.data(g.throw(KeyError("k"))) == 20.0
    with pytest.raises(StopIteration) as stop:
        next(g)
    assert stop.value.value == "done"
    g = echo(x)
    next(g)
    g.close()
    with pytest.raises(StopIteration):
        next(g)
