"""Tracking is never dropped silently: lists and tuples of tracked values are tracked wherever an array is
accepted; a conversion that would drop tracking (``np.asarray``, ``float()`` inside a function being
differentiated) is a clear error; casts to integer and bool dtypes carry no gradient."""

import threading

import numpy as np
import pytest

import trackerlab as tl
from trackerlab.core.recording import RECORDING
from trackerlab.rules import functions

LOST = "tracking would be lost"


def values(grads):
    return tuple(float(tl.data(g)) for g in grads)


# ---------------------------------------------------------------- the examples of the issue


def test_a_list_of_tracked_values_in_tl_sum_is_tracked():
    assert values(tl.gradient(lambda a, b, c: c * tl.sum([a, b]), 1.0, 2.0, 3.0)) == (3.0, 3.0, 3.0)


def test_a_list_of_tracked_values_in_tl_mean_is_tracked():
    assert values(tl.gradient(lambda x: tl.mean([x, x + 2]), 0.0)) == (1.0,)


def test_np_sum_of_a_list_of_tracked_values_is_an_error_and_tl_stack_is_the_way():
    with pytest.raises(TypeError, match=LOST) as error:
        tl.gradient(lambda a, b: np.sum([a, b]), 1.0, 2.0)
    assert str(error.value) == (
        "a tracked value cannot become a plain NumPy array (np.asarray, np.array, or a NumPy function given a "
        "list holding tracked values): tracking would be lost and its gradient would silently be 0. Write "
        "tl.data(x) for the plain value (to plot or print it); for a list of tracked values, build the array "
        "with tl.stack([...]) (its plain value: tl.data(tl.stack([...]))) or give the list to a tl function "
        "(tl.sum([a, b]), tl.mean([a, b]))"
    )
    assert values(tl.gradient(lambda a, b: np.sum(tl.stack([a, b])), 1.0, 2.0)) == (1.0, 1.0)
    assert values(tl.gradient(lambda a, b: tl.sum([a, b]), 1.0, 2.0)) == (1.0, 1.0)


def test_np_array_of_tracked_values_is_an_error_and_tl_stack_is_the_way():
    with pytest.raises(TypeError, match=LOST):
        tl.gradient(lambda x: np.sum(np.array([x, x])), 1.0)
    assert values(tl.gradient(lambda x: np.sum(tl.stack([x, x])), 1.0)) == (2.0,)


# ---------------------------------------------------------------- lists in every tl function

V = np.array([0.3, 0.6, 0.45])
M = np.array([[0.3, 0.6, 0.45], [0.7, 0.2, 0.55], [0.25, 0.5, 0.65]])


def _signature(f):
    """The first of (vector), (matrix), (vector, vector), (matrix, matrix) that ``f`` accepts on plain data
    with a floating result, or ``None``."""
    for args in ((V,), (M,), (V, V[::-1] * 0.9), (M, M.T * 0.9)):
        try:
            with np.errstate(all="ignore"):
                out = f(*args)
        except Exception:
            continue
        out = np.asarray(tl.data(out[0] if isinstance(out, list | tuple) else out))
        if np.issubdtype(out.dtype, np.floating) and np.all(np.isfinite(out)):
            return args
    return None


CALLS = {name: (f, _signature(f)) for name, f in sorted(functions().items())}
LIST_CALLS = sorted(name for name, (f, args) in CALLS.items() if args is not None)


def test_the_class_test_reaches_most_of_the_op_library():
    assert len(LIST_CALLS) >= 80, LIST_CALLS
    for name in ("sum", "mean", "sin", "add", "matmul", "norm", "softmax", "inv", "stack", "concatenate"):
        assert name in LIST_CALLS


def _as_list(x):
    """The rows of a tracked array as a list of tracked values (a nested list for a matrix)."""
    if len(x.shape) == 2:
        return [[x[i, j] for j in range(x.shape[1])] for i in range(x.shape[0])]
    return [x[i] for i in range(x.shape[0])]


