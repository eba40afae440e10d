"""Drawings grouped by the user's structure: each ``tl.scope`` block (a layer function, a named block) is one
box titled by its name, with its inputs and outputs as edges into and out of it; a list of names opens blocks,
``fold=False`` draws every operation; in HTML each folded block's own drawing sits below in a ``<details>``."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from markup import pictures, unstyled
from models import block_with_another_threads_operation, scoped_mlp
from test_drawing import SVG, geometry

import trackerlab as tl
from trackerlab.notebook.common.theme import COLOURS
from trackerlab.notebook.drawing import tape_html
from trackerlab.notebook.html import html_repr
from trackerlab.presentation.blocks import blocks
from trackerlab.presentation.numbering import numbering


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


def keys(tape) -> dict:
    """Each node of the tape of ``tape`` → its key in the drawings (``n0``, ``n1``, …)."""
    index = numbering(tl.tracker(tape))[0]
    return {node: f"n{i}" for node, i in index.items()}


def _texts(svg: str, kind: str) -> dict:
    root = ET.fromstring(svg[svg.index("<svg") :])
    out = {}
    for group in root.iter(f"{SVG}g"):
        gid = group.get("id", "")
        if gid.startswith(f"{kind}-"):
            out[gid.partition("-")[2]] = "".join(group.itertext()).strip()
    return out


def titles(svg: str) -> dict:
    """Each box's key → its title."""
    return _texts(svg, "title")


def box_texts(svg: str) -> dict:
    """Each box's key → its lines of text under the title."""
    return {
        key: [line.strip() for line in text.splitlines() if line.strip()] for key, text in _texts(svg, "lines").items()
    }


# ----------------------------------------------------------------------------------------------------
# The blocks of a tape (presentation.blocks)


def test_blocks_nest_and_two_calls_of_one_function_are_two_blocks():
    W = tl.param(np.eye(2))

    @tl.scope
    def dense(v):
        return tl.tanh(W @ v + 1.0)

    with tl.scope("model"):
        y = tl.sum(dense(dense(np.ones(2))) * 2.0)
    [model] = blocks(tl.tracker(y))
    assert model.name == "model" and model.operations == 8
    assert [b.name for b in model.blocks] == ["dense", "dense"]
    first, second = model.blocks
    assert (first.operations, second.operations) == (3, 3)
    assert set(first.nodes).isdisjoint(second.nodes)
    assert first.inputs == (W.tracker,) and second.inputs == (W.tracker, first.outputs[0])
    assert second.outputs[0] is tl.tracker(y).args[0].args[0]
    assert model.outputs == (tl.tracker(y),)
    assert [n.f.name for n in model.own] == ["multiply", "sum"]


def test_a_block_holding_only_one_block_reads_as_one_and_a_block_of_one_operation_is_none():
    x = tl.param(np.ones(3))
    with tl.scope("h"), tl.scope("dense"):
        h = tl.tanh(x * 2.0)
    with tl.scope("alone"):
        y = tl.sum(h)
    [only] = blocks(tl.tracker(y))
    assert (only.name, only.parts, only.operations) == ("h › dense", ("h", "dense"), 2)


# ----------------------------------------------------------------------------------------------------
# The folded drawing


