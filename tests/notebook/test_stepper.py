"""The stepper widget without a browser: its frames against the engine's walk, its controls, its limits."""

from __future__ import annotations

import math
import re
from urllib.parse import unquote

import numpy as np
import pytest
import traitlets
from markup import picture, pictures

import trackerlab as tl
from trackerlab.notebook.stepper.chain import CHAIN
from trackerlab.presentation.numbering import numbering


def legend_of(frame: str) -> str:
    """The SVG of a frame's legend: a picture of its own, under the drawing's window."""
    [source] = re.findall(
        r'<img class="tl-frame-legend tl-picture" src="data:image/svg\+xml;charset=utf-8,([^"]*)"', frame
    )
    return unquote(source)


def shared_use():
    a, b = tl.param(2.0), tl.param(3.0)
    c = a * b
    y = c + a
    return y, {a: "a", b: "b", c: "c", y: "y"}


def test_frames_follow_the_walk_step_by_step():
    x = tl.param(0.5)
    y = tl.sin(x * x) / tl.exp(x) - tl.tanh(x)
    stepper = tl.BackpropStepper(y)
    walk = list(tl.backprop_steps(y))
    assert len(stepper) == len(walk) == len(stepper.steps)
    for frame, step in zip(stepper.steps, walk):
        assert frame["index"] == step.index
        assert frame["op"] == step.op
        assert frame["delta"] == pytest.approx(float(step.delta))
        sent = [s for a, s in zip(step.args, step.sent) if a is not None]
        assert [e["value"] for e in frame["sent"]] == pytest.approx([float(s) for s in sent])


def test_the_last_frame_grads_equal_back():
    y, labels = shared_use()
    stepper = tl.BackpropStepper(y, labels=labels)
    stepper.index = len(stepper) - 1
    assert stepper.steps[-1]["grads"] == {"a": 4.0, "b": 2.0}
    a, b = (node for node, name in labels.items() if name in "ab" and len(name) == 1)
    tl.zero_grad_(a), tl.zero_grad_(b)
    tl.back_(y)
    assert stepper.steps[-1]["grads"] == {"a": tl.grad(a), "b": tl.grad(b)}
    assert stepper.text.endswith("grads so far: a = 4.0, b = 2.0")


def test_the_last_frame_grads_equal_back_for_arrays():
    rng = np.random.default_rng(0)
    W, b, x = tl.param(rng.normal(size=(3, 2))), tl.param(rng.normal(size=3)), tl.param(rng.normal(size=2))
    h = tl.tanh(W @ x + b)
    loss = tl.sum(h * h) + tl.sum(W)
    stepper = tl.BackpropStepper(loss, labels={W: "W", b: "b", x: "x", h: "h", loss: "loss"})
    final = stepper.steps[-1]["grads"]
    for p in (W, b, x):
        tl.zero_grad_(p)
    tl.back_(loss)
    assert set(final) == {"W", "b", "x"}
    for name, p in (("W", W), ("b", b), ("x", x)):
        np.testing.assert_allclose(np.asarray(final[name]), tl.grad(p), rtol=1e-12)
    # arrays are sent without a written-out product
    assert all(e["formula"] is None for s in stepper.steps for e in s["sent"] if isinstance(e["value"], list))


def test_an_array_output_with_a_sensitivity():
    W, x = tl.param([[1, 2], [3, 4]]), tl.param([5, 6])
    stepper = tl.BackpropStepper(W @ x, [1, -1], labels={W: "W", x: "x"})
    assert [s["node"] for s in stepper.steps] == ["matmul#1", "W", "x"]
    assert stepper.steps[0]["delta"] == [1.0, -1.0]
    assert stepper.steps[-1]["grads"] == {"W": [[5.0, 6.0], [-5.0, -6.0]], "x": [-2.0, -2.0]}
    stepper.index = 2
    assert stepper.text.splitlines()[-1] == "grads so far: W = [5.0, 6.0, -5.0, -6.0] (2×2), x = [-2.0, -2.0]"


def test_a_scalar_product_is_written_out():
    a, b = tl.param(2.0), tl.param(3.0)
    stepper = tl.BackpropStepper(a * b, labels={a: "a", b: "b"})
    assert stepper.text.splitlines() == [
        "step 1 of 3: multiply#1 = a * b",
        "Δ arrived: 1.0  (the seed)",
        "the pullback of multiply sent:",
        "  → a: Δ·b = 1.0 × 3.0 = 3.0",
        "  → b: Δ·a = 1.0 × 2.0 = 2.0",
        "pending: a = 3.0, b = 2.0",
        "grads so far: none yet",
    ]
    sent = stepper.steps[0]["sent"]
    assert (sent[0]["formula"], sent[0]["product"], sent[0]["value"]) == ("Δ·b", "1.0 × 3.0", 3.0)


