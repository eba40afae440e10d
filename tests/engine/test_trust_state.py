"""Trust in state: values changed between the forward pass and ``back_``, aliasing, threads, failures half
way, and the Python protocols (copy, pickle, weakref, format) on tracked values."""

from __future__ import annotations

import contextlib
import copy
import pickle
import sys
import threading
import weakref

import numpy as np
import pytest

import trackerlab as tl

# ---------------------------------------------------------------- values changed after the forward pass


def test_update_after_the_forward_pass_is_refused_naming_the_op():
    x = tl.param([0.5, 1.0])
    y = tl.sum(tl.sin(x))
    tl.update_(x, [1.0, 1.0])
    with pytest.raises(RuntimeError, match=r"sin: argument 1 \(a parameter of shape \(2,\)\) changed after sin"):
        tl.back_(y)
    assert np.array_equal(x.grad, [0.0, 0.0])  # nothing accumulated


def test_update_of_a_scalar_parameter_after_the_forward_pass_is_refused():
    x = tl.param(0.5)
    y = tl.sin(x) * x
    tl.update_(x, 1.0)
    with pytest.raises(RuntimeError, match=r"changed after .* was recorded"):
        tl.back_(y)
    with pytest.raises(RuntimeError, match="back_ before changing parameters, or run the forward pass again"):
        list(tl.backprop_steps(y))


def test_setter_counts_as_a_change():
    x = tl.param([0.5, 1.0])
    y = tl.sum(tl.exp(x) * x)
    x.data = [2.0, 3.0]
    with pytest.raises(RuntimeError, match="multiply: argument 2"):
        tl.back_(y)
    y = tl.sum(tl.sin(x))  # a new forward pass at the new value works
    tl.back_(y)
    assert np.array_equal(x.grad, np.cos([2.0, 3.0]))


def test_setter_copies_converts_and_locks():
    x = tl.param([1.0, 2.0])
    new = np.array([3, 4])
    x.data = new
    new[0] = 100  # the caller's array is not the parameter's
    assert x.data.dtype == np.float64 and np.array_equal(x.data, [3.0, 4.0])
    with pytest.raises(ValueError, match="read-only"):
        x.data[0] = 1.0
    x.data = np.zeros(3)  # a new shape resets the gradient to that shape
    assert x.grad.shape == (3,)


def test_setter_on_a_computed_value_is_refused():
    y = tl.sin(tl.param([1.0]))
    with pytest.raises(AttributeError, match="x is the result of sin, not a parameter"):
        y.data = np.zeros(1)


@pytest.mark.parametrize(
    "write",
    [
        lambda x, y: x.data.__setitem__(Ellipsis, 5.0),  # x.data[...] = 5
        lambda x, y: np.add(tl.data(x), 1, out=tl.data(x)),
        lambda x, y: tl.data(y).__setitem__(Ellipsis, 0.0),  # a saved result
        lambda x, y: tl.data(x)[0:1].__setitem__(Ellipsis, 7.0),  # through a view
        lambda x, y: tl.data(x).reshape(2, 1).__setitem__((0, 0), 7.0),
        lambda x, y: np.asarray(tl.data(x)).__setitem__(0, 7.0),  # np.asarray(x) itself is refused
        lambda x, y: tl.data(y).__iadd__(1.0),
        lambda x, y: tl.data(x).sort(),
    ],
)
def test_raw_writes_to_saved_arrays_fail_at_once(write):
    x = tl.param([0.5, 1.0])
    y = tl.exp(x)
    with pytest.raises(ValueError, match="read-only"):
        write(x, y)
    tl.back_(tl.sum(y))
    assert np.array_equal(x.grad, np.exp([0.5, 1.0]))  # the gradient at the forward-pass values


def test_every_recorded_result_and_view_is_read_only():
    x = tl.param(np.arange(6.0).reshape(2, 3))
    for y in (x, x * 2, x[0], x.T, x.reshape(3, 2), tl.sum(x, axis=0), x @ np.ones(3)):
        assert not tl.data(y).flags.writeable


def test_a_copy_of_the_data_is_writable_and_independent():
    x = tl.param([1.0, 2.0])
    d = tl.data(x).copy()
    d[0] = 10.0
    assert np.array_equal(x.data, [1.0, 2.0])
    p = tl.param(d)  # the remedy for an array one wants to change: a new parameter
    assert np.array_equal(p.data, [10.0, 2.0])


def test_update_of_a_view_is_refused():
    x = tl.param([1.0, 2.0])
    y = tl.sum(tl.sin(x))
    with pytest.raises(ValueError, match=r"update_: x is the result of getitem, not a parameter"):
        tl.update_(x[0:1], 10.0)
    tl.back_(y)
    assert np.array_equal(x.data, [1.0, 2.0])
    assert np.array_equal(x.grad, np.cos([1.0, 2.0]))


def test_update_is_in_place_and_stays_locked():
    x = tl.param([1.0, 2.0])
    held = tl.data(x)
    tl.update_(x, [0.5, 0.5])
    assert tl.data(x) is held and np.array_equal(held, [1.5, 2.5])
    assert not held.flags.writeable


def test_a_view_taken_before_an_update_is_refused_in_the_walk():
    x = tl.param([1.0, 2.0, 3.0])
    v = x.reshape(3)  # its data is a view of x's
    y = tl.sum(tl.sin(v))
    tl.update_(x, 1.0)
    with pytest.raises(RuntimeError, match="reshape: argument 1"):
        tl.back_(y)


def test_training_loop_keeps_working():
    # back_, update_, a new forward pass: the gradient of sum(x²) is 2x at each step's own values
    x = tl.param([1.0, -2.0])
    expected = np.array([1.0, -2.0])
    for _ in range(5):
        y = tl.sum(x * x)
        tl.back_(y)
        assert np.array_equal(x.grad, 2 * expected)
        tl.update_(x, -0.1 * x.grad)
        expected = expected - 0.1 * 2 * expected
        assert np.array_equal(x.data, expected)
        assert np.array_equal(x.grad, [0.0, 0.0])


