"""``plot_tape`` and ``tape_svg``: the geometry of the SVG (every use its own edge, no edge through a box,
text inside its box), colours and states by node, the theme, the backend left alone, and the cost."""

from __future__ import annotations

import itertools
import math
import re
import subprocess
import sys
import textwrap
import types
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from markup import picture

import trackerlab as tl
from trackerlab.notebook.common.theme import COLOURS

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


# ----------------------------------------------------------------------------------------------------
# Examples: the tapes the tutorials teach with, and random ones


def x_times_x_plus_x():
    x = tl.param(3.0)
    y = x * x + x
    tl.back_(y)
    return y, {x: "x", y: "y"}


def tanh_u2_plus_u():
    u = tl.param(0.5)
    v = tl.tanh(u * 2) + u
    return v, {u: "u", v: "v"}


def mlp():
    rng = np.random.default_rng(0)
    X, t = rng.normal(size=(8, 2)), rng.normal(size=(8, 1))
    W1, b1 = tl.param(rng.normal(size=(2, 6))), tl.param(np.zeros(6))
    W2, b2 = tl.param(rng.normal(size=(6, 6))), tl.param(np.zeros(6))
    W3, b3 = tl.param(rng.normal(size=(6, 1))), tl.param(np.zeros(1))
    h1 = tl.tanh(X @ W1 + b1)
    h2 = tl.tanh(h1 @ W2 + b2)
    loss = tl.mean((h2 @ W3 + b3 - t) ** 2)
    tl.back_(loss)
    return loss, {W1: "W1", b1: "b1", W2: "W2", b2: "b2", W3: "W3", b3: "b3", loss: "loss"}


def random_dag(seed: int):
    rng = np.random.default_rng(seed)
    values = [tl.param(float(v)) for v in rng.uniform(0.5, 1.5, size=3)]
    ops = [lambda a, b: a + b, lambda a, b: a * b, lambda a, b: a - b, lambda a, b: tl.sin(a), lambda a, b: a * 2.0]
    for _ in range(14):
        i, j = rng.integers(len(values), size=2)
        if rng.random() < 0.7:  # mostly recent values, so edges of every length appear
            i = len(values) - 1 - min(i, 2)
        values.append(ops[rng.integers(len(ops))](values[i], values[j]))
    return sum(values[-4:], values[0]), {}


EXAMPLES = {"x*x+x": x_times_x_plus_x, "tanh(u*2)+u": tanh_u2_plus_u, "mlp": mlp}
EXAMPLES.update({f"random{seed}": (lambda seed=seed: random_dag(seed)) for seed in range(6)})


# ----------------------------------------------------------------------------------------------------
# The SVG's geometry: boxes as rectangles, edges as polylines


