"""A 2-D array of more than a few numbers is shown as a heat map in the repr: a cell per element (per block of
elements past 24 × 24), coloured by its value (signed values: transparent at 0, the full colour of its sign at
the largest magnitude; one-signed values: viridis from the least to the greatest), the number in each cell's
title, NaN and Inf marked, and a legend; inline styles only, the same HTML for the same value."""

import re

import numpy as np
import pytest

import trackerlab as tl
from trackerlab.notebook.common.heatmap import NAN, NEGATIVE, POSITIVE, VIRIDIS, heatmap_html
from trackerlab.notebook.html import html_repr

CELL = re.compile(r'<span title="([^"]*)" style="([^"]*)"></span>')


def cells(html: str) -> list[tuple[str, str]]:
    return CELL.findall(html[: html.index('class="tl-heat-legend"')])


def hexed(rgb) -> str:
    return "#" + "".join(f"{c:02x}" for c in rgb)


def test_signed_values_fade_to_no_colour_at_zero_and_full_colour_at_the_largest_magnitude():
    a = np.array([[0.0, 1.5, 3.0, -3.0, -0.75]] * 5)
    found = cells(heatmap_html(a))
    assert len(found) == 25
    assert found[:5] == [
        ("[0, 0] 0", f"background:{hexed(NEGATIVE)}00"),
        ("[0, 1] 1.5", f"background:{hexed(POSITIVE)}80"),  # half the largest magnitude: half opaque
        ("[0, 2] 3", f"background:{hexed(POSITIVE)}ff"),
        ("[0, 3] -3", f"background:{hexed(NEGATIVE)}ff"),
        ("[0, 4] -0.75", f"background:{hexed(NEGATIVE)}40"),
    ]
    assert found[23][0] == "[4, 3] -3"


def test_one_signed_values_run_through_viridis_from_least_to_greatest():
    a = np.arange(2.0, 32.0).reshape(5, 6)
    found = cells(heatmap_html(a))
    assert found[0] == ("[0, 0] 2", f"background:{VIRIDIS[0]}")
    assert found[-1] == ("[4, 5] 31", f"background:{VIRIDIS[-1]}")
    legend = heatmap_html(a)[heatmap_html(a).index("tl-heat-legend") :]
    assert "min 2, max 31" in legend and "0: no colour" not in legend


def test_all_zeros_show_no_colour():
    assert {style for _, style in cells(heatmap_html(np.zeros((5, 5))))} == {f"background:{hexed(NEGATIVE)}00"}


def test_nan_and_inf_cells_are_marked_and_counted():
    a = np.linspace(-1.0, 1.0, 30).reshape(5, 6)
    a[1, 1], a[2, 2], a[3, 3] = np.nan, np.inf, -np.inf
    html = heatmap_html(a)
    found = dict(cells(html))
    assert found["[1, 1] nan"] == f"background:{NAN}"
    assert found["[2, 2] inf"].startswith(f"background:{hexed(POSITIVE)}ff;outline:")
    assert found["[3, 3] -inf"].startswith(f"background:{hexed(NEGATIVE)}ff;outline:")
    legend = html[html.index("tl-heat-legend") :]
    assert "1 NaN" in legend and "2 Inf" in legend
    assert "min -1, max 1" in legend  # of the finite values


def test_a_large_array_is_shown_by_the_means_of_its_blocks():
    a = np.arange(100 * 50, dtype=float).reshape(100, 50) - 2500.0
    a[0, 0] = np.nan
    html = heatmap_html(a)
    found = cells(html)
    assert len(found) == 20 * 17  # blocks of 5 × 3 (the last column of blocks 2 wide)
    assert "repeat(17," in html and "each cell: the mean of a 5×3 block" in html
    titles = [t for t, _ in found]
    assert titles[0] == "[0:5, 0:3] mean nan" and dict(found)[titles[0]] == f"background:{NAN}"
    assert titles[1] == f"[0:5, 3:6] mean {a[0:5, 3:6].mean():.3g}"
    assert titles[16] == f"[0:5, 48:50] mean {a[0:5, 48:50].mean():.3g}"
    # the colours span the means shown: the greatest mean has the full colour
    assert dict(found)["[95:100, 48:50] mean 2.4e+03"] == f"background:{hexed(POSITIVE)}ff"


