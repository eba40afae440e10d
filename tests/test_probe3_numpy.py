"""NumPy's own spellings on tracked values, as a new user writes them, each checked against NumPy's value and
against central differences of ``Σ W ∘ f`` with random, non-symmetric weights (computed here, not with
``tl.check_grads``), through ``back_``, ``gradient`` and ``forward``."""

import warnings

import numpy as np
import pytest
from differences import differences

import trackerlab as tl

RNG = np.random.default_rng(3)
X = RNG.uniform(-1.5, 1.5, (3, 4))
HOLE = np.array([[False, True, False, False], [False, True, True, False], [False, True, False, False]])


def _differences(f, x, W, eps=1e-6):
    return differences(f, [x], 0, W, eps)


def _assert_right(f, x=X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's "All-NaN slice"
        want_value = f(x)  # NumPy on the plain array
        p = tl.param(x)
        y = f(p)
        np.testing.assert_array_equal(tl.data(y), want_value)
        W = RNG.standard_normal(np.shape(want_value))
        want = _differences(f, x, W)
        tl.back_(y, W) if np.ndim(want_value) else tl.back_(y * float(W))
        (g,) = tl.gradient(lambda t: tl.sum(f(t) * W), x)
        (h,) = tl.forward(f, x)[1](W)
    for got in (p.grad, tl.data(g), tl.data(h)):
        np.testing.assert_allclose(got, want, atol=1e-6)


def _holed(x):
    """``x`` with NaN where HOLE is set (a NaN that no gradient flows through)."""
    return tl.where(HOLE, np.nan, x) if tl.istracked(x) else np.where(HOLE, np.nan, x)


NAN_SKIPPING = {
    # np.fmax.reduce was recorded as max, which returns the NaN: [nan, nan, nan] where NumPy gives numbers
    "np.fmax.reduce(x, axis=1)": lambda x: np.fmax.reduce(_holed(x), axis=1),
    "np.fmin.reduce(x, axis=1, keepdims=True)": lambda x: np.fmin.reduce(_holed(x), axis=1, keepdims=True),
    "np.nanmax(x, axis=0), one slice all NaN": lambda x: np.nan_to_num(np.nanmax(_holed(x), axis=0)),
    "np.nanmin(x)": lambda x: np.nanmin(_holed(x)),
    "np.nanmax(x, axis=(0, 1), keepdims=True)": lambda x: np.nanmax(_holed(x), axis=(0, 1), keepdims=True),
    "np.fmax.reduce without NaN": lambda x: np.fmax.reduce(x, axis=0),
}


@pytest.mark.parametrize("spelling", sorted(NAN_SKIPPING))
def test_nan_skipping_extrema_match_numpy(spelling):
    _assert_right(NAN_SKIPPING[spelling])


def test_nan_skipping_extrema_send_the_nan_nothing():
    x = tl.param([1.0, 3.0, 2.0])
    y = np.nanmax(tl.where(np.array([False, True, False]), np.nan, x))
    assert float(tl.data(y)) == 2.0
    tl.back_(y)
    np.testing.assert_array_equal(x.grad, [0.0, 0.0, 1.0])


PADS = {
    # constant_values as a pair or a pair per axis failed: "could not broadcast input array from shape (2,)"
    "constant_values=(1, 2)": lambda x: np.pad(x, 1, constant_values=(1.0, 2.0)),
    "constant_values per axis": lambda x: np.pad(x, ((1, 0), (0, 2)), constant_values=((1.0, 2.0), (3.0, 4.0))),
    "constant_values=(5,)": lambda x: np.pad(x, (1, 2), constant_values=(5.0,)),
    "constant_values as an array": lambda x: np.pad(x, 1, constant_values=np.array([[1.0, 2.0], [3.0, 4.0]])),
    # widths computed with NumPy failed: "object of type 'numpy.int64' has no len()"
    "pad_width=np.int64(1)": lambda x: np.pad(x, np.int64(1)),
    "pad_width as an array": lambda x: np.pad(x, np.array([[1, 0], [0, 2]])),
    "pad_width=np.array([1, 2])": lambda x: np.pad(x, np.array([1, 2])),
    "pad_width=((1,), (2,))": lambda x: np.pad(x, ((1,), (2,))),
    "1-d, both sides": lambda x: np.pad(x[0], (2, 1), constant_values=(7.0, 8.0)),
}


@pytest.mark.parametrize("spelling", sorted(PADS))
def test_pad_takes_numpys_forms_of_widths_and_values(spelling):
    _assert_right(PADS[spelling])


DIFFS = {
    # prepend= and append= failed: "diff() got an unexpected keyword argument 'prepend'"
    "prepend a number": lambda x: np.diff(x, axis=1, prepend=0.5),
    "append an array": lambda x: np.diff(x, axis=0, append=x[:1] * 2),
    "both, n=2": lambda x: np.diff(x, n=2, prepend=x[:, :1], append=1.0),
    "prepend a list, 1-d": lambda x: np.diff(x[0], prepend=[1.0, 2.0]),
}


@pytest.mark.parametrize("spelling", sorted(DIFFS))
def test_diff_with_prepend_and_append(spelling):
    _assert_right(DIFFS[spelling])


def test_diff_prepend_of_a_tracked_number_gets_its_gradient():
    # d/dx00 of Σ w ∘ diff([x00, x00, x01, ...]) along axis 1
    _assert_right(lambda x: np.diff(x, axis=1, prepend=x[0, 0]))


def test_options_numpy_has_and_trackerlab_refuses_are_named():
    x = tl.param(np.eye(2))
    # was "matmul: _operator.matmul() takes no keyword arguments"
    with pytest.raises(TypeError, match=r"numpy.matmul: axes= is not supported on tracked values"):
        np.matmul(x, np.eye(2), axes=[(1, 0), (0, 1), (0, 1)])
    # was "numpy.add.reduce: dtype, where= not supported", naming a dtype that was not given
    with pytest.raises(TypeError, match=r"numpy.add.reduce: where= not supported on tracked values"):
        np.add.reduce(x, axis=1, where=np.array([True, False]))
    with pytest.raises(TypeError, match=r"numpy.nanmax: initial= not supported on tracked values"):
        np.nanmax(x, initial=3.0)


def test_the_sign_of_a_complex_determinant_moves_with_the_matrix():
    # slogdet's sign was a plain array: for a complex matrix, det/|det| = e^(iθ) moves with it, and its
    # gradient was silently 0
    r = np.random.default_rng(1)
    a, b = r.standard_normal((3, 3)), r.standard_normal((3, 3))
    c = np.array(0.3 + 2j)

    def f(a, b):
        sign = tl.slogdet(a + 1j * b)[0]
        return tl.real(sign * c) + 2 * tl.imag(sign)

    def plain(a, b):
        sign = np.linalg.slogdet(a + 1j * b)[0]
        return np.real(sign * c) + 2 * np.imag(sign)

    ga, gb = (tl.data(g) for g in tl.gradient(f, a, b))
    for got, which in ((ga, 0), (gb, 1)):
        want = np.zeros((3, 3))
        for index in np.ndindex(3, 3):
            step = np.zeros((3, 3))
            step[index] = 1e-6
            up = plain(a + step, b) if which == 0 else plain(a, b + step)
            down = plain(a - step, b) if which == 0 else plain(a, b - step)
            want[index] = (up - down) / 2e-6
        np.testing.assert_allclose(got, want, atol=1e-6)
    tl.check_grads(f, a, b)  # to second order
    np.testing.assert_allclose(
        tl.data(tl.slogdet(tl.param(a * 1e200 + 1j * b))[0]), np.linalg.slogdet(a * 1e200 + 1j * b)[0]
    )
    real_sign = tl.slogdet(tl.param(a))[0]
    assert not tl.istracked(real_sign) and float(real_sign) == np.linalg.slogdet(a)[0]


OUTERS = {
    # np.add.outer(x, y) was "numpy.add.outer: trackerlab has no gradient rule for it"
    "np.add.outer": lambda x: np.add.outer(x[0], x[1]),
    "np.multiply.outer, 2-d by 1-d": lambda x: np.multiply.outer(x, x[0, :2]),
    "np.subtract.outer, a plain left": lambda x: np.subtract.outer(np.arange(3.0), x[1]),
    "np.power.outer": lambda x: np.power.outer(np.abs(x[0]) + 0.5, x[1, :2]),
    "np.maximum.outer": lambda x: np.maximum.outer(x[0], x[1]),
    "np.divide.outer by a number": lambda x: np.divide.outer(x[0], 2.0),
}


@pytest.mark.parametrize("spelling", sorted(OUTERS))
def test_ufunc_outer_is_recorded(spelling):
    _assert_right(OUTERS[spelling])


def test_ufunc_outer_names_options_it_refuses():
    with pytest.raises(TypeError, match=r"numpy\.add\.outer: dtype= is not supported on tracked values"):
        np.add.outer(tl.param([1.0, 2.0]), [1.0, 2.0], dtype=np.float32)


KNOTS = np.array([0.0, 1.0, 2.5, 3.0])
VALUES = np.array([0.5, 2.0, -1.0, 1.5])
AT = np.array([0.3, 1.7, 2.2, -0.5, 3.5, 1.2])  # between knots, below and above them

INTERPOLATIONS = {
    # np.interp was "numpy.interp: trackerlab has no gradient rule for it"
    "at tracked points": (lambda t: np.interp(t, KNOTS, VALUES), AT),
    "of tracked values": (lambda f: np.interp(AT, KNOTS, f), VALUES),
    "at a 2-d array of points": (lambda t: np.interp(t.reshape(2, 3), KNOTS, VALUES), AT),
    "with tracked left and right": (lambda f: np.interp(AT, KNOTS, f, left=f[1] * 2, right=f[0] - 1.0), VALUES),
}


@pytest.mark.parametrize("name", sorted(INTERPOLATIONS))
def test_interp(name):
    f, x = INTERPOLATIONS[name]
    _assert_right(f, x)


def test_interp_at_and_beyond_the_knots():
    # at a knot, the slope of the segment to its right (the last knot: to its left), as JAX; outside, 0
    def slope(v):
        return float(tl.data(tl.gradient(lambda x: tl.interp(x, [0.0, 1.0, 3.0], [0.0, 2.0, 3.0]), v)[0]))

    assert [slope(v) for v in (0.0, 0.5, 1.0, 2.0, 3.0, 4.0, -1.0)] == [2.0, 2.0, 0.5, 0.5, 0.5, 0.0, 0.0]
    for v in (0.0, 1.0, 3.0, -1.0, 5.0):
        assert float(tl.data(tl.interp(tl.param(v), [0.0, 1.0, 3.0], [0.0, 2.0, 3.0]))) == np.interp(
            v, [0.0, 1.0, 3.0], [0.0, 2.0, 3.0]
        )
    with pytest.raises(TypeError, match=r"interp: xp \(the knots\) is tracked"):
        tl.interp(tl.param(0.5), tl.param([0.0, 1.0]), [1.0, 2.0])
    with pytest.raises(TypeError, match="interp: period= is not supported"):
        np.interp(tl.param(0.5), [0.0, 1.0], [1.0, 2.0], period=1.0)