def _numbers(d: str):
    return [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", d)]


def polyline(d: str, steps: int = 24) -> list[tuple[float, float]]:
    """The path ``d`` (absolute M, L, C and z, as matplotlib writes them) sampled as points."""
    points: list = []
    for command, args in re.findall(r"([MLCz])([^MLCz]*)", d):
        values = _numbers(args)
        if command == "M":
            points.append(tuple(values[:2]))
        elif command == "L":
            start = points[-1]
            end = tuple(values[:2])
            points.extend(
                (start[0] + (end[0] - start[0]) * t / steps, start[1] + (end[1] - start[1]) * t / steps)
                for t in range(1, steps + 1)
            )
        elif command == "C":
            p0, (p1, p2, p3) = points[-1], (tuple(values[0:2]), tuple(values[2:4]), tuple(values[4:6]))
            for k in range(1, steps + 1):
                t = k / steps
                a, b, c, e = (1 - t) ** 3, 3 * (1 - t) ** 2 * t, 3 * (1 - t) * t**2, t**3
                points.append(
                    (a * p0[0] + b * p1[0] + c * p2[0] + e * p3[0], a * p0[1] + b * p1[1] + c * p2[1] + e * p3[1])
                )
    return points


def geometry(svg: str):
    """Boxes (key → (x0, y0, x1, y1)), edges ((source, target, position) → polyline, tip) and labels."""
    root = ET.fromstring(svg[svg.index("<svg") :])
    boxes, edges, heads, labels = {}, {}, {}, {}
    for group in root.iter(f"{SVG}g"):
        gid = group.get("id", "")
        kind, _, rest = gid.partition("-")
        if kind == "box":
            xs, ys = [], []
            for path in group.iter(f"{SVG}path"):
                v = _numbers(path.get("d"))
                xs += v[0::2]
                ys += v[1::2]
            boxes[rest] = (min(xs), min(ys), max(xs), max(ys), group)
        elif kind in ("edge", "head"):
            source, target, position = rest.split("-")
            key = (source, target, int(position) if position else None)
            assert key not in (edges if kind == "edge" else heads), f"two edges drawn as {gid}"
            path = next(group.iter(f"{SVG}path")).get("d")
            (edges if kind == "edge" else heads)[key] = polyline(path)
        elif kind == "label":
            source, target, position = rest.split("-")
            labels[(source, target, int(position))] = "".join(group.itertext()).strip()
    return boxes, edges, heads, labels


def inside(point, box, margin=0.5) -> bool:
    x, y = point
    return box[0] + margin < x < box[2] - margin and box[1] + margin < y < box[3] - margin


def recorded_uses(y) -> set:
    """Every (argument's key, call's key, position) the engine recorded, read from the nodes themselves, and
    the uses of arrays given as constants, which are drawn as boxes of their own (a number is written into
    its call's text instead)."""
    graph = tl.to_networkx(y)
    key = {graph.nodes[k]["node"]: k for k in graph if graph.nodes[k]["node"] is not None}
    uses = set()
    for node, k in key.items():
        if not node.isleaf:
            for position, arg in enumerate(node.f.args):
                if isinstance(arg, tl.Tracked):
                    uses.add((key[arg], k, position + 1))
    for k in graph:
        if graph.nodes[k]["const"] and np.ndim(graph.nodes[k]["data"]):
            uses |= {(k, target, position + 1) for _, target, position in graph.out_edges(k, data="position")}
    return uses


def assert_edges_connect_their_boxes(svg: str, y=None) -> tuple:
    """Every recorded use of ``y``'s tape (when given: all of it is drawn) is one edge, and every edge runs from
    its source's border to its target's (arrowhead included), through no other box; no two boxes overlap;
    argument numbers are the positions. Returns the geometry."""
    boxes, edges, heads, arg_labels = found = geometry(svg)
    assert set(edges) == set(heads)
    if y is not None:
        assert set(edges) == recorded_uses(y)
    for (source, target, position), points in edges.items():
        for key, box in boxes.items():
            if key not in (source, target):
                assert not any(inside(p, box) for p in points), f"edge {source}→{target} ({position}) crosses {key}"
        # it starts on its source's side and ends (arrowhead included) at its target's border
        s, t = boxes[source], boxes[target]
        assert s[0] - 1 <= points[0][0] <= s[2] + 1 and s[1] - 1 <= points[0][1] <= s[3] + 1
        tip = heads[(source, target, position)][0]
        assert t[0] - 1 <= tip[0] <= t[2] + 1 and t[1] - 1 <= tip[1] <= t[3] + 1
        assert not inside(tip, t, margin=2)
        assert not any(inside(p, s, margin=2) or inside(p, t, margin=2) for p in points)  # it leaves, it arrives
        assert math.dist(points[-1], tip) == pytest.approx(0.09 * 72, abs=0.3)  # the line runs into its arrowhead
    for a in boxes:
        for b in boxes:
            if a < b:
                A, B = boxes[a], boxes[b]
                assert A[2] <= B[0] or B[2] <= A[0] or A[3] <= B[1] or B[3] <= A[1], f"{a} overlaps {b}"
    # argument numbers where a call has several operands: x*x is two arrows, 1 and 2
    for (_, _, position), text in arg_labels.items():
        assert text == str(position)
    return found


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_every_use_is_its_own_edge_and_no_edge_crosses_a_box(name):
    y, labels = EXAMPLES[name]()
    assert_edges_connect_their_boxes(tl.tape_svg(y, labels=labels), y)


def test_x_times_x_is_two_arrows_numbered_1_and_2():
    y, labels = x_times_x_plus_x()
    _, edges, _, arg_labels = geometry(tl.tape_svg(y, labels=labels))
    assert sorted(edges) == [("n0", "n1", 1), ("n0", "n1", 2), ("n0", "n2", 2), ("n1", "n2", 1)]
    assert arg_labels == {k: str(k[2]) for k in edges}
    first, second = edges[("n0", "n1", 1)], edges[("n0", "n1", 2)]
    assert abs(first[-1][1] - second[-1][1]) > 5  # two ports, apart
    # the second use of x skips a layer: it bends around the multiply box, not under it
    assert len(edges[("n0", "n2", 2)]) > len(first)


def test_text_stays_inside_its_box():
    x = tl.param(np.ones((3, 4)))
    t = tl.param(2.0)
    loss = tl.sum(tl.log_softmax(x * 1e-7, axis=1)) * t
    figure = tl.plot_tape(loss, labels={x: "a rather long input name", loss: "loss = cross_entropy"})
    renderer = figure.canvas.get_renderer()
    patches = {
        p.get_gid(): p.get_window_extent(renderer)
        for p in figure.axes[0].patches
        if (p.get_gid() or "").startswith("box-")
    }
    checked = 0
    for text in figure.axes[0].texts:
        extent = text.get_window_extent(renderer)
        centre = ((extent.x0 + extent.x1) / 2, (extent.y0 + extent.y1) / 2)
        owner = [b for b in patches.values() if b.x0 <= centre[0] <= b.x1 and b.y0 <= centre[1] <= b.y1]
        if owner:
            box = owner[0]
            assert box.x0 <= extent.x0 + 0.5 and extent.x1 <= box.x1 + 0.5, text.get_text()
            checked += 1
    assert checked >= 2 * len(patches)  # a title and a body in every box
    shown = [t.get_text() for t in figure.axes[0].texts]
    assert "loss = cross_entropy = multiply" in shown  # the user's name and the operation; the call below
    assert any("\n= sum#1 * x2\n" in t for t in shown)


# ----------------------------------------------------------------------------------------------------
# Colours and states, node by node


def box_style(svg: str, key: str) -> str:
    boxes = geometry(svg)[0]
    return next(boxes[key][4].iter(f"{SVG}path")).get("style")


def test_states_colour_each_box_and_the_highlight_marks_one():
    a, b = tl.param(2.0), tl.param(3.0)
    c = a * b
    y = c + a
    svg = tl.tape_svg(y, states={y: "done", c: "pending", b: "waiting"}, highlight=a)
    keys = {"a": "n0", "b": "n1", "c": "n2", "y": "n3"}
    expected = {"y": "done-fill", "c": "pending-fill", "b": "waiting-fill", "a": "current-fill"}
    for name, role in expected.items():
        style = box_style(svg, keys[name])
        assert f"fill: var(--tl-{role}, {COLOURS[role]})" in style, (name, style)
    assert f"stroke: var(--tl-current, {COLOURS['current']})" in box_style(svg, "n0")
    assert "--tl-current," not in box_style(svg, "n1")
    plain = tl.tape_svg(y)
    assert f"fill: var(--tl-param-fill, {COLOURS['param-fill']})" in box_style(plain, "n0")
    assert f"fill: var(--tl-op-fill, {COLOURS['op-fill']})" in box_style(plain, "n3")
    legend = [t.get_text() for t in tl.plot_tape(y, states={y: "done"}, highlight=a).axes[0].get_legend().get_texts()]
    assert legend == ["parameter (leaf)", "operation", "done", "current"]
    with pytest.raises(
        ValueError, match="plot_tape: states must be one of done, current, pending, waiting, not 'busy'"
    ):
        tl.plot_tape(c, states={a: "busy"})


def test_sensitivities_are_delta_and_only_processed_leaves_have_grads():
    a, b = tl.param(2.0), tl.param(3.0)
    c = a * b
    steps = list(tl.backprop_steps(c))
    figure = tl.plot_tape(
        c, states={c: "done", a: "current", b: "pending"}, grads={c: 1.0, a: steps[0].sent[0], b: 2.0}
    )
    shown = [t.get_text() for t in figure.axes[0].texts]
    assert "n0 · scalar float64\ndata 2\ngrad 3" in shown  # a leaf being processed: its grad
    assert "n1 · scalar float64\ndata 3\nΔ 2" in shown  # a leaf still pending: a sensitivity, not a grad yet
    assert "n2 · scalar float64\n= x1 * x2\ndata 6\nΔ 1" in shown


def test_a_check_report_marks_its_wrong_nodes_in_red():
    x = tl.param(0.5)
    s = tl.sin(x)
    y = s * x
    report = types.SimpleNamespace(wrong=(s.tracker,))
    svg = tl.tape_svg(y, check=report)
    red = f"stroke: var(--tl-wrong, {COLOURS['wrong']})"
    assert red in box_style(svg, "n1")
    assert red not in box_style(svg, "n0") and red not in box_style(svg, "n2")
    assert "rule disagrees with finite differences" in svg
    assert "rule disagrees" not in tl.tape_svg(y, check=types.SimpleNamespace(wrong=()))
    legend = [t.get_text() for t in tl.plot_tape(y, check=report).axes[0].get_legend().get_texts()]
    assert legend[-1] == "rule disagrees with finite differences"
    with pytest.raises(TypeError, match=r"plot_tape: check must be a report of tl.check_tape \(with .wrong"):
        tl.plot_tape(y, check=[s])
    with pytest.raises(TypeError, match=r"plot_tape: check\.wrong has a key of type str"):
        tl.plot_tape(y, check=types.SimpleNamespace(wrong=("sin",)))


# ----------------------------------------------------------------------------------------------------
# Names, keys and summaries


def texts(figure):
    return [t.get_text() for ax in figure.axes for t in ax.texts]


def test_boxes_show_names_keys_data_and_grads():
    W, x = tl.param([[1, 2], [3, 4]]), tl.param([5, 6])
    y = W @ x
    tl.back_(y, [1, -1])
    shown = texts(tl.plot_tape(y, labels={W: "W", x: "x"}))
    assert "W = param" in shown and "x = param" in shown and "matmul#1" in shown
    assert "n1 · 2 float64\ndata [5, 6]\ngrad [-2, -2]" in shown
    assert "n2 · 2 float64\n= W @ x\ndata [17, 39]" in shown


def test_keys_and_names_count_forward_without_gaps():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(4, 2))
    W1, W2, W3 = (tl.param(rng.normal(size=s)) for s in ((2, 3), (3, 3), (3, 1)))
    h = tl.tanh(X @ W1) * 0.5
    out = tl.sum(tl.tanh(h @ W2) @ W3)
    shown = texts(tl.plot_tape(out, labels={W1: "W1", W2: "W2", W3: "W3"}, max_nodes=100))
    heads = [t for t in shown if "#" in t and "\n" not in t]
    assert heads == ["matmul#1", "tanh#1", "multiply#1", "matmul#2", "tanh#2", "matmul#3", "sum#1"]
    keys = [int(m) for t in shown for m in re.findall(r"^n(\d+) ·", t)]
    assert sorted(keys) == list(range(10))  # 3 params and 7 calls; the constants X and 0.5 take no number
    assert any(t.startswith("n3 · 4×3 float64\n= const 4×2 @ W1\ndata ") for t in shown)  # X, a box of its own
    assert any(t.startswith("n5 · 4×3 float64\n= tanh#1 * 0.5\ndata ") for t in shown)  # 0.5, written in
    svg = tl.tape_svg(out, labels={W1: "W1", W2: "W2", W3: "W3"})
    assert sorted(geometry(svg)[0]) == ["c0"] + [f"n{i}" for i in range(10)]


