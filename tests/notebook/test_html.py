"""The HTML repr: required content, escaping, determinism, and the limits that keep large tapes usable."""

import re

import numpy as np
import pytest
from markup import unstyled

import trackerlab as tl
from trackerlab.notebook.common.inline import INLINE
from trackerlab.notebook.html import html_repr


def body(html):
    """The HTML after the shared style sheet."""
    return html[html.index("</style>") + len("</style>") :]


def text(html):
    return re.sub(r"<[^>]+>", "", body(html))


def test_seed_w_times_x():
    W = tl.param([[1, 2], [3, 4]])
    x = tl.param([5, 6])
    y = W @ x
    tl.back_(y, [1, -1])
    html = y._repr_html_()
    assert html == html_repr(y)
    assert unstyled(html).startswith('<div class="tl-repr" id="tl-') and html.endswith("</div>")
    shown = text(html)
    assert shown.startswith("TrackedArray 2 float64 (numpy · cpu)made by matmul · 3 values on the tape")
    assert '<table class="tl-table"><tr><td>17</td><td>39</td></tr></table>' in unstyled(html)
    assert "none: gradients accumulate on leaves" in shown
    assert "tape: 3 values" in shown
    assert "n2 matmul#1 = x1 @ x2 2 [17, 39]" in shown  # each value's key, name and call, as the drawing gives them
    assert "n0 x1 = param 2×2 [[1, 2], [3, 4]] ∇ [[5, 6], [-5, -6]]" in shown
    assert "n1 x2 = param 2 [5, 6] ∇ [-2, -2]" in shown
    named = text(html_repr(y, labels={W: "W", x: "x", y: "y"}))
    assert named.startswith("y TrackedArray") and "n0 W = param" in named and "n1 x = param" in named


def test_leaf_shows_data_and_grad_tables():
    W = tl.param([[1, 2], [3, 4]])
    tl.back_(W @ tl.param([5, 6]), [1, -1])
    html = html_repr(W)
    assert "leaf" in text(html) and "1 value on the tape" in text(html)
    assert "<tr><td>5</td><td>6</td></tr><tr><td>-5</td><td>-6</td></tr>" in unstyled(html)
    assert "tape:" not in html  # a leaf has no tape to unfold


def test_every_string_is_escaped():
    @tl.primitive
    def evil(u):
        return u * 2

    evil.__name__ = "<script>alert(1)</script>"

    @tl.grad_rule(evil)
    def _(u):
        return tl.data(u) * 2, lambda g: (2 * g,)

    x = tl.param(1.0)
    y = tl.nobacksies("<img src=x onerror=alert(1)>", evil(x))
    html = html_repr(y, labels={x: '"><b>x</b>'})
    assert "<script" not in html and "<img" not in html and "<b>x" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&#x27;&lt;img src=x onerror=alert(1)&gt;&#x27;" in html
    assert "&quot;&gt;&lt;b&gt;x&lt;/b&gt;" in html
    assert text(html).count("<script>alert(1)</script>") == 0  # still escaped after removing tags


def test_no_javascript_and_theme_variables():
    html = html_repr(tl.sin(tl.param([1.0, 2.0])))
    assert "<script" not in html and "onclick" not in html
    assert "<details open><summary" in html
    for variable in ("--jp-content-font-color1,#", "--jp-brand-color1,#", "--jp-code-font-family,"):
        assert f"var({variable}" in html
    assert "@media (prefers-color-scheme:dark)" in html


# What JupyterLab's sanitiser keeps of a style attribute (a part of its list: the properties used here)
KEPT = {
    "background",
    "border",
    "border-collapse",
    "border-left",
    "border-radius",
    "border-style",
    "color",
    "display",
    "flex-wrap",
    "font-family",
    "font-size",
    "font-style",
    "font-weight",
    "gap",
    "letter-spacing",
    "line-height",
    "list-style",
    "margin",
    "margin-bottom",
    "margin-left",
    "margin-top",
    "max-width",
    "min-height",
    "min-width",
    "opacity",
    "overflow-x",
    "padding",
    "padding-left",
    "text-align",
    "white-space",
    "height",
    "width",
}


