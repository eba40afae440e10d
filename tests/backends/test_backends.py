"""Backends: the engine asks array-api-compat for the namespace; the same gradients on NumPy,
array-api-strict, the strict device stand-in (tests/devicearray.py) and CuPy (skipped without a GPU);
values stay on their device; the host gets explicit copies only; mixing is an error."""

from __future__ import annotations

import array_api_strict as xs  # a test dependency: its absence is a failure, not a skip
import numpy as np
import pytest
from test_rules import DEVICES, host, namespace_of, no_synchronize

import trackerlab as tl
from trackerlab.backends import arrays as _backend


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


# ---------------------------------------------------------------- device libraries: the stand-in, and CuPy on a GPU
# ``devicearray`` (tests/devicearray.py) refuses NumPy operands and implicit host copies as CuPy does, so
# these run everywhere; the ``cupy`` cases are skipped with the reason when there is no GPU.


@pytest.mark.parametrize("backend", DEVICES)
def test_param_of_a_device_array_stays_on_the_device(backend):
    xp = namespace_of(backend)
    p = tl.param(xp.arange(3.0))
    assert isinstance(tl.data(p), xp.ndarray)
    tl.back_(tl.sum(tl.sin(p) * p))
    assert isinstance(p.grad, xp.ndarray)
    assert _backend.device_of(p.grad) == _backend.device_of(tl.data(p))
    np.testing.assert_allclose(host(p.grad), np.cos(np.arange(3.0)) * np.arange(3.0) + np.sin(np.arange(3.0)))


@pytest.mark.parametrize("backend", DEVICES)
def test_the_smallest_programs_on_a_device(backend):
    xp = namespace_of(backend)
    x = tl.param(xp.arange(3.0))
    tl.back_(tl.sum(tl.sin(x)))
    np.testing.assert_allclose(host(x.grad), np.cos(np.arange(3.0)))
    y = tl.param(xp.asarray(2.0))
    tl.back_(y * y)
    assert isinstance(y.grad, xp.ndarray) and float(y.grad) == 4.0


@pytest.mark.parametrize("backend", DEVICES)
def test_device_gradients_match_numpy(backend):
    xp = namespace_of(backend)
    grads = tl.gradient(net, *(xp.asarray(a) for a in (W0, b0, x0)))
    expected = tl.gradient(net, W0, b0, x0)
    for g, e in zip(grads, expected):
        assert isinstance(tl.data(g), xp.ndarray)
        np.testing.assert_allclose(host(tl.data(g)), tl.data(e), rtol=1e-10)
    tl.check_grads(net, *(xp.asarray(a) for a in (W0, b0, x0)), order=2)


@pytest.mark.parametrize("backend", DEVICES)
def test_back_propagation_on_a_device_makes_no_host_round_trip(backend):
    xp = namespace_of(backend)
    W, b, x = (tl.param(xp.asarray(a)) for a in (W0, b0, x0))
    y = net(W, b, x)
    with no_synchronize(backend):
        tl.back_(y)
    assert isinstance(W.grad, xp.ndarray)
    expected = tl.gradient(net, W0, b0, x0)[0]
    np.testing.assert_allclose(host(W.grad), tl.data(expected), rtol=1e-10)


@pytest.mark.parametrize("backend", DEVICES)
def test_mixing_numpy_and_a_device_library_is_an_error(backend):
    xp = namespace_of(backend)
    with pytest.raises(TypeError, match=f"cannot mix arrays of {backend} and numpy in one operation"):
        tl.param(xp.ones(3)) + np.ones(3)


def test_the_stand_in_refuses_what_cupy_refuses():
    import devicearray as xp

    x = xp.asarray([1.0, 2.0])
    for mixed in (lambda: x * np.ones(2), lambda: np.ones(2) + x, lambda: xp.sin(np.ones(2))):
        with pytest.raises(TypeError, match=r"Unsupported type <class 'numpy.ndarray'>"):
            mixed()
    with pytest.raises(TypeError, match=r"Unsupported type <class 'numpy.float64'>"):
        x * np.float64(2.0)
    with pytest.raises(TypeError, match=r"Implicit conversion to a NumPy array is not allowed"):
        np.asarray(x)
    np.testing.assert_array_equal((2 * x + 1).get(), [3.0, 5.0])  # Python scalars are welcome
    with xp.allow_synchronize(False):
        y = xp.sum(x * x)
        for sync in (lambda: float(y), lambda: bool(y), lambda: y.item(), lambda: int(y), lambda: x.get()):
            with pytest.raises(xp.DeviceSynchronized):
                sync()
    assert float(y) == 5.0 and str(x.device) == "standin:0"


