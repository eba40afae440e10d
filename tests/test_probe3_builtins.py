"""Python's builtins and NumPy's array factories on tracked values, as a new user writes them: ``round(x)``,
``math.floor(x)`` and ``np.full_like(x, v)``. Expected gradients are derived by hand."""

import math

import numpy as np
import pytest

import trackerlab as tl


def test_rounding_builtins_give_plain_numbers_with_slope_zero():
    # round(x) failed: "type TrackedReal doesn't define __round__ method"; math.floor(x) inside gradient failed
    # naming float(x). Rounding is piecewise constant, as int(x) is: its derivative is 0
    x = tl.param(2.5)
    assert (round(x), round(x, 1), math.floor(x), math.ceil(x), math.trunc(x)) == (2, 2.5, 2, 3, 2)
    assert type(round(x)) is int and type(math.floor(x)) is int
    assert round(tl.param(np.float32(2.567)), 2) == pytest.approx(2.57)
    (g,) = tl.gradient(lambda a: a * round(a) + math.floor(a) * a + math.ceil(a) * math.trunc(-a) * a, 2.7)
    assert float(tl.data(g)) == 3.0 + 2.0 + 3.0 * -2.0


def test_round_of_a_tracked_array_is_refused_as_numpy_refuses_it():
    with pytest.raises(TypeError, match="__round__"):
        round(tl.param([1.26, 2.5]))


W = np.array([1.0, 2.0, 3.0])


def test_full_like_with_a_tracked_fill_value_is_recorded():
    # np.full_like(x, v) gave a plain array: v's gradient was silently 0
    x = np.array([0.5, -1.0, 2.0])
    (g,) = tl.gradient(lambda t: tl.sum(np.full_like(t, t[0] * 2) * W), x)
    np.testing.assert_array_equal(tl.data(g), [2.0 * W.sum(), 0.0, 0.0])
    (g,) = tl.gradient(lambda t: tl.sum(np.full_like(t, t[1], shape=(2, 2))), x)
    np.testing.assert_array_equal(tl.data(g), [0.0, 4.0, 0.0])
    (g,) = tl.gradient(lambda t: tl.sum(np.full_like(t, 2.0) * t * W), x)
    np.testing.assert_array_equal(tl.data(g), 2.0 * W)
    single = tl.param(np.float32([1.0, 2.0]))
    filled = np.full_like(single, single[0])
    assert filled.dtype == np.float32
    tl.back_(tl.sum(filled))
    np.testing.assert_array_equal(single.grad, [2.0, 0.0])


def test_full_like_of_an_integer_dtype_or_a_plain_value_is_numpys():
    x = tl.param([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(np.full_like(x, 3), [3.0, 3.0, 3.0])
    got = np.full_like(x, tl.param(3.7), dtype=int)
    assert not tl.istracked(got) and got.dtype.kind == "i"


def test_numpy_writing_a_tracked_value_into_a_plain_array_is_named():
    # np.full_like(plain, v) ends in np.copyto: "numpy.copyto: trackerlab has no gradient rule for it"
    x = tl.param([1.0, 2.0])
    with pytest.raises(TypeError, match=r"numpy.copyto: NumPy would write a tracked value into a plain array"):
        np.full_like(np.zeros(3), x[0])
    with pytest.raises(TypeError, match=r"numpy.copyto: NumPy would write a tracked value"):
        np.copyto(np.zeros(2), x)
