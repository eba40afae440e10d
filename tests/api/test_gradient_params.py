"""``gradient(f, Params)`` records its backward pass only where something may differentiate it again.

Outside any differentiation the walk runs on plain arrays and each gradient is one tape node over the
leaves ``f`` reaches, so the gradients do not keep ``f``'s forward tape alive; differentiating such a
gradient (a gradient penalty) runs ``f`` again, recorded. Inside an outer differentiation, or through a
custom pullback, the backward pass is recorded as it runs. Either way, the second and third derivatives
are the analytic ones.
"""

import gc
import tracemalloc
import weakref

import numpy as np
import pytest

import trackerlab as tl

RNG = np.random.default_rng(7)
W0 = RNG.standard_normal(4)
V0 = RNG.standard_normal(4)


def tape_nodes(value) -> set:
    """Every node of the tape of ``value``."""
    seen, stack = set(), [value.tracker]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if not node.isleaf:
            stack.extend(a for a in node.f.args if isinstance(a, tl.Tracked))
    return seen


def test_the_gradients_do_not_keep_the_forward_tape_alive():
    W = tl.param(np.ones((30, 30)))
    made = []

    def f():
        h = tl.tanh(W @ W)
        made.append(weakref.ref(h.tracker))
        return tl.sum(h * h)

    gs = tl.gradient(f, tl.Params([W]))
    assert made[0]() is None  # without a collection: nothing holds the forward tape any more
    assert tape_nodes(gs[W]) == {gs[W].tracker, W.tracker}  # one node over the parameter
    t = np.tanh(W.data @ W.data)
    g = 2 * t * (1 - t * t)
    np.testing.assert_allclose(gs[W].data, g @ W.data.T + W.data.T @ g, rtol=1e-12)


def test_many_gradients_hold_only_their_own_arrays():
    W = tl.param(np.ones((100, 100)))

    def f():
        h = tl.tanh(W * 0.01)
        for _ in range(5):
            h = tl.tanh(h * 1.5)
        return tl.sum(h)

    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = [tl.gradient(f, tl.Params([W])) for _ in range(20)]
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(kept) == 20
    # 20 gradients of 80 kB each, and small change; the forward tapes (13 arrays each) would be 20 MB
    assert held < 20 * 80_000 * 1.5


def test_a_gradient_penalty_by_back_gives_the_second_derivatives():
    W, V = tl.param(W0), tl.param(V0)  # V is not a parameter of the gradient, but f reaches it
    gs = tl.gradient(lambda: tl.sum(W**3 * V), tl.Params([W]))
    np.testing.assert_allclose(gs[W].data, 3 * W0**2 * V0, rtol=1e-12)
    tl.back_(tl.sum(gs[W] ** 2))  # d/dW and d/dV of Σ (3 w² v)²
    np.testing.assert_allclose(W.grad, 2 * (3 * W0**2 * V0) * 6 * W0 * V0, rtol=1e-12)
    np.testing.assert_allclose(V.grad, 2 * (3 * W0**2 * V0) * 3 * W0**2, rtol=1e-12)


def test_inside_an_outer_gradient_the_backward_pass_is_recorded():
    W, V = tl.param(W0), tl.param(V0)
    ps = tl.Params([W])
    u = np.array([1.0, -2.0, 0.5, 3.0])
    inner = []

    def f():
        g = tl.gradient(lambda: tl.sum(W**3 * V), ps)[W]
        inner.append(g)
        return tl.sum(g * u)

    hv = tl.gradient(f, ps)  # a Hessian-vector product: H u = 6 w v u
    np.testing.assert_allclose(hv[W].data, 6 * W0 * V0 * u, rtol=1e-12)
    assert len(tape_nodes(inner[0])) > 3  # recorded op by op, not one deferred node


def test_third_derivatives_through_deferred_and_recorded_gradients():
    W = tl.param(W0)
    ps = tl.Params([W])
    g1 = tl.gradient(lambda: tl.sum(W**4), ps)[W]  # 4 w³, deferred
    g2 = tl.gradient(lambda: tl.sum(g1), ps)[W]  # 12 w², through g1's pullback
    np.testing.assert_allclose(g2.data, 12 * W0**2, rtol=1e-12)
    tl.back_(tl.sum(g2))
    np.testing.assert_allclose(W.grad, 24 * W0, rtol=1e-12)
    np.testing.assert_allclose(tl.hessian(lambda x: tl.sum(x**4), W0), np.diag(12 * W0**2), rtol=1e-12)


