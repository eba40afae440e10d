"""The exercises' checks (``tl.exercises``): a right answer passes with one line, a wrong one raises
``ExerciseError`` naming the argument or value, what was expected and a hint, in the chosen language;
an answer not given yet (``raise NotImplementedError()``, as the student notebooks have it) says so."""

from __future__ import annotations

import numpy as np
import pytest

import trackerlab as tl
from trackerlab.exercises import ExerciseError


@pytest.fixture(autouse=True)
def english_after():
    yield
    tl.set_language("en")


@tl.primitive
def cube(x):
    return x**3


@tl.primitive
def over(a, b):
    return a / b


def _register(f, pullback):
    @tl.grad_rule(f)
    def rule(*args):
        return f(*(tl.data(a) for a in args)), lambda Δ: pullback(Δ, *args)


def test_a_right_rule_passes_to_second_order(capsys):
    _register(cube, lambda Δ, x: (Δ * 3 * x**2,))
    tl.exercises.check_rule(cube, 2.0)
    tl.exercises.check_rule(cube, [[1.0, -2.0], [0.5, 3.0]])
    _register(over, lambda Δ, a, b: (Δ / b, -Δ * a / b**2))
    tl.exercises.check_rule(over, [3.0, 1.0], [2.0, -4.0])
    assert capsys.readouterr().out.count("the rule gives the right first and second derivatives") == 3


def test_a_wrong_first_derivative_names_the_argument_and_both_values():
    _register(over, lambda Δ, a, b: (Δ / b, Δ * a / b**2))  # the sign of ∂(a/b)/∂b flipped
    with pytest.raises(ExerciseError) as error:
        tl.exercises.check_rule(over, 3.0, 2.0)
    assert "over: the derivative for argument 2 is wrong at 2: expected -0.75, got 0.75." in str(error.value)
    assert "Hint: the pullback returns one sensitivity per argument" in str(error.value)


def test_a_pullback_on_plain_values_fails_at_second_order_only():
    _register(cube, lambda Δ, x: (Δ * 3 * tl.data(x) ** 2,))
    tl.exercises.check_rule(cube, 2.0, order=1)
    with pytest.raises(ExerciseError, match=r"second derivative for argument 1 is wrong at 2: expected 12, got 0"):
        tl.exercises.check_rule(cube, 2.0)


def test_messages_follow_the_language():
    _register(cube, lambda Δ, x: (Δ * 2 * x**2,))
    tl.set_language("ja")
    with pytest.raises(ExerciseError, match="引数 1 についての微分が 2 で違う: 期待値 12、実際は 8") as error:
        tl.exercises.check_rule(cube, 2.0)
    assert "ヒント:" in str(error.value)
    tl.set_language("zh")
    with pytest.raises(ExerciseError, match="第 1 个参数的导数在 2 处不对：应为 12，实际为 8"):
        tl.exercises.check_rule(cube, 2.0)


def test_an_answer_not_given_yet_says_so():
    @tl.grad_rule(cube)
    def cube_rule(x):
        raise NotImplementedError()

    with pytest.raises(ExerciseError, match="Not answered yet"):
        tl.exercises.check_rule(cube, 2.0)
    with pytest.raises(ExerciseError, match="Not answered yet"):
        tl.exercises.check_early_stopping(lambda losses, patience: (_ for _ in ()).throw(NotImplementedError()))


def _tape():
    a, b = tl.param(1.5), tl.param(-2.0)
    c = a * b
    d = c * c + a
    e = tl.sin(d) + c
    return e, {"a": a, "b": b, "c": c, "d": d, "e": e}


def test_ref_predictions():
    _e, values = _tape()
    tl.exercises.check_ref({"a": 2, "b": 1, "c": 3, "d": 1, "e": 0}, values)
    with pytest.raises(ExerciseError, match="ref of c: you predicted 2, the tape says 3") as error:
        tl.exercises.check_ref({"a": 2, "b": 1, "c": 2, "d": 1, "e": 0}, values)
    assert "z * z counts twice" in str(error.value)
    with pytest.raises(ExerciseError, match="no prediction for e"):
        tl.exercises.check_ref({"a": 2, "b": 1, "c": 3, "d": 1}, values)


def test_walk_order_predictions():
    e, values = _tape()
    tl.exercises.check_walk_order(["e", "d", "c", "a", "b"], e, values)
    with pytest.raises(ExerciseError, match="at position 3 the walk processes c, you predicted a"):
        tl.exercises.check_walk_order(["e", "d", "a", "c", "b"], e, values)
    with pytest.raises(ExerciseError, match="you named 4 nodes, the walk processes 5"):
        tl.exercises.check_walk_order(["e", "d", "c", "a"], e, values)


def _engine_walk(y):
    return [(step.node, step.delta) for step in tl.backprop_steps(y)]


def test_a_walk_of_your_own():
    e, _values = _tape()
    tl.exercises.check_walk(_engine_walk, e)
    steps = _engine_walk(e)
    with pytest.raises(
        ExerciseError, match=r"walk: multiply is processed at position 1, before add, multiply, which use it"
    ):
        tl.exercises.check_walk(lambda y: steps[4:5] + steps[:4] + steps[5:], e)
    with pytest.raises(ExerciseError, match=r"walk: the derivative of sin at position 2 is"):
        tl.exercises.check_walk(lambda y: [steps[0], (steps[1][0], 2 * steps[1][1]), *steps[2:]], e)
    with pytest.raises(ExerciseError, match=r"walk: 2 nodes were never processed: param, param"):
        tl.exercises.check_walk(lambda y: steps[:-2], e)
    with pytest.raises(ExerciseError, match=r"walk: add is processed twice"):
        tl.exercises.check_walk(lambda y: steps + steps[:1], e)


def _stop_epoch(losses, patience):
    best, waited = 0, 0
    for epoch in range(1, len(losses)):
        if losses[epoch] < losses[best]:
            best, waited = epoch, 0
        else:
            waited += 1
            if waited == patience:
                return epoch + 1, best + 1
    return len(losses), best + 1


def test_early_stopping(capsys):
    tl.exercises.check_early_stopping(_stop_epoch)
    assert "right on 5 sequences" in capsys.readouterr().out
    with pytest.raises(ExerciseError, match=r"patience=3\) returned \(7, 7\); expected \(stop, best\) = \(6, 3\)"):
        tl.exercises.check_early_stopping(lambda losses, patience: (len(losses), int(np.argmin(losses)) + 1))


def test_predictions_of_values():
    tl.exercises.check_prediction("trips", 63, 63.0)
    tl.exercises.check_prediction("grad_w", np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-9]))
    tl.exercises.check_prediction("culprit", "softplus", "softplus")
    with pytest.raises(ExerciseError, match="trips: you predicted 62, trackerlab computes 63"):
        tl.exercises.check_prediction("trips", 62, 63)
    with pytest.raises(ExerciseError, match="culprit: you predicted 'swish', trackerlab computes 'softplus'"):
        tl.exercises.check_prediction("culprit", "swish", "softplus")
    with pytest.raises(ExerciseError, match="grad_w"):
        tl.exercises.check_prediction("grad_w", np.array([1.0, 2.0]), np.array([1.0, 2.1]))
