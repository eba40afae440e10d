"""The public API beyond the seeds: nested AD, Params/Grads, utilities, optimisers, and bad input."""

import math
import subprocess
import sys

import numpy as np
import pytest

import trackerlab as tl

# ---------------------------------------------------------------- param, data, grad, tracker


def test_param_dtypes_and_kinds():
    assert isinstance(tl.param(2), tl.TrackedReal) and tl.data(tl.param(2)) == 2.0
    assert isinstance(tl.param(True), tl.TrackedReal) and tl.data(tl.param(True)) == 1.0
    assert isinstance(tl.param([1, 2]), tl.TrackedArray)
    assert tl.param(np.array([1, 2], dtype=np.int32)).dtype == np.float64
    assert tl.param(np.array([1, 2], dtype=np.float32)).dtype == np.float32
    assert tl.param(np.float32(2)).dtype == np.float32
    assert isinstance(tl.param(np.array(3.0)), tl.TrackedReal)


def test_param_copies_its_input():
    a = np.array([1.0, 2.0])
    p = tl.param(a)
    tl.update_(p, [1.0, 1.0])
    np.testing.assert_array_equal(a, [1.0, 2.0])
    np.testing.assert_array_equal(p.data, [2.0, 3.0])


def test_accessors_on_untracked_values():
    assert tl.data(3.0) == 3.0 and tl.tracker(3.0) is None
    assert not tl.istracked(np.ones(2)) and tl.isleaf(np.ones(2))
    with pytest.raises(TypeError, match=r"grad: the value is not tracked \(got ndarray\)"):
        tl.grad(np.ones(2))


def test_tracker_fields():
    x = tl.param([1.0, 2.0])
    y = x * x
    node = y.tracker
    assert node.f.name == "multiply" and not node.isleaf and node.grad is None
    assert x.tracker.ref == 2  # x was used twice by the multiply
    assert tl.tracker(y) is node


# Operators with a plain operand on either side: non-commutative operations on 2-D operands of different
# shapes, so that an operator that swapped its operands gives another value (or another shape).
X23 = np.array([[0.5, 1.0, 2.0], [1.5, 0.25, 0.75]])
A23 = np.array([[2.0, 3.0, 1.0], [0.5, 4.0, 1.5]])
A42 = np.array([[1.0, 2.0], [-1.0, 0.5], [3.0, 1.0], [0.0, 2.0]])
A34 = np.array([[1.0, -2.0, 0.5, 3.0], [2.0, 1.0, -1.0, 0.0], [0.5, 1.5, 2.0, -0.5]])
OPERATORS = {
    "array - x": lambda x: A23 - x,
    "x - array": lambda x: x - A23,
    "array / x": lambda x: A23 / x,
    "x / array": lambda x: x / A23,
    "array ** x": lambda x: A23**x,
    "x ** array": lambda x: x**A23,
    "array @ x": lambda x: A42 @ x,
    "x @ array": lambda x: x @ A34,
    "list @ x": lambda x: A42.tolist() @ x,
    "x @ list": lambda x: x @ A34.tolist(),
    "array * x": lambda x: A23 * x,
    "array + x": lambda x: A23 + x,
    "number - x": lambda x: 2.0 - x,
    "number / x": lambda x: 2.0 / x,
    "number ** x": lambda x: 2.0**x,
    "x ** number": lambda x: x**3.0,
    "x[0] - row": lambda x: x[0] - A23[1],  # broadcasting against a 1-D operand
    "column / x": lambda x: A23[:, :1] / x,
}


@pytest.mark.parametrize("case", sorted(OPERATORS))
def test_operators_with_plain_values_on_either_side(case):
    expression = OPERATORS[case]
    y = expression(tl.param(X23))
    assert tl.istracked(y)
    np.testing.assert_allclose(tl.data(y), expression(X23))  # NumPy's value, on plain arrays
    tl.check_grads(expression, X23)


def test_operators_on_a_tracked_number():
    x = tl.param(1.5)
    for expression in (lambda x: 2.0 - x, lambda x: 2.0 / x, lambda x: 2.0**x, lambda x: x - 2.0, lambda x: x**2.0):
        assert float(expression(x)) == pytest.approx(expression(1.5))
        tl.check_grads(expression, 1.5)