def test_the_layout_reads_right_without_the_style_block():
    """A sanitiser (an untrusted notebook, GitHub) drops the <style> block: every element keeps its layout
    in inline styles, made of properties the sanitiser keeps and no var(…), so the tree has no bullets, the
    panels sit side by side, and the badges are set apart."""
    W = tl.param([[1.0, 2.0], [3.0, 4.0]])
    y = tl.sum(tl.tanh(W @ tl.param([5.0, 6.0])))
    tl.back_(y)
    html = re.sub(r"(?s)<style>.*?</style>", "", html_repr(y) + html_repr(tl.param(np.ones(500))))
    elements = re.findall(r'<(\w+) class="([^"]*)"( style="[^"]*")?', html)
    assert len(elements) > 20
    for tag, classes, style in elements:
        wanted = [INLINE[c] for c in classes.split() if c in INLINE]
        assert bool(style) == bool(wanted), (tag, classes)
        for declaration in style[8:-1].split(";") if style else ():
            name, value = declaration.split(":", 1)
            assert name in KEPT and "var(" not in value, (classes, declaration)
    assert '<ul class="tl-tree" style="list-style:none;' in html
    assert '<div class="tl-panels" style="display:flex;flex-wrap:wrap;' in html
    assert re.search(r'<span class="tl-badge" style="border:1px solid #8888;[^"]*margin-left:4px">made by', html)
    cells = re.findall(r"<(td|th)( style=\"[^\"]*\")?>", html)
    assert cells and all(style.startswith(' style="border:1px solid #8888;') for _, style in cells)


def test_deterministic():
    def build():
        a = tl.param([1.0, 2.0])
        b = tl.exp(a)
        return html_repr(tl.sum(b * b + a), labels={a: "a"})

    first = build()
    assert first == build()
    assert "0x" not in first
    assert re.findall(r'id="(tl-[0-9a-f]{10})"', first)[0] in first


def test_shared_subexpression_shown_once():
    a = tl.param(2.0)
    b = a * a
    c = tl.sin(b) + b * 3
    html = html_repr(c, labels={b: "b"})
    assert text(html).count("b = x1 * x1") == 2
    assert text(html).count("b = x1 * x1 scalar 4") == 1
    anchor = re.search(r'href="#(tl-[0-9a-f]+-n1)">↺ shown above', html).group(1)
    assert f'id="{anchor}"' in html


def test_long_chain_is_folded_with_a_count():
    z = tl.param(0.5)
    for _ in range(5000):
        z = tl.sin(z) * 1.0
    html = html_repr(z)
    shown = text(html)
    assert "10,001 values on the tape" in shown
    assert "tape: 10,001 values, 3 shown" in shown
    assert "… 9,998 more in a chain (sin ×4,999, multiply ×4,999)" in shown
    assert shown.count("multiply") == 3 and "multiply#5000 = sin#5000 * 1 " in shown and "n0 x1 = param" in shown


def test_ten_thousand_nodes_stay_small_and_counts_add_up():
    a = tl.param(np.arange(10.0))
    s = a[0]
    for i in range(1, 5000):
        s = s + a[i % 10]
    html = html_repr(s)
    assert len(html.encode()) <= 200_000
    shown = text(html)
    total = int(re.search(r"tape: ([\d,]+) values", shown).group(1).replace(",", ""))
    assert total == 10_000
    n_shown = int(re.search(r"values, ([\d,]+) shown", shown).group(1).replace(",", ""))
    more = [int(m.replace(",", "")) for m in re.findall(r"… ([\d,]+) more", shown)]
    assert n_shown + sum(more) == total
    nesting = deepest = 0
    for tag in re.findall(r"</?details", html):
        nesting += 1 if tag == "<details" else -1
        deepest = max(deepest, nesting)
    assert deepest == 1 + 1 + 12  # the tape, the output, then max_depth levels below it


def test_size_limit():
    xs = [tl.param(float(i)) for i in range(300)]
    total = xs[0]
    for x in xs[1:]:
        total = total + x
    html = html_repr(total, max_nodes=50, max_depth=400)
    shown = text(html)
    assert "tape: 599 values, 50 shown" in shown
    more = [int(m) for m in re.findall(r"… (\d+) more", shown)]
    assert more == [548, 1]  # below the last level shown, and its last value
    assert shown.count("param") == 24 and len(re.findall(r"add#\d+ = \S+ \+ \S+ scalar", shown)) == 26


