"""A convolutional layer, forward and backward: ``sum(U ⊙ maxpool(relu(conv(x, W, b, padding=1)), 2))`` for x of
shape (64, 8, 8, 8) (a batch of 8×8 maps of 8 channels, the size of a small CNN on 8×8 digits), W (16, 8, 3, 3),
float64; the gradients of x, W and b.

The floor is the layer written out by hand in NumPy the usual way: im2col by one strided view
(``sliding_window_view``), one matrix product for the convolution and two for its gradients, and col2im by
nine slice additions.
"""

from __future__ import annotations

import numpy as np

from ._peers import need
from .workload import Workload


def problem(smoke: bool):
    n, c, out, side = (2, 2, 3, 4) if smoke else (64, 8, 16, 8)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((n, c, side, side))
    W = rng.standard_normal((out, c, 3, 3)) / np.sqrt(9 * c)
    b = 0.1 * rng.standard_normal(out)
    U = rng.standard_normal((n, out, side // 2, side // 2))
    return x, W, b, U


def floor(size):
    """Hand-written NumPy: im2col, products, the 2×2 max pooling's mask, col2im."""
    x, W, b, U = size
    n, c, h, w = x.shape
    out = W.shape[0]

    def run():
        padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
        windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(2, 3))  # (n, c, h, w, 3, 3)
        columns = windows.transpose(0, 2, 3, 1, 4, 5).reshape(n * h * w, c * 9)
        z = columns @ W.reshape(out, c * 9).T + b  # (n·h·w, out)
        a = np.maximum(z, 0.0)
        blocks = a.reshape(n, h // 2, 2, w // 2, 2, out)
        pooled = blocks.max(axis=(2, 4), keepdims=True)
        first = blocks == pooled  # (random values: one maximum per window)
        upstream = U.transpose(0, 2, 3, 1)[:, :, None, :, None, :]  # (n, h/2, 1, w/2, 1, out)
        dz = (first * upstream).reshape(n * h * w, out) * (z > 0)
        dW = (dz.T @ columns).reshape(W.shape)
        db = dz.sum(axis=0)
        dcolumns = (dz @ W.reshape(out, c * 9)).reshape(n, h, w, c, 3, 3)
        dpadded = np.zeros_like(padded)
        for i in range(3):
            for j in range(3):
                dpadded[:, :, i : i + h, j : j + w] += dcolumns[:, :, :, :, i, j].transpose(0, 3, 1, 2)
        return [dpadded[:, :, 1:-1, 1:-1], dW, db]

    return run


def trackerlab(size):
    """Flux's training step on the layer: ``back_``, then each parameter's ``.grad``."""
    import trackerlab as tl

    x, W, b, U = size
    ps = [tl.param(v) for v in (x, W, b)]

    def run():
        tl.zero_grad_(ps)
        tx, tW, tb = ps
        tl.back_(tl.sum(U * tl.maxpool(tl.relu(tl.conv(tx, tW, tb, padding=1)), 2)))
        return [p.grad for p in ps]

    return run


def pytorch(size):
    """PyTorch's CPU convolution, ReLU and max pooling, ``backward``."""
    torch = need("torch")
    f = torch.nn.functional
    x, W, b, U = (torch.tensor(v) for v in size)
    ps = [v.requires_grad_(True) for v in (x, W, b)]

    def run():
        for p in ps:
            p.grad = None
        tx, tW, tb = ps
        torch.sum(U * f.max_pool2d(torch.relu(f.conv2d(tx, tW, tb, padding=1)), 2)).backward()
        return [p.grad.numpy() for p in ps]

    return run


def workload(smoke: bool) -> Workload:
    return Workload(
        name="Convolutional layer",
        detail="conv 8→16 3×3, relu, 2×2 maxpool; x 64×8×8×8" if not smoke else "tiny",
        unit="ms",
        per=1,
        target="≤ 2×",
        target_value=2.0,
        target_kind="ratio",
        size=problem(smoke),
        implementations={"floor": floor, "trackerlab": trackerlab, "pytorch": pytorch},
        repeats=21,
    )
