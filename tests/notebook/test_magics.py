"""The ``%%track`` and ``%tape`` magics in IPython's test shell, with rich display types enabled."""

from __future__ import annotations

import numpy as np
import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output
from markup import picture
from shell import ipython_shell

import trackerlab as tl

RICH = ["text/plain", "text/html", "image/svg+xml", "image/png", "application/vnd.jupyter.widget-view+json"]


@pytest.fixture
def ip():
    shell = ipython_shell()
    shell.display_formatter.active_types = RICH
    shell.user_ns.update({"a": 2.0, "b": 3.0, "tl": tl})
    yield shell
    for name in ("a", "b", "c", "y", "w", "q", "z", "loss", "before", "after", "h", "tl"):
        shell.user_ns.pop(name, None)


def run(ip, source):
    with capture_output() as captured:
        result = ip.run_cell(source)
    return result, captured


def svgs(captured) -> list[str]:
    return [out.data["image/svg+xml"] for out in captured.outputs if "image/svg+xml" in out.data]


def test_track_makes_params_runs_the_cell_and_draws_its_tape(ip):
    result, captured = run(ip, "%%track -p a b\nc = a * b\ny = c + a\ny")
    assert result.success
    ns = ip.user_ns
    assert tl.isleaf(ns["a"]) and tl.isleaf(ns["b"])
    assert tl.data(ns["y"]) == 8.0
    assert str(result.result) == "8.0 (tracked)"  # the cell's value, as a cell gives it
    [drawing] = svgs(captured)
    for label in ("a = param", "b = param", "c = multiply", "y = add"):
        assert f">{label}<" in drawing
    # in HTML the same drawing is a picture, which untrusted notebooks keep (they drop inline <svg>)
    [html] = [out.data["text/html"] for out in captured.outputs if "image/svg+xml" in out.data]
    assert picture(html) == drawing[drawing.index("<svg") :] and "<svg" not in html.replace("%3Csvg", "")
    assert tl.grad(ns["a"]) == 0.0  # no --back, no gradients


def test_track_back_accumulates_and_draws_grads(ip):
    result, captured = run(ip, "%%track -p a b --back y\nc = a * b\ny = c + a")
    assert result.success and result.result is None
    assert (tl.grad(ip.user_ns["a"]), tl.grad(ip.user_ns["b"])) == (4.0, 2.0)
    [drawing] = svgs(captured)
    assert ">grad 4<" in drawing and ">grad 2<" in drawing


def test_track_step_shows_the_stepper(ip):
    import ipywidgets

    result, captured = run(ip, "%%track -p a b --back y --step\nc = a * b\ny = c + a")
    assert result.success
    assert not svgs(captured)
    [view] = [o.data["application/vnd.jupyter.widget-view+json"] for o in captured.outputs if o.data.get(RICH[-1])]
    stepper = ipywidgets.widgets.widget._instances[view["model_id"]]
    assert isinstance(stepper, tl.BackpropStepper)
    assert [s["node"] for s in stepper.steps] == ["y", "c", "a", "b"]
    assert stepper.steps[-1]["grads"] == {"a": 4.0, "b": 2.0}


def test_track_no_graph_draws_nothing(ip):
    result, captured = run(ip, "%%track -p a --no-graph\ny = a * a")
    assert result.success and not captured.outputs
    assert tl.data(ip.user_ns["y"]) == 4.0


def test_magics_inside_the_cell_work(ip):
    result, captured = run(ip, "%%track -p a\n%time w = a * 3\nw")
    assert result.success
    assert str(result.result) == "6.0 (tracked)"
    assert "Wall time" in captured.stdout
    assert len(svgs(captured)) == 1


def test_an_exception_gives_a_normal_traceback_and_a_failed_cell(ip):
    source = "%%track -p a\nbefore = a * 2\nq = 1 / 0\nafter = 1"
    result, captured = run(ip, source)
    assert not result.success
    assert isinstance(result.error_in_exec, ZeroDivisionError)
    assert "before" in ip.user_ns and "after" not in ip.user_ns  # as plain Python leaves it
    assert "----> 3 q = 1 / 0" in captured.stdout
    assert "magics.py" not in captured.stdout
    assert not svgs(captured)


def test_a_syntax_error_is_shown_as_a_cell_shows_it(ip):
    result, captured = run(ip, "%%track -p a\nbefore = 1\ny = (2 +\n")
    assert not result.success
    assert isinstance(result.error_in_exec, UsageError)
    assert "line 3" in captured.stdout and "SyntaxError: '(' was never closed" in captured.stdout
    assert "%%track: the cell was not run (syntax error above)" in captured.stdout + captured.stderr
    assert "before" not in ip.user_ns
    assert "magics.py" not in captured.stdout


def test_the_drawing_labels_values_by_the_cells_names_only(ip):
    ip.user_ns["h"] = tl.param(5.0)
    result, captured = run(ip, "%%track -p a\nz = a * 2\nloss = z + a")
    assert result.success
    [drawing] = svgs(captured)
    assert ">z = multiply<" in drawing and ">loss = add<" in drawing and ">a = param<" in drawing
    assert ">h = " not in drawing


