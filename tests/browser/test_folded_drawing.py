"""A folded drawing read in a browser: the 784-256-10 MLP's layers as boxes, each layer's own drawing one click
away in a ``<details>``, in an untrusted JupyterLab (light and dark) and on a static page, text at least 11 px."""

from __future__ import annotations

import inspect
import re
from urllib.parse import unquote

import nbformat
from labkit import KERNELSPEC, write_notebook
from models import scoped_mlp

from trackerlab.notebook.drawing import tape_html

# The notebook cell: the model's function, then its drawing
SOURCE = "\n".join(
    [
        "import numpy as np",
        "import trackerlab as tl",
        "",
        inspect.getsource(scoped_mlp),
        "loss, labels = scoped_mlp()",
        "tl.plot_tape(loss, labels=labels)",
    ]
)

# Each picture in the output: its drawn size, its size as made (the width and height it states), whether shown
PICTURES = """(root) => [...document.querySelectorAll(root + ' img.tl-picture')].map(i => ({
  src: i.getAttribute('src'), stated: +i.getAttribute('width'), width: i.getBoundingClientRect().width,
  height: i.getBoundingClientRect().height, visible: i.checkVisibility() }))"""


def folded_mlp_output() -> tuple[str, str]:
    loss, labels = scoped_mlp()  # the cell's model; its drawing is made here, as HTML
    return tape_html(loss, labels=labels)


def notebook_with_its_output():
    """The MLP's notebook with the output stored, as a fresh clone has it: never run here, so never trusted."""
    svg, html = folded_mlp_output()
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = KERNELSPEC
    cell = nbformat.v4.new_code_cell(SOURCE, execution_count=1)
    cell.outputs = [
        nbformat.v4.new_output("display_data", {"text/html": html, "image/svg+xml": svg, "text/plain": "<figure>"})
    ]
    nb.cells = [cell]
    return nb


def smallest_text_px(picture: dict) -> float:
    """The smallest text of a picture as drawn, in CSS pixels: its SVG's sizes are points (1⅓ px each) at
    the size it states, scaled as the page draws it."""
    svg = unquote(picture["src"].split(",", 1)[1])
    smallest = min(float(v) for v in re.findall(r"font-size: ([\d.]+)px", svg))
    return smallest * 4 / 3 * picture["width"] / picture["stated"]


def check_folded(page, root: str, screenshots, name: str) -> None:
    pictures = page.evaluate(PICTURES, root)
    assert len(pictures) == 3  # the folded drawing, and one drawing per layer below it
    main, layer1, layer2 = pictures
    assert main["width"] > 200 and main["height"] > 200
    assert main["visible"] and not layer1["visible"] and not layer2["visible"]  # closed until clicked
    assert smallest_text_px(main) >= 11
    svg = unquote(main["src"])
    assert ">layer 1<" in svg and ">layer 2<" in svg and ">matmul#1<" not in svg
    page.locator(f"{root} summary", has_text="layer 1 (b0) · 3 operations").click()
    page.wait_for_function(f"() => document.querySelectorAll('{root} img.tl-picture')[1].checkVisibility()")
    _, layer1, layer2 = page.evaluate(PICTURES, root)
    assert layer1["height"] > 100 and not layer2["visible"]
    assert ">matmul#1<" in unquote(layer1["src"]) and smallest_text_px(layer1) >= 11
    page.locator(f"{root} summary", has_text="layer 1").scroll_into_view_if_needed()
    page.screenshot(path=str(screenshots / f"{name}.png"), full_page=True)


def test_the_folded_mlp_in_an_untrusted_jupyterlab_light_and_dark(page, lab, screenshots):
    write_notebook(notebook_with_its_output(), lab.root / "folded.ipynb")
    page.goto(lab.url("lab/workspaces/folded/tree/folded.ipynb"))
    page.wait_for_function(
        "() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
        " return !!w && !!w.context && w.context.isReady && "
        "[...document.querySelectorAll('.jp-OutputArea-output img')].length === 3 && "
        "[...document.querySelectorAll('.jp-OutputArea-output img')].every(i => i.complete); }",
        polling=250,
    )
    trusted = page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.content.widgets.filter(c => c.model.trusted).length"
    )
    assert trusted == 0
    assert page.evaluate("() => document.querySelectorAll('.jp-OutputArea-output svg').length") == 0
    root = ".jp-OutputArea-output"
    check_folded(page, root, screenshots, "folded-mlp-light")
    page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})")
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'")
    page.wait_for_selector("#jupyterlab-splash", state="detached")
    scheme = page.evaluate(f"() => getComputedStyle(document.querySelector('{root} img.tl-picture')).colorScheme")
    assert scheme == "dark"
    page.locator(f"{root} summary", has_text="layer 1").click()  # closed again: the next check opens it
    check_folded(page, root, screenshots, "folded-mlp-dark")
    page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Light'})")
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'true'")
    assert not page.errors


def test_the_folded_mlp_on_a_static_page_opens_the_same_way(page, tmp_path, screenshots):
    _, html = folded_mlp_output()
    path = tmp_path / "folded.html"
    path.write_text(f'<!doctype html><meta charset="utf-8"><body><div id="out">{html}</div></body>', encoding="utf-8")
    page.goto(path.as_uri())
    page.wait_for_function("() => [...document.images].every(i => i.complete)")
    check_folded(page, "#out", screenshots, "folded-mlp-static")
    assert not page.errors
