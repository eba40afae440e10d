"""A gradient computed without recording its backward pass is differentiated by running ``f`` again: an
``f`` that gives another value the second time (random numbers, changed state) is refused, never
differentiated as a different function."""

import numpy as np
import pytest

import trackerlab as tl


def test_a_gradient_of_params_whose_f_draws_new_random_numbers_is_refused_when_differentiated():
    rng = np.random.default_rng(0)
    w = tl.param(np.array([0.5, -1.0, 2.0]))

    def f():
        mask = rng.random(3) > 0.5  # dropout drawn inside f: a new mask each run
        return tl.sum(tl.tanh(w * mask * 2.0) ** 2)

    g = tl.gradient(f, tl.Params([w]))
    with pytest.raises(RuntimeError, match=r"gradient: f gave a different value when it was run again for the backward pass"):
        tl.back_(tl.sum(g[w] ** 2))
    assert w.grad is None or not np.any(tl.data(w.grad))  # nothing accumulated


def test_a_gradient_whose_f_changes_state_it_reads_is_refused_when_differentiated():
    calls = []

    def f(x):
        calls.append(1)
        return tl.sum(tl.sin(x) * len(calls))

    (gx,) = tl.gradient(f, np.array([0.3, 0.9]))
    with pytest.raises(RuntimeError, match=r"forward: f gave a different value when it was run again for the backward pass"):
        tl.back_(tl.sum(gx * gx))


def test_a_deterministic_f_still_gives_exact_second_derivatives():
    w = tl.param(np.array([0.5, -1.0, 2.0]))
    g = tl.gradient(lambda: tl.sum(tl.tanh(w) ** 2), tl.Params([w]))
    tl.back_(tl.sum(g[w] ** 2))
    x = np.array([0.5, -1.0, 2.0])
    t = np.tanh(x)
    first = 2 * t * (1 - t**2)  # d/dx tanh²
    second = 2 * (1 - t**2) ** 2 - 4 * t**2 * (1 - t**2)  # d²/dx² tanh²
    np.testing.assert_allclose(tl.data(w.grad), 2 * first * second, rtol=1e-12)


def test_a_fixed_seed_inside_f_is_the_same_function_each_run():
    w = tl.param(np.array([0.5, -1.0, 2.0]))

    def f():
        mask = np.random.default_rng(7).random(3) > 0.5
        return tl.sum(tl.tanh(w * mask) ** 2)

    g = tl.gradient(f, tl.Params([w]))
    tl.back_(tl.sum(g[w] ** 2))  # no error
    assert np.all(np.isfinite(tl.data(w.grad)))


def test_checkpoint_refuses_an_f_that_draws_new_random_numbers_in_the_replay():
    rng = np.random.default_rng(1)
    x = tl.param(np.array([0.2, 0.4, 0.6, 0.8]))
    y = tl.checkpoint(lambda t: tl.sum(t * (rng.random(4) > 0.5)), x)
    with pytest.raises(RuntimeError, match=r"checkpoint: f gave a different value when it was run again for the backward pass"):
        tl.back_(y)


def test_checkpoint_of_a_deterministic_f_is_exact():
    x = tl.param(np.array([0.2, 0.4]))
    tl.back_(tl.checkpoint(lambda t: tl.sum(tl.sin(t) * t), x))
    v = np.array([0.2, 0.4])
    np.testing.assert_allclose(tl.data(x.grad), np.cos(v) * v + np.sin(v), rtol=1e-12)
