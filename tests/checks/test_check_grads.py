"""``tl.check_grads``: what it accepts, each class of wrong rule it must catch, and how it reports one.

Every rule test goes through this check, so each blind spot here is a blind spot of the whole suite:
each test below breaks a rule on purpose and asserts that the check fails, naming what is wrong.
"""

import math
import re

import numpy as np
import pytest

import trackerlab as tl
from trackerlab.ops.registry import operations

X = np.array([0.3, -0.7, 1.1])
M = np.array([[0.3, -0.7, 1.1], [0.5, 0.2, -1.3]])


def primitive_with(rule):
    """A fresh primitive computing ``sin(x)`` whose gradient rule is ``rule(x)(Δ)``."""

    @tl.primitive
    def f(x):
        return np.sin(x)

    @tl.grad_rule(f)
    def _(x):
        return np.sin(tl.data(x)), rule(x)

    return f


@pytest.fixture
def broken_rule(monkeypatch):
    """Replace one pullback of a built-in operation for the length of a test: ``broken_rule("sin", make)``."""

    def replace(name, make, position=0):
        op = operations()[name]
        rule = list(op.rule)
        rule[position] = make(rule[position])
        monkeypatch.setattr(op, "rule", tuple(rule))

    return replace


# ---------------------------------------------------------------- what passes


def test_correct_rules_pass_to_second_order():
    tl.check_grads(lambda x: tl.sum(tl.tanh(x) * tl.exp(x)), [0.1, -0.4, 0.3])
    tl.check_grads(lambda x, y: tl.matmul(x, y) ** 2, M, M.T)
    tl.check_grads(lambda x: x * 3.0 + 1.0, 0.5)  # a Python number in, a number out


def test_outputs_may_be_a_tuple():
    tl.check_grads(lambda x: (tl.sin(x), tl.sum(tl.cos(x)), x * 2.0), X)


def test_a_constant_output_and_an_unused_argument_pass():
    tl.check_grads(lambda x, unused: tl.sin(x), X, M)
    tl.check_grads(lambda x: np.ones(3), X)


def test_keyword_arguments_reach_f():
    tl.check_grads(lambda x, axis: tl.sum(tl.sin(x), axis=axis), M, axis=0)


def test_complex_arguments_are_a_clear_error():
    with pytest.raises(TypeError, match=r"check_grads: argument 2 is complex; .*f\(a \+ 1j \* b\)"):
        tl.check_grads(lambda x, z: x * 2.0, X, X + 1j)


# ---------------------------------------------------------------- each class of wrong rule is caught


def test_a_first_derivative_one_percent_off():
    f = primitive_with(lambda x: lambda Δ: (1.01 * Δ * tl.cos(x),))
    with pytest.raises(AssertionError, match="check_grads: order 1"):
        tl.check_grads(f, X)


def test_a_wrong_second_derivative():
    f = primitive_with(lambda x: lambda Δ: (Δ * tl.cos(tl.data(x)),))  # built on the plain data
    tl.check_grads(f, X, order=1)
    with pytest.raises(AssertionError, match="check_grads: order 2"):
        tl.check_grads(f, X)


def test_a_pullback_that_drops_the_tape_of_its_sensitivity():
    # right values, but Δ's own dependence on x is cut: the Hessian of Σ sin(sin x) would come out wrong
    f = primitive_with(lambda x: lambda Δ: (tl.param(tl.data(Δ)) * tl.cos(x),))
    tl.check_grads(f, X, order=1)
    # the recorded walk sees the pullback send a value that does not follow Δ on the tape, and marks it: the
    # second order's walk through it refuses, naming the rule, before any numbers are compared
    with pytest.raises(TypeError, match=r"f: the pullback of its @grad_rule computes with the plain value of its"):
        tl.check_grads(f, X)


def test_a_built_in_rule_that_drops_the_tape_of_its_sensitivity(broken_rule):
    broken_rule("sin", lambda pullback: lambda g, ans, x: pullback(tl.param(tl.data(g)), ans, x))
    with pytest.raises(AssertionError, match="check_grads: order 2"):
        tl.check_grads(tl.sin, X)
    # the same break, in use: the Hessian diagonal of Σ sin(sin x) is wrong
    x0 = np.array([0.4])
    with pytest.raises(AssertionError):
        exact = -np.sin(np.sin(x0)) * np.cos(x0) ** 2 - np.cos(np.sin(x0)) * np.sin(x0)
        np.testing.assert_allclose(tl.hessian(lambda x: tl.sum(tl.sin(tl.sin(x))), x0)[0], exact)


