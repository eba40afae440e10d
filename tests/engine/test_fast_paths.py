"""The engine's fast paths give the same answers as the general ones: use counting from ``ref``, the
leaves-only walk of ``back_``/``gradient``, the unary and binary recording paths, float32 seeds."""

import numpy as np
import pytest

import trackerlab as tl
from trackerlab.core.walk import Walk, _count_uses


def test_a_node_also_used_off_the_walked_tape_is_released_by_its_walked_use():
    x = tl.param(2.0)
    z = x * 3.0
    _unwalked = z * 5.0  # z has ref 2, but only one of its uses is reachable from y
    y = tl.sin(z) + 1.0
    assert z.tracker.ref == 2
    steps = list(tl.backprop_steps(y))
    assert [s.op for s in steps] == ["add", "sin", "multiply", "param"]
    assert steps[-1].delta == pytest.approx(3 * np.cos(6.0))


def test_uses_are_counted_only_for_nodes_with_several_uses():
    x = tl.param(0.5)
    y = x
    for _ in range(1000):
        y = tl.sin(y)
    shared = tl.exp(y)
    out = shared * shared + x
    uses = _count_uses(out.tracker, set())
    assert uses == {shared.tracker: 2, x.tracker: 2}  # the 1,000 nodes of the chain are not in it
    tl.back_(out)
    chain = 1.0
    value = 0.5
    for _ in range(1000):
        chain *= np.cos(value)
        value = np.sin(value)
    assert x.grad == pytest.approx(2 * np.exp(2 * value) * chain + 1.0)


def test_a_node_built_by_hand_counts_as_a_use():
    x = tl.param(3.0)
    a = x * 2.0
    by_hand = tl.Tracked(tl.Call(tl.multiply, a, a), 36.0)
    assert a.tracker.ref == 2
    y = by_hand.value() + 0.0
    tl.back_(y)
    assert x.grad == pytest.approx(2 * 6.0 * 2.0)


def test_the_walk_replays_identically_after_a_nested_walk_added_uses():
    x = tl.param(1.5)
    y = tl.sin(x) * tl.exp(x)
    first = [(s.op, float(tl.data(s.delta))) for s in tl.backprop_steps(y)]
    list(tl.backprop_steps(y, nest=True))  # records pullbacks: the refs of y's nodes grow
    assert x.tracker.ref > 2
    assert [(s.op, float(tl.data(s.delta))) for s in tl.backprop_steps(y)] == first


def test_leaves_only_walks_agree_with_the_full_walk():
    x, w = tl.param(np.array([1.0, -2.0, 0.5])), tl.param(0.7)
    y = tl.sum(tl.tanh(x * w) * x)
    full = {s.node: s.delta for s in tl.backprop_steps(y) if s.isleaf}
    leaves = list(Walk(y, None).leaves())
    assert all(node.isleaf for node, _, _ in leaves) and len(leaves) == 2
    for node, g, _ in leaves:
        np.testing.assert_allclose(g, full[node])
    all_steps = list(tl.backprop_steps(y))
    assert [node for node, _, _ in leaves] == [s.node for s in all_steps if s.isleaf]  # in the same order
    # by hand: d/dx Σ tanh(xw)·x = tanh(xw) + x·w·(1 − tanh²), d/dw = Σ x²·(1 − tanh²)
    v = np.array([1.0, -2.0, 0.5])
    t = np.tanh(v * 0.7)
    np.testing.assert_allclose(full[x.tracker], t + v * 0.7 * (1 - t * t))
    assert full[w.tracker] == pytest.approx(np.sum(v * v * (1 - t * t)))
    gx, gw = tl.gradient(lambda x, w: tl.sum(tl.tanh(x * w) * x), tl.data(x), 0.7)
    np.testing.assert_allclose(tl.data(gx), full[x.tracker])
    assert tl.data(gw) == pytest.approx(full[w.tracker])


def test_a_float32_loss_back_propagates_in_float32():
    W = tl.param(np.ones((3, 2), dtype=np.float32))
    X = np.arange(6, dtype=np.float32).reshape(2, 3) / 10
    loss = tl.mean(tl.tanh(X @ W))
    assert tl.data(loss).dtype == np.float32
    steps = list(tl.backprop_steps(loss))
    assert steps[0].delta == 1 and steps[0].delta.dtype == np.float32
    tl.back_(loss)
    assert W.grad.dtype == np.float32
    t = np.tanh(X.astype(np.float64) @ np.ones((3, 2)))
    np.testing.assert_allclose(W.grad, X.T @ ((1 - t * t) / 4), rtol=1e-5)


