"""NumPy on tracked values: ufuncs, functions (``np.linalg`` by module and name), methods and operators
are recorded; non-differentiable functions give plain results; the rest is a clear error."""

import importlib
import re

import numpy as np
import pytest

import trackerlab as tl
from trackerlab import numpy_protocol
from trackerlab.rules import functions

rng = np.random.default_rng(0)
A = rng.uniform(-1, 1, (3, 3)) + 3 * np.eye(3)
B = rng.uniform(-1, 1, (3, 4))
V = rng.uniform(0.1, 1, 3)

# (NumPy spelling, the same with tl, arguments): both must give the same value and the same gradient
PAIRS = [
    (lambda x: np.sin(x) * np.exp(x), lambda x: tl.sin(x) * tl.exp(x), V),
    (lambda x: np.sum(x, axis=0, keepdims=True), lambda x: tl.sum(x, axis=0, keepdims=True), B),
    (lambda x: np.sum(x, 1), lambda x: tl.sum(x, axis=1), B),
    (lambda x: np.maximum(x, 0.5), lambda x: tl.maximum(x, 0.5), V),
    (lambda x: np.abs(x - 0.5), lambda x: tl.abs(x - 0.5), V),
    (lambda x: np.where(x > 0, x, 0.1 * x), lambda x: tl.where(tl.data(x) > 0, x, 0.1 * x), B),
    (lambda x: np.concatenate([x, 2 * x], axis=1), lambda x: tl.concatenate([x, 2 * x], axis=1), B),
    (lambda x: np.stack([x, x * x]), lambda x: tl.stack([x, x * x]), V),
    (lambda x: np.split(x, 3)[1], lambda x: tl.split(x, 3)[1], V),
    (lambda x: np.linalg.inv(x), tl.inv, A),
    (lambda x: np.linalg.det(x), tl.det, A),
    (lambda x: np.linalg.slogdet(x)[1], lambda x: tl.slogdet(x)[1], A),
    (lambda x: np.linalg.solve(x, V), lambda x: tl.solve(x, V), A),
    (lambda x: np.linalg.norm(x, axis=0), lambda x: tl.norm(x, axis=0), B),
    (lambda x: np.linalg.cholesky(x @ x.T), lambda x: tl.cholesky(x @ x.T), A),
    (lambda x: np.einsum("ij,jk->ik", x, B), lambda x: tl.einsum("ij,jk->ik", x, B), A),
    (lambda x: np.tensordot(x, B, axes=1), lambda x: tl.tensordot(x, B, axes=1), A),
    (lambda x: np.dot(x, V), lambda x: tl.dot(x, V), A),
    (lambda x: np.matmul(x, B), lambda x: tl.matmul(x, B), A),
    (lambda x: B.T @ x, lambda x: tl.matmul(B.T, x), A),
    (lambda x: np.outer(x, V), lambda x: tl.outer(x, V), V),
    (lambda x: np.trace(x), tl.trace, A),
    (lambda x: np.linalg.trace(x[None]), lambda x: tl.trace(x[None], axis1=1, axis2=2), A),
    (lambda x: np.linalg.diagonal(x), lambda x: tl.diagonal(x, axis1=-2, axis2=-1), A),
    (lambda x: np.linalg.vector_norm(x, axis=(0, 1)), lambda x: tl.norm(tl.ravel(x)), B),
    (lambda x: np.linalg.matrix_norm(x), lambda x: tl.norm(x, "fro"), B),
    (lambda x: np.linalg.outer(x, x), lambda x: tl.outer(x, x), V),
    (lambda x: np.reshape(x, (4, 3)), lambda x: tl.reshape(x, (4, 3)), B),
    (lambda x: np.transpose(x), tl.transpose, B),
    (lambda x: np.pad(x, 1), lambda x: tl.pad(x, 1), B),
    (lambda x: np.clip(x, 0.2, 0.8), lambda x: tl.clip(x, 0.2, 0.8), V),
    (lambda x: np.cumsum(x), tl.cumsum, B),
    (lambda x: np.prod(x, axis=1), lambda x: tl.prod(x, axis=1), B),
    (lambda x: np.max(x, axis=0), lambda x: tl.max(x, axis=0), B),
    (lambda x: np.amin(x), tl.min, B),
    (lambda x: np.std(x, ddof=1), lambda x: tl.std(x, ddof=1), B),
    (lambda x: np.add.reduce(x), lambda x: tl.sum(x, axis=0), B),
    (lambda x: np.maximum.reduce(x, axis=1), lambda x: tl.max(x, axis=1), B),
    (lambda x: np.add.accumulate(x), lambda x: tl.cumsum(x, axis=0), B),
    (lambda x: np.sort(x, axis=0), lambda x: tl.sort(x, axis=0), B),
    (lambda x: np.hstack([x, x]), lambda x: tl.concatenate([x, x], axis=1), B),
    (lambda x: np.diff(x), lambda x: x[:, 1:] - x[:, :-1], B),
]


