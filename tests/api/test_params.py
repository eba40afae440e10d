"""Params, Grads and the optimisers: ``update_(opt, ...)`` takes what a Flux, PyTorch or
HIPS autograd user hands it (one parameter and its gradient, the tuple ``tl.gradient(f, W, b)`` returns, a dict
by parameter), and refuses the rest with a message instead of a confusing ``KeyError``; ``Params(W)`` and lists
of tracked values given to ``gradient`` say what to write."""

import copy
import pickle

import numpy as np
import pytest

import trackerlab as tl

RNG = np.random.default_rng(5)
A = RNG.standard_normal((3, 3))
B0 = RNG.standard_normal(3)


def _loss(x):
    return tl.sum(tl.tanh(A @ x) ** 2)


def _grad(x):
    t = np.tanh(A @ x)
    return A.T @ (2 * t * (1 - t**2))


def _by_hand(name, steps):
    """The parameter after ``steps`` steps of the optimiser ``name``, written out in NumPy."""
    x, m, v = B0.copy(), np.zeros(3), np.zeros(3)
    for t in range(1, steps + 1):
        g = _grad(x)
        if name == "Descent":
            x = x - 0.05 * g
        elif name == "Momentum":
            m = 0.9 * m + 0.01 * g
            x = x - m
        else:
            m = 0.9 * m + 0.1 * g
            v = 0.999 * v + 0.001 * g * g
            x = x - 0.01 * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    return x


def _optimiser(name):
    return {
        "Descent": lambda: tl.optim.Descent(0.05),
        "Momentum": lambda: tl.optim.Momentum(0.01, 0.9),
        "ADAM": lambda: tl.optim.ADAM(0.01),
    }[name]()


@pytest.mark.parametrize("name", ["Descent", "Momentum", "ADAM"])
@pytest.mark.parametrize(
    "form",
    ["Params and Grads", "one parameter and Grads", "one parameter and its array", "list and tuple", "dict"],
)
def test_every_form_of_update_with_an_optimiser_steps_as_numpy_does(name, form):
    opt, x = _optimiser(name), tl.param(B0.copy())
    for _ in range(5):
        if form == "Params and Grads":
            tl.update_(opt, tl.Params([x]), tl.gradient(lambda: _loss(x), tl.Params([x])))
        elif form == "one parameter and Grads":  # Flux's update!(opt, x, gs)
            tl.update_(opt, x, tl.gradient(lambda: _loss(x), tl.Params([x])))
        elif form == "one parameter and its array":  # Flux's update!(opt, x, x̄)
            tl.back_(_loss(x))
            tl.update_(opt, x, x.grad)
        elif form == "list and tuple":  # the tuple of tl.gradient(f, x), by position
            tl.update_(opt, [x], tl.gradient(_loss, x))
        else:
            tl.back_(_loss(x))
            tl.update_(opt, [x], {x: x.grad})
    np.testing.assert_allclose(tl.data(x), _by_hand(name, 5), rtol=1e-12, atol=1e-14)


def test_scalar_parameters_with_the_tuple_of_gradient_step_by_position():
    # the list of gradients was indexed by the parameters themselves: grads[a] read a as a list index
    a, b = tl.param(1.0), tl.param(0.0)
    gs = tl.gradient(lambda a, b: a * 3 + b * 5, a, b)
    tl.update_(tl.optim.Descent(0.1), [a, b], gs)
    assert tl.data(a) == pytest.approx(0.7) and tl.data(b) == pytest.approx(-0.5)


def test_a_tracked_real_alone_and_its_grads():
    s = tl.param(2.0)
    tl.update_(tl.optim.Descent(0.1), s, tl.gradient(lambda: s * s, tl.Params([s])))
    assert tl.data(s) == pytest.approx(1.6)


