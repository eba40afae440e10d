"""An independent gradient check: every gradient here is compared with central finite differences computed
in this file (not with ``tl.check_grads``), of ``Σ W ∘ f(x)`` with random weights ``W`` that are not
symmetric, so a transposed or permuted gradient cannot pass. The inputs come in the layouts a user makes
(negative strides ``x[::-1]``, steps ``x[:, ::2]``, Fortran order, transposes), in float32 (the gradient
stays float32), as 0-d arrays, NumPy scalars and Python ints, broadcast in every operand position, through
NumPy's spellings (``np.sum(x, axis=0)``, ``np.add.reduce``, methods, operators with an ndarray on the left)
and with settings given by position or by keyword; and through ``gradient``, ``back_``, ``forward`` and to
fourth order."""

import math

import numpy as np
import pytest

import trackerlab as tl

RNG = np.random.default_rng(20261122)


def _numbers(*shape, low=-1.5, high=1.5):
    return RNG.uniform(low, high, shape)


def _positive(*shape):
    return RNG.uniform(0.5, 2.0, shape)


def _finite_differences(f, args, W, eps=1e-6):
    """d Σ W ∘ f(args) / d args[i] for each array argument, by central differences in float64."""
    args = [np.array(a, dtype=np.float64) for a in args]
    grads = []
    for i, a in enumerate(args):
        g = np.zeros(a.shape)
        for index in np.ndindex(a.shape):
            up, down = a.copy(), a.copy()
            up[index] += eps
            down[index] -= eps
            plus = np.sum(W * np.asarray(tl.data(f(*args[:i], up, *args[i + 1 :]))))
            minus = np.sum(W * np.asarray(tl.data(f(*args[:i], down, *args[i + 1 :]))))
            g[index] = (plus - minus) / (2 * eps)
        grads.append(g)
    return grads


def _layouts(a):
    """``a``'s values in other memory layouts: what ``x[::-1]``, ``x[:, ::2]`` and ``x.T`` give a user."""
    out = {"contiguous": a}
    if a.ndim and a.size:
        out["negative strides"] = np.flip(np.flip(a).copy())
        out["step"] = np.repeat(a, 2, axis=-1)[..., ::2]
    if a.ndim >= 2:
        out["fortran"] = np.asfortranarray(a)
        out["transposed"] = np.ascontiguousarray(np.swapaxes(a, -1, -2)).swapaxes(-1, -2)
    return out


def _by_back(f, args, W):
    params = [tl.param(a) for a in args]
    y = f(*params)
    tl.back_(y, W) if np.ndim(tl.data(y)) else tl.back_(y * float(W))
    return [p.grad for p in params]


def _by_gradient(f, args, W):
    return [tl.data(g) for g in tl.gradient(lambda *xs: tl.sum(f(*xs) * W), *args)]


def _by_forward(f, args, W):
    _, back = tl.forward(f, *args)
    return [tl.data(g) for g in back(W)]


def _assert_gradients(f, args, rtol=1e-5, atol=1e-6):
    args = [np.asarray(a, dtype=np.float64) for a in args]
    W = RNG.standard_normal(np.shape(tl.data(f(*args))))
    want = _finite_differences(f, args, W)
    for layout in _layouts(args[0]):
        moved = [_layouts(a).get(layout, a) for a in args]
        for route in (_by_back, _by_gradient, _by_forward):
            got = route(f, moved, W)
            for i, (g, w) in enumerate(zip(got, want)):
                assert np.shape(g) == w.shape, f"{route.__name__}, {layout}: argument {i + 1} has shape {np.shape(g)}"
                np.testing.assert_allclose(
                    g, w, rtol=rtol, atol=atol, err_msg=f"{route.__name__}, {layout}, arg {i + 1}"
                )
    single = [a.astype(np.float32) for a in args]
    for i, g in enumerate(_by_back(f, single, W.astype(np.float32))):
        assert np.asarray(g).dtype == np.float32, f"float32 argument {i + 1} got a {np.asarray(g).dtype} gradient"
        np.testing.assert_allclose(g, want[i], rtol=2e-3, atol=2e-3, err_msg=f"float32, arg {i + 1}")