@pytest.mark.parametrize("case", range(len(PAIRS)))
def test_numpy_spelling_records_the_same_operation(case):
    through_numpy, through_tl, x0 = PAIRS[case]
    x = tl.param(x0)
    y = through_numpy(x)
    assert tl.istracked(y)
    np.testing.assert_allclose(tl.data(y), tl.data(through_tl(x0)))
    g_numpy = tl.gradient(lambda x: tl.sum(through_numpy(x) * 1.5), x0)[0]
    g_tl = tl.gradient(lambda x: tl.sum(through_tl(x) * 1.5), x0)[0]
    np.testing.assert_allclose(tl.data(g_numpy), tl.data(g_tl))


METHODS = [
    (lambda x: x.max(axis=0), lambda x: tl.max(x, axis=0)),
    (lambda x: x.min(), tl.min),
    (lambda x: x.std(), tl.std),
    (lambda x: x.var(ddof=1), lambda x: tl.var(x, ddof=1)),
    (lambda x: x.sum(axis=1, keepdims=True), lambda x: tl.sum(x, axis=1, keepdims=True)),
    (lambda x: x.mean(0), lambda x: tl.mean(x, axis=0)),
    (lambda x: x.prod(), tl.prod),
    (lambda x: x.cumsum(axis=1), lambda x: tl.cumsum(x, axis=1)),
    (lambda x: x.clip(0.0, 0.5), lambda x: tl.clip(x, 0.0, 0.5)),
    (lambda x: x.T, tl.transpose),
    (lambda x: x.mT, lambda x: tl.swapaxes(x, -1, -2)),
    (lambda x: x.transpose(1, 0), tl.transpose),
    (lambda x: x.reshape(4, 3), lambda x: tl.reshape(x, (4, 3))),
    (lambda x: x.flatten(), tl.ravel),
    (lambda x: x.ravel(), tl.ravel),
    (lambda x: x.swapaxes(0, 1), tl.transpose),
    (lambda x: x[None].squeeze(0), lambda x: x),
    (lambda x: x.repeat(2, axis=1), lambda x: tl.repeat(x, 2, axis=1)),
    (lambda x: x.take([0, 0], axis=1), lambda x: tl.take(x, [0, 0], axis=1)),
    (lambda x: x.dot(B.T), lambda x: tl.matmul(x, B.T)),
    (lambda x: x[:, :3].trace(), lambda x: tl.trace(x[:, :3])),
    (lambda x: x.diagonal(1), lambda x: tl.diagonal(x, 1)),
    (lambda x: x.astype(np.float64), lambda x: x),
    (lambda x: x.copy(), lambda x: x),
    (lambda x: abs(x), tl.abs),
    (lambda x: -x + (+x) * 2, lambda x: x),
    (lambda x: 2.0**x, lambda x: tl.exp(x * np.log(2.0))),
]


@pytest.mark.parametrize("case", range(len(METHODS)))
def test_methods_and_operators_record_the_operation(case):
    method, function = METHODS[case]
    x = tl.param(B)
    assert tl.istracked(method(x))
    np.testing.assert_allclose(tl.data(method(x)), tl.data(function(x)))
    g_method = tl.gradient(lambda x: tl.sum(method(x) * method(x)), B)[0]
    g_function = tl.gradient(lambda x: tl.sum(function(x) * function(x)), B)[0]
    np.testing.assert_allclose(tl.data(g_method), tl.data(g_function))