@pytest.mark.parametrize("name", ["add", "negative", "transpose", "sum", "relu", "maximum", "getitem"])
def test_a_linear_or_piecewise_linear_rule_with_a_plain_result(name, broken_rule):
    # d²/dx² of a linear f is zero, so only the weighting ½ w·f(x)² makes a plain result visible
    cases = {
        "add": (lambda x: tl.add(x, 1.0), M),
        "negative": (tl.negative, M),
        "transpose": (tl.transpose, M),
        "sum": (lambda x: tl.sum(x, axis=0), M),
        "relu": (tl.relu, M),
        "maximum": (lambda x: tl.maximum(x, 0.1), M),
        "getitem": (lambda x: x[1:, ::2], M),
    }
    f, x = cases[name]
    tl.check_grads(f, x)
    broken_rule(name, lambda pullback: lambda *a, **kw: tl.data(pullback(*a, **kw)))
    with pytest.raises(AssertionError, match="check_grads: order 2"):
        tl.check_grads(f, x)


def test_a_custom_linear_rule_with_a_plain_result():
    @tl.primitive
    def double(x):
        return 2 * x

    @tl.grad_rule(double)
    def _(x):
        return 2 * tl.data(x), lambda Δ: (tl.data(2 * Δ),)

    tl.check_grads(double, X, order=1)
    with pytest.raises(TypeError, match="double: the pullback of its @grad_rule computes with the plain value"):
        tl.check_grads(double, X)


def test_a_sensitivity_with_an_extra_axis(broken_rule):
    # the numbers are right and broadcast back silently: only the shape is wrong
    broken_rule("sin", lambda pullback: lambda g, ans, x: tl.reshape(pullback(g, ans, x), (1, *np.shape(ans))))
    with pytest.raises(
        (AssertionError, ValueError),
        match=r"sin: the pullback's sensitivity for argument 1 has shape \(1, 2, 3\), but the argument has shape \(2, 3\)",
    ):
        tl.check_grads(lambda x: tl.sin(x) * 2.0, M)


def test_a_sensitivity_narrower_than_its_argument(broken_rule):
    # a (2, 1) sensitivity for a (2, 3) argument, which back_ would broadcast into .grad
    broken_rule("multiply", lambda pullback: lambda g, ans, x, y: tl.sum(pullback(g, ans, x, y), axis=1, keepdims=True))
    with pytest.raises(
        (AssertionError, ValueError),
        match=r"multiply: the pullback's sensitivity for argument 1 has shape \(2, 1\), but the argument has shape \(2, 3\)",
    ):
        tl.check_grads(lambda x: tl.sin(x * 2.0), M)


def test_a_complex_sensitivity_for_a_real_argument(broken_rule):
    broken_rule("sin", lambda pullback: lambda g, ans, x: pullback(g, ans, x) + 0j)
    # check_grads says so, and so does the walk itself where it checks what each pullback sends
    with pytest.raises(
        (AssertionError, TypeError),
        match=r"sin: the pullback's sensitivity for argument 1 is complex.*but the argument is real",
    ):
        tl.check_grads(tl.sin, X)


def test_a_pullback_returning_zeros(broken_rule):
    broken_rule("exp", lambda pullback: lambda g, ans, x: pullback(g, ans, x) * 0.0)
    with pytest.raises(AssertionError, match="check_grads: order 1"):
        tl.check_grads(tl.exp, X)


# ---------------------------------------------------------------- the report


def _number(text: str, label: str) -> float:
    return float(re.search(label + r" (-?[0-9.e+-]+)", text).group(1))


def test_the_report_names_the_argument_and_shows_both_values():
    @tl.primitive
    def scaled(x, y):
        return x * y

    @tl.grad_rule(scaled)
    def _(x, y):
        return tl.data(x) * tl.data(y), lambda Δ: (Δ * y, Δ * x * 1.5)  # the second one is wrong

    with pytest.raises(AssertionError) as error:
        tl.check_grads(scaled, X, X[::-1].copy())
    text = str(error.value)
    assert re.search(r"argument 1 \(shape \(3,\)\): .*: agrees", text)
    assert re.search(r"argument 2 \(shape \(3,\)\): .*: DISAGREES", text)
    # the second argument's gradient element by element: analytic is 1.5 times numerical
    analytic = re.search(r"argument 2, analytic:\n\s+\[([^\]]+)\]", text).group(1).split()
    numerical = re.search(r"argument 2, numerical:\n\s+\[([^\]]+)\]", text).group(1).split()
    np.testing.assert_allclose(np.array(analytic, float), 1.5 * np.array(numerical, float), rtol=1e-4)
    # and output by output, along that argument's direction
    lines = [line for line in text.splitlines() if line.startswith("  output 1[")]
    assert len(lines) == 3
    for line in lines:
        assert _number(line, "analytic") == pytest.approx(1.5 * _number(line, "numerical"), rel=1e-4)


def test_the_report_names_the_output_of_a_tuple():
    f = primitive_with(lambda x: lambda Δ: (1.2 * Δ * tl.cos(x),))
    with pytest.raises(AssertionError) as error:
        tl.check_grads(lambda x: (x * 2.0, f(x)), X)
    text = str(error.value)
    assert "output 2[0] along argument 1's direction" in text
    assert "output 1[" not in text  # the first output's derivative is right