def test_independent_results_are_drawn_each(ip):
    result, captured = run(ip, "%%track -p a b\nz = a * 2\nc = z + 1\ny = b * b")
    assert result.success
    drawings = svgs(captured)
    assert len(drawings) == 2
    assert ">c = add<" in drawings[0] and ">y = multiply<" in drawings[1]


def test_bad_options_are_usage_errors_naming_the_option(ip):
    with pytest.raises(UsageError, match="unrecognized arguments: --bogus"):
        ip.run_cell_magic("track", "--bogus", "y = 1")
    with pytest.raises(UsageError, match=r"%%track -p: no variable named 'nothere' in the namespace"):
        ip.run_cell_magic("track", "-p a nothere", "y = 1")
    assert not tl.istracked(ip.user_ns["a"])  # nothing was changed
    ip.user_ns["q"] = "text"
    with pytest.raises(UsageError, match=r"%%track -p: cannot make q a param: "):
        ip.run_cell_magic("track", "-p a q", "y = 1")
    assert not tl.istracked(ip.user_ns["a"])
    with pytest.raises(UsageError, match=r"%%track --step needs --back NAME"):
        ip.run_cell_magic("track", "--step", "y = 1")
    with pytest.raises(UsageError, match=r"%%track --back: no variable named 'loss'"):
        ip.run_cell_magic("track", "-p a --back loss", "y = a * 2")
    with pytest.raises(UsageError, match=r"%%track --back: y is not tracked \(it is a float\)"):
        ip.run_cell_magic("track", "--back y", "y = 1.5")
    with pytest.raises(UsageError, match=r"%%track --back y: back_: y has shape \(2,\); pass a sensitivity Δ"):
        ip.run_cell_magic("track", "--back y", "y = tl.param([1.0, 2.0]) * 2")


def test_track_help_lists_the_options(ip):
    doc = ip.find_cell_magic("track").__doc__
    for option in ("-p NAME", "--back NAME", "--step", "--no-graph"):
        assert option in doc
    with capture_output() as captured:
        ip.run_cell("%%track?")
    assert "--no-graph" in captured.stdout and "make these variables params first" in captured.stdout


def test_tape_draws_a_value_with_the_namespace_names(ip):
    run(ip, "%%track -p a b --no-graph\nc = a * b\ny = c + a")
    with capture_output() as captured:
        ip.run_line_magic("tape", "y")
    [drawing] = svgs(captured)
    for label in ("a = param", "b = param", "c = multiply", "y = add"):
        assert f">{label}<" in drawing
    with pytest.raises(UsageError, match=r"%tape: no variable named 'nothere'"):
        ip.run_line_magic("tape", "nothere")
    ip.user_ns["q"] = 1.0
    with pytest.raises(UsageError, match=r"%tape: q is not tracked"):
        ip.run_line_magic("tape", "q")
    with pytest.raises(UsageError, match="the following arguments are required: name"):
        ip.run_line_magic("tape", "")


def test_an_exception_names_the_cells_own_number_and_hides_the_magic_and_trackerlab(ip):
    ip.run_cell("1 + 1", store_history=True)  # IPython counts the next cell while one runs
    with capture_output() as captured:
        result = ip.run_cell(
            "%%track\nx = tl.param([1.0, 2.0])\ny = tl.matmul(x, tl.param([[1.0, 2.0, 3.0]]))", store_history=True
        )
    assert isinstance(result.error_in_exec, ValueError)
    out = captured.stdout
    assert f"Cell In[{result.execution_count}], line 3" in out
    assert f"Cell In[{result.execution_count + 1}]" not in out
    assert "----> 3 y = tl.matmul(x, tl.param([[1.0, 2.0, 3.0]]))" in out
    assert "matmul:" in out and "(operand shapes (2,), (1, 3))" in out
    for hidden in ("run_cell_magic", "skipping hidden", "magics.py", "trackerlab/", "trackerlab\\"):
        assert hidden not in out, hidden


def test_an_exception_keeps_the_users_own_functions_called_by_trackerlab(ip):
    ip.run_cell("def f(v):\n    return v + 1 / 0")
    result, captured = run(ip, "%%track\nz = tl.gradient(lambda v: f(v), 2.0)")
    assert isinstance(result.error_in_exec, ZeroDivisionError)
    out = captured.stdout
    assert f"Cell In[{ip.execution_count}], line 2" in out
    assert "in f(v)" in out and "----> 2     return v + 1 / 0" in out
    assert "walk.py" not in out and "api.py" not in out
    ip.user_ns.pop("f")