def test_optimisers_and_params_gradient_after_updates():
    x = tl.param([1.0, 2.0])
    ps = tl.Params([x])
    opt = tl.optim.ADAM(0.1)
    for _ in range(3):
        gs = tl.gradient(lambda: tl.sum(x * x * x), ps)
        assert np.allclose(tl.data(gs[x]), 3 * tl.data(x) ** 2)
        tl.update_(opt, ps, gs)


def test_checkpoint_of_a_changed_parameter_is_refused():
    x = tl.param(2.0)
    y = tl.checkpoint(lambda t: t * t, x)
    tl.update_(x, 1.0)
    with pytest.raises(RuntimeError, match="checkpoint: argument 2"):
        tl.back_(y)


def test_a_changed_parameter_that_a_new_tape_reads_is_fine():
    W = tl.param([[1.0, 2.0], [3.0, 4.0]])
    old = W @ np.array([1.0, 1.0])
    tl.update_(W, 1.0)
    new = tl.sum(W @ np.array([1.0, 2.0]))
    tl.back_(new)
    assert np.array_equal(W.grad, [[1.0, 2.0], [1.0, 2.0]])
    with pytest.raises(RuntimeError, match="matmul: argument 1"):
        tl.back_(old, [1.0, 1.0])


# ---------------------------------------------------------------- update_ refusals


def test_update_refuses_a_change_of_shape():
    with pytest.raises(ValueError, match=r"update_: Δ has shape \(2,\), but x has shape \(\)"):
        tl.update_(tl.param(1.0), [1.0, 2.0])
    with pytest.raises(ValueError, match=r"Δ has shape \(1, 2\), but x has shape \(2,\)"):
        tl.update_(tl.param([1.0, 2.0]), [[1.0, 2.0]])


def test_update_refuses_to_make_a_real_parameter_complex():
    x = tl.param([1.0, 2.0])
    with pytest.raises(TypeError, match=r"update_: Δ is complex \(complex128\), but x is real \(float64\)"):
        tl.update_(x, np.array([1j, 0]))
    with pytest.raises(TypeError, match="but x is real"):
        tl.update_(tl.param(1.0), 1j)
    assert np.array_equal(x.data, [1.0, 2.0])
    z = tl.param(np.array([1.0 + 1j]))  # a complex parameter takes complex steps
    tl.update_(z, np.array([1j]))
    assert z.data[0] == 1.0 + 2j


@pytest.mark.parametrize("step", [np.array([None, 1.0], dtype=object), "1.0", [["a", "b"]], None])
def test_update_refuses_steps_that_are_not_numbers(step):
    x = tl.param([1.0, 2.0])
    with pytest.raises(TypeError, match="update_: "):
        tl.update_(x, step)
    assert x.data.dtype == np.float64 and np.array_equal(x.data, [1.0, 2.0])


def test_update_keeps_the_parameters_dtype():
    x = tl.param(np.array([1.0, 2.0], dtype=np.float32))
    tl.update_(x, np.array([0.5, 0.5]))
    assert x.data.dtype == np.float32
    s = tl.param(2.0)
    tl.update_(s, np.float64(0.5))
    assert type(s.data) is float and s.data == 2.5


# ---------------------------------------------------------------- failures half way, and aliasing


def _flaky(fail):
    def f(Δ):
        if fail[0]:
            raise ValueError("not now")
        return Δ

    return f


def test_back_that_fails_half_way_leaves_every_grad_as_it_was_and_a_retry_is_right():
    a = tl.param(2.0)
    b = tl.param([1.0, 2.0])
    a.grad = 5.0
    fail = [True]
    # the walk reaches the leaf a before the hook raises
    y = a + tl.sum(tl.hook(_flaky(fail), tl.sin(tl.sin(b))))
    steps = [s.op for s in tl.backprop_steps(a + 1.0)]
    assert steps == ["add", "param"]
    with pytest.raises(ValueError, match="hook: the backward pass failed: ValueError: not now"):
        tl.back_(y)
    assert a.grad == 5.0 and np.array_equal(b.grad, [0.0, 0.0])
    fail[0] = False
    tl.back_(y)
    assert a.grad == 6.0
    assert np.array_equal(b.grad, np.cos(np.sin([1.0, 2.0])) * np.cos([1.0, 2.0]))


def test_back_with_a_grad_of_the_wrong_shape_changes_nothing():
    a, b = tl.param([1.0, 2.0]), tl.param([3.0, 4.0])
    a.grad = np.zeros(3)
    with pytest.raises(ValueError, match=r"back_: a parameter's .grad has shape \(3,\), but the parameter has"):
        tl.back_(tl.sum(a * b))
    assert np.array_equal(b.grad, [0.0, 0.0])


def test_grad_none_then_back_gives_a_fresh_array():
    x = tl.param([1.0, 2.0])
    x.grad = None
    Δ = np.array([1.0, 1.0])
    tl.back_(x + 0.0, Δ)
    assert not np.shares_memory(x.grad, Δ)
    Δ[0] = 100.0
    assert np.array_equal(x.grad, [1.0, 1.0])
    x.grad = None
    tl.back_(x, Δ)  # the leaf itself
    assert not np.shares_memory(x.grad, Δ)


def test_two_leaves_never_share_a_grad_array():
    a, b = tl.param([1.0, 2.0]), tl.param([3.0, 4.0])
    a.grad = b.grad = None
    tl.back_(a + b, [1.0, 1.0])
    assert not np.shares_memory(a.grad, b.grad)
    tl.back_(a * 2.0, [1.0, 1.0])
    assert np.array_equal(a.grad, [3.0, 3.0]) and np.array_equal(b.grad, [1.0, 1.0])


