"""``tl.detect_anomaly``: the first NaN or Inf of the backward pass raises, naming the operation whose
pullback made it, the argument, and the line of the test that recorded it; per thread, re-entrant, and
free outside the mode. ``%%track --anomaly`` in IPython's test shell."""

import inspect
import sys
import threading
import warnings

import numpy as np
import pytest
from IPython.utils.capture import capture_output
from shell import ipython_shell

import trackerlab as tl
from trackerlab import AnomalyError
from trackerlab.anomaly import _WHERE, recorded_at
from trackerlab.core.recording import ANOMALY

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy warns at the division by 0


def here() -> int:
    """The line number of the caller's next line (where the operation under test is recorded)."""
    return sys._getframe(1).f_lineno + 1


def source_of(line: int) -> str:
    return open(__file__).read().splitlines()[line - 1].strip()


def test_a_nan_that_appears_names_the_op_the_argument_and_the_line():
    with tl.detect_anomaly():
        x = tl.param([1.0, 0.0])
        line = here()
        s = tl.sqrt(x)
        y = tl.sum(s * 3.0)
        with pytest.raises(AnomalyError) as caught:
            tl.back_(y)
    error = caught.value
    assert isinstance(error, FloatingPointError)
    assert (error.node, error.op, error.argument) == (s.tracker, "sqrt", 0)
    assert error.where == (__file__, line, "test_a_nan_that_appears_names_the_op_the_argument_and_the_line")
    message = str(error)
    assert message.startswith("detect_anomaly: the pullback of sqrt sent Inf (1 of 2 elements) to argument 1")
    assert "from a finite incoming sensitivity" in message
    assert f"{__file__}:{line}" in message and "s = tl.sqrt(x)" in message
    assert "its inputs and result were finite in the forward pass" in message
    assert x.grad.tolist() == [0.0, 0.0]  # nothing accumulated: the walk stopped before the leaves


def test_a_nan_from_upstream_is_attributed_where_it_appeared():
    with tl.detect_anomaly():
        x = tl.param([0.0, 1.0])
        s = tl.sqrt(x)  # its pullback would make inf too, from what log sends
        line = here()
        l = tl.log(s)
        y = tl.sum(l * 0.5)
        with pytest.raises(AnomalyError) as caught:
            tl.back_(y)
    assert caught.value.op == "log" and caught.value.node is l.tracker and caught.value.where[1] == line
    assert "its inputs were finite, but its forward result already held Inf (1 of 2 elements)" in str(caught.value)


def test_outside_the_mode_nothing_is_recorded_or_checked():
    assert ANOMALY.active == 0
    before = len(_WHERE)
    x = tl.param([1.0, 0.0])
    y = tl.sum(tl.sqrt(x))
    tl.back_(y)  # today's behaviour: inf in the grad, no error
    assert np.isinf(x.grad[1])
    # nothing of this tape is recorded (entries of earlier tests' tapes may be collected meanwhile)
    tape = [y.tracker, y.tracker.f.args[0], x.tracker]
    assert all(node not in _WHERE for node in tape) and recorded_at(y) == ()
    assert len(_WHERE) <= before


def test_a_nan_in_the_forward_pass_is_said_to_come_from_there():
    with tl.detect_anomaly():
        x = tl.param([np.nan, 2.0])
        y = tl.sum(x * x)
        with pytest.raises(AnomalyError) as caught:
            tl.back_(y)
    assert caught.value.op == "multiply" and caught.value.argument in (0, 1)
    assert "argument 1 of multiply already held NaN (1 of 2 elements) in the forward pass" in str(caught.value)


def test_a_nan_in_the_seed_is_caught():
    with tl.detect_anomaly():
        x = tl.param([1.0, 2.0])
        line = here()
        y = tl.sin(x)
        with pytest.raises(AnomalyError, match=r"the seed Δ of the backward pass holds NaN \(1 of 2 elements\)") as e:
            tl.back_(y, [1.0, np.nan])
        with pytest.raises(AnomalyError, match="seed Δ of the backward pass holds inf"):
            tl.back_(tl.sum(y), np.inf)
    assert e.value.node is y.tracker and e.value.argument is None and e.value.where[1] == line


