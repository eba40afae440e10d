"""A plain NumPy array used as a constant of a recorded operation, then changed in place before the backward
pass: a small one is copied when recorded (the gradient is exact, at the values the forward pass used), a
large one is fingerprinted and every consumer of the tape refuses it, naming the operation, the argument and
its shape. Nothing gives the gradient at the new values silently."""

import numpy as np
import pytest

import trackerlab as tl
from trackerlab.core.guard import SMALL_CONSTANT

CHANGED = r"changed in place after .* was recorded"


def large(*shape, dtype=np.float64, seed=0):
    """Random numbers of ``shape``, more than the bytes below which a constant is copied."""
    out = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    assert out.nbytes > SMALL_CONSTANT
    return out


# ----------------------------------------------------------------------------------------------------
# Small constants: copied, so the gradient is the one at the values the forward pass used


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_small_constant_changed_after_recording_keeps_the_recorded_values(dtype):
    x = tl.param(np.array([3.0, 4.0], dtype=dtype))
    c = np.array([1.0, 2.0], dtype=dtype)
    y = tl.sum(x * c)
    c[:] = 0
    tl.back_(y)
    np.testing.assert_array_equal(x.grad, [1.0, 2.0])
    assert x.grad.dtype == dtype


@pytest.mark.parametrize(
    "change",
    [
        lambda c: c.__setitem__(0, 5.0),
        lambda c: np.copyto(c, np.zeros(3)),
        lambda c: c.sort(),
        lambda c: c.__imul__(2),
    ],
    ids=["setitem", "copyto", "sort", "imul"],
)
def test_small_constant_every_spelling_of_a_change(change):
    x = tl.param([1.0, 1.0, 1.0])
    c = np.array([3.0, 1.0, 2.0])
    y = tl.sum(x * c)
    change(c)
    tl.back_(y)
    np.testing.assert_array_equal(x.grad, [3.0, 1.0, 2.0])


def test_small_index_array_changed_after_getitem():
    x = tl.param([10.0, 20.0, 30.0, 40.0])
    idx = np.array([0, 0, 2])
    y = tl.sum(x[idx] * np.array([1.0, 2.0, 3.0]))
    idx[0] = 3
    tl.back_(y)
    np.testing.assert_array_equal(x.grad, [3.0, 0.0, 3.0, 0.0])


def test_small_index_in_a_tuple_and_a_list_changed_after_getitem():
    x = tl.param(np.arange(6.0).reshape(3, 2))
    rows = np.array([0, 2])
    y = tl.sum(x[rows, :])
    rows[0] = 1
    tl.back_(y)
    np.testing.assert_array_equal(x.grad, [[1, 1], [0, 0], [1, 1]])

    v = tl.param([1.0, 2.0, 3.0])
    which = [0, 0, 1]
    y = tl.sum(v[which])
    which[0] = 2
    tl.back_(y)
    np.testing.assert_array_equal(v.grad, [2.0, 1.0, 0.0])


def test_small_constant_matmul_with_a_reused_batch_buffer():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((4, 3))
    first = X.copy()
    w = tl.param(rng.standard_normal(3))
    y = tl.sum(tl.tanh(X @ w))
    X[:] = rng.standard_normal((4, 3))  # the next batch
    tl.back_(y)
    expected = first.T @ (1 - np.tanh(first @ tl.data(w)) ** 2)
    np.testing.assert_allclose(w.grad, expected, rtol=1e-14)


def test_the_caller_array_stays_writeable_and_its_own():
    c = np.array([1.0, 2.0])
    x = tl.param([1.0, 1.0])
    y = x * c
    assert c.flags.writeable
    assert y.tracker.args[1] is not c and not y.tracker.args[1].flags.writeable
    big = large(100, 100)
    y = x[0] * big
    assert big.flags.writeable and y.tracker.args[1] is big


# ----------------------------------------------------------------------------------------------------
# Large constants: fingerprinted, and every consumer of the tape refuses a changed one


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("order", ["C", "F"])
def test_large_batch_buffer_changed_before_back_is_refused(dtype, order):
    X = np.asarray(large(128, 784, dtype=dtype), order=order)
    w = tl.param(np.ones(784, dtype=dtype))
    y = tl.sum(X @ w)
    X[:] = large(128, 784, dtype=dtype, seed=1)
    with pytest.raises(RuntimeError, match=CHANGED):
        tl.back_(y)
    assert np.all(w.grad == 0)  # refused before any pullback ran