@pytest.mark.parametrize("tracked_input", [False, True])
@pytest.mark.parametrize("f", [lambda x: x, lambda x: x + 0.0, lambda x: x * 1.0, lambda x: x.reshape(2)])
def test_forward_back_never_shares_memory_with_delta(f, tracked_input):
    x = tl.param([1.0, 2.0]) if tracked_input else [1.0, 2.0]
    _, back = tl.forward(f, x)
    Δ = np.array([3.0, 4.0])
    (dx,) = back(Δ)
    assert not np.shares_memory(tl.data(dx), Δ)
    Δ[:] = 0.0
    assert np.array_equal(tl.data(dx), [3.0, 4.0])


# ---------------------------------------------------------------- recording state: per thread, re-entrant


def test_one_no_grad_object_entered_twice_restores_recording():
    x = tl.param(2.0)
    guard = tl.no_grad()
    with guard:
        with guard:
            assert not tl.istracked(x * 2)
        assert not tl.istracked(x * 2)
    assert tl.istracked(x * 2)


def test_no_grad_inside_no_grad_and_after_an_error():
    x = tl.param(2.0)
    with pytest.raises(KeyError):
        with tl.no_grad():
            with tl.no_grad():
                raise KeyError
    assert tl.istracked(x * 2)


@contextlib.contextmanager
def another_thread_inside_no_grad(x, depth: int = 1):
    """Run the block while another thread sits inside ``depth`` nested ``no_grad`` blocks; yields what that
    thread saw (whether ``x * 2`` was tracked there), filled in once it has left."""
    entered, done = threading.Event(), threading.Event()
    seen = []

    def quiet():
        with contextlib.ExitStack() as stack:
            for _ in range(depth):
                stack.enter_context(tl.no_grad())
            entered.set()
            done.wait(5)
            seen.append(tl.istracked(x * 2))

    thread = threading.Thread(target=quiet)
    thread.start()
    assert entered.wait(5)
    try:
        yield seen
    finally:
        done.set()
        thread.join()


def test_no_grad_in_one_thread_never_stops_recording_in_another():
    x = tl.param(3.0)
    with another_thread_inside_no_grad(x) as seen:
        y = x * x  # recorded here while the other thread is inside no_grad
        tl.back_(y)
    assert tl.istracked(y) and x.grad == 6.0
    assert seen == [False]


def test_the_fast_check_of_recording_counts_every_thread_with_recording_off():
    # Operations ask one flag, true while no thread has recording off, before the thread's own state.
    from trackerlab.core.recording import EVERY_THREAD, RECORDING

    x = tl.param(2.0)
    assert EVERY_THREAD.recording and EVERY_THREAD.off == 0
    with another_thread_inside_no_grad(x, depth=2) as seen:
        assert not EVERY_THREAD.recording and EVERY_THREAD.off == 1  # nested: one thread, counted once
        assert tl.istracked(x * 2)  # the slow path: this thread's own state
        with tl.no_grad():
            assert EVERY_THREAD.off == 2 and not tl.istracked(x * 2)
            RECORDING.on = True  # what forward and gradient do inside no_grad
            assert EVERY_THREAD.off == 1 and tl.istracked(x * 2)
            RECORDING.on = False
    assert seen == [False]
    assert EVERY_THREAD.recording and EVERY_THREAD.off == 0
    assert tl.istracked(x * 2)


def test_threads_training_and_one_inside_no_grad_get_every_gradient_exactly():
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    W = tl.param([[0.5, -1.0], [2.0, 0.25]])  # shared by every thread
    errors = []
    stop = threading.Event()

    def train(seed):
        rng = np.random.default_rng(seed)
        try:
            for _ in range(150):
                v = rng.standard_normal(2)
                gs = tl.gradient(lambda: tl.sum(tl.tanh(W @ v)), tl.Params([W]))
                want = np.outer(1 - np.tanh(W.data @ v) ** 2, v)
                if not np.array_equal(tl.data(gs[W]), want):
                    errors.append(("W", seed))
                (dx,) = tl.gradient(lambda x: tl.sum(tl.sin(x) * x), v)
                if not np.array_equal(tl.data(dx), np.cos(v) * v + np.sin(v)):
                    errors.append(("x", seed))
        except Exception as error:  # reported below
            errors.append(error)

    def quiet():
        while not stop.is_set():
            with tl.no_grad():
                if tl.istracked(W * 2):
                    errors.append("recorded inside no_grad")

    try:
        threads = [threading.Thread(target=train, args=(i,)) for i in range(7)]
        threads.append(threading.Thread(target=quiet))
        for t in threads:
            t.start()
        for t in threads[:-1]:
            t.join()
        stop.set()
        threads[-1].join()
    finally:
        sys.setswitchinterval(before)
    assert errors == []


def test_updates_in_threads_are_all_detected():
    # each thread records, updates its own parameter, and must be refused on the stale tape
    results = []

    def run():
        x = tl.param([1.0, 2.0])
        for _ in range(50):
            y = tl.sum(tl.sin(x))
            tl.update_(x, 0.01)
            try:
                tl.back_(y)
                results.append("silent")
            except RuntimeError:
                results.append("refused")

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == ["refused"] * 200


# ---------------------------------------------------------------- the walk checks what pullbacks send


def _custom(pullback):
    @tl.primitive
    def op(x):
        return x

    @tl.grad_rule(op)
    def _(x):
        return tl.data(x) * 1.0, pullback

    return op


def test_a_pullback_error_names_the_op_and_shapes_and_keeps_the_cause():
    op = _custom(lambda Δ: (Δ + np.ones(5),))
    with pytest.raises(ValueError, match=r"op: the backward pass failed: ValueError: operands could not") as info:
        tl.back_(tl.sum(op(tl.param([1.0, 2.0, 3.0]))))
    assert "argument shapes (3,); sensitivity of shape (3,)" in str(info.value)
    assert isinstance(info.value.__cause__, ValueError)
    assert "operands could not be broadcast" in str(info.value.__cause__)