def test_large_tapes_show_the_part_nearest_the_output():
    z = tl.param(0.5)
    for _ in range(100):
        z = tl.sin(z)
    figure = tl.plot_tape(z, max_nodes=30)
    shown = texts(figure)
    assert "… 72 more" in shown
    assert [t for t in shown if t.startswith("sin#")] == [f"sin#{i}" for i in range(72, 101)]
    boxes, edges, _, _ = geometry(tl.tape_svg(z, max_nodes=30))
    assert ("more", "n72", None) in edges and len(boxes) == 30


def test_constants_written_in_their_call_or_drawn_as_boxes():
    x = tl.param(2.0)
    y = tl.sin(x) * 3
    folded = texts(tl.plot_tape(y))
    assert "n2 · scalar float64\n= sin#1 * 3\ndata 2.72789" in folded and "const" not in folded
    boxes = texts(tl.plot_tape(y, constants=True))
    assert "const" in boxes and "c0 · scalar\ndata 3" in boxes
    assert ("c0", "n2", 2) in geometry(tl.tape_svg(y, constants=True))[1]


def test_bad_options_are_named():
    y = tl.param(1.0) * 2
    with pytest.raises(ValueError, match="plot_tape: format must be None"):
        tl.plot_tape(y, format="pdf")
    with pytest.raises(ValueError, match="plot_tape: max_nodes must be an integer of at least 2"):
        tl.plot_tape(y, max_nodes=1)
    with pytest.raises(ValueError, match="plot_tape: direction must be one of auto, right, down, not 'up'"):
        tl.plot_tape(y, direction="up")
    with pytest.raises(TypeError, match="plot_tape: y is not tracked"):
        tl.plot_tape(np.ones(3))
    with pytest.raises(TypeError, match="plot_tape: highlight has a key of type int"):
        tl.plot_tape(y, highlight=3)