def test_a_gradient_penalty_matches_finite_differences():
    def penalty(w, v):  # Σ (∂/∂w Σ tanh(w v) w)², by hand
        t = np.tanh(w * v)
        return np.sum((t + w * v * (1 - t * t)) ** 2)

    W, V = tl.param(W0), tl.param(V0)
    gs = tl.gradient(lambda: tl.sum(tl.tanh(W * V) * W), tl.Params([W]))
    value = tl.sum(gs[W] ** 2)
    assert abs(value.data - penalty(W0, V0)) < 1e-12
    tl.back_(value)
    eps = 1e-6
    for grad, which in ((W.grad, 0), (V.grad, 1)):
        for i in range(4):
            step = np.zeros(4)
            step[i] = eps
            up = penalty(W0 + step, V0) if which == 0 else penalty(W0, V0 + step)
            down = penalty(W0 - step, V0) if which == 0 else penalty(W0, V0 - step)
            assert abs(grad[i] - (up - down) / (2 * eps)) < 1e-6


def test_a_deferred_gradient_is_refused_after_its_parameter_changed():
    W = tl.param(W0)
    gs = tl.gradient(lambda: tl.sum(W**3), tl.Params([W]))
    tl.update_(W, np.ones(4))
    with pytest.raises(RuntimeError, match="changed after"):
        tl.back_(tl.sum(gs[W]))


def test_a_custom_pullback_on_the_tape_records_the_backward_pass():
    def cube(x):
        return tl.track(cube, x) if tl.istracked(x) else x**3

    @tl.grad_rule(cube)
    def _(x):
        return cube(tl.data(x)), lambda g: (g * 3 * x * x,)

    W = tl.param(W0)
    gs = tl.gradient(lambda: tl.sum(cube(W)), tl.Params([W]))
    assert len(tape_nodes(gs[W])) > 2  # recorded: the custom pullback may close over anything
    np.testing.assert_allclose(gs[W].data, 3 * W0**2, rtol=1e-12)
    tl.back_(tl.sum(gs[W]))
    np.testing.assert_allclose(W.grad, 6 * W0, rtol=1e-12)


def test_parameters_f_does_not_reach_get_zeros_and_constants_give_no_second_derivative():
    W, U = tl.param(W0), tl.param(V0)
    gs = tl.gradient(lambda: tl.sum(W * 2.0), tl.Params([W, U]))
    np.testing.assert_array_equal(gs[U].data, np.zeros(4))
    np.testing.assert_array_equal(gs[W].data, np.full(4, 2.0))
    tl.back_(tl.sum(gs[W] * gs[W]))  # a constant gradient: W's second derivative is 0
    np.testing.assert_array_equal(W.grad, np.zeros(4))


def test_check_tape_replays_a_deferred_gradient_at_perturbed_values():
    W, V = tl.param(W0), tl.param(V0)
    gs = tl.gradient(lambda: tl.sum(tl.tanh(W * V) * W), tl.Params([W]))
    report = tl.check_tape(tl.sum(gs[W] ** 2))
    assert report.ok and [e.status for e in report.entries].count("ok") == 4  # the deferred node's 2 arguments
    np.testing.assert_array_equal(W.data, W0)  # the replay leaves the parameters as they were
    np.testing.assert_array_equal(V.data, V0)


def test_inside_a_pullback_of_a_recorded_walk_the_backward_pass_is_recorded():
    W = tl.param(W0)
    inner = []

    def cube(x):
        return tl.track(cube, x) if tl.istracked(x) else x**3

    @tl.grad_rule(cube)
    def _(x):
        def back(g):
            three_w2 = tl.gradient(lambda: tl.sum(W**3), tl.Params([W]))[W]
            inner.append(three_w2)
            return (g * three_w2 / W**2 * x**2,)  # 3x², through a gradient of Params

        return cube(tl.data(x)), back

    x0 = np.array([0.5, -1.0, 2.0, 1.5])
    np.testing.assert_allclose(tl.hessian(lambda v: tl.sum(cube(v)), x0), np.diag(6 * x0), rtol=1e-12)
    X = tl.param(x0)
    _, back = tl.forward(lambda v: tl.sum(cube(v)), X)
    slope = back()[0]  # a recorded walk (a custom pullback), outside any f being differentiated
    assert inner[-1].tracker.f.name != "gradient" and inner[-1].tracker.f.back is None  # recorded, not deferred
    np.testing.assert_allclose(slope.data, 3 * x0**2, rtol=1e-12)
    tl.back_(tl.sum(slope))
    np.testing.assert_allclose(X.grad, 6 * x0, rtol=1e-12)