def test_an_error_in_a_built_in_rule_names_the_op(monkeypatch):
    def broken(g, ans, x):
        raise ZeroDivisionError("float division by zero")

    monkeypatch.setattr(tl.sin, "rule", (broken,))
    x = tl.param([1.0, 2.0])
    with pytest.raises(ZeroDivisionError, match=r"sin: the backward pass failed: .*argument shapes \(2,\)"):
        tl.back_(tl.sum(tl.sin(x) * 2))


def test_an_error_of_a_nested_walk_is_not_wrapped_twice():
    op = _custom(lambda Δ: (Δ + np.ones(5),))
    x = tl.param([1.0, 2.0])
    with pytest.raises(ValueError, match=r"^op: the backward pass failed"):
        tl.back_(tl.sum(tl.checkpoint(lambda t: op(t) * 2, x)))


def test_nobacksies_message_is_kept():
    with pytest.raises(RuntimeError, match=r"^nobacksies: no second derivatives$"):
        tl.back_(tl.nobacksies("no second derivatives", tl.param(2.0) * 3))


@pytest.mark.parametrize(
    ("rule", "error", "message"),
    [
        # a built-in rule that forgets to undo broadcasting: (2, 1) for a (2, 3) input
        (lambda g, ans, x: g[:, :1], ValueError, r"sensitivity for argument 1 has shape \(2, 1\), but the argument"),
        (lambda g, ans, x: g.sum(), ValueError, r"has shape \(\), but the argument has shape \(2, 3\)"),
        (lambda g, ans, x: g * 1j, TypeError, r"is complex \(complex128\), but the argument is real \(float64\)"),
        (lambda g, ans, x: g.astype(object), TypeError, "has dtype object; it must hold numbers"),
        (lambda g, ans, x: g.tolist(), TypeError, "sent a list as the sensitivity of argument 1"),
    ],
)
def test_a_built_in_rule_that_sends_the_wrong_shape_or_kind_is_named(monkeypatch, rule, error, message):
    monkeypatch.setattr(tl.tanh, "rule", (rule,))
    x = tl.param(np.ones((2, 3)))
    with pytest.raises(error, match="^tanh: .*" + message):
        tl.back_(tl.sum(tl.tanh(x) * 2))
    assert np.array_equal(x.grad, np.zeros((2, 3)))


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        (lambda g, ans, x: g[:, :1], r"sensitivity for argument 1 has shape \(2, 1\), but the argument"),
        (lambda g, ans, x: tl.sum(g), r"has shape \(\), but the argument has shape \(2, 3\)"),
        (lambda g, ans, x: tl.astype(g, np.float32)[:, :2], r"has shape \(2, 2\), but the argument"),
    ],
)
def test_a_rule_that_sends_the_wrong_shape_in_a_nested_walk_is_named(monkeypatch, rule, message):
    # a recorded walk sends tracked sensitivities: they are checked as plain ones are
    monkeypatch.setattr(tl.tanh, "rule", (rule,))
    x = tl.param(np.ones((2, 3)))
    with pytest.raises(ValueError, match="^tanh: .*" + message):
        tl.gradient(lambda x: tl.sum(tl.tanh(x) * x), x)  # tanh receives a tracked g
    with pytest.raises(ValueError, match="^tanh: .*" + message):
        list(tl.backprop_steps(tl.sum(tl.tanh(x) * x), nest=True))


def test_binary_rules_are_checked_too(monkeypatch):
    first, _ = tl.multiply.rule
    monkeypatch.setattr(tl.multiply, "rule", (first, lambda g, ans, x, y: np.sum(g, axis=1, keepdims=True)))
    a, b = tl.param(np.ones((2, 3))), tl.param(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"multiply: the pullback's sensitivity for argument 2 has shape \(2, 1\)"):
        tl.back_(tl.sum(a * b))


def test_a_custom_rule_with_the_wrong_shape_or_kind_is_named():
    x = tl.param([1.0, 2.0])
    with pytest.raises(ValueError, match=r"op: the pullback's sensitivity for argument 1 has shape \(1,\)"):
        tl.back_(tl.sum(_custom(lambda Δ: (np.ones(1),))(x)))
    with pytest.raises(TypeError, match="op: the pullback's sensitivity for argument 1 is complex"):
        tl.back_(tl.sum(_custom(lambda Δ: (Δ * 1j,))(x)))


def test_what_fits_is_accepted():
    # float32 for float64, NumPy scalars for Python floats, real for complex
    x = tl.param([1.0, 2.0])
    tl.back_(tl.sum(_custom(lambda Δ: (np.asarray(Δ, dtype=np.float32),))(x)))
    assert np.array_equal(x.grad, [1.0, 1.0])
    s = tl.param(2.0)
    tl.back_(_custom(lambda Δ: (np.float64(3.0),))(s))
    assert s.grad == 3.0
    z = tl.param(np.array([1.0 + 1j]))
    tl.back_(tl.sum(tl.abs(_custom(lambda Δ: (np.ones(1),))(z))))
    assert z.grad.dtype == np.complex128


# ---------------------------------------------------------------- gradient of something that is not a number


@pytest.mark.parametrize(
    ("f", "message"),
    [
        (lambda x: "a", r"gradient: f returned a str, 'a', not a number"),
        (lambda x: "1.5", r"gradient: f returned a str, '1.5', not a number"),
        (lambda x: None, "gradient: f returned a NoneType"),
        (lambda x: [x, x], "a list or tuple of values"),
        (lambda x: np.array(["a"]), "gradient: f returned an array of dtype <U1, not numbers"),
    ],
)
def test_gradient_of_something_that_is_not_a_number(f, message):
    with pytest.raises(TypeError, match=message):
        tl.gradient(f, 1.0)


def test_jacobian_of_a_string_says_so():
    with pytest.raises(TypeError, match="jacobian: f returned a str"):
        tl.jacobian(lambda x: "abc", [1.0])