def test_a_float64_scalar_loss_is_seeded_with_a_python_float():
    x = tl.param(2.0)
    (step, *_) = tl.backprop_steps(x * x)
    assert type(step.delta) is float and step.delta == 1.0


def test_unary_and_binary_calls_convert_lists_and_name_the_operation_in_errors():
    x = tl.param([1.0, 2.0])
    np.testing.assert_allclose(tl.data(tl.add(x, [10.0, 20.0])), [11.0, 22.0])
    np.testing.assert_allclose(tl.data(tl.add([10.0, 20.0], x)), [11.0, 22.0])
    np.testing.assert_allclose(tl.exp([0.0, 1.0]), [1.0, np.e])
    assert tl.multiply(2.0, 3.0) == 6.0
    with pytest.raises(ValueError, match=r"add: .*\(operand shapes \(2,\), \(3,\)\)"):
        tl.add(x, np.ones(3))
    with pytest.raises(ValueError, match=r"matmul: .*\(operand shapes \(2,\), \(3, 1\)\)"):
        tl.matmul(x, np.ones((3, 1)))
    total = tl.sum(tl.param(np.ones((2, 3))), axis=0)
    np.testing.assert_array_equal(tl.data(total), [2.0, 2.0, 2.0])
    assert total.tracker.f.kwargs == {"axis": 0}


def test_recording_keeps_ref_counts_and_settings_out_of_the_tape():
    x = tl.param(np.ones((2, 3)))
    y = tl.reshape(x, (3, 2))
    assert y.tracker.f.args == (x.tracker, (3, 2)) and x.tracker.ref == 1
    z = x * x
    assert z.tracker.f.args == (x.tracker, x.tracker) and x.tracker.ref == 3
    assert z.tracker.f.kwargs == {}
    with tl.no_grad():
        assert not tl.istracked(tl.sin(x)) and not tl.istracked(x + x)
    assert x.tracker.ref == 3


def test_operations_is_a_read_only_view():
    from trackerlab.ops.registry import operations

    ops = operations()
    assert ops["sin"] is tl.sin
    with pytest.raises(TypeError):
        ops["sin"] = None


@pytest.mark.slow
def test_a_deep_array_chain_of_a_million_operations_completes():
    x = tl.param(np.zeros(2))
    y = x
    for _ in range(1_000_000):
        y = y + 1.0
    tl.back_(y, 1.0)
    np.testing.assert_array_equal(x.grad, [1.0, 1.0])
    np.testing.assert_array_equal(tl.data(y), [1e6, 1e6])


# ---------------------------------------------------------------- backward passes recorded only when needed


def test_a_self_contained_gradient_is_one_tape_node_that_differentiates_by_replaying():
    g = tl.gradient(lambda x: x**3, 2.0)[0]
    assert g == 12.0 and g.tracker.f.name == "gradient"
    (x_node,) = g.tracker.f.args
    assert x_node.isleaf and x_node.data == 2.0
    steps = list(tl.backprop_steps(g))
    assert [s.op for s in steps] == ["gradient", "param"] and steps[1].delta == pytest.approx(12.0)
    assert g.tracker.f() == pytest.approx(12.0)  # re-running the tape entry recomputes the gradient


def test_derivatives_of_every_order_through_deferred_gradients():
    d = lambda f: lambda x: tl.gradient(f, x)[0]
    quartic = lambda x: x**4
    assert tl.data(d(quartic)(2.0)) == pytest.approx(32.0)
    assert tl.data(d(d(quartic))(2.0)) == pytest.approx(48.0)
    assert tl.data(d(d(d(quartic)))(2.0)) == pytest.approx(48.0)
    assert tl.data(d(d(d(d(quartic))))(2.0)) == pytest.approx(24.0)
    third = d(d(d(quartic)))(2.0)
    tl.back_(third)  # the deferred result of the outermost call differentiates once more
    assert third.tracker.f.args[0].grad == pytest.approx(24.0)