@pytest.mark.parametrize(
    "change",
    [
        lambda c: c.__setitem__(0, c[0] + 1),
        lambda c: c.__setitem__(-1, 0.0),
        lambda c: np.copyto(c, c[::-1].copy()),
        lambda c: c.sort(),
        lambda c: c.__setitem__([3, 7000], c[[7000, 3]]),  # a swap: the sum is the same
        lambda c: c.__setitem__([0, 1], c[[1, 0]]),  # two neighbours swapped
        lambda c: c.__setitem__(5, np.nan),
        lambda c: c.__setitem__(5, np.inf),
    ],
    ids=["setitem", "last", "copyto", "sort", "swap", "neighbours", "nan", "inf"],
)
def test_large_constant_every_spelling_of_a_change_is_refused(change):
    c = large(10000)
    x = tl.param(np.ones(10000))
    y = tl.sum(x * c)
    change(c)
    with pytest.raises(RuntimeError, match=CHANGED):
        tl.back_(y)


def test_large_integer_index_array_changed_after_getitem_is_refused():
    x = tl.param(np.arange(10.0))
    idx = np.random.default_rng(0).integers(0, 10, 10000)
    y = tl.sum(x[idx])
    idx[0] = (idx[0] + 3) % 10
    with pytest.raises(RuntimeError, match=r"getitem: argument 2 \(a constant array of shape \(10000,\)\)"):
        tl.back_(y)


def test_large_int32_index_array_swapped_is_refused():
    x = tl.param(np.arange(10.0))
    idx = np.tile(np.arange(10, dtype=np.int32), 2000)
    y = tl.sum(x[idx] * np.linspace(0, 1, 20000))
    idx[[0, 1]] = idx[[1, 0]]
    with pytest.raises(RuntimeError, match=CHANGED):
        tl.back_(y)


def test_the_message_names_the_operation_the_argument_and_the_shape():
    X = large(128, 784)
    w = tl.param(np.ones((784, 10)))
    y = tl.sum(tl.multiply(2.0, X @ w))
    X[0, 0] = 7.0
    with pytest.raises(RuntimeError) as info:
        tl.back_(y)
    message = str(info.value)
    assert message.startswith("matmul: argument 1 (a constant array of shape (128, 784)) was changed in place")
    assert "after matmul was recorded" in message
    assert "Pass a copy" in message and "run the forward pass again" in message


def test_the_message_names_the_second_argument():
    c = large(100, 100)
    x = tl.param(np.ones((100, 100)))
    y = tl.sum(x * c)
    c[1, 1] = 0
    with pytest.raises(RuntimeError, match=r"^multiply: argument 2 \(a constant array of shape \(100, 100\)\)"):
        tl.back_(y)


def test_an_unchanged_large_constant_gives_the_same_gradient_bit_for_bit():
    X = large(128, 784)
    w0 = np.random.default_rng(2).standard_normal(784)
    w = tl.param(w0)
    tl.back_(tl.sum(tl.tanh(X @ w)))
    copied = tl.param(w0)
    tl.back_(tl.sum(tl.tanh(X.copy() @ copied)))
    np.testing.assert_array_equal(w.grad, copied.grad)
    np.testing.assert_allclose(w.grad, X.T @ (1 - np.tanh(X @ w0) ** 2), rtol=1e-12)
    tl.back_(tl.sum(tl.tanh(X @ w)))  # the same batch again
    np.testing.assert_array_equal(w.grad, 2 * copied.grad)


def test_a_constant_holding_nan_that_is_not_changed_is_not_refused():
    for c in (np.array([1.0, np.nan, 3.0]), np.r_[large(10000), np.nan, -np.inf]):
        x = tl.param(np.ones(c.size))
        tl.back_(tl.sum(x * c))
        np.testing.assert_array_equal(x.grad, c)  # NaN where c holds NaN


def test_a_large_constant_holding_nan_is_still_guarded():
    c = np.r_[large(10000), np.nan]
    x = tl.param(np.ones(c.size))
    y = tl.sum(x * c)
    c[0] = 5.0
    tl.back_(y)  # it was copied: the gradient is at the recorded values
    assert x.grad[0] != 5.0 and np.isnan(x.grad[-1])