# ----------------------------------------------------------------------------------------------------
# Fitting the notebook and its theme


def svg_size(svg: str) -> tuple[float, float]:
    m = re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', svg)
    return float(m.group(1)), float(m.group(2))


def test_small_tapes_read_left_to_right_and_deep_ones_top_down_at_full_size():
    y, labels = x_times_x_plus_x()
    boxes = geometry(tl.tape_svg(y, labels=labels))[0]
    assert boxes["n0"][2] < boxes["n1"][0] < boxes["n1"][2] < boxes["n2"][0]  # left to right
    loss, labels = mlp()
    svg = tl.tape_svg(loss, labels=labels)
    boxes = geometry(svg)[0]
    assert boxes["n0"][3] < boxes["n1"][1] and boxes["n15"][3] < boxes["n16"][1]  # top to bottom
    width, _ = svg_size(svg)
    assert width <= 9 * 72  # fits an ordinary notebook column without shrinking its text
    assert min(float(v) for v in re.findall(r"font-size: ([\d.]+)px", svg)) >= 8.25
    right = tl.tape_svg(loss, labels=labels, direction="right")
    assert svg_size(right)[0] > 9 * 72 and geometry(right)[0]["n0"][2] < geometry(right)[0]["n1"][0]


def test_in_html_the_drawing_is_a_picture_that_never_overflows_the_output_and_follows_the_theme():
    """In HTML the drawing is an <img> of the SVG (which untrusted notebooks keep, where they drop inline
    <svg> and <style>), with its width and height, at most as wide as the output; inside it, dark colours
    come from the SVG's own prefers-color-scheme, which the page's theme sets through color-scheme."""
    from trackerlab.notebook.drawing import svg_markup

    loss, labels = mlp()
    markup = svg_markup(loss, labels=labels)
    assert markup.startswith('<div class="tl-tape-scroll" style="overflow-x:auto;max-width:100%">')
    tag = re.search(r"<img [^>]*>", markup).group(0)
    width, height = (int(v) for v in re.search(r'width="(\d+)" height="(\d+)"', tag).groups())
    assert f'style="max-width:100%;min-width:{round(0.7 * width)}px;height:auto"' in tag
    assert "<svg" not in markup.replace("%3Csvg", "")  # no inline SVG: only the picture's data URI holds one
    svg = picture(markup)
    assert svg == tl.tape_svg(loss, labels=labels)[tl.tape_svg(loss, labels=labels).index("<svg") :]
    points = [float(v) for v in re.search(r'width="([\d.]+)pt" height="([\d.]+)pt"', svg).groups()]
    assert (width, height) == (round(points[0] * 4 / 3), round(points[1] * 4 / 3))  # CSS pixels of its points
    assert "#" not in tag and "\n" not in tag and '"' not in tag.split('src="')[1].split('"')[0]
    # the page's theme reaches the picture through its color-scheme, where the page's styles run
    page_css = re.search(r"<style>(.*?)</style>", markup).group(1)
    assert (
        'body[data-jp-theme-light="false"] img.tl-picture,body[data-theme="dark"] img.tl-picture{color-scheme:dark}'
        in page_css
    )
    assert (
        'body[data-jp-theme-light="true"] img.tl-picture,body[data-theme="light"] img.tl-picture{color-scheme:light}'
        in page_css
    )
    css = re.search(r"<style[^>]*>(.*?)</style>", svg, re.S).group(1)
    assert "@media (prefers-color-scheme:dark)" in css and ":root.tl-tape{--tl-bg:#111111" in css.replace(
        'body:not([data-jp-theme-light="true"]):not([data-theme="light"]) .tl-tape,', ""
    )
    assert "var(--jp-content-font-color1, var(--tl-text, #1f2328))" in svg
    # every colour in the drawing is a themed variable
    assert not re.findall(r"(?:fill|stroke): #", svg)