def test_a_value_used_twice_shows_the_contributions_added():
    y, labels = shared_use()
    stepper = tl.BackpropStepper(y, labels=labels)
    stepper.index = 1
    assert "  → a: Δ·b = 1.0 × 3.0 = 3.0  (a now holds 1.0 + 3.0 = 4.0)" in stepper.text.splitlines()
    stepper.index = 2
    assert stepper.text.splitlines()[:3] == [
        "step 3 of 4: a (a leaf)",
        "Δ arrived: 1.0 + 3.0 = 4.0  (used 2 times: from y, c)",
        "a.grad += 4.0",
    ]
    assert stepper.steps[2]["contributions"] == [{"from": "y", "value": 1.0}, {"from": "c", "value": 3.0}]


def _evaluate(product: str) -> float:
    """The written-out product as arithmetic (× → *, − → -, ² → **2, ^ → **)."""
    expr = product.replace("×", "*").replace("−", "-").replace("²", "**2").replace("^", "**")
    return eval(expr, {"log": math.log, "__builtins__": {}})


BUILD = {
    "add": lambda x, y: x + y,
    "subtract": lambda x, y: x - y,
    "multiply": lambda x, y: x * y,
    "divide": lambda x, y: x / y,
    "power": lambda x, y: x**y,
    "negative": lambda x: -x,
    "identity": lambda x: tl.identity(x),
    "exp": tl.exp,
    "log": tl.log,
    "sin": tl.sin,
    "cos": tl.cos,
    "tanh": tl.tanh,
    "relu": tl.relu,
    "positive": tl.positive,
    "abs": abs,
    "square": tl.square,
    "sqrt": tl.sqrt,
    "reciprocal": tl.reciprocal,
    "tan": tl.tan,
    "sinh": tl.sinh,
    "cosh": tl.cosh,
    "log1p": tl.log1p,
    "expm1": tl.expm1,
    "sigmoid": tl.sigmoid,
}


def test_every_written_out_rule_has_a_check():
    assert set(BUILD) == set(CHAIN)


@pytest.mark.parametrize("op", sorted(CHAIN))
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_written_out_products_give_what_the_engine_sent(op, seed):
    rng = np.random.default_rng(seed)
    build = BUILD[op]
    arity = len(CHAIN[op])
    low = -1.2 if op in ("abs", "relu", "square", "multiply", "tan", "sinh", "cosh", "sigmoid") else 0.3
    xs = [tl.param(float(rng.uniform(low, 1.2))) for _ in range(arity)]
    labels = {x: f"x{i}" for i, x in enumerate(xs)}
    Δ = float(rng.uniform(-2.0, 2.0))
    y = build(*xs)
    assert tl.tracker(y).f.name == op
    stepper = tl.BackpropStepper(y, Δ, labels=labels, static_frames=0)
    frame = stepper.steps[0]
    engine = next(iter(tl.backprop_steps(y, Δ)))
    assert len(frame["sent"]) == arity
    for entry, sent in zip(frame["sent"], engine.sent):
        assert entry["formula"] is not None, entry
        assert entry["formula"].startswith(("Δ", "−Δ"))
        assert _evaluate(entry["product"]) == pytest.approx(float(sent), rel=1e-4)  # factors are rounded to 6 digits
        assert entry["value"] == float(sent)
        assert f"{entry['formula']} = {entry['product']}" in stepper.text


def test_a_product_with_a_negative_sensitivity_keeps_its_signs_apart():
    a, b = tl.param(2.0), tl.param(3.0)
    stepper = tl.BackpropStepper(a - b, -1.5, labels={a: "a", b: "b"})
    assert "  → b: −Δ = −(-1.5) = 1.5" in stepper.text.splitlines()


def test_constants_appear_by_value_and_get_nothing():
    x = tl.param(2.0)
    stepper = tl.BackpropStepper(x * 5, labels={x: "x"})
    assert stepper.steps[0]["args"] == ["x", "5"]
    assert [e["to"] for e in stepper.steps[0]["sent"]] == ["x"]
    assert "  → x: Δ·5 = 1.0 × 5.0 = 5.0" in stepper.text.splitlines()


def test_buttons_slider_and_index_drive_one_another():
    y, labels = shared_use()
    stepper = tl.BackpropStepper(y, labels=labels)
    assert stepper.previous_button.disabled and not stepper.next_button.disabled
    stepper.next_button.click()
    stepper.next_button.click()
    assert stepper.index == 2
    assert stepper.slider.value == 2 and stepper.stack.selected_index == 2
    assert "step 3 of 4: a (a leaf)" in stepper.frame_views[2].value
    stepper.next_button.click()
    assert stepper.index == 3 and stepper.next_button.disabled
    stepper.next_button.click()
    assert stepper.index == 3
    stepper.previous_button.click()
    assert stepper.index == 2
    stepper.slider.value = 0
    assert stepper.index == 0 and stepper.stack.selected_index == 0 and stepper.previous_button.disabled
    stepper.index = 3
    stepper.play.playing = True
    stepper.reset_button.click()
    assert stepper.index == 0 and not stepper.play.playing