def test_methods_and_indexing():
    x = tl.param(np.arange(6.0).reshape(2, 3))
    y = x.T.reshape(3, 2).sum(axis=0) + x[1, 1:].mean() + x.reshape((6,))[0]
    np.testing.assert_allclose(tl.data(y), np.arange(6.0).reshape(2, 3).T.reshape(3, 2).sum(axis=0) + 4.5 + 0.0)
    tl.back_(tl.sum(y))
    expected = np.ones((2, 3))
    expected[1, 1:] += 1.0  # mean over 2 elements, summed over 2 output entries
    expected[0, 0] += 2.0
    np.testing.assert_allclose(x.grad, expected)


def test_repeated_indices_accumulate():
    x = tl.param([1.0, 2.0, 3.0])
    tl.back_(tl.sum(x[np.array([0, 0, 2])]))
    np.testing.assert_array_equal(x.grad, [2.0, 0.0, 1.0])


def test_numpy_functions_on_tracked_values():
    x = tl.param([0.5, 1.0])
    y = np.sum(np.sin(x) * np.exp(x))
    assert tl.istracked(y)
    tl.back_(y)
    v = np.array([0.5, 1.0])
    np.testing.assert_allclose(x.grad, np.cos(v) * np.exp(v) + np.sin(v) * np.exp(v))


def test_numpy_function_without_a_rule_is_a_clear_error():
    with pytest.raises(TypeError, match=r"numpy\.linalg\.qr: trackerlab has no gradient rule"):
        np.linalg.qr(tl.param(np.eye(2)))


def test_comparisons_are_plain():
    x = tl.param([1.0, 3.0])
    np.testing.assert_array_equal(x > 2, [False, True])
    assert not tl.istracked(np.greater(x, 2))


# ---------------------------------------------------------------- nested AD


def test_second_and_third_derivatives():
    f = lambda x: x**3
    d1 = lambda x: tl.gradient(f, x)[0]
    d2 = lambda x: tl.gradient(d1, x)[0]
    d3 = lambda x: tl.gradient(d2, x)[0]
    assert float(d1(2.0)) == 12.0 and float(d2(2.0)) == 12.0 and float(d3(2.0)) == 6.0


def test_gradient_of_gradient_of_sin():
    d2 = tl.gradient(lambda x: tl.gradient(tl.sin, x)[0], 0.5)[0]
    assert float(d2) == pytest.approx(-math.sin(0.5))


def test_hessian_and_jacobian():
    A = np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_allclose(tl.jacobian(lambda x: tl.matmul(A, x), [1.0, 1.0]), A)
    x0 = np.array([0.3, -0.2])
    H = tl.hessian(lambda x: tl.sum(tl.tanh(tl.matmul(A, x)) ** 2), x0)
    # analytic: A^T diag(2 (1 - t²)(1 - 3 t²)) A with t = tanh(A x)
    t = np.tanh(A @ x0)
    expected = A.T @ np.diag(2 * (1 - t**2) * (1 - 3 * t**2)) @ A
    np.testing.assert_allclose(H, expected, rtol=1e-10)


def test_hessian_vector_product_by_nested_reverse_mode():
    A = np.random.default_rng(0).standard_normal((5, 5))
    v = np.random.default_rng(1).standard_normal(5)
    x0 = np.random.default_rng(2).standard_normal(5)
    f = lambda x: tl.sum(tl.tanh(tl.matmul(A, x)) ** 2)
    hvp = tl.gradient(lambda x: tl.sum(tl.gradient(f, x)[0] * v), x0)[0]
    np.testing.assert_allclose(tl.data(hvp), tl.hessian(f, x0) @ v, rtol=1e-10)


def test_gradient_through_closure_over_an_outer_parameter():
    w = tl.param(3.0)
    g = tl.gradient(lambda x: x * w * x, 2.0)[0]  # 2 x w = 12
    assert float(g) == 12.0
    tl.back_(g)  # d/dw (2 x w) = 2 x = 4
    assert w.grad == 4.0


def test_params_and_grads():
    W = tl.param([[1.0, 2.0], [3.0, 4.0]])
    b = tl.param([0.5, -0.5])
    x = np.array([1.0, -1.0])
    ps = tl.Params([W, b])
    gs = tl.gradient(lambda: tl.sum(tl.tanh(W @ x + b)), ps)
    t = np.tanh(W.data @ x + b.data)
    np.testing.assert_allclose(tl.data(gs[W]), np.outer(1 - t**2, x))
    np.testing.assert_allclose(tl.data(gs[b]), 1 - t**2)
    assert W in gs and len(gs) == 2 and [p is W for p in gs] == [True, False]
    assert W.grad.sum() == 0  # gradient does not touch .grad
    with pytest.raises(KeyError, match="Grads: no gradient for this value"):
        gs[tl.param(1.0)]
    with pytest.raises(TypeError, match="Params: only tracked values"):
        tl.Params([np.ones(2)])