UNARY = {
    "sin": _numbers,
    "cos": _numbers,
    "tan": _numbers,
    "exp": _numbers,
    "expm1": _numbers,
    "exp2": _numbers,
    "log": _positive,
    "log2": _positive,
    "log10": _positive,
    "log1p": _positive,
    "sqrt": _positive,
    "cbrt": _positive,
    "reciprocal": _positive,
    "square": _numbers,
    "tanh": _numbers,
    "sinh": _numbers,
    "cosh": _numbers,
    "arcsinh": _numbers,
    "arctan": _numbers,
    "arcsin": lambda *s: _numbers(*s, low=-0.8, high=0.8),
    "arccos": lambda *s: _numbers(*s, low=-0.8, high=0.8),
    "arctanh": lambda *s: _numbers(*s, low=-0.8, high=0.8),
    "arccosh": lambda *s: 1.5 + _positive(*s),
    "sigmoid": _numbers,
    "softplus": _numbers,
    "log_sigmoid": _numbers,
    "silu": _numbers,
    "gelu": _numbers,
    "elu": _numbers,
    "sinc": _numbers,
    "deg2rad": _numbers,
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_in_every_layout_and_float32(name):
    _assert_gradients(getattr(tl, name), [UNARY[name](3, 4)])


# every broadcast: equal shapes, a row, a column against a row, a 0-d array, a size-1 axis, more dimensions
SHAPES = [
    ((3, 4), (3, 4)),
    ((3, 4), (4,)),
    ((4,), (3, 4)),
    ((3, 1), (1, 4)),
    ((), (3, 4)),
    ((3, 4), ()),
    ((2, 1, 4), (3, 1)),
]
BINARY = [
    "add",
    "subtract",
    "multiply",
    "divide",
    "power",
    "float_power",
    "hypot",
    "arctan2",
    "logaddexp",
    "logaddexp2",
]


@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("name", BINARY)
def test_binary_broadcast_in_every_position(name, shapes):
    _assert_gradients(getattr(tl, name), [_positive(*shapes[0]), _positive(*shapes[1])])


OPERATORS = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a / b,
    "**": lambda a, b: a**b,
    "@": lambda a, b: a @ b,
}


@pytest.mark.parametrize("side", ["ndarray on the left", "ndarray on the right"])
@pytest.mark.parametrize("symbol", sorted(OPERATORS))
def test_operators_with_a_plain_ndarray_on_either_side(symbol, side):
    plain = _positive(3, 3)
    op = OPERATORS[symbol]
    f = (lambda b: op(plain, b)) if side == "ndarray on the left" else (lambda a: op(a, plain))
    _assert_gradients(f, [_positive(3, 3)])


REDUCTIONS = ["sum", "mean", "prod", "max", "min", "var", "std", "logsumexp", "nansum", "nanmean"]
AXES = [{}, {"axis": 0}, {"axis": -1}, {"axis": (0, 2)}, {"axis": 1, "keepdims": True}]


@pytest.mark.parametrize("options", AXES, ids=str)
@pytest.mark.parametrize("name", REDUCTIONS)
def test_reductions_over_axes(name, options):
    f = getattr(tl, name)
    _assert_gradients(lambda x: f(x, **options), [_numbers(3, 4, 2)])