def test_what_update_with_an_optimiser_refuses_is_named():
    W, b = tl.param([1.0, 2.0]), tl.param(0.5)
    opt = tl.optim.Descent(0.1)
    with pytest.raises(ValueError, match="update_: 2 parameters but 1 gradients"):
        tl.update_(opt, [W, b], [np.ones(2)])
    with pytest.raises(ValueError, match="update_: a parameter is listed twice"):
        tl.update_(opt, [W, W], [np.ones(2), np.ones(2)])
    with pytest.raises(TypeError, match="update_: the gradient of parameter 2 is None"):
        tl.update_(opt, [W, b], [np.ones(2), None])
    with pytest.raises(TypeError, match="update_: grads is a ndarray; for a list of parameters"):
        tl.update_(opt, [W], np.ones(2))
    with pytest.raises(TypeError, match=r"update_: grads at \['W'\] is a str, where a list of 2 items"):
        tl.update_(opt, {"W": [W, b]}, {"W": "not gradients"})
    with pytest.raises(TypeError, match="update_: pass the gradients too"):
        tl.update_(opt, [W])
    np.testing.assert_array_equal(tl.data(W), [1.0, 2.0])  # nothing stepped
    assert tl.data(b) == 0.5


def test_params_of_one_tracked_value_or_a_tape_node_is_refused():
    W = tl.param([[1.0, 2.0], [3.0, 4.0]])
    # Params(W) made each row a computed value: gradient(f, Params(W)) gave them zeros and no gradient for W
    with pytest.raises(TypeError, match=r"Params: pass a list of parameters, tl.Params\(\[x\]\)"):
        tl.Params(W)
    with pytest.raises(TypeError, match=r"Params: only tracked values can be parameters .*tape node"):
        tl.Params([W.tracker])
    gs = tl.gradient(lambda: tl.sum(W * W), tl.Params([W]))
    np.testing.assert_allclose(tl.data(gs[W]), 2 * tl.data(W))


def test_lists_and_params_among_the_arguments_of_gradient_say_what_to_write():
    W, b = tl.param([1.0, 2.0]), tl.param(0.5)
    with pytest.raises(TypeError, match=r"gradient: f cannot take the 1 argument given .*tl.Params\(\[W, b\]\)"):
        tl.gradient(lambda: tl.sum(W * W) + b, [W, b])
    # a list or dict of tracked values is a structure to differentiate at (tests/test_trees.py)
    (g,) = tl.gradient(lambda d: tl.sum(d["W"] * d["W"]), {"W": W})
    np.testing.assert_allclose(tl.data(g["W"]), [2.0, 4.0])
    with pytest.raises(TypeError, match="gradient: a Params must be the only argument"):
        tl.gradient(lambda x: tl.sum(W * x), tl.Params([W]), 1.0)
    with pytest.raises(TypeError, match="gradient: a Params must be the only argument"):
        tl.forward(lambda: tl.sum(W * W), tl.Params([W]))
    # a list of plain numbers is one array to differentiate at, as before
    (g,) = tl.gradient(lambda x: tl.sum(x * x), [1.0, 2.0])
    np.testing.assert_allclose(tl.data(g), [2.0, 4.0])


@pytest.mark.parametrize("name", ["Momentum", "ADAM"])
def test_an_optimisers_state_for_a_parameter_whose_shape_changed_is_refused(name):
    opt, W = _optimiser(name), tl.param(np.ones(3))
    tl.back_(tl.sum(W * W))
    tl.update_(opt, W, W.grad)
    W.data = np.ones((3, 3))  # the old state, of shape (3,), broadcast against it: Momentum gave 0.62, not 0.98
    tl.back_(tl.sum(W * W))
    with pytest.raises(ValueError, match=rf"{name}: the parameter's shape changed from \(3,\) to \(3, 3\)"):
        tl.update_(opt, W, W.grad)
    np.testing.assert_array_equal(tl.data(W), np.ones((3, 3)))
    fresh = _optimiser(name)  # a new optimiser steps it as a first step
    tl.update_(fresh, W, W.grad)
    first = 0.01 * 2.0 if name == "Momentum" else 0.01  # Momentum: eta·g; ADAM: eta·sign(g)
    np.testing.assert_allclose(tl.data(W), np.full((3, 3), 1 - first))