def test_a_large_constant_that_is_not_contiguous_or_of_another_dtype_is_copied():
    base = large(256, 1568)
    view = base[:, ::2]
    recorded = view.copy()
    w = tl.param(np.ones(784))
    y = tl.sum(view @ w)
    base[:] = 0
    tl.back_(y)
    np.testing.assert_allclose(w.grad, recorded.sum(axis=0), rtol=1e-12)

    half = large(200, 200, dtype=np.float16)
    recorded = half.astype(np.float64)
    x = tl.param(np.ones((200, 200)))
    y = tl.sum(x * half)
    half[:] = 0
    tl.back_(y)
    np.testing.assert_array_equal(x.grad, recorded)


def test_changing_the_constant_after_back_is_fine():
    X = large(128, 784)
    w = tl.param(np.ones(784))
    y = tl.sum(X @ w)
    tl.back_(y)
    X[:] = 0  # the next batch, after the backward pass: nothing to refuse
    tl.back_(tl.sum(X @ w))
    np.testing.assert_allclose(w.grad, large(128, 784).sum(axis=0), rtol=1e-12)


# ----------------------------------------------------------------------------------------------------
# Every consumer of the tape: gradient, forward's back, backprop_steps, nested walks, check_tape


def test_gradient_refuses_a_constant_changed_inside_f():
    X = large(128, 784)

    def f(w):
        y = tl.sum(tl.tanh(X @ w))
        X[:] = 0  # the next batch, too early
        return y

    with pytest.raises(RuntimeError, match="matmul: argument 1"):
        tl.gradient(f, np.ones(784))


def test_forward_back_refuses_a_constant_changed_before_it_is_called():
    X = large(128, 784)
    _, back = tl.forward(lambda w: tl.sum(tl.tanh(X @ w)), np.ones(784))
    X[:] = large(128, 784, seed=3)
    with pytest.raises(RuntimeError, match="matmul: argument 1"):
        back(1.0)


def test_backprop_steps_refuses_before_the_first_step():
    c = large(10000)
    x = tl.param(np.ones(10000))
    y = tl.sum(tl.sin(x) * c)
    c.sort()
    steps = tl.backprop_steps(y)
    with pytest.raises(RuntimeError, match="multiply: argument 2"):
        next(steps)
    with pytest.raises(RuntimeError, match="multiply: argument 2"):
        list(tl.backprop_steps(y, nest=True))


def test_nested_gradient_refuses_a_constant_changed_between_the_inner_and_outer_walks():
    X = large(128, 784)
    w0 = np.full(784, 0.01)

    def outer(w):
        g = tl.gradient(lambda v: tl.sum(tl.tanh(X @ v)), w)[0]
        X[:] = 0  # the inner walk's tape (which the outer walk goes through) keeps X
        return tl.sum(g * g)

    with pytest.raises(RuntimeError, match=CHANGED):
        tl.gradient(outer, tl.param(w0))


def test_nested_gradient_with_an_unchanged_constant_matches_finite_differences():
    X = large(128, 784) / 30
    w0 = np.random.default_rng(4).standard_normal(784) / 30

    def outer(w):
        g = tl.gradient(lambda v: tl.sum(tl.tanh(X @ v)), w)[0]
        return tl.sum(g * g)

    (got,) = tl.gradient(outer, tl.param(w0))

    def plain(w):
        g = X.T @ (1 - np.tanh(X @ w) ** 2)
        return g @ g

    direction = np.random.default_rng(5).standard_normal(784)
    eps = 1e-6
    expected = (plain(w0 + eps * direction) - plain(w0 - eps * direction)) / (2 * eps)
    np.testing.assert_allclose(tl.data(got) @ direction, expected, rtol=1e-6)


def test_check_tape_refuses_a_changed_constant():
    c = large(10000)
    x = tl.param(np.ones(10000))
    y = tl.sum(tl.tanh(x) * c)
    assert tl.check_tape(y)
    c[::2] = 0
    with pytest.raises(RuntimeError, match="multiply: argument 2"):
        tl.check_tape(y)