def test_the_plain_text_repr_is_short_and_deterministic():
    y, labels = shared_use()
    stepper = tl.BackpropStepper(y, labels=labels)
    assert repr(stepper) == "BackpropStepper(4 steps from y, at step 1: y)"
    stepper.index = 2
    assert stepper._repr_mimebundle_()["text/plain"] == "BackpropStepper(4 steps from y, at step 3: a)"


def test_setting_index_out_of_range_is_a_clear_error():
    y, labels = shared_use()
    stepper = tl.BackpropStepper(y, labels=labels)
    with pytest.raises(traitlets.TraitError, match=r"BackpropStepper.index: 4 is out of range; there are 4 steps"):
        stepper.index = 4
    with pytest.raises(traitlets.TraitError, match=r"-1 is out of range"):
        stepper.index = -1
    assert stepper.index == 0


def test_frames_switch_in_the_browser_through_links():
    y, labels = shared_use()
    stepper = tl.BackpropStepper(y, labels=labels)
    pairs = {(link.source[0], link.source[1], link.target[0], link.target[1]) for link in stepper.links}
    assert (stepper.slider, "value", stepper.stack, "selected_index") in pairs
    assert (stepper.play, "value", stepper.slider, "value") in pairs
    assert (stepper.speed, "value", stepper.play, "interval") in pairs
    # a short walk has every frame drawn up front, for a static page
    assert all("tl-frame-text" in view.value for view in stepper.frame_views)
    assert stepper.play.max == stepper.slider.max == 3


def _chain(length: int):
    x = tl.param(0.1)
    y = x
    for _ in range(length):
        y = tl.sin(y)
    return y


def test_long_walks_draw_frames_lazily():
    y = _chain(9)
    stepper = tl.BackpropStepper(y, static_frames=3)
    assert len(stepper) == 10
    assert [bool(v.value) for v in stepper.frame_views] == [True] + [False] * 9
    assert "10 steps (more than static_frames=3): each frame is drawn by the kernel" in stepper.message.value
    stepper.index = 6
    assert "step 7 of 10" in stepper.frame_views[6].value
    assert not stepper.frame_views[5].value


def test_a_walk_beyond_the_limit_is_cut_with_a_message():
    y = _chain(20)
    stepper = tl.BackpropStepper(y, max_steps=5)
    assert len(stepper) == 5 and stepper.truncated
    assert "the walk has more than 5 steps; showing the first 5" in stepper.message.value
    assert stepper.text.startswith("step 1 of 5+:")
    assert not tl.BackpropStepper(y, static_frames=0).truncated


def test_bad_inputs_are_clear_errors():
    with pytest.raises(TypeError, match="BackpropStepper: y is not tracked"):
        tl.BackpropStepper(3.0)
    with pytest.raises(ValueError, match=r"BackpropStepper: y has shape \(2,\); pass a sensitivity Δ"):
        tl.BackpropStepper(tl.param([1.0, 2.0]) * 2)
    with pytest.raises(ValueError, match="max_steps must be an integer ≥ 1"):
        tl.BackpropStepper(tl.param(1.0) * 2, max_steps=0)
    with pytest.raises(ValueError, match=r"interval must be an integer from 100 to 3000 \(got 50\)"):
        tl.BackpropStepper(tl.param(1.0) * 2, interval=50)
    with pytest.raises(TypeError, match="BackpropStepper: labels must be a mapping from tracked values to names"):
        tl.BackpropStepper(tl.param(1.0) * 2, labels=["x"])
    with pytest.raises(TypeError, match="BackpropStepper: labels has a key of type str; keys must be tracked values"):
        tl.BackpropStepper(tl.param(1.0) * 2, labels={"x": "x"})


def test_states_mark_done_current_pending():
    y, labels = shared_use()
    stepper = tl.BackpropStepper(y, labels=labels)
    frames = stepper._frames
    names = {node: name for node, name in frames.names.items()}
    assert {names[n]: s for n, s in frames.states(0).items()} == {
        "y": "current",
        "c": "pending",
        "a": "pending",
        "b": "waiting",
    }
    assert {names[n]: s for n, s in frames.states(1).items()} == {
        "y": "done",
        "c": "current",
        "a": "pending",
        "b": "pending",
    }
    assert {names[n]: s for n, s in frames.states(3).items()} == {"y": "done", "c": "done", "a": "done", "b": "current"}
    assert {names[n]: g for n, g in frames.grads(2).items()} == {"a": 4.0}
    # the drawing shows what each node has received so far: complete for done nodes, partial for pending
    assert {names[n]: g for n, g in frames.sensitivities(0).items()} == {"y": 1.0, "c": 1.0, "a": 1.0}
    assert {names[n]: g for n, g in frames.sensitivities(1).items()} == {"y": 1.0, "c": 1.0, "a": 4.0, "b": 2.0}