def test_unreached_inputs_get_zero_gradients():
    assert repr(tl.gradient(lambda a, b: a * 2, 1.0, 5.0)) == "(2.0 (tracked), 0.0 (tracked))"


# ---------------------------------------------------------------- utilities


def test_hook_changes_the_sensitivity():
    x = tl.param(2.0)
    y = tl.hook(lambda Δ: -Δ, x) * 3
    tl.back_(y)
    assert x.grad == -3.0


def test_checkpoint_gives_the_same_gradients_and_keeps_no_inner_tape():
    f = lambda x: tl.sum(tl.sin(x) * tl.exp(x))
    x0 = np.array([0.1, 0.2, 0.3])
    plain = tl.data(tl.gradient(f, x0)[0])
    x = tl.param(x0)
    y = tl.checkpoint(f, x)
    assert y.tracker.f.name == "checkpoint" and y.tracker.f.args[1] is x.tracker
    tl.back_(y)
    np.testing.assert_allclose(x.grad, plain)
    # nested through a checkpoint
    second = tl.gradient(lambda x: tl.sum(tl.gradient(lambda t: tl.checkpoint(f, t), x)[0]), x0)[0]
    expected = tl.gradient(lambda x: tl.sum(tl.gradient(f, x)[0]), x0)[0]
    np.testing.assert_allclose(tl.data(second), tl.data(expected))


def test_nobacksies_is_reached_in_nested_ad():
    def f(x):
        g = tl.gradient(lambda t: t * t, x)[0]
        return tl.nobacksies("no second derivative through here", g)

    assert float(f(3.0)) == 6.0
    with pytest.raises(RuntimeError, match="nobacksies: no second derivative through here"):
        tl.gradient(f, 3.0)


def test_no_grad_records_nothing():
    x = tl.param([1.0, 2.0])
    with tl.no_grad():
        y = tl.sin(x) * 2
    assert not tl.istracked(y)
    np.testing.assert_allclose(y, np.sin([1.0, 2.0]) * 2)
    assert tl.istracked(tl.sin(x))


# ---------------------------------------------------------------- update_ and optimisers


def test_update_in_place_and_zeroes_grad():
    x = tl.param([1.0, 2.0])
    buffer = x.data
    tl.back_(tl.sum(x * x))
    tl.update_(x, -0.1 * x.grad)
    assert x.data is buffer
    np.testing.assert_allclose(x.data, [0.8, 1.6])
    np.testing.assert_array_equal(x.grad, [0.0, 0.0])


def test_zero_grad_of_a_collection_gives_each_value_fresh_zeros():
    W, b, s = tl.param(np.ones((2, 3), np.float32)), tl.param([1.0, 2.0]), tl.param(3.0)
    tl.back_(tl.sum(W) * s + tl.sum(b * b))
    earlier = W.grad
    collection = [W, (b, tl.Params([s]))]
    assert tl.zero_grad_(collection) is collection
    assert W.grad is not earlier and W.grad.dtype == np.float32 and W.grad.shape == (2, 3)
    np.testing.assert_array_equal(earlier, np.full((2, 3), 3.0))  # what code holding the earlier .grad sees
    np.testing.assert_array_equal(W.grad, np.zeros((2, 3)))
    np.testing.assert_array_equal(b.grad, [0.0, 0.0])
    assert s.grad == 0.0
    with pytest.raises(TypeError, match=r"zero_grad_: value 2 is not tracked \(got ndarray\)"):
        tl.zero_grad_([W, np.ones(2)])


def test_zero_grad_refuses_a_computed_value_and_resets_nothing_then():
    W = tl.param([1.0, 2.0])
    y = W * 2
    tl.back_(tl.sum(y * y))
    with pytest.raises(ValueError, match=r"zero_grad_: x is the result of multiply, not a parameter"):
        tl.zero_grad_(y)
    with pytest.raises(ValueError, match=r"zero_grad_: value 2 is the result of multiply, not a parameter"):
        tl.zero_grad_([W, y])
    np.testing.assert_array_equal(W.grad, [8.0, 16.0])  # all or nothing: W kept its gradient
    tl.zero_grad_([W, [W]])
    np.testing.assert_array_equal(W.grad, [0.0, 0.0])