def _scalar(out):
    if isinstance(out, list | tuple):  # split's pieces, slogdet's (sign, logdet): the largest
        out = max(out, key=lambda piece: (tl.istracked(piece), np.size(tl.data(piece))))
    return tl.sum(tl.sin(out + 0.1 * out * out))


@pytest.mark.parametrize("name", LIST_CALLS)
def test_every_function_takes_a_list_of_tracked_values_as_an_array(name):
    f, args = CALLS[name]
    if name in ("stack", "concatenate", "hstack", "vstack", "column_stack", "dstack"):
        pytest.skip("takes a sequence of arrays; tested below")
    if name == "dropout":  # two calls draw two masks; tests/test_rules_conv.py gives it a list with a fixed rng
        (with_list,) = tl.gradient(lambda x: _scalar(f(_as_list(x), 0.5, rng=1)), V)
        (with_array,) = tl.gradient(lambda x: _scalar(f(x, 0.5, rng=1)), V)
        np.testing.assert_allclose(tl.data(with_list), tl.data(with_array), rtol=1e-12, atol=1e-12)
        return
    # the list of tracked elements must give the value and the gradient of the array they stand for
    x0, rest = args[0], args[1:]
    (with_list,) = tl.gradient(lambda x: _scalar(f(_as_list(x), *rest)), x0)
    (with_array,) = tl.gradient(lambda x: _scalar(f(x, *rest)), x0)
    # a real input's imaginary part and argument have slope 0, and so has one variable's correlation, 1
    if name not in ("imag", "angle", "corrcoef"):
        assert np.any(tl.data(with_array) != 0)
    np.testing.assert_allclose(tl.data(with_list), tl.data(with_array), rtol=1e-12, atol=1e-12)
    if len(args) == 2 and isinstance(f, tl.Op) and f.arity is None:  # a list as the second operand too
        (with_list,) = tl.gradient(lambda y: _scalar(f(x0, _as_list(y))), args[1])
        (with_array,) = tl.gradient(lambda y: _scalar(f(x0, y)), args[1])
        np.testing.assert_allclose(tl.data(with_list), tl.data(with_array), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("join", [tl.stack, tl.concatenate, tl.hstack, tl.vstack, np.stack, np.concatenate])
def test_joins_take_mixed_lists_of_tracked_values_arrays_and_numbers(join):
    def f(a, x):
        return tl.sum(join([x * a, [a, 2.0], (3.0, a * a)]) ** 2)

    # the squares of [2, 6], [2, 2], [3, 4]
    assert float(f(tl.param(2.0), np.array([1.0, 3.0]))) == 4 + 36 + 4 + 4 + 9 + 16
    g_a, g_x = tl.gradient(f, 2.0, np.array([1.0, 3.0]))
    # d/da of a²·Σx² + a² + a⁴ is 2a·10 + 2a + 4a³; d/dx of a²·x² is 2a²·x
    assert float(tl.data(g_a)) == 40.0 + 4.0 + 32.0
    np.testing.assert_array_equal(tl.data(g_x), [8.0, 24.0])


def test_a_flat_list_is_one_recorded_stack_and_a_nested_one_a_stack_and_a_reshape():
    a, b, c, d = (tl.param(v) for v in (1.0, 2.0, 3.0, 4.0))
    y = tl.sum([a, b, 5.0])
    packed = y.tracker.f.args[0]
    assert packed.f.name == "stack" and packed.f.args[:2] == (a.tracker, b.tracker) and packed.f.args[2] == 5.0
    y = tl.sum(tl.multiply([[a, b], (c, d)], np.array([1.0, 10.0])))
    reshape = y.tracker.f.args[0].f.args[0]
    assert reshape.f.name == "reshape" and reshape.shape == (2, 2)
    assert reshape.f.args[0].f.name == "stack" and reshape.f.args[0].f.args == tuple(v.tracker for v in (a, b, c, d))
    tl.back_(y)
    assert (a.grad, b.grad, c.grad, d.grad) == (1.0, 10.0, 1.0, 10.0)


def test_nested_lists_and_tuples_of_tracked_values_are_tracked():
    g = tl.gradient(lambda a, b: tl.sum(tl.matmul([[a, 1.0], (2.0, b)], [[a], [b]])), 3.0, 5.0)
    # [[a, 1], [2, b]] @ [a, b] = [a² + b, 2a + b²]: d/da = 2a + 2, d/db = 1 + 2b
    assert values(g) == (8.0, 11.0)


def test_a_tracked_array_beside_a_list_of_numbers_is_tracked():
    x = tl.param([1.0, 2.0])
    a = tl.param(3.0)
    tl.back_(tl.sum(tl.prod([x * a, [a, 1.0]], axis=0)))  # [a·a, 2a·1]: a² + 2a
    assert a.grad == 8.0
    np.testing.assert_array_equal(x.grad, [9.0, 3.0])


def test_a_ragged_list_of_tracked_values_is_an_error_naming_the_operation():
    x = tl.param([1.0, 2.0])
    with pytest.raises(ValueError, match=r"^sum: cannot read the list of tracked values as an array: stack"):
        tl.sum([x, [1.0, 2.0, 3.0]])
    with pytest.raises(ValueError, match=r"^mean: cannot read the list of tracked values as an array"):
        tl.mean([[x[0], x[1]], [x[0]]])


def test_lists_of_tracked_values_under_no_grad_give_plain_values():
    a, b = tl.param(1.0), tl.param(2.0)
    with tl.no_grad():
        y = tl.sum([a, b])
    assert not tl.istracked(y) and y == 3.0


def test_where_and_clip_take_lists_of_tracked_values():
    g = tl.gradient(lambda a, b: tl.sum(tl.where([True, False], [a, b], [2 * a, 3 * b])), 1.0, 1.0)
    assert values(g) == (1.0, 3.0)
    g = tl.gradient(lambda a: tl.sum(tl.clip([a, 3 * a], 0.0, 2.0)), 1.0)  # 3a is clipped
    assert values(g) == (1.0,)


# ---------------------------------------------------------------- operators and NumPy's protocols


def test_operators_take_lists_of_tracked_values_on_either_side():
    x = tl.param([1.0, 2.0])
    a, b = tl.param(3.0), tl.param(4.0)
    tl.back_(tl.sum((x + [a, b]) * [a, b] - (a, b) / x + [[a, b]] @ x))
    # Σ (x + v)·v - v/x + 2 v·x with v = [a, b] (the product v·x is broadcast over both elements)
    assert a.grad == (1.0 + 6.0) - 1.0 + 2.0 and b.grad == (2.0 + 8.0) - 0.5 + 4.0
    np.testing.assert_allclose(x.grad, [3.0 + 3.0 + 6.0, 4.0 + 1.0 + 8.0])


def test_a_list_of_tracked_values_on_the_left_of_an_operator():
    a, b = tl.param(3.0), tl.param(4.0)
    for y, expected in (([a, b] * a, (2 * 3.0 + 4.0, 3.0)), ([a, b] - b, (1.0, -1.0)), ([a, b] / b, (0.25, -3.0 / 16))):
        tl.zero_grad_([a, b])
        tl.back_(tl.sum(y))
        assert (a.grad, b.grad) == pytest.approx(expected, rel=1e-15)


def test_comparisons_and_indices_holding_tracked_values_compare_their_plain_data():
    x = tl.param([1.0, 5.0])
    a = tl.param(3.0)
    np.testing.assert_array_equal(x > [a, 2.0], [False, True])
    np.testing.assert_array_equal(x // [a, 2.0], [0.0, 2.0])
    assert float(x[[tl.param(1.0).data.__int__()]][0]) == 5.0


def test_numpy_functions_reached_by_dispatch_take_lists_of_tracked_values():
    a, b = tl.param(3.0), tl.param(4.0)
    x = tl.param([1.0, 2.0])
    cases = [
        (np.add(x, [a, b]), (1.0, 1.0)),
        (np.maximum([a, b], x), (1.0, 1.0)),
        (np.dot([a, b], x), (1.0, 2.0)),
        (np.where([True, False], x, [a, b]), (0.0, 1.0)),
        (np.concatenate([x, [a, b]]), (1.0, 1.0)),
        (np.stack([a, b]), (1.0, 1.0)),
        (np.greater(x, [a, b]) * a, (0.0, 0.0)),  # not differentiable: compares the plain data
    ]
    for y, expected in cases:
        tl.zero_grad_([a, b])
        tl.back_(tl.sum(y * 1.0))
        assert (a.grad, b.grad) == expected


# ---------------------------------------------------------------- conversions that would drop tracking


@pytest.mark.parametrize(
    "convert",
    [
        lambda x, a: np.asarray(x),
        lambda x, a: np.array(x),
        lambda x, a: np.array([a, a]),
        lambda x, a: np.asarray([x, x]),
        lambda x, a: np.sum([a, a]),
        lambda x, a: np.mean([x, x + 2]),
        lambda x, a: np.add([a, a], 1.0),
        lambda x, a: np.zeros(2) + np.array([a, a]),
        lambda x, a: np.float64(2.0) * np.asarray(x),
        lambda x, a: np.float32(a) * x,
    ],
)
def test_numpy_converting_a_tracked_value_to_a_plain_array_is_an_error(convert):
    x, a = tl.param([1.0, 2.0]), tl.param(3.0)
    for inside in (False, True):  # always: outside a function being differentiated too
        with pytest.raises(TypeError, match=LOST) as error:
            if inside:
                tl.gradient(lambda a: tl.sum(convert(x * a, a)) * a, 3.0)
            else:
                convert(x, a)
        message = str(error.value)
        assert "tl.data(x)" in message and "tl.stack([...])" in message


def test_writing_a_tracked_array_into_a_numpy_array_is_an_error():
    out = np.zeros(2)
    with pytest.raises(TypeError, match=LOST):
        out[:] = tl.param([1.0, 2.0])


def test_plain_values_plot_and_print():
    from matplotlib.figure import Figure

    x = tl.param([1.0, 2.0, 3.0])
    y = x * x
    figure = Figure()
    line = figure.add_subplot().plot(tl.data(x), tl.data(y))[0]
    np.testing.assert_array_equal(line.get_ydata(), [1.0, 4.0, 9.0])
    assert str(tl.data(y)) == "[1. 4. 9.]" and "[1. 4. 9.]" in repr(y)
    np.testing.assert_array_equal(np.asarray(tl.data(y)), [1.0, 4.0, 9.0])


# ---------------------------------------------------------------- float() inside differentiation

PLAIN_NUMBERS = [
    ("float(x)", lambda x: float(x) * x, "float(tl.data(x))"),
    ("complex(x)", lambda x: complex(x).real * x, "complex(tl.data(x))"),
    ("x.item()", lambda x: x.item() * x, "tl.data(x).item()"),
    ("x.item()", lambda x: tl.sum(x * tl.param([1.0]))[None].item() * x, "tl.data(x).item()"),
    ("x.tolist()", lambda x: tl.sum(x * tl.stack([x, x]).tolist()[0]), "tl.data(x).tolist()"),
    ("float(x)", lambda x: x * _stored(x), "float(tl.data(x))"),  # NumPy calls float(x)
]


def _stored(x):
    out = np.zeros(2)
    out[0] = x
    return out[0]


X0 = np.float32(2.0)  # checkpoint runs f on the plain value first, which has .item() then


def _entry_points(f):
    """Each way of differentiating ``f`` at 2.0."""
    return [
        lambda: tl.gradient(f, X0),
        lambda: tl.forward(f, X0),
        lambda: tl.jacobian(f, X0),
        lambda: tl.hessian(f, X0),
        lambda: tl.gradient(lambda x: tl.checkpoint(f, x), X0),
        lambda: tl.back_(tl.checkpoint(f, tl.param(X0))),  # the replay in the backward pass
        lambda: tl.gradient(lambda: f(P), tl.Params([P])),
    ]


P = tl.param(X0)


@pytest.mark.parametrize("case", range(len(PLAIN_NUMBERS)))
@pytest.mark.parametrize("entry", range(7))
def test_a_python_number_from_a_tracked_value_inside_differentiation_is_an_error(case, entry):
    spelling, f, instead = PLAIN_NUMBERS[case]
    with pytest.raises((TypeError, ValueError)) as error:
        _entry_points(f)[entry]()
    # NumPy's out[0] = x reports our error as the cause of its own; the walk may wrap a pullback's error
    cause = error.value
    while not str(cause).startswith(spelling) and (cause.__cause__ or cause.__context__) is not None:
        cause = cause.__cause__ or cause.__context__
    message = str(cause)
    assert message.startswith(f"{spelling}: x is tracked") and "would lose tracking" in message
    assert f"write {instead} to use the plain value on purpose" in message
    x = tl.param(2.0)  # and outside, after the error, they work again
    assert float(x) == 2.0 and complex(x) == 2.0 and x.item() == 2.0 and tl.param([1.0]).tolist() == [1.0]


def test_python_numbers_from_tracked_values_work_outside_differentiation():
    x = tl.param([1.0, 2.0])
    loss = tl.sum(x * x)
    assert float(loss) == 5.0 and loss.item() == 5.0 and int(loss) == 5 and complex(loss) == 5.0
    assert x.tolist() == [1.0, 2.0] and f"{float(loss):.1f}" == "5.0"
    with tl.no_grad():
        assert float(loss) == 5.0
    tl.gradient(lambda x: x * x, 1.0)
    assert float(loss) == 5.0  # the count of functions being differentiated went back to 0


def test_plain_numbers_on_purpose_and_control_flow_work_inside_differentiation():
    def f(x):
        scale = float(tl.data(x))  # a constant, on purpose
        if x > 1:  # comparisons and truth give plain booleans
            return scale * x
        return x

    assert values(tl.gradient(f, 3.0)) == (3.0,)
    assert values(tl.gradient(f, 0.5)) == (1.0,)


def test_int_of_a_tracked_value_inside_differentiation_is_a_constant():
    # int() is piecewise constant: its derivative is 0, so dropping tracking is the right answer
    assert values(tl.gradient(lambda x: int(x) * x, 2.5)) == (2.0,)
    assert values(tl.gradient(lambda x: tl.sum(tl.ones(int(x)) * x) if hasattr(tl, "ones") else x * int(x), 3.0)) == (
        3.0,
    )


def test_a_failing_function_leaves_nothing_counted():
    with pytest.raises(ZeroDivisionError):
        tl.gradient(lambda x: 1 / 0, 1.0)
    with pytest.raises(ZeroDivisionError):
        tl.gradient(lambda: 1 / 0, tl.Params([P]))
    assert float(P) == 2.0


def test_the_count_is_kept_per_thread():
    assert isinstance(RECORDING, threading.local)
    seen = []
    inside = threading.Event()
    done = threading.Event()

    def f(x):
        inside.set()
        done.wait(5)
        return x * x

    worker = threading.Thread(target=lambda: tl.gradient(f, 1.0))
    worker.start()
    inside.wait(5)
    try:
        seen.append(float(P))  # another thread differentiates; this one does not
    finally:
        done.set()
        worker.join()
    assert seen == [2.0]


# ---------------------------------------------------------------- casts


@pytest.mark.parametrize("dtype", [int, bool, np.int32, np.uint8, "int64", np.bool_])
@pytest.mark.parametrize("cast", ["method", "tl", "numpy"])
def test_a_cast_to_an_integer_or_bool_dtype_carries_no_gradient(dtype, cast):
    def to(x):
        if cast == "method":
            return x.astype(dtype)
        return tl.astype(x, dtype) if cast == "tl" else np.astype(x, dtype)

    x0 = np.array([1.5, -2.5, 0.0])
    y = to(tl.param(x0))
    assert not tl.istracked(y)
    np.testing.assert_array_equal(y, x0.astype(dtype))
    g = tl.gradient(lambda x: tl.sum(to(x) * x), x0)[0]
    np.testing.assert_array_equal(tl.data(g), x0.astype(dtype).astype(float))


@pytest.mark.parametrize(
    "source, target", [(np.float64, np.float32), (np.float32, np.float64), (np.float64, np.float16)]
)
def test_a_floating_cast_is_tracked_and_its_gradient_has_the_inputs_dtype(source, target):
    x = tl.param(np.array([1.5, -2.5], dtype=source))
    y = x.astype(target)
    assert tl.istracked(y) and y.dtype == target
    tl.back_(tl.sum(y * y))
    assert x.grad.dtype == source
    np.testing.assert_allclose(x.grad, [3.0, -5.0])
    tl.check_grads(lambda x: tl.sum(tl.astype(x, np.float64) ** 3), np.array([0.5, 1.5], dtype=np.float64))


def test_a_cast_of_a_tracked_real():
    x = tl.param(2.5)
    assert not tl.istracked(x.astype(int)) and int(x.astype(int)) == 2
    assert values(tl.gradient(lambda x: x.astype(np.float64) * x, 2.5)) == (5.0,)


# ---------------------------------------------------------------- custom rules that return the wrong thing


def _custom(result):
    @tl.primitive
    def f(x):
        return x

    tl.grad_rule(f)(lambda x: result)
    return f


@pytest.mark.parametrize(
    "result, problem",
    [
        ([1.0, lambda Δ: (Δ,)], "returned a list; return a tuple (value, pullback)"),
        ((1.0, (1.0,)), "returned a pullback that is a tuple, not a function"),
        ((1.0, 2.0), "returned a pullback that is a float, not a function"),
        ((1.0, lambda Δ: (Δ,), 3), "returned a tuple of 3 items; return two: (value, pullback)"),
        (1.0, "returned a float; return a tuple (value, pullback)"),
    ],
)
def test_a_rule_returning_the_wrong_thing_is_an_error_naming_it(result, problem):
    f = _custom(result)
    with pytest.raises(TypeError) as error:
        f(tl.param(1.0))
    assert str(error.value) == f"f: the gradient rule {problem}" or str(error.value).startswith(
        f"f: the gradient rule {problem}"
    )


def test_track_with_a_list_of_tracked_values_is_an_error():
    def f(xs):
        return xs

    tl.grad_rule(f)(lambda xs: (1.0, lambda Δ: (Δ,)))
    with pytest.raises(TypeError, match=r"^track: argument 1 of f is a list holding tracked values.*tl\.stack"):
        tl.track(f, [tl.param(1.0), 2.0])


# ---------------------------------------------------------------- iterables that are not arrays


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "flip", "copy", "mean", "sin", "cumsum"])
@pytest.mark.parametrize(
    "make",
    [
        lambda x: (v * 2 for v in x),
        lambda x: {0: x[0], 1: x[1]}.values(),
        lambda x: map(lambda v: v * 2, x),
        lambda x: (v for v in [1.0, 2.0]),
        lambda x: {1.0, 2.0},
    ],
    ids=["generator of tracked", "dict_values", "map", "generator of numbers", "set"],
)
def test_an_iterable_that_is_not_an_array_is_refused_by_name(name, make):
    x = tl.param([1.0, 2.0])
    with pytest.raises(TypeError, match=rf"{name}: argument 1 is a (generator|dict_values|map|set), which is not"):
        getattr(tl, name)(make(x))


