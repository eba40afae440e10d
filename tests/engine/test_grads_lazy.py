"""A ``.grad`` reset by ``zero_grad_`` (or ``update_``, or a new parameter's) is zeros made only when read:
``back_`` keeps the walk's fresh sensitivity as such a ``.grad`` instead of zeroing an array and adding into
it. No one can tell: every way of reading ``.grad`` sees real zeros of the parameter's shape and dtype, made
once and kept, and ``back_`` accumulates into a ``.grad`` that code holds, as Flux does."""

import copy
import pickle
import threading

import numpy as np
import pytest

import trackerlab as tl
from trackerlab.core import plain as engine

X = np.array([[1.0, -2.0, 0.5], [3.0, 0.25, -1.0]])  # 2×3 inputs of a linear map W (3×2)
DELTA = np.array([[1.0, 2.0], [-1.0, 0.5]])  # the sensitivity of X @ W


def _sensitivity(dtype=np.float64):
    """d/dW of sum(DELTA ∘ (X @ W)) = Xᵀ DELTA, written out."""
    return (X.T @ DELTA).astype(dtype)


def _stepped(dtype=np.float64):
    """A 3×2 parameter after one ``back_`` (its ``.grad`` nonzero, held by nothing else)."""
    W = tl.param(np.arange(6.0).reshape(3, 2).astype(dtype))
    tl.back_(X.astype(dtype) @ W, DELTA.astype(dtype))
    return W


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_reset_grad_reads_as_zeros_of_the_parameters_shape_and_dtype(dtype):
    W = _stepped(dtype)
    np.testing.assert_array_equal(W.grad, _sensitivity(dtype))
    tl.zero_grad_(W)
    for read in (lambda: W.grad, lambda: tl.grad(W), lambda: W.tracker.grad):
        g = read()
        assert type(g) is np.ndarray and g.shape == (3, 2) and g.dtype == dtype
        assert g.flags.writeable and g.flags.c_contiguous
        np.testing.assert_array_equal(g, np.zeros((3, 2)))
    assert W.grad is W.grad  # made once, and kept
    fresh = tl.param(np.ones((2, 2), dtype))  # a new parameter's .grad: zeros too
    assert fresh.grad.dtype == dtype and fresh.grad is fresh.grad
    np.testing.assert_array_equal(fresh.grad, np.zeros((2, 2)))
    s = tl.param(2.5)
    tl.back_(s * 3.0)
    tl.zero_grad_(s)
    assert s.grad == 0.0 and type(s.grad) is float


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_back_after_a_reset_gives_exactly_the_sensitivity_and_then_accumulates(dtype):
    W = _stepped(dtype)
    tl.zero_grad_(W)
    tl.back_(X.astype(dtype) @ W, DELTA.astype(dtype))
    assert W.grad.dtype == dtype
    np.testing.assert_array_equal(W.grad, _sensitivity(dtype))
    tl.back_(X.astype(dtype) @ W, DELTA.astype(dtype))  # a second back_ adds to the first
    np.testing.assert_array_equal(W.grad, 2 * _sensitivity(dtype))
    for _ in range(3):  # a training loop's steps: the numbers of a fresh .grad each time
        tl.zero_grad_(W)
        tl.back_(X.astype(dtype) @ W, DELTA.astype(dtype))
        np.testing.assert_array_equal(W.grad, _sensitivity(dtype))
    fresh = tl.param(np.ones((3, 2), dtype))  # never reset: its first back_ too
    tl.back_(X.astype(dtype) @ fresh, DELTA.astype(dtype))
    np.testing.assert_array_equal(fresh.grad, _sensitivity(dtype))


def test_a_grad_held_before_the_reset_keeps_its_values_and_one_held_after_receives_the_sum():
    W = _stepped()
    before = W.grad
    tl.zero_grad_(W)
    np.testing.assert_array_equal(before, _sensitivity())  # what code holding it sees: unchanged
    after = W.grad
    assert after is not before
    np.testing.assert_array_equal(after, np.zeros((3, 2)))
    tl.back_(X @ W, DELTA)
    assert W.grad is after  # accumulated into the array code holds, as Flux's accum!
    np.testing.assert_array_equal(after, _sensitivity())
    np.testing.assert_array_equal(before, _sensitivity())


