"""The committed tutorials opened, not run, in a JupyterLab that trusts none of them (an empty trust
database: Binder, a fresh clone, a downloaded notebook). JupyterLab then sanitises every HTML output: it
drops inline ``<svg>`` (keeping the text inside it), ``<style>`` and ``<script>`` and filters ``style``
attributes property by property. Every drawing must still be a picture, every repr keep its layout, and no
output show a drawing's text run together as a line."""

from __future__ import annotations

import json
import re
import shutil
from urllib.parse import unquote

import pytest
from labkit import ROOT

from trackerlab.notebook.common.inline import INLINE

TUTORIALS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.*.ipynb"))
PICTURE = re.compile(r'<img [^>]*src="(data:image/(?:svg\+xml|png)[^"]*)"')
SCRIPT = re.compile(r"(?s)<script\b.*?</script>")
# a drawing's box text ("n0 · scalar float64", "c1 · 3×2 float32") as it reads when the <svg> around it is dropped
RUN_ON = re.compile(r"\b[nc]\d+ · \S")


def expected_pictures(nb: dict) -> tuple[int, list[str]]:
    """What the notebook's outputs draw when untrusted: the number of pictures (each PNG output, and each
    ``<img>`` of a data URI in an HTML output outside its scripts), and the lines of text inside the SVG
    pictures, which must never appear as output text. Fails on an HTML output holding an inline ``<svg>``."""
    count, lines = 0, []
    for index, cell in enumerate(nb["cells"]):
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            html = "".join(data.get("text/html", ""))
            if html:  # the HTML is what JupyterLab shows, sanitised, for an untrusted output
                shown = SCRIPT.sub("", html)
                assert "<svg" not in shown, f"cell {index}: an HTML output draws an inline <svg>, which is dropped"
                for source in PICTURE.findall(shown):
                    count += 1
                    if source.startswith("data:image/svg+xml"):
                        svg = unquote(source.split(",", 1)[1])
                        lines += re.findall(r"<text[^>]*>([^<]*· [^<]*)</text>", svg)
            elif "image/png" in data:
                count += 1
    return count, lines


# What the page shows, read in the browser: the pictures in the outputs (loaded, with their size), the
# text of each output, and whether any cell with outputs is trusted.
READ_OUTPUTS = """(inline) => {
  const nb = window.jupyterapp.shell.currentWidget.content;
  const trusted = nb.widgets.filter(c => c.model.type === 'code' && c.model.outputs.length && c.model.trusted);
  const images = [...nb.node.querySelectorAll('.jp-OutputArea-output img')].map(i => ({
    src: i.getAttribute('src').slice(0, 30), complete: i.complete, natural: i.naturalWidth,
    width: i.getBoundingClientRect().width, height: i.getBoundingClientRect().height }));
  const texts = [...nb.node.querySelectorAll('.jp-OutputArea-output')].map(o => o.innerText);
  // each element of the notebook layer keeps the inline style of its classes, property by property
  const lost = [];
  for (const e of nb.node.querySelectorAll('.jp-OutputArea-output [class*="tl-"]')) {
    const kept = new Set((e.getAttribute('style') || '').split(';').map(d => d.replace(/\\s+/g, '')));
    for (const name of e.classList) {
      for (const d of (inline[name] || '').split(';')) {
        if (d && !kept.has(d.replace(/\\s+/g, ''))) lost.push(name + ' ' + d);
      }
    }
  }
  const trees = [...nb.node.querySelectorAll('.jp-OutputArea-output ul.tl-tree')];
  const bullets = trees.filter(t => getComputedStyle(t).listStyleType !== 'none').length;
  const panels = [...nb.node.querySelectorAll('.jp-OutputArea-output .tl-panels')];
  const unflexed = panels.filter(p => getComputedStyle(p).display !== 'flex').length;
  return { trusted: trusted.length, images, texts, lost, trees: trees.length, bullets, panels: panels.length,
           unflexed, svgs: nb.node.querySelectorAll('.jp-OutputArea-output svg').length };
}"""

RENDERED = """(name) => {
  const widget = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  if (!widget || !widget.context || widget.context.path !== name || !widget.context.isReady) return false;
  const images = [...widget.content.node.querySelectorAll('.jp-OutputArea-output img')];
  // its kernel started (it runs nothing), so that closing the notebook does not interrupt the start
  return widget.content.widgets.length > 0 && images.every(i => i.complete) && widget.sessionContext.isReady;
}"""


CLOSE = """async () => {
  const widget = window.jupyterapp.shell.currentWidget;
  await widget.sessionContext.shutdown();
  widget.context.model.dirty = false;
  widget.dispose();
}"""