def test_a_new_value_of_the_same_shape_keeps_the_optimisers_state():
    opt, x = tl.optim.Momentum(0.01, 0.9), tl.param(B0.copy())
    tl.update_(opt, x, tl.gradient(_loss, x)[0])
    x.data = tl.data(x).copy()  # the same values, set anew: the velocity carries on
    for _ in range(4):
        tl.update_(opt, x, tl.gradient(_loss, x)[0])
    np.testing.assert_allclose(tl.data(x), _by_hand("Momentum", 5), rtol=1e-12)


def _steps(opt, W, n):
    for _ in range(n):
        W.grad = None
        tl.back_(tl.sum(tl.sin(W) * W * W))
        tl.update_(opt, W, W.grad)


@pytest.mark.parametrize("name", ["Momentum", "ADAM"])
@pytest.mark.parametrize("how", ["dict", "list", "model"])
def test_a_model_deep_copied_with_its_optimiser_trains_on_as_the_original(name, how):
    W = tl.param(np.array([0.5, -1.0, 2.0]))
    opt = _optimiser(name)
    _steps(opt, W, 3)

    class Model:
        pass

    model = Model()
    model.W, model.opt = W, opt
    both = {"W": W, "opt": opt} if how == "dict" else [W, opt] if how == "list" else model
    copied = copy.deepcopy(both)
    W2, opt2 = (copied["W"], copied["opt"]) if how == "dict" else copied if how == "list" else (copied.W, copied.opt)
    assert W2 is not W and opt2 is not opt
    _steps(opt, W, 3)  # the copy's state followed the copy of W: it was a fresh start (ADAM's bias correction)
    _steps(opt2, W2, 3)
    np.testing.assert_allclose(tl.data(W2), tl.data(W), rtol=1e-14)


@pytest.mark.parametrize("name", ["Momentum", "ADAM"])
def test_copies_of_an_optimiser_keep_states_of_their_own(name):
    W = tl.param(np.array([0.5, -1.0, 2.0]))
    opt = _optimiser(name)
    _steps(opt, W, 2)
    shallow, deep = copy.copy(opt), copy.deepcopy(opt)  # alone, a deep copy keeps the original's parameters
    start = tl.data(W).copy()
    results = []
    for o in (opt, shallow, deep):
        W.data = start
        _steps(o, W, 2)
        results.append(tl.data(W).copy())
    # each continued from the state after two steps: stepping one did not move another's state
    np.testing.assert_allclose(results[1], results[0], rtol=1e-14)
    np.testing.assert_allclose(results[2], results[0], rtol=1e-14)
    with pytest.raises(TypeError, match=f"pickle: {name} keeps its state by parameter"):
        pickle.dumps(opt)


def test_update_with_an_optimiser_checks_every_gradient_before_stepping_any():
    W, b = tl.param([1.0, 2.0]), tl.param([0.5, 0.5, 0.5])
    opt = tl.optim.ADAM(0.1)
    with pytest.raises(ValueError, match=r"update_: the gradient of parameter 2 has shape \(2,\), but the parameter"):
        tl.update_(opt, [W, b], [np.ones(2), np.ones(2)])
    np.testing.assert_array_equal(tl.data(W), [1.0, 2.0])  # W was not stepped before b's gradient was refused
    tl.update_(opt, [W, b], [np.ones(2), np.ones(3)])  # and ADAM's first step is still its first: eta · sign
    np.testing.assert_allclose(tl.data(W), [0.9, 1.9])
    np.testing.assert_allclose(tl.data(b), [0.4, 0.4, 0.4])


# ----------------------------------------------------------------------------------------------------
# The optimisers on complex parameters: a step must go downhill. The gradient of a complex parameter is ``∂L/∂x − i
# ∂L/∂y`` (JAX's convention), so ``z − η · grad`` moved ``y`` uphill; each optimiser now steps a complex parameter as
# the pair of real parameters ``(x, y)``, as PyTorch's do. Checked against the same optimiser on the two real parts.
# ----------------------------------------------------------------------------------------------------


