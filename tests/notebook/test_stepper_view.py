"""What the stepper shows in each frame, read from its HTML without a browser: the drawing's window placed
on the current node's box, text that reads at 11 px or more, boxes and a text panel that keep their size
from frame to frame, stepping over a block (``tl.scope``) at once, and the zoom."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from markup import picture

import trackerlab as tl
from trackerlab.notebook.stepper import widget as stepper_module
from trackerlab.notebook.stepper.frame_html import PANEL_CHARS, ZOOM, panel_lines

PX = 4 / 3  # CSS pixels per point


def mlp(batch=4, scoped=True):
    """A two-layer perceptron with a softmax cross-entropy loss, its layers in blocks named by tl.scope."""
    rng = np.random.default_rng(0)
    W1, b1 = tl.param(rng.normal(size=(6, 5))), tl.param(np.zeros(6))
    W2, b2 = tl.param(rng.normal(size=(3, 6))), tl.param(np.zeros(3))
    x, t = rng.normal(size=(5, batch)), np.eye(3)[:, rng.integers(0, 3, batch)]

    def layer1(x):
        return tl.tanh(W1 @ x + b1[:, None])

    def layer2(h):
        return W2 @ h + b2[:, None]

    if scoped:
        layer1, layer2 = tl.scope("layer 1")(layer1), tl.scope("layer 2")(layer2)
    out = layer2(layer1(x))
    return -tl.sum(t * tl.log_softmax(out, axis=0)) / batch, {W1: "W1", b1: "b1", W2: "W2", b2: "b2"}


def chain(n=200):
    x = tl.param(0.3)
    y = x
    for _ in range(n // 2):
        y = tl.sin(y) * 1.01
    return y, {x: "x"}


def tiny():
    """A tape narrower than the legend (one value): the drawing sits in the middle of the figure."""
    x = tl.param(2.0)
    return x, {x: "x"}


def boxes(svg: str) -> dict:
    """Each box of the drawing as (left, top, right, bottom) in CSS pixels at the picture's own size."""
    out = {}
    for key, path in re.findall(r'<g id="box-(\w+)">\s*<path d="([^"]*)"', svg):
        numbers = [float(v) for v in re.findall(r"-?[\d.]+", path)]
        xs, ys = numbers[0::2], numbers[1::2]
        out[key] = (min(xs) * PX, min(ys) * PX, max(xs) * PX, max(ys) * PX)
    return out


def current(svg: str) -> str:
    [key] = re.findall(r'<g id="box-(\w+)">\s*<path d="[^"]*" style="[^"]*stroke: var\(--tl-current,', svg)
    return key


def placed(frame: str) -> dict:
    """The window's numbers on the picture: its size, the place of the current box's centre, the box."""
    img = re.search(r"<img [^>]*>", frame).group(0)
    style = dict(re.findall(r"--(\w+):([\d.]+)px", img))
    box = [float(v) for v in re.search(r'data-current="([^"]*)"', img).group(1).split()]
    return {**{k: float(v) for k, v in style.items()}, "box": box}


@pytest.mark.parametrize("tape", [mlp, chain, tiny], ids=["mlp", "chain", "tiny"])
def test_the_window_is_placed_on_the_current_nodes_box(tape):
    y, labels = tape()
    with tl.BackpropStepper(y, labels=labels, static_frames=0) as stepper:
        for i in range(min(5, len(stepper))):
            stepper.index = i
            frame = stepper.frame_views[i].value
            svg = picture(frame)
            where = placed(frame)
            left, top, right, bottom = boxes(svg)[current(svg)]
            # the box, give or take its outline's width
            assert where["box"] == pytest.approx([left, top, right - left, bottom - top], abs=0.2)
            assert (where["x"], where["y"]) == pytest.approx(((left + right) / 2, (top + bottom) / 2), abs=0.2)
            width, height = (float(v) * PX for v in re.search(r'width="([\d.]+)pt" height="([\d.]+)pt"', svg).groups())
            assert (where["w"], where["h"]) == pytest.approx((width, height), abs=0.1)


