"""``%%track --back``'s own errors after the cell (a parameter changed after use, a failing hook) are shown as
a cell's errors are: the error and the user's own frames, not the magic's, IPython's or trackerlab's."""

from __future__ import annotations

import pytest
from IPython import get_ipython
from IPython.testing.globalipapp import start_ipython
from IPython.utils.capture import capture_output

import trackerlab as tl


@pytest.fixture
def ip():
    shell = start_ipython() or get_ipython()  # the first call starts the shell, later ones return None
    shell.run_line_magic("load_ext", "trackerlab")
    shell.user_ns.update({"a": 2.0, "tl": tl})
    yield shell
    for name in ("a", "y", "tl"):
        shell.user_ns.pop(name, None)


def run(ip, source):
    with capture_output() as captured:
        result = ip.run_cell(source)
    return result, captured.stdout


def test_a_parameter_changed_in_the_cell_is_refused_by_back_with_the_error_alone(ip):
    result, out = run(ip, "%%track -p a --back y\ny = a * 3\ntl.update_(a, 1.0)")
    assert isinstance(result.error_in_exec, RuntimeError)
    assert "multiply: argument 1 (a parameter of shape ()) changed after multiply was recorded" in out
    for internal in ("walk.py", "_checks.py", "magics.py", "api.py", "interactiveshell.py"):
        assert internal not in out, internal
    assert tl.grad(ip.user_ns["a"]) == 0.0  # nothing accumulated


def test_a_failing_hook_keeps_the_users_own_line(ip):
    result, out = run(ip, "%%track -p a --back y\ny = tl.hook(lambda g: 1 / 0, a) * 3")
    assert isinstance(result.error_in_exec, ZeroDivisionError)
    assert "y = tl.hook(lambda g: 1 / 0, a) * 3" in out  # the hook's line, in the cell
    tail = out[out.index("The above exception was the direct cause") :]
    assert "hook: the backward pass failed: ZeroDivisionError: division by zero" in tail
    for internal in ("walk.py", "magics.py", "api.py", "interactiveshell.py"):
        assert internal not in tail, internal
