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


def profile(dtype: str = "float64", steps: int = 200) -> str:
    """Where trackerlab's step spends its time, next to the hand-written one.

    Operation by operation: each recorded operation of the forward pass and each node the walk visits (its
    pullback and the walk's bookkeeping, median µs and page faults), beside the floor's operations that
    compute the same thing; then ``.grad``'s zeroing and accumulation, which the floor has no counterpart
    of; each product of the hand-written step with its operands' layouts; and for the whole steps the CPU
    time, the page faults and the peak of memory allocated above the start (tracemalloc).

    ``python -m benchmarks.mlp float32`` prints it.
    """
    import resource
    import statistics
    import time
    import tracemalloc
    from collections import defaultdict

    import trackerlab as tl
    from trackerlab.core.grads import accumulate
    from trackerlab.core.walk import Walk

    size = problem(dtype, False)
    params, X, Y = size
    W1, b1, W2, b2, W3, b3 = params
    ps = [tl.param(p) for p in params]
    tW1, tb1, tW2, tb2, tW3, tb3 = ps
    clock = time.perf_counter

    def faults():
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt

    floor_ops, ours, node_faults = defaultdict(list), defaultdict(list), defaultdict(list)

    def timed(into, name, f, *args):
        start = clock()
        out = f(*args)
        into[name].append(clock() - start)
        return out

    def hand_written_step():  # ``hand_written_grads``, each operation timed; ``floor`` is the same code
        at = lambda name, f, *args: timed(floor_ops, name, f, *args)
        a = at("f matmul X W1", np.matmul, X, W1)
        h1 = at("f tanh 1", np.tanh, at("f add b1", np.add, a, b1))
        a = at("f matmul h1 W2", np.matmul, h1, W2)
        h2 = at("f tanh 2", np.tanh, at("f add b2", np.add, a, b2))
        z = at("f add b3", np.add, at("f matmul h2 W3", np.matmul, h2, W3), b3)
        p = at("f cross_entropy", _softmax_rows, z)
        dz = at("b cross_entropy", lambda: (p - Y) / X.shape[0])
        at("b add b3", dz.sum, 0)
        at("b matmul h2 W3", lambda: h2.T @ dz)
        d = at("b matmul h2 W3", lambda: dz @ W3.T)
        dh2 = at("b tanh 2", lambda: d * (1 - h2 * h2))
        at("b add b2", dh2.sum, 0)
        at("b matmul h1 W2", lambda: h1.T @ dh2)
        d = at("b matmul h1 W2", lambda: dh2 @ W2.T)
        dh1 = at("b tanh 1", lambda: d * (1 - h1 * h1))
        at("b add b1", dh1.sum, 0)
        at("b matmul X W1", lambda: X.T @ dh1)

    def trackerlab_step():  # ``trackerlab_cross_entropy`` with ``zero_grad_`` and ``back_``, each part timed
        at = lambda name, f, *args: timed(ours, name, f, *args)
        at("zero_grad_", tl.zero_grad_, ps)
        a = at("f matmul X W1", np.matmul, X, tW1)
        h1 = at("f tanh 1", tl.tanh, at("f add b1", tl.add, a, tb1))
        a = at("f matmul h1 W2", tl.matmul, h1, tW2)
        h2 = at("f tanh 2", tl.tanh, at("f add b2", tl.add, a, tb2))
        z = at("f add b3", tl.add, at("f matmul h2 W3", tl.matmul, h2, tW3), tb3)
        loss = at("f cross_entropy", tl.cross_entropy, z, Y)
        names = {loss.tracker: "cross_entropy", z.tracker: "add b3", z.tracker.args[0]: "matmul h2 W3"}
        for node, i in [(h2.tracker, 2), (h1.tracker, 1)]:  # the backward's nodes, named as above
            names[node] = f"tanh {i}"
            names[node.args[0]] = f"add b{i}"
            names[node.args[0].args[0]] = "matmul X W1" if i == 1 else "matmul h1 W2"
        found = []
        before, start = faults(), clock()
        # the walk as back_ runs it (backprop_steps shows read-only views of the sensitivities, which back_ could
        # not keep as a .grad: its accumulation would make the zeros and add)
        for node, g, _ in Walk(loss, None):
            name = "b " + names.get(node, "leaves' steps")
            ours[name].append(clock() - start)
            node_faults[name].append(faults() - before)
            if node.isleaf:
                found.append((node, g))
            before, start = faults(), clock()
        del g  # (back_ holds each leaf's sensitivity only in ``found``, so it may keep it as the .grad)
        start = clock()
        accumulate(found)  # what back_ does with each leaf's sensitivity
        ours[".grad accumulation"].append(clock() - start)

    for _ in range(steps):
        hand_written_step()
        trackerlab_step()

    def median(samples, n):  # an operation that runs n times a step: the median of the step's totals
        return statistics.median(sum(samples[i : i + n]) for i in range(0, len(samples), n)) * 1e6

    rows = []
    order = sorted(ours, key=lambda name: name == "b leaves' steps" or name == ".grad accumulation")
    for name in order:
        n_ours = len(ours[name]) // steps
        took = median(ours[name], n_ours)
        floor_took = median(floor_ops[name], len(floor_ops[name]) // steps) if name in floor_ops else 0.0
        faulted = statistics.mean(node_faults[name]) * n_ours if name in node_faults else 0.0
        rows.append((name, floor_took, took, faulted))
    lines = [
        f"MLP {dtype}: one step, operation by operation, beside the hand-written floor "
        f"(median µs over {steps} steps; f forward, b backward; page faults per step)",
        f"  {'':28s} {'floor':>9s} {'trackerlab':>11s} {'extra':>9s} {'faults':>7s}",
    ]
    for name, floor_took, took, faulted in rows:
        lines.append(f"  {name:28s} {floor_took:9.1f} {took:11.1f} {took - floor_took:+9.1f} {faulted:7.1f}")
    total_floor, total = sum(r[1] for r in rows), sum(r[2] for r in rows)
    lines.append(f"  {'sum':28s} {total_floor:9.1f} {total:11.1f} {total - total_floor:+9.1f}")

    W1, b1, W2, b2, W3, b3 = params
    products = defaultdict(list)

    def product(name, a, b):
        start = clock()
        out = a @ b
        products[
            f"{name}: {a.shape} @ {b.shape}, {'C' if a.flags.c_contiguous else 'F'}·"
            f"{'C' if b.flags.c_contiguous else 'F'}"
        ].append(clock() - start)
        return out

    def hand_written_products():
        h1 = np.tanh(product("X W1", X, W1) + b1)
        h2 = np.tanh(product("h1 W2", h1, W2) + b2)
        z = product("h2 W3", h2, W3) + b3
        e = np.exp(z - z.max(axis=1, keepdims=True))
        dz = (e / e.sum(axis=1, keepdims=True) - Y) / X.shape[0]
        product("h2ᵀ dz", h2.T, dz)
        dh2 = product("dz W3ᵀ", dz, W3.T) * (1 - h2 * h2)
        product("h1ᵀ dh2", h1.T, dh2)
        dh1 = product("dh2 W2ᵀ", dh2, W2.T) * (1 - h1 * h1)
        product("Xᵀ dh1", X.T, dh1)

    for _ in range(steps):
        hand_written_products()
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


def _softmax_rows(z):
    """The floor's softmax (as ``hand_written_grads`` computes it)."""
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


if __name__ == "__main__":
    import sys

    print(profile(*sys.argv[1:2]))