@pytest.mark.parametrize(
    "params, grads, message",
    [
        ("W y b", [[1.0, 1.0], [1.0, 1.0], [1.0]], r"parameter 2 is the result of multiply, not a parameter"),
        ("W b", [[1.0, 1.0], [1.0, 1.0]], r"the gradient of parameter 2 has shape \(2,\), but the parameter has"),
        ("W b", [[1.0, 1.0], "a"], r"the gradient of parameter 2 is"),
        ("W b", [[1.0, 1.0], None], r"the gradient of parameter 2 is None"),
    ],
)
@pytest.mark.parametrize("opt", [tl.optim.Descent(0.1), tl.optim.Momentum(0.1), tl.optim.ADAM(0.1)], ids=repr)
def test_an_optimiser_step_is_all_or_nothing(opt, params, grads, message):
    W, b = tl.param([1.0, 2.0]), tl.param([3.0])
    named = {"W": W, "b": b, "y": W * 2}
    with pytest.raises((TypeError, ValueError), match="update_: " + message):
        tl.update_(opt, [named[n] for n in params.split()], grads)
    np.testing.assert_array_equal(tl.data(W), [1.0, 2.0])
    np.testing.assert_array_equal(tl.data(b), [3.0])


def test_an_optimiser_takes_gradients_given_as_lists():
    W, b = tl.param([1.0, 2.0]), tl.param([3.0])
    tl.update_(tl.optim.Descent(0.5), [W, b], [[1.0, 2.0], [2.0]])
    np.testing.assert_allclose(tl.data(W), [0.5, 1.0])
    np.testing.assert_allclose(tl.data(b), [2.0])


def test_back_accumulates_into_a_grad_that_code_holds_and_never_shares_one_array():
    # back_ may keep the sensitivity the walk made as the .grad, with the sum in it, where no one else
    # holds either array; a .grad someone holds is added to in place, and no two parameters (nor the
    # caller's Δ) ever share an array
    W = tl.param(np.ones((4, 3)))
    x = np.arange(8.0).reshape(2, 4)
    tl.zero_grad_(W)
    tl.back_(tl.sum(x @ W))
    held = W.grad
    tl.back_(tl.sum(x @ W))
    assert W.grad is held
    np.testing.assert_array_equal(held, 2 * np.repeat(x.sum(axis=0)[:, None], 3, axis=1))
    a, b = tl.param(np.zeros(3)), tl.param(np.zeros(3))
    tl.zero_grad_([a, b])
    tl.back_(tl.sum((a + b) * np.arange(3.0)))  # one sensitivity array sent to both
    assert not np.shares_memory(a.grad, b.grad)
    tl.back_(tl.sum(a * 2.0))
    np.testing.assert_array_equal(a.grad, [2.0, 3.0, 4.0])
    np.testing.assert_array_equal(b.grad, [0.0, 1.0, 2.0])
    c = tl.param(np.zeros(3))
    tl.zero_grad_(c)
    seed = np.array([1.0, 2.0, 3.0])
    tl.back_(c * 1.0, seed)
    seed[:] = 100.0
    np.testing.assert_array_equal(c.grad, [1.0, 2.0, 3.0])
    d = tl.param(np.zeros(3))
    tl.zero_grad_(d)
    seed = np.array([[1.0, 2.0, 3.0]])
    tl.back_(tl.reshape(d, (1, 3)), seed)  # the walk sends d a view of the caller's Δ
    seed[:] = 100.0
    np.testing.assert_array_equal(d.grad, [1.0, 2.0, 3.0])
    kept = np.arange(6.0)
    f = tl.param(np.zeros(3))
    tl.zero_grad_(f)
    tl.back_(tl.sum(tl.hook(lambda g: kept[:3], f)))  # a hook sends f a view of an array code holds
    kept[:] = -1.0
    np.testing.assert_array_equal(f.grad, [0.0, 1.0, 2.0])
    for grad in (np.zeros(3), np.zeros(3, np.complex64)):  # a .grad set by hand keeps its dtype, as adding
        e = tl.param(np.zeros(3, np.float32) if grad.dtype == np.float64 else np.zeros(3))  # in place does
        e.grad = grad.copy()  # (held by nothing else)
        tl.back_(tl.sum(e * 1.5))
        assert e.grad.dtype == grad.dtype
        np.testing.assert_array_equal(e.grad, [1.5, 1.5, 1.5])
    for _ in range(3):  # steps of a training loop: the numbers of a fresh .grad each time
        tl.zero_grad_([a, b])
        tl.back_(tl.sum((a + b) * np.arange(3.0)))
        np.testing.assert_array_equal(a.grad, [0.0, 1.0, 2.0])
        np.testing.assert_array_equal(b.grad, [0.0, 1.0, 2.0])
        assert not np.shares_memory(a.grad, b.grad)