# ---------------------------------------------------------------- dtype, format, weakref, copy, pickle


def test_tracked_real_dtype_is_a_numpy_dtype():
    assert tl.param(0.5).dtype == np.dtype("float64")
    assert isinstance(tl.param(0.5).dtype, np.dtype)
    assert tl.param(np.float32(1.0)).dtype == np.dtype("float32")
    assert tl.sum(tl.param([1.0, 2.0])).dtype == np.asarray(3.0).dtype
    assert (tl.param(2.0) * 3).dtype == np.zeros(()).dtype


def test_format_and_f_strings():
    x = tl.param(0.5)
    assert format(x, ".2f") == "0.50"
    assert f"{x:.3e}" == "5.000e-01"
    assert f"{x}" == "0.5 (tracked)" == format(x)
    assert f"{tl.sum(tl.param([1.0, 2.0])):>6.1f}" == "   3.0"
    assert f"{tl.param(np.float32(1.25)):.1f}" == "1.2"
    with pytest.raises(TypeError, match=r"format: a tracked array of shape \(2,\) cannot be formatted with '.2f'"):
        format(tl.param([1.0, 2.0]), ".2f")


def test_weakref_of_tracked_values():
    x = tl.param([1.0, 2.0])
    y = x * 2
    rx, ry = weakref.ref(x), weakref.ref(y)
    assert rx() is x and ry() is y
    del y
    assert ry() is None


@pytest.mark.parametrize("copier", [copy.copy, copy.deepcopy, lambda v: pickle.loads(pickle.dumps(v))])
@pytest.mark.parametrize("value", [[1.0, 2.0], 2.5, np.array([1.0, 2.0], dtype=np.float32), np.array([1 + 2j])])
def test_a_parameter_round_trips_with_its_data_and_grad(copier, value):
    x = tl.param(value)
    tl.back_(tl.sum(tl.abs(x * x)))
    c = copier(x)
    assert tl.isleaf(c) and type(c) is type(x) and c.dtype == x.dtype
    assert np.array_equal(tl.data(c), tl.data(x)) and np.array_equal(c.grad, x.grad)
    if isinstance(tl.data(x), np.ndarray):
        assert not np.shares_memory(tl.data(c), tl.data(x)) and not np.shares_memory(c.grad, x.grad)
        assert not tl.data(c).flags.writeable
    tl.update_(c, 1.0)  # independent of the original
    assert np.array_equal(tl.data(x), np.asarray(value, dtype=tl.data(x).dtype if np.ndim(value) else None))
    tl.back_(tl.sum(tl.abs(c)))  # and differentiable on its own


def test_deepcopy_of_a_model_copies_each_parameter_once():
    W = tl.param([[1.0, 2.0]])
    model = {"W": W, "again": W, "layers": [W]}
    twin = copy.deepcopy(model)
    assert twin["W"] is twin["again"] is twin["layers"][0] and twin["W"] is not W


@pytest.mark.parametrize(
    ("copier", "who"),
    [(copy.copy, "copy.copy"), (copy.deepcopy, "copy.deepcopy"), (pickle.dumps, "pickle")],
)
def test_copying_a_computed_value_is_refused_naming_the_op(copier, who):
    y = tl.sin(tl.param([1.0, 2.0]))
    with pytest.raises(TypeError, match=f"{who}: this value is the result of sin, not a parameter.*tl.data"):
        copier(y)


# ----------------------------------------------------------------------------------------------------
# State as a new user meets it: values changed between the forward pass and the backward pass, ``.grad``
# arrays shared or reused, ``forward``'s backpropagator after a change, custom rules whose sensitivities have the
# wrong dtype, NumPy's ``out=`` and array methods with options. Each expected value is derived by hand; each refusal
# must name what is wrong.
# ----------------------------------------------------------------------------------------------------


def test_forward_back_after_update_of_tracked_input_refuses():
    # forward(f, x) with a tracked x records identity(x), which shares x's array; update_ changes that
    # array in place, so a later back(Δ) would read the new values: cos(x + 1) instead of cos(x)
    x = tl.param([1.0, 2.0, 3.0])
    _, back = tl.forward(tl.sin, x)
    tl.update_(x, [1.0, 1.0, 1.0])
    with pytest.raises(RuntimeError, match=r"changed after .* was recorded") as info:
        back(np.ones(3))
    assert "parameter of shape (3,)" in str(info.value)


def test_forward_back_after_data_setter_refuses():
    x = tl.param([0.5, 1.5])
    _, back = tl.forward(lambda a: tl.sum(a * a * a), x)
    x.data = np.array([5.0, 5.0])
    with pytest.raises(RuntimeError, match="changed after"):
        back()


def test_jacobian_and_hessian_of_tracked_input_before_any_change_are_right():
    x = tl.param([1.0, 2.0, 3.0])
    _, back = tl.forward(tl.sin, x)
    np.testing.assert_allclose(tl.data(back(np.array([1.0, 2.0, 3.0]))[0]), np.cos([1, 2, 3]) * [1, 2, 3])
    np.testing.assert_allclose(tl.hessian(lambda v: tl.sum(v**3), x), np.diag([6.0, 12.0, 18.0]))


def test_training_loop_with_forward_is_unaffected():
    x = tl.param([1.0, 2.0])
    for _ in range(3):
        _, back = tl.forward(lambda a: tl.sum(a * a), x)
        (g,) = back()
        np.testing.assert_allclose(tl.data(g), 2 * tl.data(x))
        tl.update_(x, -0.25 * tl.data(g))
    np.testing.assert_allclose(tl.data(x), [0.125, 0.25])


# ----------------------------------------------------------------------------------------------------
# .grad arrays