def test_a_failure_raises_from_check_grads_alone():
    f = primitive_with(lambda x: lambda Δ: (2 * Δ,))
    with pytest.raises(AssertionError) as error:
        tl.check_grads(f, X)
    frames = []
    tb = error.value.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    inside = [frame for frame in frames if "trackerlab" in frame.f_code.co_filename]
    assert [frame.f_code.co_name for frame in inside] == ["check_grads"]
    assert inside[0].f_locals.get("__tracebackhide__") is True
    assert not [entry for entry in error.traceback.filter(error) if "trackerlab" in str(entry.path)]


def test_an_error_in_f_itself_is_not_hidden():
    def f(x):
        raise ZeroDivisionError("inside f")

    with pytest.raises(ZeroDivisionError, match="inside f"):
        tl.check_grads(f, X)


def test_a_nan_gradient_fails():
    with np.errstate(all="ignore"):
        with pytest.raises(AssertionError, match="check_grads: order 1"):
            tl.check_grads(primitive_with(lambda x: lambda Δ: (Δ * math.nan,)), X)


# ----------------------------------------------------------------------------------------------------
# ``tl.check_grads``' tolerance is relative to the derivatives it compares, so a rule 1% wrong is caught in a
# function whose derivatives are small (a floor of 1 on the relative scale would let it pass wherever they are below
# about 0.1), and a right rule still passes at every scale.
# ----------------------------------------------------------------------------------------------------


X_CHECKS = np.array([0.3, 0.7, 1.1])


def _sine(slope_error: float):
    @tl.primitive
    def sine(x):
        return np.sin(tl.data(x))

    @tl.grad_rule(sine)
    def _(x):
        return np.sin(tl.data(x)), lambda g: (g * tl.cos(x) * (1 + slope_error),)

    return sine


@pytest.mark.parametrize("scale", [1.0, 0.1, 0.01])
@pytest.mark.parametrize("reduce", [True, False])
def test_a_rule_one_percent_wrong_is_caught_in_a_small_function(scale, reduce):
    sine = _sine(0.01)

    def f(x):
        y = sine(x) * scale
        return tl.sum(y) if reduce else y

    with pytest.raises(AssertionError, match="order 1"):
        tl.check_grads(f, X_CHECKS, order=1)


@pytest.mark.parametrize("scale", [1e-3, 1e-2, 1.0, 1e2, 1e4])
def test_a_right_rule_passes_at_every_scale(scale):
    sine = _sine(0.0)
    tl.check_grads(lambda x: tl.sum(sine(x) * x) * scale, X_CHECKS)
    tl.check_grads(lambda x: tl.sin(x) * x * scale + 1e3, X_CHECKS)  # a large offset: the differences' roundoff


def test_a_second_derivative_one_percent_wrong_is_caught_in_a_small_function():
    @tl.primitive
    def cube(x):
        return tl.data(x) ** 3

    @tl.grad_rule(cube)
    def _(x):  # 3x² right; its own derivative 6x·1.01 wrong by 1%
        return tl.data(x) ** 3, lambda g: (g * (3 * x**2 + 0.01 * (x**2 - tl.data(x) ** 2) * 3),)

    with pytest.raises(AssertionError, match="order 2"):
        tl.check_grads(lambda x: tl.sum(cube(x)) * 0.01, X_CHECKS)


# ----------------------------------------------------------------------------------------------------
# check_grads catches a rule 1% wrong in a function whose derivatives are small (0.001, 10⁻⁶: the default atol of 10⁻⁶
# let it pass wherever they were below about 10⁻⁴), and passes the right rule at every scale.
# ----------------------------------------------------------------------------------------------------


def _scaled_sine(scale: float, factor: float):
    def f(x):
        return tl.track(f, x)

    @tl.grad_rule(f)
    def _(x):
        return scale * np.sin(tl.data(x)), lambda Δ: (Δ * (scale * factor) * tl.cos(x),)

    return f


@pytest.mark.parametrize("scale", [1e3, 1.0, 1e-3, 1e-6])
@pytest.mark.parametrize("at", [np.array([0.3, 1.1, -0.7]), 0.4], ids=["array", "number"])
def test_a_rule_one_percent_wrong_fails_at_every_scale(scale, at):
    f = _scaled_sine(scale, 1.01)
    with pytest.raises(AssertionError, match="order 1"):
        tl.check_grads(lambda x: tl.sum(f(x)), at)


@pytest.mark.parametrize("scale", [1e3, 1.0, 1e-3, 1e-6, 1e-12])
@pytest.mark.parametrize("at", [np.array([0.3, 1.1, -0.7]), 0.4], ids=["array", "number"])
def test_the_right_rule_passes_at_every_scale(scale, at):
    tl.check_grads(lambda x: tl.sum(_scaled_sine(scale, 1.0)(x)), at)
    tl.check_grads(lambda x: scale * tl.sum(tl.sin(x) * tl.exp(x)), at)


def test_derivatives_that_are_exactly_zero_after_cancelling_pass():
    tl.check_grads(lambda x: tl.prod(x), np.array([0.0, 0.0, 2.0]))
    tl.check_grads(lambda x: tl.var(x * 0.0 + 1.0), np.array([0.3, 1.1, -0.7]))
