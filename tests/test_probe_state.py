"""Probes of state as a new user meets it: values changed between the forward pass and the backward pass,
``.grad`` arrays shared or reused, ``forward``'s backpropagator after a change, custom rules whose
sensitivities have the wrong dtype, NumPy's ``out=`` and array methods with options. Each expected value is
derived by hand; each refusal must name what is wrong."""

import threading

import numpy as np
import pytest

import trackerlab as tl

# ----------------------------------------------------------------------------------------------------
# forward's backpropagator after its tracked input changed


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
    # order="F" was dropped: x.ravel(order="F") gave the C order, a wrong value and gradient without a word
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
    # NumPy releases the GIL while it adds large arrays: two unguarded `grad += delta` at once each read the
    # old total, and one contribution was lost (103 of 160 here, without a word)
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
    # a hook written to print (lambda g: print(g)) returned None, and x's gradient was silently 0
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
