"""MLP 784-256-256-10 with tanh and softmax cross-entropy, batch 128: one forward and backward step.

The softmax is shifted by the row maximum (a constant: it changes no gradient) to keep ``exp`` finite.
"""

from __future__ import annotations

import itertools

import numpy as np

from ._peers import need
from .workload import Workload

SIZES = (784, 256, 256, 10)


def problem(dtype: str, smoke: bool, *, sizes=SIZES, batch: int = 128, smoke_sizes=(12, 8, 8, 4)):
    """Host arrays: the parameters, the inputs and one-hot labels (the GPU workload moves them to its device)."""
    sizes = smoke_sizes if smoke else sizes
    batch = 6 if smoke else batch
    rng = np.random.default_rng(0)
    params = []
    for n_in, n_out in itertools.pairwise(sizes):
        params.append((rng.standard_normal((n_in, n_out)) / np.sqrt(n_in)).astype(dtype))
        params.append((0.1 * rng.standard_normal(n_out)).astype(dtype))
    X = rng.standard_normal((batch, sizes[0])).astype(dtype)
    labels = rng.integers(0, sizes[-1], batch)
    Y = np.eye(sizes[-1], dtype=dtype)[labels]
    return params, X, Y


def floor(size):
    """Hand-written NumPy backprop."""
    params, X, Y = size
    return lambda: hand_written_grads(np, params, X, Y)


def hand_written_grads(xp, params, X, Y) -> list:
    """The gradients of the mean softmax cross-entropy of the 3-layer tanh MLP, written out by hand in ``xp``."""
    W1, b1, W2, b2, W3, b3 = params
    h1 = xp.tanh(X @ W1 + b1)
    h2 = xp.tanh(h1 @ W2 + b2)
    z = h2 @ W3 + b3
    z = z - z.max(axis=1, keepdims=True)
    e = xp.exp(z)
    p = e / e.sum(axis=1, keepdims=True)
    dz = (p - Y) / X.shape[0]
    dW3, db3 = h2.T @ dz, dz.sum(axis=0)
    dh2 = (dz @ W3.T) * (1 - h2 * h2)
    dW2, db2 = h1.T @ dh2, dh2.sum(axis=0)
    dh1 = (dh2 @ W2.T) * (1 - h1 * h1)
    dW1, db1 = X.T @ dh1, dh1.sum(axis=0)
    return [dW1, db1, dW2, db2, dW3, db3]


def trackerlab_loss(tl, params, X, Y):
    W1, b1, W2, b2, W3, b3 = params
    h1 = tl.tanh(X @ W1 + b1)
    h2 = tl.tanh(h1 @ W2 + b2)
    z = h2 @ W3 + b3
    z = z - tl.data(z).max(axis=1, keepdims=True)
    log_norm = tl.log(tl.sum(tl.exp(z), axis=1))
    return tl.mean(log_norm - tl.sum(z * Y, axis=1))


def trackerlab_cross_entropy(tl, params, X, Y):
    """The same loss with ``tl.cross_entropy`` (one recorded operation, as PyTorch's fused one)."""
    W1, b1, W2, b2, W3, b3 = params
    h1 = tl.tanh(X @ W1 + b1)
    h2 = tl.tanh(h1 @ W2 + b2)
    return tl.cross_entropy(h2 @ W3 + b3, Y)


def trackerlab(size, loss=trackerlab_cross_entropy):
    """Flux's training step: ``back_`` from the loss, read each parameter's ``.grad``."""
    import trackerlab as tl

    params, X, Y = size
    ps = [tl.param(p) for p in params]

    def run():
        tl.zero_grad_(ps)
        tl.back_(loss(tl, ps, X, Y))
        return [p.grad for p in ps]

    return run


def trackerlab_written_out(size):
    """The ``back_`` step with the loss written out in eight operations (max shift, exp, sum, log, ...)."""
    return trackerlab(size, trackerlab_loss)


def trackerlab_gradient(size):
    """``gradient(loss, Params(...))``: gradients returned tracked, differentiable again."""
    import trackerlab as tl

    params, X, Y = size
    ps = tl.Params([tl.param(p) for p in params])

    def run():
        gs = tl.gradient(lambda: trackerlab_cross_entropy(tl, ps, X, Y), ps)
        return [tl.data(g) for g in gs.values()]

    return run


def torch_backward(torch, ps, Xt, Yt, fused: bool = True) -> None:
    """PyTorch's step: clear the grads, the same loss (its fused ``cross_entropy``, or written out with
    ``logsumexp``), ``backward``."""
    for p in ps:
        p.grad = None
    W1, b1, W2, b2, W3, b3 = ps
    h1 = torch.tanh(Xt @ W1 + b1)
    h2 = torch.tanh(h1 @ W2 + b2)
    z = h2 @ W3 + b3
    if fused:  # Yt holds probabilities (one-hot rows)
        torch.nn.functional.cross_entropy(z, Yt).backward()
    else:
        torch.mean(torch.logsumexp(z, dim=1) - torch.sum(z * Yt, dim=1)).backward()


def pytorch(size):
    torch = need("torch")
    params, X, Y = size
    ps = [torch.tensor(p, requires_grad=True) for p in params]
    Xt, Yt = torch.tensor(X), torch.tensor(Y)

    def run():
        torch_backward(torch, ps, Xt, Yt)
        return [p.grad.numpy() for p in ps]

    return run