def test_two_parameters_given_one_grad_array_refuse_instead_of_mixing_gradients():
    # back_ accumulates in place: with one array behind both, x.grad and z.grad both came out 1 + 2 = 3
    x, z = tl.param([1.0, 2.0]), tl.param([3.0, 4.0])
    shared = np.zeros(2)
    x.grad = shared
    z.grad = shared
    with pytest.raises(ValueError, match=r"back_: two parameters \(of shapes \(2,\) and \(2,\)\) .* share memory"):
        tl.back_(tl.sum(x + 2 * z))
    np.testing.assert_array_equal(shared, [0.0, 0.0])  # refused before any gradient was added


def test_overlapping_views_of_one_buffer_refuse():
    x, z = tl.param([1.0, 2.0]), tl.param([3.0, 4.0])
    buffer = np.zeros(3)
    x.grad, z.grad = buffer[:2], buffer[1:]
    with pytest.raises(ValueError, match="share memory"):
        tl.back_(tl.sum(x * z))


def test_disjoint_views_of_one_buffer_accumulate_each_gradient():
    # one flat buffer holding every gradient (a common optimiser layout) is fine while the views do not overlap
    x, z = tl.param([1.0, 2.0]), tl.param([3.0, 4.0, 5.0])
    buffer = np.zeros(5)
    x.grad, z.grad = buffer[:2], buffer[2:]
    tl.back_(tl.sum(x * 3.0) + tl.sum(z * z))
    np.testing.assert_allclose(buffer, [3.0, 3.0, 6.0, 8.0, 10.0])
    tl.back_(tl.sum(x * 3.0) + tl.sum(z * z))
    np.testing.assert_allclose(buffer, [6.0, 6.0, 12.0, 16.0, 20.0])


def test_grad_array_set_by_the_user_accumulates_in_place_and_a_repeated_param_counts_once():
    x = tl.param([1.0, 2.0])
    mine = np.array([10.0, 10.0])
    x.grad = mine
    tl.back_(tl.sum(x * x))
    np.testing.assert_allclose(x.grad, [12.0, 14.0])
    np.testing.assert_allclose(mine, [12.0, 14.0])  # the caller's array, added to in place
    grads = tl.gradient(lambda: tl.sum(x * x * x), tl.Params([x, x]))
    np.testing.assert_allclose(tl.data(grads[x]), [3.0, 12.0])


def test_grad_array_mutated_by_the_user_between_two_back_calls():
    x = tl.param([0.5, 1.0])
    tl.back_(tl.sum(tl.sin(x)))
    x.grad[0] = 100.0  # the user's own change of the accumulated gradient is kept
    tl.back_(tl.sum(tl.sin(x)))
    np.testing.assert_allclose(x.grad, [100.0 + np.cos(0.5), 2 * np.cos(1.0)])


def test_delta_mutated_after_back_changes_nothing():
    for make in (lambda x: x, lambda x: x + 0.0, lambda x: tl.reshape(x, (2,)), lambda x: x[:]):
        x = tl.param([0.5, 1.0])
        x.grad = None
        delta = np.array([1.0, 2.0])
        tl.back_(make(x), delta)
        delta[:] = 100.0
        np.testing.assert_allclose(x.grad, [1.0, 2.0])


# ----------------------------------------------------------------------------------------------------
# custom rules whose sensitivities are not of the argument's dtype


def _constant_rule(sensitivity):
    """A custom operation ``f(x) = x`` whose pullback sends ``sensitivity(x)`` whatever it receives."""

    @tl.primitive
    def f(x):
        return tl.data(x) * 1.0

    @tl.grad_rule(f)
    def _(x):
        return tl.data(x) * 1.0, lambda g: (sensitivity(tl.data(x)),)

    return f


def test_custom_bool_sensitivities_sum_as_numbers():
    # NumPy sums booleans as "or": True + True is True, so two uses gave a gradient of 1 instead of 2
    f = _constant_rule(lambda x: np.ones(np.shape(x), dtype=bool))
    (g,) = tl.gradient(lambda x: tl.sum(f(x) + f(x)), np.ones(3))
    assert tl.data(g).dtype == np.float64
    np.testing.assert_array_equal(tl.data(g), [2.0, 2.0, 2.0])
    x = tl.param(np.ones(3))
    tl.back_(tl.sum(f(x) + f(x) + f(x)))
    np.testing.assert_array_equal(x.grad, [3.0, 3.0, 3.0])


def test_custom_small_integer_sensitivities_do_not_overflow():
    f = _constant_rule(lambda x: np.full(np.shape(x), 100, dtype=np.int8))
    (g,) = tl.gradient(lambda x: tl.sum(f(x) + f(x)), np.ones(2))
    np.testing.assert_array_equal(tl.data(g), [200.0, 200.0])  # int8 gave -56


@pytest.mark.parametrize(("given", "sent"), [(np.float32, np.float64), (np.float64, np.float32)])
def test_custom_sensitivities_take_the_parameter_dtype(given, sent):
    f = _constant_rule(lambda x: np.full(np.shape(x), 0.5, dtype=sent))
    (g,) = tl.gradient(lambda x: tl.sum(f(x) * 3.0), np.ones(2, dtype=given))
    assert tl.data(g).dtype == given
    np.testing.assert_array_equal(tl.data(g), [0.5, 0.5])  # the rule sends 0.5 whatever arrives


def test_custom_bool_sensitivity_of_a_python_float():
    f = _constant_rule(lambda x: np.True_)
    (g,) = tl.gradient(lambda x: f(x) + f(x), 1.0)
    assert float(tl.data(g)) == 2.0


# ----------------------------------------------------------------------------------------------------
# NumPy's out= and array methods with options


def test_plain_out_of_a_tracked_result_names_the_plain_array():
    x = tl.param([1.0, 2.0])
    a = np.ones(2)
    with pytest.raises(TypeError, match=r"numpy\.add: out= is a plain array, which cannot hold a tracked result"):
        a += x
    with pytest.raises(TypeError, match=r"numpy\.sin: out= is a plain array"):
        np.sin(x, out=np.empty(2))
    with pytest.raises(TypeError, match=r"numpy\.sin: out= cannot write into a tracked value"):
        np.sin(x, out=x)
    np.testing.assert_array_equal(a, [1.0, 1.0])


