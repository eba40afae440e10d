"""Models that tests in several folders build: ``scoped_mlp``, the 784-256-10 MLP whose two layers are
``tl.scope`` blocks, which the notebook layer's folding tests draw and the browser tests open as a folded
drawing (its source is the notebook cell they show); ``block_with_another_threads_operation``, a block that
folding would turn into a cycle."""

from __future__ import annotations

import threading

import numpy as np

import trackerlab as tl


def scoped_mlp(batch: int = 64, sizes=(784, 256, 10), scoped: str = "functions"):
    """A 784-256-10 MLP at batch 64, its layers written as two functions (or two ``with tl.scope`` blocks)."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(batch, sizes[0]))
    W1, b1 = tl.param(rng.normal(size=sizes[:2]) / 28), tl.param(np.zeros(sizes[1]))
    W2, b2 = tl.param(rng.normal(size=sizes[1:]) / 16), tl.param(np.zeros(sizes[2]))

    @tl.scope("layer 1")
    def layer1(x):
        return tl.tanh(x @ W1 + b1)

    @tl.scope("layer 2")
    def layer2(h):
        return h @ W2 + b2

    if scoped == "functions":
        out = layer2(layer1(x))
    else:
        with tl.scope("layer 1"):
            h = tl.tanh(x @ W1 + b1)
        with tl.scope("layer 2"):
            out = h @ W2 + b2
    loss = tl.mean(out**2)
    return loss, {W1: "W1", b1: "b1", W2: "W2", b2: "b2", loss: "loss"}


def block_with_another_threads_operation():
    """``(y, values)``: a ``tl.scope("block")`` in one thread records ``a = sin(x) * 2`` and, after another thread
    records ``b = a + 1`` outside every block, ``c = cos(b) * 3``; ``y = c * 1``. Folded into one box, the block
    would use a value (``b``) made from its own (``a``)."""
    x = tl.param(0.5)
    values, made, used = {}, threading.Event(), threading.Event()

    def inside():
        with tl.scope("block"):
            values["a"] = tl.sin(x) * 2.0
            made.set()
            used.wait()
            values["c"] = tl.cos(values["b"]) * 3.0

    thread = threading.Thread(target=inside)
    thread.start()
    made.wait()
    values["b"] = values["a"] + 1.0  # recorded in this thread, outside every block
    used.set()
    thread.join()
    return values["c"] * 1.0, values
