"""Trains logistic regression and a two-layer MLP with ADAM on a lazily generated dask array, and prints the
peak memory (run by tests/backends/test_dask_memory.py in a process of its own; ``python tests/dask_training.py ROWS FEATURES CHUNK EPOCHS``)."""

import json
import resource
import sys
import time

import dask
import dask.array as da
import numpy as np

import trackerlab as tl


def peak_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports kibibytes


def main(rows: int, features: int, chunk: int, epochs: int) -> dict:
    # generated chunk by chunk as the compute needs it, never held whole
    X = da.random.default_rng(0).random((rows, features), chunks=(chunk, features)) - 0.5
    w_true = np.linspace(-1.0, 1.0, features)
    y = (X @ w_true > 0).astype(float)
    dask.config.set(scheduler="threads", num_workers=2)
    train(X[: 2 * chunk], y[: 2 * chunk], chunk, 1)  # once on two chunks: what any compute needs, set up
    start = peak_bytes()
    t0 = time.perf_counter()
    report = train(X, y, chunk, epochs)
    return {
        "array_bytes": rows * features * 8,
        "start_bytes": start,
        "peak_bytes": peak_bytes(),
        "seconds": time.perf_counter() - t0,
        **report,
    }


def train(X, y, chunk: int, epochs: int) -> dict:
    features = X.shape[1]

    w, b = tl.param(np.zeros(features)), tl.param(0.0)
    logistic = tl.Params([w, b])
    opt = tl.optim.ADAM(0.1)
    losses = []
    for _ in range(epochs):
        gs = tl.gradient(lambda: logistic_loss(X, y, w, b), logistic)  # one compute for both parameters
        tl.update_(opt, logistic, gs)
        losses.append(float(tl.data(logistic_loss(X[:chunk], y[:chunk], w, b)).compute()))
    rng = np.random.default_rng(1)
    W1, b1 = tl.param(rng.normal(0, 0.3, (features, 8))), tl.param(np.zeros(8))
    W2, b2 = tl.param(rng.normal(0, 0.3, 8)), tl.param(0.0)
    mlp = tl.Params([W1, b1, W2, b2])
    opt = tl.optim.ADAM(0.05)
    mlp_losses = []
    for _ in range(epochs):
        gs = tl.gradient(lambda: mlp_loss(X, y, W1, b1, W2, b2), mlp)  # one compute for the four parameters
        tl.update_(opt, mlp, gs)
        mlp_losses.append(float(tl.data(mlp_loss(X[:chunk], y[:chunk], W1, b1, W2, b2)).compute()))
    return {
        "logistic_losses": losses,
        "mlp_losses": mlp_losses,
        "grad_types": sorted({type(tl.data(gs[p])).__name__ for p in mlp}),
    }


def logistic_loss(X, y, w, b):
    z = X @ w + b
    return tl.mean(tl.softplus(z) - y * z)


def mlp_loss(X, y, W1, b1, W2, b2):
    z = tl.tanh(X @ W1 + b1) @ W2 + b2
    return tl.mean(tl.softplus(z) - y * z)


if __name__ == "__main__":
    rows, features, chunk, epochs = (int(a) for a in sys.argv[1:5])
    with tl.progress(minimum=1.0):  # a bar on each compute that runs longer than a second
        report = main(rows, features, chunk, epochs)
    print(json.dumps(report))