@pytest.mark.parametrize("method", ["ravel", "flatten"])
@pytest.mark.parametrize("order", ["F", "K", "A"])
def test_ravel_and_flatten_methods_refuse_an_order_they_cannot_keep(method, order):
    # dropping order="F" would give the C order: a wrong value and gradient without a word
    x = tl.param(np.arange(6.0).reshape(2, 3))
    with pytest.raises(ValueError, match="only order='C'"):
        getattr(x, method)(order=order)
    with pytest.raises(ValueError, match="only order='C'"):
        getattr(x, method)(order)


@pytest.mark.parametrize("method", ["ravel", "flatten"])
def test_ravel_and_flatten_in_c_order(method):
    x = tl.param(np.arange(6.0).reshape(2, 3))
    y = getattr(x, method)("C")
    np.testing.assert_array_equal(tl.data(y), np.arange(6.0))
    tl.back_(y, np.arange(6.0) * 10)
    np.testing.assert_array_equal(x.grad, np.arange(6.0).reshape(2, 3) * 10)


# ----------------------------------------------------------------------------------------------------
# threads


def test_threads_recording_and_back_at_once_get_their_own_gradients():
    wrong = []

    def work(seed):
        rng = np.random.default_rng(seed)
        for step in range(150):
            a = rng.standard_normal(3)
            x = tl.param(a)
            y = tl.sum(tl.sin(x) * x)
            if step % 2:
                with tl.no_grad():
                    tl.sin(x)
            tl.back_(y)
            if not np.allclose(x.grad, np.cos(a) * a + np.sin(a)):
                wrong.append(("back_", seed, step))
            (g,) = tl.gradient(lambda v: tl.sum(v**3), a)
            if not np.allclose(tl.data(g), 3 * a**2):
                wrong.append(("gradient", seed, step))

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []


# ----------------------------------------------------------------------------------------------------
# NumPy's positional arguments and options trackerlab does not take


def test_np_max_and_min_take_numpy_positional_order():
    # np.max(a, axis, out, keepdims) has no dtype: keepdims given by position landed in out= and was refused
    x = tl.param([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]])
    y = np.max(x, 1, None, True)
    np.testing.assert_array_equal(tl.data(y), [[5.0], [7.0]])
    tl.back_(y, np.array([[2.0], [3.0]]))
    np.testing.assert_array_equal(x.grad, [[0.0, 2.0, 0.0], [3.0, 0.0, 0.0]])
    z = tl.param([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]])
    tl.back_(tl.sum(np.min(z, 0, None, False) * np.array([1.0, 10.0, 100.0])))
    np.testing.assert_array_equal(z.grad, [[1.0, 0.0, 100.0], [0.0, 10.0, 0.0]])
    with pytest.raises(TypeError, match="max: out= is not supported"):
        np.max(x, 0, np.empty(3))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda x: np.sum(x, where=np.ones((2, 3), bool)), "sum: the option where= is not supported"),
        (lambda x: np.max(x, initial=3.0), "max: the option initial= is not supported"),
        (lambda x: np.prod(x, axis=0, initial=2.0), "prod: the option initial= is not supported"),
    ],
)
def test_numpy_options_without_support_are_named(call, message):
    x = tl.param(np.ones((2, 3)))
    with pytest.raises(TypeError, match=message + r" \(operand shapes \(2, 3\)\)"):
        call(x)


def test_update_with_an_optimiser_steps_a_parameter_listed_twice_once():
    x = tl.param([1.0, 2.0])
    grads = tl.gradient(lambda: tl.sum(x * x), tl.Params([x]))
    tl.update_(tl.optim.Descent(0.1), [x, x], grads)
    np.testing.assert_allclose(tl.data(x), [0.8, 1.6])  # one step of 0.1 * 2x, not two