def test_the_repr_keeps_tables_for_a_few_numbers_and_a_heat_map_beyond():
    assert "tl-heat" not in html_repr(tl.param(np.ones((4, 6))))  # 24 numbers: a table
    assert "tl-table" in html_repr(tl.param(np.ones((4, 6))))
    html = html_repr(tl.param(np.ones((5, 5))))
    assert html.count('class="tl-heat"') == 2 and "tl-stats" not in html  # data, and a leaf's zero grad
    assert "tl-heat" not in html_repr(tl.param(np.ones(100)))  # 1-D: the summary, as before
    big = html_repr(tl.param(np.ones((100, 30))))
    assert "tl-heat" in big and "tl-stats" in big  # shrunk: the summary with its histogram too


def test_the_grad_of_a_weight_is_a_heat_map_too():
    W = tl.param(np.random.default_rng(0).normal(size=(8, 6)))
    tl.back_(tl.sum(tl.tanh(W) * np.arange(6.0)))
    html = html_repr(W)
    assert html.count('class="tl-heat"') == 2
    grad = html[html.rindex('class="tl-heat"') :]
    expected = (1 - np.tanh(W.data) ** 2) * np.arange(6.0)
    assert f'title="[2, 5] {tl.presentation.text.number(expected[2, 5], compact=True)}"' in grad


@pytest.mark.parametrize("shape", [(5, 5), (300, 40)])
def test_the_same_value_gives_the_same_html_with_inline_styles_only(shape):
    a = np.random.default_rng(1).normal(size=shape)
    html = heatmap_html(a)
    assert html == heatmap_html(a.copy())
    assert " id=" not in html and "<style" not in html and "<svg" not in html and "class=" in html
    assert all(style.startswith("background:") for _, style in cells(html))


# ---------------------------------------------------------------- the stepper's picture panel


def test_the_stepper_shows_a_weights_gradient_as_a_heat_map_in_a_panel_of_one_height():
    rng = np.random.default_rng(0)
    W1 = tl.param(rng.normal(size=(12, 8)))  # 16 × 16 cells at most in a frame: one per element
    x = rng.normal(size=(8, 5))
    y = tl.sum(tl.tanh(W1 @ x))
    with tl.BackpropStepper(y, labels={W1: "W1"}) as stepper:
        frames = [stepper._frame_html(i, drawn=False) for i in range(len(stepper))]
        static = stepper.to_html()
    assert [s["node"] for s in stepper_nodes(frames)] == ["sum#1", "tanh#1", "matmul#1", "W1"]
    panels = [re.search(r'<div class="tl-frame-values" style="min-height:(\d+)px">', f) for f in frames]
    assert all(panels) and len({p.group(1) for p in panels}) == 1  # every frame, one height: nothing moves
    # under the text panel, in its column: the drawing beside them keeps its place with or without a picture
    assert all(f.index('class="tl-frame-side"') < f.index("tl-frame-text") < f.index("tl-frame-values") for f in frames)
    assert all(f.index("tl-frame-values") < f.index('<div class="tl-frame-drawing">') for f in frames)
    assert "tl-heat" not in frames[0]  # the scalar Δ of the sum: its text says it
    assert "Δ arrived at tanh#1 (12×5)" in frames[1]
    last = frames[3]
    assert "W1.grad so far (12×8)" in last
    grad = (1 - np.tanh(W1.data @ x) ** 2) @ x.T
    found = dict(cells(last[last.index("tl-heat") :]))
    assert found[f"[3, 7] {tl.presentation.text.number(grad[3, 7], compact=True)}"].startswith("background:#")
    assert "W1.grad so far (12×8)" in static  # the HTML copy steps through the same frames


def stepper_nodes(frames):
    return [{"node": re.search(r"step \d+ of \d+: (\S+)", f).group(1)} for f in frames]


def test_a_walk_of_small_values_has_no_picture_panel():
    a = tl.param(np.ones((2, 3)))
    with tl.BackpropStepper(tl.sum(a * a)) as stepper:
        assert all("tl-frame-values" not in stepper._frame_html(i, drawn=False) for i in range(len(stepper)))
