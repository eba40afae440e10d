"""Backends: the engine asks array-api-compat for the namespace; the same gradients on NumPy,
array-api-strict and CuPy (skipped without a GPU); values stay on their device; mixing is an error."""

import array_api_strict as xs  # a test dependency: its absence is a failure, not a skip
import numpy as np
import pytest
from test_rules import CUPY_SKIP

import trackerlab as tl
from trackerlab import _backend

needs_gpu = pytest.mark.skipif(CUPY_SKIP is not None, reason=str(CUPY_SKIP))


def net(W, b, x):
    """A small network that touches every core family: matmul, elementwise, reductions, shape."""
    h = tl.tanh(tl.matmul(W, x) + b)
    return tl.sum(tl.reshape(h, (-1,)) ** 2) / tl.max(tl.exp(h))


W0 = np.random.default_rng(0).standard_normal((3, 4))
b0 = np.random.default_rng(1).standard_normal((3, 1))
x0 = np.random.default_rng(2).standard_normal((4, 2))


def test_the_namespace_comes_from_array_api_compat_or_numpy_2_itself():
    import array_api_compat

    # NumPy 2 is an array-API namespace of its own; other libraries go through array-api-compat
    assert _backend.namespace(np.ones(2)) is np.ones(2).__array_namespace__()
    assert _backend.namespace(np.float32(1)) is np
    assert _backend.namespace(xs.ones(2)) is array_api_compat.array_namespace(xs.ones(2))
    assert _backend.namespace(1.0, np.ones(2)).__name__ == "numpy"


def test_array_api_strict_values_stay_strict_and_match_numpy():
    W, b, x = (xs.asarray(a) for a in (W0, b0, x0))
    grads = tl.gradient(net, W, b, x)
    expected = tl.gradient(net, W0, b0, x0)
    for g, e in zip(grads, expected):
        assert type(tl.data(g)) is type(W)
        np.testing.assert_allclose(np.asarray(tl.data(g)), tl.data(e), rtol=1e-12)
    tl.check_grads(net, W, b, x, order=2)


def test_param_of_a_strict_array_keeps_its_type_and_dtype():
    p = tl.param(xs.asarray([1.0, 2.0], dtype=xs.float32))
    assert type(tl.data(p)) is type(xs.ones(1)) and tl.data(p).dtype == xs.float32
    tl.back_(tl.sum(p * p))
    assert type(p.grad) is type(xs.ones(1))


@pytest.mark.parametrize(
    "mix",
    [
        lambda a, b: a + b,
        lambda a, b: tl.multiply(a, b),
        lambda a, b: tl.matmul(a, b),
        lambda a, b: tl.concatenate([a, b]),
        lambda a, b: tl.where(np.array([True, False, True]), a, b),
    ],
)
def test_mixing_numpy_and_another_backend_in_one_operation_is_an_error(mix):
    strict = tl.param(xs.asarray([1.0, 2.0, 3.0]))
    with pytest.raises(TypeError, match="cannot mix arrays of array_api_strict and numpy in one operation"):
        mix(strict, np.ones(3))


def test_a_library_without_the_operation_says_so():
    with pytest.raises(TypeError, match="einsum: the array_api_strict namespace has no einsum"):
        tl.einsum("i,i->", tl.param(xs.asarray([1.0, 2.0])), xs.asarray([3.0, 4.0]))


# ---------------------------------------------------------------- CuPy (skipped without a GPU)


@needs_gpu
def test_param_of_a_cupy_array_stays_on_the_gpu():
    import cupy

    p = tl.param(cupy.arange(3.0))
    assert isinstance(tl.data(p), cupy.ndarray)
    tl.back_(tl.sum(tl.sin(p) * p))
    assert isinstance(p.grad, cupy.ndarray)
    assert _backend.device_of(p.grad) == _backend.device_of(tl.data(p))


@needs_gpu
def test_cupy_gradients_match_numpy():
    import cupy

    grads = tl.gradient(net, *(cupy.asarray(a) for a in (W0, b0, x0)))
    expected = tl.gradient(net, W0, b0, x0)
    for g, e in zip(grads, expected):
        assert isinstance(tl.data(g), cupy.ndarray)
        np.testing.assert_allclose(cupy.asnumpy(tl.data(g)), tl.data(e), rtol=1e-10)
    tl.check_grads(net, *(cupy.asarray(a) for a in (W0, b0, x0)), order=2)


@needs_gpu
def test_back_propagation_on_cupy_makes_no_host_round_trip():
    import cupy
    import cupyx

    W, b, x = (tl.param(cupy.asarray(a)) for a in (W0, b0, x0))
    y = net(W, b, x)
    with cupyx.allow_synchronize(False):
        tl.back_(y)
    assert isinstance(W.grad, cupy.ndarray)


@needs_gpu
def test_mixing_numpy_and_cupy_is_an_error():
    import cupy

    with pytest.raises(TypeError, match="cannot mix arrays of cupy and numpy in one operation"):
        tl.param(cupy.ones(3)) + np.ones(3)
