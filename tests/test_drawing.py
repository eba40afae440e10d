"""``plot_tape`` draws with the Agg canvas, never touching pyplot or the global backend."""

import subprocess
import sys

import numpy as np
import pytest

import trackerlab as tl


def seed_tape():
    W = tl.param([[1, 2], [3, 4]])
    x = tl.param([5, 6])
    y = W @ x
    tl.back_(y, [1, -1])
    return W, x, y


def texts(figure):
    return [t.get_text() for ax in figure.axes for t in ax.texts]


def test_draws_the_seed_tape_with_names_data_and_grads():
    W, x, y = seed_tape()
    figure = tl.plot_tape(y, labels={W: "W", x: "x"})
    assert type(figure).__name__ == "TapeFigure"
    shown = texts(figure)
    assert "W = param" in shown and "x = param" in shown and "matmul" in shown
    assert "2 float64\ndata [5, 6]\ngrad [-2, -2]" in shown
    assert "2 float64\ndata [17, 39]" in shown
    assert figure._repr_png_()[:8] == b"\x89PNG\r\n\x1a\n"


def test_runs_headless_without_changing_the_backend():
    code = (
        "import matplotlib; before = matplotlib.get_backend(); import sys; "
        "import trackerlab as tl; x = tl.param([1.0, 2.0]); f = tl.plot_tape(tl.sum(x * x)); "
        "f.canvas.draw(); assert 'matplotlib.pyplot' not in sys.modules; "
        "assert matplotlib.get_backend() == before; print(f.canvas.get_width_height())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={"MPLBACKEND": "Agg"})
    assert out.returncode == 0, out.stderr


def test_draws_into_a_given_axes():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure()
    FigureCanvasAgg(figure)
    ax = figure.add_subplot()
    assert tl.plot_tape(tl.param(2.0) * 3, ax) is figure
    assert "multiply" in texts(figure)


def test_states_highlight_and_stepper_grads():
    a, b = tl.param(2.0), tl.param(3.0)
    c = a * b
    steps = list(tl.backprop_steps(c))
    figure = tl.plot_tape(
        c,
        states={c: "done", a: "pending", b: "waiting"},
        highlight=a,
        grads={a: steps[0].sent[0]},
    )
    assert "scalar float64\ndata 2\ngrad 3" in texts(figure)
    legend = [t.get_text() for t in figure.axes[0].get_legend().get_texts()]
    assert legend == ["parameter (leaf)", "operation", "done", "current", "waiting"]
    with pytest.raises(
        ValueError, match="plot_tape: states must be one of done, current, pending, waiting, not 'busy'"
    ):
        tl.plot_tape(c, states={a: "busy"})


def test_large_tapes_are_summarised():
    z = tl.param(0.5)
    for _ in range(100):
        z = tl.sin(z)
    figure = tl.plot_tape(z, max_nodes=30)
    shown = texts(figure)
    assert "… 72 more" in shown
    assert sum(t == "sin" for t in shown) == 29


def test_svg_is_deterministic_text():
    _, _, y = seed_tape()
    svg = tl.plot_tape(y, format="svg")
    assert svg.startswith("<?xml") and "</svg>" in svg
    assert svg == tl.tape_svg(y)


def test_bad_options_are_named():
    y = tl.param(1.0) * 2
    with pytest.raises(ValueError, match="plot_tape: format must be None"):
        tl.plot_tape(y, format="pdf")
    with pytest.raises(ValueError, match="plot_tape: max_nodes must be an integer of at least 2"):
        tl.plot_tape(y, max_nodes=1)
    with pytest.raises(TypeError, match="plot_tape: y is not tracked"):
        tl.plot_tape(np.ones(3))
    with pytest.raises(TypeError, match="plot_tape: highlight has a key of type int"):
        tl.plot_tape(y, highlight=3)


def test_constants_written_in_their_call_or_drawn_as_boxes():
    x = tl.param(2.0)
    y = tl.sin(x) * 3
    folded = texts(tl.plot_tape(y))
    assert "scalar float64\ndata 2.72789\nconst 2 = 3" in folded and "const" not in folded
    boxes = texts(tl.plot_tape(y, constants=True))
    assert "const" in boxes and "scalar\ndata 3" in boxes


def test_long_tapes_continue_on_the_next_row():
    z = tl.param(0.5)
    for _ in range(12):
        z = tl.sin(z)
    figure = tl.plot_tape(z, wrap=6)  # 13 generations: rows of 5, 5 and 3
    shown = texts(figure)
    assert [t for t in shown if t.startswith("→")] == ["→ n5", "→ n10"]
    assert "n4 sin" in shown and "n9 sin" in shown
    assert [f"n{i}" for i in range(13)] == [t for t in shown if t in {f"n{i}" for i in range(13)}]
    width, height = figure.get_size_inches()
    assert width == pytest.approx(5 * (1.55 + 0.6) - 0.6 + 2 * 0.6)
    one_row = tl.plot_tape(z, wrap=13).get_size_inches()
    assert one_row[0] > width and one_row[1] < height
    with pytest.raises(ValueError, match="plot_tape: wrap must be an integer of at least 1, not 0"):
        tl.plot_tape(z, wrap=0)


def test_figure_repr_names_the_tape_not_its_pixels():
    x = tl.param([1.0, 2.0])
    assert repr(tl.plot_tape(tl.sum(x * 3))) == "<TapeFigure: the tape of 3 values>"
    assert repr(tl.plot_tape(x)) == "<TapeFigure: the tape of 1 value>"