SPELLINGS = {
    "np.sum(x, axis=0)": lambda x: np.sum(x, axis=0),
    "np.sum(x, 0, None, None, True)": lambda x: np.sum(x, 0, None, None, True),
    "np.add.reduce(x, 1)": lambda x: np.add.reduce(x, 1),
    "np.multiply.reduce(x, axis=0)": lambda x: np.multiply.reduce(x, axis=0),
    "np.maximum.reduce(x, axis=1)": lambda x: np.maximum.reduce(x, axis=1),
    "np.add.accumulate(x, axis=1)": lambda x: np.add.accumulate(x, axis=1),
    "np.cumsum(x, 0)": lambda x: np.cumsum(x, 0),
    "np.mean(x, 1, None, None, True)": lambda x: np.mean(x, 1, None, None, True),
    "np.var(x, 1, None, None, 1)": lambda x: np.var(x, 1, None, None, 1),
    "np.std(x, ddof=1)": lambda x: np.std(x, ddof=1),
    "np.var(x, axis=1, correction=1)": lambda x: np.var(x, axis=1, correction=1),
    "np.max(x, 1, None, True)": lambda x: np.max(x, 1, None, True),
    "np.amin(x, axis=0)": lambda x: np.amin(x, axis=0),
    "x.sum()": lambda x: x.sum(),
    "x.sum(0, None, None, True)": lambda x: x.sum(0, None, None, True),
    "x.var(0, None, None, 1)": lambda x: x.var(0, None, None, 1),
    "x.max(1, None, True)": lambda x: x.max(1, None, True),
    "x.prod(axis=1)": lambda x: x.prod(axis=1),
    "x.cumsum(1)": lambda x: x.cumsum(1),
    "x.T": lambda x: x.T,
    "x.mT": lambda x: x.mT,
    "x.transpose(1, 0)": lambda x: x.transpose(1, 0),
    "x.reshape(4, 3)": lambda x: x.reshape(4, 3),
    "x.reshape((2, -1))": lambda x: x.reshape((2, -1)),
    "x.ravel()": lambda x: x.ravel(),
    "x.flatten('C')": lambda x: x.flatten("C"),
    "np.reshape(x, shape=(6, 2))": lambda x: np.reshape(x, shape=(6, 2)),
    "np.transpose(x, axes=(1, 0))": lambda x: np.transpose(x, axes=(1, 0)),
    "np.swapaxes(x, 1, 0)": lambda x: np.swapaxes(x, 1, 0),
    "np.moveaxis(x, 0, -1)": lambda x: np.moveaxis(x, 0, -1),
    "np.flip(x, 1)": lambda x: np.flip(x, 1),
    "np.fliplr(x)": lambda x: np.fliplr(x),
    "np.rot90(x, 1, (1, 0))": lambda x: np.rot90(x, 1, (1, 0)),
    "np.roll(x, 1, 1)": lambda x: np.roll(x, 1, 1),
    "np.repeat(x, [1, 2, 0], 0)": lambda x: np.repeat(x, [1, 2, 0], 0),
    "np.tile(x, (2, 1))": lambda x: np.tile(x, (2, 1)),
    "np.pad(x, ((0, 1), (2, 0)), constant_values=2)": lambda x: np.pad(x, ((0, 1), (2, 0)), constant_values=2.0),
    "np.diff(x, axis=0)": lambda x: np.diff(x, axis=0),
    "np.clip(x, -0.4, 0.5)": lambda x: np.clip(x, -0.4, 0.5),
    "x.clip(None, 0.5)": lambda x: x.clip(None, 0.5),
    "np.where(mask, x, x * x)": lambda x: np.where(np.arange(12).reshape(3, 4) % 3 == 0, x, x * x),
    "np.sort(x, 0)": lambda x: np.sort(x, 0),
    "np.sort(x, None)": lambda x: np.sort(x, None),
    "np.partition(x, 1, 1)": lambda x: np.partition(x, 1, 1),
    "np.take(x, [0, 2, 2], 1)": lambda x: np.take(x, [0, 2, 2], 1),
    "x.take([5, 0, 5])": lambda x: x.take([5, 0, 5]),
    "np.take_along_axis(x, ..., 1)": lambda x: np.take_along_axis(x, np.array([[0, 0], [3, 1], [2, 2]]), 1),
    "np.diagonal(x, 1)": lambda x: np.diagonal(x, 1),
    "np.trace(x, 1)": lambda x: np.trace(x, 1),
    "np.tril(x, -1)": lambda x: np.tril(x, -1),
    "np.triu(x, 1)": lambda x: np.triu(x, 1),
    "np.linalg.norm(x, None, 1)": lambda x: np.linalg.norm(x, None, 1),
    "np.linalg.norm(x, 1, 0)": lambda x: np.linalg.norm(x, 1, 0),
    "np.linalg.norm(x, -np.inf, 1)": lambda x: np.linalg.norm(x, -np.inf, 1),
    "np.linalg.norm(x, 'nuc')": lambda x: np.linalg.norm(x, "nuc"),
    "np.linalg.norm(x, 2)": lambda x: np.linalg.norm(x, 2),
    "np.linalg.norm(x, -2)": lambda x: np.linalg.norm(x, -2),
    "np.einsum('ij,kj->ik', x, x)": lambda x: np.einsum("ij,kj->ik", x, x),
    "np.einsum('ij->j', x)": lambda x: np.einsum("ij->j", x),
    "np.dot(x, x.T)": lambda x: np.dot(x, x.T),
    "np.inner(x, x)": lambda x: np.inner(x, x),
    "np.outer(x, x[0])": lambda x: np.outer(x, x[0]),
    "np.tensordot(x, x, 2)": lambda x: np.tensordot(x, x, 2),
    "np.kron(x[:2, :2], x[1:, 2:])": lambda x: np.kron(x[:2, :2], x[1:, 2:]),
    "np.cross(x[:, :3], x[:, 1:])": lambda x: np.cross(x[:, :3], x[:, 1:]),
    "np.concatenate([x, x * x], 1)": lambda x: np.concatenate([x, x * x], 1),
    "np.stack([x, 2 * x], 1)": lambda x: np.stack([x, 2 * x], 1),
    "np.split(x, 2, 1)[1]": lambda x: np.split(x, 2, 1)[1],
    "np.vstack([x, x[0]])": lambda x: np.vstack([x, x[0]]),
    "x[::-1, ::2]": lambda x: x[::-1, ::2],
    "x[None, ..., None]": lambda x: x[None, ..., None],
    "x[[0, 0, 2], [3, 3, 1]]": lambda x: x[[0, 0, 2], [3, 3, 1]],
    "x[:, None, [0, 2, 2]]": lambda x: x[:, None, [0, 2, 2]],
    "x[np.array([[0], [2]]), np.array([1, 3])]": lambda x: x[np.array([[0], [2]]), np.array([1, 3])],
    "x[x > 0]": lambda x: x[tl.data(x) > 0],
    "divmod(x, 0.7)[1]": lambda x: divmod(x, 0.7)[1],
    "abs(x)": lambda x: abs(x),
    "-x": lambda x: -x,
}


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_numpy_spellings_methods_and_positional_settings(spelling):
    # values away from 0 and from multiples of 0.7, and distinct (no ties for max, sort or the 2-norm)
    x = np.array([[0.31, -0.52, 0.93, 1.64], [1.22, 0.13, -0.44, -1.05], [0.57, -1.36, 0.24, 0.85]])
    _assert_gradients(SPELLINGS[spelling], [x])


