"""Probes of settings as a new user passes them: axes that are NumPy integers (computed with NumPy) and NumPy
options trackerlab cannot honour. Expected values are derived by hand."""

import numpy as np
import pytest

import trackerlab as tl

X = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
W = np.array([[0.5, -1.0, 2.0], [1.5, 3.0, -0.5]])

# name: (call with an axis of type np.int64, the same call with a Python int)
NUMPY_AXES = {
    "sum": (lambda x: tl.sum(x, axis=np.int64(1)), lambda x: tl.sum(x, axis=1)),
    "np.sum": (lambda x: np.sum(x, axis=np.int64(0)), lambda x: np.sum(x, axis=0)),
    "mean": (lambda x: tl.mean(x, axis=np.int64(1)), lambda x: tl.mean(x, axis=1)),
    "prod": (lambda x: tl.prod(x, axis=np.int64(1)), lambda x: tl.prod(x, axis=1)),
    "max": (lambda x: tl.max(x, axis=np.int64(1)), lambda x: tl.max(x, axis=1)),
    "min": (lambda x: tl.min(x, axis=np.int32(0)), lambda x: tl.min(x, axis=0)),
    "var": (lambda x: tl.var(x, axis=np.int64(1)), lambda x: tl.var(x, axis=1)),
    "std": (lambda x: tl.std(x, axis=np.int64(0)), lambda x: tl.std(x, axis=0)),
    "logsumexp": (lambda x: tl.logsumexp(x, axis=np.int64(1)), lambda x: tl.logsumexp(x, axis=1)),
    "nansum": (lambda x: tl.nansum(x, axis=np.int64(1)), lambda x: tl.nansum(x, axis=1)),
    "nanmean": (lambda x: tl.nanmean(x, axis=np.int64(1)), lambda x: tl.nanmean(x, axis=1)),
    "sum of a tuple": (lambda x: tl.sum(x, axis=(np.int64(0), np.int64(1))), lambda x: tl.sum(x, axis=(0, 1))),
    "norm": (lambda x: tl.norm(x, axis=np.int64(1)), lambda x: tl.norm(x, axis=1)),
    "squeeze": (lambda x: tl.squeeze(x[:, :1], axis=np.int64(1)), lambda x: tl.squeeze(x[:, :1], axis=1)),
    "expand_dims": (lambda x: tl.expand_dims(x, np.int64(1)), lambda x: tl.expand_dims(x, 1)),
    "tensordot": (lambda x: tl.tensordot(x, W.T, axes=np.int64(1)), lambda x: tl.tensordot(x, W.T, axes=1)),
}


@pytest.mark.parametrize("name", sorted(NUMPY_AXES))
def test_numpy_integer_axes_work_as_python_ints(name):
    # they failed in the forward or the backward pass: "'numpy.int64' object is not iterable"
    given, plain = NUMPY_AXES[name]
    x, y = tl.param(X), tl.param(X)
    got, want = given(x), plain(y)
    np.testing.assert_allclose(tl.data(got), tl.data(want))
    weights = np.arange(1.0, 1.0 + np.size(tl.data(want))).reshape(np.shape(tl.data(want)))
    tl.back_(got, weights) if np.ndim(tl.data(got)) else tl.back_(got * 2.0)
    tl.back_(want, weights) if np.ndim(tl.data(want)) else tl.back_(want * 2.0)
    np.testing.assert_allclose(x.grad, y.grad)


def test_numpy_integer_axis_gradient_by_hand():
    x = tl.param(X)
    tl.back_(tl.sum(tl.sum(x * x, axis=np.int64(1)) * np.array([1.0, 10.0])))
    np.testing.assert_allclose(x.grad, 2 * X * np.array([[1.0], [10.0]]))


def test_clip_refuses_out_and_options_it_would_drop():
    # np.clip(x, 0, 1, out=buffer) returned a new tracked array and left buffer as it was, without a word
    x = tl.param([0.5, 2.0, -1.0])
    buffer = np.zeros(3)
    with pytest.raises(TypeError, match=r"clip: out= is not supported on tracked values"):
        np.clip(x, 0.0, 1.0, out=buffer)
    with pytest.raises(TypeError, match=r"clip: casting= is not supported"):
        tl.clip(x, 0.0, 1.0, casting="unsafe")
    y = np.clip(x, min=0.0, max=1.0)
    np.testing.assert_array_equal(tl.data(y), [0.5, 1.0, 0.0])
    tl.back_(y, np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(x.grad, [1.0, 0.0, 0.0])


def test_vecdot_refuses_options_it_would_drop():
    # keepdims=True was dropped: np.vecdot(x, y, keepdims=True) gave shape (2,), not (2, 1)
    x = tl.param(X)
    with pytest.raises(TypeError, match="vecdot: keepdims= is not supported on tracked values"):
        np.vecdot(x, W, keepdims=True)
    with pytest.raises(TypeError, match="vecdot: out= is not supported on tracked values"):
        tl.vecdot(x, W, out=np.zeros(2))
    with pytest.raises(TypeError, match="outer: out= is not supported on tracked values"):
        np.outer(x, W, out=np.zeros((6, 6)))
    y = np.vecdot(x, W, axis=0)
    np.testing.assert_allclose(tl.data(y), np.sum(X * W, axis=0))
    tl.back_(y, np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(x.grad, W * np.array([1.0, 2.0, 3.0]))