def test_finite_sensitivities_that_overflow_when_added_are_caught():
    with tl.detect_anomaly():
        a = tl.param(1.0)
        y = a * 1.5e308 + a * 1.5e308  # each pullback sends 1.5e308; their sum is inf
        with pytest.raises(AnomalyError, match="add up to inf, though each one was finite") as caught:
            tl.back_(y)
    assert caught.value.node is a.tracker and caught.value.op == "param"


def test_a_custom_rule_whose_pullback_makes_a_nan_is_named():
    def safe_log(x):
        return tl.track(safe_log, x) if tl.istracked(x) else np.log(np.maximum(x, 1e-12))

    @tl.grad_rule(safe_log)
    def _(x):
        d = tl.data(x)
        return np.log(np.maximum(d, 1e-12)), lambda Δ: (Δ / d,)  # inf at 0: the forward was made safe, not this

    with tl.detect_anomaly():
        x = tl.param([0.0, 1.0])
        y = tl.sum(safe_log(x))
        with pytest.raises(AnomalyError) as caught:
            tl.back_(y)
    inner = inspect.getsourcelines(safe_log)[1] + 1
    assert caught.value.op == "safe_log" and caught.value.where[1] == inner
    assert caught.value.stack[1][1] == inner + 9  # then the line that called safe_log


def test_the_forward_recorded_outside_the_mode_says_its_line_is_unknown():
    x = tl.param([0.0])
    y = tl.sum(tl.sqrt(x))
    with tl.detect_anomaly(), pytest.raises(AnomalyError, match="outside detect_anomaly, so its line is unknown"):
        tl.back_(y)


def test_gradient_forward_and_checkpoint_are_checked_too():
    with tl.detect_anomaly():
        with pytest.raises(AnomalyError, match="pullback of sqrt"):
            tl.gradient(lambda x: tl.sum(tl.sqrt(x)), np.array([0.0, 1.0]))
        y, back = tl.forward(lambda x: tl.sqrt(x), np.array([4.0, 0.0]))
        with pytest.raises(AnomalyError, match="pullback of sqrt"):
            back([1.0, 1.0])
        x = tl.param([0.0, 1.0])
        line = here()
        y = tl.checkpoint(lambda t: tl.sum(tl.sqrt(t)), x)
        with pytest.raises(AnomalyError, match="pullback of sqrt") as caught:
            tl.back_(y)
    assert caught.value.where[1] == line  # the replay's sqrt, recorded inside the lambda on that line


def test_the_stepper_walk_is_checked():
    with tl.detect_anomaly():
        x = tl.param([0.0])
        y = tl.sum(tl.sqrt(x))
        with pytest.raises(AnomalyError, match="pullback of sqrt"):
            list(tl.backprop_steps(y))


def test_the_mode_is_re_entrant_and_a_decorator():
    mode = tl.detect_anomaly()
    with mode:
        with mode:
            assert ANOMALY.active == 1
        assert ANOMALY.active == 1  # still on after the inner exit
        x = tl.param([0.0])
        y = tl.sum(tl.sqrt(x))
    assert ANOMALY.active == 0
    tl.back_(y)  # off again: no error

    @tl.detect_anomaly()
    def train(x):
        tl.back_(tl.sum(tl.log(x)))

    with pytest.raises(AnomalyError, match="pullback of log"):
        train(tl.param([0.0]))
    assert ANOMALY.active == 0


