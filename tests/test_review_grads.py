"""A parameter's ``.grad`` after ``x.data = v`` of another dtype has the new dtype (it kept the old one: a
float32 parameter's gradient summed into float64 zeros), and the lazily made zeros of a reset ``.grad`` behave
as zeros made at once for code that holds, copies or steps with them."""

import copy
import pickle
import threading

import numpy as np
import pytest

import trackerlab as tl


@pytest.mark.parametrize("reset", [False, True])
@pytest.mark.parametrize(("old", "new"), [(np.float64, np.float32), (np.float32, np.float64), (np.float64, np.complex64)])
def test_a_new_dtype_given_by_data_is_the_gradients_dtype(old, new, reset):
    x = tl.param(np.ones(3, old))
    tl.back_(tl.sum(x * 2.0))
    if reset:
        tl.zero_grad_(x)
    x.data = np.full(3, 2.0, new)
    assert x.grad.dtype == np.dtype(new)
    tl.back_(tl.sum(tl.real(x * 3.0)))
    assert x.grad.dtype == np.dtype(new)
    np.testing.assert_array_equal(x.grad, [3.0, 3.0, 3.0] if reset else [5.0, 5.0, 5.0])


def test_a_complex_gradient_is_not_made_real_by_a_real_value():
    x = tl.param(np.array([1.0 + 1.0j]))
    tl.back_(tl.sum(tl.imag(x) * 2.0))
    x.data = np.array([1.0])
    assert x.grad.dtype.kind == "c" and x.grad[0] != 0


def test_a_reset_gradient_held_copied_pickled_and_stepped_with():
    x = tl.param(np.array([1.0, 2.0, 3.0]))
    tl.back_(tl.sum(x * x))
    tl.zero_grad_(x)
    held = x.grad  # zeros, made now: later sums go into them
    for other in (copy.copy(x), copy.deepcopy(x), pickle.loads(pickle.dumps(x))):
        np.testing.assert_array_equal(other.grad, np.zeros(3))
        tl.back_(tl.sum(other * 5.0))
        np.testing.assert_array_equal(other.grad, [5.0, 5.0, 5.0])
    tl.back_(tl.sum(x * 3.0))
    tl.back_(tl.sum(x * 3.0))
    np.testing.assert_array_equal(held, [6.0, 6.0, 6.0])
    tl.update_(x, x.grad)  # a step that is the .grad itself
    np.testing.assert_array_equal(tl.data(x), [7.0, 8.0, 9.0])
    np.testing.assert_array_equal(x.grad, np.zeros(3))
    tl.back_(tl.sum(x * x))
    np.testing.assert_array_equal(x.grad, [14.0, 16.0, 18.0])


def test_reading_a_reset_gradient_while_another_thread_steps():
    x = tl.param(np.ones(50_000))
    bad = []

    def read():
        for _ in range(200):
            g = x.grad
            if type(g) is not np.ndarray or g.shape != (50_000,) or g.dtype != np.float64:
                bad.append(g)  # (its numbers may be mid-sum: another thread adds into a held .grad in place)

    def step():
        for _ in range(100):
            tl.zero_grad_(x)
            tl.back_(tl.sum(x * 2.0))

    threads = [threading.Thread(target=read) for _ in range(2)] + [threading.Thread(target=step)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not bad
    np.testing.assert_array_equal(x.grad[:3], [2.0, 2.0, 2.0])