@pytest.fixture(scope="module")
def tutorials(lab):
    """The committed tutorials, copied as they are into the server's folder; the server's trust database
    (in its fresh data dir) has never seen them."""
    folder = lab.root / "tutorials"
    folder.mkdir()
    for path in TUTORIALS:
        shutil.copy(path, folder / path.name)
    return folder


def test_every_tutorial_is_opened_in_its_three_languages():
    numbers = sorted({p.name[:2] for p in TUTORIALS})
    assert numbers == [f"{n:02d}" for n in range(1, 8)], numbers  # 01–07: a missing one must not pass unseen
    assert len(TUTORIALS) == 3 * len(numbers), [p.name for p in TUTORIALS]


def test_untrusted_tutorials_show_pictures_not_run_on_text(page, lab, tutorials, screenshots):
    summary = {}
    page.goto(lab.url("lab/workspaces/untrusted"))
    page.wait_for_function("() => !!window.jupyterapp", polling=250)
    page.evaluate("async () => { await window.jupyterapp.restored; }")
    for path in TUTORIALS:
        nb = json.loads(path.read_text(encoding="utf-8"))
        count, lines = expected_pictures(nb)
        name = f"tutorials/{path.name}"
        page.evaluate("(path) => { window.jupyterapp.commands.execute('docmanager:open', {path}); }", name)
        page.wait_for_function(RENDERED, arg=name, polling=250)
        shown = page.evaluate(READ_OUTPUTS, INLINE)
        where = path.name
        assert shown["trusted"] == 0, f"{where}: {shown['trusted']} cells trusted; this test needs them untrusted"
        assert shown["svgs"] == 0, where  # the sanitiser dropped every inline <svg>: none can be a drawing here
        assert len(shown["images"]) == count, (where, count, shown["images"])
        for image in shown["images"]:
            assert image["src"].startswith(("data:image/svg+xml", "data:image/png")), (where, image)
            assert image["complete"] and image["natural"] > 0, (where, image)
            assert image["width"] > 50 and image["height"] > 30, (where, image)
        text = "\n".join(shown["texts"])
        assert not RUN_ON.search(text), (where, RUN_ON.search(text).group(0), text[:2000])
        for line in lines:
            assert line not in text, (where, line)
        assert not shown["lost"], (where, sorted(set(shown["lost"])))
        assert shown["bullets"] == 0 and shown["unflexed"] == 0, (where, shown)
        summary[path.name] = (count, shown["trees"], shown["panels"])
        if path.name.endswith(".en.ipynb") or path.name.startswith("03_"):
            page.screenshot(path=str(screenshots / f"untrusted-{path.stem}.png"), full_page=False)
            for what, selector in (("picture", "img"), ("repr", ".tl-repr"), ("stepper", ".tl-static-stepper")):
                shown_first = page.locator(f".jp-OutputArea-output {selector}:visible").first
                if shown_first.count():
                    shown_first.scroll_into_view_if_needed()
                    page.screenshot(path=str(screenshots / f"untrusted-{path.stem}-{what}.png"))
        # its kernel, which ran nothing, shut down, and the notebook closed unsaved and without a dialog
        page.evaluate(CLOSE)
    # in JupyterLab's dark theme the pictures are dark, untrusted too, whatever the system's colour scheme:
    # JupyterLab gives the page its theme's color-scheme, which the picture's prefers-color-scheme answers
    page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})")
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'")
    page.wait_for_selector("#jupyterlab-splash", state="detached")
    name = "tutorials/03_backprop_as_a_graph_walk.en.ipynb"
    page.evaluate("(path) => { window.jupyterapp.commands.execute('docmanager:open', {path}); }", name)
    page.wait_for_function(RENDERED, arg=name, polling=250)
    picture = page.locator(".jp-OutputArea-output img:visible").first
    picture.scroll_into_view_if_needed()
    page.emulate_media(color_scheme="light")
    assert picture.evaluate("i => getComputedStyle(i).colorScheme") == "dark"
    assert picture.evaluate("i => i.complete && i.naturalWidth") > 0
    page.screenshot(path=str(screenshots / "untrusted-dark-theme.png"))
    page.evaluate(CLOSE)
    page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Light'})")
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'true'")

    # every tutorial draws something, and the reprs are there to be checked
    assert all(count > 0 for count, _, _ in summary.values()), summary
    assert sum(trees for _, trees, _ in summary.values()) > 0, summary
    # (page errors are not asserted: an untrusted output runs no script, and what JupyterLab reports while
    # kernels start and stop one after another, "Disposed", "Canceled future for create_subshell_request",
    # is its own bookkeeping)