def test_the_smallest_text_of_the_drawing_reads_at_11_px():
    y, labels = mlp()
    with tl.BackpropStepper(y, labels=labels) as stepper:
        sizes = {
            float(s)
            for i in range(3)
            for s in re.findall(r"font-size: ([\d.]+)px", picture(stepper.frame_views[i].value))
        }
    assert min(sizes) * PX * ZOOM >= 12  # 8.25 pt at 1.1 times: 12.1 px
    assert f"--tl-zoom: {ZOOM};" in stepper_module._STYLE
    zooms = [float(z) for z in re.findall(r"\.tl-zoom-\d \{ --tl-zoom: ([\d.]+); \}", stepper_module._STYLE)]
    assert zooms == [1.4, 1.8]


def test_boxes_keep_their_size_when_their_delta_arrives():
    y, labels = mlp()
    with tl.BackpropStepper(y, labels=labels) as stepper:
        drawn = [boxes(picture(view.value)) for view in stepper.frame_views]
    assert len(drawn) == len(stepper) > 10
    for key in drawn[0]:
        sizes = {
            (round(b[2] - b[0], 1), round(b[3] - b[1], 1)) for frame in drawn for k, b in frame.items() if k == key
        }
        assert len(sizes) == 1, (key, sizes)
    # the window the drawing shows in is the same on every frame (its layers open and close as the walk goes
    # through them, the drawing with them); without blocks, the whole drawing is the same size on every frame
    assert len({re.search(r"--tl-view-h:[^\"]+", view.value).group(0) for view in stepper.frame_views}) == 1
    y, labels = mlp(scoped=False)
    with tl.BackpropStepper(y, labels=labels) as stepper:
        drawings = {re.search(r"--w:[\d.]+px;--h:[\d.]+px", view.value).group(0) for view in stepper.frame_views}
    assert len(drawings) == 1