def test_zero_grad_zeroes_in_place_only_a_grad_no_one_holds():
    W = tl.param(np.ones((2, 3), np.float32))
    tl.back_(tl.sum(W * W))
    address = W.grad.ctypes.data  # a number: nothing holds the array itself
    tl.zero_grad_(W)
    assert W.grad.ctypes.data == address and W.grad.dtype == np.float32
    np.testing.assert_array_equal(W.grad, np.zeros((2, 3)))
    tl.back_(tl.sum(W * W))
    earlier = W.grad
    tl.zero_grad_([W])
    assert W.grad is not earlier
    np.testing.assert_array_equal(earlier, np.full((2, 3), 2.0))
    W.grad = np.asfortranarray(np.ones((2, 3), np.float32))  # set by hand, of another layout: fresh zeros
    tl.zero_grad_(W)
    assert W.grad.flags.c_contiguous
    np.testing.assert_array_equal(W.grad, np.zeros((2, 3)))


@pytest.mark.parametrize(
    "opt, steps",
    [(tl.optim.Descent(0.1), 200), (tl.optim.Momentum(0.05, 0.9), 300), (tl.optim.ADAM(0.1), 500)],
    ids=["Descent", "Momentum", "ADAM"],
)
def test_optimisers_minimise_a_quadratic(opt, steps):
    x = tl.param([3.0, -2.0])
    ps = tl.Params([x])
    target = np.array([1.0, 0.5])
    for _ in range(steps):
        gs = tl.gradient(lambda: tl.sum((x - target) ** 2), ps)
        tl.update_(opt, ps, gs)
    np.testing.assert_allclose(x.data, target, atol=1e-3)


def test_descent_step_by_hand():
    x = tl.param([1.0, 2.0])
    ps = tl.Params([x])
    tl.update_(tl.optim.Descent(0.5), ps, tl.gradient(lambda: tl.sum(x * x), ps))
    np.testing.assert_allclose(x.data, [0.0, 0.0])


def test_adam_first_step_is_eta_times_sign():
    x = tl.param([1.0, -2.0])
    ps = tl.Params([x])
    tl.update_(tl.optim.ADAM(0.01), ps, tl.gradient(lambda: tl.sum(x * x * x), ps))
    np.testing.assert_allclose(x.data, [0.99, -2.01], rtol=1e-6)


# ---------------------------------------------------------------- bad input


def test_back_of_an_array_without_a_sensitivity():
    with pytest.raises(ValueError, match=r"back_: y has shape \(3,\); pass a sensitivity Δ of that shape"):
        tl.back_(tl.param([1.0, 2.0, 3.0]) * 2)


def test_back_with_a_sensitivity_of_the_wrong_shape():
    with pytest.raises(ValueError, match=r"back_: Δ has shape \(2,\), but y has shape \(3,\)"):
        tl.back_(tl.param([1.0, 2.0, 3.0]) * 2, [1.0, 1.0])


def test_back_of_an_untracked_value():
    with pytest.raises(TypeError, match="back_: y is not tracked"):
        tl.back_(np.ones(2))


def test_gradient_of_a_non_scalar_function():
    with pytest.raises(ValueError, match=r"gradient: f returned an array of shape \(2,\); gradient needs a scalar"):
        tl.gradient(lambda x: x * 2, [1.0, 2.0])


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_gradient_of_a_non_finite_loss(bad):
    with np.errstate(all="ignore"):
        with pytest.raises(FloatingPointError, match=r"gradient: f returned (nan|inf); the loss must be finite"):
            tl.gradient(lambda x: x * bad, 1.0)


