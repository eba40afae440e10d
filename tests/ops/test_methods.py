"""Array methods and in-place operators on tracked arrays, as a NumPy user writes them: options trackerlab
cannot honour are named in the error (not Python's "method() got an unexpected keyword argument"), NumPy's
in-place methods say what to write instead, and ``+=`` makes a new value, as for JAX arrays."""

import math

import numpy as np
import pytest

import trackerlab as tl

X = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]])

OPTIONS = {
    "x.sum(initial=0)": (lambda x: x.sum(initial=0), "sum: initial= is not supported on tracked values"),
    "x.mean(where=mask)": (lambda x: x.mean(where=tl.data(x) > 0), "mean: where= is not supported"),
    "x.max(initial=0)": (lambda x: x.max(initial=0), "max: initial= is not supported"),
    "x.std(where=mask)": (lambda x: x.std(where=tl.data(x) > 0), "std: where= is not supported"),
    "x.take([0], mode='clip')": (lambda x: x.take([0], mode="clip"), "take: mode= is not supported"),
    "x.clip(0, 1, out=buffer)": (lambda x: x.clip(0, 1, out=np.zeros((2, 3))), "clip: out= is not supported"),
    "x.reshape(3, 2, copy=True)": (lambda x: x.reshape(3, 2, copy=True), "reshape: copy= is not supported"),
    "x.trace(dtype=float)": (lambda x: x.trace(dtype=float), "trace: dtype= is not supported"),
    "x.astype(np.float32, casting='unsafe')": (
        lambda x: x.astype(np.float32, casting="unsafe"),
        "astype: casting= is not supported",
    ),
}


@pytest.mark.parametrize("call", sorted(OPTIONS))
def test_options_of_methods_are_named(call):
    f, message = OPTIONS[call]
    with pytest.raises(TypeError, match=message):
        f(tl.param(X))


def test_options_at_numpys_defaults_are_accepted():
    x = tl.param(X)
    y = x.sum(where=True) + x.take([0, 4], out=None).sum() + x.repeat(2, axis=0, out=None).sum()
    tl.back_(y)
    want = np.ones_like(X) + 2 * np.ones_like(X)
    want.flat[0] += 1
    want.flat[4] += 1
    np.testing.assert_array_equal(x.grad, want)


IN_PLACE = {
    "x.sort()": (lambda x: x.sort(), "tl.sort"),
    "x.partition(1)": (lambda x: x.partition(1), "tl.partition"),
    "x.fill(0)": (lambda x: x.fill(0), "tl.where"),
    "x.put([0], 1.0)": (lambda x: x.put([0], 1.0), "tl.where"),
    "x.resize((3, 2))": (lambda x: x.resize((3, 2)), "tl.reshape"),
}


@pytest.mark.parametrize("call", sorted(IN_PLACE))
def test_numpys_in_place_methods_say_what_to_write(call):
    # they were AttributeError: 'TrackedArray' object has no attribute 'sort'
    f, instead = IN_PLACE[call]
    with pytest.raises(TypeError, match=rf"x\.\w+\(\.\.\.\) changes an array in place.*{instead}"):
        f(tl.param(X))


def test_augmented_assignment_makes_a_new_value_and_the_gradient_follows_it():
    def f(x):
        y = x * 1.0
        alias = y
        y += y  # a new value bound to y; alias keeps the old one, as a JAX array would
        y *= x
        return tl.sum(y * np.array([1.0, 10.0, 100.0])) + tl.sum(alias)

    x = np.array([1.0, 2.0, 3.0])
    (g,) = tl.gradient(f, x)
    np.testing.assert_array_equal(tl.data(g), 4 * x * np.array([1.0, 10.0, 100.0]) + 1.0)


# ----------------------------------------------------------------------------------------------------
# Python's builtins and NumPy's array factories on tracked values, as a new user writes them: ``round(x)``,
# ``math.floor(x)`` and ``np.full_like(x, v)``. Expected gradients are derived by hand.
# ----------------------------------------------------------------------------------------------------


def test_rounding_builtins_give_plain_numbers_with_slope_zero():
    # round(x) and math.floor(x) work on a tracked number, inside gradient too. Rounding is piecewise constant, as
    # int(x) is: its derivative is 0
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
    # np.full_like(x, v) is recorded: v's gradient reaches it (a plain array would make it 0 without a word)
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