def test_a_reset_grad_that_was_nonzero_reads_as_zeros_in_the_same_memory():
    # the .grad no one held is kept for the zeros: filled when read, not before
    W = _stepped()
    address = W.grad.ctypes.data
    tl.zero_grad_(W)
    assert W.grad.ctypes.data == address
    np.testing.assert_array_equal(W.grad, np.zeros((3, 2)))
    tl.zero_grad_(W)
    tl.zero_grad_(W)  # twice in a row: still zeros
    np.testing.assert_array_equal(W.grad, np.zeros((3, 2)))


def test_a_reset_does_not_write_into_a_grad_set_by_hand():
    buffer = np.arange(4.0)
    x = tl.param([1.0, 2.0])
    x.grad = buffer[:2]  # a view: back_ adds into the buffer, zero_grad_ gives new zeros
    tl.back_(tl.sum(x * 3.0))
    np.testing.assert_array_equal(buffer, [3.0, 4.0, 2.0, 3.0])
    tl.zero_grad_(x)
    np.testing.assert_array_equal(buffer, [3.0, 4.0, 2.0, 3.0])
    tl.back_(tl.sum(x * 3.0))
    np.testing.assert_array_equal(x.grad, [3.0, 3.0])
    np.testing.assert_array_equal(buffer, [3.0, 4.0, 2.0, 3.0])
    y = tl.param([1.0, 2.0])
    y.grad = np.zeros(3)  # of the wrong shape: back_ refuses it, and a reset replaces it
    with pytest.raises(ValueError, match=r"back_: a parameter's .grad has shape \(3,\), but the parameter has"):
        tl.back_(tl.sum(y * 3.0))
    tl.zero_grad_(y)
    tl.back_(tl.sum(y * 3.0))
    np.testing.assert_array_equal(y.grad, [3.0, 3.0])


def test_the_sensitivity_kept_as_a_grad_is_never_shared():
    a, b = tl.param(np.zeros(3)), tl.param(np.zeros(3))
    tl.zero_grad_([a, b])
    tl.back_(a + b, np.array([1.0, 2.0, 3.0]))  # the walk sends one array to both, and it is the caller's
    assert not np.shares_memory(a.grad, b.grad)
    a.grad[0] = 10.0
    np.testing.assert_array_equal(b.grad, [1.0, 2.0, 3.0])
    seed = np.array([1.0, 2.0, 3.0])
    tl.zero_grad_(a)
    tl.back_(a * 1.0, seed)
    seed[:] = -1.0
    np.testing.assert_array_equal(a.grad, [1.0, 2.0, 3.0])


def test_update_resets_the_grad_lazily_and_keeps_a_held_one():
    W = _stepped()
    held = W.grad
    tl.update_(W, -0.1 * W.grad)
    np.testing.assert_allclose(W.data, np.arange(6.0).reshape(3, 2) - 0.1 * _sensitivity())
    np.testing.assert_array_equal(held, _sensitivity())
    np.testing.assert_array_equal(W.grad, np.zeros((3, 2)))
    V = _stepped()
    tl.update_(V, -0.1 * V.grad)  # its .grad held by no one: the zeros reuse it
    tl.back_(X @ V, DELTA)
    np.testing.assert_array_equal(V.grad, _sensitivity())


@pytest.mark.parametrize("opt", [tl.optim.Descent(0.1), tl.optim.Momentum(0.1), tl.optim.ADAM(0.1)])
def test_optimisers_and_params_see_real_zeros(opt):
    W = _stepped()
    b = tl.param([1.0, -1.0])
    tl.back_(tl.sum(b * b))
    ps = tl.Params([W, b])
    tl.zero_grad_(ps)
    start = [p.data.copy() for p in ps]
    gs = tl.Grads({p.tracker: p.grad for p in ps}, ps)  # the .grad arrays as the gradients of a step
    for p, g in gs.items():
        np.testing.assert_array_equal(g, np.zeros(p.shape))
    tl.update_(opt, ps, gs)  # a zero gradient moves nothing
    for p, value in zip(ps, start):
        np.testing.assert_array_equal(p.data, value)
    assert "0.0" in repr(gs)


@pytest.mark.parametrize("how", ["pickle", "copy", "deepcopy"])
def test_copies_of_a_reset_parameter_have_zero_grads_of_their_own(how):
    W = _stepped(np.float32)
    tl.zero_grad_(W)
    twin = {
        "pickle": lambda: pickle.loads(pickle.dumps(W)),
        "copy": lambda: copy.copy(W),
        "deepcopy": lambda: copy.deepcopy(W),
    }[how]()
    assert twin.grad.dtype == np.float32
    np.testing.assert_array_equal(twin.grad, np.zeros((3, 2)))
    tl.back_(X.astype(np.float32) @ twin, DELTA.astype(np.float32))
    np.testing.assert_array_equal(twin.grad, _sensitivity(np.float32))
    np.testing.assert_array_equal(W.grad, np.zeros((3, 2)))
    assert not np.shares_memory(twin.grad, W.grad)


