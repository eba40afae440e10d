"""Labels people can read: a recorded call reads as the user wrote it (``b1[:, None]``, ``x * 2``,
``sum(x, axis=1)``) in the drawing's boxes, the HTML repr's tape, the stepper's text and ``check_tape``'s
report; a number given as an argument is written into the call, an array keeps a ``const`` box with its
shape; an array's range says which end is the minimum and which the maximum, in every language."""

from __future__ import annotations

import re

import numpy as np
import pytest

import trackerlab as tl
from trackerlab.notebook.drawing.boxes import box_text, boxes_and_edges
from trackerlab.notebook.html import html_repr
from trackerlab.presentation.text import call_text, summary


def written(y, **names) -> str:
    """The call that made ``y``, its tracked arguments named as given (``x=x`` names the value ``x`` "x")."""
    by_node = {value.tracker: name for name, value in names.items()}
    return call_text(y.tracker, by_node.__getitem__)


# ----------------------------------------------------------------------------------------------------
# Calls as written


@pytest.fixture
def x():
    return tl.param(np.arange(12.0).reshape(3, 4))


def test_indexing_reads_as_the_brackets_the_user_wrote(x):
    b1 = tl.param([1.0, 2.0, 3.0])
    assert written(b1[:, None], b1=b1) == "b1[:, None]"
    assert written(x[0, 1:3], x=x) == "x[0, 1:3]"
    assert written(x[..., ::2], x=x) == "x[..., ::2]"
    assert written(x[1], x=x) == "x[1]"
    assert written(x[::-1, 2:], x=x) == "x[::-1, 2:]"
    assert written(x[None, :, 1:4:2], x=x) == "x[None, :, 1:4:2]"
    assert written(x[np.array([0, 2, 2])], x=x) == "x[int array (3,)]"
    assert written(x[np.array([True, False, True])], x=x) == "x[mask (3,)]"
    assert written(x[np.ones((3, 4), dtype=bool)], x=x) == "x[mask (3, 4)]"
    assert written(x[np.int64(2), 1], x=x) == "x[2, 1]"


def test_operators_read_as_operators_with_numbers_written_in(x):
    W = tl.param(np.ones((2, 3)))
    assert written(x * 2, x=x) == "x * 2"
    assert written(2 * x, x=x) == "2 * x"
    assert written(1 - x, x=x) == "1 - x"
    assert written(x / 0.5, x=x) == "x / 0.5"
    assert written(x**2, x=x) == "x ** 2"
    assert written(-x, x=x) == "-x"
    assert written(W @ x, W=W, x=x) == "W @ x"
    assert written(x + x, x=x) == "x + x"
    assert written(x.T, x=x) == "x.T"


def test_arrays_given_as_arguments_read_as_const_with_their_shape(x):
    assert written(x @ np.ones((4, 2)), x=x) == "x @ const 4×2"
    assert written(tl.where(np.array([True, False, True, True]), x, 0.0), x=x) == "where(const bool 4, x, 0)"


def test_settings_read_as_they_are_given(x):
    assert written(tl.sum(x, axis=1), x=x) == "sum(x, axis=1)"
    assert written(np.sum(x, axis=0), x=x) == "sum(x, axis=0)"
    assert written(x.mean(), x=x) == "mean(x)"  # the defaults recorded (axis=None, keepdims=False) left out
    assert written(x.max(axis=1), x=x) == "max(x, axis=1)"
    assert written(x.max(), x=x) == "max(x)"
    assert written(x.sum(axis=0, keepdims=True), x=x) == "sum(x, axis=0, keepdims=True)"
    assert written(x.reshape(2, 6), x=x) == "reshape(x, (2, 6))"
    assert written(tl.transpose(x, (1, 0)), x=x) == "transpose(x, (1, 0))"
    assert written(tl.expand_dims(x, 0), x=x) == "expand_dims(x, 0)"
    assert written(x.astype(np.float32), x=x) == "astype(x, float32)"
    assert written(tl.stack([x, x]), x=x) == "stack([x, x])"
    assert written(tl.concatenate([x, x], axis=1), x=x) == "concatenate([x, x], axis=1)"


def test_convolution_settings_read_as_pytorch_takes_them():
    """The operation records one value per spatial axis (stride=(1, 1), padding=((1, 1), (1, 1))); a setting the
    same on every axis reads as one number, and one at its default is left out."""
    image = np.ones((1, 2, 6, 6))
    W = tl.param(np.ones((3, 2, 3, 3)))
    assert written(tl.conv(image, W), W=W) == "conv(const 1×2×6×6, W)"
    assert written(tl.conv(image, W, padding=1, stride=2), W=W) == "conv(const 1×2×6×6, W, stride=2, padding=1)"
    assert written(tl.conv(image, W, stride=(1, 2)), W=W) == "conv(const 1×2×6×6, W, stride=(1, 2))"
    x = tl.param(image)
    assert written(tl.maxpool(x, 2), x=x) == "maxpool(x, kernel=2)"  # the stride is the kernel's, by default