def test_to_host_copies_explicitly_from_every_library():
    import devicearray

    a = np.array([1.0, 2.0])
    assert _backend.to_host(a) is a or np.shares_memory(_backend.to_host(a), a)  # NumPy stays as it is
    np.testing.assert_array_equal(_backend.to_host([1, 2]), [1, 2])
    for value in (xs.asarray([1.0, 2.0]), devicearray.asarray([1.0, 2.0])):
        out = _backend.to_host(value)
        assert type(out) is np.ndarray
        np.testing.assert_array_equal(out, [1.0, 2.0])
    assert _backend.to_host(devicearray.asarray(3.0)).shape == ()
    assert _backend.device_of(devicearray.ones(2)) == "standin:0" and _backend.library_name(devicearray.ones(2)) == (
        "devicearray"
    )


# ----------------------------------------------------------------------------------------------------
# Nested differentiation on array-API values that are not NumPy's: hessian, jacobian and forward's backpropagator with
# a given Δ on array_api_strict values, compared with the same functions on NumPy.
# ----------------------------------------------------------------------------------------------------


RNG = np.random.default_rng(4)
A0 = RNG.normal(size=(3, 3)) + 3 * np.eye(3)
X0 = RNG.normal(size=3)
W0_BACKENDS = RNG.normal(size=3)


def loss(A, x, w):
    return (
        tl.sum(tl.tanh(A @ x) * w)
        + tl.mean(x) * tl.sum(A[1:, ::2] ** 2)
        + tl.max(x * x)
        + tl.sum(tl.solve(A, x) * w)
        + tl.sum(tl.inv(A)[0, ...] * w)
        + tl.norm(x)
        + tl.prod(x)
        + tl.sum(tl.cumsum(x, axis=0) * w)
    )


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_hessian_on_array_api_strict_values_equals_numpys():
    strict = tl.hessian(lambda x: loss(tl.param(xs.asarray(A0)), x, xs.asarray(W0_BACKENDS)), xs.asarray(X0))
    plain = tl.hessian(lambda x: loss(A0, x, W0_BACKENDS), X0)
    assert type(tl.data(strict)).__module__.startswith("array_api_strict")
    np.testing.assert_allclose(np.asarray(tl.data(strict)), tl.data(plain), rtol=1e-10, atol=1e-12)
    # the hessian of the tanh term by hand, so both sides cannot be wrong together
    only_tanh = tl.hessian(lambda x: tl.sum(tl.tanh(x) * xs.asarray(W0_BACKENDS)), xs.asarray(X0))
    t = np.tanh(X0)
    np.testing.assert_allclose(np.asarray(tl.data(only_tanh)), np.diag(-2 * t * (1 - t * t) * W0_BACKENDS), rtol=1e-12)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_a_numeric_seed_on_an_array_api_strict_loss():
    x = tl.param(xs.asarray(X0))
    _, back = tl.forward(lambda x: tl.sum(tl.sin(x) * x), x)
    (g,) = back(2.5)
    np.testing.assert_allclose(np.asarray(tl.data(g)), 2.5 * (np.cos(X0) * X0 + np.sin(X0)), rtol=1e-12)
    (g,) = tl.gradient(lambda x: tl.sum(tl.sin(x) * x), xs.asarray(X0))
    np.testing.assert_allclose(np.asarray(tl.data(g)), np.cos(X0) * X0 + np.sin(X0), rtol=1e-12)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize(
    "index",
    [
        (slice(None), None, slice(None)),
        (None, Ellipsis),
        (1, None, Ellipsis),
        (slice(1, 3), None, 0, None),
    ],
)
def test_new_axes_in_an_index_on_array_api_strict_values(index):
    w = RNG.normal(size=np.empty((4, 3))[index].shape)
    x = tl.param(xs.asarray(RNG.normal(size=(4, 3))))
    tl.back_(tl.sum(tl.sin(x)[index] * xs.asarray(w)))
    expected = np.zeros((4, 3))
    expected[tuple(i for i in index if i is not None)] = np.reshape(
        w, np.empty((4, 3))[tuple(i for i in index if i is not None)].shape
    )
    np.testing.assert_allclose(np.asarray(tl.grad(x)), expected * np.cos(np.asarray(tl.data(x))), rtol=1e-12)
