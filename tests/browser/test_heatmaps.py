"""Heat maps of 2-D arrays, in the repr and the stepper's HTML copy, read in a JupyterLab that trusts nothing
(its sanitiser keeps inline ``style`` property by property, and ``title`` attributes): each cell keeps its
size, its colour and its number as a tooltip, in the light theme and the dark."""

from __future__ import annotations

import numpy as np
from labkit import KERNELSPEC

import trackerlab as tl
from trackerlab.notebook.html import html_repr

READ = """() => {
  const maps = [...document.querySelectorAll('.jp-OutputArea-output .tl-heat')];
  return maps.map(m => {
    const grid = m.firstElementChild;
    const cells = [...grid.children];
    const box = cells[0].getBoundingClientRect();
    return { display: getComputedStyle(grid).display, cells: cells.length,
             titled: cells.filter(c => c.getAttribute('title')).length, first: cells[0].getAttribute('title'),
             width: box.width, height: box.height,
             colours: new Set(cells.map(c => getComputedStyle(c).backgroundColor)).size,
             legend: m.querySelector('.tl-heat-legend') ? m.querySelector('.tl-heat-legend').innerText : null };
  });
}"""


def _notebook():
    import nbformat

    rng = np.random.default_rng(0)
    W = tl.param(rng.normal(size=(12, 10)))
    x = rng.normal(size=(10, 6))
    y = tl.sum(tl.tanh(W @ x))
    tl.back_(y)
    big = rng.normal(size=(200, 100))
    big[3, 4] = np.nan
    with tl.BackpropStepper(tl.sum(tl.tanh(W @ x)), labels={W: "W"}) as stepper:
        copy = stepper.to_html()
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = KERNELSPEC
    nb.cells = []
    for source, html in (("W", html_repr(W)), ("tl.param(big)", html_repr(tl.param(big))), ("stepper", copy)):
        cell = nbformat.v4.new_code_cell(source)
        cell.outputs = [nbformat.v4.new_output("display_data", data={"text/html": html, "text/plain": source})]
        nb.cells.append(cell)
    return nb


def test_heat_maps_survive_an_untrusted_notebook_in_both_themes(page, lab, screenshots):
    import nbformat

    nbformat.write(_notebook(), str(lab.root / "heatmaps.ipynb"))
    page.goto(lab.url("lab/tree/heatmaps.ipynb"))
    page.wait_for_function("() => !!window.jupyterapp", polling=250)
    page.wait_for_selector(".jp-OutputArea-output .tl-heat")
    page.wait_for_function("() => document.querySelectorAll('.jp-OutputArea-output .tl-heat').length >= 5")
    maps = page.evaluate(READ)
    # the repr's data and grad, the large array and its zero grad, the last frame of the stepper copy (its first, at the sum, has none)
    assert len(maps) == 5, maps
    assert maps[3]["colours"] == 1 and maps[3]["first"] == "[0:9, 0:5] mean 0"  # all 0: no colour
    for shown in maps[:3] + maps[4:]:
        assert shown["display"] == "inline-grid", shown  # the inline grid survived the sanitiser
        assert shown["titled"] == shown["cells"] > 0, shown  # every number a hover away
        assert shown["width"] >= 4 and shown["height"] >= 4, shown
        assert shown["colours"] > 5, shown
        assert "min" in shown["legend"], shown
    data, grad, big = maps[:3]
    assert data["cells"] == grad["cells"] == 120 and data["first"].startswith("[0, 0] ")
    assert big["cells"] == 23 * 20 and big["first"] == "[0:9, 0:5] mean nan"
    assert "1 NaN" in big["legend"] and "each cell: the mean of a 9×5 block" in big["legend"]
    page.locator(".jp-OutputArea-output .tl-heat").first.scroll_into_view_if_needed()
    page.screenshot(path=str(screenshots / "heatmaps-light.png"))
    page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})")
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'")
    page.wait_for_timeout(500)
    zero = page.evaluate(
        """() => { const c = document.querySelector('.jp-OutputArea-output .tl-heat-legend span:nth-child(6)');
                   return getComputedStyle(c).backgroundColor; }"""
    )
    assert zero == "rgba(61, 127, 217, 0)", zero  # 0 is no colour: the dark page itself
    page.locator(".jp-OutputArea-output .tl-heat").first.scroll_into_view_if_needed()
    page.screenshot(path=str(screenshots / "heatmaps-dark.png"))
    page.locator(".jp-OutputArea-output .tl-static-stepper").first.scroll_into_view_if_needed()
    page.screenshot(path=str(screenshots / "heatmaps-stepper-dark.png"))
    page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Light'})")
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'true'")