LINALG = {
    "matmul": (tl.matmul, [(3, 4), (4, 2)]),
    "matmul, batch on the left": (tl.matmul, [(2, 3, 4), (4, 2)]),
    "matmul, batch on the right": (tl.matmul, [(3, 4), (2, 4, 2)]),
    "matmul, vector on the left": (tl.matmul, [(4,), (4, 2)]),
    "matmul, vector on the right": (tl.matmul, [(3, 4), (4,)]),
    "dot, 3-d and vector": (tl.dot, [(2, 3, 4), (4,)]),
    "vecdot": (tl.vecdot, [(2, 3), (3,)]),
    "tensordot, axes lists": (lambda a, b: tl.tensordot(a, b, axes=([1, 0], [0, 1])), [(3, 4, 2), (4, 3)]),
    "einsum, broadcast": (lambda a, b: tl.einsum("...ij,...j->...i", a, b), [(2, 3, 4), (4,)]),
    "solve": (lambda a, b: tl.solve(a + 3 * np.eye(3), b), [(3, 3), (3, 2)]),
    "solve, batch": (lambda a, b: tl.solve(a + 3 * np.eye(3), b), [(2, 3, 3), (2, 3, 2)]),
    "inv": (lambda a: tl.inv(a + 3 * np.eye(3)), [(3, 3)]),
    "det, batch": (lambda a: tl.det(a + 3 * np.eye(3)), [(2, 3, 3)]),
    "slogdet": (lambda a: tl.slogdet(a + 3 * np.eye(3))[1], [(3, 3)]),
    "pinv": (tl.pinv, [(3, 2)]),
    "svdvals": (tl.svdvals, [(3, 4)]),
    "eigvalsh": (lambda a: tl.eigvalsh(a + 4 * np.diag([1.0, 2.0, 3.0])), [(3, 3)]),
    "trace, offset": (lambda a: tl.trace(a, 1), [(3, 4)]),
    "diagonal, axes": (lambda a: tl.diagonal(a, 1, 0, 2), [(3, 2, 3)]),
}