def test_each_frame_draws_the_tape_with_its_states():
    y, labels = shared_use()
    stepper = tl.BackpropStepper(y, labels=labels)
    frame = stepper.frame_views[1].value
    svg = picture(frame)
    for text in (">c = multiply<", ">a = param<", ">Δ 4<"):
        assert text in svg  # a is pending: 4 has reached it, it is not its grad yet
    for text in (">current<", ">pending<", ">done<"):
        assert text in legend_of(frame)
    # nothing is pending at the last step, and the legend still lists every state, so it never jumps; it is a
    # picture of its own under the window, which pans over the drawing and so could hide a legend inside it
    last = stepper.frame_views[3].value
    legend = legend_of(last)
    assert "pending: none" in last and ">pending<" in legend[legend.index('id="legend"') :]
    assert 'id="legend"' not in picture(last)
    assert last.index('class="tl-frame-view"') < last.index("tl-frame-legend")
    assert last.index("</div>", last.index('class="tl-frame-view"')) < last.index("tl-frame-legend")  # outside it


def test_the_text_is_escaped_in_the_frame_html():
    x = tl.param(1.0)
    stepper = tl.BackpropStepper(x * 2, labels={x: "<b>x</b>"})
    assert "&lt;b&gt;x&lt;/b&gt;" in stepper.frame_views[0].value
    assert "<b>x</b>" not in stepper.frame_views[0].value.split("tl-frame-text")[1]


def test_names_count_in_forward_order_and_constants_do_not_read_like_arguments():
    rng = np.random.default_rng(0)
    X, t = rng.normal(size=(8, 2)), rng.normal(size=(8, 1))
    W1, W2, W3 = (tl.param(rng.normal(size=s)) for s in ((2, 4), (4, 4), (4, 1)))
    out = tl.tanh(tl.tanh(X @ W1) @ W2) @ W3
    loss = tl.mean((out - t) ** 2)
    stepper = tl.BackpropStepper(loss, labels={W1: "W1", W2: "W2", W3: "W3"}, static_frames=0)
    by_op = {s["node"]: s["args"] for s in stepper.steps if s["op"] == "matmul"}
    assert by_op["matmul#1"] == ["8×2 constant", "W1"]  # X @ W1 is the first matmul computed
    assert by_op["matmul#3"] == ["tanh#2", "W3"]
    assert stepper.steps[2]["args"] == ["matmul#3", "8×1 constant"]  # the subtraction of the target
    assert stepper.text.startswith("step 1 of 11: mean#1 = mean(power#1)")


def wrong_sin(x):
    """sin with a custom rule 1% too large: what ``tl.check_tape`` exists to find."""
    return tl.track(wrong_sin, x) if tl.istracked(x) else np.sin(x)


@tl.grad_rule(wrong_sin)
def _(x):
    return np.sin(tl.data(x)), lambda Δ: (Δ * 1.01 * np.cos(tl.data(x)),)


def test_a_check_report_marks_wrong_nodes_in_every_frame():
    x = tl.param(0.5)
    s = wrong_sin(x)
    y = s * x
    report = tl.check_tape(y)
    assert report.wrong == (s.tracker,)
    stepper = tl.BackpropStepper(y, check=report)
    for view in stepper.frame_views:
        drawing, legend = picture(view.value), legend_of(view.value)
        assert drawing.count("stroke: var(--tl-wrong,") == 1  # the wrong_sin box
        assert legend.count("stroke: var(--tl-wrong,") == 1  # and its legend entry
        assert "rule disagrees with finite differences" in legend
    assert "stroke: var(--tl-wrong," not in picture(tl.BackpropStepper(y).frame_views[0].value)
    with pytest.raises(TypeError, match=r"BackpropStepper: check must be the report of tl\.check_tape"):
        tl.BackpropStepper(y, check="no")


# ----------------------------------------------------------------------------------------------------
# Outside a live kernel: the self-contained HTML beside the widget view