def test_a_custom_rule_closing_over_a_small_constant_is_compared_too():
    def scale(x, c):
        return tl.track(scale, x, c) if tl.istracked(x) else x * c

    @tl.grad_rule(scale)
    def _(x, c):
        return tl.data(x) * c, lambda g: (g * c, None)

    c = np.array([1.0, 2.0])
    x = tl.param([1.0, 1.0])
    y = tl.sum(scale(x, c))
    c[0] = 9.0  # the pullback reads c itself: a copy on the tape would not help
    with pytest.raises(RuntimeError, match=r"scale: argument 2 \(a constant array of shape \(2,\)\)"):
        tl.back_(y)
    c[0] = 1.0  # back as recorded: fine
    tl.back_(y)
    np.testing.assert_array_equal(x.grad, [1.0, 2.0])


def test_a_keyword_constant_of_a_custom_rule_is_compared():
    def shift(x, *, by):
        return tl.track(shift, x, by=by) if tl.istracked(x) else x + by

    @tl.grad_rule(shift)
    def _(x, *, by):
        return tl.data(x) + by, lambda g: (g * (by != 0),)

    by = np.array([1.0, 0.0])
    x = tl.param([1.0, 1.0])
    y = tl.sum(shift(x, by=by))
    by[1] = 5.0
    with pytest.raises(RuntimeError, match=r"shift: the keyword argument by= \(a constant array of shape \(2,\)\)"):
        tl.back_(y)


def test_a_node_built_by_hand_keeps_a_copy_of_a_small_constant():
    x = tl.param([1.0, 2.0])
    c = np.array([3.0, 4.0])
    node = tl.Tracked(tl.Call(tl.multiply, x, c), tl.data(x) * c)
    c[:] = 0
    tl.back_(tl.sum(node.value()))
    np.testing.assert_array_equal(x.grad, [3.0, 4.0])


def test_numpy_functions_on_tracked_values_guard_their_constants():
    c = large(10000)
    x = tl.param(np.ones(10000))
    y = tl.sum(np.multiply(c, x))
    c[0] = 0
    with pytest.raises(RuntimeError, match=r"multiply: argument 1 \(a constant array of shape \(10000,\)\)"):
        tl.back_(y)

    small = np.array([1.0, 2.0])
    v = tl.param([1.0, 1.0])
    y = np.sum(np.multiply(small, v))
    small[:] = 0
    tl.back_(y)
    np.testing.assert_array_equal(v.grad, [1.0, 2.0])


def test_a_large_boolean_mask_is_copied():
    mask = np.zeros(100000, dtype=bool)
    mask[::3] = True
    recorded = mask.copy()
    x = tl.param(np.ones(100000))
    y = tl.sum(tl.where(mask, x, 0.0))
    mask[:] = True
    tl.back_(y)
    np.testing.assert_array_equal(x.grad, recorded.astype(float))


# ----------------------------------------------------------------------------------------------------
# Nested differentiation reads a large constant once per check: a pass of the walk's checks reads each memory
# once (A and A.T), and a recorded walk's pullbacks record their view of it (A.T @ g) with the value that pass
# compared, the one the forward pass used. A change at any point where user code runs is still refused.


def hvp_problem(n=200, seed=6):
    rng = np.random.default_rng(seed)
    return large(n, n, seed=seed) / np.sqrt(n), rng.standard_normal(n), rng.standard_normal(n)


def hvp(A, x, v, inner=None, outer=None):
    """v · ∇(v · ∇f) at x for f = sum(tanh(A x)²), with ``inner`` run inside f after A @ x is recorded and
    ``outer`` inside the outer function after the inner gradient is computed."""

    def f(x):
        z = A @ x
        if inner is not None:
            inner()
        return tl.sum(tl.tanh(z) ** 2)

    def g(x):
        (grad,) = tl.gradient(f, x)
        if outer is not None:
            outer()
        return tl.sum(grad * v)

    return tl.data(tl.gradient(g, x)[0])


def analytic_hvp(A, x, v):
    t = np.tanh(A @ x)
    return A.T @ ((2 - 6 * t * t) * (1 - t * t) * (A @ v))


def test_a_hessian_vector_product_reads_its_large_constant_three_times(monkeypatch):
    from trackerlab.core import guard as _guard

    A, x, v = hvp_problem()
    readings = []
    weighted = _guard._weighted
    monkeypatch.setattr(_guard, "_weighted", lambda flat: readings.append(flat.size) or weighted(flat))
    np.testing.assert_allclose(hvp(A, x, v), analytic_hvp(A, x, v), rtol=1e-12, atol=1e-14)
    # recorded with A @ x; compared by the inner walk, whose pullback records A.T @ g with the value compared;
    # compared once by the outer walk for both nodes (A and A.T are one memory)
    assert readings == [A.size] * 3


