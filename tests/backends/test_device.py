"""Device arrays through the whole engine: every rule table's cases, the walk, ``back_`` with no host round
trip, ``forward``, ``gradient``, nested AD, ``jacobian``/``hessian``, ``Params``, the optimisers and
``check_grads``, and the notebook layer.

Each test runs on the strict stand-in ``devicearray`` (CuPy's rules without a GPU: NumPy operands and
implicit host copies are errors) and on CuPy where a GPU is (skipped with the reason otherwise). The
elementwise, reduction, shape and ``matmul`` rules run on the devices in their own files (``BACKENDS``);
the other families' case tables are run here, so a case added there runs on the devices too.
"""

import gc

import numpy as np
import pytest
import test_rules_factorizations
import test_rules_indexing
import test_rules_inverses
import test_rules_linalg
import test_rules_matrices
import test_rules_nn
import test_rules_utility
from markup import unstyled
from test_rules import CUPY_SKIP, DEVICES, check, host, namespace_of, no_synchronize, on

import trackerlab as tl
from trackerlab.backends import arrays as _backend

FAMILY_CASES = {
    "indexing": test_rules_indexing.CASES,
    "linalg": test_rules_linalg.CASES,
    "matrices": test_rules_matrices.CASES,
    "inverses": test_rules_inverses.CASES,
    "factorizations": test_rules_factorizations.CASES,
    "nn": test_rules_nn.CASES,
    "utility": test_rules_utility.CASES,
}
RULES = [(family, name) for family, cases in FAMILY_CASES.items() for name in sorted(cases)]


def on_device(backend):
    """Move plain NumPy test values to ``backend``."""
    return lambda *values: on(backend, values if len(values) > 1 else values[0])


@pytest.mark.parametrize("backend", DEVICES)
@pytest.mark.parametrize(("family", "name"), RULES, ids=[f"{f}-{n}" for f, n in RULES])
def test_every_rule_on_a_device(family, name, backend):
    for f, *args in FAMILY_CASES[family][name]:
        check(f, *args, backend=backend)


@pytest.mark.parametrize("name", ["eig", "eigvals"])
def test_eig_on_a_namespace_without_a_general_eigendecomposition_is_a_clear_error(name, monkeypatch):
    """The array API has eigh only (for symmetric matrices), and CuPy before 14 had no eig either: there eig
    and eigvals name what the namespace lacks. (CuPy 14 and the stand-in have linalg.eig: the cases above.)"""
    import devicearray

    monkeypatch.delattr(devicearray.linalg, "eig")
    f, *args = FAMILY_CASES["factorizations"][name][0]
    with pytest.raises(TypeError, match=rf"^{name}: the devicearray namespace has no linalg\.eig, which"):
        check(f, *args, backend="devicearray")


# ---------------------------------------------------------------- a small network, on the device


def mlp(W1, b1, W2, b2, x, labels):
    h = tl.tanh(x @ W1 + b1)
    return tl.cross_entropy(h @ W2 + b2, labels)


RNG = np.random.default_rng(0)
MLP = (RNG.standard_normal((5, 8)) * 0.5, np.zeros(8), RNG.standard_normal((8, 3)) * 0.5, np.zeros(3))
X = RNG.standard_normal((4, 5))
LABELS = np.array([0, 2, 1, 2])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("backend", DEVICES)
def test_an_mlp_step_stays_on_the_device_with_no_host_round_trip(backend, dtype):
    xp = namespace_of(backend)
    params = [tl.param(xp.asarray(p, dtype=getattr(xp, dtype))) for p in MLP]
    x, labels = xp.asarray(X, dtype=getattr(xp, dtype)), xp.asarray(LABELS)
    loss = mlp(*params, x, labels)
    with no_synchronize(backend):
        tl.back_(loss)
    expected = tl.gradient(lambda *ps: mlp(*ps, X, LABELS), *MLP)
    for p, e in zip(params, expected):
        assert isinstance(p.grad, xp.ndarray) and p.grad.dtype == getattr(xp, dtype)
        np.testing.assert_allclose(host(p.grad), tl.data(e), rtol=1e-4 if dtype == "float32" else 1e-10, atol=1e-6)


