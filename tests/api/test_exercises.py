"""The exercises' checks (``tl.exercises``): a right answer passes with one line, a wrong one raises
``ExerciseError`` naming the argument or value, what was expected and a hint, in the chosen language;
an answer not given yet (``raise NotImplementedError()``, as the student notebooks have it) says so."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import nbformat
import numpy as np
import pytest
from shell import ipython_shell

import trackerlab as tl
from trackerlab import ExerciseError


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


def _out_size(n, kernel, stride=1, padding=0, dilation=1):
    return (n + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def test_output_size(capsys):
    tl.exercises.check_output_size(_out_size)
    assert "out_size: right on 8 cases" in capsys.readouterr().out
    no_dilation = lambda n, kernel, stride, padding, dilation: (n + 2 * padding - kernel) // stride + 1
    with pytest.raises(ExerciseError, match=r"dilation=2\) returned 8; tl.conv gives 6 positions") as error:
        tl.exercises.check_output_size(no_dilation)
    assert "dilation·(kernel − 1) + 1 pixels" in str(error.value)
    rounded_up = lambda n, kernel, stride, padding, dilation: -(-(n + 2 * padding - kernel) // stride) + 1
    with pytest.raises(ExerciseError, match=r"out_size\(n=7, kernel=2, stride=2, padding=0, dilation=1\) returned 4"):
        tl.exercises.check_output_size(rounded_up)


def _padded_conv(before, after):
    """A convolution that pads by hand: ``before(k)`` and ``after(k)`` zeros for a k×k filter."""

    def same_conv(x, w, b):
        k = w.shape[-1]
        widths = (before(k), after(k))
        return tl.conv(np.pad(x, ((0, 0), (0, 0), widths, widths)), w, b)

    return same_conv


def test_same_conv(capsys):
    tl.exercises.check_same_conv(_padded_conv(lambda k: k // 2, lambda k: k // 2))
    tl.exercises.check_same_conv(lambda x, w, b: tl.conv(tl.param(x), w, b, padding=w.shape[-1] // 2))
    assert capsys.readouterr().out.count('same_conv: the output of tl.conv with padding="same"') == 2
    with pytest.raises(
        ExerciseError, match=r"3×3 filters: the output differs .* shifted by \(-1, -1\) pixels"
    ) as error:
        tl.exercises.check_same_conv(_padded_conv(lambda k: 0, lambda k: k - 1))  # every zero after the image
    assert "(k − 1) / 2 zeros on every side" in str(error.value)
    with pytest.raises(
        ExerciseError, match=r"5×5 filters: the output has shape \(2, 4, 6, 6\); expected \(2, 4, 8, 8\)"
    ):
        tl.exercises.check_same_conv(_padded_conv(lambda k: 1, lambda k: 1))  # right for 3×3 only
    with pytest.raises(ExerciseError, match=r"3×3 filters: the output differs .* by up to [0-9.]+\.\n"):
        tl.exercises.check_same_conv(lambda x, w, b: 1.01 * tl.conv(x, w, b, padding="same"))  # no shift explains it
    tl.set_language("ja")
    with pytest.raises(ExerciseError, match="ヒント:"):
        tl.exercises.check_same_conv(_padded_conv(lambda k: 0, lambda k: k - 1))
    with pytest.raises(ExerciseError, match="まだ解答がない"):
        tl.exercises.check_output_size(lambda *args: (_ for _ in ()).throw(NotImplementedError()))


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


# ---------------------------------------------------------------- the exercises in the tutorials

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
TUTORIALS = sorted(p for p in NOTEBOOKS.glob("*.ipynb") if re.match(r"^\d\d_[a-z0-9_]+\.(en|ja|zh)\.ipynb$", p.name))
_spec = importlib.util.spec_from_file_location("student_notebooks", ROOT / "scripts" / "student_notebooks.py")
student = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(student)

# A wrong answer for each exercise (by the id of its answer cell): its check must fail.
WRONG = {
    "exercise-01-1-answer": "    return tl.data(x) ** 3, lambda Δ: (Δ * 3 * tl.data(x) ** 2,)",  # no second derivative
    "exercise-01-2-answer": "    return tl.data(a) / tl.data(b), lambda Δ: (Δ / b, Δ * a / b**2)",  # a sign
    "exercise-01-3-answer": "predicted = (30.0, 20.0)",
    "exercise-02-1-answer": 'predicted_ref = {"a": 2, "b": 1, "c": 2, "d": 1, "e": 0}',  # c * c counted once
    "exercise-02-2-answer": 'predicted_order = ["e", "c", "d", "a", "b"]',
    "exercise-03-1-answer": "    return [(step.node, step.delta) for step in tl.backprop_steps(output)][::-1]",
    "exercise-03-2-answer": "predicted_trips = (32, 6)",
    "exercise-04-1-answer": "    return len(losses), int(np.argmin(losses)) + 1",  # no stopping
    "exercise-04-2-answer": "accuracy_from_confusion = np.trace(confusion) / len(confusion)",
    "exercise-05-1-answer": 'culprit = "matmul"',
    "exercise-05-2-answer": "    return np.log1p(np.exp(x)), lambda Δ: (-Δ / (1 + np.exp(-x)),)",
    "exercise-06-1-answer": "per_block = [tl.gradient(lambda: block_loss(i), params) for i in range(X.numblocks[0])]\n"
    "grad_w = sum(grads[w] for grads in per_block)",  # the sum, not the mean
    "exercise-06-2-answer": "predicted_computes = (1, 1)",
    "exercise-07-1-answer": "    return (n + 2 * padding - kernel) // stride + 1",  # no dilation
    "exercise-07-2-answer": "    return meanpool2(tl.data(x)), lambda Δ: (tl.repeat(tl.repeat(Δ, 2, axis=2), 2, axis=3),)",
    "exercise-07-3-answer": "    padded = np.pad(x, ((0, 0), (0, 0), (0, k - 1), (0, k - 1)))",  # the planted bug again
}


def _exercises(nb):
    """(answer cell, check cell) pairs of a notebook."""
    cells = nb.cells
    pairs = []
    for i, cell in enumerate(cells):
        if "exercise" in cell.metadata.get("tags", []):
            check = cells[i + 1]
            assert "exercise-check" in check.metadata.get("tags", []), f"{cell.id}: no check cell after it"
            pairs.append((cell, check))
    return pairs


@pytest.mark.parametrize("path", TUTORIALS, ids=[p.name for p in TUTORIALS])
def test_every_tutorial_has_exercises_with_checks(path):
    nb = nbformat.read(path, as_version=4)
    pairs = _exercises(nb)
    assert 2 <= len(pairs) <= 3, f"{path.name}: {len(pairs)} exercises"
    for answer, check in pairs:
        assert answer.source.count("### BEGIN SOLUTION") == 1 == answer.source.count("### END SOLUTION"), answer.id
        assert answer.metadata["nbgrader"]["solution"] and check.metadata["nbgrader"]["locked"], answer.id
        assert "tl.exercises.check_" in check.source, check.id
        assert answer.id in WRONG, f"{answer.id}: give it a wrong answer in WRONG"


def test_the_student_version_has_no_answers(tmp_path):
    assert student.strip_solutions("def f(x):\n    ### BEGIN SOLUTION\n    return x\n    ### END SOLUTION\n") == (
        "def f(x):\n    # YOUR CODE HERE\n    raise NotImplementedError()\n"
    )
    with pytest.raises(ValueError, match="unpaired"):
        student.strip_solutions("### BEGIN SOLUTION\nx = 1\n")
    assert student.main([str(tmp_path), *map(str, TUTORIALS)]) == 0
    for path in TUTORIALS:
        reference, book = nbformat.read(path, as_version=4), nbformat.read(tmp_path / path.name, as_version=4)
        assert [c.id for c in book.cells] == [c.id for c in reference.cells]
        for cell, ref in zip(book.cells, reference.cells):
            assert cell.cell_type == "markdown" or ("SOLUTION" not in cell.source and cell.outputs == [])
            if "exercise" in cell.metadata.get("tags", []):
                assert "raise NotImplementedError()" in cell.source and cell.source != ref.source
            else:
                assert cell.source == ref.source


def _replace_answer(source: str, answer: str) -> str:
    return student.REGION.sub(lambda m: answer, source)


@pytest.mark.slow
@pytest.mark.parametrize("path", [p for p in TUTORIALS if ".en." in p.name], ids=lambda p: p.name[:2])
def test_each_check_fails_on_a_wrong_answer_and_on_none_and_passes_on_the_reference(path, monkeypatch):
    """The notebook runs in an IPython shell up to its exercises; then each exercise is answered wrongly (its
    check must raise ExerciseError), not at all (the student version), and with the reference answer."""
    monkeypatch.chdir(NOTEBOOKS)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    shell = ipython_shell()  # the tests' one shell, its namespace emptied before and after the notebook
    shell.reset(new_session=False)
    try:
        nb = nbformat.read(path, as_version=4)
        pairs = _exercises(nb)
        first = nb.cells.index(pairs[0][0])
        for cell in nb.cells[:first]:
            if cell.cell_type == "code":
                source = cell.source.replace("%matplotlib inline", "")
                assert shell.run_cell(source, silent=True).success, f"{path.name}: {cell.id} failed"

        def run(source):
            result = shell.run_cell(source, silent=True)
            return result.error_in_exec

        for answer, check in pairs:
            assert run(_replace_answer(answer.source, WRONG[answer.id])) is None, answer.id
            assert isinstance(run(check.source), ExerciseError), f"{answer.id}: a wrong answer passed its check"
            stub = student.strip_solutions(answer.source)
            error = run(stub) or run(check.source)
            assert isinstance(error, NotImplementedError | ExerciseError), f"{answer.id}: no answer, yet {error!r}"
            assert run(answer.source) is None, answer.id
            assert run(check.source) is None, f"{answer.id}: the reference answer fails its check"
            for cell in nb.cells[nb.cells.index(check) + 1 :]:  # what follows the check, up to the next exercise
                if cell in (a for a, _ in pairs):
                    break
                if cell.cell_type == "code":
                    assert run(cell.source) is None, cell.id
    finally:
        shell.reset(new_session=False)
