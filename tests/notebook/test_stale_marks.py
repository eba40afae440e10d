"""A tape whose parameter changed after a call used it (``tl.update_``, ``x.data = …``) shows the parameter's
new value beside the value computed from the old one: every display says so, where the walk refuses it."""

from __future__ import annotations

import re

import numpy as np
import pytest

import trackerlab as tl
from trackerlab.notebook.html import html_repr


def _stale_tape():
    W = tl.param(np.array([[1.0, 2.0], [3.0, 4.0]]))
    b = tl.param(np.array([0.5, -0.5]))
    loss = tl.sum(tl.tanh(W @ np.array([1.0, 2.0]) + b) ** 2)
    tl.back_(loss)
    tl.update_(W, -0.1 * tl.grad(W))  # after the forward pass: loss was computed from the old W
    return W, b, loss


def test_the_displays_mark_the_call_whose_argument_changed():
    W, b, loss = _stale_tape()
    with pytest.raises(RuntimeError, match=r"matmul: argument 1 .* changed after matmul was recorded"):
        tl.back_(loss)
    page = html_repr(loss, max_depth=20)
    assert "stale: an argument changed after it was used (tl.update_ or x.data = …); back_ refuses this tape" in page
    assert page.count("⚠ argument 1 changed since") == 1  # on matmul's line, not on b's add
    line = re.search(r'<span id="[^"]*n2">.*?</span></span>', page).group(0)  # W, b, then W @ x: the third made
    assert "matmul" in line
    svg = tl.tape_svg(loss, labels={W: "W", b: "b"})
    assert svg.count(">⚠ argument 1 changed since<") == 1
    graph = tl.to_networkx(loss)
    assert {k: d["changed"] for k, d in graph.nodes(data=True) if d["changed"]} == {"n2": (0,)}
    assert graph.nodes["n2"]["op"] == "matmul"


def test_x_data_set_marks_every_use_and_a_fresh_tape_is_not_marked():
    x = tl.param(2.0)
    y = x * x
    x.data = 10.0
    svg = tl.tape_svg(y)
    assert ">⚠ argument 1 changed since<" in svg and ">⚠ argument 2 changed since<" in svg
    assert tl.to_networkx(y).nodes["n1"]["changed"] == (0, 1)
    again = x * x  # recorded after the change: nothing is stale
    assert "⚠" not in html_repr(again) and "stale" not in html_repr(again) and "⚠" not in tl.tape_svg(again)
    assert tl.to_networkx(again).nodes["n1"]["changed"] == ()


def test_the_warning_speaks_the_language():
    x = tl.param(2.0)
    y = x * 3.0
    tl.update_(x, 1.0)
    try:
        tl.set_language("ja")
        assert "⚠ 引数 1 はその後変更された" in html_repr(y)
        tl.set_language("zh")
        assert "⚠ 参数 1 之后被修改" in tl.tape_svg(y)
    finally:
        tl.set_language("en")