@pytest.mark.parametrize("backend", DEVICES)
def test_a_finished_step_leaves_no_device_memory_held_by_the_tape(backend):
    xp = namespace_of(backend)
    pool = xp.get_default_memory_pool()  # CuPy's memory pool counters; the stand-in counts live buffers
    rng = np.random.default_rng(1)
    sizes = [(64, 256), (256,), (256, 10), (10,)]
    params = [tl.param(xp.asarray(rng.standard_normal(s) * 0.1)) for s in sizes]
    x, labels = xp.asarray(rng.standard_normal((512, 64))), xp.asarray(rng.integers(0, 10, 512))

    def step():
        tl.zero_grad_(params)
        tl.back_(mlp(*params, x, labels))

    step()  # the gradients exist from here on, and libraries have made their workspaces
    synchronize(backend)
    gc.collect()
    before = pool.used_bytes()
    loss = mlp(*params, x, labels)
    assert pool.used_bytes() >= before + 512 * 256 * 8  # the tape holds the hidden layer while it is alive
    tl.back_(loss)
    del loss
    synchronize(backend)
    gc.collect()
    assert pool.used_bytes() <= before, "the finished step's tape still holds device memory"
    step()
    synchronize(backend)
    gc.collect()
    assert pool.used_bytes() <= before


def synchronize(backend):
    if backend == "cupy":
        import cupy

        cupy.cuda.Device().synchronize()


@pytest.mark.parametrize("backend", DEVICES)
def test_gradients_through_boolean_masks_make_no_host_round_trip(backend):
    xp = namespace_of(backend)
    A = np.random.default_rng(2).uniform(-1, 1, (3, 4))
    x = tl.param(xp.asarray(A))
    rows = A[:, 0] > 0
    # a mask over the rows and one over every element (the forward x[mask] asks the host for the count)
    y = tl.sum(x[xp.asarray(rows)] ** 2) + tl.sum(tl.sin(x[tl.data(x) > 0.2]))
    with no_synchronize(backend):
        tl.back_(y)
    np.testing.assert_allclose(host(x.grad), 2 * A * rows[:, None] + np.cos(A) * (A > 0.2))
    z = tl.param(xp.asarray(A))
    tl.back_(tl.sum(z[rows] ** 2))  # a host mask is copied to the device, as CuPy's indexing does
    np.testing.assert_allclose(host(z.grad), 2 * A * rows[:, None])


@pytest.mark.parametrize("backend", DEVICES)
def test_clip_and_interp_make_no_host_round_trip(backend):
    """Neither calls the namespace's clip, whose array-api-compat wrapper (how trackerlab reaches CuPy) indexes
    with a boolean mask: a synchronisation in every gradient-clipping step."""
    xp = namespace_of(backend)
    a = np.array([-2.0, -0.5, 0.25, 1.5, np.nan])
    lo = np.array([-1.0, 0.0, -1.0, 0.0, 0.0])
    x, low = tl.param(xp.asarray(a)), tl.param(xp.asarray(lo))
    with no_synchronize(backend):
        y = tl.clip(x, low, 1.0)
        z = tl.interp(x, [-1.0, 0.0, 1.0], xp.asarray([0.0, 2.0, 3.0]))
        tl.back_(tl.sum(y * y) + tl.sum(z))
    np.testing.assert_array_equal(host(tl.data(y)), np.clip(a, lo, 1.0))
    np.testing.assert_array_equal(host(tl.data(z)), np.interp(a, [-1.0, 0.0, 1.0], [0.0, 2.0, 3.0]))
    inside = (a > lo) & (a < 1.0)
    np.testing.assert_array_equal(host(low.grad), np.where(a < lo, 2 * np.clip(a, lo, 1.0), 0.0))
    slope = np.where(a < -1.0, 0.0, np.where(a < 0.0, 2.0, np.where(a < 1.0, 1.0, 0.0)))
    np.testing.assert_array_equal(host(x.grad)[:4], (2 * a * inside + slope)[:4])


@pytest.mark.parametrize("backend", DEVICES)
def test_interp_takes_its_knots_and_values_as_lists_for_a_device_x(backend):
    """``tl.interp(x, xp, fp)`` with ``xp`` and ``fp`` given as Python lists and ``x`` on a device: both lists are
    put on ``x``'s device, as CuPy puts lists, and the value and gradient are NumPy's."""
    xp = namespace_of(backend)
    a = np.array([0.5, 1.5, 2.5, 3.5])
    x = tl.param(xp.asarray(a))
    knots, values = [0.0, 1.0, 2.0, 3.0], [0.0, 1.0, 4.0, 9.0]
    y = tl.interp(x, knots, values)
    tl.back_(tl.sum(y))
    assert isinstance(tl.data(y), xp.ndarray)
    np.testing.assert_array_equal(host(tl.data(y)), np.interp(a, knots, values))
    np.testing.assert_array_equal(host(x.grad), [1.0, 3.0, 5.0, 0.0])  # each segment's slope; none past the last knot