def test_the_output_carries_a_self_contained_html_copy():
    y, labels = shared_use()
    stepper = tl.BackpropStepper(y, labels=labels)
    bundle = stepper._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle  # live front ends keep the widget
    page = bundle["text/html"]
    # no address to fetch: no CDN, no font, no script source
    assert "http://" not in page.replace("http://www.w3.org", "") and "https://" not in page
    assert "<script src" not in page and "@font-face" not in page and "<link" not in page
    # every frame's text is in the page's data; the first and the last are shown as they are
    data = page[page.index('class="tl-static-frames">') :]
    for i in range(len(stepper)):
        head = stepper._text(i).splitlines()[0]
        assert head in data.replace("\\u003c", "<").replace("\\u003e", ">")
    view = page[page.index('class="tl-static-view"') : page.index('class="tl-static-frames"')]
    assert "step 1 of 4: y = c + a" in view and "step 4 of 4: b (a leaf)" in view
    assert "step 2 of 4" not in view
    assert len(pictures(view)) == 2 and "<svg" not in view  # the first and the last frame's, as pictures
    # the data block cannot end its script early
    assert "</" not in data[: data.index("</script>")]


def test_a_long_walk_keeps_every_frame_text_in_the_html_copy():
    x = tl.param(0.3)
    y = x
    for _ in range(30):
        y = tl.sin(y)
    stepper = tl.BackpropStepper(y, static_frames=5)
    page = stepper.to_html()
    assert page.count("step ") >= 31 and "step 31 of 31: x1 (a leaf)" in page
    assert "step 17 of 31: sin#14 = sin(sin#13)" in page.replace("\\u003c", "<")
    assert len(stepper._drawn) == 2  # the first and the last drawn, the others by their text


def test_the_text_sits_above_the_drawing_and_all_frames_are_equally_tall():
    y, labels = shared_use()
    stepper = tl.BackpropStepper(y, labels=labels)
    heights = set()
    for view in stepper.frame_views:
        assert view.value.index("tl-frame-text") < view.value.index("<img")
        heights.add(re.search(r";min-height:([\d.]+em)\"", view.value).group(1))
    assert heights == {f"{7 * 1.45 + 0.9:.2f}em"}  # the tallest frame has 7 lines
    # the controls come before the frames, nothing tall between them
    kinds = [type(w).__name__ for w in stepper.children]
    assert kinds.index("HBox") < kinds.index("IntSlider") < kinds.index("Stack")


def test_the_legend_lists_every_state_in_every_frame():
    y, labels = shared_use()
    stepper = tl.BackpropStepper(y, labels=labels)
    for view in stepper.frame_views:
        svg = legend_of(view.value)
        legend = svg[svg.index('id="legend"') :]
        for state in ("done", "current", "pending", "waiting"):
            assert f">{state}<" in legend, state


def test_on_a_big_tape_the_drawing_follows_the_current_node():
    x = tl.param(0.5)
    y = x
    for _ in range(200):
        y = y * 1.5
    stepper = tl.BackpropStepper(y, max_steps=150, static_frames=1)
    stepper.index = 120  # multiply#80: far from the output, which a view of the output's end would miss
    node = stepper.steps[120]["node"]
    assert node == "multiply#80"
    svg = picture(stepper.frame_views[120].value)
    assert ">multiply#80<" in svg and ">multiply#200<" not in svg
    assert ">multiply#75<" in svg and ">multiply#85<" in svg  # its neighbours on both sides
    assert "more" in svg


def test_a_closed_stepper_lets_go_of_its_tape_and_is_collected():
    import gc
    import weakref

    from ipywidgets.widgets.widget import _instances  # what Widget.widgets shows

    a, b = tl.param(np.ones(1000)), tl.param(2.0)
    y = tl.sum(a * b)
    before = set(_instances)
    stepper = tl.BackpropStepper(y)
    made = set(_instances) - before
    assert len(made) > 30  # its controls, frames, and their layouts and styles
    node, arrays = weakref.ref(y.tracker), weakref.ref(a.tracker)
    del a, b, y
    gc.collect()
    assert node() is not None  # the open stepper holds its tape
    stepper.close()
    gc.collect()
    assert node() is None and arrays() is None  # closed: the tape is gone while the stepper is referenced
    assert not [w for w in _instances.values() if w.model_id in made]  # and every widget it made is closed
    assert repr(stepper) == "BackpropStepper(4 steps, closed)"
    with pytest.raises(RuntimeError, match=r"BackpropStepper.text: the stepper is closed"):
        _ = stepper.text
    gone = weakref.ref(stepper)
    del stepper
    gc.collect()
    assert gone() is None  # and nothing of the widget machinery keeps the closed stepper alive


def test_frames_keep_arrays_not_lists():
    a = tl.param(np.arange(12.0).reshape(3, 4))
    y = tl.sum(tl.tanh(a) * a)
    stepper = tl.BackpropStepper(y)
    for frame in stepper._frames.frames:
        assert not isinstance(frame["delta"], list)
        assert all(not isinstance(g, list) for g in frame["grads"].values())
    # plain data is still there when asked for, made on the spot
    assert isinstance(stepper.steps[-1]["grads"]["x1"], list)
    expected = np.tanh(a.data) + a.data * (1 - np.tanh(a.data) ** 2)
    np.testing.assert_allclose(np.array(stepper.steps[-1]["grads"]["x1"]), expected, rtol=1e-12)
    assert "3×4 array" in stepper._text(len(stepper) - 1)


