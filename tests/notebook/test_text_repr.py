"""The text reprs, checked string by string: what nbval compares in the tutorials."""

import numpy as np
import pytest

import trackerlab as tl


@pytest.fixture
def seed():
    W = tl.param([[1, 2], [3, 4]])
    x = tl.param([5, 6])
    y = W @ x
    return W, x, y


def test_tracked_real_prints_like_flux():
    assert repr(tl.param(2) * 3) == "6.0 (tracked)"
    assert repr(tl.param(np.float32(0.1))) == "0.1 (tracked)"
    assert repr(tl.gradient(lambda a, b: a * b, 2, 3)) == "(3.0 (tracked), 2.0 (tracked))"


def test_tracked_arrays_show_shape_dtype_and_values(seed):
    W, x, y = seed
    assert repr(W) == "Tracked 2×2 float64 array:\n[[1. 2.]\n [3. 4.]]"
    assert repr(x) == "Tracked 2-element float64 array:\n[5. 6.]"
    assert repr(y) == "Tracked 2-element float64 array:\n[17. 39.]"
    assert repr(tl.param(np.zeros((2, 1, 2), np.float32))) == (
        "Tracked 2×1×2 float32 array:\n[[[0. 0.]]\n\n [[0. 0.]]]"
    )


def test_large_arrays_are_summarised_as_numpy_does():
    text = repr(tl.param(np.arange(2000.0)))
    assert text.splitlines() == [
        "Tracked 2000-element float64 array:",
        "[0.000e+00 1.000e+00 2.000e+00 ... 1.997e+03 1.998e+03 1.999e+03]",
    ]


def test_call_and_tracked(seed):
    W, x, y = seed
    assert repr(y.tracker.f) == "Call(matmul, (param([[1.0, 2.0], [3.0, 4.0]]), param([5.0, 6.0])))"
    assert repr(tl.Call(tl.multiply, tl.param(2.0), np.float64(3.0))) == "Call(multiply, (param(2.0), 3.0))"
    assert repr(tl.sin(tl.param(0.0)).tracker.f) == "Call(sin, (param(0.0),))"
    assert repr(tl.sum(W, axis=0).tracker.f) == ("Call(sum, (param([[1.0, 2.0], [3.0, 4.0]]),), axis=0)")
    tl.back_(y, [1, -1])
    assert repr(x.tracker) == ("Tracked(ref=1, f=Call(param, ()), isleaf=True, data=[5.0, 6.0], grad=[-2.0, -2.0])")
    assert repr(y.tracker) == (
        "Tracked(ref=0, f=Call(matmul, (param([[1.0, 2.0], [3.0, 4.0]]), param([5.0, 6.0]))), "
        "isleaf=False, data=[17.0, 39.0], grad=None)"
    )
    z = tl.sum(y)
    assert repr(z.tracker.f) == "Call(sum, (matmul(…) → [17.0, 39.0],))"
    big = tl.param(np.ones((5, 5)))
    assert repr(tl.exp(big).tracker.f) == "Call(exp, (param(<5×5 float64>),))"


def test_steps(seed):
    _, _, y = seed
    steps = [repr(s) for s in tl.backprop_steps(y, np.array([1.0, -1.0]))]
    assert steps == [
        "Step(0: matmul, Δ=[1.0, -1.0], sent=([[5.0, 6.0], [-5.0, -6.0]], [-2.0, -2.0]), pending=2)",
        "Step(1: param, Δ=[[5.0, 6.0], [-5.0, -6.0]], sent=(), pending=1)",
        "Step(2: param, Δ=[-2.0, -2.0], sent=(), pending=0)",
    ]
    a = tl.param(3.0)
    assert repr(next(tl.backprop_steps(tl.sin(a) * 0 + a * 2))) == "Step(0: add, Δ=1.0, sent=(1.0, 1.0), pending=2)"


def test_params_and_grads():
    W = tl.param([[1.0, 2.0]])
    b = tl.param(0.5)
    ps = tl.Params([W, b])
    assert repr(ps) == "Params([param([[1.0, 2.0]]), param(0.5)])"
    gs = tl.gradient(lambda: tl.sum(W * 3) + b * 2, ps)
    assert repr(gs) == "Grads(param([[1.0, 2.0]]) => [[3.0, 3.0]], param(0.5) => 2.0)"


def test_reprs_are_the_same_in_every_run():
    def build():
        a = tl.param([1.0, 2.0])
        y = tl.exp(a) * a
        return repr(y) + repr(y.tracker) + repr(list(tl.backprop_steps(y, [1.0, 1.0])))

    first = build()
    assert first == build()
    assert "0x" not in first


def test_other_array_api_backends_print_as_numpy():
    import array_api_strict as xp

    a = tl.param(xp.asarray([1.0, 2.0]))
    assert repr(a) == "Tracked 2-element float64 array:\n[1. 2.]"
    assert repr(tl.sum(a)) == "3.0 (tracked)"
    assert repr(a.tracker) == "Tracked(ref=1, f=Call(param, ()), isleaf=True, data=[1.0, 2.0], grad=[0.0, 0.0])"