@pytest.mark.parametrize("backend", DEVICES)
def test_a_sensitivity_given_to_back_stays_on_the_device(backend):
    xp = namespace_of(backend)
    x = tl.param(xp.asarray([1.0, 2.0, 3.0]))
    y = x * x
    with no_synchronize(backend):
        tl.back_(y, xp.asarray([1.0, 0.0, 2.0]))
        tl.back_(y, 1.0)  # a scalar Δ broadcasts, on the device
    tl.back_(y, np.array([0.0, 1.0, 0.0]))  # a host Δ is copied to the device once, explicitly
    tl.back_(y, [0.0, 0.0, 1.0])
    np.testing.assert_allclose(host(x.grad), [4.0, 8.0, 24.0])
    assert isinstance(x.grad, xp.ndarray)


@pytest.mark.parametrize("backend", DEVICES)
def test_the_walk_steps_hold_device_values(backend):
    xp = namespace_of(backend)
    x = tl.param(xp.asarray([0.5, 1.5]))
    steps = list(tl.backprop_steps(tl.sum(tl.exp(x))))
    assert [s.op for s in steps] == ["sum", "exp", "param"]
    for step in steps:
        assert isinstance(step.delta, xp.ndarray), step.op
    np.testing.assert_allclose(host(steps[-1].delta), np.exp([0.5, 1.5]))


@pytest.mark.parametrize("backend", DEVICES)
def test_forward_gradient_and_nested_ad_on_a_device(backend):
    xp = namespace_of(backend)
    x = xp.asarray([0.3, -1.2, 2.0])
    y, back = tl.forward(lambda t: tl.sin(t) * t, x)
    assert isinstance(tl.data(y), xp.ndarray)
    (dx,) = back(xp.ones(3))
    assert isinstance(tl.data(dx), xp.ndarray)
    np.testing.assert_allclose(host(tl.data(dx)), np.cos(host(x)) * host(x) + np.sin(host(x)))
    (g,) = tl.gradient(lambda t: tl.sum(t**3), x)
    np.testing.assert_allclose(host(tl.data(g)), 3 * host(x) ** 2)
    # d/dx of the gradient's sum: the second derivative, through the backpropagators
    (gg,) = tl.gradient(lambda t: tl.sum(tl.gradient(lambda s: tl.sum(s**3), t)[0]), x)
    assert isinstance(tl.data(gg), xp.ndarray)
    np.testing.assert_allclose(host(tl.data(gg)), 6 * host(x))
    scalar = tl.gradient(lambda t: tl.gradient(lambda s: s**3, t)[0], xp.asarray(2.0))[0]
    assert float(tl.data(scalar)) == pytest.approx(12.0)


@pytest.mark.parametrize("backend", DEVICES)
def test_jacobian_and_hessian_on_a_device(backend):
    xp = namespace_of(backend)
    x = xp.asarray([1.0, 2.0])
    J = tl.jacobian(lambda t: t * t, x)
    H = tl.hessian(lambda t: tl.sum(t**3), x)
    assert isinstance(J, xp.ndarray) and isinstance(H, xp.ndarray)
    np.testing.assert_allclose(host(J), [[2.0, 0.0], [0.0, 4.0]])
    np.testing.assert_allclose(host(H), [[6.0, 0.0], [0.0, 12.0]])
    np.testing.assert_allclose(host(tl.jacobian(lambda t: tl.sum(t * t), x)), [2.0, 4.0])
    scalar = tl.jacobian(lambda t: t * t, xp.asarray(1.5))  # a 0-d result stays on the device too
    assert isinstance(scalar, xp.ndarray) and float(scalar) == 3.0


OPTIMISERS = {
    "Descent": lambda: tl.optim.Descent(0.1),
    "Momentum": lambda: tl.optim.Momentum(0.1, 0.5),
    "ADAM": lambda: tl.optim.ADAM(0.1),
}


