"""``%%track -p`` on a variable that is already a parameter: the values earlier cells computed from it
still send their gradients to the variable."""

from __future__ import annotations

import numpy as np
import pytest
from IPython import get_ipython
from IPython.testing.globalipapp import start_ipython
from IPython.utils.capture import capture_output

import trackerlab as tl


@pytest.fixture
def ip():
    shell = start_ipython() or get_ipython()  # the first call starts the shell, later ones return None
    shell.run_line_magic("load_ext", "trackerlab")
    rng = np.random.default_rng(4)
    shell.user_ns.update({"W": rng.normal(size=(2, 3)), "x": rng.normal(size=3), "tl": tl, "np": np})
    yield shell
    for name in ("W", "x", "h", "loss", "z", "tl", "np"):
        shell.user_ns.pop(name, None)


def run(ip, source):
    with capture_output():
        result = ip.run_cell(source)
    assert result.success, result.error_in_exec
    return result


def test_a_param_made_again_keeps_the_values_earlier_cells_computed_from_it(ip):
    W0, x0 = ip.user_ns["W"].copy(), ip.user_ns["x"].copy()
    run(ip, "%%track -p W x\nh = tl.tanh(W @ x)")
    W = ip.user_ns["W"]
    run(ip, "%%track -p W --back z\nz = tl.sum(h * np.array([1.0, -2.0]))")
    assert ip.user_ns["W"] is W
    t = np.tanh(W0 @ x0)
    np.testing.assert_allclose(tl.grad(ip.user_ns["W"]), np.outer((1 - t * t) * [1.0, -2.0], x0), rtol=1e-12)


def test_running_a_cell_again_gives_its_gradients_once(ip):
    W0, x0 = ip.user_ns["W"].copy(), ip.user_ns["x"].copy()
    cell = "%%track -p W x --back loss\nh = tl.tanh(W @ x)\nloss = tl.sum(h * h * np.array([1.0, -2.0]))"
    t = np.tanh(W0 @ x0)
    gh = 2 * t * (1 - t * t) * np.array([1.0, -2.0])
    for _ in range(2):
        run(ip, cell)
        np.testing.assert_allclose(tl.grad(ip.user_ns["W"]), np.outer(gh, x0), rtol=1e-12)
        np.testing.assert_allclose(tl.grad(ip.user_ns["x"]), W0.T @ gh, rtol=1e-12)
