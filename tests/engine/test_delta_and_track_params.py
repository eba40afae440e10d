"""A Δ that is not numbers is refused by back_ naming Δ (it failed inside the first pullback, naming it), and
``%%track -p`` refuses a computed value (a new parameter made from it would cut the gradient to the values
it came from), in English, Japanese and Chinese."""

from __future__ import annotations

import re

import numpy as np
import pytest
from IPython.utils.capture import capture_output
from shell import ipython_shell

import trackerlab as tl


@pytest.mark.parametrize(
    ("delta", "kind"), [("a", "str"), (b"1", "bytes"), ({"a": 1}, "dict"), (np.array(["a"] * 3), "<U1")]
)
@pytest.mark.parametrize("who", ["back_", "backprop_steps", "back"])  # back: forward's backpropagator
def test_a_delta_that_is_not_numbers_is_refused_naming_delta(delta, kind, who):
    x = tl.param(np.ones(3))
    message = re.escape(f"{who}: Δ must be a number or an array of numbers (got {kind})")
    with pytest.raises(TypeError, match=message):
        if who == "back_":
            tl.back_(x * 2, delta)
        elif who == "backprop_steps":
            list(tl.backprop_steps(x * 2, delta))
        else:
            tl.forward(lambda x: x * 2, np.ones(3))[1](delta)
    assert tl.grad(x).tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("delta", [2, 2.0, np.float32(2.0), True, [2.0, 2.0, 2.0], np.full(3, 2)])
def test_numbers_of_every_kind_are_a_delta(delta):
    x = tl.param(np.ones(3))
    tl.back_(x * 3, delta)
    np.testing.assert_allclose(x.grad, 3.0 * np.broadcast_to(np.asarray(delta, float), 3))


@pytest.fixture
def ip():
    shell = ipython_shell()
    shell.user_ns.update({"tl": tl, "np": np})
    yield shell
    tl.set_language("en")
    for name in ("a", "c", "y", "tl", "np"):
        shell.user_ns.pop(name, None)


def run(ip, source):
    with capture_output() as captured:
        result = ip.run_cell(source)
    return result, captured


@pytest.mark.parametrize(
    ("language", "words"),
    [
        ("en", "c is computed (the result of multiply), not a parameter"),
        ("ja", "c は計算された値（multiply の結果）"),
        ("zh", "c 是计算得到的值（multiply 的结果）"),
    ],
)
def test_track_p_refuses_a_computed_value(ip, language, words):
    tl.set_language(language)
    a = tl.param(np.array([1.0, 2.0]))
    ip.user_ns.update({"a": a, "c": a * 3})
    result, captured = run(ip, "%%track -p c --back y\ny = tl.sum(c * c)")
    assert not result.success
    assert words in str(result.error_in_exec) + captured.stdout + captured.stderr
    assert "y" not in ip.user_ns  # the cell did not run
    # the way it says: the values it came from as parameters give the gradient through c
    tl.set_language("en")
    result, _ = run(ip, "%%track -p a --back y\nc = a * 3\ny = tl.sum(c * c)")
    assert result.success, result.error_in_exec
    np.testing.assert_allclose(tl.grad(ip.user_ns["a"]), 18 * np.array([1.0, 2.0]))
