"""``%%track`` groups the cell's tape by what the user wrote, without ``tl.scope``: each top-level statement that
assigns a name is a block named by the variable, each call of a function defined in the notebook a block named
by the function; the drawing folds them, and each block's own drawing opens below it. ``--no-fold`` records no
blocks and draws every operation."""

from __future__ import annotations

import re
import sys

import numpy as np
import pytest
from IPython.utils.capture import capture_output
from markup import pictures
from shell import ipython_shell
from test_folding import titles

import trackerlab as tl

MLP = "%%track -p W1 b1 W2 b2\nh = tl.tanh(dense(W1, b1, x))\nout = dense(W2, b2, h)\nloss = tl.mean(out ** 2)"


@pytest.fixture
def ip():
    shell = ipython_shell()
    shell.display_formatter.active_types = ["text/plain", "text/html", "image/svg+xml"]
    rng = np.random.default_rng(0)
    shell.user_ns.update(tl=tl, np=np, x=rng.normal(size=(64, 784)))
    shell.user_ns.update(W1=rng.normal(size=(784, 256)) / 28, b1=np.zeros(256))
    shell.user_ns.update(W2=rng.normal(size=(256, 10)) / 16, b2=np.zeros(10))
    yield shell
    for name in (
        "tl",
        "np",
        "x",
        "W1",
        "b1",
        "W2",
        "b2",
        "h",
        "out",
        "loss",
        "dense",
        "y",
        "Layer",
        "layer",
        "values",
        "z",
    ):
        shell.user_ns.pop(name, None)


def run(ip, source):
    with capture_output() as captured:
        result = ip.run_cell(source)
    assert result.success, result.error_in_exec
    return [out.data for out in captured.outputs if "image/svg+xml" in out.data]


def scopes_on_the_tape(y) -> set:
    """Every block path recorded on the tape of ``y``."""
    stack, seen, paths = [tl.tracker(y)], set(), set()
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        paths.add(tuple(tl.scopes(node)))
        stack.extend(a for a in node.f.args if isinstance(a, tl.Tracked))
    return paths


def test_statements_and_notebook_functions_are_blocks_and_the_drawing_reads_as_the_cell(ip):
    run(ip, "def dense(W, b, v):\n    return v @ W + b")  # an earlier cell defines the layer
    [data] = run(ip, MLP)
    ns = ip.user_ns
    assert tl.scopes(ns["h"]) == ("h",)
    assert tl.scopes(ns["h"].tracker.args[0]) == ("h", "dense")  # the add inside dense, called in h's statement
    assert tl.scopes(ns["loss"]) == ("loss",)
    # library code (tl.tanh, tl.mean, trackerlab's own functions) is never a block
    assert scopes_on_the_tape(ns["loss"]) == {(), ("h",), ("h", "dense"), ("out", "dense"), ("loss",)}
    drawn = titles(data["image/svg+xml"])
    assert sorted(t for k, t in drawn.items() if k.startswith("b")) == ["h", "loss", "out › dense"]
    assert {"W1 = param", "b1 = param", "W2 = param", "b2 = param"} <= set(drawn.values())
    html = data["text/html"]
    assert re.findall(r"<summary[^>]*>([^·(]*) \(", html) == ["h", "dense", "out › dense", "loss"]
    assert len(pictures(html)) == 5
    # a notebook function's block inside h's opens inside h's
    dense_inside = titles(pictures(html)[2])
    assert sorted(dense_inside.values()) == ["W1 = param", "add#1", "b1 = param", "const", "matmul#1"]
    assert sys.getprofile() is None  # the hook is gone after the cell
    assert tl.scopes(tl.param(1.0) * 2) == ()  # so are the blocks