def test_figure_repr_is_themed_svg_and_names_the_tape():
    x = tl.param([1.0, 2.0])
    figure = tl.plot_tape(tl.sum(x * 3))
    assert repr(figure) == "<TapeFigure: the tape of 3 values>"
    assert repr(tl.plot_tape(x)) == "<TapeFigure: the tape of 1 value>"
    bundle = figure._repr_mimebundle_()
    assert set(bundle) == {"text/html", "image/svg+xml", "text/plain"}
    assert bundle["image/svg+xml"].startswith("<?xml") and 'class="tl-tape"' in bundle["image/svg+xml"]
    svg = bundle["image/svg+xml"]
    assert picture(bundle["text/html"]) == svg[svg.index("<svg") :]  # the same drawing, as a picture
    assert 'alt="&lt;TapeFigure: the tape of 3 values&gt;"' in bundle["text/html"]
    assert bundle["image/svg+xml"] == tl.tape_svg(tl.sum(x * 3))  # a new tape of the same computation


def test_draws_into_a_given_axes():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure()
    FigureCanvasAgg(figure)
    ax = figure.add_subplot()
    assert tl.plot_tape(tl.param(2.0) * 3, ax) is figure
    assert "multiply#1" in texts(figure)


# ----------------------------------------------------------------------------------------------------
# Like any matplotlib figure, without touching the backend