def autograd(size):
    ag = need("autograd")
    anp = need("autograd.numpy")
    params, X, Y = size

    def loss(ps):
        W1, b1, W2, b2, W3, b3 = ps
        h1 = anp.tanh(anp.dot(X, W1) + b1)
        h2 = anp.tanh(anp.dot(h1, W2) + b2)
        z = anp.dot(h2, W3) + b3
        z = z - anp.max(z, axis=1, keepdims=True)
        return anp.mean(anp.log(anp.sum(anp.exp(z), axis=1)) - anp.sum(z * Y, axis=1))

    dloss = ag.grad(loss)

    def run():
        return list(dloss(list(params)))

    return run


def workload(smoke: bool, dtype: str) -> Workload:
    target = 1.15 if dtype == "float64" else 1.10
    return Workload(
        name=f"MLP {dtype}",
        detail="784-256-256-10, batch 128" if not smoke else "tiny",
        unit="ms",
        per=1,
        target=f"≤ {target:.2f}×",
        target_value=target,
        target_kind="ratio",
        size=problem(dtype, smoke),
        implementations={
            "floor": floor,
            "trackerlab": trackerlab,
            "trackerlab gradient()": trackerlab_gradient,
            "trackerlab written-out loss": trackerlab_written_out,
            "pytorch": pytorch,
            "autograd": autograd,
        },
        rtol=1e-6 if dtype == "float64" else 2e-3,
        atol=1e-9 if dtype == "float64" else 1e-5,
        repeats=21,
    )


def profile(dtype: str = "float64", steps: int = 100) -> str:
    """Where trackerlab's step spends its time, next to the hand-written one: each node the walk visits
    (median time and page faults), each product of the hand-written step, and for the whole steps the
    CPU time, the page faults and the peak of memory allocated above the start (tracemalloc).

    ``python -m benchmarks.mlp float64`` prints it.
    """
    import resource
    import statistics
    import time
    import tracemalloc
    from collections import defaultdict

    import trackerlab as tl

    size = problem(dtype, False)
    params, X, Y = size
    ps = [tl.param(p) for p in params]

    def faults():
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt

    per_node = defaultdict(list)

    def walked_step():
        tl.zero_grad_(ps)
        loss = trackerlab_cross_entropy(tl, ps, X, Y)
        before, start = faults(), time.perf_counter()
        for step in tl.backprop_steps(loss):
            per_node[(step.index, step.op, tuple(getattr(step.delta, "shape", ())))].append(
                (time.perf_counter() - start, faults() - before)
            )
            if step.node.isleaf:
                step.node.grad += step.delta
            before, start = faults(), time.perf_counter()

    W1, b1, W2, b2, W3, b3 = params
    products = defaultdict(list)

    def timed(name, a, b):
        start = time.perf_counter()
        out = a @ b
        products[f"{name}: {a.shape} @ {b.shape}, {'C' if a.flags.c_contiguous else 'F'}·"
                 f"{'C' if b.flags.c_contiguous else 'F'}"].append(time.perf_counter() - start)
        return out

    def hand_written_step():
        h1 = np.tanh(timed("X W1", X, W1) + b1)
        h2 = np.tanh(timed("h1 W2", h1, W2) + b2)
        z = timed("h2 W3", h2, W3) + b3
        e = np.exp(z - z.max(axis=1, keepdims=True))
        dz = (e / e.sum(axis=1, keepdims=True) - Y) / X.shape[0]
        timed("h2ᵀ dz", h2.T, dz)
        dh2 = timed("dz W3ᵀ", dz, W3.T) * (1 - h2 * h2)
        timed("h1ᵀ dh2", h1.T, dh2)
        dh1 = timed("dh2 W2ᵀ", dh2, W2.T) * (1 - h1 * h1)
        timed("Xᵀ dh1", X.T, dh1)

    lines = [f"MLP {dtype}: trackerlab's walk, node by node (median µs, page faults per step)"]
    for _ in range(steps):
        walked_step()
        hand_written_step()
    for (index, op, shape), samples in per_node.items():
        took = statistics.median(t for t, _ in samples) * 1e6
        faulted = statistics.mean(f for _, f in samples)
        lines.append(f"  {index:3d} {op:14s} Δ{shape!s:12s} {took:8.1f} µs {faulted:7.1f}")
    lines.append("hand-written products (median µs; operand layouts)")
    for name, samples in products.items():
        lines.append(f"  {name:44s} {statistics.median(samples) * 1e6:8.1f} µs")
    lines.append("whole steps: CPU ms, page faults, peak MB allocated above the start")
    runs = {"floor": floor(size), "trackerlab": trackerlab(size), "gradient()": trackerlab_gradient(size)}
    for name, run in runs.items():
        run()
        before, start = faults(), time.process_time()
        for _ in range(steps):
            run()
        took, faulted = (time.process_time() - start) / steps, (faults() - before) / steps
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        run()
        peak = tracemalloc.get_traced_memory()[1] - base
        tracemalloc.stop()
        lines.append(f"  {name:12s} {took * 1e3:7.3f} ms {faulted:7.1f} {peak / 1e6:6.2f} MB")
    return "\n".join(lines)


if __name__ == "__main__":
    import sys

    print(profile(*sys.argv[1:2]))