@pytest.mark.parametrize(
    "plain",
    [
        np.sign,
        np.floor,
        np.ceil,
        np.isnan,
        np.argmax,
        np.argsort,
        np.round,
        np.count_nonzero,
        np.shape,
        np.zeros_like,
        lambda x: np.greater(x, 0),
        lambda x: np.where(x > 0),
        lambda x: np.isclose(x, 0.5),
        lambda x: np.floor_divide(x, 2),
        lambda x: x > 0,
        lambda x: x // 2,
        lambda x: x.argmax(),
        lambda x: x.round(),
        lambda x: x.any(),
    ],
)
def test_non_differentiable_functions_give_plain_results(plain):
    x = tl.param(B)
    result = plain(x)
    assert not tl.istracked(result)
    if isinstance(result, tuple):
        result = result[0]
    assert not isinstance(result, tl.Tracked)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda x: np.linalg.qr(x), "numpy.linalg.qr"),
        (lambda x: np.linalg.lstsq(x, x), "numpy.linalg.lstsq"),
        (lambda x: np.fft.fft(x), "numpy.fft.fft"),
        (lambda x: np.unique(x), "numpy.unique"),
        (lambda x: np.cumprod(x), "numpy.cumprod"),
        (lambda x: np.nextafter(x, 2), "numpy.nextafter"),
        (lambda x: np.add.outer(x, x), "numpy.add.outer"),
        (lambda x: np.median(x), "numpy.median"),
    ],
)
def test_a_numpy_function_without_a_rule_is_an_error_naming_it(call, name):
    with pytest.raises(TypeError, match="^" + re.escape(name) + ": trackerlab has no gradient rule for it"):
        call(tl.param(A))


def test_writing_into_a_tracked_value_is_an_error():
    x = tl.param(V)
    with pytest.raises(TypeError, match=r"numpy\.sin: out= cannot write into a tracked value"):
        np.sin(x, out=np.empty(3))
    with pytest.raises(TypeError, match=r"numpy\.add: where= is not supported"):
        np.add(x, 1.0, where=np.array([True, False, True]))


def test_np_asarray_gives_the_plain_data():
    x = tl.param(V)
    a = np.asarray(x)
    assert type(a) is np.ndarray and not tl.istracked(a)


def test_every_dispatch_entry_names_a_numpy_function_and_a_tl_function():
    public = functions()
    for (module, name), target in numpy_protocol.FUNCTIONS.items():
        target = target if isinstance(target, str) else target[0]
        assert target in public, f"{module}.{name} dispatches to {target}, which tl lacks"
        if np.lib.NumpyVersion(np.__version__) >= "2.1.0":
            assert hasattr(importlib.import_module(module), name), f"{module}.{name} is no NumPy function"
    for ufunc, target in numpy_protocol.UFUNCS.items():
        assert target in public and isinstance(getattr(np, ufunc, None), np.ufunc)


def test_every_operation_numpy_has_is_reachable_through_numpy():
    meaning_differs = {"identity"}  # np.identity makes an identity matrix
    spelled = numpy_protocol.numpy_spellings()
    for name in tl.supported_operations():
        f = getattr(np, name, None)
        if f is None or name in meaning_differs:
            continue
        assert name in spelled, f"np.{name} exists but does not dispatch to tl.{name}"
        if isinstance(f, np.ufunc):
            assert f.__name__ in numpy_protocol.UFUNCS
        else:
            assert ("numpy", name) in numpy_protocol.FUNCTIONS


@pytest.mark.parametrize("ufunc", sorted(numpy_protocol.UFUNCS))
def test_each_ufunc_gives_numpys_value_and_records_it(ufunc):
    f = getattr(np, ufunc)
    x0 = np.array([[1.2, 1.5, 2.0], [1.7, 1.1, 2.5]])
    args = (x0,) if f.nin == 1 else (x0, x0[::-1] * 0.9)
    if ufunc == "matmul":
        args = (x0, x0.T)
    elif ufunc in ("arcsin", "arccos", "arctanh"):
        args = (x0 / 3,)
    expected = f(*args)
    tracked = f(tl.param(args[0]), *args[1:])
    assert tl.istracked(tracked) and tracked.tracker.f.name == numpy_protocol.UFUNCS[ufunc]
    np.testing.assert_allclose(tl.data(tracked), expected)
    np.testing.assert_allclose(tl.data(getattr(tl, numpy_protocol.UFUNCS[ufunc])(*args)), expected)
