"""A tracked value given where an operation expects a setting (a number that is not one of its operands) or
as a keyword argument of a custom rule would have its gradient dropped without a word (``leaky_relu(x, a)``
with a tracked slope ``a`` would give ``x`` its gradient and ``a`` none). Each is an error naming the operation
and the argument, or, where NumPy's spelling names an operand by keyword (``np.clip(x, min=lo)``), the operand
is recorded. Expected gradients are central differences of ``Σ W ∘ f`` with non-symmetric weights."""

import inspect

import numpy as np
import pytest
from differences import differences

import trackerlab as tl
from trackerlab.ops.registry import _OPS

X = np.array([0.3, -0.7, 1.1])
W = np.array([0.5, -1.3, 2.1])


def _differences(f, x, eps=1e-6):
    return differences(f, [x], 0, W, eps)


SETTINGS = {
    "leaky_relu slope by position": (lambda t: tl.leaky_relu(t, t[2]), "leaky_relu: argument 2 is tracked"),
    "leaky_relu slope by keyword": (
        lambda t: tl.leaky_relu(t, negative_slope=t[2]),
        "leaky_relu: the keyword argument negative_slope= is tracked",
    ),
    "elu alpha": (lambda t: tl.elu(t, t[2]), "elu: argument 2 is tracked"),
    "std ddof": (lambda t: tl.std(t, None, None, None, t[2]), "std: argument 5 is tracked"),
    "norm ord": (lambda t: tl.norm(t, ord=t[2] + 1.9), "norm: the keyword argument ord= is tracked"),
    "pad constant_values": (
        lambda t: np.pad(t, 1, constant_values=t[0]),
        "pad: the keyword argument constant_values= is tracked",
    ),
    "nan_to_num nan": (lambda t: tl.nan_to_num(t, True, t[0]), "nan_to_num: argument 3 is tracked"),
    "clip bound by keyword": (lambda t: tl.clip(t, a_min=t[0]), "clip: the keyword argument a_min= is tracked"),
}


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_a_tracked_setting_is_refused_naming_the_operation(name):
    f, message = SETTINGS[name]
    with pytest.raises(TypeError, match=message):
        tl.gradient(lambda t: tl.sum(f(t) * W), X)
    with pytest.raises(TypeError, match=message):
        tl.back_(tl.sum(f(tl.param(X)) * W))


def test_a_tracked_setting_of_plain_operands_is_refused():
    # no operand is tracked, so the result would be plain and the slope's gradient 0
    a = tl.param(0.1)
    with pytest.raises(TypeError, match="leaky_relu: argument 2 is tracked"):
        tl.leaky_relu(np.array([-1.0, 2.0]), a)


def test_tracked_settings_under_no_grad_use_their_values():
    a = tl.param(0.1)
    with tl.no_grad():
        y = tl.leaky_relu(np.array([-1.0, 2.0]), a)
    np.testing.assert_allclose(y, [-0.1, 2.0])


def test_the_hinted_formula_gives_the_slope_its_gradient():
    def f(t):
        return tl.where(tl.data(t) > 0, t, t[2] * t)

    (g,) = tl.gradient(lambda t: tl.sum(f(t) * W), X)
    np.testing.assert_allclose(tl.data(g), _differences(f, X), atol=1e-6)


@pytest.mark.parametrize(
    "f",
    [
        lambda t: np.clip(t, min=t[1] * 0.5, max=t[2] * 0.9),
        lambda t: np.clip(t, a_min=t[1] * 0.5, a_max=1.0),
        lambda t: np.clip(t, min=-0.2),
    ],
    ids=["min and max", "a_min", "min only"],
)
def test_numpy_clip_bounds_by_keyword_are_operands(f):
    (g,) = tl.gradient(lambda t: tl.sum(f(t) * W), X)
    np.testing.assert_allclose(tl.data(g), _differences(f, X), atol=1e-6)
    p = tl.param(X)
    tl.back_(tl.sum(f(p) * W))
    np.testing.assert_allclose(p.grad, _differences(f, X), atol=1e-6)


def _scaled(x, *, scale=1.0):
    return tl.data(scale) * tl.data(x)


@tl.grad_rule(_scaled)
def _(x, *, scale=1.0):
    return tl.data(scale) * tl.data(x), lambda g: (g * scale,)