def test_a_function_and_a_class_defined_in_the_cell_itself_are_blocks_and_generators_are_not(ip):
    cell = (
        "%%track -p W1\n"
        "class Layer:\n"
        "    def __call__(self, v):\n"
        "        return tl.tanh(v @ W1[:, :3]) * 2.0\n"
        "def values():\n"
        "    yield tl.sum(W1[0])\n"
        "layer = Layer()\n"
        "z = tl.sum(layer(x[:2])) + next(values()) * 3.0\n"
    )
    run(ip, cell)
    paths = scopes_on_the_tape(ip.user_ns["z"])
    assert ("z", "Layer.__call__") in paths
    assert not any("values" in path for path in paths)
    assert tl.data(ip.user_ns["z"]) == pytest.approx(
        np.sum(np.tanh(ip.user_ns["x"][:2] @ tl.data(ip.user_ns["W1"])[:, :3]) * 2.0)
        + np.sum(tl.data(ip.user_ns["W1"])[0]) * 3.0
    )


def test_a_function_decorated_with_scope_is_one_block_not_two(ip):
    run(ip, "@tl.scope\ndef dense(W, b, v):\n    return v @ W + b")
    run(ip, "%%track -p W1 b1\nh = tl.tanh(dense(W1, b1, x)) * 1.0")
    from trackerlab.presentation.blocks import blocks

    [h] = blocks(tl.tracker(ip.user_ns["h"]))
    assert [b.name for b in h.blocks] == ["dense"]
    assert tl.scopes(ip.user_ns["h"].tracker.args[0].args[0]) == ("h", "dense", "dense")


def test_no_fold_records_no_blocks_and_draws_every_operation(ip):
    run(ip, "def dense(W, b, v):\n    return v @ W + b")
    [data] = run(ip, MLP.replace("%%track", "%%track --no-fold"))
    assert scopes_on_the_tape(ip.user_ns["loss"]) == {()}
    drawn = titles(data["image/svg+xml"])
    assert not any(k.startswith("b") for k in drawn)
    assert {"matmul#1", "add#1", "h = tanh", "loss = mean"} <= set(drawn.values())
    assert "<details" not in data["text/html"]


def test_a_cell_that_fails_inside_a_function_leaves_no_block_open_and_no_hook(ip):
    run(ip, "def broken(v):\n    return tl.sin(v) / undefined_name")
    with capture_output():
        result = ip.run_cell("%%track -p b1\ny = broken(b1)")
    assert isinstance(result.error_in_exec, NameError)
    assert sys.getprofile() is None
    assert tl.scopes(tl.param(1.0) * 2) == ()
    ip.user_ns.pop("broken", None)


def test_a_profiler_already_running_is_left_alone(ip):
    calls = []

    def profiler(frame, event, arg):
        calls.append(event)

    run(ip, "def dense(W, b, v):\n    return v @ W + b")
    sys.setprofile(profiler)
    try:
        with capture_output():
            result = ip.run_cell("%%track -p W1 b1 --no-graph\nh = tl.tanh(dense(W1, b1, x))")
    finally:
        sys.setprofile(None)
    assert result.success
    assert calls  # it kept running
    assert scopes_on_the_tape(ip.user_ns["h"]) == {(), ("h",)}  # statements are blocks, functions are not


def test_a_cell_without_notebook_functions_runs_without_the_hook(ip, monkeypatch):
    from trackerlab.notebook import magics

    entered = []
    monkeypatch.setattr(magics._FunctionBlocks, "__enter__", lambda self: entered.append(self) or self)
    cells = ip.compile._filename_map
    for name, value in list(ip.user_ns.items()):  # what earlier tests defined in this shell's cells
        code = getattr(getattr(value, "__func__", value), "__code__", None) if callable(value) else None
        if isinstance(value, type) or (code is not None and code.co_filename in cells):
            monkeypatch.delitem(ip.user_ns, name)
    run(ip, "%%track -p b1 --no-graph\ny = tl.sum(tl.sin(b1))")
    assert entered == []
    run(ip, "def dense(W, b, v):\n    return v @ W + b")
    run(ip, "%%track -p b1 --no-graph\ny = tl.sum(tl.sin(b1))")
    assert len(entered) == 1
