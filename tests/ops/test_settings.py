"""A tracked value given where an operation expects a setting (a number that is not one of its operands) or
as a keyword argument of a custom rule: its gradient was silently dropped (``leaky_relu(x, a)`` with a tracked
slope ``a`` gave ``x`` its gradient and ``a`` none). Each is now an error naming the operation and the
argument, or, where NumPy's spelling names an operand by keyword (``np.clip(x, min=lo)``), the operand is
recorded. Expected gradients are central differences of ``Σ W ∘ f`` with non-symmetric weights."""

import numpy as np
import pytest
from differences import differences

import trackerlab as tl

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
    # the pullback returns one sensitivity per positional argument: scale's gradient was silently lost
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