def test_a_long_call_is_clipped_where_asked(x):
    long = tl.concatenate([x] * 20)
    assert len(call_text(long.tracker, lambda arg: "x", limit=30)) == 30
    assert call_text(long.tracker, lambda arg: "x", limit=30).endswith("…")


# ----------------------------------------------------------------------------------------------------
# In the displays


def mlp():
    rng = np.random.default_rng(0)
    W1, b1 = tl.param(rng.normal(size=(4, 3))), tl.param(rng.normal(size=4))
    W2, b2 = tl.param(rng.normal(size=(2, 4))), tl.param(rng.normal(size=2))
    batch = rng.normal(size=(3, 5))
    h = tl.relu(W1 @ batch + b1[:, None])
    out = W2 @ h + b2[:, None]
    loss = tl.sum(out[0, 1:3] * 2)
    return loss, {W1: "W1", b1: "b1", W2: "W2", b2: "b2"}


def boxes(y, labels=None, constants=False):
    drawn, edges, _ = boxes_and_edges(y.tracker, labels or {}, 100, constants)
    return {key: box_text(box, None, True) for key, box in drawn.items()}, edges


def test_the_boxes_write_each_call_as_written():
    loss, labels = mlp()
    shown, _ = boxes(loss, {node.tracker: name for node, name in labels.items()})
    lines = {key: lines for key, (title, lines) in shown.items()}
    calls = [line for body in lines.values() for line in body if line.startswith("= ")]
    assert calls == [
        "= W1 @ const 3×5",
        "= b1[:, None]",
        "= matmul#1 + getitem#1",
        "= relu(add#1)",
        "= W2 @ relu#1",
        "= b2[:, None]",
        "= matmul#2 + getitem#2",
        "= add#2[0, 1:3]",
        "= getitem#3 * 2",
        "= sum(multiply#1)",
    ]
    text = " ".join(" ".join([title, *body]) for title, body in shown.values())
    assert "slice(" not in text and "const 2 =" not in text


def test_a_number_is_written_into_its_call_and_an_array_keeps_a_const_box():
    loss, _ = mlp()
    shown, edges = boxes(loss)
    consts = {key: value for key, value in shown.items() if key.startswith("c")}
    assert consts == {"c0": ("const", ["c0 · 3×5", "data min -1.25907 … max 1.49343"])}  # the batch, not the 2
    assert ("c0", "n4", 1) in edges  # an arrow into W1 @ batch, as argument 2
    assert not [e for e in edges if e[0].startswith("c") and e[0] != "c0"]
    drawn, _ = boxes(loss, constants=True)  # every constant a box, the number 2 too
    assert sorted(k for k in drawn if k.startswith("c")) == ["c0", "c1"] and drawn["c1"][1] == ["c1 · scalar", "data 2"]


def test_the_repr_stepper_and_check_tape_write_the_same_call():
    loss, _ = mlp()
    getitem = loss.tracker.args[0].args[0]  # out[0, 1:3]
    line = "getitem#3 = add#2[0, 1:3]"
    assert line in re.sub(r"<[^>]+>", "", html_repr(loss))
    stepper = tl.BackpropStepper(loss)
    with stepper:
        stepper.index = next(i for i, step in enumerate(stepper.steps) if step["node"] == "getitem#3")
        assert stepper.text.splitlines()[0].endswith(f": {line}")
    [entry] = tl.check_tape(loss).entries_of(getitem)
    assert (entry.name, entry.call) == ("getitem#3", "add#2[0, 1:3]")
    assert re.search(r"\n  n11 getitem#3\s+add#2\[0, 1:3\]\s+1 ", repr(tl.check_tape(loss)))


# ----------------------------------------------------------------------------------------------------
# Ranges labelled


def test_an_array_range_says_min_and_max():
    values = np.linspace(-1.16, 0.68, 50)
    assert summary(values, compact=True) == "min -1.16 … max 0.68"
    assert summary(values) == "50 array, min -1.16 … max 0.68"
    loss, _ = mlp()
    shown, _ = boxes(loss)
    assert "data min -1.26542 … max 1.304" in shown["n0"][1]  # W1, 4×3


@pytest.mark.parametrize(
    "language, compact, spelled",
    [
        ("ja", "最小 -1.16 … 最大 0.68", "50 配列、最小 -1.16 … 最大 0.68"),
        ("zh", "最小 -1.16 … 最大 0.68", "50 数组，最小 -1.16 … 最大 0.68"),
    ],
)
def test_the_range_speaks_the_language(language, compact, spelled):
    values = np.linspace(-1.16, 0.68, 50)
    try:
        tl.set_language(language)
        assert summary(values, compact=True) == compact
        assert summary(values) == spelled
    finally:
        tl.set_language("en")


def test_the_reprs_tree_writes_a_number_into_its_call_and_gives_an_array_constant_a_line():
    from trackerlab.notebook.html import html_repr

    x = tl.param(np.array([0.5, -1.0]))
    html = html_repr(tl.sum(tl.sin(x) * 3 + np.array([1.0, 2.0])))
    assert "sin#1 * 3" in html and "const</span> 3<" not in html  # the 3 is in the call's line only
    assert "const</span> [1, 2]" in html  # the array has its own line, with its values