def test_custom_rule_with_the_wrong_number_of_sensitivities():
    @tl.primitive
    def scale(a, b):
        return a * b

    @tl.grad_rule(scale)
    def _(a, b):
        return tl.data(a) * tl.data(b), lambda Δ: (Δ,)

    with pytest.raises(ValueError, match="scale: the pullback returned 1 sensitivities for 2 arguments"):
        tl.back_(scale(tl.param(2.0), tl.param(3.0)))


def test_custom_rule_with_a_sensitivity_of_the_wrong_shape():
    @tl.primitive
    def total(x):
        return x.sum()

    @tl.grad_rule(total)
    def _(x):
        return tl.data(x).sum(), lambda Δ: (Δ,)  # wrong: must be broadcast to x's shape

    with pytest.raises(
        ValueError,
        match=r"total: the pullback's sensitivity for argument 1 has shape \(\), "
        r"but the argument has shape \(3,\)",
    ):
        tl.back_(total(tl.param([1.0, 2.0, 3.0])))


def test_custom_rule_returning_a_tracked_value():
    @tl.primitive
    def twice(x):
        return 2 * x

    @tl.grad_rule(twice)
    def _(x):
        return 2 * x, lambda Δ: (2 * Δ,)  # forgot tl.data

    with pytest.raises(TypeError, match="twice: the rule returned a tracked value"):
        twice(tl.param(1.0))


def test_track_without_a_rule():
    def mystery(x):
        return x

    with pytest.raises(
        TypeError,
        match=r"track: no gradient rule is registered for mystery; define one with "
        r"@tl.grad_rule\(mystery\)",
    ):
        tl.track(mystery, tl.param(1.0))


def test_matmul_shapes_that_do_not_align():
    with pytest.raises(ValueError, match=r"matmul: .*\(operand shapes \(2, 3\), \(4,\)\)"):
        tl.param(np.ones((2, 3))) @ np.ones(4)


def test_update_with_the_wrong_shape():
    with pytest.raises(ValueError, match=r"update_: Δ has shape \(3,\), but x has shape \(2,\)"):
        tl.update_(tl.param([1.0, 2.0]), [1.0, 2.0, 3.0])


# ---------------------------------------------------------------- the engine stays light