def test_a_new_frame_on_a_huge_tape_costs_what_it_shows(monkeypatch):
    """A frame of a 10^5-step walk draws a neighbourhood of the current node: each new frame makes at most
    as many entries and box texts as it draws boxes, and never numbers the whole tape again (the tape is
    numbered once, when the stepper is made). Counted, not timed, so a busy machine cannot make it fail
    (measured: 0.1-0.18 s of CPU a frame; before, 0.35-0.47 s, redrawing the whole tape)."""
    import trackerlab.notebook.common.tape as tape
    import trackerlab.notebook.drawing.boxes as boxes
    import trackerlab.notebook.drawing.figure as drawing
    import trackerlab.notebook.stepper.frames as frames

    x = tl.param(0.5)
    y = x
    for _ in range(100_000):
        y = y * 1.0000001
    stepper = tl.BackpropStepper(y, static_frames=1)
    stepper.index = 1
    from test_drawing import counting

    made = {"entries": 0, "texts": 0, "numberings": 0}
    monkeypatch.setattr(tape, "Entry", counting(tape.Entry, made, "entries"))
    monkeypatch.setattr(drawing, "box_text", counting(drawing.box_text, made, "texts"))
    for module in (boxes, frames, tape):
        monkeypatch.setattr(module, "numbering", counting(module.numbering, made, "numberings"))
    for i in range(2, 8):
        made.update(entries=0, texts=0, numberings=0)
        stepper.index = i * 30
        assert made["numberings"] == 0, made
        assert 0 < made["texts"] <= 60 and made["entries"] <= 3 * 60, made
    assert f">multiply#{100_000 - 7 * 30}<" in picture(stepper.frame_views[7 * 30].value)


def test_with_closes_the_stepper_and_frees_its_tape():
    import gc
    import weakref

    y, labels = shared_use()
    node = weakref.ref(y.tracker)
    with tl.BackpropStepper(y, labels=labels) as stepper:
        assert stepper.text.startswith("step 1 of 4")
    del y, labels
    gc.collect()
    assert node() is None  # the block's end closed it, though `stepper` still names it
    assert repr(stepper) == "BackpropStepper(4 steps, closed)"
    with pytest.raises(ZeroDivisionError), tl.BackpropStepper(tl.param(2.0) * 3.0) as failing:
        raise ZeroDivisionError("in the block")
    assert repr(failing) == "BackpropStepper(2 steps, closed)"  # closed when the block fails too


def test_a_dropped_stepper_is_kept_by_the_widget_registry_until_closed():
    """What ipywidgets does: an open widget is reachable by its front end (``Widget.widgets`` and the kernel's
    comm manager hold it), so a stepper the user no longer names keeps its tape until ``.close()``."""
    import gc
    import weakref

    from ipywidgets.widgets.widget import _instances  # what Widget.widgets shows

    y, labels = shared_use()
    node = weakref.ref(y.tracker)
    stepper = tl.BackpropStepper(y, labels=labels)
    model = stepper.model_id
    del stepper, y, labels
    gc.collect()
    assert node() is not None and model in _instances
    _instances[model].close()
    gc.collect()
    assert node() is None and model not in _instances


def test_ipython_shows_the_widget_then_its_html_copy():
    from IPython.display import display
    from IPython.testing.globalipapp import start_ipython
    from IPython.utils.capture import capture_output

    # display() publishes outputs only in a shell: IPython's test shell, which the magics' tests use too (a
    # plain InteractiveShell made here would stand in their way, with colours in its tracebacks)
    start_ipython()
    y, labels = shared_use()
    stepper = tl.BackpropStepper(y, labels=labels)
    with capture_output() as captured:
        display(stepper)
    widget, copy = (output.data for output in captured.outputs)
    assert set(widget) == {"text/plain", "application/vnd.jupyter.widget-view+json"}
    assert widget["application/vnd.jupyter.widget-view+json"]["model_id"] == stepper.model_id
    assert set(copy) == {"text/html"} and 'class="tl-static-stepper"' in copy["text/html"]
    # the copy names the widget's own class, to give way to it where a kernel draws it, and the reverse
    [live] = [c for c in stepper._dom_classes if c.startswith("tl-live-")]
    ident = copy["text/html"].split('id="', 1)[1].split('"', 1)[0]
    assert f"body:has(.{live}:not(.widget-subarea *)) #{ident} {{ display: none; }}" in copy["text/html"]
    assert f".widget-subarea .{live} {{ display: none !important; }}" in copy["text/html"]
    other = tl.BackpropStepper(y, labels=labels)
    assert live not in other._dom_classes and f".{live} " not in other.to_html()
    stepper.close()
    with capture_output() as captured:
        display(stepper)
    assert [set(o.data) for o in captured.outputs] == [{"text/plain", "application/vnd.jupyter.widget-view+json"}]


