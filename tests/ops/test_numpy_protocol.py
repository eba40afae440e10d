"""NumPy on tracked values: ufuncs, functions (``np.linalg`` by module and name), methods and operators
are recorded; non-differentiable functions give plain results; the rest is a clear error."""

import importlib
import re
import warnings

import numpy as np
import pytest
from differences import differences

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
        (lambda x: np.nextafter(x, 2), "numpy.nextafter"),
        (lambda x: np.logaddexp.reduceat(x, [0, 1]), "numpy.logaddexp.reduceat"),
        (lambda x: np.subtract.reduceat(x, [0, 1]), "numpy.subtract.reduceat"),
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
    "np.gradient": lambda x: np.gradient(x, 0.5, edge_order=2)[1],
    "np.piecewise": lambda x: np.piecewise(x, [tl.data(x) > 0.5], [lambda t: t * t, lambda t: 2 * t]),
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
    "np.linalg.eig": lambda x: (
        np.real(np.linalg.eig(x)[0]) + np.imag(np.linalg.eig(x)[1] * np.conj(np.linalg.eig(x)[1]))
    ),
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
    "np.lib.stride_tricks.sliding_window_view": lambda x: np.lib.stride_tricks.sliding_window_view(x, (2, 2)),
}
FUNCTION_SPELLINGS = sorted(
    {spelling for spellings in numpy_protocol.numpy_spellings().values() for spelling in spellings}
    - {f"np.{ufunc}" for ufunc in numpy_protocol.UFUNCS}  # ufuncs: test_each_ufunc_gives_numpys_value_and_records_it
    - {f"scipy.special.{ufunc}" for ufunc in numpy_protocol.SCIPY_UFUNCS}  # SciPy's: tests/test_rules_special.py
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


# ----------------------------------------------------------------------------------------------------
# NumPy's array subclasses whose arithmetic is not an array's: refused by name, as constants and as parameters

MASKED = np.ma.masked_array([1.5, 2.0, 4.5, 6.0], mask=[0, 1, 0, 0])
MATRIX = np.matrix([[1.0, 2.0], [3.0, 4.0]])


@pytest.mark.parametrize(
    "call",
    [
        lambda p: tl.mean((p - MASKED) ** 2),
        lambda p: np.subtract(p, MASKED),
        lambda p: tl.mean(tl.square(tl.subtract(p, MASKED))),
        lambda p: p * MASKED,
    ],
)
def test_a_masked_array_constant_is_refused_by_name(call):
    with pytest.raises(TypeError, match=r"argument 2 is a NumPy masked array.*y\.compressed\(\)"):
        call(tl.param([1.0, 2.0, 3.0, 4.0]))


def test_the_masked_loss_written_with_weights_has_numpys_value_and_the_masked_gradient():
    p = tl.param([1.0, 2.0, 3.0, 4.0])
    w = ~np.ma.getmaskarray(MASKED)
    loss = tl.sum(w * (p - MASKED.data) ** 2) / w.sum()
    assert tl.data(loss) == pytest.approx(float(np.mean((tl.data(p) - MASKED) ** 2)))
    tl.back_(loss)
    np.testing.assert_allclose(p.grad, [-1 / 3, 0.0, -1.0, -4 / 3])  # 2 (p - y) / 3 where y is not masked


@pytest.mark.parametrize(
    "call, position",
    [
        (lambda w: w * MATRIX, 2),
        (lambda w: MATRIX * w, 1),
        (lambda w: np.multiply(w, MATRIX), 2),
        (lambda w: w @ MATRIX, 2),
        (lambda w: tl.sum(w + MATRIX), 2),
    ],
)
def test_an_np_matrix_constant_is_refused_by_name(call, position):
    with pytest.raises(TypeError, match=rf"argument {position} is an np\.matrix.*np\.asarray\(M\)"):
        call(tl.param(np.ones((2, 2))))


@pytest.mark.parametrize("value, kind", [(MASKED, "a NumPy masked array"), (MATRIX, r"an np\.matrix")])
def test_a_parameter_of_a_masked_array_or_a_matrix_is_refused(value, kind):
    with pytest.raises(TypeError, match=f"param: argument 1 is {kind}"):
        tl.param(value)
    with pytest.raises(TypeError, match=f"x.data = ...: argument 1 is {kind}"):
        tl.param(np.ones(value.shape)).data = value


def test_other_array_subclasses_still_work_as_constants():
    x = tl.param([1.0, 2.0])
    y = x * tl.param([3.0, 4.0]).data  # the read-only view x.data hands out
    tl.back_(tl.sum(y))
    np.testing.assert_array_equal(x.grad, [3.0, 4.0])


# ----------------------------------------------------------------------------------------------------
# Functions composed of operations refuse what NumPy refuses, with NumPy's reason, not an inner operation's

M3 = np.eye(3) + 1


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize(
    "call, plain_value",
    [
        (lambda np_, v: np_.diff(v(2.0)), "diff"),
        (lambda np_, v: np_.diff(v([1.0, 2.0, 3.0]), axis=5), "diff"),
        (lambda np_, v: np_.percentile(v(M3), 200), "percentile"),
        (lambda np_, v: np_.quantile(v(M3), 2.0), "quantile"),
        (lambda np_, v: np_.matrix_transpose(v([1.0, 2.0, 3.0])), "matrix_transpose"),
        (lambda np_, v: np_.linalg.matrix_power(v(M3), 1.5), "matrix_power"),
        (lambda np_, v: np_.linalg.matrix_power(v([1.0, 2.0, 3.0]), 2), "matrix_power"),
        (lambda np_, v: np_.linalg.matrix_power(v(np.ones((2, 3))), 2), "matrix_power"),
    ],
)
def test_a_composed_function_refuses_what_numpy_refuses_naming_itself(call, plain_value):
    with pytest.raises((ValueError, TypeError, IndexError)) as numpys:
        call(np, lambda v: np.asarray(v))
    for spelling in (np, tl):
        if spelling is tl and plain_value == "matrix_power":
            continue
        with pytest.raises(type(numpys.value)) as ours:
            call(spelling, tl.param)
        message = str(ours.value)
        assert message.startswith(f"{plain_value}: ")
        assert "index out of range" not in message and "unsupported operand" not in message
        assert "swapaxes" not in message and "getitem" not in message


# ----------------------------------------------------------------------------------------------------
# np.gradient (finite differences of samples, not tl.gradient), np.real_if_close, np.piecewise, ufunc.reduceat

G = np.random.default_rng(5).standard_normal((5, 4))
COORDS = np.array([0.0, 1.0, 3.0, 4.5, 7.0])


@pytest.mark.parametrize(
    "args, kwargs",
    [
        ((), {}),
        ((0.5,), {}),
        ((2.0, 0.3), {}),
        ((COORDS,), {"axis": 0}),
        ((), {"edge_order": 2}),
        ((COORDS, np.array([0.0, 0.5, 1.0, 2.0])), {"edge_order": 2}),
        ((0.25,), {"axis": -1, "edge_order": 2}),
    ],
)
def test_np_gradient_of_a_tracked_array_has_numpys_value_and_a_checked_gradient(args, kwargs):
    expected = np.gradient(G, *args, **kwargs)
    got = np.gradient(tl.param(G), *args, **kwargs)
    expected, got = (expected, got) if isinstance(expected, tuple) else ((expected,), (got,))
    assert len(got) == len(expected)
    for e, g in zip(expected, got):
        np.testing.assert_allclose(tl.data(g), e, rtol=1e-12, atol=1e-12)
    weights = [np.random.default_rng(i).standard_normal(e.shape) for i, e in enumerate(expected)]

    def loss(x):
        out = np.gradient(x, *args, **kwargs)
        out = out if isinstance(out, tuple) else (out,)
        return tl.sum([tl.sum(o * w) for o, w in zip(out, weights)])

    tl.check_grads(loss, G)


def test_np_gradient_refuses_what_numpy_refuses():
    with pytest.raises(ValueError, match="at least \\(edge_order \\+ 1\\) elements"):
        np.gradient(tl.param([1.0, 2.0]), edge_order=2)
    with pytest.raises(TypeError, match="spacing is tracked"):
        np.gradient(tl.param([1.0, 2.0, 4.0]), tl.param(0.5))


def test_np_real_if_close_drops_imaginary_parts_within_the_tolerance_only():
    close = np.real_if_close(tl.param(np.array([1 + 1e-17j, 2 + 0j])))
    assert close.dtype == np.float64
    np.testing.assert_array_equal(tl.data(close), [1.0, 2.0])
    far = tl.param(np.array([1 + 1j]))
    assert np.real_if_close(far) is far
    real = tl.param([1.0, 2.0])
    assert np.real_if_close(real) is real
    tl.check_grads(lambda a: tl.sum(np.real_if_close(a * (1 + 0j)) ** 3), np.array([0.5, -1.5]))


PIECES = np.array([-1.7, -0.6, 0.3, 0.8, 1.4, 2.2])


@pytest.mark.parametrize(
    "conditions, functions",
    [
        (lambda v: [v < 0, v >= 1], [lambda t: t**2, lambda t: 3 * t, 0.5]),
        (lambda v: [v < 0], [lambda t: tl.sin(t)]),
        (lambda v: [v < 1, v > 0], [lambda t: t, lambda t: tl.exp(t)]),  # overlapping: the later one wins
        (lambda v: v > 0.5, [lambda t: t * t, -1.0]),
    ],
)
def test_np_piecewise_of_a_tracked_array_has_numpys_value_and_a_checked_gradient(conditions, functions):
    def plain_function(f):
        return (lambda t: tl.data(f(tl.param(t)))) if callable(f) else f

    expected = np.piecewise(PIECES, conditions(PIECES), [plain_function(f) for f in functions])
    np.testing.assert_allclose(tl.data(np.piecewise(tl.param(PIECES), conditions(PIECES), functions)), expected)
    tl.check_grads(lambda x: tl.sum(np.piecewise(x, conditions(tl.data(x)), functions) * np.arange(6.0)), PIECES)


@pytest.mark.parametrize("ufunc", [np.add, np.multiply, np.maximum, np.minimum])
@pytest.mark.parametrize("indices, axis", [([0, 2, 1, 4], 0), ([0, 3], 1), ([1], 0), ([0, 1, 2, 3], -1)])
def test_ufunc_reduceat_of_a_tracked_array_has_numpys_value_and_a_checked_gradient(ufunc, indices, axis):
    np.testing.assert_allclose(
        tl.data(ufunc.reduceat(tl.param(G), indices, axis=axis)), ufunc.reduceat(G, indices, axis=axis)
    )
    tl.check_grads(lambda x: tl.sum(ufunc.reduceat(x, indices, axis=axis) ** 2), G)


def test_ufunc_reduceat_refuses_an_index_out_of_bounds():
    with pytest.raises(IndexError, match="out-of-bounds"):
        np.add.reduceat(tl.param([1.0, 2.0]), [0, 5])


# NumPy's own spellings on tracked values, as a new user writes them, each checked against NumPy's value and against
# central differences of ``Σ W ∘ f`` with random, non-symmetric weights (computed here, not with ``tl.check_grads``),
# through ``back_``, ``gradient`` and ``forward``.
# ----------------------------------------------------------------------------------------------------


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
    # slogdet's sign is tracked: for a complex matrix, det/|det| = e^(iθ) moves with it, and has a gradient
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