def test_the_text_panel_is_as_tall_as_the_tallest_frame_with_its_lines_wrapped():
    assert panel_lines("a" * PANEL_CHARS) == 1
    assert panel_lines("a" * (PANEL_CHARS + 1)) == 2
    assert panel_lines("ab " * (PANEL_CHARS // 3) + "c") == 2  # the last word goes to the next line
    assert panel_lines("あ" * (PANEL_CHARS // 2 + 1)) == 2  # wide characters take two columns
    assert panel_lines("one\n\nthree") == 3
    long = {tl.param(2.0): "a_rather_long_name_for_a_parameter_that_the_panel_must_wrap"}
    (a,) = long
    y = a * a * 3.0
    with tl.BackpropStepper(y, labels=long) as stepper:
        heights = {re.search(r";min-height:([\d.]+)em", view.value).group(1) for view in stepper.frame_views}
        tallest = max(panel_lines(stepper._text(i)) for i in range(len(stepper)))
        assert tallest > max(stepper._text(i).count("\n") + 1 for i in range(len(stepper)))  # lines wrapped
    assert heights == {f"{tallest * 1.45 + 0.9:.2f}"}
    assert f"calc({PANEL_CHARS}ch + 18px)" in stepper_module._STYLE  # the panel's width, the same for all frames


def test_step_over_goes_to_the_step_after_the_blocks_last_one():
    y, labels = mlp()
    with tl.BackpropStepper(y, labels=labels) as stepper:
        scopes = [tuple(step["scope"]) for step in stepper.steps]
        nodes = [step["node"] for step in stepper.steps]
        assert stepper.over_button.disabled  # the loss is outside every block
        stepper.step_over()
        assert stepper.index == 0
        # layer 2 is followed by its weight W2 (made outside it), then by layer 1
        start = scopes.index(("layer 2",))
        stepper.index = start
        assert not stepper.over_button.disabled
        assert stepper.text.splitlines()[1] == "in block: layer 2"
        stepper.over_button.click()
        assert nodes[stepper.index] == "W2" and scopes[stepper.index - 1] == ("layer 2",)
        assert set(scopes[start : stepper.index]) == {("layer 2",)}
        # the walk reaches b2 in the middle of layer 1: stepping over layer 1 passes it, to W1 after it
        start = scopes.index(("layer 1",))
        assert "b2" in nodes[start:] and nodes.index("b2") < len(scopes) - scopes[::-1].index(("layer 1",))
        stepper.index = start
        stepper.step_over()
        assert nodes[stepper.index] == "W1"
        assert stepper.index == max(i for i, s in enumerate(scopes) if s == ("layer 1",)) + 1
        # the static copy steps over the same blocks
        page = stepper.to_html()
        over = json.loads(re.search(r"var over = (\[[^\]]*\])", page).group(1))
        assert over == [stepper._frames.over(i) for i in range(len(stepper))]
        assert over[start] == stepper.index and over[0] is None


def test_a_block_ends_at_the_first_operation_outside_it():
    x = tl.param(0.5)

    @tl.scope
    def dense(v):
        return tl.tanh(v * 2.0)

    y = dense(tl.sin(dense(x)))  # two calls of the same block, with sin between them
    with tl.BackpropStepper(y) as stepper:
        assert [s["node"] for s in stepper.steps][:3] == ["tanh#2", "multiply#2", "sin#1"]
        stepper.step_over()
        assert stepper.steps[stepper.index]["node"] == "sin#1"


def test_step_over_a_block_that_goes_on_to_the_end_goes_to_the_last_step():
    x = tl.param(np.array([0.5, -1.0]))
    with tl.scope("all"):
        y = tl.sum(tl.sin(x) * x)
    with tl.BackpropStepper(y) as stepper:
        assert [s["scope"] for s in stepper.steps] == [["all"]] * (len(stepper) - 1) + [[]]  # x is made outside
        stepper.step_over()
        assert stepper.index == len(stepper) - 1
        assert stepper.over_button.disabled


def test_nested_blocks_are_stepped_over_innermost_first():
    x = tl.param(0.7)
    with tl.scope("model"):
        with tl.scope("inner"):
            h = tl.sin(x) * 2.0
        y = tl.exp(h) + h
    with tl.BackpropStepper(y) as stepper:
        scopes = [tuple(s["scope"]) for s in stepper.steps]
        inner = scopes.index(("model", "inner"))
        stepper.index = inner
        assert stepper.text.splitlines()[1] == "in block: model › inner"
        stepper.step_over()
        assert scopes[stepper.index] != ("model", "inner")
        assert all(s == ("model", "inner") for s in scopes[inner : stepper.index])


def test_the_zoom_sets_the_drawings_scale_on_the_whole_stepper():
    y, labels = mlp()
    with tl.BackpropStepper(y, labels=labels) as stepper:
        assert not {"tl-zoom-2", "tl-zoom-3"} & set(stepper._dom_classes)
        stepper.zoom.value = 3
        assert "tl-zoom-3" in stepper._dom_classes and "tl-zoom-2" not in stepper._dom_classes
        stepper.zoom.value = 2
        assert "tl-zoom-2" in stepper._dom_classes and "tl-zoom-3" not in stepper._dom_classes
        stepper.zoom.value = 1
        assert not {"tl-zoom-2", "tl-zoom-3"} & set(stepper._dom_classes)


def shown_in_window(frame: str, view: tuple) -> set:
    """The keys of the boxes wholly inside the drawing's window of ``view`` CSS pixels (width, height), placed
    as the stepper's style sheet places it: centred on the current box, within the picture, at ``ZOOM``."""
    svg, where = picture(frame), placed(frame)
    width, height = (v / ZOOM for v in view)
    left = min(max(where["x"] - width / 2, 0), max(where["w"] - width, 0))
    top = min(max(where["y"] - height / 2, 0), max(where["h"] - height, 0))
    return {
        key
        for key, (x0, y0, x1, y1) in boxes(svg).items()
        if left <= x0 and x1 <= left + width and top <= y0 and y1 <= top + height
    }


def test_a_long_chain_fills_the_window_as_a_snake():
    """On a long chain the window shows seven to nine whole boxes around the current node's, not three (one
    column): the first frame lays the neighbourhood out as a snake as long as the window, and every frame
    keeps that."""
    from trackerlab.notebook.stepper.frame_html import VIEW

    y, labels = chain(2000)
    with tl.BackpropStepper(y, labels=labels, static_frames=0) as stepper:
        for i in range(4):
            stepper.index = i
            frame = stepper.frame_views[i].value
            window = (VIEW[0], float(re.search(r"--tl-view-h:([\d.]+)px", frame).group(1)))
            shown = shown_in_window(frame, window)
            assert current(picture(frame)) in shown
            assert len(shown) >= 7, (i, sorted(shown))
        assert stepper._frames.window["wrap"] is not None