def test_large_arrays_are_summarised():
    values = np.linspace(-1.0, 1.0, 1000)
    values[3] = np.nan
    values[4] = np.inf
    values[5] = -np.inf
    html = html_repr(tl.param(values))
    shown = text(html)
    assert "TrackedArray 1000 float64" in shown
    assert "min-1" in shown and "max1" in shown and "std" in shown and "mean" in shown
    assert '<span class="tl-warn">1 NaN</span>' in unstyled(html) and '<span class="tl-warn">2 Inf</span>' in unstyled(
        html
    )
    spark = re.search(r'<div class="tl-spark"[^>]*>([^<]*)</div>', html).group(1)
    assert len(spark) == 16 and set(spark) <= set("▁▂▃▄▅▆▇█ ")
    assert "first: -1, -0.997998, -0.995996, …" in shown
    clean = html_repr(tl.param(np.ones(400)))  # (a 2-D one is a heat map: test_heatmap.py)
    assert '<span class="tl-dim">0 NaN</span>' in unstyled(clean) and "tl-warn" not in body(clean)


def test_bad_inputs_are_named():
    with pytest.raises(TypeError, match="html_repr: y is not tracked"):
        html_repr(np.ones(3))
    with pytest.raises(ValueError, match="html_repr: max_depth must be a positive integer, not 0"):
        html_repr(tl.param(1.0) * 2, max_depth=0)


def test_other_backends_and_edge_cases():
    import array_api_strict as xp

    a = tl.param(xp.asarray([1.0, 2.0]))
    shown = text(html_repr(tl.sum(a * a)))
    assert shown.startswith("TrackedReal scalar float64 (array_api_strict · ")
    assert "n1 multiply#1 = x1 * x1 2 [1, 4]" in shown
    empty = text(html_repr(tl.param(np.zeros((0, 3)))))
    assert "TrackedArray 0×3 float64" in empty and "dataempty" in empty
    complex_values = text(html_repr(tl.param(np.array([1 + 2j, 3 - 1j])) * 2))
    assert "[2+4j, 6-2j]" in complex_values


def test_the_repr_follows_jupyterlab_and_the_docs_dark_themes():
    from trackerlab.notebook.html import html_repr

    css = html_repr(tl.param(2.0) * 3).split("<style>")[1].split("</style>")[0]
    dark = "--tl-fg:var(--jp-content-font-color1,#e6edf3)"
    assert css.count(dark) == 2
    assert f'body[data-jp-theme-light="false"] .tl-repr,body[data-theme="dark"] .tl-repr{{{dark}' in css
    # the reader's colour scheme only where the page names no light theme of its own
    assert (
        '@media (prefers-color-scheme:dark){body:not([data-jp-theme-light="true"]):not([data-theme="light"]) .tl-repr{'
        in css
    )
    assert ".tl-repr{--tl-fg:var(--jp-content-font-color1,#1f2328)" in css


def test_small_arrays_of_three_or_more_dimensions_are_shown_whole():
    """A 2×3×4 array is shown value by value, one table per 2-D slice, as NumPy prints it."""
    values = np.arange(24.0).reshape(2, 3, 4)
    html = html_repr(tl.param(values))
    tables = re.findall(r'<table class="tl-table">(.*?)</table>', body(html))
    data_tables = tables[:2]  # data, then the grad panel's
    for i, table in enumerate(data_tables):
        rows = re.findall(r"<tr>(.*?)</tr>", table)
        shown = [[float(v) for v in re.findall(r"<td>([^<]*)</td>", row)] for row in rows]
        assert shown == values[i].tolist()
    assert "[0, :, :]" in text(html) and "[1, :, :]" in text(html)
    assert "tl-stats" not in body(html) and "first:" not in text(html)
    four = html_repr(tl.param(np.arange(16.0).reshape(2, 2, 2, 2)))
    assert all(f"[{i}, {j}, :, :]" in text(four) for i in range(2) for j in range(2))
    many = html_repr(tl.param(np.zeros((13, 2, 2))))  # more slices than are readable: summarised
    assert "tl-stats" in body(many)


@pytest.mark.parametrize(
    "values",
    [np.array([0.1 * 3, 0.3] * 10), np.nextafter(1.0, 2.0, dtype=np.float32) * np.ones(40, np.float32)],
    ids=["float64 a few ulps apart", "float32 one ulp apart"],
)
def test_the_summary_of_values_a_few_ulps_apart_shows_their_histogram(values):
    values = values.copy()
    values[0] = 1.0 if values.dtype == np.float32 else values[0]
    html = html_repr(tl.param(values))
    spark = re.search(r'<div class="tl-spark"[^>]*>([^<]*)</div>', html).group(1)
    assert len(spark) == 16 and spark[0] != " " and spark[-1] != " "