@pytest.mark.parametrize("scoped", ["functions", "with"])
def test_an_mlp_reads_as_its_layers_first_and_each_layer_opens_below_with_its_operations(scoped):
    loss, labels = scoped_mlp(scoped=scoped)
    key = keys(loss)
    layer_nodes = {k for node, k in key.items() if tl.scopes(node)}
    assert len(layer_nodes) == 5  # matmul, add, tanh; matmul, add
    svg, html = tape_html(loss, labels=labels)
    drawn = titles(svg)
    assert {drawn[k] for k in drawn if k.startswith("b")} == {"layer 1", "layer 2"}
    assert not layer_nodes & set(drawn)  # no box of the layers' operations
    assert {"W1 = param", "b1 = param", "W2 = param", "b2 = param", "loss = mean"} <= set(drawn.values())
    texts = box_texts(svg)
    layer1 = next(k for k, t in drawn.items() if t == "layer 1")
    assert texts[layer1][:2] == [f"{layer1} · block of 3 operations", "→ 64×256 float64"]
    # the layers as boxes: the parameters go into them, layer 1 into layer 2
    _, edges, _, _ = geometry(svg)
    layer2 = next(k for k, t in drawn.items() if t == "layer 2")
    assert (layer1, layer2, None) in edges
    W1, b1, W2, b2 = (key[p.tracker] for p in list(labels)[:4])
    assert {(W1, layer1, None), (b1, layer1, None), (W2, layer2, None), (b2, layer2, None)} <= set(edges)
    # below the drawing, one <details> per layer holding its own drawing: its operations and inputs
    assert html.count("<details") == 2 and "<details open" not in html
    summaries = re.findall(r"<summary[^>]*>([^<]*)</summary>", html)
    assert summaries == [
        f"layer 1 ({layer1}) · 3 operations → 64×256 float64",
        f"layer 2 ({layer2}) · 2 operations → 64×10 float64",
    ]
    first, second = pictures(html)[1:]
    inside1, inside2 = titles(first), titles(second)
    assert sorted(inside1.values()) == ["W1 = param", "add#1", "b1 = param", "const", "matmul#1", "tanh#1"]
    assert sorted(inside2.values()) == ["W2 = param", "add#2", "b2 = param", "matmul#2", "tanh#1"]
    assert "from layer 1" in box_texts(second)[key[loss.tracker.args[0].args[0].args[0].args[0]]]
    consts = {
        key for key, title in {**inside1, **inside2}.items() if title == "const"
    }  # the input x, drawn as a constant
    assert layer_nodes == (set(inside1) - {W1, b1} | set(inside2) - {W2, b2}) - consts


def test_blocks_nest_level_by_level_and_a_list_of_names_opens_them():
    x = tl.param(np.ones((4, 5)))
    W = tl.param(np.ones((5, 2)))

    def model(v):
        with tl.scope("model"):
            with tl.scope("layer 1"):
                h = tl.tanh(v @ W + 1.0)
            with tl.scope("layer 2"):
                return tl.sin(h) * h

    y = tl.sum(model(x))
    svg, html = tape_html(y)
    assert sorted(t for k, t in titles(svg).items() if k.startswith("b")) == ["model"]
    # the model's own drawing holds its layers folded, and each layer's opens inside the model's
    assert re.findall(r"<summary[^>]*>([^·]*) ·", html) == ["model (b0)", "layer 1 (b1)", "layer 2 (b2)"]
    assert html.index("layer 2 (b2) ·") < html.index("</details></div></details>")  # nested in the model's
    model_svg = pictures(html)[1]
    assert sorted(t for k, t in titles(model_svg).items() if k.startswith("b")) == ["layer 1", "layer 2"]
    opened = tl.tape_svg(y, fold=["model"])
    assert sorted(t for k, t in titles(opened).items() if k.startswith("b")) == ["layer 1", "layer 2"]
    both = titles(tl.tape_svg(y, fold=["model", "layer 2"]))
    assert sorted(t for k, t in both.items() if k.startswith("b")) == ["layer 1"]
    assert {"sin#1", "multiply#1"} <= set(both.values())


def test_a_value_used_in_two_blocks_is_an_edge_into_each_and_one_per_block():
    W = tl.param(np.full((2, 2), 0.5))
    with tl.scope("first"):
        h = tl.tanh(W @ np.ones(2)) * W[0, 0]  # W used twice inside
    with tl.scope("second"):
        y = tl.sum(W @ h + h)
    svg = tl.tape_svg(y)
    drawn = titles(svg)
    first = next(k for k, t in drawn.items() if t == "first")
    second = next(k for k, t in drawn.items() if t == "second")
    w = keys(y)[W.tracker]
    _, edges, heads, _ = geometry(svg)
    assert sorted(edges) == sorted([(w, first, None), (w, second, None), (first, second, None)])
    assert set(heads) == set(edges)


def test_a_block_used_twice_by_a_value_outside_gives_one_edge_per_use():
    x = tl.param(1.5)
    with tl.scope("square"):
        s = x * x + 1.0
    y = s * s
    svg = tl.tape_svg(y)
    _, edges, _, labels = geometry(svg)
    key = keys(y)
    assert sorted(edges, key=str) == sorted(
        [(key[x.tracker], "b0", None), ("b0", key[y.tracker], 1), ("b0", key[y.tracker], 2)], key=str
    )
    assert labels == {("b0", key[y.tracker], 1): "1", ("b0", key[y.tracker], 2): "2"}


def test_fold_false_draws_every_operation_as_a_tape_without_blocks_does():
    loss, labels = scoped_mlp(batch=4, sizes=(5, 3, 2))
    folded_off = tl.tape_svg(loss, labels=labels, fold=False)
    assert not any(k.startswith("b") for k in titles(folded_off))
    drawn = titles(folded_off)
    assert set(drawn) - {key for key, title in drawn.items() if title == "const"} == set(keys(loss).values())
    _, html = tape_html(loss, labels=labels, fold=False)
    assert "<details" not in html