def test_track_on_plain_numbers_says_why_nothing_is_drawn_and_what_to_write(ip):
    result, captured = run(ip, "%%track\nc = a * b\ny = c + a")
    assert result.success and not svgs(captured)
    assert captured.stdout.strip() == (
        "%%track: nothing to draw: the cell made no tracked values, and plain numbers record no tape. "
        "Make the inputs params first, for example: %%track -p a b"
    )
    result, captured = run(ip, "%%track\nw = 2.0 * 3.0")
    assert captured.stdout.strip().endswith("for example: x = tl.param(2.0)")
    result, captured = run(ip, "%%track -p a b\nc = a * b")  # tracked: drawn, no note
    assert len(svgs(captured)) == 1 and "nothing to draw" not in captured.stdout


def test_the_magics_messages_follow_the_language(ip):
    tl.set_language("ja")
    try:
        _result, captured = run(ip, "%%track\nc = a * b")
        assert "描くものがありません" in captured.stdout and "%%track -p a b" in captured.stdout
        with pytest.raises(UsageError, match="名前空間に変数 'nope' がありません"):
            ip.run_cell_magic("track", "-p nope", "c = 1")
    finally:
        tl.set_language("en")


# ----------------------------------------------------------------------------------------------------
# ``%%track -p`` on a variable that is already a parameter: the values earlier cells computed from it still send their
# gradients to the variable.
# ----------------------------------------------------------------------------------------------------


@pytest.fixture
def ip_params():
    shell = ipython_shell()
    rng = np.random.default_rng(4)
    shell.user_ns.update({"W": rng.normal(size=(2, 3)), "x": rng.normal(size=3), "tl": tl, "np": np})
    yield shell
    for name in ("W", "x", "h", "loss", "z", "tl", "np"):
        shell.user_ns.pop(name, None)


def run_params(ip_params, source):
    with capture_output():
        result = ip_params.run_cell(source)
    assert result.success, result.error_in_exec
    return result


def test_a_param_made_again_keeps_the_values_earlier_cells_computed_from_it(ip_params):
    W0, x0 = ip_params.user_ns["W"].copy(), ip_params.user_ns["x"].copy()
    run_params(ip_params, "%%track -p W x\nh = tl.tanh(W @ x)")
    W = ip_params.user_ns["W"]
    run_params(ip_params, "%%track -p W --back z\nz = tl.sum(h * np.array([1.0, -2.0]))")
    assert ip_params.user_ns["W"] is W
    t = np.tanh(W0 @ x0)
    np.testing.assert_allclose(tl.grad(ip_params.user_ns["W"]), np.outer((1 - t * t) * [1.0, -2.0], x0), rtol=1e-12)


def test_running_a_cell_again_gives_its_gradients_once(ip_params):
    W0, x0 = ip_params.user_ns["W"].copy(), ip_params.user_ns["x"].copy()
    cell = "%%track -p W x --back loss\nh = tl.tanh(W @ x)\nloss = tl.sum(h * h * np.array([1.0, -2.0]))"
    t = np.tanh(W0 @ x0)
    gh = 2 * t * (1 - t * t) * np.array([1.0, -2.0])
    for _ in range(2):
        run_params(ip_params, cell)
        np.testing.assert_allclose(tl.grad(ip_params.user_ns["W"]), np.outer(gh, x0), rtol=1e-12)
        np.testing.assert_allclose(tl.grad(ip_params.user_ns["x"]), W0.T @ gh, rtol=1e-12)


# ----------------------------------------------------------------------------------------------------
# ``%%track --back``'s own errors after the cell (a parameter changed after use, a failing hook) are shown as a cell's
# errors are: the error and the user's own frames, not the magic's, IPython's or trackerlab's.
# ----------------------------------------------------------------------------------------------------


@pytest.fixture
def ip_back():
    shell = ipython_shell()
    shell.user_ns.update({"a": 2.0, "tl": tl})
    yield shell
    for name in ("a", "y", "tl"):
        shell.user_ns.pop(name, None)


def run_back(ip_back, source):
    with capture_output() as captured:
        result = ip_back.run_cell(source)
    return result, captured.stdout


def test_a_parameter_changed_in_the_cell_is_refused_by_back_with_the_error_alone(ip_back):
    result, out = run_back(ip_back, "%%track -p a --back y\ny = a * 3\ntl.update_(a, 1.0)")
    assert isinstance(result.error_in_exec, RuntimeError)
    assert "multiply: argument 1 (a parameter of shape ()) changed after multiply was recorded" in out
    for internal in ("walk.py", "validation.py", "magics.py", "api.py", "interactiveshell.py"):
        assert internal not in out, internal
    assert tl.grad(ip_back.user_ns["a"]) == 0.0  # nothing accumulated


def test_a_failing_hook_keeps_the_users_own_line(ip_back):
    result, out = run_back(ip_back, "%%track -p a --back y\ny = tl.hook(lambda g: 1 / 0, a) * 3")
    assert isinstance(result.error_in_exec, ZeroDivisionError)
    assert "y = tl.hook(lambda g: 1 / 0, a) * 3" in out  # the hook's line, in the cell
    tail = out[out.index("The above exception was the direct cause") :]
    assert "hook: the backward pass failed: ZeroDivisionError: division by zero" in tail
    for internal in ("walk.py", "magics.py", "api.py", "interactiveshell.py"):
        assert internal not in tail, internal