def test_a_tracked_keyword_argument_of_a_custom_rule_is_refused():
    # the pullback returns one sensitivity per positional argument: scale's gradient would be lost without a word
    with pytest.raises(TypeError, match="track: the keyword argument scale= of _scaled is tracked"):
        tl.gradient(lambda t: tl.sum(tl.track(_scaled, t, scale=t[0])), X)
    (g,) = tl.gradient(lambda t: tl.sum(tl.track(_scaled, t, scale=3.0) * W), X)
    np.testing.assert_allclose(tl.data(g), 3.0 * W)


def test_checkpoint_takes_keyword_settings_and_refuses_tracked_ones():
    # checkpoint(f, x, b=3.0) failed with "_() got an unexpected keyword argument 'b'"
    def f(t):
        return tl.checkpoint(lambda a, b=2.0: a * b * a, t, b=3.0)

    (g,) = tl.gradient(lambda t: tl.sum(f(t) * W), X)
    np.testing.assert_allclose(tl.data(g), 6.0 * X * W)
    with pytest.raises(TypeError, match="track: the keyword argument b= of checkpoint is tracked"):
        tl.gradient(lambda t: tl.sum(tl.checkpoint(lambda a, b: a * b, t, b=t[0])), X)


def _sines(x):
    return np.sin(tl.data(x))


@tl.grad_rule(_sines)
def _(x):
    return list(np.sin(tl.data(x))), lambda g: (g * np.cos(tl.data(x)),)


def test_a_custom_rule_whose_value_is_a_list_is_refused():
    # the list became one tracked value of shape (), so multiply summed the sensitivities of its elements into
    # one: the gradient was [10.9, 10.8] where cos(x) ∘ W is [0.995, 9.80], without a word
    with pytest.raises(TypeError, match="_sines: the value is a list, not a number or an array"):
        tl.gradient(lambda t: tl.sum(tl.track(_sines, t) * np.array([1.0, 10.0])), np.array([0.1, 0.2]))


@pytest.mark.parametrize("kind", [list, tuple])
def test_checkpoint_of_several_results_is_refused_and_a_stack_works(kind):
    with pytest.raises(TypeError, match=f"checkpoint: f returned a {kind.__name__}; checkpoint records one result"):
        tl.gradient(lambda t: tl.sum(tl.checkpoint(lambda a: kind([a * a, a]), t)[0]), X)
    (g,) = tl.gradient(lambda t: tl.sum(tl.checkpoint(lambda a: tl.stack([a * a, 3 * a]), t)[1] * W), X)
    np.testing.assert_allclose(tl.data(g), 3 * W)


# ----------------------------------------------------------------------------------------------------
# Settings NumPy refuses, refused as NumPy refuses them, with a message naming the operation (taking them would give
# a wrong value): an axis beyond the array in ``np.take`` and ``np.linalg.norm`` (``np.take(x, [0], axis=5)`` of a
# matrix must not wrap round to column 0), ``ord='fro'`` or ``'nuc'`` for a vector, and ``np.average`` with weights
# that sum to zero (NumPy's ``ZeroDivisionError``, not NaN). And ``np.tril``/``np.triu`` of a vector, which NumPy reads
# as a row repeated into a square matrix, give NumPy's matrix, and the vector the sum of its rows' sensitivities.
# ----------------------------------------------------------------------------------------------------


RNG = np.random.default_rng(20261123)
X_AXES = RNG.standard_normal((3, 4))