def test_the_mode_is_per_thread():
    inside, outside = threading.Event(), threading.Event()
    results = {}

    def other():
        inside.wait()  # the main thread is in the mode now
        x = tl.param([0.0])
        y = tl.sum(tl.sqrt(x))
        tl.back_(y)  # not in the mode here: no error, no location
        results["grad"] = x.grad[0]
        results["where"] = recorded_at(y)
        outside.set()

    thread = threading.Thread(target=other)
    thread.start()
    with tl.detect_anomaly():
        inside.set()
        outside.wait(30)
        x = tl.param([0.0])
        y = tl.sum(tl.sqrt(x))
        with pytest.raises(AnomalyError):
            tl.back_(y)
    thread.join(30)
    assert np.isinf(results["grad"]) and results["where"] == ()
    assert ANOMALY.active == 0


def test_nested_walks_with_tracked_sensitivities_are_checked():
    with tl.detect_anomaly(), pytest.raises(AnomalyError, match="pullback of"):
        tl.gradient(lambda x: tl.gradient(lambda t: tl.sum(t * tl.sqrt(t)), x)[0].sum(), np.array([0.0, 1.0]))


def test_no_false_alarm_on_a_finite_tape():
    with tl.detect_anomaly():
        x = tl.param(np.linspace(0.1, 2, 5))
        y = tl.sum(tl.log(x) * tl.sqrt(x) + tl.tanh(x) ** 2)
        tl.back_(y)
    expected = (1 / x.data) * np.sqrt(x.data) + np.log(x.data) / (2 * np.sqrt(x.data))
    expected += 2 * np.tanh(x.data) * (1 - np.tanh(x.data) ** 2)
    np.testing.assert_allclose(x.grad, expected)


# ---------------------------------------------------------------- %%track --anomaly


@pytest.fixture
def ip():
    shell = ipython_shell()
    shell.user_ns.update({"a": [1.0, 0.0], "tl": tl})
    yield shell
    for name in ("a", "s", "y", "tl"):
        shell.user_ns.pop(name, None)


def test_track_anomaly_names_the_cell_line(ip):
    with capture_output():
        result = ip.run_cell("%%track -p a --back y --anomaly\nz = 2 * a\ns = tl.sqrt(a)\ny = tl.sum(s)")
    error = result.error_in_exec
    assert isinstance(error, AnomalyError) and error.op == "sqrt"
    assert error.where[1] == 3  # the magic's line is line 1 of the cell
    assert "s = tl.sqrt(a)" in str(error)
    assert len(error.stack) == 1  # the cell; IPython's own frames beyond it are not the user's code
    assert ANOMALY.active == 0


def test_track_without_anomaly_does_not_raise(ip):
    with capture_output():
        result = ip.run_cell("%%track -p a --back y --no-graph\ns = tl.sqrt(a)\ny = tl.sum(s)")
    assert result.success and np.isinf(tl.grad(ip.user_ns["a"])[1])


def test_a_node_built_by_hand_is_located_too():
    def double(v):
        return 2 * v

    double.rule = (lambda g, ans, v: g * np.nan,)  # a rule that makes a NaN from anything
    with tl.detect_anomaly():
        x = tl.param([1.0])
        line = here()
        node = tl.Tracked(tl.Call(double, x), 2 * tl.data(x))
        y = tl.sum(node.value())
        with pytest.raises(AnomalyError) as caught:
            tl.back_(y)
    assert caught.value.op == "double" and caught.value.where[1] == line


def test_a_notebook_cell_is_named_as_ipython_names_it(ip):
    """A cell's file is a temporary one named after the kernel's process: the error says "Cell In[n]"."""
    with capture_output():
        count = ip.execution_count  # the number of the next cell run with its history stored
        ip.run_cell("def root(v):\n    return tl.sqrt(v)", store_history=True)
        result = ip.run_cell(
            "with tl.detect_anomaly():\n    x = tl.param(a)\n    tl.back_(tl.sum(root(x)))", store_history=True
        )
    error = result.error_in_exec
    assert isinstance(error, AnomalyError) and error.op == "sqrt"
    message = str(error)
    assert f"the operation was recorded at Cell In[{count}], line 2, in root\n      return tl.sqrt(v)" in message
    assert f"called from Cell In[{count + 1}], line 3, in <module>" in message
    assert error.where[0] not in message  # the file name stays in .where, as data