def run_python(code: str, backend: str | None) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp"}
    if backend:
        env["MPLBACKEND"] = backend
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env, timeout=120
    )


@pytest.mark.parametrize("backend", ["svg", "pdf", "agg"])
def test_the_backend_the_user_chose_is_kept_and_show_and_savefig_work(backend, tmp_path):
    code = f"""
        import io, matplotlib
        matplotlib.use({backend!r})
        import matplotlib.pyplot as plt
        import trackerlab as tl
        before = matplotlib.get_backend()
        x = tl.param([1.0, 2.0])
        fig = tl.plot_tape(tl.sum(x * x))
        assert matplotlib.get_backend() == before == {backend!r}, (before, matplotlib.get_backend())
        assert plt.gcf() is fig and plt.get_fignums() == [fig.number]  # pyplot knows it: plt.show() shows it
        plt.show()
        fig.savefig({str(tmp_path / "tape.png")!r}); fig.savefig({str(tmp_path / "tape.svg")!r})
        print(type(fig.canvas).__name__)
    """
    out = run_python(code, None)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().lower().startswith(f"figurecanvas{backend}")
    assert (tmp_path / "tape.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "multiply#1" in (tmp_path / "tape.svg").read_text()


def test_svg_text_and_the_stepper_never_touch_pyplot():
    code = """
        import sys, trackerlab as tl
        x = tl.param(2.0)
        svg = tl.tape_svg(x * x)
        tl.BackpropStepper(x * x)
        assert "matplotlib.pyplot" not in sys.modules
    """
    out = run_python(code, "svg")
    assert out.returncode == 0, out.stderr


def test_in_a_notebook_it_appears_once_as_svg_last_expression_or_not():
    code = """
        from IPython.testing.globalipapp import start_ipython
        from IPython.utils.capture import capture_output
        shell = start_ipython()
        shell.display_formatter.active_types = ["text/plain", "text/html", "image/svg+xml", "image/png"]
        shell.run_line_magic("matplotlib", "inline")
        shell.run_cell("import trackerlab as tl; x = tl.param(3.0)")
        with capture_output() as shown:
            shell.run_cell("fig = tl.plot_tape(x * x)\\nnone = None")
        print([sorted(o.data) for o in shown.outputs])
        with capture_output() as shown:
            shell.run_cell("tl.plot_tape(x * x + x)")
        print([sorted(o.data) for o in shown.outputs])
        import matplotlib
        print(matplotlib.get_backend())
    """
    out = run_python(code, None)
    assert out.returncode == 0, out.stderr
    first, second, backend = out.stdout.strip().splitlines()[-3:]
    assert first == "[['image/svg+xml', 'text/html', 'text/plain']]"  # not the last expression: shown, once
    assert second == "[]"  # the last expression: shown by the display hook, not again by the inline backend
    assert "inline" in backend


# ----------------------------------------------------------------------------------------------------
# Cost


def counting(function, made: dict, key: str):
    """``function``, counting its calls in ``made[key]`` (what a drawing or frame does, counted, not timed)."""

    def counted(*args, **kwargs):
        made[key] += 1
        return function(*args, **kwargs)

    return counted


def test_a_large_tape_costs_about_what_it_shows(monkeypatch):
    """Drawing 60 boxes of a 10^5-value tape does the work of drawing 60 boxes: the entries and box texts
    made are the same as for a 60-value tape (before, the whole graph was built and then cut down, 3.5 s).
    Counted, not timed, so a busy machine cannot make it fail."""
    import trackerlab.notebook.common.tape as tape
    import trackerlab.notebook.drawing.figure as drawing

    made = {"entries": 0, "texts": 0}
    monkeypatch.setattr(tape, "Entry", counting(tape.Entry, made, "entries"))
    monkeypatch.setattr(drawing, "box_text", counting(drawing.box_text, made, "texts"))

    def chain(n):
        z = tl.param(0.5)
        for _ in range(n // 2):
            z = tl.sin(z) * 1.0
        return z

    def work(y):
        made.update(entries=0, texts=0)
        return tl.tape_svg(y), dict(made)

    _, small = work(chain(60))
    svg, large = work(chain(100_000))
    assert "… 99,942 more" in svg
    assert small["texts"] == 60 and small["entries"] > 0
    assert large == small, (large, small)


# ----------------------------------------------------------------------------------------------------
# A long chain as a snake


def chain(n: int):
    """``n`` operations on a scalar: sin, times 1, sin, …"""
    z = tl.param(0.3)
    for _ in range(n // 2):
        z = tl.sin(z) * 1.0
    return z


def chain_with_inputs(n: int):
    """A chain that takes a new parameter at every other operation, as a recurrence does."""
    z = tl.param(0.3)
    for i in range(n // 2):
        z = tl.sin(z) * tl.param(0.9) if i % 2 else z + tl.param(0.1)
    return z


def crossings(svg: str) -> int:
    """How many pairs of edges cross, from their sampled paths up to their arrows' tips."""
    _, edges, heads, _ = geometry(svg)
    paths = [np.array([*points, heads[key][0]]) for key, points in edges.items()]
    total = 0
    for p, q in itertools.combinations(paths, 2):
        q = q + (1e-6, 2e-6)  # two paths through one sampled point (both curves' middle) still cross
        p0, p1, q0, q1 = p[:-1, None], p[1:, None], q[None, :-1], q[None, 1:]

        def side(o, x, y):
            return np.sign(
                (x[..., 0] - o[..., 0]) * (y[..., 1] - o[..., 1]) - (x[..., 1] - o[..., 1]) * (y[..., 0] - o[..., 0])
            )

        hits = (side(p0, p1, q0) * side(p0, p1, q1) < 0) & (side(q0, q1, p0) * side(q0, q1, p1) < 0)
        total += bool(hits.any())
    return total


def rows(boxes: dict) -> list[list[str]]:
    """The boxes' keys by row, top to bottom, each row left to right."""
    out: list = []
    for key in sorted(boxes, key=lambda k: ((boxes[k][1] + boxes[k][3]) / 2, boxes[k][0])):
        centre = (boxes[key][1] + boxes[key][3]) / 2
        if out and abs(centre - out[-1][0]) < 5:
            out[-1][1].append(key)
        else:
            out.append((centre, [key]))
    return [sorted(keys, key=lambda k: boxes[k][0]) for _, keys in out]


@pytest.mark.parametrize("n", [14, 40, 2000])
def test_a_long_chain_is_a_snake_of_rows_as_wide_as_a_notebook(n):
    """A chain too long for one row, whose column would be more than three times as tall as wide, runs in rows
    at most a notebook wide, left to right, then right to left, and so on: the picture is at most 3:1 either
    way, and following the edges from the first box visits every box in the order the values were made."""
    y = chain(n)
    svg = tl.tape_svg(y)
    width, height = svg_size(svg)
    assert width <= 9 * 72 and max(width / height, height / width) <= 3, (width, height)
    boxes, edges, heads, _ = assert_edges_connect_their_boxes(svg, y if n < 60 else None)
    order = sorted(boxes, key=lambda k: -1 if k == "more" else int(k[1:]))
    follows = {source: target for source, target, _ in edges}
    assert all(follows[a] == b for a, b in itertools.pairwise(order))  # the edges link the chain in order
    lines = rows(boxes)
    assert len(lines) >= 2 and sum(map(len, lines)) == len(boxes)
    where = {key: i for i, line in enumerate(lines) for key in line}
    for i, line in enumerate(lines):  # even rows run left to right, odd ones back
        made = sorted(line, key=order.index)
        assert made == (line if i % 2 == 0 else line[::-1]), (i, line)
    for source, target, position in edges:
        s, t, tip = boxes[source], boxes[target], heads[(source, target, position)][0]
        if where[source] == where[target]:  # within a row: the arrow enters the side facing its source
            assert tip[0] == pytest.approx(t[0] if s[0] < t[0] else t[2], abs=1)
        else:  # a turn: to the next row down, round the end it reached, into the next row's first box
            assert where[target] == where[source] + 1
            edge = edges[(source, target, position)]
            if where[source] % 2 == 0:
                assert tip[0] == pytest.approx(t[2], abs=1) and max(x for x, _ in edge) > max(s[2], t[2])
            else:
                assert tip[0] == pytest.approx(t[0], abs=1) and min(x for x, _ in edge) < min(s[0], t[0])


def test_short_chains_and_models_keep_their_strip():
    """A chain that fits a notebook's width, or whose column is at most three times as tall as wide, and the
    models and random tapes of the examples are drawn as one strip, as ``direction`` right or down draws them."""
    tapes = [chain(n) for n in (2, 4, 5)] + [EXAMPLES[name]()[0] for name in sorted(EXAMPLES)]
    for y in tapes:
        drawn = tl.tape_svg(y)
        assert drawn in (tl.tape_svg(y, direction="right"), tl.tape_svg(y, direction="down"))
    assert tl.tape_svg(chain(14)) not in (tl.tape_svg(chain(14), direction=d) for d in ("right", "down"))
    width, height = svg_size(tl.tape_svg(chain(14), direction="down"))  # asked for: one column, as tall as it is
    assert height > 5 * width


@pytest.mark.parametrize("name", ["chain with inputs", *(f"random{seed}" for seed in range(6))])
def test_a_snake_of_any_tape_keeps_every_edge_between_its_boxes(name, monkeypatch):
    """Cut into bands wherever the layers fall (here: every tape, in rows of about 6 inches), every use is still
    one edge from box to box, turning round the bands' ends, and no edge runs through a box."""
    import trackerlab.notebook.drawing.figure as figure
    from trackerlab.notebook.drawing.layout import Strip

    y = chain_with_inputs(24) if name == "chain with inputs" else EXAMPLES[name]()[0]
    strip = tl.tape_svg(y, direction="right")
    bands = []

    def snake(keys, sizes, edges, *_):
        bands.append(Strip(keys, sizes, edges, "right").place(6.0))
        return bands[-1], 6.0

    monkeypatch.setattr(figure, "_arranged", snake)
    svg = tl.tape_svg(y)
    assert_edges_connect_their_boxes(svg, y)
    assert bands[0].bands >= 2 and svg_size(svg)[0] < svg_size(strip)[0] / 2
    assert crossings(svg) <= crossings(strip)  # the turns nest: no two edges cross that did not