REFUSED = {
    "np.take(x, [0], axis=5)": (lambda a: np.take(a, [0], axis=5), ValueError, "take: axis 5 is out of bounds"),
    "np.take(x, [0], axis=-3)": (lambda a: np.take(a, [0], axis=-3), ValueError, "take: axis -3 is out of bounds"),
    "np.linalg.norm(x, axis=5)": (lambda a: np.linalg.norm(a, axis=5), ValueError, "norm: axis 5 is out of bounds"),
    "np.linalg.norm(x, axis=(0, 5))": (lambda a: np.linalg.norm(a, axis=(0, 5)), ValueError, "norm: axis 5"),
    "np.linalg.norm(x, 2, axis=(-3, 1))": (lambda a: np.linalg.norm(a, 2, axis=(-3, 1)), ValueError, "norm: axis -3"),
    "np.linalg.norm(x, 'fro', axis=0)": (lambda a: np.linalg.norm(a, "fro", axis=0), ValueError, "ord='fro' is a norm"),
    "np.linalg.norm(x[0], 'fro')": (
        lambda a: np.linalg.norm(a[0], "fro"),
        ValueError,
        "ord='fro' is a norm of matrices",
    ),
    "np.linalg.norm(x, 'nuc', axis=1)": (lambda a: np.linalg.norm(a, "nuc", axis=1), ValueError, "ord='nuc' is a norm"),
    "np.average(x, axis=1, weights=[1, -1, 0, 0])": (
        lambda a: np.average(a, axis=1, weights=np.array([1.0, -1.0, 0.0, 0.0])),
        ZeroDivisionError,
        "average: the weights sum to zero",
    ),
    "np.average(x, weights=zeros)": (
        lambda a: np.average(a, weights=np.zeros((3, 4))),
        ZeroDivisionError,
        "average: the weights sum to zero",
    ),
}


@pytest.mark.parametrize("name", REFUSED)
def test_what_numpy_refuses_is_refused_naming_the_operation(name):
    f, error, message = REFUSED[name]
    with pytest.raises(Exception):  # noqa: B017  (NumPy's own error types differ: AxisError, ValueError, …)
        f(X_AXES)
    with pytest.raises(error, match=message):
        f(tl.param(X_AXES))
    with pytest.raises(error, match=message):
        tl.gradient(lambda a: tl.sum(f(a)), X_AXES)


def test_axes_in_range_still_work():
    x = tl.param(X_AXES)
    np.testing.assert_allclose(tl.data(np.take(x, [0, 0], axis=-2)), np.take(X_AXES, [0, 0], axis=-2))
    np.testing.assert_allclose(tl.data(np.linalg.norm(x, 1, axis=(-1, 0))), np.linalg.norm(X_AXES, 1, axis=(-1, 0)))
    np.testing.assert_allclose(tl.data(np.linalg.norm(x, "fro")), np.linalg.norm(X_AXES, "fro"))


def _differences_axes(f, x, W, eps=1e-6):
    return differences(f, [x], 0, W, eps)


@pytest.mark.parametrize("f", [lambda a: np.tril(a), lambda a: np.triu(a, 1), lambda a: np.tril(a, -1) ** 2])
def test_a_triangle_of_a_vector_is_numpys_matrix_with_the_gradient(f):
    v = RNG.standard_normal(4)
    np.testing.assert_allclose(tl.data(f(tl.param(v))), f(v))
    W = RNG.standard_normal((4, 4))
    got = tl.data(tl.gradient(lambda a: tl.sum(f(a) * W), v)[0])
    np.testing.assert_allclose(got, _differences_axes(f, v, W), rtol=1e-6, atol=1e-8)


def test_the_triangle_of_a_vector_by_hand():
    """tril([a, b, c]) = [[a, 0, 0], [a, b, 0], [a, b, c]]: a appears three times, b twice, c once."""
    (g,) = tl.gradient(lambda v: tl.sum(np.tril(v)), np.array([1.0, 2.0, 3.0]))
    assert tl.data(g).tolist() == [3.0, 2.0, 1.0]


# ----------------------------------------------------------------------------------------------------
# NumPy's settings given by position where NumPy takes them so: ``np.copy(x, "K")`` recorded, but its backward pass
# failed (the rule took the order by keyword only), ``np.broadcast_to(x, shape, False)`` was refused, and ``np.diff(x,
# -1)`` returned ``x`` where NumPy refuses a negative order. Every rule takes the settings its forward takes (checked
# here on every operation's signatures), and these three give NumPy's value and the gradient of central differences of
# ``Σ W ∘ f(x)``.
# ----------------------------------------------------------------------------------------------------


RNG_POSITIONAL = np.random.default_rng(20261123)


def _differences_positional(f, x, W, eps=1e-6):
    return differences(f, [x], 0, W, eps)