def test_a_product_that_disagrees_with_what_the_walk_sent_is_not_shown(monkeypatch):
    """The worked products are checked against the engine: with ``sin``'s rule 1% off, the stepper shows
    the value the walk sent, and no product (which would have said cos(x), not what the engine did)."""
    from trackerlab.ops.registry import operations

    sin = operations()["sin"]
    monkeypatch.setattr(sin, "rule", (lambda g, ans, x: g * tl.cos(x) * 1.01,))
    x = tl.param(0.5)
    stepper = tl.BackpropStepper(tl.sin(x), labels={x: "x"})
    sent = stepper.steps[0]["sent"][0]
    assert sent["value"] == pytest.approx(1.01 * math.cos(0.5), rel=1e-12)  # what the engine sent
    assert sent["formula"] is None and sent["product"] is None
    assert "  → x: 0.886358" in stepper.text.splitlines()
    monkeypatch.undo()
    right = tl.BackpropStepper(tl.sin(x), labels={x: "x"}).steps[0]["sent"][0]
    assert (right["formula"], right["product"]) == ("Δ·cos(x)", "1.0 × 0.877583")


# ----------------------------------------------------------------------------------------------------
# The stepper's drawing of a large tape around the current node: the node's own chain to and from it, with every use
# of a drawn value drawn as an arrow, to a drawn call or to a box for the values not shown.
# ----------------------------------------------------------------------------------------------------


def _layers(n=15):
    """A recurrent cell: each layer uses the parameters w and x again, so both are used by every layer."""
    x, w = tl.param(0.3), tl.param(1.2)
    y = x
    for _ in range(n):
        y = tl.sin(y) * w + x
    return x, w, y


def _edges(svg: str) -> list[tuple[str, str, str]]:
    return re.findall(r'id="edge-(\w+)-(\w+)-(\d*)"', svg)


def _drawn(svg: str) -> set[str]:
    return set(re.findall(r'id="box-(\w+)"', svg))


def test_a_frame_draws_the_chain_around_its_node_and_says_where_the_rest_goes():
    x, w, y = _layers()
    index, _, below = numbering(y.tracker)
    key = {node: f"n{i}" for node, i in index.items()}
    users: dict = {}
    for node, args in below.items():
        for arg in args:
            users.setdefault(key[arg], []).append(key[node])
    with tl.BackpropStepper(y, labels={x: "x", w: "w"}, static_frames=0) as stepper:
        stepper.index = 20
        assert stepper.steps[20]["node"] == "sin#9"
        svg = picture(stepper.frame_views[20].value)
    drawn = _drawn(svg) - {"more", "later"}
    edges = _edges(svg)
    # the node and its neighbours on both sides, not a row of unconnected later calls that use x and w
    names = set(re.findall(r">((?:sin|multiply|add)#\d+)<", svg))
    assert {"sin#9", "add#8", "multiply#9", "add#9", "sin#10"} <= names
    assert not {"add#12", "add#13", "add#14", "add#15"} & names
    node_of = {k: node for node, k in key.items()}
    for k in drawn:
        into = [e for e in edges if e[1] == k]
        for arg in set(below[node_of[k]]):
            if key[arg] in drawn:  # one arrow per use of a drawn argument (x * x: two)
                assert len([e for e in into if e[0] == key[arg]]) == below[node_of[k]].count(arg)
            else:  # an argument not drawn: an arrow from "… N more"
                assert ("more", k, "") in into
        # a drawn value that some value not drawn uses has an arrow to "later values"
        if any(u not in drawn for u in users.get(k, ())):
            assert (k, "later", "") in edges, f"{k} is used by values not drawn, and no arrow says so"
    assert ("n0", "later", "") in edges and ("n1", "later", "") in edges  # x and w are used by later layers
    assert ">later values<" in svg and ">not shown<" in svg
    hidden = len(index) - len(drawn)
    assert f">… {hidden} more<" in svg


def test_the_output_end_of_a_long_chain_is_drawn_as_before():
    z = tl.param(0.5)
    for _ in range(100):
        z = tl.sin(z)
    svg = tl.tape_svg(z, max_nodes=30)
    assert ">… 72 more<" in svg and ">earlier values<" in svg
    assert "later values" not in svg and "box-later" not in svg


# ----------------------------------------------------------------------------------------------------
# Names in the stepper and the drawing are distinct: a name given twice, or given to one value and counted for
# another, never makes ``steps`` (keyed by name) drop a value or give it another value's gradient.
# ----------------------------------------------------------------------------------------------------