def test_a_gradient_that_reaches_an_outer_parameter_is_recorded_eagerly():
    W = tl.param(3.0)
    g = tl.gradient(lambda x: W * x * x, 1.0)[0]
    assert g.tracker.f.name != "gradient"
    tl.back_(g)  # d/dW of 2 W x at x = 1
    assert W.grad == pytest.approx(2.0)
    V = tl.param(5.0)
    h = tl.gradient(lambda x: tl.hook(lambda Δ: Δ * V, x) * 2.0, 1.0)[0]
    assert tl.data(h) == pytest.approx(10.0)
    tl.back_(h)  # the custom pullback closes over V: recorded eagerly too
    assert V.grad == pytest.approx(2.0)


def test_the_hessian_vector_product_of_the_benchmark_by_deferred_and_eager_paths():
    rng = np.random.default_rng(3)
    A, x, v = rng.standard_normal((4, 4)), rng.standard_normal(4), rng.standard_normal(4)
    f = lambda x: tl.sum(tl.tanh(A @ x) ** 2)
    (hv,) = tl.gradient(lambda x: tl.sum(tl.gradient(f, x)[0] * v), x)
    t = np.tanh(A @ x)
    np.testing.assert_allclose(tl.data(hv), A.T @ ((2 - 6 * t * t) * (1 - t * t) * (A @ v)), rtol=1e-10)
    np.testing.assert_allclose(tl.hessian(f, x) @ v, tl.data(hv), rtol=1e-10)


def test_numpy_work_needs_no_array_api_compat_wrapper():
    """NumPy 2 is an array-API namespace itself: importing array-api-compat's NumPy wrapper (a fifth of a
    second) waits until another library's array needs it."""
    import subprocess
    import sys
    from pathlib import Path

    probe = (
        "import sys, numpy, trackerlab as tl; before = 'array_api_compat' in sys.modules; "
        "x = tl.param(numpy.ones(2)); tl.back_(tl.sum(tl.sin(x))); "
        "print(before, 'array_api_compat.numpy' in sys.modules, x.grad.round(3).tolist())"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=root).stdout
    assert out.split() == ["False", "False", "[0.54,", "0.54]"]


def test_finished_gradient_calls_leave_no_tape_alive_on_either_path():
    import gc
    import weakref

    def alive_after(make):
        value = make()
        refs = [weakref.ref(value.tracker)] + [
            weakref.ref(a) for a in value.tracker.f.args if isinstance(a, tl.Tracked)
        ]
        assert len(refs) > 1  # the result is tracked, with a tape of its own
        del value
        gc.collect()
        return [r for r in refs if r() is not None]

    # deferred: one node over the call's own inputs
    assert alive_after(lambda: tl.gradient(lambda x: tl.sum(tl.tanh(x) * x), np.ones(3))[0]) == []
    # recorded eagerly: the backward pass's tape reaches W, which the caller keeps, and nothing else
    W = tl.param(np.ones(3))
    left = alive_after(lambda: tl.gradient(lambda: tl.sum(tl.tanh(W) * W), tl.Params([W]))[W])
    assert all(r() is W.tracker for r in left)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "shape, axis, keepdims",
    [
        ((64,), None, False),
        ((5, 7), 0, False),
        ((5, 7), 1, True),
        ((5, 7), (0, 1), False),
        ((3, 4, 5), -1, False),
        ((), None, False),
        ((5, 7), None, True),
    ],
)
def test_mean_of_a_float_array_is_numpys_mean_to_the_bit(dtype, shape, axis, keepdims):
    x = (np.random.default_rng(0).standard_normal(shape) * 1e3).astype(dtype)
    want = np.mean(x, axis=axis, keepdims=keepdims)
    got = tl.mean(x, axis=axis, keepdims=keepdims)
    recorded = tl.data(tl.mean(tl.param(x), axis=axis, keepdims=keepdims))
    for value in (got, recorded):
        assert np.asarray(value).dtype == want.dtype and np.shape(value) == np.shape(want)
        assert np.array_equal(value, want)
    p = tl.param(x)
    tl.back_(tl.sum(tl.mean(p, axis=axis, keepdims=keepdims) * 3.0))
    n = x.size if axis is None else np.prod([x.shape[a] for a in np.atleast_1d(axis)])
    assert np.result_type(p.grad) == dtype and np.allclose(p.grad, 3.0 / n)


