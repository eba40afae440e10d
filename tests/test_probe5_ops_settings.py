"""Settings that are NumPy integers where NumPy takes them: a shape (``np.reshape(x, np.int64(12))``), the
number of sections of ``split``, the repetitions of ``tile``, the target of ``broadcast_to`` and ``average``'s
axis, as a user computes them with NumPy (``n = x.size``, ``k = np.int64(...)``). They were refused with
"'numpy.int64' object is not iterable"; each now gives NumPy's value, and its gradient matches central
differences of ``Σ W ∘ f(x)``."""

import numpy as np
import pytest
from differences import differences

import trackerlab as tl

RNG = np.random.default_rng(20261123)


def _differences(f, x, W, eps=1e-6):
    return differences(f, [x], 0, W, eps)


WEIGHTS = np.array([0.5, 2.0, -1.0, 3.0])
CASES = {
    "np.reshape(x, np.int64(12))": (lambda a: np.reshape(a, np.int64(12)), (3, 4)),
    "np.reshape(x, np.array(12))": (lambda a: np.reshape(a, np.array(12)), (3, 4)),
    "x.reshape(np.int64(12))": (lambda a: a.reshape(np.int64(12)), (3, 4)),
    "np.split(x, np.int64(2), axis=1)[1]": (lambda a: np.split(a, np.int64(2), axis=1)[1], (3, 4)),
    "np.array_split(x, np.array(3), axis=1)[0]": (lambda a: np.array_split(a, np.array(3), axis=1)[0], (3, 4)),
    "np.tile(x, np.int64(2))": (lambda a: np.tile(a, np.int64(2)), (3, 4)),
    "np.tile(x, np.array(3))": (lambda a: np.tile(a, np.array(3)), (2,)),
    "np.broadcast_to(x, np.int64(3))": (lambda a: np.broadcast_to(a, np.int64(3)), (1,)),
    "np.average(x, axis=np.int64(1), weights=w)": (lambda a: np.average(a, axis=np.int64(1), weights=WEIGHTS), (3, 4)),
}


@pytest.mark.parametrize("name", CASES)
def test_numpy_integer_settings_give_numpys_value_and_the_gradient(name):
    f, shape = CASES[name]
    x = RNG.standard_normal(shape)
    np.testing.assert_array_equal(tl.data(f(tl.param(x))), f(x))
    W = RNG.standard_normal(np.shape(f(x)))
    got = tl.data(tl.gradient(lambda a: tl.sum(f(a) * W), x)[0])
    np.testing.assert_allclose(got, _differences(f, x, W), rtol=1e-6, atol=1e-8)


def test_split_into_a_numpy_integer_of_sections_by_hand():
    pieces = np.split(tl.param(np.arange(6.0)), np.int64(3))
    assert [tl.data(p).tolist() for p in pieces] == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    g = tl.gradient(lambda a: tl.sum(np.split(a, np.int64(3))[1] * np.array([10.0, 20.0])), np.arange(6.0))[0]
    assert tl.data(g).tolist() == [0.0, 0.0, 10.0, 20.0, 0.0, 0.0]