def test_the_text_and_html_reprs_of_a_reset_parameter_show_zeros():
    w = tl.param([1.0, 2.0])
    tl.back_(tl.sum(w * np.array([7.5, -3.25])))
    assert "grad=[7.5, -3.25]" in repr(w.tracker)
    tl.zero_grad_(w)
    assert "grad=[0.0, 0.0]" in repr(w.tracker)
    tl.back_(tl.sum(w * np.array([7.5, -3.25])))
    tl.zero_grad_(w)
    html = w._repr_html_()
    assert "7.5" not in html and "3.25" not in html
    grad_panel = html.split(">grad<", 1)[1]
    assert "0" in grad_panel.split("</div></div>", 1)[0]
    graph = tl.to_networkx(w * 2.0)
    (leaf,) = [n for n, attrs in graph.nodes(data=True) if attrs["isleaf"]]
    np.testing.assert_array_equal(graph.nodes[leaf]["grad"], [0.0, 0.0])


def test_a_new_value_set_after_a_reset_keeps_the_grad_of_its_shape():
    x = tl.param(np.ones(2))
    tl.back_(tl.sum(x * 2.0))
    tl.zero_grad_(x)
    x.data = np.array([5.0, 6.0], np.float32)  # same shape: the .grad takes the parameter's new dtype
    assert x.grad.dtype == np.float32
    np.testing.assert_array_equal(x.grad, [0.0, 0.0])
    tl.zero_grad_(x)
    x.data = np.zeros(3)  # a new shape: zeros of that shape
    np.testing.assert_array_equal(x.grad, np.zeros(3))


def test_threads_reading_a_reset_grad_get_one_array_and_back_from_threads_adds_every_sum():
    W = _stepped()
    tl.zero_grad_(W)
    seen = []
    start = threading.Barrier(8)

    def read():
        start.wait()
        seen.append(W.grad)

    threads = [threading.Thread(target=read) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(g is seen[0] for g in seen)  # one array, which back_ then adds into
    big = tl.param(np.zeros((200, 200)))
    tl.zero_grad_(big)
    ones = np.ones((200, 200))
    start = threading.Barrier(4)

    def step():
        start.wait()
        for _ in range(10):
            tl.back_(tl.sum(big * ones))

    threads = [threading.Thread(target=step) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    np.testing.assert_array_equal(big.grad, np.full((200, 200), 40.0))


def test_zero_grad_writes_nothing_until_the_grad_is_read():
    W = _stepped()
    tl.zero_grad_(W)
    assert type(W.tracker._grad) is engine._Zeros  # not made: zero_grad_ wrote nothing
    W.grad  # noqa: B018 (reading makes it)
    assert type(W.tracker._grad) is np.ndarray


def test_back_after_a_reset_gives_the_numbers_gradient_gives_signed_zeros_too():
    c = np.array([-0.0, 1.0, -2.0])  # the multiply's pullback sends 1 · -0.0 = -0.0
    W = tl.param([1.0, 2.0, 3.0])
    tl.zero_grad_(W)
    tl.back_(tl.sum(W * c))
    V = tl.param([1.0, 2.0, 3.0])
    want = tl.data(tl.gradient(lambda: tl.sum(V * c), tl.Params([V]))[V])
    np.testing.assert_array_equal(W.grad, want)
    np.testing.assert_array_equal(np.signbit(W.grad), np.signbit(want))
    np.testing.assert_array_equal(np.signbit(W.grad), [True, False, True])


def test_a_tracked_real_after_a_reset_takes_its_sensitivity_and_then_accumulates():
    b = tl.param(1.5)
    tl.back_(b * b)
    assert b.grad == 3.0
    tl.zero_grad_(b)
    assert b.grad == 0.0
    tl.zero_grad_(b)
    tl.back_(b * 4.0 + np.float64(1.0))  # a NumPy float64 sensitivity, kept as the .grad
    tl.back_(b * b)
    assert b.grad == 7.0 and isinstance(b.grad, float)
    tl.update_(b, -0.5)
    tl.back_(3.0 * b)
    assert b.grad == 3.0 and b.data == 1.0
