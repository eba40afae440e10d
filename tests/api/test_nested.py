"""A Jacobian or Hessian taken inside a function being differentiated is differentiated too: it is tracked
there, so a third derivative through ``hessian`` or ``jacobian`` and the gradient of a Jacobian with respect to
a parameter its function closes over come out right (a plain array there would give 0 without a word)."""

from __future__ import annotations

import numpy as np
import pytest

import trackerlab as tl

RNG = np.random.default_rng(2)
W0, X0, V = RNG.random((2, 3)), RNG.random(3), RNG.random((2, 3))


def central(f, x, h=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


@pytest.mark.parametrize("inner", ["hessian", "jacobian of gradient"])
def test_a_third_derivative_through_a_hessian(inner):
    x0, v = np.array([0.7, 1.1, 1.3]), np.arange(9.0).reshape(3, 3)
    f = lambda x: tl.sum(x**3 * 1.5 + tl.sin(x))

    def second(x):
        if inner == "hessian":
            return tl.hessian(f, x)
        return tl.jacobian(lambda z: tl.gradient(f, z)[0], x)

    g = tl.gradient(lambda x: tl.sum(second(x) * v), x0)[0]
    want = (9.0 - np.cos(x0)) * np.diag(v)  # d/dx of sum_i (9 x_i - sin x_i) v_ii
    np.testing.assert_allclose(tl.data(g), want, rtol=1e-12)


def test_the_gradient_of_a_jacobian_reaches_the_parameters_its_function_closes_over():
    loss = lambda W: tl.sum(tl.jacobian(lambda x: tl.sin(W @ x), X0) * V)
    plain = lambda W: np.sum(np.cos(W @ X0)[:, None] * W * V)
    np.testing.assert_allclose(tl.data(tl.gradient(loss, W0)[0]), central(plain, W0), atol=1e-8)
    W = tl.param(W0)
    gs = tl.gradient(lambda: loss(W) + tl.sum(W), tl.Params([W]))
    np.testing.assert_allclose(tl.data(gs[W]), central(plain, W0) + 1, atol=1e-8)


def test_the_gradient_of_a_hessian_reaches_the_parameters_its_function_closes_over():
    loss = lambda W: tl.sum(tl.hessian(lambda x: tl.sum(tl.sin(W @ x)), X0))
    plain = lambda W: np.sum(W.T @ np.diag(-np.sin(W @ X0)) @ W)
    np.testing.assert_allclose(tl.data(tl.gradient(loss, W0)[0]), central(plain, W0), atol=1e-8)


def test_at_top_level_a_jacobian_is_still_a_plain_array():
    J = tl.jacobian(lambda x: x * x, tl.param([1.0, 2.0]))
    assert type(J) is np.ndarray
    np.testing.assert_array_equal(J, [[2.0, 0.0], [0.0, 4.0]])


# ----------------------------------------------------------------------------------------------------
# Custom rules, hooks and checkpoints to third and fourth order, and the walk's steps against back_ on a tape that
# holds all three, checked against derivatives worked out by hand.
# ----------------------------------------------------------------------------------------------------


RNG_NESTED = np.random.default_rng(404)


def cube(x):
    return tl.track(cube, x) if tl.istracked(x) else x**3


@tl.grad_rule(cube)
def _(x):
    return tl.data(x) ** 3, lambda d: (3 * d * x**2,)


def test_third_and_fourth_derivatives_through_checkpoint_and_a_custom_rule():
    s = tl.param(0.8)

    def f(x):
        return tl.checkpoint(lambda z, s: cube(tl.sin(z)) * s, x, s)

    def d1(x):
        return tl.gradient(f, x)[0]

    def d2(x):
        return tl.gradient(d1, x)[0]

    def d3(x):
        return tl.gradient(d2, x)[0]

    x0 = 0.4
    sx, cx = np.sin(x0), np.cos(x0)
    third = 6 * cx**3 - 21 * sx**2 * cx  # of sin(x)**3
    assert tl.data(d3(x0)) == pytest.approx(0.8 * third, rel=1e-12)
    tl.back_(d3(tl.param(x0)))
    assert tl.grad(s) == pytest.approx(third, rel=1e-12)
    fourth = -60 * sx * cx**2 + 21 * sx**3
    assert tl.data(tl.gradient(d3, x0)[0]) == pytest.approx(0.8 * fourth, rel=1e-12)


def test_a_hook_scales_every_backward_pass_through_it():
    """As in Tracker.jl, the hook's f applies to each pass through it: the value that went through the hook
    and reappears in the gradient is differentiated through the hook again (here k' = 3 in both passes)."""
    u = RNG_NESTED.normal(size=3)
    x0 = RNG_NESTED.normal(size=3)

    def h(x):
        s = tl.sin(x)
        k = tl.hook(lambda d: d * 3, s)
        return tl.sum(k * k * u) + tl.sum(k * u) + tl.sum(s * u)

    s, c = np.sin(x0), np.cos(x0)
    (g,) = tl.gradient(h, x0)
    np.testing.assert_allclose(tl.data(g), 3 * (2 * s * c * u + c * u) + c * u, rtol=1e-12)
    np.testing.assert_allclose(
        tl.hessian(h, x0), np.diag(18 * u * c * c - 6 * s * s * u - 3 * s * u - s * u), rtol=1e-12
    )


@pytest.mark.parametrize("delta", [None, 1.7])
def test_the_steps_and_the_stepper_sum_to_back_with_hooks_checkpoints_and_custom_rules(delta):
    W, v, s = tl.param(RNG_NESTED.normal(size=(3, 3))), tl.param(RNG_NESTED.normal(size=3)), tl.param(0.4)
    h = tl.checkpoint(lambda W, v: tl.tanh(W @ v), W, v)
    k = tl.hook(lambda d: d * 2, h * s)
    c = cube(k)
    loss = (
        tl.sum(c * k)
        + tl.sum(tl.stack([s, tl.sum(c), s]) * np.array([1.0, 2.0, -3.0]))
        + tl.sum(tl.concatenate([v, v * s, v]))
    )
    labels = {W: "W", v: "v", s: "s"}
    final = tl.BackpropStepper(loss, delta, labels=labels).steps[-1]["grads"]
    sent = {}
    for step in tl.backprop_steps(loss, delta):
        for arg, out in zip(step.args, step.sent):
            if arg is not None and out is not None and arg.isleaf:
                sent[id(arg)] = sent.get(id(arg), 0) + np.asarray(tl.data(out))
    tl.back_(loss, delta)
    # back_ by hand: the hook doubles what reaches h * s
    W0, v0, s0 = tl.data(W), tl.data(v), tl.data(s)
    t = np.tanh(W0 @ v0)
    kv = t * s0
    dk = 4 * kv**3 + 2 * 3 * kv**2  # d/dk of sum(k**4) + 2 sum(k**3)
    scale = 1.0 if delta is None else delta
    dh = 2 * dk * s0 * scale
    expected = {
        "W": np.outer(dh * (1 - t * t), v0),
        "v": W0.T @ (dh * (1 - t * t)) + (2 + s0) * scale,
        "s": np.sum(2 * dk * t) * scale + (1 - 3) * scale + np.sum(v0) * scale,
    }
    for name, p in (("W", W), ("v", v), ("s", s)):
        np.testing.assert_allclose(tl.grad(p), expected[name], rtol=1e-10)
        np.testing.assert_allclose(np.asarray(final[name]), tl.grad(p), rtol=1e-12)
        np.testing.assert_allclose(sent[id(p.tracker)], tl.grad(p), rtol=1e-12)


@pytest.mark.parametrize("shape", [(1, 3), (3,), (4, 1), (1, 1), ()])
@pytest.mark.parametrize(
    "op",
    [
        lambda p, X: (X - p) ** 3,
        lambda p, X: X / p,
        lambda p, X: p**X,
        lambda p, X: np.maximum(p * p, X),
        lambda p, X: np.where(X > 3, p * p, X * p * p * p),
    ],
    ids=["sub", "div", "rpow", "maximum", "where"],
)
def test_hessians_of_broadcast_parameters(shape, op):
    X = RNG_NESTED.normal(size=(4, 3)) + 3
    w = RNG_NESTED.normal(size=(4, 3))
    p0 = RNG_NESTED.normal(size=shape) * 0.3 + 2.0
    H = np.asarray(tl.hessian(lambda p: tl.sum(op(p, X) * w), p0)).reshape(p0.size, p0.size)

    def grad(p):
        return np.ravel(tl.data(tl.gradient(lambda q: tl.sum(op(q, X) * w), p)[0]))

    numeric = np.empty((p0.size, p0.size))
    for j in range(p0.size):
        step = np.zeros(p0.size)
        step[j] = 1e-6
        numeric[:, j] = (grad(p0 + step.reshape(shape)) - grad(p0 - step.reshape(shape))) / 2e-6
    np.testing.assert_allclose(H, numeric, rtol=1e-5, atol=1e-6)
