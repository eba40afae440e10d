"""NumPy's settings given by position where NumPy takes them so: ``np.copy(x, "K")`` recorded, but its
backward pass failed (the rule took the order by keyword only), ``np.broadcast_to(x, shape, False)`` was
refused, and ``np.diff(x, -1)`` returned ``x`` where NumPy refuses a negative order. Every rule takes the
settings its forward takes (checked here on every operation's signatures), and these three give NumPy's
value and the gradient of central differences of ``Σ W ∘ f(x)``."""

import inspect

import numpy as np
import pytest
from differences import differences

import trackerlab as tl
from trackerlab.ops.registry import _OPS

RNG = np.random.default_rng(20261123)


def _differences(f, x, W, eps=1e-6):
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
    x = RNG.standard_normal(3)
    np.testing.assert_allclose(tl.data(f(tl.param(x))), f(x))
    W = RNG.standard_normal(np.shape(f(x)))
    want = _differences(f, x, W)
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