@pytest.mark.parametrize("name", sorted(LINALG))
def test_linear_algebra_in_every_layout(name):
    f, shapes = LINALG[name]
    _assert_gradients(f, [_numbers(*shape) for shape in shapes], rtol=1e-4, atol=1e-5)


# ----------------------------------------------------------------------------------------------------
# 0-d arrays, NumPy scalars and Python ints


KINDS = {
    "Python float": 0.7,
    "Python int": 2,
    "np.float64": np.float64(0.7),
    "np.float32": np.float32(0.7),
    "np.int64": np.int64(2),
    "0-d float64": np.array(0.7),
    "0-d float32": np.array(0.7, dtype=np.float32),
}


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("name", ["sin", "exp", "tanh", "sqrt", "log", "reciprocal", "softplus", "cbrt", "square"])
def test_scalars_of_every_kind(name, kind):
    f, value = getattr(tl, name), KINDS[kind]
    x0 = float(value)
    want = (f(x0 + 1e-6) - f(x0 - 1e-6)) / 2e-6
    (g,) = tl.gradient(f, value)
    p = tl.param(value)
    tl.back_(f(p))
    single = "float32" in kind
    for got in (tl.data(g), p.grad):
        assert np.shape(got) == ()
        assert math.isclose(float(got), want, rel_tol=1e-4 if single else 1e-7, abs_tol=1e-4 if single else 1e-9)
        if single:
            assert np.asarray(got).dtype == np.float32


EMPTY = [
    ("sin", (0,), {}),
    ("exp", (2, 0), {}),
    ("sum", (0, 3), {}),
    ("sum", (2, 0), {"axis": 1}),
    ("prod", (0,), {}),
    ("cumsum", (2, 0), {"axis": 0}),
    ("mean", (2, 0), {"axis": 0}),
    ("max", (0, 3), {"axis": 1}),
    ("logsumexp", (2, 0), {"axis": 0}),
    ("softmax", (0, 3), {}),
]


@pytest.mark.parametrize(("name", "shape", "options"), EMPTY, ids=str)
def test_empty_arrays_give_empty_gradients(name, shape, options):
    x = tl.param(np.full(shape, 0.5))
    y = getattr(tl, name)(x, **options)
    if np.ndim(tl.data(y)):
        tl.back_(y, np.ones(np.shape(tl.data(y))))
    else:
        tl.back_(y)
    assert x.grad.shape == shape and x.grad.dtype == np.float64


# ----------------------------------------------------------------------------------------------------
# higher order, Jacobians and Hessians


def _nth(f, n):
    for _ in range(n):
        f = (lambda inner: lambda x: tl.gradient(inner, x)[0])(f)
    return f


X0 = 0.7
DERIVATIVES = {
    "sin": (tl.sin, [math.cos(X0), -math.sin(X0), -math.cos(X0), math.sin(X0)]),
    "x ** 5": (lambda x: x**5, [5 * X0**4, 20 * X0**3, 60 * X0**2, 120 * X0]),
    "log": (tl.log, [1 / X0, -1 / X0**2, 2 / X0**3, -6 / X0**4]),
    "1 / x": (lambda x: 1 / x, [-1 / X0**2, 2 / X0**3, -6 / X0**4, 24 / X0**5]),
    "exp(2x)": (lambda x: tl.exp(2 * x), [2**k * math.exp(2 * X0) for k in range(1, 5)]),
    "prod of a stack": (lambda x: tl.prod(tl.stack([x, x * x, x])), [4 * X0**3, 12 * X0**2, 24 * X0, 24.0]),
    "det": (
        lambda x: tl.det(tl.reshape(tl.stack([x, 1.0 + 0 * x, 2 * x, x * x]), (2, 2))),
        [3 * X0**2 - 2, 6 * X0, 6.0, 0.0],
    ),
    "getitem of a stack": (lambda x: tl.stack([x, x * x])[1] * x, [3 * X0**2, 6 * X0, 6.0, 0.0]),
    "maximum": (lambda x: tl.maximum(x * x, 0.1), [2 * X0, 2.0, 0.0, 0.0]),
    "where": (lambda x: tl.where(np.array(True), x**3, x), [3 * X0**2, 6 * X0, 6.0, 0.0]),
}