def test_import_loads_no_notebook_packages():
    code = (
        "import sys, trackerlab; "
        "print(' '.join(m for m in ('IPython', 'ipywidgets', 'matplotlib', 'networkx') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_supported_operations_come_from_the_rule_tables():
    ops = tl.supported_operations()
    for name in (
        "add",
        "multiply",
        "matmul",
        "sum",
        "mean",
        "exp",
        "log",
        "sin",
        "cos",
        "tanh",
        "relu",
        "maximum",
        "reshape",
        "transpose",
        "getitem",
    ):
        assert name in ops
    assert ops == sorted(ops)


def test_back_keeps_a_fresh_sensitivity_as_a_grad_nothing_else_holds():
    x = tl.param(np.ones(1000))
    tl.back_(tl.sum(x * 2.0))
    first = id(x.grad)
    tl.back_(tl.sum(x * 3.0))  # the walk's new array becomes the .grad, with the sum in it
    assert id(x.grad) != first and np.all(x.grad == 5.0) and x.grad.flags.writeable
    held = x.grad
    tl.back_(tl.sum(x * 1.0))  # held by code: added in place, as Flux's accum!
    assert held is x.grad and np.all(held == 6.0)


@pytest.mark.parametrize("delta", [np.array([1j, 0.0, 2.0]), [1j, 0, 0], np.ones(3, dtype=np.complex64)])
def test_a_complex_seed_for_a_real_value_is_refused(delta):
    # a real value's sensitivity is real: the imaginary part has nowhere to go, so it is refused, not dropped
    x = tl.param(np.array([1.0, 2.0, 3.0]))
    with pytest.raises(TypeError, match=r"back_: Δ is complex, but y is real \(float64\).*Δ\.real"):
        tl.back_(x * 2.0, delta)
    with pytest.raises(TypeError, match=r"forward: Δ is complex|Δ is complex, but y is real"):
        tl.forward(lambda v: v * 2.0, x)[1](delta)
    assert np.array_equal(x.grad, np.zeros(3))


def test_a_complex_seed_for_a_complex_value_and_a_real_seed_are_taken():
    z = tl.param(np.array([1.0 + 1.0j, 2.0]))
    tl.back_(z * 2.0, np.array([1.0 + 2.0j, 1.0]))
    np.testing.assert_allclose(z.grad, [2.0 + 4.0j, 2.0])
    x = tl.param(np.array([1.0, 2.0]))
    tl.back_(x * x, np.array([1.0, 3.0]))
    np.testing.assert_allclose(x.grad, [2.0, 12.0])


def test_grad_rule_written_without_its_function_is_an_error_at_first_use():
    def rule(x):
        return tl.data(x), lambda g: (g,)

    decorator = tl.grad_rule(rule)  # as `@tl.grad_rule` with no (f) leaves it: a decorator named after the rule
    with pytest.raises(TypeError, match=r"grad_rule\('rule'\) decorates the rule of that function.*TrackedArray"):
        decorator(tl.param([1.0, 2.0]))
    with pytest.raises(TypeError, match="grad_rule: f must be the function"):
        tl.grad_rule(3.0)


# ---------------------------------------------------------------- forward's walk stops where its inputs cannot be


def _counted_history(calls: list, p, length: int):
    """``p`` through ``length`` recorded calls of a rule that counts its pullback's runs in ``calls``."""

    @tl.primitive
    def scale(v):
        return v * 1.001

    @tl.grad_rule(scale)
    def _(v):
        def pullback(g):
            calls.append(1)
            return (g * 1.001,)

        return tl.data(v) * 1.001, pullback

    w = p
    for _ in range(length):
        w = scale(w)
    return w


@pytest.mark.parametrize("spelling", ["forward", "gradient"])
def test_the_walk_of_forward_and_gradient_does_not_run_the_history_of_a_value_f_closes_over(spelling):
    calls = []
    p = tl.param(2.0)
    w = _counted_history(calls, p, 50)
    if spelling == "forward":
        _, back = tl.forward(lambda x: x * w, 5.0)
        (g,) = back(1.0)
    else:
        (g,) = tl.gradient(lambda x: x * w, 5.0)
    assert calls == []
    assert tl.data(g) == pytest.approx(2 * 1.001**50)
    tl.back_(g)  # the sensitivity still depends on w, and so on p: d/dp of 1.001**50 p
    assert p.grad == pytest.approx(1.001**50)
    assert len(calls) == 50


def test_a_pullback_calling_forward_on_a_function_closing_over_its_own_output_does_not_recurse():
    holder = {}

    @tl.primitive
    def square(a):
        return a * a

    @tl.grad_rule(square)
    def _(a):
        def pullback(g):
            _, back = tl.forward(lambda x: x * holder["y"], 1.0)
            (s,) = back(1.0)
            return (g * 2 * tl.data(a) + 0 * tl.data(s),)

        return tl.data(a) ** 2, pullback

    a = tl.param(3.0)
    holder["y"] = y = square(a)
    tl.back_(y)
    assert a.grad == 6.0


def test_forward_still_walks_what_f_records_from_a_value_it_closes_over():
    w = tl.param([1.0, 2.0]) * 3
    _, back = tl.forward(lambda x: tl.sum(tl.sin(x * w) * w), np.array([0.5, -0.25]))
    (g,) = back(1.0)
    w_ = np.array([3.0, 6.0])
    np.testing.assert_allclose(tl.data(g), np.cos(np.array([0.5, -0.25]) * w_) * w_**2)


# ----------------------------------------------------------------------------------------------------
# Found by the random-program fuzzer: the Jacobian of a real function of a complex 0-d input.
# ----------------------------------------------------------------------------------------------------


def test_jacobian_of_a_complex_scalar_input_is_the_complex_gradient():
    # L = |z|³: ∂L/∂x − i ∂L/∂y = 3|z| (x − iy) = 3 · 0.5 · (0.3 − 0.4i)
    z = np.array(0.3 + 0.4j)
    J = tl.jacobian(lambda z: abs(z) ** 3, z)
    assert isinstance(J, complex)
    assert np.isclose(J, 1.5 * (0.3 - 0.4j))
    # the same number as the gradient, and as the 1-element case
    assert np.isclose(J, complex(tl.data(tl.gradient(lambda z: abs(z) ** 3, z)[0])))
    assert np.allclose(tl.jacobian(lambda z: abs(z) ** 3, np.array([0.3 + 0.4j])), [[1.5 * (0.3 - 0.4j)]])


def test_jacobian_of_a_real_scalar_stays_a_float():
    J = tl.jacobian(lambda x: x**3, 2.0)
    assert type(J) is float and J == 12.0
    assert tl.hessian(lambda x: x**3, 2.0) == 12.0