def test_tl_hvp_reads_a_large_constant_once_when_recorded_and_once_before_its_sweep(monkeypatch):
    """Both readings are needed: ``f`` runs between them, and may write into ``A`` after ``A @ x``."""
    from trackerlab.core import guard as _guard

    A, x, v = hvp_problem()
    readings = []
    weighted = _guard._weighted
    monkeypatch.setattr(_guard, "_weighted", lambda flat: readings.append(flat.size) or weighted(flat))
    Hv = tl.hvp(lambda x: tl.sum(tl.tanh(A @ x) ** 2), x, v)
    np.testing.assert_allclose(Hv, analytic_hvp(A, x, v), rtol=1e-12, atol=1e-14)
    assert readings == [A.size] * 2


@pytest.mark.parametrize("who", ["hvp", "jvp", "gradient"])
def test_a_constant_changed_between_two_uses_and_restored_is_refused_for_the_use_that_saw_the_change(who):
    """Each use of a constant is fingerprinted when it is recorded. A fingerprint taken at the first use and
    reused for the second would match again once the values are restored, and the second use's pullback would
    read values its forward pass did not use: a wrong gradient, silently."""
    A, x, v = hvp_problem()
    before = A.copy()

    def f(x):
        A @ x  # recorded with the values as they are, then dropped
        A[0, 0] += 1.0
        y = tl.sum(tl.tanh(A @ x) ** 2)  # recorded with the changed values
        A[:] = before
        return y

    call = {"hvp": lambda: tl.hvp(f, x, v), "jvp": lambda: tl.jvp(f, x, v), "gradient": lambda: tl.gradient(f, x)}
    with pytest.raises(tl.StaleValueError, match=r"^matmul: argument 1 \(a constant array of shape \(200, 200\)\)"):
        call[who]()


@pytest.mark.parametrize("where", ["inner", "outer"])
def test_a_hessian_vector_product_refuses_a_constant_changed_while_f_runs(where):
    A, x, v = hvp_problem()

    def change():
        A[0, 0] += 1.0

    with pytest.raises(RuntimeError, match=r"matmul: argument 1 \(a constant array of shape \(200, 200\)\)"):
        hvp(A, x, v, **{where: change})


def test_a_hook_that_changes_the_constant_during_the_recorded_walk_is_refused():
    # The hook runs in the inner walk before the pullback of A @ x records A.T @ g; that node is guarded against
    # the values the forward pass used, so differentiating it refuses A's new values, even where the later walk
    # never reaches the forward pass's A @ x (the hook sends on a sensitivity of its own).
    A, x, _ = hvp_problem()
    p = tl.param(np.ones(200))

    def replace(Δ):
        A[:] = 2 * A
        return p * 1.0

    (grad,) = tl.gradient(lambda x: tl.sum(tl.hook(replace, A @ x)), x)
    with pytest.raises(RuntimeError, match=r"matmul: argument 1 \(a constant array of shape \(200, 200\)\)"):
        tl.back_(tl.sum(grad))
    A[:] = A / 2  # as the forward pass used it: the gradient of sum(Aᵀ p) with respect to p
    tl.back_(tl.sum(grad))
    np.testing.assert_allclose(p.grad, A.sum(axis=1), rtol=1e-12)


def test_a_constant_changed_between_the_steps_of_a_recorded_walk_is_refused_when_differentiated():
    A, x0, _ = hvp_problem()
    x = tl.param(x0)
    p = tl.param(np.ones(200))
    steps = tl.backprop_steps(tl.sum(p * (A @ x)), nest=True)
    next(steps)  # the sum
    A[:] = 0  # between two steps: the pullback of A @ x, still to come, would read the new values
    delta = {step.node: step.delta for step in steps}[x.tracker]
    with pytest.raises(RuntimeError, match=r"matmul: argument 1 \(a constant array of shape \(200, 200\)\)"):
        tl.back_(tl.sum(delta))