def test_the_list_the_message_suggests_is_tracked():
    x = tl.param([1.0, 2.0])
    y = tl.sum([v * 2 for v in x])
    tl.back_(y)
    np.testing.assert_array_equal(x.grad, [2.0, 2.0])
    assert tl.sum(range(4)) == 6


@pytest.mark.parametrize(
    "cast",
    [
        lambda v: np.int64(v),
        lambda v: np.asarray(v, dtype=int),
        lambda v: np.asarray(v, dtype=bool),
        lambda v: v.astype(int),
    ],
    ids=["np.int64", "asarray int", "asarray bool", "astype"],
)
def test_a_cast_to_integers_gives_plain_integers_as_in_autograd(cast):
    """autograd's test_cast_to_int: indices computed from a tracked value; their derivative is 0."""
    inds = np.ones(5)[:, None]
    W0 = np.random.default_rng(0).standard_normal((5, 10))

    def fun(W):
        glued = tl.concatenate((W, inds), axis=1)
        new_inds = cast(glued[:, -1])
        assert not tl.istracked(new_inds) and new_inds.dtype.kind in "biu"
        return W[:, :-1][np.arange(5), np.asarray(new_inds, dtype=int)]

    np.testing.assert_array_equal(tl.data(fun(tl.param(W0))), W0[:, 1])
    tl.check_grads(lambda W: tl.sum(fun(W) ** 2), W0)


