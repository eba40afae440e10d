"""NumPy on tracked values: ufuncs, functions (``np.linalg`` by module and name), methods and operators
are recorded; non-differentiable functions give plain results; the rest is a clear error."""

import importlib
import re

import numpy as np
import pytest

import trackerlab as tl
from trackerlab.ops import numpy_protocol
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
    np.testing.assert_allclose(tl.data(y), through_numpy(x0))  # NumPy's own value, on the plain array
    np.testing.assert_allclose(tl.data(through_tl(x0)), through_numpy(x0))
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
    np.testing.assert_allclose(tl.data(method(x)), method(B))  # NumPy's own method, on the plain array
    np.testing.assert_allclose(tl.data(function(x)), method(B))
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
    x = tl.param(B - 0.5)  # signs of both kinds, and values that floor and ceil change
    result = plain(x)
    expected = plain(B - 0.5)  # NumPy's own answer on the plain array
    assert not tl.istracked(result)
    if isinstance(result, tuple):
        assert len(result) == len(expected)
        for r, e in zip(result, expected):
            assert not tl.istracked(r) and not isinstance(r, tl.Tracked)
            np.testing.assert_array_equal(r, e)
    else:
        assert not isinstance(result, tl.Tracked)
        assert np.shape(result) == np.shape(expected)
        np.testing.assert_array_equal(result, expected)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda x: np.linalg.qr(x), "numpy.linalg.qr"),
        (lambda x: np.linalg.lstsq(x, x), "numpy.linalg.lstsq"),
        (lambda x: np.fft.fft(x), "numpy.fft.fft"),
        (lambda x: np.unique(x), "numpy.unique"),
        (lambda x: np.gradient(x), "numpy.gradient"),
        (lambda x: np.nextafter(x, 2), "numpy.nextafter"),
        (lambda x: np.add.reduceat(x, [0, 1]), "numpy.add.reduceat"),
    ],
)
def test_a_numpy_function_without_a_rule_is_an_error_naming_it(call, name):
    with pytest.raises(TypeError, match="^" + re.escape(name) + ": trackerlab has no gradient rule for it"):
        call(tl.param(A))


def test_writing_into_a_tracked_value_is_an_error():
    x = tl.param(V)
    with pytest.raises(TypeError, match=r"numpy\.sin: out= cannot write into a tracked value"):
        np.sin(x, out=x)
    with pytest.raises(TypeError, match=r"numpy\.sin: out= is a plain array, which cannot hold a tracked result"):
        np.sin(x, out=np.empty(3))
    with pytest.raises(TypeError, match=r"numpy\.add: where= is not supported"):
        np.add(x, 1.0, where=np.array([True, False, True]))


def test_np_asarray_refuses_and_tl_data_gives_the_plain_data():
    x = tl.param(V)
    with pytest.raises(TypeError, match="tracking would be lost"):
        np.asarray(x)
    a = np.asarray(tl.data(x))
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


# ---------------------------------------------------------------- every NumPy spelling against NumPy itself