def test_a_constant_changed_after_a_nested_gradient_is_read_afresh_by_what_is_recorded_next():
    A, x, v = hvp_problem()
    first = hvp(A, x, v)
    A[:] = A.T.copy()  # the next problem, in the same buffer
    np.testing.assert_allclose(hvp(A, x, v), analytic_hvp(A, x, v), rtol=1e-12, atol=1e-14)
    assert not np.allclose(first, analytic_hvp(A, x, v))
    w = tl.param(x)
    y = tl.sum(tl.tanh(A.T @ w))  # recorded outside any walk: A's new values are what it is guarded against
    tl.back_(y)
    np.testing.assert_allclose(w.grad, A @ (1 - np.tanh(A.T @ x) ** 2), rtol=1e-12)


def test_one_pass_of_checks_tells_two_constants_apart():
    X, Y = large(100, 120), large(120, 100, seed=1)
    w = tl.param(np.ones(120))
    u = tl.param(np.ones(100))
    y = tl.sum(X @ w) + tl.sum(Y @ u) + tl.sum(X.T @ u)
    Y[5, 5] = 0.0
    with pytest.raises(RuntimeError, match=r"matmul: argument 1 \(a constant array of shape \(120, 100\)\)"):
        tl.back_(y)
    Y[:] = large(120, 100, seed=1)
    tl.back_(y)
    np.testing.assert_allclose(u.grad, Y.sum(axis=0) + X.sum(axis=1), rtol=1e-12)


def test_views_share_a_fingerprint_only_where_they_cover_the_same_memory():
    from trackerlab.core.guard import Verified, _fingerprint

    A = large(200, 200)
    verified = Verified()
    verified.note(A, _fingerprint(A)[0])
    assert _fingerprint(A.T) == _fingerprint(A)
    assert verified.known(A.T) == verified.known(A.reshape(-1)) == _fingerprint(A)[0]
    assert verified.known(A[:100]) is None  # part of its memory
    assert verified.known(A.view(np.int64)) is None  # the same memory read as other numbers
    assert verified.known(A.copy()) is None
    assert verified.known(np.asarray(memoryview(A))) is None  # memory no NumPy array of its owns


def test_a_recorded_walk_leaves_an_array_a_custom_pullback_returned_to_its_owner():
    # A recorded walk makes its plain sensitivities read-only (so the operations recording them keep them
    # without a copy): one a custom pullback returns may be the caller's, so the walk goes on with a copy.
    buffer = np.array([1.0, 2.0])

    def scale(x):
        return tl.track(scale, x) if tl.istracked(x) else x * 1.0

    @tl.grad_rule(scale)
    def _(x):
        return tl.data(x) * 1.0, lambda g: (buffer,)

    x = tl.param([3.0, 4.0])
    (delta,) = tl.gradient(lambda x: tl.sum(tl.sin(scale(x))), x)
    steps = [step.delta for step in tl.backprop_steps(tl.sum(scale(tl.sin(x)) * 2.0), nest=True)]
    assert buffer.flags.writeable
    buffer[:] = 0.0
    np.testing.assert_array_equal(tl.data(delta), [1.0, 2.0])
    np.testing.assert_allclose(tl.data(steps[-1]), np.cos([3.0, 4.0]) * [1.0, 2.0], rtol=1e-15)


# ----------------------------------------------------------------------------------------------------
# A parameter's own value used as a constant (tl.data(W), W.data), then stepped by update_ before the backward
# pass: guarded as the caller's arrays are, since update_ changes it in place


@pytest.mark.parametrize(
    "constant",
    [lambda W: tl.data(W), lambda W: W.data, lambda W: tl.data(W)[::-1], lambda W: tl.data(W).T],
    ids=["tl.data(W)", "W.data", "a view", "the transpose"],
)
def test_a_parameters_value_used_as_a_constant_keeps_its_recorded_values_after_update(constant):
    x, W = tl.param([1.0, 1.0, 1.0]), tl.param([2.0, 3.0, 4.0])
    c = np.array(constant(W))
    y = tl.sum(x * constant(W))
    tl.update_(W, [10.0, 10.0, 10.0])
    tl.back_(y)
    np.testing.assert_array_equal(x.grad, c)
    _, back = tl.forward(lambda x: tl.sum(constant(W) * x), x)
    tl.update_(W, [10.0, 10.0, 10.0])
    np.testing.assert_array_equal(tl.data(back(1.0)[0]), c + 10)