@pytest.mark.parametrize("dtype", [None, float, np.float32, complex])
def test_a_cast_to_floats_or_no_dtype_still_refuses(dtype):
    with pytest.raises(TypeError, match="tracking would be lost"):
        np.asarray(tl.param([1.5, 2.5]), dtype=dtype)


# ----------------------------------------------------------------------------------------------------
# Lists of tracked values where ``convolve``, ``correlate``, ``cov`` and ``corrcoef`` take an array, as every other tl
# function takes them: they were read as shapeless values ("a and v must be 1-D sequences (got shapes () and (3,))",
# "cannot reshape array of size 3"). Each list now stands for the array of its values, with its gradient: the same as
# the array's, and by hand.
# ----------------------------------------------------------------------------------------------------


V_LISTS = np.array([0.3, 0.9, 0.4])
AW = np.array([1.0, 2.0, 1.0])

CALLS_LISTS = {
    "convolve": lambda a: tl.convolve(a, [1.0, -0.5]),
    "convolve, list second": lambda a: tl.convolve([1.0, -0.5, 2.0], a, "same"),
    "correlate": lambda a: tl.correlate(a, [1.0, -0.5], "full"),
    "cov": lambda a: tl.cov(tl.stack([a, a * a]) if not isinstance(a, list) else [a, [v * v for v in a]]),
    "cov with tracked aweights": lambda a: tl.cov(V_LISTS, aweights=a),
    "corrcoef": lambda a: tl.corrcoef(a, V_LISTS[::-1]),
}


@pytest.mark.parametrize("name", CALLS_LISTS)
def test_a_list_of_tracked_values_is_the_array_it_stands_for(name):
    f = CALLS_LISTS[name]

    def loss(x, as_list):
        values = [x[i] for i in range(3)] if as_list else x
        return tl.sum(tl.sin(f(values)) ** 2)

    (with_list,) = tl.gradient(lambda x: loss(x, True), V_LISTS)
    (with_array,) = tl.gradient(lambda x: loss(x, False), V_LISTS)
    assert np.any(tl.data(with_array) != 0)
    np.testing.assert_allclose(tl.data(with_list), tl.data(with_array), rtol=1e-12, atol=1e-14)


def test_convolve_of_a_list_by_hand():
    """conv([a, 2a], [1, a]) = [a, 2a + a², 2a²]; d/da of the sum of squares at 0.5 is 1 + 7.5 + 2."""
    (g,) = tl.gradient(lambda a: tl.sum(tl.convolve([a, 2 * a], [1.0, a]) ** 2), 0.5)
    assert float(tl.data(g)) == pytest.approx(10.5)
