"""Render the notebook displays to HTML pages and screenshot them in headless Chromium.

    python scripts/screenshot_display.py OUTDIR

writes OUTDIR/repr.html (HTML reprs, light), OUTDIR/repr-dark.html (the same in JupyterLab's dark
colours), OUTDIR/tape.html (the drawings as the notebook shows them: pictures), OUTDIR/stepper.html (a
stepper's self-contained copy), OUTDIR/models.html (the drawing and the stepper's copy of a 784-256-10
perceptron at batch 64 and of a 2,000-operation chain), each of these also as OUTDIR/NAME-sanitised.html
(what is left after removing what JupyterLab's sanitiser removes from an untrusted notebook: style blocks,
scripts, inline <svg> tags, styles that use var(…)), and a PNG screenshot of each.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from html import escape
from pathlib import Path

import numpy as np

import trackerlab as tl
from trackerlab.notebook.drawing import svg_markup
from trackerlab.notebook.html import html_repr

DARK_BODY = 'data-jp-theme-light="false"'
DARK = """<style>body{background:#111;color:#ddd;--jp-content-font-color1:rgba(255,255,255,1);
--jp-content-font-color2:rgba(255,255,255,.7);--jp-border-color2:#424242;--jp-layout-color2:#303030;
--jp-brand-color1:#64b5f6;--jp-success-color1:#81c784;--jp-warn-color1:#ffb74d;--jp-accent-color1:#ce93d8}</style>"""


def examples() -> list[tuple[str, str]]:
    W = tl.param([[1, 2], [3, 4]])
    x = tl.param([5, 6])
    y = W @ x
    tl.back_(y, [1, -1])

    a = tl.param(2.0)
    b = a * a
    c = tl.sin(b) + b * 3

    @tl.primitive
    def evil(u):
        return u * 2

    evil.__name__ = "<script>alert(1)</script>"

    @tl.grad_rule(evil)
    def _(u):
        return tl.data(u) * 2, lambda g: (2 * g,)

    rng = np.random.default_rng(0)
    big = rng.normal(size=(200, 50))
    big[3, 4] = np.nan
    big[7, 1] = np.inf
    h = tl.param(big)
    loss = tl.mean(tl.tanh(h) * 2)
    tl.back_(loss)

    z = tl.param(0.5)
    for _ in range(5000):
        z = tl.sin(z) * 1.0
    return [
        ("the seed's W @ x after back_(y, [1, -1])", html_repr(y, labels={W: "W", x: "x", y: "y"})),
        ("a leaf, W", html_repr(W)),
        ("a shared sub-expression: sin(a·a) + 3·(a·a)", html_repr(c, labels={a: "a", b: "b"})),
        ("a rule named <script>alert(1)</script>", html_repr(evil(tl.param(1.0)))),
        ("a 200×50 parameter with one NaN and one Inf", html_repr(h)),
        ("mean(tanh(h) * 2)", html_repr(loss, labels={h: "h"})),
        ("a 10,001-value chain", html_repr(z)),
    ]


def models() -> str:
    """``plot_tape``'s drawing and the stepper's copy (at its fourth step) of a real model and of a long chain."""
    from trackerlab.notebook.drawing import tape_html

    rng = np.random.default_rng(0)
    W1, b1 = tl.param(rng.normal(size=(256, 784)) * 0.05), tl.param(np.zeros(256))
    W2, b2 = tl.param(rng.normal(size=(10, 256)) * 0.05), tl.param(np.zeros(10))
    x, t = rng.normal(size=(784, 64)), np.eye(10)[:, rng.integers(0, 10, 64)]
    with tl.scope("layer 1"):
        h = tl.tanh(W1 @ x + b1[:, None])
    with tl.scope("layer 2"):
        out = W2 @ h + b2[:, None]
    loss = -tl.sum(t * tl.log_softmax(out, axis=0)) / 64
    c = tl.param(0.3)
    chain = c
    for _ in range(1000):
        chain = tl.sin(chain) * 1.0
    parts = []
    for title, y, labels in (
        ("a 784-256-10 perceptron at batch 64", loss, {W1: "W1", b1: "b1", W2: "W2", b2: "b2"}),
        ("a 2,000-operation chain", chain, {c: "x"}),
    ):
        parts.append(f"<h3>{escape(title)}: plot_tape</h3>{tape_html(y, labels=labels)[1]}")
        with tl.BackpropStepper(y, labels=labels, static_frames=0) as stepper:
            for step in range(4):
                stepper.index = step
            parts.append(f"<h3>{escape(title)}: the stepper at step 4</h3>{stepper.to_html()}")
    return "".join(parts)


def page(body: str, head: str = "", attributes: str = 'data-jp-theme-light="true"') -> str:
    head = f'<meta charset="utf-8">{head}'
    return f'<!doctype html><html><head>{head}</head><body {attributes} style="margin:16px">{body}</body></html>'


def sanitised(html: str) -> str:
    """Roughly what JupyterLab's sanitiser leaves of an untrusted output: no style blocks, scripts or
    templates, inline <svg> tags dropped with their text kept, ids renamed, no declaration using var(…)."""
    html = re.sub(r"(?s)<(style|script|template)\b.*?</\1>", "", html)
    html = re.sub(r"</?(svg|g|path|text|defs|use|clipPath|rect|tspan)\b[^>]*>", "", html)
    html = re.sub(r'\bid="', 'data-jupyter-id="', html)

    def keep(match):
        kept = [d for d in match.group(1).split(";") if "var(" not in d and not d.strip().startswith("--")]
        return f'style="{";".join(kept)}"'

    return re.sub(r'style="([^"]*)"', keep, html)


def screenshot(html_file: Path, png: Path, size: str = "1200,1600") -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        sys.exit("screenshot_display: chromium is not installed")
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--no-first-run",
                "--hide-scrollbars",
                "--virtual-time-budget=3000",  # past the stepper copy's appearing delay
                f"--user-data-dir={profile}",
                f"--screenshot={png}",
                f"--window-size={size}",
                html_file.resolve().as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    body = "".join(f"<h3>{escape(title)}</h3>{html}" for title, html in examples())

    W = tl.param([[1, 2], [3, 4]])
    x = tl.param([5, 6])
    b = tl.param([0.5, -0.5])
    loss = tl.sum(tl.tanh(W @ x * 0.1 + b) ** 2)
    tl.back_(loss)
    steps = list(tl.backprop_steps(loss))
    current = steps[2]
    states = {s.node: "done" for s in steps[:2]}
    states.update({n: "pending" for n in current.pending})
    labels = {W: "W", x: "x", b: "b", loss: "loss"}
    drawn = svg_markup(loss, labels=labels)
    stepped = svg_markup(loss, labels=labels, states=states, highlight=current.node)
    chain = tl.param(0.3)
    for i in range(48):
        chain = tl.sin(chain) * 0.9 if i % 2 else chain + tl.param(0.1)
    tape = drawn + "<hr>" + stepped + "<hr>" + svg_markup(chain)
    u, v = tl.param(2.0), tl.param(3.0)
    with tl.BackpropStepper(u * v + u, labels={u: "a", v: "b"}) as stepper:
        copy = stepper.to_html()
    pages = {"repr": body, "tape": tape, "stepper": copy, "models": models()}
    for name, html in pages.items():
        (out / f"{name}.html").write_text(page(html))
        (out / f"{name}-dark.html").write_text(page(html, DARK, DARK_BODY))
        (out / f"{name}-sanitised.html").write_text(page(sanitised(html)))
        (out / f"{name}-sanitised-dark.html").write_text(page(sanitised(html), DARK, DARK_BODY))
    for name in pages:
        for variant in ("", "-dark", "-sanitised", "-sanitised-dark"):
            size = "1280,5200" if name == "models" else "1200,1600"
            screenshot(out / f"{name}{variant}.html", out / f"{name}{variant}.png", size)


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "screenshots"))