def test_a_large_parameters_value_used_as_a_constant_then_updated_is_refused():
    x, W = tl.param(np.ones(10_000)), tl.param(large(10_000))
    y = tl.sum(x * tl.data(W))
    tl.update_(W, np.ones(10_000))
    with pytest.raises(RuntimeError, match="multiply: argument 2 .*" + CHANGED):
        tl.back_(y)
    assert not np.any(x.grad)
    with pytest.raises(RuntimeError, match=CHANGED):
        tl.check_tape(y)


def test_the_tapes_own_values_used_as_constants_are_not_copied():
    x = tl.param([1.0, 2.0])
    h = tl.data(x * 2)
    y = x * h
    assert y.tracker.args[1] is h


# Constants changed between the forward and the backward pass: a list or dict given to a ``@tl.grad_rule``
# function (by position or keyword), and the arrays in it, are compared when the walk runs, as a NumPy array given
# to it is, since the pullback closes over them and would read their new values without a word.
# ----------------------------------------------------------------------------------------------------


def _scale(x, cs, **settings):
    return tl.track(_scale, x, cs, **settings)


@tl.grad_rule(_scale)
def _(x, cs, **settings):
    factor = cs["a"] * cs["b"] if isinstance(cs, dict) else cs[0] * cs[1]
    factor = factor * settings.get("also", [1.0])[0]
    return tl.data(x) * factor, lambda g: (g * factor, None)


def _lists():
    return [np.array([1.0, 2.0]), np.array([3.0, 4.0])]