def test_a_tape_without_blocks_is_drawn_as_before():
    x = tl.param(2.0)
    y = tl.sin(x) * x
    assert tl.tape_svg(y) == tl.tape_svg(y, fold=False)
    assert "<details" not in tape_html(y)[1]


def test_the_figure_shows_the_blocks_below_it_in_html():
    loss, labels = scoped_mlp(batch=4, sizes=(5, 3, 2))
    figure = tl.plot_tape(loss, labels=labels)
    bundle = figure._repr_mimebundle_()
    assert bundle["text/html"].count("<details") == 2
    assert len(pictures(bundle["text/html"])) == 3
    assert titles(bundle["image/svg+xml"]).keys() == titles(tl.tape_svg(loss, labels=labels)).keys()


def test_a_folded_block_takes_the_state_of_its_operations_and_a_wrong_one_marks_it():
    x = tl.param(0.3)
    with tl.scope("inner"):
        h = tl.sin(x) * 2.0
    y = h + x
    node = tl.tracker(h)
    svg = tl.tape_svg(y, states={h: "current"})
    box = geometry(svg)[0]["b0"][4]
    assert "var(--tl-current-fill" in "".join(p.get("style", "") for p in box.iter("{http://www.w3.org/2000/svg}path"))
    report = type("Report", (), {"wrong": [node]})()
    wrong = geometry(tl.tape_svg(y, check=report))[0]["b0"][4]
    assert "var(--tl-wrong" in "".join(p.get("style", "") for p in wrong.iter("{http://www.w3.org/2000/svg}path"))
    assert COLOURS["block"] != COLOURS["op"]


@pytest.mark.parametrize(
    ("fold", "error", "words"),
    [
        ("layer 1", TypeError, r"plot_tape: fold must be True .* not 'layer 1'; to open one block, fold=\['layer 1'\]"),
        (3, TypeError, r"plot_tape: fold must be True \(fold every block\), False \(every operation\)"),
        (None, TypeError, r"plot_tape: fold must be True"),
        ([3], TypeError, r"plot_tape: fold lists the names of blocks to open \(strings\), not 3"),
        (["layer 3"], ValueError, r"plot_tape: fold names 'layer 3', not a block of this tape; its blocks are "),
    ],
)
def test_a_bad_fold_option_is_a_clear_error_naming_it(fold, error, words):
    loss, _ = scoped_mlp(batch=4, sizes=(5, 3, 2))
    with pytest.raises(error, match=words):
        tl.plot_tape(loss, fold=fold)


def test_naming_a_block_on_a_tape_without_blocks_says_so():
    y = tl.param(2.0) * 3
    with pytest.raises(ValueError, match=r"plot_tape: fold names blocks to open, but this tape has no blocks"):
        tl.tape_svg(y, fold=["layer 1"])


# ----------------------------------------------------------------------------------------------------
# The repr's Call tape: a block is a <details> named by it


def block_details(html: str, name: str) -> tuple[str, str]:
    """The opening tag and the inside of the ``<details>`` of the block ``name`` in the repr's tape."""
    html = unstyled(html)
    start = html.index(f'<span class="tl-block">block</span> <span class="tl-name">{name}</span>')
    start = html.rindex("<details", 0, start)
    depth, at = 0, start
    for match in re.finditer(r"<details|</details>", html[start:]):
        depth += 1 if match.group(0) == "<details" else -1
        if depth == 0:
            at = start + match.end()
            break
    return html[start : html.index(">", start) + 1], html[start:at]


def keys_in(html: str) -> set:
    return set(re.findall(r'<span class="tl-key">(n\d+)</span>', html))


def test_the_reprs_tape_groups_by_block_each_a_details_closed_at_first():
    loss, labels = scoped_mlp()
    key = keys(loss)
    html = html_repr(loss, labels=labels)
    tag2, layer2 = block_details(html, "layer 2")
    tag1, layer1 = block_details(html, "layer 1")
    assert tag1 == tag2 == "<details>"  # folded until clicked
    assert "3 operations → 64×256" in layer1 and "2 operations → 64×10" in layer2
    in_layer1 = {key[n] for n in key if tl.scopes(n) == ("layer 1",)}
    in_layer2 = {key[n] for n in key if tl.scopes(n) == ("layer 2",)}
    assert keys_in(layer1) - {key[p.tracker] for p in labels if tl.isleaf(p)} == in_layer1
    assert in_layer1 | in_layer2 <= keys_in(layer2)  # layer 1 is what layer 2 is computed from: inside it
    assert layer1 in layer2
    outside = unstyled(html).replace(layer2, "")
    assert keys_in(outside) == {key[loss.tracker], key[loss.tracker.args[0]]}  # the mean and the square