# The cases of functions that need more than one matrix argument; every other spelling is called on the
# matrix A alone. ``check_grads`` then evaluates the same case on plain arrays, that is with NumPy's own
# function, so the finite differences compare trackerlab's gradient with NumPy's function too.
C = rng.uniform(-1, 1, (3, 3))
SPELLED = {
    "np.array_split": lambda x: np.array_split(x, 2, axis=1)[1],
    "np.astype": lambda x: np.astype(x, np.float64),
    "np.broadcast_to": lambda x: np.broadcast_to(x, (2, 3, 3)),
    "np.clip": lambda x: np.clip(x, 0.0, 1.0),
    "np.concatenate": lambda x: np.concatenate([x, 2 * x[:1]]),
    "np.cross": lambda x: np.cross(x, C),
    "np.cumulative_sum": lambda x: np.cumulative_sum(x, axis=1),
    "np.dot": lambda x: np.dot(x, C),
    "np.einsum": lambda x: np.einsum("ij,kj->ik", x, C),
    "np.expand_dims": lambda x: np.expand_dims(x, 1),
    "np.hstack": lambda x: np.hstack([x, 2 * x[:, :1]]),
    "np.inner": lambda x: np.inner(x, C),
    "np.linalg.cholesky": lambda x: np.linalg.cholesky(x @ x.T),
    "np.linalg.cross": lambda x: np.linalg.cross(x, C),
    "np.linalg.matmul": lambda x: np.linalg.matmul(x, C),
    "np.linalg.matrix_power": lambda x: np.linalg.matrix_power(x, 3),
    "np.linalg.multi_dot": lambda x: np.linalg.multi_dot([x, C, x]),
    "np.linalg.outer": lambda x: np.linalg.outer(x[0], x[1]),
    "np.linalg.slogdet": lambda x: np.linalg.slogdet(x)[1],
    "np.linalg.solve": lambda x: np.linalg.solve(x, C[:, 0]),
    "np.linalg.tensordot": lambda x: np.linalg.tensordot(x, C, axes=1),
    "np.linalg.vecdot": lambda x: np.linalg.vecdot(x, C),
    "np.moveaxis": lambda x: np.moveaxis(x[None], 0, 2),
    "np.outer": lambda x: np.outer(x[0], x[1]),
    "np.pad": lambda x: np.pad(x, ((1, 0), (0, 2))),
    "np.repeat": lambda x: np.repeat(x, 2, axis=1),
    "np.reshape": lambda x: np.reshape(x, (9,)),
    "np.roll": lambda x: np.roll(x, 1, axis=1),
    "np.split": lambda x: np.split(x, 3, axis=1)[1],
    "np.squeeze": lambda x: np.squeeze(x[:, None]),
    "np.stack": lambda x: np.stack([x, 2 * x], axis=1),
    "np.swapaxes": lambda x: np.swapaxes(x[None], 0, 2),
    "np.take": lambda x: np.take(x, [2, 0, 0], axis=1),
    "np.take_along_axis": lambda x: np.take_along_axis(x, np.array([[2, 0], [1, 1], [0, 2]]), axis=1),
    "np.tensordot": lambda x: np.tensordot(x, C, axes=1),
    "np.tile": lambda x: np.tile(x, (2, 1)),
    "np.vdot": lambda x: np.vdot(x, C),
    "np.vstack": lambda x: np.vstack([x, 2 * x[:1]]),
    "np.where": lambda x: np.where(A > 3.0, x, 0.5 * x),
    "np.append": lambda x: np.append(x, 2 * x[0]),
    "np.divmod": lambda x: np.divmod(x, 0.7)[1],  # x / 0.7 stays 0.15 away from an integer
    "np.dsplit": lambda x: np.dsplit(np.stack([x, 2 * x], axis=2), 2)[1],
    "np.hsplit": lambda x: np.hsplit(x, 3)[1],
    "np.vsplit": lambda x: np.vsplit(x, [1])[1],
    "np.kron": lambda x: np.kron(x, C[:2, :2]),
    "np.linalg.eig": lambda x: np.real(np.linalg.eig(x)[0]) + np.imag(np.linalg.eig(x)[1] * np.conj(np.linalg.eig(x)[1])),
    "np.linalg.eigh": lambda x: np.linalg.eigh(x)[1] * np.linalg.eigh(x)[1][:1],
    "np.linalg.eigvals": lambda x: np.imag(np.linalg.eigvals(x)) ** 2,
    "np.linalg.svd": lambda x: np.linalg.svd(x)[1] * np.linalg.svd(x)[0][:1] * np.linalg.svd(x)[2][:, :1].T,
    "np.linspace": lambda x: np.linspace(x[0], x[1], 4, axis=1),
    "np.partition": lambda x: np.partition(x, 1, axis=1),
    "np.rollaxis": lambda x: np.rollaxis(x[None], 2),
    "np.select": lambda x: np.select([A > 3.0, A < 0], [x, x**2], default=2 * x),
    "np.quantile": lambda x: np.quantile(x, [0.3, 0.8], axis=1),
    "np.percentile": lambda x: np.percentile(x, 40),
    "np.interp": lambda x: np.interp(np.array([0.2, 1.3, 2.5]), [0.0, 1.0, 2.0], x[1] * x[0, 0]),
    "np.convolve": lambda x: np.convolve(x[0], x[1, :2], mode="same"),
    "np.correlate": lambda x: np.correlate(x[0], x[1], "full"),
}
FUNCTION_SPELLINGS = sorted(
    {spelling for spellings in numpy_protocol.numpy_spellings().values() for spelling in spellings}
    - {f"np.{ufunc}" for ufunc in numpy_protocol.UFUNCS}  # ufuncs: test_each_ufunc_gives_numpys_value_and_records_it
)


def _numpy_function(spelling: str):
    value = np
    for part in spelling.split(".")[1:]:
        value = getattr(value, part)
    return value


@pytest.mark.parametrize("spelling", FUNCTION_SPELLINGS)
def test_each_numpy_function_gives_numpys_value_and_gradient(spelling):
    f = SPELLED.get(spelling) or _numpy_function(spelling)
    y = f(tl.param(A))
    assert tl.istracked(y), spelling
    expected = f(A)  # NumPy's own function, on the plain matrix
    assert np.shape(tl.data(y)) == np.shape(expected)
    np.testing.assert_allclose(tl.data(y), expected, rtol=1e-12, atol=1e-12)
    tl.check_grads(f, A)


def test_every_case_names_a_spelling():
    assert set(SPELLED) <= set(FUNCTION_SPELLINGS)