def test_a_label_that_is_also_a_counted_name_keeps_both_gradients():
    a, b = tl.param(2.0), tl.param(3.0)
    y = a * b
    with tl.BackpropStepper(y, labels={a: "x2"}) as stepper:  # b, the second parameter, is counted as x2
        final = stepper.steps[-1]["grads"]
        pending = stepper.steps[0]["pending"]
        stepper.index = len(stepper) - 1
        text = stepper.text
    tl.back_(y)
    assert final == {"x2": tl.grad(a), "x2 (n1)": tl.grad(b)} == {"x2": 3.0, "x2 (n1)": 2.0}
    assert pending == {"x2": 3.0, "x2 (n1)": 2.0}
    assert text.endswith("grads so far: x2 = 3.0, x2 (n1) = 2.0")
    svg = tl.tape_svg(y, labels={a: "x2"})
    assert re.findall(r">(x2[^<]*) = param<", svg) == ["x2", "x2 (n1)"]


def test_two_values_given_the_same_name_are_told_apart():
    a, b = tl.param(2.0), tl.param(3.0)
    h = a * b
    y = h * a
    with tl.BackpropStepper(y, labels={a: "w", b: "w", h: "w"}) as stepper:
        final = stepper.steps[-1]["grads"]
        names = [s["node"] for s in stepper.steps]
    tl.back_(y)
    assert final == {"w": tl.grad(a), "w (n1)": tl.grad(b)} == {"w": 12.0, "w (n1)": 4.0}
    assert sorted(names) == sorted(["multiply#2", "w (n2)", "w", "w (n1)"])


def test_labels_of_values_on_another_tape_change_no_name():
    a, b = tl.param(2.0), tl.param(3.0)
    other = tl.param(1.0)
    with tl.BackpropStepper(a * b, labels={other: "x1"}) as stepper:
        assert stepper.steps[-1]["grads"] == {"x1": 3.0, "x2": 2.0}


# ----------------------------------------------------------------------------------------------------
# The stepper's text on a value used a thousand times, or a call of a thousand arguments: a line per item would make
# every frame a page (each frame is as tall as the tallest); the text lists the first few and the last with the count
# of the rest, and ``steps`` keep every one.
# ----------------------------------------------------------------------------------------------------


def _hub(n=2000):
    x = tl.param(0.5)
    y = tl.sum(tl.stack([x * float(i) for i in range(n)]))
    return x, y


def test_a_value_used_six_hundred_times_reads_in_a_line():
    x, y = _hub(600)
    with tl.BackpropStepper(y, labels={x: "x"}, max_steps=700, static_frames=0) as stepper:
        assert len(stepper) == 603
        stepper.index = len(stepper) - 1
        text = stepper.text
        last = stepper.steps[-1]
        assert len(last["contributions"]) == 600  # the plain data keeps every contribution
    tl.back_(y)
    assert last["grads"] == {"x": tl.grad(x)} == {"x": 179700.0}
    arrived = text.splitlines()[1]
    assert arrived == (
        "Δ arrived: 0.0 + 1.0 + 2.0 + 3.0 + 4.0 + 5.0 + … 593 more + 599.0 = 179700.0  "
        "(used 600 times: from multiply#1, multiply#2, multiply#3, multiply#4, multiply#5, multiply#6, "
        "… 593 more, multiply#600)"
    )


def test_a_call_of_two_thousand_arguments_and_its_pending_values():
    x, y = _hub()
    with tl.BackpropStepper(y, labels={x: "x"}, static_frames=0) as stepper:
        stepper.index = 1
        text = stepper.text
        step = stepper.steps[1]
        # every frame is as tall as the tallest: a few dozen lines, not two thousand
        assert stepper._lines < 30
    assert len(step["sent"]) == 2000 and len(step["pending"]) == 2000
    lines = text.splitlines()
    assert lines[0].startswith("step 2 of 300+: stack#1 = stack(multiply#1, multiply#2, ")
    assert lines[0].endswith(", … 1,993 more, multiply#2000)")
    sent = [line for line in lines if line.startswith("  → ")]
    assert sent == [f"  → multiply#{i}: 1.0" for i in (*range(1, 15), 2000)]
    assert "  … 1,985 more" in lines  # 14 + 1985 + 1 = 2000
    pending = next(line for line in lines if line.startswith("pending: "))
    assert pending.endswith(", multiply#14 = 1.0, … 1,985 more, multiply#2000 = 1.0")
    assert len(re.findall(r"multiply#\d+ = 1\.0", pending)) == 15


def test_short_lists_are_written_out_as_before():
    a, b = tl.param(2.0), tl.param(3.0)
    y = a * b + a * a + b
    with tl.BackpropStepper(y, labels={a: "a", b: "b"}) as stepper:
        stepper.index = len(stepper) - 1
        assert "… " not in "\n".join(stepper._text(i) for i in range(len(stepper)))