def test_the_repr_opens_a_block_holding_the_whole_tape_and_runs_stop_at_a_block():
    x = tl.param(0.1)
    with tl.scope("everything"):
        y = x
        for _ in range(6):
            y = tl.sin(y)
        with tl.scope("inner"):
            for _ in range(6):
                y = tl.sin(y)
    html = html_repr(y)
    tag, _ = block_details(html, "everything")
    assert tag == "<details open>"
    # each run of six sines is folded within its own block (the top one, 4 more, and the last one), not as one run
    assert len(re.findall(r"… 4 more in a chain \(sin ×4\)", unstyled(html))) == 2
    _, inner = block_details(html, "inner")
    assert inner.count("sin ×4") == 2  # the block's own run, and the run of the values it was computed from


def test_a_tape_of_many_blocks_draws_those_nearest_the_output_and_says_how_many_more():
    @tl.scope
    def step(v):
        return tl.sin(v) * 1.5

    x = tl.param(0.3)
    v = x
    for _ in range(70):
        v = step(v)
    svg, html = tape_html(v, max_nodes=20)
    drawn = titles(svg)
    assert len(drawn) == 20 and drawn["more"] == "… 52 more"  # 19 of the 70 blocks and x, and one box for 52
    assert set(drawn) - {"more"} == {f"b{i}" for i in range(51, 70)}
    _, edges, _, _ = geometry(svg)
    assert ("more", "b51", None) in edges and len(edges) == 19  # each block from the one before it
    # below the drawing, a line for the first blocks, and the own drawings of the 24 nearest the output
    assert html.count("<details") == 24
    assert html.index("… 46 more blocks: plot_tape(y, fold=[name]) opens them") < html.index("<details")
    key = keys(v)
    steps = blocks(tl.tracker(v))
    for block, svg in zip(steps[46:], pictures(html)[1:], strict=True):
        assert {key[node] for node in block.nodes} <= set(titles(svg))


def test_a_block_that_would_fold_into_a_cycle_is_drawn_open():
    """Another thread's operation between two of a block's: folding the block would draw an arrow out of it and
    back in, so the drawing shows every operation instead."""
    y, values = block_with_another_threads_operation()
    [block] = blocks(tl.tracker(y))
    assert block.operations == 4 and tl.tracker(values["b"]) in block.inputs
    drawn = titles(tl.tape_svg(y))
    assert not any(k.startswith("b") for k in drawn) and len(drawn) == len(keys(y))


def _frame_keys(html: str) -> set:
    """The box keys of a stepper frame's drawing (its picture's SVG)."""
    (svg,) = pictures(html)
    return set(titles(svg))


def test_the_steppers_first_frame_shows_the_layers_folded_and_a_step_inside_a_layer_opens_that_layer_only():
    from trackerlab.notebook.stepper.frame_html import frame_html

    loss, labels = scoped_mlp(batch=8, sizes=(12, 6, 3))
    key = keys(loss)
    stepper = tl.BackpropStepper(loss, labels=labels, static_frames=0)
    frames = stepper._frames
    layer1 = {key[n] for n in key if tl.scopes(n) == ("layer 1",)}
    layer2 = {key[n] for n in key if tl.scopes(n) == ("layer 2",)}
    seen = {}
    for i, step in enumerate(frames.walk):
        drawn = _frame_keys(frame_html(tl.tracker(loss), frames, i, lines=12))
        where = tl.scopes(step.node)
        assert f"n{frames.numbered[0][step.node]}" in drawn  # the current node is drawn, not folded away
        if where == ("layer 1",):
            assert layer1 <= drawn and not layer2 & drawn and "b1" in drawn and "b0" not in drawn
        elif where == ("layer 2",):
            assert layer2 <= drawn and not layer1 & drawn and "b0" in drawn and "b1" not in drawn
        else:
            assert {"b0", "b1"} <= drawn and not (layer1 | layer2) & drawn
        seen[where] = True
    assert set(seen) == {(), ("layer 1",), ("layer 2",)}