CASES = {
    "array in a list": (_lists, lambda c: c[0].__setitem__(0, 9.0)),
    "number in a list": (lambda: [1.0, 2.0], lambda c: c.__setitem__(0, 9.0)),
    "list appended to": (lambda: [1.0, 2.0], lambda c: c.append(5.0)),
    "number in a dict": (lambda: {"a": np.array([1.0, 2.0]), "b": 3.0}, lambda c: c.__setitem__("b", 9.0)),
    "array in a dict": (lambda: {"a": np.array([1.0, 2.0]), "b": 3.0}, lambda c: c["a"].__setitem__(1, 0.0)),
    "list in a tuple": (lambda: (np.array([1.0, 2.0]), [3.0]), lambda c: c[1].__setitem__(0, 9.0)),
    "nested list": (lambda: [[1.0], [2.0, np.array(3.0)]], lambda c: c[1][1].__setitem__((), 0.5)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_container_of_a_custom_rule_changed_before_back_is_refused(case):
    make, change = CASES[case]
    x = tl.param([1.0, 1.0])
    cs = make()
    y = tl.sum(_scale(x, cs)) if case != "nested list" else tl.sum(tl.track(_nested, x, cs))
    change(cs)
    with pytest.raises(RuntimeError, match=r"argument 2 \(a constant (list|dict|tuple)\) was changed in place"):
        tl.back_(y)
    np.testing.assert_array_equal(x.grad, [0.0, 0.0])


def _nested(x, cs):
    return tl.track(_nested, x, cs)


@tl.grad_rule(_nested)
def _(x, cs):
    return tl.data(x) * float(cs[1][1]), lambda g: (g * float(cs[1][1]), None)


def test_a_keyword_list_of_a_custom_rule_is_compared_too():
    x = tl.param([1.0, 1.0])
    also = [2.0]
    y = tl.sum(_scale(x, [1.0, 3.0], also=also))
    also[0] = 5.0
    with pytest.raises(RuntimeError, match=r"the keyword argument also= \(a constant list\) was changed in place"):
        tl.back_(y)
    also[0] = 2.0  # as recorded again: the gradient at the values the forward pass used
    tl.back_(y)
    np.testing.assert_allclose(x.grad, [6.0, 6.0])


@pytest.mark.parametrize("case", ["array in a list", "number in a dict", "list in a tuple"])
def test_unchanged_containers_give_the_gradient(case):
    make, _ = CASES[case]
    x = tl.param([1.0, 1.0])
    cs = make()
    tl.back_(tl.sum(_scale(x, cs)))
    factor = {"array in a list": [3.0, 8.0], "number in a dict": [3.0, 6.0], "list in a tuple": [3.0, 6.0]}[case]
    np.testing.assert_allclose(x.grad, factor)


def test_a_list_with_nan_that_is_not_changed_is_not_refused():
    x = tl.param([1.0, 1.0])
    y = tl.sum(_scale(x, [np.array([1.0, np.nan]), 2.0]))
    tl.back_(y)
    np.testing.assert_array_equal(x.grad, [2.0, np.nan])


# ----------------------------------------------------------------------------------------------------
# A read-only view of a writeable array (np.broadcast_to(c, ...), a view made read-only) used as a constant changes
# with its base: the tape keeps a copy of a small one and refuses a changed large one, as it does for the writeable
# array itself (the gradient was the one at the new values, without a word).
# ----------------------------------------------------------------------------------------------------


def _read_only_view(c):
    view = c.view()
    view.flags.writeable = False
    return view


@pytest.mark.parametrize("make", [_read_only_view, lambda c: np.broadcast_to(c, (2, *c.shape))[0]])
def test_a_small_read_only_view_keeps_the_values_it_was_recorded_with(make):
    c = np.array([1.0, 2.0, 3.0])
    x = tl.param(np.ones(3))
    y = tl.sum(make(c) * x)
    c[:] = 5.0
    tl.back_(y)
    assert np.array_equal(tl.grad(x), [1.0, 2.0, 3.0])


def test_a_broadcast_constant_keeps_its_values():
    c = np.array([1.0, 2.0, 3.0])
    assert np.allclose(tl.data(tl.gradient(lambda x: tl.sum(np.broadcast_to(c, (2, 3)) * x), np.ones((2, 3)))[0]), c)
    x = tl.param(np.ones((2, 3)))
    y = tl.sum(np.broadcast_to(c, (2, 3)) * x)
    c[:] = 5.0
    tl.back_(y)
    assert np.array_equal(tl.grad(x), [[1.0, 2.0, 3.0]] * 2)


def test_a_large_read_only_view_changed_is_refused():
    c = np.arange(20_000.0)
    x = tl.param(np.ones(20_000))
    y = tl.sum(_read_only_view(c) * x)
    c[0] = 7.0
    with pytest.raises(RuntimeError, match="was changed in place"):
        tl.back_(y)


def test_views_of_read_only_memory_are_kept_as_they_are():
    x = tl.param(np.ones(3))
    frozen = _read_only_view(np.array([1.0, 2.0, 3.0]))
    frozen.base.flags.writeable = False
    y = x * frozen
    assert y.tracker.args[1] is frozen  # nothing that can change: no copy
    tl.back_(tl.sum(y))
    assert np.array_equal(tl.grad(x), [1.0, 2.0, 3.0])


# ----------------------------------------------------------------------------------------------------
# The constants guard catches a small in-place change of one number of a large float32 or complex64 constant: its
# fingerprint kept too few digits (a float32 sum of a million like numbers), so a change of 1% in one of them went
# through and the gradient was computed from the changed array, without a word.
# ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.complex64, np.float64])
@pytest.mark.parametrize("shape", [(1000, 1000), (1, 1_000_000), (7, 3001), (1, 20_000)])
@pytest.mark.parametrize("relative", [1e-2, 1e-4])
def test_a_small_change_of_one_number_of_a_large_constant_is_refused(dtype, shape, relative):
    rng = np.random.default_rng(3)
    A = (rng.random(shape) + 1).astype(dtype)
    x = tl.param(np.ones(shape[1], dtype))
    y = tl.sum(tl.real(A @ x)) if dtype is np.complex64 else tl.sum(A @ x)
    A[shape[0] // 2, shape[1] // 3] *= 1 + relative
    with pytest.raises(RuntimeError, match="changed in place"):
        tl.back_(y)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.complex64])
@pytest.mark.parametrize("size", [1023, 1024, 1025, 2048, 3 * 1024 + 5, 40_000])
def test_fingerprints_move_on_one_number_a_swap_and_a_row_permutation(dtype, size):
    from trackerlab.core import guard as _guard

    rng = np.random.default_rng(size)
    flat = (rng.random(size) * 100 + 1).astype(dtype)
    before = _guard._weighted(flat)
    assert _guard._weighted(flat.copy()) == before  # the same numbers give the same bits
    one = flat.copy()
    one[size // 2] += 1
    swap = flat.copy()
    swap[[3, size - 2]] = swap[[size - 2, 3]]
    rows = flat[: (size // 256) * 256].copy().reshape(-1, 256)
    permuted = rows[::-1].copy()
    for changed in (one, swap):
        assert _guard._weighted(changed) != before
    assert _guard._weighted(permuted.reshape(-1)) != _guard._weighted(rows.reshape(-1))