CASES = {
    'np.copy(x, "K")': lambda a: np.copy(a, "K") * a,
    'np.copy(x, "C", False)': lambda a: np.copy(a, "C", False) * a,
    "np.broadcast_to(x, (2, 3), False)": lambda a: np.broadcast_to(a, (2, 3), False) ** 2,
    "np.diff(x, 2)": lambda a: np.diff(a, 2) ** 2,
}


@pytest.mark.parametrize("name", CASES)
def test_settings_by_position_give_numpys_value_and_the_gradient(name):
    f = CASES[name]
    x = RNG_POSITIONAL.standard_normal(3)
    np.testing.assert_allclose(tl.data(f(tl.param(x))), f(x))
    W = RNG_POSITIONAL.standard_normal(np.shape(f(x)))
    want = _differences_positional(f, x, W)
    p = tl.param(x)
    tl.back_(f(p), W)
    np.testing.assert_allclose(p.grad, want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tl.data(tl.gradient(lambda a: tl.sum(f(a) * W), x)[0]), want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("n", [-1, 1.5])
def test_diff_refuses_an_order_numpy_refuses(n):
    with pytest.raises(ValueError, match="diff: the order n must be a non-negative integer"):
        np.diff(tl.param([1.0, 4.0, 9.0]), n)
    with pytest.raises((ValueError, TypeError)):  # NumPy's own refusal
        np.diff(np.array([1.0, 4.0, 9.0]), n)


def _positional(parameters):
    return [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _forward(f):
    """The forward of an operation, under the wrappers that check its operands and pass everything on."""
    while "args" in inspect.signature(f).parameters and f.__closure__:
        inner = [c.cell_contents for c in f.__closure__ if inspect.isfunction(c.cell_contents)]
        inner = [g for g in inner if g.__name__ != "refuse_complex"]
        if not inner:
            break
        f = inner[-1]
    return f


def test_every_rule_takes_the_settings_its_forward_takes():
    """A setting the forward takes by position reaches the rule by position: the rule must have room for it."""
    short = []
    for name, op in _OPS.items():
        forward = list(inspect.signature(_forward(op.impl)).parameters.values())
        pullbacks = op.rule if isinstance(op.rule, tuple) else ()
        for pullback in pullbacks:
            if pullback is None:
                continue
            rule = list(inspect.signature(pullback).parameters.values())[2:]
            if any(p.kind == p.VAR_POSITIONAL for p in rule):
                continue
            if len(_positional(forward)) > len(_positional(rule)):
                short.append(name)
    assert short == []


# ----------------------------------------------------------------------------------------------------
# Settings that are NumPy integers where NumPy takes them: a shape (``np.reshape(x, np.int64(12))``), the number of
# sections of ``split``, the repetitions of ``tile``, the target of ``broadcast_to`` and ``average``'s axis, as a user
# computes them with NumPy (``n = x.size``, ``k = np.int64(...)``): each gives NumPy's value, and its gradient
# matches central differences of ``Σ W ∘ f(x)``.
# ----------------------------------------------------------------------------------------------------


RNG_SETTINGS = np.random.default_rng(20261123)


def _differences_settings(f, x, W, eps=1e-6):
    return differences(f, [x], 0, W, eps)


WEIGHTS = np.array([0.5, 2.0, -1.0, 3.0])
CASES_SETTINGS = {
    "np.reshape(x, np.int64(12))": (lambda a: np.reshape(a, np.int64(12)), (3, 4)),
    "np.reshape(x, np.array(12))": (lambda a: np.reshape(a, np.array(12)), (3, 4)),
    "x.reshape(np.int64(12))": (lambda a: a.reshape(np.int64(12)), (3, 4)),
    "np.split(x, np.int64(2), axis=1)[1]": (lambda a: np.split(a, np.int64(2), axis=1)[1], (3, 4)),
    "np.array_split(x, np.array(3), axis=1)[0]": (lambda a: np.array_split(a, np.array(3), axis=1)[0], (3, 4)),
    "np.tile(x, np.int64(2))": (lambda a: np.tile(a, np.int64(2)), (3, 4)),
    "np.tile(x, np.array(3))": (lambda a: np.tile(a, np.array(3)), (2,)),
    "np.broadcast_to(x, np.int64(3))": (lambda a: np.broadcast_to(a, np.int64(3)), (1,)),
    "np.average(x, axis=np.int64(1), weights=w)": (lambda a: np.average(a, axis=np.int64(1), weights=WEIGHTS), (3, 4)),
}


@pytest.mark.parametrize("name", CASES_SETTINGS)
def test_numpy_integer_settings_give_numpys_value_and_the_gradient(name):
    f, shape = CASES_SETTINGS[name]
    x = RNG_SETTINGS.standard_normal(shape)
    np.testing.assert_array_equal(tl.data(f(tl.param(x))), f(x))
    W = RNG_SETTINGS.standard_normal(np.shape(f(x)))
    got = tl.data(tl.gradient(lambda a: tl.sum(f(a) * W), x)[0])
    np.testing.assert_allclose(got, _differences_settings(f, x, W), rtol=1e-6, atol=1e-8)


def test_split_into_a_numpy_integer_of_sections_by_hand():
    pieces = np.split(tl.param(np.arange(6.0)), np.int64(3))
    assert [tl.data(p).tolist() for p in pieces] == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    g = tl.gradient(lambda a: tl.sum(np.split(a, np.int64(3))[1] * np.array([10.0, 20.0])), np.arange(6.0))[0]
    assert tl.data(g).tolist() == [0.0, 0.0, 10.0, 20.0, 0.0, 0.0]


# ----------------------------------------------------------------------------------------------------
# Settings as a new user passes them: axes that are NumPy integers (computed with NumPy) and NumPy options
# trackerlab cannot honour. Expected values are derived by hand.
# ----------------------------------------------------------------------------------------------------


X_SETTINGS = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
W_SETTINGS = np.array([[0.5, -1.0, 2.0], [1.5, 3.0, -0.5]])

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
    "tensordot": (
        lambda x: tl.tensordot(x, W_SETTINGS.T, axes=np.int64(1)),
        lambda x: tl.tensordot(x, W_SETTINGS.T, axes=1),
    ),
}


@pytest.mark.parametrize("name", sorted(NUMPY_AXES))
def test_numpy_integer_axes_work_as_python_ints(name):
    # they failed in the forward or the backward pass: "'numpy.int64' object is not iterable"
    given, plain = NUMPY_AXES[name]
    x, y = tl.param(X_SETTINGS), tl.param(X_SETTINGS)
    got, want = given(x), plain(y)
    np.testing.assert_allclose(tl.data(got), tl.data(want))
    weights = np.arange(1.0, 1.0 + np.size(tl.data(want))).reshape(np.shape(tl.data(want)))
    tl.back_(got, weights) if np.ndim(tl.data(got)) else tl.back_(got * 2.0)
    tl.back_(want, weights) if np.ndim(tl.data(want)) else tl.back_(want * 2.0)
    np.testing.assert_allclose(x.grad, y.grad)


def test_numpy_integer_axis_gradient_by_hand():
    x = tl.param(X_SETTINGS)
    tl.back_(tl.sum(tl.sum(x * x, axis=np.int64(1)) * np.array([1.0, 10.0])))
    np.testing.assert_allclose(x.grad, 2 * X_SETTINGS * np.array([[1.0], [10.0]]))


def test_clip_refuses_out_and_options_it_would_drop():
    # np.clip(x, 0, 1, out=buffer) cannot write a tracked result into buffer: refused, not a new array and buffer left as
    # it is without a word
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
    # dropping keepdims=True would give np.vecdot(x, y, keepdims=True) the shape (2,), not (2, 1)
    x = tl.param(X_SETTINGS)
    with pytest.raises(TypeError, match="vecdot: keepdims= is not supported on tracked values"):
        np.vecdot(x, W_SETTINGS, keepdims=True)
    with pytest.raises(TypeError, match="vecdot: out= is not supported on tracked values"):
        tl.vecdot(x, W_SETTINGS, out=np.zeros(2))
    with pytest.raises(TypeError, match="outer: out= is not supported on tracked values"):
        np.outer(x, W_SETTINGS, out=np.zeros((6, 6)))
    y = np.vecdot(x, W_SETTINGS, axis=0)
    np.testing.assert_allclose(tl.data(y), np.sum(X_SETTINGS * W_SETTINGS, axis=0))
    tl.back_(y, np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(x.grad, W_SETTINGS * np.array([1.0, 2.0, 3.0]))
