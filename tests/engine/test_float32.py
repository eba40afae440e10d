"""A float32 graph stays float32 end to end: every value the tape saves, every sensitivity the walk
carries and sends, the seeds (a Python number or a float64 Δ included), the accumulated ``.grad``, the
recorded backward pass of nested AD, and the optimisers' state. A float64 leak would double the time
and the memory of a float32 model without changing a single digit of what the user looks at."""

import itertools

import numpy as np
import pytest

import trackerlab as tl

F32 = np.dtype(np.float32)
RNG = np.random.default_rng(3)


def mlp_params():
    sizes = (6, 5, 4, 3)
    out = []
    for n_in, n_out in itertools.pairwise(sizes):
        out.append(tl.param((RNG.standard_normal((n_in, n_out)) / np.sqrt(n_in)).astype(np.float32)))
        out.append(tl.param((0.1 * RNG.standard_normal(n_out)).astype(np.float32)))
    return out


X = RNG.standard_normal((7, 6)).astype(np.float32)
LABELS = RNG.integers(0, 3, 7)
Y = np.eye(3, dtype=np.float32)[LABELS]


def written_out_loss(ps):
    """The loss with Python-float constants, ``mean``'s divisor and a row-max shift, as users write it."""
    W1, b1, W2, b2, W3, b3 = ps
    h1 = tl.tanh(X @ W1 + b1)
    h2 = tl.relu(h1 @ W2 + b2) * 0.5 + 0.1 * h1 @ W2
    z = h2 @ W3 + b3
    z = z - tl.data(z).max(axis=1, keepdims=True)
    return tl.mean(tl.log(tl.sum(tl.exp(z), axis=1)) - tl.sum(z * Y, axis=1)) / 2.0 + 1e-3 * tl.sum(W1**2)


def fused_loss(ps):
    W1, b1, W2, b2, W3, b3 = ps
    h = tl.sigmoid(tl.gelu(X @ W1 + b1) @ W2 + b2)
    return tl.cross_entropy(h @ W3 + b3, LABELS) + tl.mean(tl.log_softmax(h, axis=1) ** 2)


LOSSES = {"written out": written_out_loss, "fused": fused_loss}


def dtype_of(value):
    value = tl.data(value)
    if isinstance(value, float):
        return np.dtype(np.float64)
    return np.dtype(value.dtype)


def tape(value) -> list:
    """Every node of the tape of ``value``."""
    seen, stack, out = set(), [value.tracker], []
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        out.append(node)
        if not node.isleaf:
            stack.extend(a for a in node.f.args if isinstance(a, tl.Tracked))
    return out


def assert_float32_tape(value, where: str) -> None:
    """Every node of ``value``'s tape holds float32, and so does every array the calls saved as an argument."""
    for node in tape(value):
        assert dtype_of(node.data) == F32, f"{where}: {node.f.name} holds {dtype_of(node.data)}"
        for arg in node.f.args:
            if not isinstance(arg, tl.Tracked) and getattr(arg, "dtype", None) is not None and arg.dtype.kind == "f":
                assert arg.dtype == F32, f"{where}: {node.f.name} saved a {arg.dtype} argument"


def assert_float32_walk(steps, where: str, nest: bool) -> int:
    count = 0
    for step in steps:
        count += 1
        name = f"{where}, step {step.index} ({step.op})"
        assert dtype_of(step.node.data) == F32, f"{name}: saved {dtype_of(step.node.data)}"
        assert dtype_of(step.delta) == F32, f"{name}: sensitivity {dtype_of(step.delta)}"
        for arg, sent in zip(step.args, step.sent):
            if arg is not None and sent is not None:
                assert dtype_of(sent) == F32, f"{name}: sent {dtype_of(sent)}"
                if nest and tl.istracked(sent):  # the recorded backward pass stays float32 too
                    assert_float32_tape(sent, name)
    return count


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("nest", [False, True])
def test_a_float32_mlp_step_stays_float32(loss, nest):
    ps = mlp_params()
    y = LOSSES[loss](ps)
    assert dtype_of(y) == F32
    assert_float32_tape(y, loss)
    assert assert_float32_walk(tl.backprop_steps(y, nest=nest), loss, nest) > 15