def test_mean_of_other_values_goes_through_numpy():
    assert tl.mean([1, 2, 4]) == pytest.approx(7 / 3)
    assert tl.mean(np.array([1, 2], dtype=np.int64)) == 1.5
    half = np.array([1, 2], dtype=np.float16)
    assert tl.mean(half).dtype == np.float16
    with pytest.warns(RuntimeWarning):
        assert np.isnan(tl.mean(np.zeros(0)))


def test_a_scalar_operand_of_a_broadcast_sums_the_whole_sensitivity():
    b = tl.param(0.5)
    v = tl.param(np.float32(0.25))
    X = np.arange(12.0).reshape(3, 4)
    tl.back_(tl.sum((X + b) * (X * v)))
    assert b.grad == pytest.approx(np.sum(X * 0.25))
    assert v.grad == pytest.approx(np.sum((X + 0.5) * X))


def test_a_ufunc_met_before_keeps_refusing_its_options_on_tracked_values():
    x = tl.param(np.array([1.0, 2.0]))
    a = np.array([3.0, 4.0])
    assert np.array_equal(tl.data(a * x), [3.0, 8.0])  # a plain call: remembered
    assert np.array_equal(tl.data(np.multiply(a, x)), [3.0, 8.0])
    with pytest.raises(TypeError, match="out= is a plain array, which cannot hold a tracked result"):
        np.multiply(a, x, out=np.empty(2))
    with pytest.raises(TypeError, match=r"numpy\.multiply: dtype= is not supported"):
        np.multiply(a, x, dtype=np.float32)
    with pytest.raises(TypeError, match="no gradient rule"):
        np.subtract.reduceat(x, [0, 1])  # (add, multiply, maximum and minimum have one)
    assert np.array_equal(np.less(a, x), [False, False])  # not differentiable: plain


def test_operators_record_as_their_operation_and_take_lists_and_custom_rules():
    x = tl.param(np.array([1.0, 2.0]))
    y = x * [2.0, 3.0]  # a list operand goes through the general call
    assert y.tracker.op == "multiply" and np.array_equal(tl.data(y), [2.0, 6.0])
    z = [1.0, 1.0] - x
    assert z.tracker.op == "subtract" and np.array_equal(tl.data(z), [0.0, -1.0])
    with tl.no_grad():
        assert not tl.istracked(x * 2.0)
    tl.back_(tl.sum(y * z))  # d/dx Σ (c x)(1 − x) = c (1 − 2x)
    assert np.allclose(x.grad, [2.0 * (1 - 2.0), 3.0 * (1 - 4.0)])


@pytest.mark.parametrize(
    "make",
    [
        lambda: np.arange(6.0).reshape(2, 3),
        lambda: np.asfortranarray(np.arange(6.0).reshape(2, 3)),
        lambda: np.arange(12.0)[::2].reshape(2, 3),  # not contiguous
        lambda: np.arange(6.0, dtype=np.float32).reshape(2, 3),
        lambda: np.arange(6.0).reshape(2, 3) * (1 + 1j),
    ],
    ids=["C", "F", "strided", "float32", "complex"],
)
def test_an_array_parameter_is_a_read_only_copy_that_shares_nothing(make):
    a = make()
    p = tl.param(a)
    assert not np.shares_memory(p.data, a) and np.array_equal(p.data, a) and p.data.dtype == a.dtype
    assert not p.data.flags.writeable and a.flags.writeable  # the caller's array stays theirs
    a[...] = 7  # and changing it changes nothing the tape holds
    np.testing.assert_array_equal(p.data, make())


def test_changing_the_input_array_after_gradient_changes_no_gradient():
    # the deferred result replays f at the call's own copy of x, whatever the caller does to x after
    A = np.array([[1.0, 2.0], [0.5, -1.0]])
    x = np.array([0.3, -0.2])
    f = lambda x: tl.sum(tl.tanh(A @ x) ** 2)
    (g,) = tl.gradient(f, x)
    expected_g = tl.data(g).copy()
    t = np.tanh(A @ x)
    expected_h = A.T @ np.diag((2 - 6 * t * t) * (1 - t * t)) @ A
    x[:] = [5.0, 5.0]
    np.testing.assert_array_equal(tl.data(g), expected_g)
    tl.back_(tl.sum(g))  # differentiating the deferred gradient: the Hessian at the recorded x, summed
    np.testing.assert_allclose(g.tracker.f.args[0].grad, expected_h.sum(axis=0), rtol=1e-12)