def test_check_tape_names_a_cell_as_ipython_does(ip):
    with capture_output():
        count = ip.execution_count
        rule = "def bad(v):\n    return tl.track(bad, v)\n\n@tl.grad_rule(bad)\ndef _(v):\n    return 2 * tl.data(v), lambda d: (3 * d,)"
        ip.run_cell(rule, store_history=True)
        ip.run_cell("with tl.detect_anomaly():\n    r = tl.check_tape(bad(tl.param([1.0, 2.0])))", store_history=True)
    [note] = [e.note for e in ip.user_ns.pop("r").entries if e.bad]
    assert f"recorded at Cell In[{count}], line 2 in bad, called from Cell In[{count + 1}], line 2 in <module>" in note


def test_a_file_outside_ipython_is_named_by_its_path():
    from trackerlab.anomaly import _place

    assert _place("train.py", 7) == "train.py:7"


# ---------------------------------------------------------------- warnings in the mode


def test_the_mode_reports_a_bad_pullback_by_its_error_alone():
    """The pullback of sqrt at 0 divides by 0: the AnomalyError says so, and NumPy's warning, which would point
    into trackerlab's rules, is not shown."""
    with warnings.catch_warnings(record=True) as caught, tl.detect_anomaly():
        warnings.simplefilter("always")
        x = tl.param([1.0, 0.0])
        y = tl.sum(tl.sqrt(x) / tl.param([2.0, 0.5]))
        with pytest.raises(AnomalyError):
            tl.back_(y)
    assert [str(w.message) for w in caught] == []


def test_outside_the_mode_numpy_warns_as_it_does():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        x = tl.param([1.0, 0.0])
        tl.back_(tl.sum(tl.sqrt(x)))
    assert [str(w.message) for w in caught] == ["divide by zero encountered in divide"]


def test_a_forward_warning_in_the_mode_points_at_the_users_line():
    """A log of 0 in the forward pass warns at the line that computed it, not inside trackerlab: the mode checks
    the backward pass only, which may never reach it."""
    with warnings.catch_warnings(record=True) as caught, tl.detect_anomaly():
        warnings.simplefilter("always")
        x = tl.param([1.0, 0.0])
        line = here()
        tl.log(x)
        operator_line = here()
        x / tl.param([2.0, 0.0])
        plain_line = here()
        np.log(np.array([0.0]))  # your own NumPy call on plain values: said at your line too
    assert [(str(w.message), w.filename, w.lineno, w.category) for w in caught] == [
        ("divide by zero encountered in log", __file__, line, RuntimeWarning),
        ("invalid value encountered in divide", __file__, operator_line, RuntimeWarning),  # 0 / 0
        ("divide by zero encountered", __file__, plain_line, RuntimeWarning),
    ]


def test_the_mode_leaves_numpys_error_state_as_it_was():
    before = np.geterr(), np.geterrcall()
    with tl.detect_anomaly(), tl.detect_anomaly():
        pass
    assert (np.geterr(), np.geterrcall()) == before
    with np.errstate(all="raise"), tl.detect_anomaly():  # the user's setting holds in the block
        with pytest.raises(FloatingPointError):
            tl.log(tl.param([0.0]))
    handled = []
    with np.errstate(divide="call", call=lambda kind, flag: handled.append(kind)), tl.detect_anomaly():
        tl.log(tl.param([0.0]))  # a handler of the user's own stays
    assert handled == ["divide by zero"]


def test_track_anomaly_shows_one_error_and_no_warning(ip):
    with warnings.catch_warnings(record=True) as caught, capture_output() as shown:
        warnings.simplefilter("always")
        result = ip.run_cell("%%track -p a --back y --anomaly\ns = tl.sqrt(a)\ny = tl.sum(s / 2)")
    assert isinstance(result.error_in_exec, AnomalyError)
    assert [str(w.message) for w in caught] == [] and "Warning" not in shown.stderr + shown.stdout