@pytest.mark.parametrize("name", sorted(DERIVATIVES))
def test_derivatives_to_fourth_order(name):
    f, wanted = DERIVATIVES[name]
    for order, want in enumerate(wanted, start=1):
        got = float(tl.data(_nth(f, order)(X0)))
        assert math.isclose(got, want, rel_tol=1e-7, abs_tol=1e-9), f"order {order}: {got} != {want}"


def _jacobian_by_differences(f, x, eps=1e-6):
    y = np.asarray(tl.data(f(x)))
    J = np.zeros(y.shape + x.shape)
    for index in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[index] += eps
        down[index] -= eps
        J[(...,) + index] = (np.asarray(tl.data(f(up))) - np.asarray(tl.data(f(down)))) / (2 * eps)
    return J


M = np.array([[0.3, -0.5, 0.9], [1.2, 0.1, -0.7]])
JACOBIANS = {
    "sin(x) * x[::-1]": lambda x: tl.sin(x) * x[::-1],
    "x @ x.T": lambda x: x @ x.T,
    "softmax(x, axis=1)": lambda x: tl.softmax(x, axis=1),
    "outer(x[0], x[1])": lambda x: tl.outer(x[0], x[1]),
}


@pytest.mark.parametrize("name", sorted(JACOBIANS))
def test_jacobian_against_differences_in_two_layouts(name):
    f = JACOBIANS[name]
    want = _jacobian_by_differences(f, M)
    np.testing.assert_allclose(tl.jacobian(f, M), want, atol=1e-6)
    np.testing.assert_allclose(tl.jacobian(f, np.flip(np.flip(M).copy())), want, atol=1e-6)


HESSIANS = {
    "sum(sin(x) x²)": lambda x: tl.sum(tl.sin(x) * x * x),
    "logsumexp(x @ x.T)": lambda x: tl.logsumexp(x @ x.T),
    "norm(x)": lambda x: tl.norm(x),
    "var(x, axis=1)[0] * std(x)": lambda x: tl.var(x, axis=1)[0] * tl.std(x),
}


@pytest.mark.parametrize("name", sorted(HESSIANS))
def test_hessian_against_differences_of_the_gradient(name):
    f = HESSIANS[name]
    want = _jacobian_by_differences(lambda x: tl.data(tl.gradient(f, x)[0]), M)
    np.testing.assert_allclose(tl.hessian(f, M), want, atol=1e-5)
    np.testing.assert_allclose(tl.hessian(f, tl.param(M)), want, atol=1e-5)
    assert tl.hessian(f, M.astype(np.float32)).dtype == np.float32


def test_forward_back_called_twice_and_checkpoint():
    x = np.array([0.3, 0.5])
    _, back = tl.forward(lambda a: tl.sin(a) * a, x)
    first = tl.data(back(np.array([1.0, 2.0]))[0]).copy()
    second = tl.data(back(np.array([3.0, 0.0]))[0])
    slope = np.cos(x) * x + np.sin(x)
    np.testing.assert_allclose(first, slope * [1.0, 2.0])
    np.testing.assert_allclose(second, slope * [3.0, 0.0])
    (g,) = tl.gradient(lambda a: tl.sum(tl.checkpoint(lambda t: tl.sin(t) * t, a) * np.array([1.0, 2.0])), x)
    np.testing.assert_allclose(tl.data(g), slope * [1.0, 2.0])
    np.testing.assert_allclose(
        tl.hessian(lambda a: tl.sum(tl.checkpoint(tl.sin, a) * np.array([1.0, 2.0])), x), np.diag(-np.sin(x) * [1, 2])
    )