@pytest.mark.parametrize("delta", [1, 2.5, np.float64(2.5), np.array(2.5), np.array(2.5, dtype=np.float16)])
def test_any_real_seed_back_propagates_in_float32(delta):
    ps = mlp_params()
    y = written_out_loss(ps)
    assert_float32_walk(tl.backprop_steps(y, delta), "seeded", nest=False)
    tl.back_(y, delta)
    assert all(p.grad.dtype == F32 for p in ps)
    v = tl.param(np.ones((2, 3), np.float32))
    assert_float32_walk(tl.backprop_steps(tl.tanh(v) * 2.0, np.ones((2, 3))), "array seed", nest=False)
    assert dtype_of(tl.forward(lambda a: tl.sum(a * a) * 0.5, np.ones(3, np.float32))[1](delta)[0]) == F32


def test_gradients_accumulation_and_zeroing_stay_float32():
    ps = mlp_params()
    for _ in range(2):
        tl.back_(written_out_loss(ps))
    assert all(p.grad.dtype == F32 for p in ps)
    tl.zero_grad_(ps)
    assert all(p.grad.dtype == F32 for p in ps)
    gs = tl.gradient(lambda: fused_loss(ps), tl.Params(ps))
    for p in ps:
        assert dtype_of(gs[p]) == F32
        assert_float32_tape(gs[p], "gradient")


def test_nested_ad_stays_float32():
    x = np.array([0.3, -0.2, 0.5], dtype=np.float32)
    H = tl.hessian(lambda v: tl.sum(tl.tanh(v) ** 3) / 2.0 + tl.mean(v * v), x)
    assert H.dtype == F32
    W = tl.param(x)
    ps = tl.Params([W])
    inner = []

    def penalty():
        g = tl.gradient(lambda: tl.sum(tl.softplus(W) * W), ps)[W]
        inner.append(g)
        return tl.sum(g * g)

    hv = tl.gradient(penalty, ps)  # inside an outer gradient: the backward pass is recorded
    assert_float32_tape(inner[0], "recorded gradient")
    assert dtype_of(hv[W]) == F32
    assert_float32_tape(hv[W], "second order")
    gs = tl.gradient(lambda: tl.sum(tl.softplus(W) * W), ps)  # deferred, then differentiated
    tl.back_(tl.sum(gs[W] ** 2))
    assert W.grad.dtype == F32


@pytest.mark.parametrize("opt", [tl.optim.Descent(0.1), tl.optim.Momentum(0.01, 0.9), tl.optim.ADAM(0.01)])
def test_optimiser_steps_and_state_stay_float32(opt):
    ps = tl.Params(mlp_params())
    for _ in range(3):
        gs = tl.gradient(lambda: written_out_loss(list(ps)), ps)
        tl.update_(opt, ps, gs)
    for p in ps:
        assert p.dtype == F32 and p.grad.dtype == F32
        for value in opt._state.get(p.tracker, {}).values():
            if hasattr(value, "dtype"):
                assert value.dtype == F32


def test_float64_targets_give_a_float32_parameter_a_float32_gradient():
    z = tl.param(RNG.standard_normal((3, 4)).astype(np.float32))
    t = np.full((3, 4), 0.25)  # float64 probabilities: the loss is float64, as NumPy promotes
    p = np.exp(z.data - z.data.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    cases = [(lambda: tl.cross_entropy(z, t), (p - t) / 3), (lambda: tl.sum(tl.log_softmax(z) * t), t - p)]
    for loss, want in cases:
        tl.zero_grad_(z)
        tl.back_(loss())
        assert z.grad.dtype == F32
        np.testing.assert_allclose(z.grad, want, rtol=1e-5, atol=1e-7)