def test_threads_calling_back_into_one_shared_parameter_lose_no_contribution():
    # NumPy releases the GIL while it adds large arrays: two unguarded `grad += delta` at once would each read the
    # old total, and one contribution would be lost without a word
    W = tl.param(np.zeros(200_000))
    weights = np.arange(200_000) % 7 + 1.0
    rounds, workers = 30, 4

    def work():
        for _ in range(rounds):
            tl.back_(tl.sum(W * weights))

    threads = [threading.Thread(target=work) for _ in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    np.testing.assert_array_equal(W.grad, rounds * workers * weights)


# ----------------------------------------------------------------------------------------------------
# a pullback or hook that writes into its sensitivity


def _doubling_in_place():
    @tl.primitive
    def twice(x):
        return tl.data(x) * 2.0

    @tl.grad_rule(twice)
    def _(x):
        def pullback(g):
            g *= 2.0  # in place: g is also the sensitivity that add sends to its other argument
            return (g,)

        return tl.data(x) * 2.0, pullback

    return twice


def test_a_custom_pullback_writing_into_g_refuses_instead_of_changing_other_gradients():
    # add sends one array to both arguments; doubling it in place gave w the gradient 2 instead of 1
    twice = _doubling_in_place()
    x, w = tl.param(np.ones(3)), tl.param(np.ones(3))
    with pytest.raises(ValueError, match=r"twice: the pullback \(or hook\) wrote into its sensitivity g in place"):
        tl.back_(twice(x) + w * 1.0, np.ones(3))
    np.testing.assert_array_equal(w.grad, [0.0, 0.0, 0.0])  # nothing accumulated


def test_a_hook_clipping_g_in_place_refuses_and_one_returning_a_new_array_works():
    def clip_in_place(g):
        g[g > 1] = 1.0
        return g

    x, w = tl.param(np.ones(3)), tl.param(np.ones(3))
    with pytest.raises(ValueError, match=r"hook: the pullback .* in place"):
        tl.back_(tl.hook(clip_in_place, x) * 3.0 + w, np.ones(3))
    tl.back_(tl.hook(lambda g: np.minimum(g, 1.0), x) * 3.0 + w, np.ones(3))
    np.testing.assert_array_equal(x.grad, [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(w.grad, [1.0, 1.0, 1.0])


def test_forward_results_that_share_one_array_are_read_only():
    # add sends one sensitivity to both arguments: with tracked inputs back(Δ) returned two values over one
    # writeable array, and clipping one (tl.data(ga)[0] = 0) changed the other
    a, b = tl.param(np.ones(2)), tl.param(np.ones(2))
    _, back = tl.forward(lambda u, v: u + 2.0 * v, a, b)
    ga, gb = back(np.array([1.0, 3.0]))
    with pytest.raises(ValueError, match="read-only"):
        tl.data(ga)[0] = 0.0
    np.testing.assert_array_equal(tl.data(ga), [1.0, 3.0])
    np.testing.assert_array_equal(tl.data(gb), [2.0, 6.0])
    _, back = tl.forward(lambda u, v: u + v, a, b)
    ga, gb = back(np.array([1.0, 3.0]))
    for g in (ga, gb):
        with pytest.raises(ValueError, match="read-only"):
            tl.data(g)[...] = 0.0
    np.testing.assert_array_equal(tl.data(gb), [1.0, 3.0])


# ----------------------------------------------------------------------------------------------------
# checkpoint of a function that closes over a tracked value


CLOSURES = {
    "back_": lambda W, x: tl.back_(tl.sum(tl.checkpoint(lambda a: a * W, x))),
    "gradient": lambda W, x: tl.gradient(lambda a: tl.sum(tl.checkpoint(lambda t: t * W, a)), np.ones(2)),
    "Params": lambda W, x: tl.gradient(lambda: tl.sum(tl.checkpoint(lambda a: a * W, x)), tl.Params([W, x])),
    "its own argument too": lambda W, x: tl.back_(tl.sum(tl.checkpoint(lambda a: a * x, x))),
    "a value computed before": lambda W, x: tl.back_(tl.sum(tl.checkpoint(lambda a: a * (W * 2.0), x))),
}


@pytest.mark.parametrize("route", sorted(CLOSURES))
def test_checkpoint_refuses_a_tracked_value_f_closes_over(route):
    # checkpoint sends sensitivities to its arguments only: W's gradient came out 0 without a word
    W, x = tl.param(np.array([2.0, 3.0])), tl.param(np.array([1.0, 1.0]))
    with pytest.raises(TypeError, match="checkpoint: f uses a tracked value that is not one of its arguments"):
        CLOSURES[route](W, x)
    np.testing.assert_array_equal(W.grad, [0.0, 0.0])
    np.testing.assert_array_equal(x.grad, [0.0, 0.0])


def test_checkpoint_with_every_tracked_value_as_an_argument():
    x, W = tl.param(np.array([1.0, 2.0])), tl.param(np.array([2.0, 3.0]))
    tl.back_(tl.sum(tl.checkpoint(lambda a, w: a * w * a, x, W)))
    np.testing.assert_allclose(x.grad, [4.0, 12.0])  # 2 a w
    np.testing.assert_allclose(W.grad, [1.0, 4.0])  # a²
    # values made inside f (a parameter, a gradient) are f's own
    (g,) = tl.gradient(lambda a: tl.sum(tl.checkpoint(lambda t: tl.param(np.ones(2)) * t * t, a)), np.array([1.0, 2.0]))
    np.testing.assert_allclose(tl.data(g), [2.0, 4.0])
    z = tl.param(np.array([1.0, 2.0]))
    tl.back_(tl.sum(tl.checkpoint(lambda t: tl.gradient(lambda u: tl.sum(u**3), t)[0] * t, z)))
    np.testing.assert_allclose(z.grad, [9.0, 36.0])  # d/dz 3z³
    inner = lambda t: tl.gradient(lambda u: tl.sum(u**3), t)[0]
    (g,) = tl.gradient(lambda a: tl.sum(tl.checkpoint(inner, a)), np.array([1.0, 2.0]))
    np.testing.assert_allclose(tl.data(g), [6.0, 12.0])  # f's value is a gradient: recorded even in no_grad
    np.testing.assert_allclose(
        tl.hessian(lambda a: tl.sum(tl.checkpoint(lambda t: t**3, a)), np.array([1.0, 2.0])), np.diag([6.0, 12.0])
    )


def test_a_hook_that_returns_none_refuses_instead_of_stopping_the_gradient():
    # a hook written to print (lambda g: print(g)) returns None, which would make x's gradient 0 without a word
    x = tl.param(np.ones(2))
    seen = []
    with pytest.raises(TypeError, match="hook: f returned None"):
        tl.back_(tl.sum(tl.hook(seen.append, x) * 3.0))
    np.testing.assert_array_equal(x.grad, [0.0, 0.0])
    tl.back_(tl.sum(tl.hook(lambda g: (seen.append(g), g)[1], x) * 3.0))
    np.testing.assert_array_equal(x.grad, [3.0, 3.0])
    np.testing.assert_array_equal(seen[-1], [3.0, 3.0])


def test_a_custom_pullback_without_its_return_refuses():
    # a pullback that forgot `return` gave None, read as "no sensitivity": the gradient came out 0
    @tl.primitive
    def double(x):
        return tl.data(x) * 2.0

    @tl.grad_rule(double)
    def _(x):
        def pullback(g):
            g * 2.0  # no return

        return tl.data(x) * 2.0, pullback

    x = tl.param(np.ones(2))
    with pytest.raises(TypeError, match=r"double: the pullback returned None; return a tuple"):
        tl.back_(tl.sum(double(x)))
    with pytest.raises(TypeError, match="double: the pullback returned None"):
        tl.gradient(lambda v: tl.sum(double(v)), np.ones(2))
