"""One numbering: the values of a tape are numbered in the order they were made (``W1`` made before ``W2`` is
``n0`` and ``x1``), and the drawing's boxes, the HTML repr, the stepper's frames and ``check_tape``'s report
call each node by the same key and the same name."""

from __future__ import annotations

import re

import numpy as np

import trackerlab as tl
from trackerlab.notebook.drawing.boxes import box_text, boxes_and_edges
from trackerlab.notebook.html import html_repr
from trackerlab.presentation.numbering import names, numbering


def swish(x):
    return x * tl.sigmoid(x)


def mlp():
    """A 3-8-8-1 MLP built W1 first, whose tape the walk (from the loss) reaches W3 before W1."""
    rng = np.random.default_rng(0)
    W1, b1 = tl.param(rng.normal(size=(8, 3))), tl.param(rng.normal(size=8))
    W2, b2 = tl.param(rng.normal(size=(8, 8)) / 3), tl.param(rng.normal(size=8))
    W3 = tl.param(rng.normal(size=(1, 8)) / 3)
    batch = rng.normal(size=(3, 5))
    h1 = tl.tanh(W1 @ batch + b1[:, None])
    h2 = swish(W2 @ h1 + b2[:, None])
    loss = tl.mean((W3 @ h2 - 1.0) ** 2)
    return loss, [W1, b1, W2, b2, W3]


def test_parameters_count_in_the_order_they_were_made():
    loss, params = mlp()
    index, _, _ = numbering(loss.tracker)
    assert [index[p.tracker] for p in params] == [0, 1, 2, 3, 4]  # W1 first, though the walk meets W3 first
    named = names(index, {})
    assert [named[p.tracker] for p in params] == ["x1", "x2", "x3", "x4", "x5"]
    assert index[loss.tracker] == len(index) - 1


def test_the_order_is_the_order_made_not_the_order_used():
    W2 = tl.param([1.0, 2.0])  # made first, used second
    W1 = tl.param([3.0, 4.0])
    y = tl.sum(W1 * W2)
    index, _, below = numbering(y.tracker)
    assert index[W2.tracker] == 0 and index[W1.tracker] == 1
    assert below[y.tracker.args[0]] == (W1.tracker, W2.tracker)  # the operands as the call has them
    # every operand is numbered before the calls that use it
    assert all(index[arg] < index[node] for node, args in below.items() for arg in args)


def test_each_node_is_numbered_by_when_it_was_made():
    a = tl.param(1.0)
    b = tl.param(2.0)
    c = a * b
    assert a.tracker.serial < b.tracker.serial < c.tracker.serial
    made_by_hand = tl.Tracked(tl.Call(np.negative, c), -2.0)
    assert made_by_hand.serial > c.tracker.serial


def test_check_tape_the_drawing_the_repr_and_the_stepper_name_each_node_alike():
    loss, _ = mlp()
    report = tl.check_tape(loss)
    drawn, _, _ = boxes_and_edges(loss.tracker, {}, 100, False)
    box_of = {box["node"]: box for box in drawn.values() if box["node"] is not None}
    page = re.sub(r"<[^>]+>", "", html_repr(loss, max_depth=40, max_nodes=200))
    stepper = tl.BackpropStepper(loss)
    frames = {step.node: frame for step, frame in zip(tl.backprop_steps(loss), stepper.steps)}
    checked = {entry.node: entry for entry in report.entries}
    assert len(checked) == 13  # every call of the tape (and 5 parameters)
    for node, entry in checked.items():
        box = box_of[node]
        key, name = f"n{entry.number}", entry.name
        assert (box["key"], box["name"]) == (key, name)
        title, lines = box_text({**box, "state": None}, None, True)
        assert title == name and lines[0].startswith(f"{key} · ") and lines[1] == f"= {entry.call}"
        assert f"{key} {name} = {entry.call} " in page
        assert frames[node]["node"] == name
    # the swish's sigmoid, the report's row and the drawing's box: one key, one name
    sigmoid = next(node for node in checked if node.f.name == "sigmoid")
    assert (checked[sigmoid].number, checked[sigmoid].name) == (12, "sigmoid#1")
    assert re.search(r"\n  n12 sigmoid#1\s+sigmoid\(add#2\)\s", repr(report))
    assert box_of[sigmoid]["key"] == "n12"


def test_the_stepper_names_the_leaves_as_the_drawing_does():
    loss, params = mlp()
    with tl.BackpropStepper(loss) as stepper:
        leaves = [step["node"] for step in stepper.steps if step["isleaf"]]
        grads = stepper.steps[-1]["grads"]
    assert sorted(leaves) == ["x1", "x2", "x3", "x4", "x5"] and grads.keys() == {"x1", "x2", "x3", "x4", "x5"}
    W1_grad = grads["x1"]
    tl.back_(loss)
    np.testing.assert_allclose(np.asarray(W1_grad), tl.grad(params[0]), rtol=1e-12)  # x1 is W1