@pytest.mark.parametrize("optimiser", sorted(OPTIMISERS))
@pytest.mark.parametrize("backend", DEVICES)
def test_params_and_optimisers_on_a_device(backend, optimiser):
    xp = namespace_of(backend)
    W, b = tl.param(xp.asarray([[1.0, -2.0]])), tl.param(xp.asarray([0.5]))
    W0, b0 = tl.param(np.array([[1.0, -2.0]])), tl.param(np.array([0.5]))
    opt, host_opt = OPTIMISERS[optimiser](), OPTIMISERS[optimiser]()
    x = xp.asarray([[3.0], [4.0]])
    for _ in range(3):
        params = tl.Params([W, b])
        gs = tl.gradient(lambda: tl.sum((W @ x + b) ** 2), params)
        assert isinstance(tl.data(gs[W]), xp.ndarray)
        with no_synchronize(backend):
            tl.update_(opt, params, gs)
        host_params = tl.Params([W0, b0])
        tl.update_(host_opt, host_params, tl.gradient(lambda: tl.sum((W0 @ host(x) + b0) ** 2), host_params))
    assert isinstance(tl.data(W), xp.ndarray) and isinstance(W.grad, xp.ndarray)
    np.testing.assert_allclose(host(tl.data(W)), tl.data(W0), rtol=1e-12)
    np.testing.assert_allclose(host(tl.data(b)), tl.data(b0), rtol=1e-12)


@pytest.mark.parametrize("backend", DEVICES)
def test_update_and_zero_grad_on_a_device(backend):
    xp = namespace_of(backend)
    x = tl.param(xp.asarray([1.0, 2.0]))
    with no_synchronize(backend):
        tl.update_(x, xp.asarray([0.5, 0.5]))
        tl.update_(x, 1.0)
        tl.zero_grad_(x)
    tl.update_(x, np.array([1.0, -1.0]))  # a host step is copied to the device
    np.testing.assert_allclose(host(tl.data(x)), [3.5, 2.5])
    assert isinstance(tl.data(x), xp.ndarray)
    assert isinstance(x.grad, xp.ndarray)


@pytest.mark.parametrize("backend", DEVICES)
def test_check_grads_on_a_device_catches_a_wrong_rule(backend):
    xp = namespace_of(backend)

    @tl.primitive
    def wrong(x):
        return x * x

    @tl.grad_rule(wrong)
    def _(x):
        return tl.data(x) * tl.data(x), lambda g: (g * 2.02 * x,)  # 1% wrong

    tl.check_grads(lambda x: tl.sum(x * x), xp.asarray([0.5, -1.0]))
    with pytest.raises(AssertionError, match="order 1"):
        tl.check_grads(lambda x: tl.sum(wrong(x)), xp.asarray([0.5, -1.0]))


# ---------------------------------------------------------------- the notebook layer on device values


def _tape(backend):
    xp = namespace_of(backend)
    W = tl.param(xp.asarray([[1.0, 2.0], [3.0, 4.0]]))
    x = tl.param(xp.asarray([0.5, -1.0]))
    y = tl.sum(tl.tanh(W @ x))
    return W, x, y


@pytest.mark.parametrize("backend", DEVICES)
def test_the_html_repr_names_the_library_and_the_device(backend):
    W, _, y = _tape(backend)
    tl.back_(y)
    device = "cuda:0" if backend == "cupy" else "standin:0"
    for value in (y, W):
        assert f'<span class="tl-dim">({backend} · {device})</span>' in unstyled(value._repr_html_())
    html = unstyled(W._repr_html_())
    assert "matmul" in y._repr_html_() and "<td>4</td>" in html  # the data, copied to the host to be shown
    assert repr(W) == "Tracked 2×2 float64 array:\n[[1. 2.]\n [3. 4.]]"


@pytest.mark.parametrize("backend", DEVICES)
def test_to_networkx_plot_tape_and_the_stepper_on_device_values(backend):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    _, _, y = _tape(backend)
    graph = tl.to_networkx(y)
    by_op = {d["op"]: d for _, d in graph.nodes(data=True) if d["op"] != "param"}
    assert set(by_op) == {"matmul", "tanh", "sum"}
    # the graph holds the values as the engine does, on their device (an export copies nothing)
    assert isinstance(by_op["matmul"]["data"], namespace_of(backend).ndarray)
    np.testing.assert_allclose(host(by_op["matmul"]["data"]), [-1.5, -2.5])
    assert tl.plot_tape(y) is not None
    stepper = tl.BackpropStepper(y)
    steps = stepper.steps
    assert [s["op"] for s in steps] == ["sum", "tanh", "matmul", "param", "param"]
    assert steps[0]["delta"] == 1.0 and steps[0]["sent"][0]["value"] == [1.0, 1.0]
    np.testing.assert_allclose(steps[1]["sent"][0]["value"], 1 - np.tanh([-1.5, -2.5]) ** 2)
    stepper.next()
    stepper.next()


def test_the_device_of_a_cupy_array_reads_cuda_0():
    if CUPY_SKIP is not None:
        pytest.skip(CUPY_SKIP)
    import cupy

    assert _backend.device_of(cupy.ones(2)) == "cuda:0"
    assert _backend.device_of(namespace_of("devicearray").ones(2)) == "standin:0"
