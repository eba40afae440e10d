"""The notebook layer on lazy (dask) values: reprs, tape drawings, the stepper and ``%%track`` describe a
dask array by its shape, dtype and chunks and compute nothing; values appear once they are computed."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest

da = pytest.importorskip("dask.array", reason="dask is not installed (pip install 'trackerlab[dask]')")

from markup import unstyled  # noqa: E402

import trackerlab as tl  # noqa: E402
from trackerlab.notebook import BackpropStepper, plot_tape, tape_svg, to_networkx  # noqa: E402

# The data are 0.3125 + k/8 (k = 0 … 39): none of these numbers may appear before the user computes them.
VALUES = np.arange(40.0).reshape(8, 5) / 8 + 0.3125
SHOWN = ("0.3125", "0.4375", "5.1875")


class Counter:
    """A dask array whose every computed block is counted: nothing that only displays may compute one."""

    def __init__(self):
        self.computes = 0

    def __call__(self, block):
        self.computes += 1
        return block

    def array(self, values, chunks):
        source = da.from_array(values, chunks=chunks)
        return da.map_blocks(self, source, dtype=values.dtype, meta=np.empty((0,) * values.ndim, values.dtype))


@pytest.fixture(autouse=True)
def english_after():
    yield
    tl.set_language("en")


@pytest.fixture
def counted():
    return Counter()


def lazy_tape(counted):
    p = tl.param(counted.array(VALUES, (4, 5)))
    return p, tl.sum(tl.sin(p) * p)


def test_repr_html_shows_shape_dtype_chunks_and_lazy_and_computes_nothing(counted):
    p, y = lazy_tape(counted)
    html = unstyled(p._repr_html_())
    head = re.search(r'<div class="tl-head">(.*?)</div>', html).group(1)
    for part in ("8×5", "float64", "dask", ">lazy<", "chunks 4×5 · 2 blocks", "320 B"):
        assert part in head
    assert "lazy: not computed" in html
    assert "lazy 8×5 float64, chunks 4×5 · 2 blocks" in html  # the data panel
    for value in SHOWN:
        assert value not in html
    whole = unstyled(y._repr_html_())  # the tape tree's lines describe every node
    tree = whole.split('class="tl-tree"', 1)[1]
    assert tree.count("8×5</span> lazy · chunks 4×5 · 2 blocks") == 3  # p, sin, multiply: shape, then chunks
    assert "lazy float64 scalar" in whole
    assert counted.computes == 0


def test_text_reprs_of_lazy_values_compute_nothing(counted):
    p, y = lazy_tape(counted)
    assert repr(p).startswith("Tracked 8×5 float64 array:\ndask.array<")
    assert repr(y).endswith("(tracked)") and "shape=()" in repr(y)
    assert "<8×5 float64 lazy>" in repr(y.tracker.f.args[0])
    for value in SHOWN:
        assert value not in repr(p) + repr(y.tracker)
    small = tl.param(counted.array(VALUES[:2, :3], (1, 3)))  # small enough to be written out, were it computed
    assert (
        repr(small.tracker)
        == "Tracked(ref=0, f=Call(param, ()), isleaf=True, data=<2×3 float64 lazy>, grad=<2×3 float64 lazy>)"
    )
    assert counted.computes == 0


def test_tape_drawings_and_networkx_compute_nothing(counted):
    p, y = lazy_tape(counted)
    svg = tape_svg(y, labels={p: "p"})
    assert svg.count("data lazy · chunks 4×5 · 2 blocks") == 3 and "8×5 float64" in svg
    for value in SHOWN:
        assert value not in svg
    plot_tape(y).clf()
    graph = to_networkx(y)
    assert graph.nodes["n0"]["shape"] == (8, 5) and graph.nodes["n0"]["dtype"] == "float64"
    assert counted.computes == 0


def test_stepper_on_a_lazy_graph_says_what_it_would_compute_and_computes_nothing(counted):
    p, y = lazy_tape(counted)
    y = tl.tanh(y)  # a scalar step too, whose chain rule the stepper writes out only for numbers it has
    stepper = BackpropStepper(y, labels={p: "p"})
    assert len(stepper) == len(list(tl.backprop_steps(y)))
    assert "nothing is computed here" in stepper.message.value
    assert "in one dask.compute" in stepper.message.value
    texts = []
    for i in range(len(stepper)):
        stepper.index = i
        texts.append(stepper.text)
        assert stepper.text.endswith("back_ computes the grads in one dask.compute")
    assert texts[0].splitlines()[1] == "Δ arrived: lazy float64 scalar  (the seed)"
    leaf = texts[-1].splitlines()
    assert leaf[0].endswith("p (a leaf)")
    # p is used twice (sin(p) * p): its Δ is the lazy sum of both parts, described once, not computed
    assert re.fullmatch(
        r"Δ arrived: lazy 8×5 float64, chunks \d+×5 · \d+ blocks?  \(used 2 times: from .+, .+\)", leaf[1]
    )
    assert any(re.search(r"→ p: .*\(p now holds the sum of 2: lazy 8×5 float64", t) for t in texts)
    assert re.fullmatch(r"p\.grad \+= lazy 8×5 float64, chunks \d+×5 · \d+ blocks?", leaf[2])
    steps = stepper.steps[:]
    assert all(s["delta"].startswith("lazy ") for s in steps)
    assert steps[-1]["grads"]["p"].startswith("lazy 8×5 float64")
    page = stepper.to_html()
    bundle = stepper._repr_mimebundle_()
    for value in SHOWN:
        assert value not in page and value not in "\n".join(texts)
    assert "lazy 8×5 float64" in bundle["text/html"]
    assert counted.computes == 0
    stepper.close()


def test_numpy_parameters_with_lazy_data_display_lazily_until_back(counted):
    X = counted.array(VALUES, (4, 5))
    w = tl.param(np.array([1.0, -1.0, 0.5, 0.0, 2.0]))
    loss = tl.mean(tl.softplus(X @ w))
    html = loss._repr_html_()
    assert "lazy float64 scalar" in html and ">lazy<" in html
    svg = tape_svg(loss)  # the data, a const box described by its shape, and matmul's call naming it
    assert ">lazy 8×5 float64<" in svg and ">= const lazy 8×5 @ x1<" in svg
    stepper = BackpropStepper(loss, labels={w: "w"})
    assert stepper.steps[-1]["node"] == "w"
    assert stepper.steps[-1]["grads"]["w"].startswith("lazy 5 float64")
    assert "w = lazy 5 float64" in stepper._frames.text(len(stepper) - 1)
    stepper.close()
    assert counted.computes == 0
    tl.back_(loss)  # one dask.compute: each of X's two blocks is made once, and w.grad is NumPy
    assert counted.computes == 2
    grad_panel = w._repr_html_().split(">grad<", 1)[1]
    expected = VALUES.T @ (1 / (1 + np.exp(-(VALUES @ tl.data(w))))) / 8
    assert "lazy" not in grad_panel and f">{expected[0]:.6g}<" in grad_panel
    assert counted.computes == 2


def test_numbers_appear_once_computed(counted):
    p, y = lazy_tape(counted)
    tl.back_(y)  # a dask parameter's gradient stays lazy: the repr still computes nothing
    before = counted.computes
    html = p._repr_html_()
    grad_panel = html.split(">grad<", 1)[1]
    assert "lazy: not computed" in grad_panel
    assert counted.computes == before
    q = tl.param(tl.data(p).compute())  # the user computed the values: a NumPy array, shown in full
    shown = q._repr_html_().split("</style>")[1]
    assert "lazy" not in shown and "0.3125" in shown
    z = tl.param(tl.grad(p).compute())
    expected = np.sin(VALUES) + VALUES * np.cos(VALUES)
    assert f"{expected[0, 0]:.6g}" in z._repr_html_()


def test_lazy_text_is_translated(counted):
    p, y = lazy_tape(counted)
    tl.set_language("ja")
    assert "遅延 8×5 float64、チャンク 4×5 · 2 ブロック" in p._repr_html_()
    stepper = BackpropStepper(y)
    assert "dask.compute" in stepper.text and "遅延 (dask)" in stepper.text
    stepper.close()
    tl.set_language("zh")
    assert "惰性 8×5 float64，分块 4×5 · 2 个块" in p._repr_html_()
    assert counted.computes == 0


def test_track_magic_on_a_lazy_parameter_computes_nothing(counted):
    from IPython import get_ipython
    from IPython.testing.globalipapp import start_ipython
    from IPython.utils.capture import capture_output

    shell = start_ipython() or get_ipython()
    shell.display_formatter.active_types = ["text/plain", "text/html", "image/svg+xml"]
    shell.run_line_magic("load_ext", "trackerlab")
    shell.user_ns.update({"tl": tl, "x": counted.array(VALUES, (4, 5))})
    try:
        with capture_output() as captured:
            result = shell.run_cell("%%track -p x --back y --step\ny = tl.sum(tl.sin(x) * x)\ny")
        assert result.success, result.error_in_exec
        shown = "\n".join(str(out.data.get("text/html", "")) for out in captured.outputs)
        assert "lazy float64 scalar" in shown and "back_ computes the grads in one dask.compute" in shown
        assert counted.computes == 0  # a dask parameter's gradient stays lazy after back_
    finally:
        for name in ("x", "y", "tl"):
            shell.user_ns.pop(name, None)


def test_importing_the_notebook_layer_imports_no_dask():
    code = (
        "import sys, numpy as np, trackerlab as tl, trackerlab.notebook\n"
        "from trackerlab.notebook import html, stepper, drawing\nfrom trackerlab.notebook.common import lazy\n"
        "x = tl.param(np.ones(3)); x._repr_html_(); repr(x); tl.BackpropStepper(tl.sum(x * x)).text\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