C = np.array([0.3 - 1.2j, -0.7 + 0.4j])


def _complex_run(opt, steps=5):
    z = tl.param(np.array([1.0 + 1.0j, 0.5 - 2.0j]))
    ps = tl.Params([z])
    for _ in range(steps):
        gs = tl.gradient(lambda: tl.sum(tl.abs(z - C) ** 2 * np.array([1.0, 3.0])), ps)
        tl.update_(opt, ps, gs)
    return tl.data(z)


def _real_run(opt, steps=5):
    a, b = tl.param([1.0, 0.5]), tl.param([1.0, -2.0])
    ps = tl.Params([a, b])
    for _ in range(steps):
        gs = tl.gradient(lambda: tl.sum(((a - C.real) ** 2 + (b - C.imag) ** 2) * np.array([1.0, 3.0])), ps)
        tl.update_(opt, ps, gs)
    return tl.data(a) + 1j * tl.data(b)


@pytest.mark.parametrize(
    "make", [lambda: tl.optim.Descent(0.05), lambda: tl.optim.Momentum(0.05, 0.9), lambda: tl.optim.ADAM(0.1)]
)
def test_a_complex_parameter_steps_as_its_two_real_parts(make):
    np.testing.assert_allclose(_complex_run(make()), _real_run(make()), rtol=1e-12, atol=1e-12)


def test_descent_on_a_complex_parameter_goes_downhill():
    z = tl.param(np.array([1.0 + 1.0j]))
    gs = tl.gradient(lambda: tl.sum(tl.abs(z) ** 2), tl.Params([z]))
    np.testing.assert_allclose(gs[z].data, [2.0 - 2.0j])  # the convention: ∂L/∂x − i ∂L/∂y
    tl.update_(tl.optim.Descent(0.1), tl.Params([z]), gs)
    np.testing.assert_allclose(tl.data(z), [0.8 + 0.8j])  # was 0.8 + 1.2j: y moved uphill


# ----------------------------------------------------------------------------------------------------
# ``gradient(f, Params([...]))`` with a computed value among the Params, as Tracker.jl allows: its gradient is the
# sensitivity that reaches it (not 0). Expected values by hand.
# ----------------------------------------------------------------------------------------------------


def test_a_computed_value_among_the_params_gets_its_sensitivity():
    W = tl.param([1.0, 2.0])
    h = W * 3
    gs = tl.gradient(lambda: tl.sum(h * h) + tl.sum(W), tl.Params([W, h]))
    np.testing.assert_array_equal(tl.data(gs[h]), [6.0, 12.0])  # 2h
    np.testing.assert_array_equal(tl.data(gs[W]), [19.0, 37.0])  # 2h · 3 + 1, through h as well
    tl.back_(tl.sum(gs[h] * np.array([1.0, 10.0])))  # d/dW Σ 2 · 3W ∘ [1, 10]
    np.testing.assert_array_equal(W.grad, [6.0, 60.0])


def test_a_computed_value_among_the_params_inside_an_outer_gradient():
    W = tl.param([1.0, 2.0])
    h = tl.sin(W)

    def outer():
        gs = tl.gradient(lambda: tl.sum(h**3), tl.Params([h]))
        return tl.sum(gs[h] * np.array([1.0, -2.0]))  # Σ 3 sin²W ∘ [1, −2]

    g = tl.gradient(outer, tl.Params([W]))[W]
    np.testing.assert_allclose(tl.data(g), 6 * np.sin([1.0, 2.0]) * np.cos([1.0, 2.0]) * [1.0, -2.0])


def test_a_computed_value_the_loss_does_not_reach_gets_zero():
    W = tl.param([1.0, 2.0])
    h = W * 3
    gs = tl.gradient(lambda: tl.sum(W * W), tl.Params([W, h]))
    np.testing.assert_array_equal(tl.data(gs[h]), [0.0, 0.0])
    np.testing.assert_array_equal(tl.data(gs[W]), [2.0, 4.0])
